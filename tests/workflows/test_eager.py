"""Handlers run side by side without a task each unless they wait (``workflows._eager``)."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from agentnb.workflows._eager import gather_eagerly

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="outer")


async def test_results_keep_order_whether_a_coroutine_waits_or_not() -> None:
    order: list[str] = []

    async def quick(n: int) -> int:
        order.append(f"quick {n}")
        return n

    async def slow(n: int) -> int:
        order.append(f"slow {n} starts")
        await asyncio.sleep(0.01)
        order.append(f"slow {n} ends")
        return n * 10

    tasks_before = len(asyncio.all_tasks())
    results = await gather_eagerly([quick(1), slow(2), quick(3), slow(4)])
    assert results == [1, 20, 3, 40]
    # Every first step ran before any waiting one resumed, as with gather; the quick ones made no task.
    assert order[:4] == ["quick 1", "slow 2 starts", "quick 3", "slow 4 starts"]
    assert len(asyncio.all_tasks()) == tasks_before


async def test_each_coroutine_sees_its_own_copy_of_the_context() -> None:
    async def sets(value: str, wait: bool) -> str:
        VAR.set(value)
        if wait:
            await asyncio.sleep(0)
        return VAR.get()

    assert await gather_eagerly([sets("a", False), sets("b", True), sets("c", False)]) == ["a", "b", "c"]
    assert VAR.get() == "outer"  # nothing leaked into the caller's context


async def test_an_error_is_raised_after_the_others_finish() -> None:
    finished: list[str] = []

    async def fails() -> int:
        raise ValueError("boom")

    async def waits() -> int:
        await asyncio.sleep(0.01)
        finished.append("waited")
        return 1

    with pytest.raises(ValueError, match="boom"):
        await gather_eagerly([fails(), waits()])
    assert finished == ["waited"]


async def test_cancelling_the_caller_cancels_the_waiting_coroutines() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    outer = asyncio.ensure_future(gather_eagerly([forever()]))
    await asyncio.sleep(0.01)
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    await asyncio.wait_for(cancelled.wait(), 5)
