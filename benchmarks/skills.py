"""Agent Skills costs: discovering 1,000 SKILL.md folders (cold and cached) and advertising 100 skills a turn.

Run: ``python benchmarks/skills.py``. Prints a table (milliseconds / microseconds, median of repeats).
Goals from the design: discovery of 1,000 skills under 200 ms cold, advertising under 20 µs a turn cached.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agentnb import SessionContext, SkillsProvider
from agentnb.skills import CachingSkillsSource, FileSkillsSource, SkillsSourceContext


def make_skills(root: Path, count: int) -> None:
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


async def main() -> None:
    rows: list[tuple[str, str]] = []
    context = SkillsSourceContext(agent=None)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_skills(root, 1000)
        cold: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            skills = await FileSkillsSource(root).get_skills(context)
            cold.append((time.perf_counter() - start) * 1000)
        assert len(skills) == 1000
        rows.append(("discover 1,000 skills, cold (ms)", f"{statistics.median(cold):.1f}"))
        cached_source = CachingSkillsSource(FileSkillsSource(root))
        await cached_source.get_skills(context)
        runs = 10_000
        start = time.perf_counter()
        for _ in range(runs):
            await cached_source.get_skills(context)
        rows.append(("discover 1,000 skills, cached (µs)", f"{(time.perf_counter() - start) / runs * 1e6:.2f}"))

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_skills(root, 100)
        provider = SkillsProvider.from_paths(root)
        state: dict[str, object] = {}
        first = SessionContext(session_id=None, input_messages=[])
        start = time.perf_counter()
        await provider.before_run(agent=None, session=None, context=first, state=state)
        rows.append(("first turn, 100 skills: scan + advertise (ms)", f"{(time.perf_counter() - start) * 1000:.1f}"))
        runs = 20_000
        samples: list[float] = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(runs):
                context_n = SessionContext(session_id=None, input_messages=[])
                await provider.before_run(agent=None, session=None, context=context_n, state=state)
            samples.append((time.perf_counter() - start) / runs * 1e6)
        rows.append(("advertise 100 skills a turn, cached (µs)", f"{statistics.median(samples):.2f}"))

    width = max(len(label) for label, _ in rows)
    print(f"{'measure'.ljust(width)}  agentnb")
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")


if __name__ == "__main__":
    asyncio.run(main())
