"""Before landing: does this checkout cost more than main on the hot paths?

Run from the repository root::

    python benchmarks/guard.py                   # this checkout against main: instructions, then CPU time
    python benchmarks/guard.py --against HEAD~3  # any git ref, or a directory holding a checkout
    python benchmarks/guard.py --instructions-only

Two measurements, each flagging a workload whose cost grew by more than ``--limit`` percent (5 by default),
and the exit status is 1 when any did:

1. **Instructions** (valgrind's callgrind), which do not depend on what else the machine is doing: each
   workload runs in its own interpreter ``N`` and ``2N`` times, and the difference of the two totals,
   divided by ``N``, is the cost of one iteration with start-up, imports and warm-up cancelled out. The
   import rows are the statement's total less a bare interpreter's. Hash seeds are fixed, so a rerun gives
   the same counts within a fraction of a percent.
2. **CPU-time medians**, interleaved between the two checkouts (``peers/run.py --compare-agentnb``), which
   catch what instruction counts cannot see (cache misses, system calls).

Both checkouts run the workloads of ``peers/adapters/agentnb.py`` from this checkout, each importing its
own ``agentnb``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PEERS = HERE / "peers"

# workload -> (iterations N, what one iteration is)
LOOPS: dict[str, tuple[int, str]] = {
    "build_agent": (400, "Agent(model, tools=[lookup])"),
    "turn": (60, "one agent turn"),
    "tool_turn": (30, "a turn with one tool call"),
    "stream_turn": (6, "a streamed turn of 200 chunks"),
    "chain": (3, "100-executor chain"),
    "fan": (3, "fan-out 1 -> 100 -> 1"),
    "chain_checkpointed": (2, "chain, checkpoint after every step"),
}
IMPORTS: dict[str, str] = {
    "import_agent": "from agentnb import Agent, tool",
    "import_workflows": "from agentnb import Agent; from agentnb.workflows import WorkflowBuilder",
}


@dataclass(frozen=True)
class Tree:
    label: str
    path: Path


# ----------------------------------------------------------------------------------------------- the worker


async def _loop(workload: str, n: int) -> None:
    from adapters.agentnb import Bench, InstantModel, lookup

    from agentnb import Agent

    bench = Bench()
    step = getattr(bench, workload, None)
    for _ in range(5):  # warm-up: the same in the N and the 2N run, so it cancels out
        await step() if step else Agent(InstantModel(), tools=[lookup])
    # The collector is off while counting: whether a collection of the heap the imports left falls inside N or
    # 2N iterations, and how far it walks, swings the counts by millions of instructions between two checkouts
    # that differ in a line. Allocation costs still count; CPU time (part 2) sees the collector.
    gc.collect()
    gc.freeze()
    gc.disable()
    if step is None:  # build_agent
        kept = [Agent(InstantModel(), tools=[lookup]) for _ in range(n)]
        assert len(kept) == n
        return
    for _ in range(n):
        await step()


def worker(workload: str, n: int) -> None:
    asyncio.run(_loop(workload, n))


# ----------------------------------------------------------------------------------------------- the driver


def _environment(tree: Tree) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}}
    env["PYTHONPATH"] = os.pathsep.join([str(tree.path), str(PEERS)])
    env["PYTHONHASHSEED"] = "0"
    return env


def instructions(tree: Tree, workload: str, n: int) -> int:
    """Instructions executed by a whole interpreter running ``workload`` ``n`` times (an import: once or not)."""
    if workload in IMPORTS:  # a bare interpreter, so the guard's own imports are not counted
        arguments = ["-c", IMPORTS[workload] if n else "pass"]
    else:
        arguments = [str(Path(__file__).resolve()), "--worker", workload, str(n)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, *arguments]
        done = subprocess.run(command, cwd=tmp, env=_environment(tree), capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{tree.label}: {workload} failed:\n{done.stderr[-2000:]}")
        match = re.search(r"^summary:\s+(\d+)", out.read_text(), flags=re.M)
        if match is None:
            raise SystemExit(f"{tree.label}: no callgrind summary for {workload}")
        return int(match.group(1))


def compile_bytecode(tree: Tree) -> None:
    """Write the checkout's bytecode caches first, as an installed package has them; else imports compile.

    Run from the checkout itself: ``python -c`` puts its working folder first on the path, so from another
    folder it would compile that folder's agentnb instead.
    """
    statement = "; ".join(IMPORTS.values())
    subprocess.run([sys.executable, "-c", statement], cwd=tree.path, env=_environment(tree), check=True)


def per_iteration(tree: Tree, workload: str, pool: ThreadPoolExecutor) -> float:
    if workload in IMPORTS:
        total, bare = pool.map(lambda n: instructions(tree, workload, n), (1, 0))
        return float(total - bare)
    n = LOOPS[workload][0]
    once, twice = pool.map(lambda k: instructions(tree, workload, k), (n, 2 * n))
    return (twice - once) / n


def export(ref: str, into: Path) -> Tree:
    if Path(ref).is_dir():
        return Tree(Path(ref).resolve().name, Path(ref).resolve())
    sys.path.insert(0, str(PEERS))
    from run import export_checkout  # the peer benchmark's: `git archive` of one commit

    return Tree(f"{ref} ({export_checkout(ref, into)})", into)


def _count(value: float) -> str:
    return f"{value / 1e6:,.2f} M" if value >= 1e6 else f"{value / 1e3:,.1f} k"


def compare_instructions(before: Tree, after: Tree, limit: float) -> bool:
    """Print the instruction table; return whether any workload grew by more than ``limit``."""
    compile_bytecode(before)
    compile_bytecode(after)
    with ThreadPoolExecutor(max_workers=2) as outer, ThreadPoolExecutor(max_workers=4) as inner:
        trees = (before, after)
        jobs = [(w, outer.submit(per_iteration, tree, w, inner)) for w in [*IMPORTS, *LOOPS] for tree in trees]
        counts = [job.result() for _, job in jobs]
    rows = [(jobs[i][0], counts[i], counts[i + 1]) for i in range(0, len(jobs), 2)]
    print(f"Instructions per iteration (callgrind; limit +{limit:.0%}):\n")
    print(f"| workload | {before.label} | {after.label} | change | verdict |")
    print("| --- | ---: | ---: | ---: | --- |")
    over = False
    for workload, a, b in rows:
        what = IMPORTS.get(workload) or LOOPS[workload][1]
        change = b / a - 1 if a else 0.0
        verdict = "over" if change > limit else "ok"
        over |= verdict == "over"
        print(f"| {what} | {_count(a)} | {_count(b)} | {change:+.1%} | {verdict} |")
    print()
    return over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default="main", help="git ref or checkout directory to compare with")
    parser.add_argument("--limit", type=float, default=5.0, help="allowed growth, percent")
    parser.add_argument("--instructions-only", action="store_true", help="skip the CPU-time comparison")
    parser.add_argument("--worker", nargs=2, metavar=("WORKLOAD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    with tempfile.TemporaryDirectory(prefix="agentnb-guard-") as scratch:
        before = export(args.against, Path(scratch) / "before")
        over = compare_instructions(before, Tree("this checkout", REPO), args.limit / 100)
        if not args.instructions_only:
            command = [sys.executable, str(PEERS / "run.py"), "--compare-agentnb", str(before.path)]
            command += ["--workloads", "1,2,3,4,5,6,7", "--limit", str(args.limit)]
            over |= subprocess.run(command, cwd=REPO).returncode != 0
    print("regression over the limit" if over else "no regression over the limit")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
