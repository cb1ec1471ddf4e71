"""The PostgreSQL store's coroutines run on async connections: the event loop keeps running, nothing outlives it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from agentnb.exceptions import StoreError
from agentnb.store import Store, open_store
from agentnb.store._loop_pool import LoopPool
from agentnb.workflows import Executor, RunStoreCheckpointStorage, WorkflowBuilder, WorkflowContext, handler
from tests.store.pg_fixture import PostgresServer

# The advisory lock that run writers take in turn (see the PostgreSQL store): held elsewhere, it makes them wait.
RUNS_LOCK = (0x61676E62, 1)


class CountingExecutor(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor, counting what is sent to it: proves a coroutine used no worker thread."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.submitted: list[Callable[..., Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        self.submitted.append(fn)
        return super().submit(fn, *args, **kwargs)


def server_connections(server: PostgresServer) -> int:
    """Connections the test role has open to the server (the superuser's own psql is not counted)."""
    return int(server.psql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'agentnb'").strip())


def settled_connections(server: PostgresServer) -> int:
    """The connection count once it stops changing (pools open their connections in the background)."""
    last = server_connections(server)
    for _ in range(50):
        time.sleep(0.2)
        now = server_connections(server)
        if now == last:
            return now
        last = now
    raise AssertionError("the number of connections kept changing")


def wait_for_connections(server: PostgresServer, expected: int) -> int:
    deadline = time.monotonic() + 10
    while (now := server_connections(server)) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return now


async def test_the_loop_keeps_ticking_while_a_write_waits_on_the_server(pg_url: str) -> None:
    store = open_store(pg_url)
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as blocker:
        await blocker.execute("BEGIN")
        await blocker.execute("SELECT pg_advisory_xact_lock(%s, %s)", RUNS_LOCK)
        tick_task = asyncio.create_task(ticker())
        write = asyncio.create_task(store.astart_run("r", kind="workflow", name="flow"))
        # The blocker sleeps on the server, holding the lock the write needs: a slow query the write waits for.
        await blocker.execute("SELECT pg_sleep(0.6)")
        assert not write.done()
        assert ticks >= 20, f"the event loop was blocked: only {ticks} ticks in 0.6 s"
        await blocker.execute("COMMIT")
        await asyncio.wait_for(write, 10)
        tick_task.cancel()
    assert (await store.alist_checkpoints()) == []
    assert store.get_run("r")["status"] == "running"  # type: ignore[index]
    assert executor.submitted == []
    await store.aclose()


async def test_concurrent_coroutines_share_the_async_pool(pg_url: str) -> None:
    store = open_store(pg_url, max_size=4)
    try:
        await store.astart_run("r", kind="workflow", name="flow")
        await asyncio.gather(
            *(
                store.aput_checkpoint(f"c{i}", run_id="r", workflow_name="flow", parent_id=None, step=i, data="{}")
                for i in range(40)
            ),
            *(store.aadd_events("r", [{"type": "step", "data": i}]) for i in range(40)),
        )
        loaded = await asyncio.gather(*(store.aget_checkpoint(f"c{i}") for i in range(40)))
        assert loaded == ["{}"] * 40
        assert sorted(e["seq"] for e in store.list_events("r")) == list(range(40))
        assert len(await store.alist_checkpoints(run_id="r")) == 40
    finally:
        await store.aclose()


def test_a_loop_that_ends_closes_its_connections(
    pg_url: str, postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    outside = server_connections(postgres_server)
    store = open_store(pg_url, min_size=2)
    try:
        store.get_checkpoint("warm-up")
        before = settled_connections(postgres_server)

        async def work() -> int:
            await store.aput_checkpoint("c", run_id=None, workflow_name=None, parent_id=None, step=0, data="{}")
            assert await store.aget_checkpoint("c") == "{}"
            deadline = time.monotonic() + 10
            while (during := server_connections(postgres_server)) < before + 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            return during

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(3):  # each asyncio.run is a new loop with a pool of its own
                with caplog.at_level(logging.DEBUG, logger="asyncio"):
                    assert asyncio.run(work()) == before + 1  # one connection served the loop
                assert wait_for_connections(postgres_server, before) == before
            gc.collect()
        assert not [r for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.ERROR]
        assert store.get_checkpoint("c") == "{}"  # the blocking pool is untouched
    finally:
        store.close()
    assert wait_for_connections(postgres_server, outside) == outside


async def test_aclose_waits_for_the_loops_connections(pg_url: str, postgres_server: PostgresServer) -> None:
    others = server_connections(postgres_server)
    store: Store = open_store(pg_url, min_size=2)
    await store.aput_checkpoint("c", run_id=None, workflow_name=None, parent_id=None, step=0, data="{}")
    assert server_connections(postgres_server) > others
    await store.aclose()
    assert wait_for_connections(postgres_server, others) == others
    with pytest.raises(StoreError, match="is closed"):
        await store.aput_checkpoint("d", run_id=None, workflow_name=None, parent_id=None, step=0, data="{}")


def test_closing_from_another_thread_closes_a_running_loops_pool(pg_url: str, postgres_server: PostgresServer) -> None:
    others = server_connections(postgres_server)
    store = open_store(pg_url)

    async def work() -> None:
        await store.aget_checkpoint("c")
        await asyncio.to_thread(store.close)  # another thread closes while this loop runs
        deadline = time.monotonic() + 10
        while server_connections(postgres_server) > others and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    asyncio.run(work())
    assert wait_for_connections(postgres_server, others) == others


class Step(Executor):
    @handler
    async def step(self, n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)


class Last(Executor):
    @handler
    async def last(self, n: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(n + 1)


async def test_a_checkpointed_mirrored_workflow_uses_only_async_connections(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(pg_url)
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    lent = {"blocking": 0, "async": 0}
    blocking_connection = store._pool.connection  # type: ignore[attr-defined]
    async_connection = LoopPool.connection

    def count_blocking(*args: Any, **kwargs: Any) -> Any:
        lent["blocking"] += 1
        return blocking_connection(*args, **kwargs)

    def count_async(self: LoopPool) -> Any:
        lent["async"] += 1
        return async_connection(self)

    monkeypatch.setattr(store._pool, "connection", count_blocking)  # type: ignore[attr-defined]
    monkeypatch.setattr(LoopPool, "connection", count_async)
    try:
        storage = RunStoreCheckpointStorage(store)
        steps = [Step("a"), Step("b"), Last("c")]
        builder = WorkflowBuilder(start_executor=steps[0], checkpoint_storage=storage, run_store=store)
        workflow = builder.add_chain(steps).build()
        result = await workflow.run(0)
        assert result.get_outputs() == [3]
        infos = await storage.list_checkpoint_infos(workflow_name=workflow.name)
        assert len(infos) >= 3
        first = min(infos, key=lambda info: info.step)
        resumed = await workflow.run(checkpoint_id=first.checkpoint_id, checkpoint_storage=storage)
        assert resumed.get_outputs() == [3]
        # Runs, events and checkpoints (saved, listed, loaded) all went over the loop's async connections:
        # no blocking pool connection, no worker thread.
        assert lent["blocking"] == 0 and executor.submitted == []
        assert lent["async"] >= 2 * (2 + len(infos))  # two runs: start, events, finish; a save per checkpoint
    finally:
        monkeypatch.undo()
        await store.aclose()
    with open_store(pg_url) as check:
        assert [run["status"] for run in check.list_runs()] == ["completed", "completed"]
