"""The span store: a bounded memory buffer and batched background writes to the run store."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from agentnb import _telemetry as tel
from agentnb.observability import SpanStore, frame_record, records_frame, span_record, span_to_row
from agentnb.observability._span_store import _encode_spans  # pyright: ignore[reportPrivateUsage]
from agentnb.store import RunStore

REPO = Path(__file__).resolve().parents[2]


def _provider(spans: SpanStore) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "span-store-test"}), shutdown_on_exit=False)
    provider.add_span_processor(spans)  # pyright: ignore[reportArgumentType]
    return provider


def _emit(provider: TracerProvider, n: int, *, prefix: str = "s") -> None:
    tracer = provider.get_tracer("tests")
    for i in range(n):
        tracer.start_span(f"{prefix}{i}").end()


def test_span_to_row() -> None:
    spans = SpanStore(None)
    tracer = _provider(spans).get_tracer("tests")
    parent = tracer.start_span("parent")
    child = tracer.start_span(
        "chat m",
        context=set_span_in_context(parent),
        kind=SpanKind.CLIENT,
        attributes={
            tel.GEN_AI_OPERATION_NAME: "chat",
            tel.GEN_AI_REQUEST_MODEL: "m",
            tel.GEN_AI_USAGE_INPUT_TOKENS: 3,
            tel.WORKFLOW_RUN_ID: "run-1",
            "tags": ("a", "b"),
        },
    )
    child.add_event("retry", {"attempt": 2})
    child.set_status(Status(StatusCode.ERROR, "nope"))
    child.end()
    parent.end()
    row = span_to_row(spans.spans()[0])
    assert row["name"] == "chat m" and row["kind"] == "CLIENT"
    assert row["trace_id"] == format(parent.get_span_context().trace_id, "032x")
    assert row["parent_id"] == format(parent.get_span_context().span_id, "016x")
    assert (row["status_code"], row["status_message"]) == ("ERROR", "nope")
    assert (row["operation"], row["model"], row["input_tokens"], row["output_tokens"]) == ("chat", "m", 3, None)
    assert row["run_id"] == "run-1"
    assert row["attributes"]["tags"] == ("a", "b")
    assert row["events"][0]["name"] == "retry" and row["events"][0]["attributes"] == {"attempt": 2}
    assert row["resource"]["service.name"] == "span-store-test"
    assert row["end_ns"] >= row["start_ns"] > 0
    assert span_to_row(spans.spans()[1])["parent_id"] is None
    spans.shutdown()


def test_the_writers_records_read_sdk_spans_as_their_public_properties_do() -> None:
    spans = SpanStore(None, precompute=False)
    provider = _provider(spans)
    tracer = provider.get_tracer("tests")
    root = tracer.start_span("invoke_agent a", attributes={tel.GEN_AI_AGENT_NAME: "a", "big": 2**70})
    ctx = set_span_in_context(root)
    chat = tracer.start_span(
        "chat m",
        context=ctx,
        kind=SpanKind.CLIENT,
        attributes={
            tel.GEN_AI_OPERATION_NAME: "chat",
            tel.GEN_AI_RESPONSE_MODEL: "m-1",
            tel.GEN_AI_USAGE_INPUT_TOKENS: 7,
        },
    )
    chat.add_event("retry", {"attempt": 2})
    chat.set_status(Status(StatusCode.ERROR, "nope"))
    chat.end()
    tool_span = tracer.start_span("execute_tool t", context=ctx, attributes={tel.GEN_AI_TOOL_NAME: "t"})
    tool_span.set_status(Status(StatusCode.OK))
    tool_span.end()
    tracer.start_span("bare").end()  # no attributes, another trace
    root.end()
    finished = spans.spans()
    fast = _encode_spans(finished)
    assert fast == _encode_spans(finished, public=True)
    assert [r[:16] for r in fast] == [span_record(s)[:16] for s in finished]
    assert [json.loads(r[16]) for r in fast] == [json.loads(json.dumps(dict(s.attributes or {}))) for s in finished]
    assert json.loads(fast[0][17]) == [
        {"name": "retry", "timestamp_ns": finished[0].events[0].timestamp, "attributes": {"attempt": 2}}
    ]
    assert json.loads(fast[-1][16])["big"] == 2**70  # past orjson's 64 bits, encoded by json instead
    assert json.loads(fast[2][18])["service.name"] == "span-store-test"

    class Redacted(ReadableSpan):
        """A span class of its own: the writer must read it through its properties, not the SDK's fields."""

        @property
        def attributes(self) -> Any:
            return {"redacted": True}

    copy = Redacted(name="x", context=finished[0].context, attributes={"secret": 1})
    assert json.loads(_encode_spans([copy])[0][16]) == {"redacted": True}

    class FreshStatus(ReadableSpan):
        """Makes a new status object on every read: the batch's status cache must not mix them up."""

        @property
        def status(self) -> Status:
            return Status(StatusCode.ERROR, "bad") if self.name == "bad" else Status(StatusCode.OK)

    fresh = [FreshStatus(name="bad" if i % 3 == 0 else "good", context=finished[0].context) for i in range(200)]
    assert [r[7] for r in _encode_spans(fresh)] == ["ERROR" if i % 3 == 0 else "OK" for i in range(200)]
    spans.shutdown()


