"""Functional workflows the tests drive in this process, in subprocesses and on Ray workers.

Run as ``python tests/workflows/functional_steps.py MODE STORE [CHECKPOINT_ID]``; prints one JSON line.
Workers import this module by its top-level name (``functional_steps``), so its steps are found there.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentnb.workflows import RunContext, RunStoreCheckpointStorage, step, workflow


@dataclass
class Order:
    item: str
    quantity: int


@step
async def price(order: Order) -> float:
    return 2.5 * order.quantity


@step
async def reserve(order: Order) -> str:
    return f"reserved {order.quantity} x {order.item}"


@workflow
async def checkout(order: Order, ctx: RunContext) -> str:
    total, reservation = await asyncio.gather(price(order), reserve(order))
    approved = await ctx.request_info({"total": total}, response_type=bool, request_id="approve")
    return f"{reservation} for {total}" if approved else "cancelled"


# -- on Ray --------------------------------------------------------------------------------------------------


@step(ray=True)
async def square_remote(x: int) -> dict[str, int]:
    return {"value": x * x, "pid": os.getpid()}


@step(ray=True)
async def fragile_remote(marker: str) -> str:
    # Dies (the whole worker process) until the marker file exists: a worker lost mid-step.
    if not Path(marker).exists():
        os._exit(1)
    return "survived"


@step(ray=True)
async def failing_remote(x: int) -> int:
    raise ValueError(f"no square for {x}")


@step
async def total(values: list[int]) -> int:
    return sum(values)


@workflow
async def fan_out(n: int) -> dict[str, object]:
    results = await asyncio.gather(*(square_remote(i) for i in range(n)))
    summed = await total([r["value"] for r in results])
    return {"sum": summed, "pids": sorted({r["pid"] for r in results})}


@workflow
async def fragile(marker: str) -> str:
    first = await square_remote(3)
    survived = await fragile_remote(marker)
    return f"{first['value']} {survived}"


@workflow
async def failing(n: int) -> int:
    return await failing_remote(n)


async def _main(mode: str, store: str, checkpoint_id: str | None) -> dict[str, object]:
    storage = RunStoreCheckpointStorage(store)
    wf = checkout.build(checkpoint_storage=storage)
    if mode == "start":
        result = await wf.run(Order("tea", 4))
        return {"state": result.get_final_state().value, "checkpoint_id": result.checkpoint_id, "run_id": result.run_id}
    result = await wf.run(checkpoint_id=checkpoint_id, responses={"approve": True})
    bypassed = [e.executor_id for e in result if e.type == "executor_bypassed"]
    invoked = [e.executor_id for e in result if e.type == "executor_invoked"]
    return {"outputs": result.get_outputs(), "bypassed": sorted(bypassed), "invoked": invoked}


if __name__ == "__main__":
    mode, store = sys.argv[1], sys.argv[2]
    print(json.dumps(asyncio.run(_main(mode, store, sys.argv[3] if len(sys.argv) > 3 else None))))
