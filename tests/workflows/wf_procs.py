"""Workflows driven from subprocesses: baseline runs, runs killed mid-way, resumes, and store sharing.

Run as ``python tests/workflows/wf_procs.py MODE ...``; prints one JSON line with the result.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentnb.workflows import (
    CheckpointStorage,
    Executor,
    FileCheckpointStorage,
    RunStoreCheckpointStorage,
    SQLiteCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)

ROUNDS = 4
DELAY = float(os.environ.get("WF_DELAY", "0"))


@dataclass
class Batch:
    round: int
    values: list[int]


class Splitter(Executor):
    @handler
    async def split(self, batch: Batch, ctx: WorkflowContext[Batch]) -> None:
        await asyncio.sleep(DELAY)
        await ctx.send_message(batch)


class Worker(Executor):
    def __init__(self, id: str, factor: int) -> None:
        super().__init__(id)
        self.factor = factor
        self.seen = 0

    @handler
    async def work(self, batch: Batch, ctx: WorkflowContext[Batch]) -> None:
        await asyncio.sleep(DELAY)
        self.seen += 1
        await ctx.send_message(Batch(batch.round, [v * self.factor + self.seen for v in batch.values]))

    def on_checkpoint_save(self) -> dict:
        return {"seen": self.seen}

    def on_checkpoint_restore(self, state: dict) -> None:
        self.seen = state["seen"]


class Joiner(Executor):
    def __init__(self) -> None:
        super().__init__("join")
        self.total = 0

    @handler
    async def join(self, batches: list[Batch], ctx: WorkflowContext[Batch, dict]) -> None:
        await asyncio.sleep(DELAY)
        merged = [sum(vals) % 1000 for vals in zip(*(b.values for b in batches), strict=True)]
        self.total += sum(merged)
        history = ctx.get_state("history", [])
        ctx.set_state("history", [*history, merged])
        round_no = batches[0].round
        if round_no + 1 < ROUNDS:
            await ctx.send_message(Batch(round_no + 1, merged))
        else:
            await ctx.yield_output({"total": self.total, "history": [*history, merged]})

    def on_checkpoint_save(self) -> dict:
        return {"total": self.total}

    def on_checkpoint_restore(self, state: dict) -> None:
        self.total = state["total"]


def build(storage: CheckpointStorage, name: str = "loop") -> Workflow:
    splitter = Splitter("split")
    workers = [Worker(f"w{i}", i + 2) for i in range(3)]
    join = Joiner()
    return (
        WorkflowBuilder(start_executor=splitter, checkpoint_storage=storage, name=name, max_iterations=50)
        .add_fan_out_edges(splitter, workers)
        .add_fan_in_edges(workers, join)
        .add_edge(join, splitter)
        .build()
    )


class Approver(Executor):
    @handler
    async def start(self, text: str, ctx: WorkflowContext) -> None:
        await ctx.request_info(request_data=f"approve {text}?", response_type=bool)

    @response_handler
    async def answered(self, question: str, approved: bool, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"{question} -> {'yes' if approved else 'no'}")


def build_approval(storage: CheckpointStorage) -> Workflow:
    return WorkflowBuilder(start_executor=Approver("approver"), checkpoint_storage=storage, name="approval").build()


def storage_for(kind: str, where: str) -> CheckpointStorage:
    if kind == "store":  # any store URL, e.g. postgresql://...
        return RunStoreCheckpointStorage(where)
    return FileCheckpointStorage(where) if kind == "file" else SQLiteCheckpointStorage(where)


async def main(argv: list[str]) -> dict:
    mode, kind, where = argv[0], argv[1], argv[2]
    storage = storage_for(kind, where)
    if mode == "run":
        name = argv[3] if len(argv) > 3 else "loop"
        result = await build(storage, name).run(Batch(0, [1, 2, 3]))
        return {"outputs": result.get_outputs(), "run_id": result.run_id, "steps": max(e.step or 0 for e in result)}
    if mode == "resume":
        latest = await storage.get_latest(workflow_name="loop")
        assert latest is not None
        result = await build(storage).run(checkpoint_id=latest.checkpoint_id)
        return {"outputs": result.get_outputs(), "resumed_from_step": latest.step, "run_id": result.run_id}
    if mode == "ask":
        result = await build_approval(storage).run("deploy")
        (request,) = result.get_request_info_events()
        return {
            "request_id": request.request_id,
            "checkpoint_id": result.checkpoint_id,
            "state": result.get_final_state(),
        }
    if mode == "answer":
        result = await build_approval(storage).run(
            checkpoint_id=argv[3], responses={argv[4]: argv[5] == "yes"}, checkpoint_storage=storage
        )
        return {"outputs": result.get_outputs(), "state": result.get_final_state()}
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    started = time.time()
    out = asyncio.run(main(sys.argv[1:]))
    print(json.dumps(out, default=str))