def test_background_thread_writes_without_a_flush(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "bg.db")
    spans = SpanStore(store, flush_interval=0.05)
    _emit(_provider(spans), 30)
    deadline = time.monotonic() + 10
    while len(store.list_spans()) < 30 and time.monotonic() < deadline:
        time.sleep(0.02)
    stored = store.list_spans()
    assert [s["name"] for s in stored] == [f"s{i}" for i in range(30)]
    assert stored[0]["resource"]["service.name"] == "span-store-test"
    assert spans.written == 30 and spans.dropped == 0
    spans.shutdown()
    store.close()


def test_a_full_batch_is_written_early(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "batch.db")
    spans = SpanStore(store, flush_interval=60, batch_size=10)
    _emit(_provider(spans), 10)
    deadline = time.monotonic() + 10
    while spans.written < 10 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(store.list_spans()) == 10
    spans.shutdown()
    store.close()


def test_memory_buffer_is_bounded() -> None:
    spans = SpanStore(None, max_spans=10)
    _emit(_provider(spans), 25)
    assert len(spans) == 10
    assert [s.name for s in spans.spans()] == [f"s{i}" for i in range(15, 25)]
    spans.clear()
    assert spans.spans() == [] and spans.rows() == []
    spans.shutdown()


def test_memory_only_spans_are_converted_as_they_end_without_a_thread() -> None:
    spans = SpanStore(None)
    _emit(_provider(spans), 50)
    assert all(entry[1] is not None for entry in spans._buffer)  # pyright: ignore[reportPrivateUsage]
    records = spans.frame_records()
    assert [r[3] for r in records] == [f"s{i}" for i in range(50)]
    assert records == [frame_record(s) for s in spans.spans()]
    assert spans._thread is None  # pyright: ignore[reportPrivateUsage]
    spans.shutdown()


def test_frames_never_share_attribute_dicts_with_the_cache() -> None:
    spans = SpanStore(None, precompute=False)
    tracer = _provider(spans).get_tracer("tests")
    tracer.start_span("x", attributes={"k": 1}).end()
    first = records_frame(spans.frame_records(), attributes_filtered=True)
    first["attributes"].iloc[0]["k"] = 99
    again = records_frame(spans.frame_records(), attributes_filtered=True)
    assert again["attributes"].iloc[0] == {"k": 1}
    assert spans._thread is None  # pyright: ignore[reportPrivateUsage]


