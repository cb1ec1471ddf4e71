"""Scorers that read how an answer was reached: the case's trace (tool path, model calls, tokens, cost), and a
rubric judge whose per-dimension verdicts come back as RubricScore."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from agentnb import Agent, Content, Message, tool
from agentnb.evals import CaseResult, CaseTrace, EvalCase, RubricScore, evaluate, scorers
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool
def book(item: str) -> str:
    """Book something."""
    return f"booked {item}"


def travel_model(messages: list[Message], options: dict[str, Any]) -> Any:
    """Search, then book (when asked to), then answer: two or three model calls."""
    asked = next(m.text for m in messages if m.role == "user")
    done = [c.name for m in messages for c in m.contents if c.type == "function_call"]
    city = asked.split()[-1].rstrip("?")
    if "search" not in done:
        return Content.from_function_call("s1", "search", json.dumps({"query": city}))
    if "book" in asked.lower() and "book" not in done:
        return Content.from_function_call("b1", "book", json.dumps({"item": f"hotel in {city}"}))
    return f"Done for {city}."


DATASET = [{"case_id": "look", "input": "Look up Paris"}, {"case_id": "book", "input": "Book a trip to Rome"}]


async def test_trace_scorers_judge_the_path_calls_and_tokens(store: RunStore) -> None:
    agent = Agent(FunctionChatClient(travel_model), name="travel", tools=[search, book])
    checks = [
        scorers.tool_path(["search"], name="search_only"),
        scorers.tool_path([("search", {"query": "Rome"}), "book"], name="search_then_book"),
        scorers.tool_path(["book"], "in_order", name="booked"),
        scorers.tool_path([("book", {"item": "hotel in Rome"}), "search"], "any_order", name="both_any_order"),
        scorers.max_model_calls(2),
        scorers.tokens_under(30),
        scorers.cost_under(0.0001, {"m": (1.0, 2.0)}),
    ]
    experiment = await evaluate(agent, DATASET, checks, name="trace", store=store, progress=False)
    frame = experiment.results.set_index("case_id")
    assert frame.loc["look", ["search_only", "search_then_book", "booked", "both_any_order"]].tolist() == [1, 0, 0, 0]
    assert frame.loc["book", ["search_only", "search_then_book", "booked", "both_any_order"]].tolist() == [0, 1, 1, 1]
    assert frame["max_model_calls_2"].tolist() == [1.0, 0.0]  # the booking took three model calls
    tokens = (frame["input_tokens"] + frame["output_tokens"]).tolist()
    assert (
        frame["tokens_under_30"].tolist() == [float(t < 30) for t in tokens] and len(set(frame["tokens_under_30"])) == 2
    )
    costs = [(i * 1.0 + o * 2.0) / 1e6 for i, o in zip(frame["input_tokens"], frame["output_tokens"], strict=True)]
    assert frame["cost_under_0.0001"].tolist() == [float(c < 0.0001) for c in costs]


async def test_the_trace_reads_the_same_from_a_live_and_a_stored_result(store: RunStore) -> None:
    agent = Agent(FunctionChatClient(travel_model), name="travel", tools=[search, book])
    experiment = await evaluate(agent, DATASET[1:], [], name="stored", store=store, progress=False)
    stored = CaseResult.from_record(experiment.rows[0]["data"]["result"])
    trace = stored.trace
    assert trace.source == "messages"
    assert [(s.kind, s.name) for s in trace.steps] == [
        ("model", None), ("tool", "search"), ("model", None), ("tool", "book"), ("model", None),
    ]  # fmt: skip
    assert trace.tool_steps[1].arguments == {"item": "hotel in Rome"}
    assert trace.tool_steps[1].result == "booked hotel in Rome"
    assert (trace.model_calls, trace.tool_path) == (3, ["search", "book"])
    assert trace.total_tokens == stored.input_tokens + stored.output_tokens  # type: ignore[operator]
    assert trace.cost({"a": (1.0, 1.0), "b": (2.0, 2.0)}) is None  # two models, none named: no price to use


def test_a_trace_from_spans_counts_each_model_call_and_prices_it_by_model() -> None:
    def span(op: str, start: int, **extra: Any) -> dict[str, Any]:
        return {"operation": op, "start_ns": start, "end_ns": start + 2_000_000, "status_code": "OK", **extra}

    spans = [
        span("invoke_agent", 0),
        span("chat", 10, model="small", input_tokens=100, output_tokens=10),
        span(
            "execute_tool", 20, tool_name="search",
            attributes={"gen_ai.tool.call.arguments": '{"query": "Oslo"}', "gen_ai.tool.call.result": "cold"},
        ),
        span("chat", 30, model="large", input_tokens=200, output_tokens=20),
    ]  # fmt: skip
    result = CaseResult(case_id="x", spans=spans, input_tokens=1, output_tokens=1)
    trace = result.trace
    assert trace.source == "spans" and trace.model_calls == 2 and trace.tool_path == ["search"]
    assert (trace.input_tokens, trace.output_tokens) == (300, 30)  # the spans' own counts win
    assert trace.tool_steps[0].arguments == {"query": "Oslo"} and trace.tool_steps[0].latency_ms == 2.0
    assert trace.cost({"small": (1.0, 1.0), "large": (10.0, 10.0)}) == pytest.approx((110 + 2200) / 1e6)
    assert trace.cost({"small": (1.0, 1.0)}) is None  # "large" has no price
    assert CaseTrace.from_messages([]).steps == []


async def test_cost_under_prices_each_model_call_of_a_span_trace() -> None:
    def chat(start: int, model: str, tokens: int) -> dict[str, Any]:
        return {"operation": "chat", "start_ns": start, "end_ns": start + 1, "model": model, "input_tokens": tokens}

    case = EvalCase("x", "q")
    cheap = CaseResult(case_id="x", spans=[chat(0, "small", 1000), chat(5, "small-2025-01-01", 1000)])
    mixed = CaseResult(case_id="y", spans=[chat(0, "small", 1000), chat(5, "large", 1000)])
    unpriced = CaseResult(case_id="z", spans=[chat(0, "small", 1000), chat(5, "other", 1000)])
    budget = scorers.cost_under(0.005, {"small": (1.0, 0.0), "large": (10.0, 0.0)})
    verdicts = [(await budget.score(case, r)).values["cost_under_0.005"] for r in (cheap, mixed, unpriced, cheap)]
    assert verdicts[:2] == [1.0, 0.0]  # 0.002 vs 0.011: the dated name takes its base model's price
    assert math.isnan(verdicts[2])  # a model without a price: the scorer abstains
    assert verdicts[3] == 1.0  # the prices it looked up once still apply


def test_span_tool_steps_take_their_data_from_the_call_with_the_same_id() -> None:
    def tool(start: int, name: str, call_id: str) -> dict[str, Any]:
        attributes = {"gen_ai.tool.call.id": call_id}
        return {"operation": "execute_tool", "start_ns": start, "tool_name": name, "attributes": attributes}

    # The spans ran b then a; the conversation lists a then b (parallel calls): ids pair them, not places.
    spans = [tool(0, "lookup", "b"), tool(1, "lookup", "a")]
    messages = [
        Message("assistant", [Content.from_function_call("a", "lookup", '{"k": 1}')]).to_dict(),
        Message("assistant", [Content.from_function_call("b", "lookup", '{"k": 2}')]).to_dict(),
        Message("tool", [Content.from_function_result("a", "one"), Content.from_function_result("b", "two")]).to_dict(),
    ]
    trace = CaseResult(case_id="x", spans=spans, messages=messages).trace
    assert [(s.call_id, s.arguments, s.result) for s in trace.tool_steps] == [
        ("b", {"k": 2}, "two"),
        ("a", {"k": 1}, "one"),
    ]


def judge_model(messages: list[Message], options: dict[str, Any]) -> str:
    """Grades 'grounded' by whether the answer used the search result, and 'brief' always well."""
    prompt = messages[-1].text
    grounded = 5 if "Tool calls:\nsearch" in prompt and "Done for Paris" in prompt else 2
    return json.dumps(
        {
            "dimensions": [
                {"id": "grounded", "applicable": True, "score": grounded, "reason": "cites the search"},
                {"id": "brief", "applicable": True, "score": 5, "reason": "short"},
                {"id": "polite", "applicable": False, "score": None, "reason": "no greeting asked"},
            ]
        }
    )


async def test_rubric_judge_scores_dimensions_and_they_come_back_as_rubric_scores(store: RunStore) -> None:
    agent = Agent(FunctionChatClient(travel_model), name="travel", tools=[search, book])
    judge = scorers.rubric_judge(
        FunctionChatClient(judge_model),
        {"grounded": ("uses the search results", 2), "brief": "short", "polite": "greets"},
    )
    experiment = await evaluate(agent, DATASET[:1], [judge], name="rubric", store=store, progress=False)
    row = experiment.results.iloc[0]
    assert (row["rubric.grounded"], row["rubric.brief"]) == (1.0, 1.0)
    assert row["rubric"] == 1.0  # (2 * 1.0 + 1 * 1.0) / 3; the non-applicable dimension is left out
    [results] = experiment.to_eval_results()
    overall = next(s for s in results.items[0].scores if s.name == "rubric")
    assert overall.dimensions is not None
    assert overall.dimensions[0] == RubricScore("grounded", 5, True, 2, "cites the search")
    assert overall.dimensions[2] == RubricScore("polite", None, False, 1, "no greeting asked")
    results.assert_dimension_score_at_least("grounded", 4)
    with pytest.raises(ValueError, match="at least one dimension"):
        scorers.rubric_judge(FunctionChatClient(judge_model), {})
