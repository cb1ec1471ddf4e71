"""The PostgreSQL server goes away mid-run and comes back: typed errors meanwhile, nothing committed lost."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator

import pytest

from agentnb.exceptions import StoreError
from agentnb.store import open_store
from tests.store.pg_fixture import PASSWORD, PostgresServer, running_postgres


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    # A server of this test's own: stopping the shared one would break every other test.
    with running_postgres() as server:
        yield server


@pytest.mark.slow
def test_a_server_stopped_mid_run_fails_typed_and_writes_resume_when_it_is_back(own_server: PostgresServer) -> None:
    store = open_store(own_server.url(), timeout=2)
    try:
        store.start_run("r", kind="workflow", name="flow")
        store.add_events("r", [{"type": "step", "data": i} for i in range(10)])
        store.put_checkpoint("c0", run_id="r", workflow_name="flow", parent_id=None, step=0, data='{"s": 0}')
        assert store.watermark()["events"] == 10

        own_server.stop("immediate")  # a crash, not a polite shutdown
        started = time.perf_counter()
        with pytest.raises(StoreError) as info:
            store.add_events("r", [{"type": "step", "data": {"lost": True}}])
        assert time.perf_counter() - started < 15
        message = str(info.value)
        assert "database 'agentnb' on host '127.0.0.1'" in message and PASSWORD not in message
        with pytest.raises(StoreError):
            store.list_events("r")
        with pytest.raises(StoreError):
            store.watermark()  # the DevUI's poll sees a typed error, not a driver exception

        own_server.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                store.add_events("r", [{"type": "step", "data": {"after": 1}}])
                break
            except StoreError:
                assert time.monotonic() < deadline, "writes did not resume after the server came back"
                time.sleep(0.2)
        store.finish_run("r", status="completed")
        events = store.list_events("r")
        assert [e["data"] for e in events] == [str(i) for i in range(10)] + [json.dumps({"after": 1})]
        assert store.get_checkpoint("c0") == '{"s": 0}'
        assert store.get_run("r")["status"] == "completed"
    finally:
        store.close()


@pytest.mark.slow
async def test_async_writes_fail_typed_while_the_server_is_down_and_resume_after(own_server: PostgresServer) -> None:
    store = open_store(own_server.url(), timeout=2)
    try:
        await store.astart_run("r", kind="workflow", name="flow")
        await store.aput_checkpoint("c0", run_id="r", workflow_name="flow", parent_id=None, step=0, data="{}")

        own_server.stop("immediate")
        with pytest.raises(StoreError) as info:
            await store.aadd_events("r", [{"type": "step", "data": {"lost": True}}])
        message = str(info.value)
        assert "database 'agentnb' on host '127.0.0.1'" in message and PASSWORD not in message

        own_server.start()
        # The broken connection was dropped with the idle ones: the first write after the restart succeeds.
        assert await store.aadd_events("r", [{"type": "step", "data": {"after": 1}}]) == [0]
        await store.afinish_run("r", status="completed")
        assert await store.aget_checkpoint("c0") == "{}"
        assert [e["data"] for e in store.list_events("r")] == [json.dumps({"after": 1})]
    finally:
        await store.aclose()


@pytest.mark.slow
def test_the_password_is_in_no_log_record_span_or_repr_through_an_outage(
    own_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from agentnb.observability import SpanStore
    from agentnb.workflows import RunStoreCheckpointStorage

    caplog.set_level(logging.DEBUG)  # every logger, psycopg's and its pool's included
    url = own_server.url()
    store = open_store(url, timeout=2)
    spans = SpanStore(store, flush_interval=0.05)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(spans)  # pyright: ignore[reportArgumentType]
    tracer = provider.get_tracer("t")
    try:
        with tracer.start_as_current_span("before"):
            pass
        assert spans.force_flush()
        store.watermark()  # starts the listener, which logs when it loses the server
        _wait_until(lambda: store._listening)  # type: ignore[attr-defined]
        own_server.stop("immediate")
        errors: list[StoreError] = []
        for call in (lambda: store.start_run("r", kind="agent", name="a"), store.list_runs, store.watermark):
            with pytest.raises(StoreError) as info:
                call()
            errors.append(info.value)
        with tracer.start_as_current_span("during"):
            pass
        spans.force_flush(timeout_millis=5000)  # the write fails: the span store's writer logs it
        _wait_until(lambda: any("stopped hearing" in r.getMessage() for r in caplog.records))
        own_server.start()
        with tracer.start_as_current_span("after"):
            pass

        def written() -> bool:
            spans.force_flush(timeout_millis=2000)
            try:
                return any(s["name"] == "after" for s in store.list_spans())
            except StoreError:
                return False

        _wait_until(written, 20)
        shown = [repr(store), store.url, repr(spans), repr(SpanStore(url)), repr(RunStoreCheckpointStorage(store))]
        shown += [json.dumps(store.list_spans()), *map(str, errors)]
        shown += [r.getMessage() for r in caplog.records] + [str(r.exc_info) for r in caplog.records if r.exc_info]
        messages = [r.getMessage() for r in caplog.records]
        assert any("stopped hearing changes from database 'agentnb'" in m for m in messages)
        assert any("could not write 1 spans" in m for m in messages)
        assert all(PASSWORD not in text for text in shown), [t for t in shown if PASSWORD in t][:3]
        assert all("agentnb:***@" in text for text in shown[:5])
    finally:
        spans.shutdown()
        store.close()


def _wait_until(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
