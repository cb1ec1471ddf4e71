"""Batch evaluation throughput: what agentnb.evals adds per case, concurrency against a slow model, Ray, peers.

Run from the repository root::

    python benchmarks/evals.py              # local overhead, slow-model concurrency, Ray (when installed)
    python benchmarks/evals.py --quick      # smaller sizes (a smoke test)
    python benchmarks/evals.py --peers      # also pydantic-evals' Dataset.evaluate on the same cases and model

Sections:

1. **Overhead per case, instant model.** 10,000 cases through ``run_batch`` (concurrency 16, every case
   recorded in a SQLite run store) against the same agent turns run in a plain ``for`` loop; the difference
   divided by the cases is what agentnb.evals adds per case. Goal: under 100 µs.
2. **Concurrency, 100 ms model.** 1,000 cases at concurrency 64: the ideal is 1000 / 64 x 0.1 s = 1.5625 s.
   Goal: within 1.4x.
3. **Ray overhead per case** at chunk size 100 on a local two-CPU cluster (start-up excluded): Ray wall time
   minus local wall time, per case.
4. **pydantic-evals** (``--peers``): ``Dataset.evaluate`` with an ``EqualsExpected`` evaluator against
   ``evaluate`` with ``exact_match``, the same agent and cases, concurrency 16. pydantic-evals lives only in a
   virtual environment this script makes (``benchmarks/.venv-evals``, or ``$AGENTNB_EVALS_PEER_VENV``); agentnb
   does not depend on it.

Each timing is the median of a few rounds, wall clock (``time.perf_counter``), on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from agentnb import Agent  # noqa: E402
from agentnb.evals import RayBackend, run_batch  # noqa: E402
from agentnb.local import FunctionChatClient  # noqa: E402
from agentnb.store import RunStore  # noqa: E402

PEER_VENV = Path(os.environ.get("AGENTNB_EVALS_PEER_VENV", HERE / ".venv-evals"))
PEER_PIN = "pydantic-evals==2.62.0"


def instant_model(messages: Any, options: Any) -> str:
    return "Paris"


def instant_agent() -> Agent:
    """The agent every section uses (an import-string factory for Ray workers)."""
    return Agent(FunctionChatClient(instant_model), name="bench")


async def slow_model(messages: Any, options: Any) -> str:
    await asyncio.sleep(0.1)
    return "Paris"


def median_of(rounds: int, run: Any) -> float:
    return statistics.median(run() for _ in range(rounds))


def timed(coro_factory: Any) -> float:
    started = time.perf_counter()
    asyncio.run(coro_factory())
    return time.perf_counter() - started


def overhead(n: int, rounds: int) -> list[tuple[str, str]]:
    agent = instant_agent()
    inputs = [f"Capital of France? #{i}" for i in range(n)]

    async def plain_loop() -> None:
        for text in inputs:
            await agent.run(text)

    with tempfile.TemporaryDirectory() as tmp:

        async def batch() -> None:
            with RunStore(Path(tmp) / "runs.db") as store:
                await run_batch(agent, inputs, concurrency=16, progress=False, store=store)

        async def batch_memory() -> None:
            await run_batch(agent, inputs, concurrency=16, progress=False, store=RunStore(":memory:"))

        timed(plain_loop)  # warm up imports (pandas loads on the first batch) and caches
        timed(batch_memory)
        base = median_of(rounds, lambda: timed(plain_loop))
        file_store = median_of(rounds, lambda: timed(batch))
        memory_store = median_of(rounds, lambda: timed(batch_memory))
    return [
        (f"{n:,} agent turns in a for loop", f"{base:.2f} s ({base / n * 1e6:.0f} µs/turn)"),
        ("run_batch, SQLite file store", f"{file_store:.2f} s"),
        ("  overhead per case", f"{(file_store - base) / n * 1e6:.0f} µs (goal < 100 µs)"),
        ("run_batch, in-memory store", f"{memory_store:.2f} s"),
        ("  overhead per case", f"{(memory_store - base) / n * 1e6:.0f} µs"),
    ]


def concurrency(n: int, rounds: int) -> list[tuple[str, str]]:
    agent = Agent(FunctionChatClient(slow_model), name="slow")
    inputs = [f"q{i}" for i in range(n)]
    ideal = n / 64 * 0.1

    async def batch() -> None:
        await run_batch(agent, inputs, concurrency=64, progress=False, store=RunStore(":memory:"))

    took = median_of(rounds, lambda: timed(batch))
    return [
        (f"{n:,} cases, 100 ms model, concurrency 64", f"{took:.2f} s"),
        ("  ideal", f"{ideal:.2f} s"),
        ("  ratio", f"{took / ideal:.2f}x (goal <= 1.4x)"),
    ]


def ray_overhead(n: int, rounds: int) -> list[tuple[str, str]]:
    try:
        import ray
    except ImportError:
        return [("Ray", 'not installed (pip install "agentnb[ray]")')]
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(HERE), os.environ.get("PYTHONPATH")]))
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    startup = time.perf_counter() - started
    inputs = [f"Capital of France? #{i}" for i in range(n)]
    target = "evals:instant_agent"
    try:

        async def local() -> None:
            await run_batch(target, inputs, concurrency=16, progress=False, store=RunStore(":memory:"))

        async def remote() -> None:
            backend = RayBackend(chunk_size=100, concurrency_per_task=16)
            await run_batch(target, inputs, backend=backend, progress=False, store=RunStore(":memory:"))

        timed(remote)  # workers start and import agentnb once
        local_s = median_of(rounds, lambda: timed(local))
        remote_s = median_of(rounds, lambda: timed(remote))
    finally:
        ray.shutdown()
    return [
        ("Ray local cluster start-up (excluded)", f"{startup:.1f} s"),
        (f"{n:,} cases, local backend", f"{local_s:.2f} s"),
        (f"{n:,} cases, Ray, chunk size 100", f"{remote_s:.2f} s"),
        ("  Ray overhead per case", f"{(remote_s - local_s) / n * 1e6:.0f} µs"),
    ]


# --------------------------------------------------------------------------------------------- peers

PEER_SCRIPT = r"""
import asyncio, json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from pydantic_evals import Case, Dataset
from pydantic_evals.evaluators import EqualsExpected
from agentnb.evals import evaluate, scorers
from agentnb.store import RunStore
import evals as bench

