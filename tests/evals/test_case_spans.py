"""evaluate() gives trace scorers the case's stored spans itself: flushed from the span writer, read in bulk."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, Content, Message, tool
from agentnb.evals import CaseResult, EvalCase, evaluate, load_experiment, run_batch, scorers
from agentnb.evals._spans import memory_spans
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def search_model(messages: list[Message], options: dict[str, Any]) -> Any:
    """Search once for the city asked about, then answer: two model calls."""
    if not any(c.type == "function_result" for m in messages for c in m.contents):
        city = next(m.text for m in messages if m.role == "user").split()[-1]
        return Content.from_function_call("s1", "search", json.dumps({"query": city}))
    return "Found it."


DATASET = [{"case_id": c, "input": f"Look up {c}"} for c in ("Paris", "Rome", "Oslo")]


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[RunStore]:
    """Instrumentation on, spans written to a SQLite run store by a writer that would wait an hour."""
    from agentnb import observability
    from agentnb.observability import configure_otel_providers

    store = RunStore(tmp_path / "runs.db")  # the span writer may write here after the test, so it stays open
    span_store = configure_otel_providers(store=store)
    assert span_store is not None
    span_store.flush_interval = 3600.0  # only a flush writes the spans before the scorers look
    try:
        yield store
    finally:
        observability.OBSERVABILITY_SETTINGS.enable_instrumentation = False  # not the sticky opt-out


class TraceSeen:
    """A scorer that keeps the trace each case showed it."""

    name = "seen"

    def __init__(self) -> None:
        self.traces: dict[str, Any] = {}

    def __call__(self, case: EvalCase, result: CaseResult) -> float:
        self.traces[case.case_id] = result.trace
        return 1.0


async def test_trace_scorers_read_the_stored_spans_of_each_case(traced: RunStore) -> None:
    agent = Agent(FunctionChatClient(search_model), name="finder", tools=[search])
    seen = TraceSeen()
    checks = [seen, scorers.tool_path([("search", {"query": "Rome"})], name="rome"), scorers.max_model_calls(2)]
    experiment = await evaluate(agent, DATASET, checks, name="spans", store=traced, progress=False)

    frame = experiment.results.set_index("case_id")
    assert frame["rome"].tolist() == [0.0, 1.0, 0.0]
    assert frame["max_model_calls_2"].tolist() == [1.0, 1.0, 1.0]
    for case_id, trace in seen.traces.items():
        assert trace.source == "spans", case_id
        model = "function:search_model"
        assert [(s.kind, s.name) for s in trace.steps] == [("model", model), ("tool", "search"), ("model", model)]
        # What only spans know: each call's own duration and tokens.
        assert all(s.latency_ms is not None and s.latency_ms >= 0 for s in trace.steps)
        assert sum(s.input_tokens or 0 for s in trace.model_steps) == trace.input_tokens
        # Tool arguments come from the kept conversation when spans hold no sensitive data.
        assert trace.tool_steps[0].arguments == {"query": case_id}
        assert trace.tool_steps[0].result == f"results for {case_id}"
        row = frame.loc[case_id]
        assert trace.input_tokens == row["input_tokens"] and trace.output_tokens == row["output_tokens"]


async def test_rescoring_stored_cases_reads_all_their_spans_at_once(
    traced: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = Agent(FunctionChatClient(search_model), name="finder", tools=[search])
    await evaluate(agent, DATASET, [], name="later", store=traced, progress=False)
    reads: list[list[str]] = []
    read_runs = traced.read_runs

    def counting(run_ids: Any, **kwargs: Any) -> Any:
        reads.append(list(run_ids))
        return read_runs(run_ids, **kwargs)

    monkeypatch.setattr(traced, "read_runs", counting)
    seen = TraceSeen()
    experiment = await evaluate(agent, DATASET, [seen, scorers.max_model_calls(1)], name="later", store=traced)

    assert experiment.results["max_model_calls_1"].tolist() == [0.0, 0.0, 0.0]
    assert [t.source for t in seen.traces.values()] == ["spans"] * 3
    assert len(reads) == 1 and sorted(reads[0]) == sorted(experiment.results["run_id"])


async def test_a_case_without_model_spans_keeps_the_trace_of_its_conversation(traced: RunStore) -> None:
    async def answer(question: str) -> str:
        return question.upper()

    seen = TraceSeen()
    await evaluate(answer, DATASET[:1], [seen], name="plain", store=traced, progress=False)
    assert seen.traces["Paris"].source == "messages"  # the case span alone is no step


@pytest.fixture
def traced_in_memory() -> Iterator[Any]:
    """Instrumentation on with a memory-only span store: no run store behind the tracing."""
    from agentnb import observability
    from agentnb.observability import configure_otel_providers

    span_store = configure_otel_providers(store=None)
    assert span_store is not None and not span_store.persistent
    try:
        yield span_store
    finally:
        observability.OBSERVABILITY_SETTINGS.enable_instrumentation = False  # not the sticky opt-out


async def test_trace_scorers_read_the_spans_kept_in_memory_when_no_store_holds_them(
    traced_in_memory: Any, store: RunStore
) -> None:
    agent = Agent(FunctionChatClient(search_model), name="finder", tools=[search])
    seen = TraceSeen()
    checks = [seen, scorers.tool_path(["search"]), scorers.max_model_calls(1)]
    experiment = await evaluate(agent, DATASET, checks, name="memory", store=store, progress=False)

    assert store.list_spans() == []  # the evaluation's store never got a span: they are only in memory
    frame = experiment.results.set_index("case_id")
    assert frame["tool_path"].tolist() == [1.0, 1.0, 1.0]
    assert frame["max_model_calls_1"].tolist() == [0.0, 0.0, 0.0]
    for case_id, trace in seen.traces.items():
        assert trace.source == "spans", case_id
        model = "function:search_model"
        assert [(s.kind, s.name) for s in trace.steps] == [("model", model), ("tool", "search"), ("model", model)]
        assert all(s.latency_ms is not None for s in trace.steps)  # per step: what only spans know
        assert trace.tool_steps[0].arguments == {"query": case_id}  # each case got its own spans


async def test_memory_spans_are_found_among_many_other_runs(traced_in_memory: Any, store: RunStore) -> None:
    agent = Agent(FunctionChatClient(search_model), name="finder", tools=[search])
    inputs = [f"Look up City{i}" for i in range(12)]
    frame = await run_batch(agent, inputs, store=store, progress=False, concurrency=4)
    first, last = frame["run_id"].iloc[0], frame["run_id"].iloc[-1]
    found = memory_spans(traced_in_memory, [first, last])
    assert sorted(found) == sorted([first, last])
    for run_id, rows in found.items():
        assert {r["run_id"] for r in rows} == {run_id}
        assert [r["operation"] for r in rows if r["operation"] in ("chat", "execute_tool")] == [
            "chat",
            "execute_tool",
            "chat",
        ]
        assert [r["start_ns"] for r in rows] == sorted(r["start_ns"] for r in rows)
    assert memory_spans(traced_in_memory, ["no-such-run"]) == {}

    def mutated_while_read() -> Iterator[Any]:
        yield traced_in_memory.spans()[-1]
        raise RuntimeError("deque mutated during iteration")  # a span ended during the scan

    traced_in_memory.newest_spans = mutated_while_read
    assert {k: len(v) for k, v in memory_spans(traced_in_memory, [first, last]).items()} == {
        k: len(v) for k, v in found.items()
    }


def research_workflow() -> Any:
    """A researcher agent that searches (two model calls), then a writer agent that answers from its notes."""
    from agentnb.workflows import WorkflowBuilder

    def write(messages: list[Message], options: dict[str, Any]) -> str:
        return f"Report: {messages[-1].text}"

    researcher = Agent(FunctionChatClient(search_model), name="researcher", tools=[search])
    writer = Agent(FunctionChatClient(write), name="writer")
    return WorkflowBuilder(start_executor=researcher).add_edge(researcher, writer).build()


async def test_evaluate_workflow_gives_trace_scorers_the_workflow_runs_spans(traced: RunStore) -> None:
    from agentnb.evals import Scorer, evaluate_workflow, tool_called_check

    seen = TraceSeen()
    results = await evaluate_workflow(
        workflow=research_workflow(),
        queries=["Look up Paris", "Look up Oslo"],
        evaluators=[
            tool_called_check("search"),
            Scorer(seen, name="seen"),
            scorers.tool_path([("search", {"query": "Paris"})], name="paris_path"),
            scorers.max_model_calls(3),
            scorers.max_model_calls(2),
        ],
        store=traced,
    )
    local, native = results
    # Agent Framework's check reads each agent's conversation: only the researcher called the tool.
    assert local.sub_results["researcher"].all_passed and not local.sub_results["writer"].all_passed
    # agentnb's scorers read each workflow run's spans: both agents' model calls and the researcher's tool call.
    assert native.provider == "agentnb" and [i.item_id for i in native.items] == ["0", "1"]
    verdicts = {item.item_id: {s.name: s.score for s in item.scores} for item in native.items}
    assert verdicts["0"] == {"seen": 1.0, "paris_path": 1.0, "max_model_calls_3": 1.0, "max_model_calls_2": 0.0}
    assert verdicts["1"]["paris_path"] == 0.0
    assert len(seen.traces) == 2
    for case_id, trace in seen.traces.items():
        assert trace.source == "spans", case_id
        assert [s.kind for s in trace.steps] == ["model", "tool", "model", "model"]
        assert trace.tool_steps[0].name == "search" and trace.tool_steps[0].result is not None
        assert all(s.latency_ms is not None for s in trace.steps)
    # Both kinds of verdict are kept with the experiment's cases.
    experiment = load_experiment("Workflow Eval: " + research_workflow().name, store=traced)
    assert experiment.results["paris_path"].tolist() == [1.0, 0.0]
    back = experiment.to_eval_results()
    assert [r.provider for r in back] == ["Local", "agentnb"]
    assert [[s.name for s in i.scores] for i in back[1].items] == [list(verdicts["0"])] * 2


async def test_an_untraced_workflow_case_reads_its_steps_from_its_agents_turns(store: RunStore) -> None:
    seen = TraceSeen()
    experiment = await evaluate(
        research_workflow(), [{"input": "Look up Rome"}], [seen, scorers.tool_path([("search", {"query": "Rome"})])],
        name="untraced", store=store, progress=False,
    )  # fmt: skip
    assert experiment.results["tool_path"].tolist() == [1.0]
    [trace] = seen.traces.values()
    assert trace.source == "messages"
    assert [s.kind for s in trace.steps] == ["model", "tool", "model", "model"]  # researcher twice, then writer
