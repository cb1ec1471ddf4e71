"""run_batch: columns and order, failures per case, timeouts, retries, rate limits, approvals, targets, store."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from eval_targets import approval_agent, capital_agent, capital_model, upper_workflow

from agentnb import Agent
from agentnb.evals import BATCH_COLUMNS, LocalBackend, run_batch
from agentnb.exceptions import RateLimitError
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore


async def test_columns_order_and_one_row_per_input_in_input_order(store: RunStore) -> None:
    inputs = [f"Capital of {c}?" for c in ("France", "Italy", "Spain", "Japan", "Peru")] * 4
    delays = {"France": 0.03, "Italy": 0.0, "Spain": 0.02, "Japan": 0.01, "Peru": 0.0}

    async def model(messages: list[Any], options: dict[str, Any]) -> str:
        text = messages[-1].text
        await asyncio.sleep(next(d for c, d in delays.items() if c in text))  # finish out of order
        return capital_model(messages, options)

    agent = Agent(FunctionChatClient(model), name="geo")
    frame = await run_batch(agent, inputs, concurrency=5, progress=False, store=store)
    assert (
        list(frame.columns)
        == list(BATCH_COLUMNS)
        == [
            "case_id",
            "input",
            "output",
            "status",
            "error",
            "latency_ms",
            "input_tokens",
            "output_tokens",
            "run_id",
            "trace_id",
        ]
    )
    assert list(frame["case_id"]) == [str(i) for i in range(20)]
    assert list(frame["input"]) == inputs
    assert list(frame["output"]) == ["Paris", "Rome", "Madrid", "Tokyo", "Lima"] * 4
    assert set(frame["status"]) == {"ok"} and frame["error"].isna().all()
    assert (frame["latency_ms"] > 0).all()
    assert (frame["input_tokens"] > 0).all() and (frame["output_tokens"] > 0).all()
    assert str(frame["input_tokens"].dtype) == "Int64"
    assert frame["run_id"].is_unique
    assert frame["trace_id"].isna().all()  # instrumentation is off


async def test_concurrency_is_real_and_bounded(store: RunStore) -> None:
    running = 0
    peak = 0

    async def model(messages: list[Any], options: dict[str, Any]) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return "ok"

    agent = Agent(FunctionChatClient(model))
    loop = asyncio.get_running_loop()
    started = loop.time()
    frame = await run_batch(agent, ["x"] * 24, concurrency=8, progress=False, store=store)
    elapsed = loop.time() - started
    assert peak == 8
    assert len(frame) == 24 and elapsed < 24 * 0.05 / 2  # three waves, not twenty-four


async def test_failures_and_timeouts_are_recorded_per_case_and_never_stop_the_batch(store: RunStore) -> None:
    agent = capital_agent()
    frame = await run_batch(
        agent, ["Capital of France?", "explode", "slow", "Capital of Peru?"], timeout=0.5, progress=False, store=store
    )
    assert list(frame["status"]) == ["ok", "error", "timeout", "ok"]
    assert list(frame["output"]) == ["Paris", None, None, "Lima"]
    assert frame.loc[1, "error"] == "RuntimeError: the model exploded"
    assert frame.loc[2, "error"] == "Timed out after 0.5 s."
    assert 450 < frame.loc[2, "latency_ms"] < 3000
    runs = {r["run_id"]: r for r in store.list_runs()}
    assert runs[frame.loc[0, "run_id"]]["status"] == "completed"
    assert runs[frame.loc[1, "run_id"]]["status"] == "failed"
    assert runs[frame.loc[1, "run_id"]]["error"] == "RuntimeError: the model exploded"
    assert runs[frame.loc[2, "run_id"]]["status"] == "failed"


async def test_retries_try_failed_cases_again(store: RunStore) -> None:
    calls: dict[str, int] = {}

    def flaky(messages: list[Any], options: dict[str, Any]) -> str:
        text = messages[-1].text
        calls[text] = calls.get(text, 0) + 1
        if calls[text] < 3:
            raise ConnectionError("flaky")
        return "fine"

    agent = Agent(FunctionChatClient(flaky))
    frame = await run_batch(agent, ["a", "b"], retries=1, progress=False, store=store)
    assert list(frame["status"]) == ["error", "error"]
    calls.clear()
    frame = await run_batch(agent, ["a", "b"], retries=2, progress=False, store=store)
    assert list(frame["status"]) == ["ok", "ok"] and calls == {"a": 3, "b": 3}


async def test_rate_limits_back_off_honouring_retry_after(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[float] = []
    loop = asyncio.get_running_loop()

    def limited(messages: list[Any], options: dict[str, Any]) -> str:
        attempts.append(loop.time())
        if len(attempts) <= 2:
            raise RateLimitError("slow down", status_code=429, retry_after=0.2)
        return "done"

    agent = Agent(FunctionChatClient(limited))
    frame = await run_batch(agent, ["x"], progress=False, store=store)
    assert frame.loc[0, "status"] == "ok" and len(attempts) == 3
    assert attempts[1] - attempts[0] >= 0.19 and attempts[2] - attempts[1] >= 0.19
    # Rate limits are not "retries": with retries=0 the case still succeeded. Past the limit it fails.
    attempts.clear()

    def always_limited(messages: list[Any], options: dict[str, Any]) -> str:
        attempts.append(loop.time())
        raise RateLimitError("slow down", status_code=429, retry_after=0.0)

    frame = await run_batch(
        Agent(FunctionChatClient(always_limited)), ["x"], rate_limit_retries=3, progress=False, store=store
    )
    assert frame.loc[0, "status"] == "error" and "RateLimitError" in frame.loc[0, "error"]
    assert len(attempts) == 4


async def test_rate_limit_without_retry_after_uses_exponential_backoff(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentnb.evals import _targets

    waits: list[float] = []

    async def fake_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(_targets, "_wait", fake_wait)  # the waits, not their length, are under test
    failures = iter(range(4))

    def limited(messages: list[Any], options: dict[str, Any]) -> str:
        if next(failures, None) is not None:
            raise RateLimitError("slow down", status_code=429)
        return "done"

    frame = await run_batch(Agent(FunctionChatClient(limited)), ["x"], progress=False, store=store)
    assert frame.loc[0, "status"] == "ok"
    assert len(waits) == 4
    for attempt, wait in enumerate(waits):
        assert 0.25 * 2**attempt <= wait <= 0.5 * 2**attempt


async def test_openai_429_retry_after_header_reaches_the_backoff(store: RunStore) -> None:
    from agentnb.openai import OpenAIChatCompletionClient
    from tests.openai_server import ErrorReply, OpenAIServer, Reply

    with OpenAIServer() as server:
        server.script(
            ErrorReply(429, "Rate limit reached", type="rate_limit_exceeded", headers={"retry-after": "0.3"}),
            Reply(text="Paris"),
        )
        client = OpenAIChatCompletionClient("test-model", base_url=server.base_url, api_key="sk-test", max_retries=0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        frame = await run_batch(Agent(client), ["Capital of France?"], progress=False, store=store)
        elapsed = loop.time() - started
        await client.close()
        assert frame.loc[0, "status"] == "ok" and frame.loc[0, "output"] == "Paris"
        assert elapsed >= 0.3
        assert len(server.requests) == 2
        assert frame.loc[0, "input_tokens"] == 11 and frame.loc[0, "output_tokens"] == 7


@pytest.mark.parametrize(
    ("policy", "status", "output"),
    [
        ("approve", "ok", "tool said: deleted notes.txt"),
        ("deny", "ok", None),
        ("pending", "approval_pending", ""),
    ],
)
async def test_on_approval_policies(store: RunStore, policy: str, status: str, output: str | None) -> None:
    frame = await run_batch(approval_agent(), ["notes.txt"], on_approval=policy, progress=False, store=store)
    assert frame.loc[0, "status"] == status
    if output is not None:
        assert frame.loc[0, "output"] == output
    if policy == "deny":
        # The tool never ran: the model was told it was rejected.
        assert frame.loc[0, "output"].startswith("tool said:") and "deleted" not in frame.loc[0, "output"]
    if policy == "pending":
        assert "delete_file" in frame.loc[0, "error"]
        assert store.get_run(frame.loc[0, "run_id"])["status"] == "paused"  # type: ignore[index]


async def test_on_approval_callable_decides_per_request(store: RunStore) -> None:
    def only_tmp(request: Any) -> bool | None:
        path = json.loads(request.function_call.arguments)["path"]
        return True if path.startswith("/tmp") else None

    frame = await run_batch(approval_agent(), ["/tmp/x", "/etc/passwd"], on_approval=only_tmp, progress=False)
    assert list(frame["status"]) == ["ok", "approval_pending"]
    assert frame.loc[0, "output"] == "tool said: deleted /tmp/x"
    with pytest.raises(ValueError, match="on_approval"):
        await run_batch(approval_agent(), ["x"], on_approval="maybe", progress=False)  # type: ignore[arg-type]


async def test_on_approval_takes_the_one_policy_type_bounded_by_source() -> None:
    from agentnb import ApprovalPolicy

    # delete_file is a local tool: a rule for another source's delete_file does not cover it.
    elsewhere = ApprovalPolicy.parse("files:delete_file")
    frame = await run_batch(approval_agent(), ["a.txt"], on_approval=elsewhere, progress=False)
    assert list(frame["status"]) == ["approval_pending"]
    here = ApprovalPolicy.parse("delete_file")
    frame = await run_batch(approval_agent(), ["a.txt"], on_approval=here, progress=False)
    assert list(frame["status"]) == ["ok"] and frame.loc[0, "output"] == "tool said: deleted a.txt"


async def test_workflow_targets_run_concurrently_on_their_own_instances(store: RunStore) -> None:
    frame = await run_batch(
        "eval_targets:upper_workflow", ["a", "b", "explode", "c"], concurrency=4, progress=False, store=store
    )
    assert list(frame["status"]) == ["ok", "ok", "error", "ok"]
    assert list(frame["output"]) == ["A!", "B!", None, "C!"]
    assert "bad input" in frame.loc[2, "error"]
    workflow_runs = store.list_runs(kind="workflow")
    assert {r["run_id"] for r in workflow_runs} >= set(frame.loc[frame["status"] == "ok", "run_id"])
    # A Workflow object runs one case at a time (its executors hold state), still in input order.
    frame = await run_batch(upper_workflow(), ["x", "y", "z"], concurrency=3, progress=False, store=store)
    assert list(frame["output"]) == ["X!", "Y!", "Z!"]


async def test_function_and_import_string_targets(store: RunStore) -> None:
    frame = await run_batch("eval_targets:echo_json", [{"b": 1, "a": 2}], progress=False, store=store)
    assert frame.loc[0, "output"] == '{"a": 2, "b": 1}' and frame.loc[0, "input"] == {"b": 1, "a": 2}
    run = store.get_run(frame.loc[0, "run_id"])
    assert run is not None and run["kind"] == "function" and run["name"] == "echo_json"
    frame = await run_batch("eval_targets:capital_agent", ["Capital of Japan?"], progress=False, store=store)
    assert frame.loc[0, "output"] == "Tokyo"
    for bad, error in (
        ("eval_targets", ValueError),
        ("no_such_module_xyz:f", ImportError),
        ("eval_targets:missing", ImportError),
    ):
        with pytest.raises(error):
            await run_batch(bad, ["x"], progress=False, store=store)
    with pytest.raises(TypeError, match="A target is"):
        await run_batch(42, ["x"], progress=False, store=store)


async def test_every_case_is_a_run_with_its_trace(tmp_path: Any) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentnb import observability
    from agentnb.observability import configure_otel_providers

    store = RunStore(tmp_path / "runs.db")  # the span store writes here after the test, so it stays open
    exporter = InMemorySpanExporter()
    span_store = configure_otel_providers(processors=[SimpleSpanProcessor(exporter)], store=store)
    try:
        frame = await run_batch(capital_agent(), ["Capital of France?", "explode"], progress=False, store=store)
    finally:
        observability.OBSERVABILITY_SETTINGS.enable_instrumentation = False  # not the sticky opt-out
    assert span_store is not None and span_store.force_flush()
    assert frame["trace_id"].notna().all() and frame["trace_id"].is_unique
    spans = exporter.get_finished_spans()
    for _, row in frame.iterrows():
        trace = [s for s in spans if format(s.context.trace_id, "032x") == row["trace_id"]]
        names = {s.name for s in trace}
        assert "eval.case" in names and any(n.startswith("invoke_agent") for n in names)
        # The case's spans carry its run id, so the run store links the run and its trace.
        assert all(s.attributes.get("workflow.run_id") == row["run_id"] for s in trace)
        stored = store.list_spans(run_id=row["run_id"])
        assert {s["trace_id"] for s in stored} == {row["trace_id"]} and len(stored) == len(trace)
        run = store.get_run(row["run_id"])
        assert run is not None and run["metadata"]["trace_id"] == row["trace_id"]
        events = store.list_events(row["run_id"])
        assert [e["type"] for e in events] == ["input", "output"]
    case_span = next(s for s in spans if s.name == "eval.case" and s.attributes["eval.status"] == "error")
    assert case_span.status.status_code.name == "ERROR"


async def test_inputs_may_be_a_dataframe_or_series(store: RunStore) -> None:
    import pandas as pd

    agent = capital_agent()
    frame = await run_batch(agent, pd.Series(["Capital of Spain?"]), progress=False, store=store)
    assert frame.loc[0, "output"] == "Madrid"
    frame = await run_batch(
        agent, pd.DataFrame({"input": ["Capital of Peru?"], "case_id": ["peru"]}), progress=False, store=store
    )
    assert frame.loc[0, "case_id"] == "peru" and frame.loc[0, "output"] == "Lima"
    with pytest.raises(TypeError, match="list of inputs"):
        await run_batch(agent, "Capital of Peru?", progress=False, store=store)
    with pytest.raises(ValueError, match="concurrency"):
        LocalBackend(0)
    with pytest.raises(ValueError, match="backend"):
        await run_batch(agent, ["x"], backend="spark", progress=False, store=store)


async def test_progress_bar_in_a_terminal_shows_counts(store: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    await run_batch(capital_agent(), ["Capital of France?", "explode"], progress=True, store=store)
    err = capsys.readouterr().err
    assert "2/2" in err and "failed=1" in err


async def test_default_store_receives_the_runs() -> None:
    from agentnb.store import default_store

    frame = await run_batch(capital_agent(), ["Capital of Italy?"], progress=False)
    run = default_store().get_run(frame.loc[0, "run_id"])
    assert run is not None and run["name"] == "geo" and run["metadata"]["via"] == "evals"
    assert not math.isnan(frame.loc[0, "latency_ms"])