n, rounds = int(sys.argv[2]), int(sys.argv[3])
agent = bench.instant_agent()
rows = [{"input": f"Capital of France? #{i}", "expected": "Paris", "case_id": str(i)} for i in range(n)]

async def task(question: str) -> str:
    return (await agent.run(question)).text

cases = [Case(name=r["case_id"], inputs=r["input"], expected_output=r["expected"]) for r in rows]
dataset = Dataset(name="bench", cases=cases, evaluators=[EqualsExpected()])

def peer():
    t = time.perf_counter()
    report = dataset.evaluate_sync(task, max_concurrency=16, progress=False)
    assert len(report.cases) == n
    return time.perf_counter() - t

def ours(i):
    t = time.perf_counter()
    exp = asyncio.run(evaluate(agent, rows, [scorers.exact_match()], name=f"bench-{i}", progress=False,
                               store=RunStore(":memory:")))
    assert len(exp.rows) == n
    return time.perf_counter() - t

peer(); ours(-1)
print(json.dumps({"pydantic_evals": statistics.median(peer() for _ in range(rounds)),
                  "agentnb": statistics.median(ours(i) for i in range(rounds))}))
"""


def peers(n: int, rounds: int) -> list[tuple[str, str]]:
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {PEER_VENV} with {PEER_PIN} (once)...", flush=True)
        venv.create(PEER_VENV, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", PEER_PIN], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", f"{REPO}[evals]"], check=True)
    out = subprocess.run(
        [str(python), "-c", PEER_SCRIPT, str(HERE), str(n), str(rounds)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    peer, ours = result["pydantic_evals"], result["agentnb"]
    return [
        (f"{n:,} cases, pydantic-evals Dataset.evaluate", f"{peer:.2f} s ({peer / n * 1e6:.0f} µs/case)"),
        (f"{n:,} cases, agentnb evaluate (cases stored)", f"{ours:.2f} s ({ours / n * 1e6:.0f} µs/case)"),
        ("  agentnb / pydantic-evals", f"{ours / peer:.2f}x"),
    ]


def table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"\n## {title}\n")
    print(f"| {'measure'.ljust(width)} | value |")
    print(f"| {'-' * width} | --- |")
    for label, value in rows:
        print(f"| {label.ljust(width)} | {value} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and one round")
    parser.add_argument("--peers", action="store_true", help="also run pydantic-evals in its own venv")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray section")
    args = parser.parse_args()
    rounds = 1 if args.quick else 3
    table("1. overhead per case, instant model", overhead(2_000 if args.quick else 10_000, rounds))
    table("2. concurrency against a 100 ms model", concurrency(1_000, rounds))
    if not args.no_ray:
        table("3. Ray overhead per case", ray_overhead(1_000 if args.quick else 5_000, rounds))
    if args.peers:
        table("4. side by side with pydantic-evals", peers(1_000 if args.quick else 5_000, rounds))


if __name__ == "__main__":
    main()
