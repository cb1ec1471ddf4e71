"""Agent Skills costs, agentnb beside Agent Framework: discovering 1,000 SKILL.md folders (cold and cached) and
advertising 100 skills a turn.

Run: ``python benchmarks/skills.py``. With ``AGENTNB_PEERS_VENV`` pointing at the peers' virtual environment
(see ``benchmarks/peers/run.py``; it holds agent-framework-core), the same workloads also run there, in a
child process, and the table shows both. Medians of repeats; both frameworks read the same folders.
Goals: discovery of 1,000 skills under 200 ms cold, advertising under 20 µs a turn once cached.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def make_skills(root: Path, count: int) -> None:
    """``count`` skill folders, each with a SKILL.md, a reference and a script."""
    for i in range(count):
        folder = root / f"skill-{i:04d}"
        (folder / "references").mkdir(parents=True)
        (folder / "scripts").mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Skill number {i} for benchmarks.\nlicense: MIT\n"
            f'metadata:\n  author: bench\n  version: "1.0"\n---\n\n# Skill {i}\n\nDo step one, then two.\n'
        )
        (folder / "references" / "GUIDE.md").write_text("guide\n")
        (folder / "scripts" / "run.py").write_text("print('hi')\n")


async def measure(framework: str, big: Path, small: Path) -> dict[str, float]:
    """The three measures for ``framework`` ("agentnb" or "agent_framework") over prepared folders."""
    if framework == "agentnb":
        from agentnb import AgentSession, SessionContext
        from agentnb.skills import CachingSkillsSource, FileSkillsSource, SkillsProvider, SkillsSourceContext

        def new_context() -> Any:
            return SessionContext(session_id=None, input_messages=[])
    else:
        from agent_framework import (  # type: ignore[import-not-found]
            AgentSession,
            CachingSkillsSource,
            FileSkillsSource,
            SessionContext,
            SkillsProvider,
            SkillsSourceContext,
        )

        def new_context() -> Any:
            return SessionContext(input_messages=[])

    ctx = SkillsSourceContext(agent=None)
    results: dict[str, float] = {}
    cold: list[float] = []
    for _ in range(5):
        source = FileSkillsSource(str(big))
        start = time.perf_counter()
        skills = await source.get_skills(ctx)
        cold.append((time.perf_counter() - start) * 1000)
        assert len(skills) == 1000, len(skills)
    results["discover 1,000 skills, cold (ms)"] = statistics.median(cold)

    cached = CachingSkillsSource(FileSkillsSource(str(big)))
    await cached.get_skills(ctx)
    runs = 10_000
    start = time.perf_counter()
    for _ in range(runs):
        await cached.get_skills(ctx)
    results["discover 1,000 skills, cached (µs)"] = (time.perf_counter() - start) / runs * 1e6

    provider = SkillsProvider.from_paths(str(small))
    session = AgentSession()
    state: dict[str, Any] = {}
    await provider.before_run(agent=None, session=session, context=new_context(), state=state)
    samples: list[float] = []
    runs = 5_000
    for _ in range(5):
        contexts = [new_context() for _ in range(runs)]  # built outside the timing: only the provider is measured
        start = time.perf_counter()
        for context in contexts:
            await provider.before_run(agent=None, session=session, context=context, state=state)
        samples.append((time.perf_counter() - start) / runs * 1e6)
    results["advertise 100 skills a turn, cached (µs)"] = statistics.median(samples)
    return results


def peer_results(big: Path, small: Path) -> dict[str, float] | None:
    venv = os.environ.get("AGENTNB_PEERS_VENV")
    python = Path(venv) / "bin" / "python" if venv else None
    if python is None or not python.exists():
        return None
    out = subprocess.run(
        [str(python), __file__, "--worker", "agent_framework", str(big), str(small)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if out.returncode != 0:
        print(f"agent_framework worker failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        print(json.dumps(asyncio.run(measure(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big", Path(tmp) / "small"
        make_skills(big, 1000)
        make_skills(small, 100)
        ours = asyncio.run(measure("agentnb", big, small))
        theirs = peer_results(big, small)
    width = max(len(k) for k in ours)
    header = f"{'measure'.ljust(width)}  {'agentnb':>10}"
    if theirs is not None:
        header += f"  {'agent-framework':>15}"
    print(header)
    for key, value in ours.items():
        row = f"{key.ljust(width)}  {value:>10.2f}"
        if theirs is not None:
            row += f"  {theirs[key]:>15.2f}"
        print(row)


if __name__ == "__main__":
    main()