def test_write_queue_is_bounded_and_says_so_when_it_drops(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = RunStore(tmp_path / "q.db")
    spans = SpanStore(store, flush_interval=60, batch_size=1000, max_pending=5)
    with caplog.at_level(logging.WARNING, logger="agentnb.observability"):
        _emit(_provider(spans), 20)
    assert spans.dropped == 15
    warnings = [r for r in caplog.records if "shedding load" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING  # once, not once per span
    assert spans.force_flush() is True
    assert [s["name"] for s in store.list_spans()] == [f"s{i}" for i in range(15, 20)]
    spans.shutdown()
    store.close()


def test_a_broken_database_never_breaks_the_traced_code(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    spans = SpanStore(blocker / "spans.db", flush_interval=60)
    provider = _provider(spans)
    with caplog.at_level(logging.ERROR, logger="agentnb.observability"):
        _emit(provider, 3)
        spans.force_flush()
        _emit(provider, 2)
        spans.force_flush()
    assert spans.dropped == 5 and spans.written == 0
    assert len(spans) == 5  # the memory buffer still has them
    errors = [r for r in caplog.records if "could not write" in r.getMessage()]
    assert len(errors) == 1  # reported once, not once per batch
    spans.shutdown()


def test_shutdown_writes_the_rest_and_is_idempotent(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "sd.db")
    spans = SpanStore(store, flush_interval=60)
    provider = _provider(spans)
    _emit(provider, 7)
    spans.shutdown()
    assert len(store.list_spans()) == 7
    assert spans._thread is not None and not spans._thread.is_alive()  # pyright: ignore[reportPrivateUsage]
    spans.shutdown()
    _emit(provider, 2, prefix="late")
    spans.force_flush()
    assert len(store.list_spans()) == 7  # after shutdown spans stay in memory only
    assert len(spans) == 9
    store.close()


def test_spans_are_written_at_interpreter_exit(tmp_path: Path) -> None:
    path = tmp_path / "exit.db"
    script = textwrap.dedent(
        """
        import sys
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from agentnb.observability import SpanStore

        spans = SpanStore(sys.argv[1], flush_interval=3600)  # the thread would never get to it
        provider = TracerProvider(shutdown_on_exit=False)
        provider.add_span_processor(spans)
        for i in range(42):
            provider.get_tracer("t").start_span(f"exit{i}").end()
        """
    )
    subprocess.run([sys.executable, "-c", script, str(path)], cwd=REPO, check=True, timeout=60)
    store = RunStore(path)
    assert len(store.list_spans()) == 42
    store.close()


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match=">= 1"):
        SpanStore(None, max_spans=0)
    with pytest.raises(ValueError, match="flush_interval"):
        SpanStore(None, flush_interval=0)
    assert SpanStore(None).persistent is False
    assert SpanStore(None).store_path is None
    assert "memory" in repr(SpanStore(None))


def test_the_default_store_is_looked_up_again_after_it_was_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agentnb.store import default_store

    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "home"))
    spans = SpanStore(flush_interval=60)  # the process-wide default store
    provider = _provider(spans)
    _emit(provider, 2, prefix="before")
    spans.force_flush()
    default_store().close()  # someone closed the shared store
    with caplog.at_level(logging.ERROR, logger="agentnb.observability"):
        _emit(provider, 3, prefix="lost")
        spans.force_flush()
    assert spans.dropped == 3
    _emit(provider, 4, prefix="after")
    spans.force_flush()
    names = [s["name"] for s in default_store().list_spans()]
    assert names == ["before0", "before1", "after0", "after1", "after2", "after3"]
    spans.shutdown()
    default_store().close()


@pytest.mark.slow
def test_a_burst_of_100000_spans_is_written_without_a_loss(tmp_path: Path) -> None:
    """Spans arrive far faster than SQLite takes them; the bounded queue absorbs the burst and loses nothing."""
    store = RunStore(tmp_path / "burst.db")
    spans = SpanStore(store, max_spans=1000)  # the default write queue; a small memory buffer
    provider = _provider(spans)
    tracer = provider.get_tracer("tests")
    attributes = {tel.GEN_AI_OPERATION_NAME: "chat", tel.GEN_AI_AGENT_NAME: "bot", tel.GEN_AI_USAGE_INPUT_TOKENS: 5}
    for i in range(25_000):  # 25,000 traces of four spans
        root = tracer.start_span(f"invoke_agent {i}")
        context = set_span_in_context(root)
        for _ in range(3):
            tracer.start_span("chat m", context=context, attributes=attributes).end()
        root.end()
    spans.shutdown()
    assert spans.dropped == 0 and spans.written == 100_000
    assert store.watermark()["spans"] == 100_000
    assert len(store.list_traces()) == 25_000
    assert store.select_spans(["name"], last_traces=1) == [("invoke_agent 24999",)] + [("chat m",)] * 3
    store.close()


def test_the_writer_thread_stops_cleanly_at_exit_while_busy(tmp_path: Path) -> None:
    """Exit while the writer is mid-stream: the rest is flushed, the thread is joined, nothing is printed."""
    path = tmp_path / "busy.db"
    script = textwrap.dedent(
        """
        import sys, threading
        from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
        from agentnb.observability import SpanStore

        spans = SpanStore(sys.argv[1], flush_interval=0.01, batch_size=64)
        provider = TracerProvider(shutdown_on_exit=False)
        provider.add_span_processor(spans)
        tracer = provider.get_tracer("t")
        for i in range(20_000):
            tracer.start_span(f"busy{i}").end()
        assert spans._thread is not None and spans._thread.is_alive()  # the interpreter exits from here
        """
    )
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", script, str(path)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    store = RunStore(path)
    assert store.watermark()["spans"] == 20_000
    assert [row[0] for row in store.select_spans(["name"], last_traces=1)] == ["busy19999"]
    store.close()
