"""Workflow engine throughput: a 100-executor chain and a 1 -> 100 -> 1 fan-out/fan-in.

Measures complete runs per second with and without in-memory checkpointing (a checkpoint after every
superstep), plus the average size of a checkpoint. Prints a table.

    python benchmarks/workflows.py [--seconds 1.5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from typing_extensions import Never

from agentnb.workflows import (
    Executor,
    InMemoryCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)

WIDTH = 100


class Step(Executor):
    """Adds one and passes the number on."""

    @handler
    async def step(self, n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)


class Last(Executor):
    """Yields the number it receives."""

    @handler
    async def last(self, n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)


class Join(Executor):
    """Sums the fan-in list."""

    @handler
    async def join(self, values: list[int], ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(sum(values))


def chain(storage: InMemoryCheckpointStorage | None) -> Workflow:
    nodes: list[Executor] = [Step(f"s{i}") for i in range(WIDTH - 1)]
    nodes.append(Last("last"))
    return (
        WorkflowBuilder(start_executor=nodes[0], checkpoint_storage=storage, max_iterations=WIDTH + 5)
        .add_chain(nodes)
        .build()
    )


def fan(storage: InMemoryCheckpointStorage | None) -> Workflow:
    source = Step("source")
    workers = [Step(f"w{i}") for i in range(WIDTH)]
    return (
        WorkflowBuilder(start_executor=source, checkpoint_storage=storage)
        .add_fan_out_edges(source, workers)
        .add_fan_in_edges(workers, Join("join"))
        .build()
    )


async def measure(
    build: Callable[[InMemoryCheckpointStorage | None], Workflow], checkpoint: bool, seconds: float, expected: int
) -> tuple[float, float, float | None]:
    storage = InMemoryCheckpointStorage() if checkpoint else None
    workflow = build(storage)
    assert (await workflow.run(0)).get_outputs() == [expected]  # warm-up and a correctness check
    runs = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        await workflow.run(0)
        runs += 1
    # CPU time is what the engine costs; wall time also counts other processes on a busy machine.
    rate = runs / max(time.process_time() - cpu_started, 1e-9)
    wall_rate = runs / (time.perf_counter() - started)
    size = None
    if storage is not None:
        ids = await storage.list_checkpoint_ids()
        size = statistics.mean(storage.size_of(i) for i in ids)
    return rate, wall_rate, size


async def main(seconds: float) -> None:
    rows = []
    for name, build, expected, steps, calls in (
        (f"chain of {WIDTH}", chain, WIDTH - 1, WIDTH, WIDTH),
        (f"fan-out/fan-in 1->{WIDTH}->1", fan, WIDTH * 2, 3, WIDTH + 2),
    ):
        for checkpoint in (False, True):
            rate, wall_rate, size = await measure(build, checkpoint, seconds, expected)
            rows.append(
                (
                    name,
                    "in-memory" if checkpoint else "none",
                    f"{rate:,.1f}",
                    f"{wall_rate:,.1f}",
                    f"{rate * steps:,.0f}",
                    f"{rate * calls:,.0f}",
                    "-" if size is None else f"{size:,.0f}",
                )
            )
    header = (
        "workflow",
        "checkpoints",
        "runs/s (cpu)",
        "runs/s (wall)",
        "supersteps/s",
        "executor calls/s",
        "bytes/checkpoint",
    )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="time spent per measurement")
    asyncio.run(main(parser.parse_args().seconds))
