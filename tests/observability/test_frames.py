"""traces() and usage_summary(): DataFrame shape, filters (memory and store agree), workflow spans."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

from agentnb import Agent
from agentnb import _telemetry as tel
from agentnb.local import ToolCallingChatClient
from agentnb.observability import FRAME_COLUMNS, SpanStore, _setup, spans_frame, traces, usage_summary
from agentnb.store import RunStore
from agentnb.workflows import AgentExecutor, WorkflowBuilder, WorkflowContext, executor
from tests.observability.otel_fixtures import Otel

T0 = 1_767_000_000 * 10**9  # a fixed moment, in ns
MS = 10**6


def _record(provider: TracerProvider) -> None:
    """Two traces: an agent turn (chat + failing tool) and a later chat without an agent."""
    tracer = provider.get_tracer("tests")
    root = tracer.start_span(
        "invoke_agent bot",
        start_time=T0,
        attributes={
            tel.GEN_AI_OPERATION_NAME: "invoke_agent",
            tel.GEN_AI_AGENT_NAME: "bot",
            tel.GEN_AI_USAGE_INPUT_TOKENS: 10,
            tel.GEN_AI_USAGE_OUTPUT_TOKENS: 4,
        },
    )
    ctx = set_span_in_context(root)
    chat = tracer.start_span(
        "chat m1",
        context=ctx,
        kind=SpanKind.CLIENT,
        start_time=T0 + 1 * MS,
        attributes={
            tel.GEN_AI_OPERATION_NAME: "chat",
            tel.GEN_AI_AGENT_NAME: "bot",
            tel.GEN_AI_REQUEST_MODEL: "m1",
            tel.GEN_AI_RESPONSE_MODEL: "m1-2026",
            tel.GEN_AI_USAGE_INPUT_TOKENS: 10,
            tel.GEN_AI_USAGE_OUTPUT_TOKENS: 4,
            tel.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",),
        },
    )
    chat.end(end_time=T0 + 21 * MS)
    call = tracer.start_span(
        "execute_tool lookup",
        context=ctx,
        start_time=T0 + 22 * MS,
        attributes={tel.GEN_AI_OPERATION_NAME: "execute_tool", tel.GEN_AI_TOOL_NAME: "lookup", "custom": 1},
    )
    call.set_status(Status(StatusCode.ERROR, "no such key"))
    call.add_event("exception", {"exception.type": "KeyError"}, timestamp=T0 + 23 * MS)
    call.end(end_time=T0 + 25 * MS)
    root.end(end_time=T0 + 30 * MS)
    solo = tracer.start_span(
        "chat m2",
        kind=SpanKind.CLIENT,
        start_time=T0 + 10_000 * MS,
        attributes={tel.GEN_AI_OPERATION_NAME: "chat", tel.GEN_AI_REQUEST_MODEL: "m2"},
    )
    solo.end(end_time=T0 + 10_002 * MS)


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator[tuple[SpanStore, RunStore]]:
    store = RunStore(tmp_path / "spans.db")
    spans = SpanStore(store, flush_interval=60)
    provider = TracerProvider()
    provider.add_span_processor(spans)  # pyright: ignore[reportArgumentType]
    _record(provider)
    spans.force_flush()
    yield spans, store
    spans.shutdown()
    store.close()


def test_frame_columns_types_and_values(recorded: tuple[SpanStore, RunStore]) -> None:
    spans, _ = recorded
    df = spans_frame(spans.rows())
    assert tuple(df.columns) == FRAME_COLUMNS
    assert list(df["name"]) == ["invoke_agent bot", "chat m1", "execute_tool lookup", "chat m2"]
    assert str(df["start_time"].dt.tz) == "UTC" and str(df["end_time"].dt.tz) == "UTC"
    assert df["start_time"].iloc[0] == pd.Timestamp(T0, unit="ns", tz="UTC")
    assert list(df["duration_ms"]) == [30.0, 20.0, 3.0, 2.0]
    assert str(df["input_tokens"].dtype) == "Int64"
    assert df["input_tokens"].iloc[1] == 10 and pd.isna(df["input_tokens"].iloc[2])
    root, chat, call, solo = (df.iloc[i] for i in range(4))
    assert pd.isna(root["parent_id"])
    assert chat["parent_id"] == root["span_id"] == call["parent_id"]
    assert len(root["trace_id"]) == 32 and len(root["span_id"]) == 16
    assert solo["trace_id"] != root["trace_id"]
    assert chat["kind"] == "CLIENT" and root["kind"] == "INTERNAL"
    assert chat["model"] == "m1-2026"  # the model that answered wins over the one requested
    assert solo["model"] == "m2"
    assert call["tool_name"] == "lookup" and call["agent_name"] is pd.NA
    assert chat["operation"] == "chat"
    assert (call["status_code"], call["status_message"]) == ("ERROR", "no such key")
    assert chat["status_code"] == "UNSET"
    # Attributes shown as columns are not repeated in the ``attributes`` dict.
    assert call["attributes"] == {"custom": 1}
    assert chat["attributes"] == {
        tel.GEN_AI_REQUEST_MODEL: "m1",
        tel.GEN_AI_RESPONSE_MODEL: "m1-2026",
        tel.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",),
    }


def test_flattened_attribute_columns(recorded: tuple[SpanStore, RunStore]) -> None:
    spans, _ = recorded
    df = spans_frame(spans.rows(), flatten=True)
    assert tuple(df.columns[: len(FRAME_COLUMNS)]) == FRAME_COLUMNS
    assert "attributes.custom" in df.columns
    assert list(df["attributes.custom"]) == [None, None, 1, None]
    assert df["attributes.gen_ai.request.model"].iloc[3] == "m2"


def _names(df: pd.DataFrame) -> list[str]:
    return list(df["name"])


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, ["invoke_agent bot", "chat m1", "execute_tool lookup", "chat m2"]),
        ({"agent": "bot"}, ["invoke_agent bot", "chat m1"]),
        ({"last": 1}, ["chat m2"]),
        ({"last": 0}, []),
        ({"start": T0 / 1e9 + 0.005}, ["execute_tool lookup", "chat m2"]),
        ({"end": dt.datetime.fromtimestamp(T0 / 1e9 + 0.005, dt.timezone.utc)}, ["invoke_agent bot", "chat m1"]),
    ],
)
def test_filters_agree_between_memory_and_store(
    recorded: tuple[SpanStore, RunStore], filters: dict[str, Any], expected: list[str]
) -> None:
    spans, store = recorded
    previous = _setup._active["span_store"]  # pyright: ignore[reportPrivateUsage]
    _setup._active["span_store"] = spans  # pyright: ignore[reportPrivateUsage]
    try:
        from_memory = traces(source="memory", **filters)
        from_store = traces(store=store, **filters)
        from_active_store = traces(source="auto", **filters)  # the span store is persistent: reads SQLite
    finally:
        _setup._active["span_store"] = previous  # pyright: ignore[reportPrivateUsage]
    assert _names(from_memory) == expected
    pd.testing.assert_frame_equal(from_memory, from_store)
    pd.testing.assert_frame_equal(from_memory, from_active_store)


def test_trace_id_filter_and_path_source(recorded: tuple[SpanStore, RunStore], tmp_path: Path) -> None:
    spans, _ = recorded
    first = spans_frame(spans.rows())["trace_id"].iloc[0]
    df = traces(first, store=tmp_path / "spans.db")
    assert _names(df) == ["invoke_agent bot", "chat m1", "execute_tool lookup"]
    assert len(traces([first, "0" * 32], store=tmp_path / "spans.db")) == 3


def test_reading_a_missing_store_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_setup._active, "span_store", None)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "nowhere"))
    df = traces()
    assert tuple(df.columns) == FRAME_COLUMNS and len(df) == 0
    assert str(df["start_time"].dtype) == "datetime64[ns, UTC]"
    assert not (tmp_path / "nowhere").exists()
    assert len(traces(store=tmp_path / "missing.db")) == 0
    assert not (tmp_path / "missing.db").exists()


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="last must be >= 0"):
        traces(last=-1)
    with pytest.raises(ValueError, match="source must be"):
        traces(source="disk")  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match="not both"):
        usage_summary(spans_frame([]), agent="x")


def test_rows_out_of_order_are_sorted_by_start() -> None:
    rows = [
        {"trace_id": "t", "span_id": s, "parent_id": None, "name": s, "kind": "INTERNAL", "start_ns": start,
         "end_ns": None if s == "open" else start + 5, "status_code": "UNSET", "status_message": None,
         "operation": None, "agent_name": None, "model": None, "tool_name": None, "input_tokens": None,
         "output_tokens": None, "attributes": {}}
        for s, start in (("b", 20), ("a", 10), ("open", 30))
    ]  # fmt: skip
    df = spans_frame(rows)
    assert _names(df) == ["a", "b", "open"]
    assert pd.isna(df["end_time"].iloc[2]) and pd.isna(df["duration_ms"].iloc[2])


def test_usage_summary_per_agent_and_model() -> None:
    provider = TracerProvider()
    spans = SpanStore(None)
    provider.add_span_processor(spans)  # pyright: ignore[reportArgumentType]
    tracer = provider.get_tracer("tests")
    for i in range(1, 11):  # bot calls m1 ten times, taking 1..10 ms; the 10th fails
        span = tracer.start_span(
            "chat m1",
            start_time=T0 + i * 100 * MS,
            attributes={
                tel.GEN_AI_OPERATION_NAME: "chat",
                tel.GEN_AI_AGENT_NAME: "bot",
                tel.GEN_AI_REQUEST_MODEL: "m1",
                tel.GEN_AI_USAGE_INPUT_TOKENS: i,
                tel.GEN_AI_USAGE_OUTPUT_TOKENS: 1,
            },
        )
        if i == 10:
            span.set_status(Status(StatusCode.ERROR, "boom"))
        span.end(end_time=T0 + i * 100 * MS + i * MS)
    m2 = {tel.GEN_AI_OPERATION_NAME: "chat", tel.GEN_AI_REQUEST_MODEL: "m2", tel.GEN_AI_USAGE_INPUT_TOKENS: 7}
    tracer.start_span("chat m2", start_time=T0, attributes=m2).end(end_time=T0 + 4 * MS)
    turn = {tel.GEN_AI_OPERATION_NAME: "invoke_agent", tel.GEN_AI_AGENT_NAME: "bot", tel.GEN_AI_USAGE_INPUT_TOKENS: 999}
    tracer.start_span("invoke_agent bot", start_time=T0, attributes=turn).end(end_time=T0 + MS)
    summary = usage_summary(spans_frame(spans.rows()))
    spans.shutdown()
    assert list(summary.columns) == [
        "agent_name",
        "model",
        "calls",
        "errors",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_mean_ms",
    ]
    rows = {(r.agent_name, r.model): r for r in summary.itertuples()}
    assert set(rows) == {("bot", "m1"), ("", "m2")}
    bot = rows["bot", "m1"]
    assert (bot.calls, bot.errors, bot.input_tokens, bot.output_tokens, bot.total_tokens) == (10, 1, 55, 10, 65)
    assert bot.latency_p50_ms == pytest.approx(5.5)
    assert bot.latency_p95_ms == pytest.approx(9.55)
    assert bot.latency_mean_ms == pytest.approx(5.5)
    solo = rows["", "m2"]
    assert (solo.calls, solo.input_tokens, solo.output_tokens) == (1, 7, 0)
    empty = usage_summary(spans_frame([]))
    assert list(empty.columns) == list(summary.columns) and len(empty) == 0


async def test_workflow_spans_nest_and_link_to_the_run(otel: Otel, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "wf.db")
    otel.span_store._store_arg = store  # pyright: ignore[reportPrivateUsage]
    otel.span_store._store = store  # pyright: ignore[reportPrivateUsage]

    @executor(id="prepare")
    async def prepare(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"Summarize Vienna: {text}")

    writer = AgentExecutor(Agent(ToolCallingChatClient(), name="writer"), id="writer")
    workflow = WorkflowBuilder(start_executor=prepare, name="brief", run_store=store).add_edge(prepare, writer).build()
    await workflow.run("coffee houses")

    df = traces()  # the active span store is persistent now: flushed, then read from SQLite
    build = df[df["name"] == "workflow.build"]  # building is a trace of its own, before the run's
    assert len(build) == 1 and build.iloc[0]["trace_id"] not in set(df[df["name"] == "workflow.run"]["trace_id"])
    df = df[df["name"] != "workflow.build"]
    names = _names(df)
    assert names[0] == "workflow.run"
    assert names.count("workflow.superstep") >= 2
    assert "executor.process" in names and "invoke_agent writer" in names
    by_id = df.set_index("span_id")
    agent_row = df[df["name"] == "invoke_agent writer"].iloc[0]
    executor_row = by_id.loc[agent_row["parent_id"]]
    assert executor_row["name"] == "executor.process"
    assert executor_row["attributes"][tel.EXECUTOR_ID] == "writer"
    assert by_id.loc[executor_row["parent_id"], "name"] == "workflow.superstep"
    chat_rows = df[df["operation"] == "chat"]
    assert len(chat_rows) >= 1 and set(chat_rows["agent_name"]) == {"writer"}
    assert set(chat_rows["parent_id"]) == {agent_row["span_id"]}
    assert df["trace_id"].nunique() == 1
    # Every span of the run carries the workflow's run id, which is the run store's run.
    run = store.list_runs()[0]
    assert run["kind"] == "workflow" and run["name"] == "brief"
    linked = store.list_spans(run_id=run["run_id"])
    assert len(linked) == len(df)
    otel.span_store.shutdown()
    store.close()


def test_usage_summary_cost_columns_from_a_price_table() -> None:
    rows = [
        {"trace_id": "t", "span_id": f"s{i}", "name": "chat", "start_ns": T0 + i, "end_ns": T0 + i + MS,
         "operation": "chat", "agent_name": "bot", "model": model, "input_tokens": 1_000_000, "output_tokens": 2_000}
        for i, model in enumerate(["gpt-4o-mini-2024-07-18", "gpt-4o-mini", "gpt-4o-mini-tts", "other"])
    ]  # fmt: skip
    prices = {"gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.5, 10.0)}
    summary = usage_summary(spans_frame(rows), prices=prices)
    assert list(summary.columns)[-3:] == ["input_cost", "output_cost", "total_cost"]
    cost = {r.model: (r.input_cost, r.output_cost, r.total_cost) for r in summary.itertuples()}
    # A dated name takes its base model's price; "-tts" is another model, so it is not priced as gpt-4o-mini.
    assert cost["gpt-4o-mini-2024-07-18"] == pytest.approx((0.15, 0.0012, 0.1512))
    assert cost["gpt-4o-mini"] == pytest.approx((0.15, 0.0012, 0.1512))
    assert all(pd.isna(v) for v in cost["gpt-4o-mini-tts"]) and all(pd.isna(v) for v in cost["other"])
    assert "total_cost" not in usage_summary(spans_frame(rows)).columns
    assert list(usage_summary(spans_frame([]), prices=prices).columns)[-1] == "total_cost"
    with pytest.raises(ValueError, match="finite numbers"):
        usage_summary(spans_frame(rows), prices={"other": (-1, 0)})


def test_token_cost_is_the_one_price_rule() -> None:
    from agentnb.observability import price_for, token_cost

    prices = {"gpt-4": (30, 60), "gpt-4o": (2.5, 10)}
    assert token_cost("gpt-4-0125", 1000, None, prices) == pytest.approx((0.03, 0.0))
    assert price_for("gpt-4o-2024-08-06", prices) == (2.5, 10.0)  # the longest matching entry wins
    assert price_for("gpt-4o-mini", prices) is None and price_for(None, prices) is None
    with pytest.raises(ValueError, match="input per 1M"):
        price_for("gpt-4", {"gpt-4": (1,)})  # pyright: ignore[reportArgumentType]
