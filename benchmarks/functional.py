"""Functional workflows side by side with Agent Framework's functional API, and against graph supersteps.

Workloads (each a complete run of a freshly built workflow, steps that add one):

1. a 100-step sequential run (``for``: ``x = await inc(x)``);
2. a 100-wide ``asyncio.gather`` over one step, then a step summing the results;
3. workload 1 with a checkpoint after every step (in-memory storage);
4. workload 2 with a checkpoint after every step.

Then a step's cost next to a graph superstep: workload 1 against a 100-executor graph chain, both per step.

Each framework runs in its own process (agentnb here; Agent Framework 1.23 in the peers' virtual
environment, ``$AGENTNB_PEERS_VENV`` or ``benchmarks/peers/.venv``, see ``benchmarks/peers/run.py``), and
the two alternate sample by sample so drifting load hits both alike. Costs are CPU time of the worker
(``time.process_time``), medians over the samples.

    python benchmarks/functional.py [--samples 9] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WIDTH = 100
WORKLOADS = ("sequential", "gather", "sequential_checkpointed", "gather_checkpointed")
TITLES = {
    "sequential": f"1. {WIDTH}-step sequential run",
    "gather": f"2. {WIDTH}-wide gather + 1 step",
    "sequential_checkpointed": "3. workload 1, checkpoint per step",
    "gather_checkpointed": "4. workload 2, checkpoint per step",
    "graph_chain": f"graph chain of {WIDTH} executors (agentnb)",
}


def _api(framework: str) -> Any:
    if framework == "agentnb":
        sys.path.insert(0, str(REPO))
        import agentnb.workflows as api

        return api
    warnings.simplefilter("ignore")  # the reference marks the functional API experimental on every use
    import agent_framework as api

    return api


def workloads(framework: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Each workload as a zero-argument coroutine function that builds and runs one workflow."""
    api = _api(framework)

    @api.step
    async def inc(x: int) -> int:
        return x + 1

    @api.step
    async def total(values: list[int]) -> int:
        return sum(values)

    @api.workflow
    async def sequential(x: int) -> int:
        for _ in range(WIDTH):
            x = await inc(x)
        return x

    @api.workflow
    async def gather(x: int) -> int:
        values = await asyncio.gather(*(inc(x + i) for i in range(WIDTH)))
        return await total(list(values))

    def run(definition: Any, checkpointed: bool) -> Callable[[], Awaitable[Any]]:
        async def once() -> Any:
            storage = api.InMemoryCheckpointStorage() if checkpointed else None
            result = await definition.build(checkpoint_storage=storage).run(0)
            assert result.get_outputs(), result
            return result

        return once

    out = {
        "sequential": run(sequential, False),
        "gather": run(gather, False),
        "sequential_checkpointed": run(sequential, True),
        "gather_checkpointed": run(gather, True),
    }
    if framework == "agentnb":

        class Step(api.Executor):
            @api.handler(input=int, output=int)
            async def step(self, n: int, ctx: Any) -> None:
                await ctx.send_message(n + 1)

        class Last(api.Executor):
            @api.handler(input=int, workflow_output=int)
            async def last(self, n: int, ctx: Any) -> None:
                await ctx.yield_output(n)

        async def graph_chain() -> Any:
            nodes: list[Any] = [Step(f"s{i}") for i in range(WIDTH - 1)]
            nodes.append(Last("last"))
            workflow = api.WorkflowBuilder(start_executor=nodes[0], max_iterations=WIDTH + 5).add_chain(nodes).build()
            return await workflow.run(0)

        out["graph_chain"] = graph_chain
    return out


def worker(framework: str) -> None:
    """Serve samples: read ``workload runs`` lines, answer the CPU seconds per run as JSON."""
    loop = asyncio.new_event_loop()
    table = workloads(framework)
    for name in table:  # warm up (imports, caches)
        loop.run_until_complete(table[name]())
    print(json.dumps({"ready": list(table)}), flush=True)
    for line in sys.stdin:
        name, runs = line.split()
        work = table[name]
        start = time.process_time()
        for _ in range(int(runs)):
            loop.run_until_complete(work())
        print(json.dumps({"seconds": (time.process_time() - start) / int(runs)}), flush=True)


class Worker:
    def __init__(self, framework: str, python: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [python, __file__, "--worker", framework], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self.proc.stdout is not None
        self.workloads: list[str] = json.loads(self.proc.stdout.readline())["ready"]

    def sample(self, name: str, runs: int) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{name} {runs}\n")
        self.proc.stdin.flush()
        return float(json.loads(self.proc.stdout.readline())["seconds"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--runs", type=int, default=20, help="runs per sample")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    venv = Path(os.environ.get("AGENTNB_PEERS_VENV", HERE / "peers" / ".venv"))
    peer_python = venv / "bin" / "python"
    workers = {"agentnb": Worker("agentnb", sys.executable)}
    if peer_python.exists():
        workers["agent_framework"] = Worker("agent_framework", str(peer_python))
    else:
        print(f"(no peers environment at {venv}: run benchmarks/peers/run.py once to build it)")
    samples: dict[tuple[str, str], list[float]] = {}
    try:
        for i in range(args.samples):
            order = list(workers.items())
            if i % 2:
                order.reverse()
            for name in (*WORKLOADS, "graph_chain"):
                for framework, w in order:
                    if name in w.workloads:
                        samples.setdefault((framework, name), []).append(w.sample(name, args.runs))
    finally:
        for w in workers.values():
            w.close()
    median = {key: statistics.median(values) for key, values in samples.items()}
    print(f"\nCPU time per run, median of {args.samples} samples x {args.runs} runs (lower is better)\n")
    print("| workload | agentnb | Agent Framework 1.23 | agentnb / AF |\n|---|---:|---:|---:|")
    for name in WORKLOADS:
        ours = median[("agentnb", name)]
        theirs = median.get(("agent_framework", name))
        ratio = f"{ours / theirs:.2f}x" if theirs else "—"
        peer = f"{theirs * 1e3:.2f} ms" if theirs else "—"
        print(f"| {TITLES[name]} | {ours * 1e3:.2f} ms | {peer} | {ratio} |")
    step_cost = median[("agentnb", "sequential")] / WIDTH
    superstep = median[("agentnb", "graph_chain")] / WIDTH
    print(
        f"\nOne step call (workload 1 / {WIDTH}): {step_cost * 1e6:.1f} µs; one graph superstep "
        f"({TITLES['graph_chain']} / {WIDTH}): {superstep * 1e6:.1f} µs; ratio {step_cost / superstep:.2f}x "
        "(goal: within 2x)"
    )


if __name__ == "__main__":
    main()
