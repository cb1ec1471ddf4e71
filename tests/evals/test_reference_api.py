"""Agent Framework's evaluation API on agentnb's engine: items, checks, evaluate_agent / evaluate_workflow,
EvalResults gates, and the conversion to and from experiments."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from agentnb import Agent, Content, Message, tool
from agentnb.evals import (
    AgentEvalConverter,
    CheckResult,
    ConversationSplit,
    EvalItem,
    EvalItemResult,
    EvalNotPassedError,
    EvalResults,
    EvalScoreResult,
    Evaluator,
    ExpectedToolCall,
    Experiment,
    LocalEvaluator,
    RubricScore,
    evaluate,
    evaluate_agent,
    evaluate_workflow,
    evaluator,
    keyword_check,
    load_experiment,
    scorers,
    tool_call_args_match,
    tool_called_check,
    tool_calls_present,
)
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore
from agentnb.workflows import WorkflowBuilder


@tool
def get_weather(location: str) -> str:
    """The weather somewhere."""
    return f"sunny in {location}"


class WeatherModel:
    """Calls get_weather for the city in the question (Paris when it names none), then reports the result."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    def __call__(self, messages: list[Message], options: dict[str, Any]) -> Any:
        last = messages[-1]
        if last.role == "user":
            self.questions.append(last.text)
            if "explode" in last.text:
                raise RuntimeError("model down")
            city = next((c for c in ("NYC", "Oslo") if c in last.text), "Paris")
            return Content.from_function_call(f"c{len(self.questions)}", "get_weather", json.dumps({"location": city}))
        return f"The weather is {last.contents[0].result}."


def weather_agent(model: WeatherModel | None = None) -> Agent:
    return Agent(FunctionChatClient(model or WeatherModel()), name="weather", tools=[get_weather])


def conversation(*pairs: tuple[str, Any]) -> list[Message]:
    return [Message(role, [text] if isinstance(text, (str, Content)) else text) for role, text in pairs]


# --------------------------------------------------------------------------- items and splits


def test_item_query_and_response_follow_the_split() -> None:
    talk = conversation(
        ("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello"), ("user", "Weather?"), ("assistant", "Sunny")
    )
    item = EvalItem(talk)
    assert (item.query, item.response) == ("Hi Weather?", "Sunny")  # the query side holds every user message
    assert item.split_messages(ConversationSplit.FULL)[1][0].text == "Hello"
    item.split_strategy = ConversationSplit.FULL
    assert (item.query, item.response) == ("Hi", "Hello Sunny")
    asked, answered = ConversationSplit.LAST_TURN(conversation(("assistant", "alone")))
    assert asked == [] and [m.text for m in answered] == ["alone"]
    turns = EvalItem.per_turn_items(talk)
    assert [(t.query, t.response) for t in turns] == [("Hi", "Hello"), ("Hi Weather?", "Sunny")]
    assert len(turns[0].conversation) == 3  # the system message and the first exchange, nothing after


def test_converter_turns_calls_results_and_images_into_evaluator_messages() -> None:
    call = Content.from_function_call("c1", "get_weather", '{"location": "NYC"}')
    broken = Content.from_function_call("c2", "lookup", "{not json")
    messages = [
        Message("user", [Content.from_text("Look"), Content.from_data(b"\x89PNG", "image/png")]),
        Message("assistant", [call, broken]),
        Message(
            "tool", [Content.from_function_result("c1", '{"sky": "clear"}'), Content.from_function_result("c2", "x")]
        ),
    ]
    out = AgentEvalConverter.convert_messages(messages)
    assert out[0]["content"][0] == {"type": "text", "text": "Look"}
    assert out[0]["content"][1]["type"] == "input_image"
    assert out[0]["content"][1]["image_url"].startswith("data:image/png;base64,")
    assert out[1]["content"][0] == {
        "type": "tool_call", "tool_call_id": "c1", "name": "get_weather", "arguments": {"location": "NYC"},
    }  # fmt: skip
    assert out[1]["content"][1]["arguments"] == {"_raw_arguments": "[unparseable]"}  # never leaks raw text
    assert out[2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": [{"type": "tool_result", "tool_result": {"sky": "clear"}}],
    }
    assert out[3]["tool_call_id"] == "c2" and len(out) == 4
    tools = AgentEvalConverter.extract_tools(weather_agent())
    assert tools[0]["name"] == "get_weather" and "location" in json.dumps(tools[0]["parameters"])


# --------------------------------------------------------------------------- checks


async def test_builtin_checks_read_the_conversation() -> None:
    talk = conversation(
        ("user", "Weather in NYC?"),
        ("assistant", Content.from_function_call("c1", "get_weather", '{"location": "NYC", "unit": "C"}')),
        ("tool", Content.from_function_result("c1", "sunny")),
        ("assistant", "The Weather is sunny."),
    )
    item = EvalItem(talk, expected_tool_calls=[ExpectedToolCall("get_weather", {"location": "NYC"})])
    assert keyword_check("weather", "sunny")(item) == CheckResult(True, "All keywords found", "keyword_check")
    assert not keyword_check("weather", case_sensitive=True)(item).passed
    assert tool_called_check("get_weather")(item).passed
    missing = tool_called_check("get_weather", "book")(item)
    assert not missing.passed and "['book']" in missing.reason
    assert tool_called_check("get_weather", "book", mode="any")(item).passed
    assert tool_calls_present(item).passed
    assert tool_call_args_match(item).passed
    item.expected_tool_calls = [ExpectedToolCall("get_weather", {"location": "LA"}), ExpectedToolCall("book")]
    verdict = tool_call_args_match(item)
    assert not verdict.passed and "0/2" in verdict.reason and "book: not called" in verdict.reason
    assert not tool_calls_present(item).passed
    item.expected_tool_calls = None
    assert tool_calls_present(item).passed  # nothing expected: nothing to miss


async def test_evaluator_decorator_passes_fields_by_name_and_coerces_returns() -> None:
    item = EvalItem(
        conversation(("user", "Q"), ("assistant", "A long enough answer")), expected_output="answer", context="doc"
    )

    @evaluator
    def mentions(response: str, expected_output: str, context: str | None) -> bool:
        return expected_output in response and context == "doc"

    @evaluator(name="graded")
    async def graded(query: str) -> dict[str, Any]:
        return {"score": 0.4, "reason": f"asked {query}"}

    overridden = evaluator(lambda response: {"score": 0.1, "passed": True}, name="lenient")
    assert (await mentions(item)).passed
    result = await graded(item)
    assert (result.passed, result.reason, result.check_name) == (False, "asked Q", "graded")
    assert (await overridden(item)).passed
    assert (await evaluator(lambda: 0.7, name="n")(item)).reason == "score=0.700"
    with pytest.raises(TypeError, match="unknown required parameter"):
        evaluator(lambda answer: True)
    with pytest.raises(TypeError, match="unsupported type str"):
        await evaluator(lambda: "yes", name="bad")(item)


async def test_local_evaluator_counts_per_check_and_fails_items_without_checks() -> None:
    items = [
        EvalItem(conversation(("user", "weather?"), ("assistant", "The weather is fine."))),
        EvalItem(conversation(("user", "cats?"), ("assistant", "Cats purr."))),
    ]
    results = await LocalEvaluator(
        keyword_check("weather"), evaluator(lambda response: len(response) > 3, name="long")
    ).evaluate(items)
    assert (results.passed, results.failed, results.total) == (1, 1, 2)
    assert results.per_evaluator == {
        "keyword_check": {"passed": 1, "failed": 1, "errored": 0}, "long": {"passed": 2, "failed": 0, "errored": 0},
    }  # fmt: skip
    assert [i.status for i in results.items] == ["pass", "fail"]
    assert results.items[1].scores[0] == EvalScoreResult(
        "keyword_check", 0.0, False, {"reason": "Missing keywords: ['weather']"}
    )
    assert "keyword_check: Missing keywords" in (results.error or "")
    empty = await LocalEvaluator().evaluate(items[:1])
    assert empty.items[0].status == "fail" and not empty.all_passed
    assert isinstance(LocalEvaluator(), Evaluator)


# --------------------------------------------------------------------------- results as a gate


def _results(statuses: Sequence[str], *, scores: Sequence[float] = ()) -> EvalResults:
    items = [
        EvalItemResult(
            str(i),
            s,
            scores=[EvalScoreResult("judge", scores[i] if scores else 1.0)],
            error_code="Boom" if s == "error" else None,
        )
        for i, s in enumerate(statuses)
    ]
    counts = {
        k: sum(1 for s in statuses if s == v) for k, v in (("passed", "pass"), ("failed", "fail"), ("errored", "error"))
    }
    return EvalResults(provider="p", run_id="r1", result_counts=counts, items=items)


def test_raise_for_status_names_failing_and_errored_items() -> None:
    _results(["pass", "pass"]).raise_for_status()
    with pytest.raises(EvalNotPassedError) as raised:
        _results(["pass", "fail", "error"]).raise_for_status()
    message = str(raised.value)
    assert (
        "1 passed, 1 failed. 1 errored." in message
        and "Errored items: 2: Boom" in message
        and "Failed items: 1" in message
    )
    assert raised.value.failed_items == ["1:fail", "2:error"]
    assert not EvalResults(provider="p", result_counts={"passed": 0, "failed": 0}).all_passed  # nothing evaluated
    parent = _results(["pass"])
    parent.sub_results = {"planner": _results(["fail"])}
    with pytest.raises(EvalNotPassedError, match="Failed: planner"):
        parent.raise_for_status()
    with pytest.raises(EvalNotPassedError, match="custom"):
        parent.raise_for_status("custom")


def test_score_and_dimension_assertions() -> None:
    results = _results(["pass", "pass", "pass"], scores=[0.9, 0.5, 0.95])
    results.assert_score_at_least(0.5)
    with pytest.raises(EvalNotPassedError, match=r"1 score\(s\) below threshold 0.8: 1/judge=0.500") as raised:
        results.assert_score_at_least(0.8)
    assert raised.value.failed_items == ["1"]
    results.assert_score_at_least(0.99, evaluator="other")
    results.items[0].scores[0].dimensions = [
        RubricScore("tone", 2, True, 1, "curt"),
        RubricScore("facts", None, False, 1, ""),
    ]
    results.items[1].scores[0].dimensions = [RubricScore("tone", 4, True, 1, "warm")]
    with pytest.raises(EvalNotPassedError, match="for 'tone' below 3: 0/judge/tone=2"):
        results.assert_dimension_score_at_least("tone", 3)
    results.assert_dimension_score_at_least("facts", 5)  # never applicable: skipped
    with pytest.raises(EvalNotPassedError, match="'facts' not applicable on 3 item"):
        results.assert_dimension_score_at_least("facts", 5, require_applicable=True)
    results.assert_no_failed_items()
    with pytest.raises(EvalNotPassedError, match=r"1 item\(s\) failed or errored: 0:fail"):
        _results(["fail", "pass"]).assert_no_failed_items()


# --------------------------------------------------------------------------- evaluate_agent on the engine


async def test_evaluate_agent_runs_through_the_engine_and_stores_an_experiment(store: RunStore) -> None:
    model = WeatherModel()
    results = await evaluate_agent(
        agent=weather_agent(model),
        queries=["Weather in NYC?", "Weather in Oslo?", "explode"],
        expected_output=["sunny in NYC", "rain", "x"],
        expected_tool_calls=[
            [ExpectedToolCall("get_weather", {"location": "NYC"})],
            [ExpectedToolCall("get_weather", {"location": "Bergen"})],
            [],
        ],
        evaluators=[
            keyword_check("weather"),
            tool_call_args_match,
            evaluator(lambda response, expected_output: expected_output in response, name="expected"),
        ],
        store=store,
    )
    [local] = results
    assert (local.provider, local.run_id, local.experiment) == ("Local", "Eval: weather", "Eval: weather")
    assert [i.status for i in local.items] == ["pass", "fail", "error"]
    assert local.result_counts == {"passed": 1, "failed": 1, "errored": 1}
    first, second, third = local.items
    assert first.input_text == "Weather in NYC?" and first.output_text == "The weather is sunny in NYC."
    assert first.token_usage is not None and first.token_usage["total_tokens"] > 0
    assert [s.passed for s in second.scores] == [True, False, False]
    assert third.error_code == "error" and "model down" in (third.error_message or "")
    with pytest.raises(EvalNotPassedError) as raised:
        local.raise_for_status()
    assert raised.value.failed_items == ["1:fail", "2:error"]
    # Every query was an ordinary run in the store, and the evaluation is an experiment with the checks' scores.
    runs = store.list_runs(name="weather")
    assert len(runs) == 3 and {r["metadata"]["experiment"] for r in runs} == {"Eval: weather"}
    experiment = load_experiment("Eval: weather", store=store)
    frame = experiment.results
    assert list(frame["Local.tool_call_args_match"]) == [1.0, 0.0, 0.0]  # a failed run scores 0, as with scorers
    assert experiment.summary().loc["Local.keyword_check", "mean"] == pytest.approx(2 / 3)
    # ... and reads back as the same results.
    [back] = experiment.to_eval_results()
    assert [(i.item_id, i.status, [s.score for s in i.scores]) for i in back.items] == [
        (i.item_id, i.status, [s.score for s in i.scores]) for i in local.items
    ]
    assert back.per_evaluator == local.per_evaluator and back.result_counts == local.result_counts


async def test_evaluate_agent_resumes_and_repeats_without_extra_model_calls(store: RunStore) -> None:
    model = WeatherModel()
    agent = weather_agent(model)
    first = await evaluate_agent(
        agent=agent,
        queries=["Weather in NYC?"],
        evaluators=keyword_check("weather"),
        eval_name="w",
        num_repetitions=3,
        store=store,
    )
    assert [i.item_id for i in first[0].items] == ["0.0", "0.1", "0.2"] and len(model.questions) == 3
    again = await evaluate_agent(
        agent=agent,
        queries=["Weather in NYC?"],
        evaluators=keyword_check("sunny"),
        eval_name="w",
        num_repetitions=3,
        store=store,
        resume=True,
    )
    assert len(model.questions) == 3  # the stored answers were judged again; the model was not called
    assert again[0].all_passed
    fresh = await evaluate_agent(
        agent=agent, queries=["Weather in NYC?"], evaluators=keyword_check("sunny"), eval_name="w", store=store
    )
    assert len(model.questions) == 4 and len(fresh[0].items) == 1


async def test_evaluate_agent_judges_given_responses_and_checks_its_arguments(store: RunStore) -> None:
    agent = weather_agent()
    response = await agent.run("Weather in Oslo?")
    [results] = await evaluate_agent(
        agent=agent,
        queries="Weather in Oslo?",
        responses=response,
        evaluators=[tool_called_check("get_weather")],
        store=store,
    )
    assert results.all_passed and results.items[0].output_text == "The weather is sunny in Oslo."
    with pytest.raises(ValueError, match="alongside 'responses'"):
        await evaluate_agent(responses=response, evaluators=keyword_check("x"), store=store)
    with pytest.raises(ValueError, match="Provide 'agent'"):
        await evaluate_agent(queries=["q"], evaluators=keyword_check("x"), store=store)
    with pytest.raises(ValueError, match="2 queries but 1 expected_output"):
        await evaluate_agent(
            agent=agent, queries=["a", "b"], expected_output="x", evaluators=keyword_check("x"), store=store
        )
    with pytest.raises(ValueError, match="num_repetitions must be >= 1"):
        await evaluate_agent(agent=agent, queries=["a"], evaluators=keyword_check("x"), num_repetitions=0, store=store)
    with pytest.raises(TypeError, match="Expected an Evaluator or callable"):
        await evaluate_agent(agent=agent, queries=["a"], evaluators=[42], store=store)


class StrictJudge:
    """A batch evaluator (as a service would be): one verdict per item, scored 1-5 with a rubric."""

    name = "judge"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def evaluate(self, items: Sequence[EvalItem], *, eval_name: str) -> EvalResults:
        self.batches.append([i.query for i in items])
        out = []
        for n, item in enumerate(items):
            score = 5 if "NYC" in item.response else 2
            dims = [RubricScore("grounded", score, True, 1, "mentions the city" if score == 5 else "generic")]
            out.append(
                EvalItemResult(
                    str(n),
                    "pass" if score >= 3 else "fail",
                    [EvalScoreResult("quality", score, score >= 3, dimensions=dims)],
                )
            )
        passed = sum(i.is_passed for i in out)
        return EvalResults(
            provider=self.name,
            run_id=eval_name,
            report_url="http://127.0.0.1/report",
            result_counts={"passed": passed, "failed": len(out) - passed},
            items=out,
        )


async def test_any_evaluator_object_runs_beside_local_checks_and_round_trips(store: RunStore) -> None:
    judge = StrictJudge()
    checks = [keyword_check("weather"), judge, keyword_check("sunny")]
    results = await evaluate_agent(
        agent=weather_agent(), queries=["Weather in NYC?", "Weather?"], evaluators=checks, store=store
    )
    assert [r.provider for r in results] == ["Local", "judge", "Local#2"]
    assert judge.batches == [["Weather in NYC?", "Weather?"]]
    assert [i.status for i in results[1].items] == ["pass", "fail"]
    with pytest.raises(EvalNotPassedError, match="grounded"):
        results[1].assert_dimension_score_at_least("grounded", 3)
    experiment = load_experiment("Eval: weather", store=store)
    assert set(experiment.score_columns) == {"Local.keyword_check", "judge.quality", "Local#2.keyword_check"}
    back = experiment.to_eval_results()
    assert [r.provider for r in back] == ["Local", "judge", "Local#2"]
    assert back[1].report_url == "http://127.0.0.1/report"
    assert back[1].items[0].scores[0].dimensions == [RubricScore("grounded", 5, True, 1, "mentions the city")]
    # EvalResults -> Experiment -> EvalResults keeps every item and score.
    again = Experiment.from_eval_results(results, name="copy", store=store, save=True)
    assert load_experiment("copy", store=store).results["judge.quality"].tolist() == [5.0, 2.0]
    assert [[s.score for s in i.scores] for i in again.to_eval_results()[1].items] == [[5.0], [2.0]]


async def test_a_native_experiment_converts_to_eval_results(store: RunStore) -> None:
    dataset = [
        {"input": "Weather in NYC?", "expected": "NYC"},
        {"input": "explode"},
        {"input": "Weather?", "expected": "NYC"},
    ]
    experiment = await evaluate(
        weather_agent(), dataset, [scorers.contains()], name="native", store=store, progress=False
    )
    [results] = experiment.to_eval_results()
    assert results.provider == "agentnb" and [i.status for i in results.items] == ["pass", "error", "fail"]
    assert results.items[1].error_code == "error"
    with pytest.raises(EvalNotPassedError) as raised:
        results.raise_for_status()
    assert raised.value.failed_items == ["1:error", "2:fail"]
    assert "passed" in results._repr_html_() or "not passed" in results._repr_html_()


# --------------------------------------------------------------------------- workflows


def _trip_workflow() -> Any:
    def plan(messages: list[Message], options: dict[str, Any]) -> str:
        return "Plan: Louvre, then a trip on the Seine."

    def book(messages: list[Message], options: dict[str, Any]) -> str:
        return "Booked: tickets for the plan." if "Louvre" in messages[-1].text else "Nothing to book."

    planner = Agent(FunctionChatClient(plan), name="planner", instructions="Plan.")
    booker = Agent(FunctionChatClient(book), name="booker", instructions="Book.")
    return WorkflowBuilder(start_executor=planner).add_edge(planner, booker).build()


async def test_evaluate_workflow_breaks_results_down_per_agent(store: RunStore) -> None:
    expected = evaluator(lambda response, expected_output: expected_output in response, name="expected")
    results = await evaluate_workflow(
        workflow=_trip_workflow(),
        queries=["Trip to Paris", "Trip to Rome"],
        expected_output=["Booked", "Booked"],
        evaluators=[keyword_check("plan"), expected],
        store=store,
    )
    [local] = results
    assert sorted(local.sub_results) == ["booker", "planner"]
    assert local.all_passed and local.passed == 2
    planner = local.sub_results["planner"]
    assert [i.input_text for i in planner.items] == ["Trip to Paris", "Trip to Rome"]
    assert planner.items[0].output_text == "Plan: Louvre, then a trip on the Seine."
    booker = local.sub_results["booker"].items[0]  # asked the user's question, answered from the plan it was sent
    assert (booker.input_text, booker.output_text) == ("Trip to Paris", "Booked: tickets for the plan.")
    # The workflow runs are the experiment's cases; the per-agent verdicts come back from the store.
    [back] = load_experiment("Workflow Eval: " + _trip_workflow().name, store=store).to_eval_results()
    assert sorted(back.sub_results) == ["booker", "planner"]
    assert [i.status for i in back.sub_results["planner"].items] == ["pass", "pass"]


async def test_evaluate_workflow_judges_an_earlier_run_and_can_skip_the_overall_item(store: RunStore) -> None:
    workflow = _trip_workflow()
    run = await workflow.run("Trip to Paris")
    [only_agents] = await evaluate_workflow(
        workflow=workflow, workflow_result=run, evaluators=keyword_check("booked"), include_overall=False, store=store
    )
    assert only_agents.eval_id == "aggregate" and only_agents.items == []
    assert (only_agents.sub_results["booker"].passed, only_agents.sub_results["planner"].failed) == (1, 1)
    assert not only_agents.all_passed
    [overall] = await evaluate_workflow(
        workflow=workflow, workflow_result=run, evaluators=keyword_check("booked"), include_per_agent=False, store=store
    )
    assert overall.items[0].input_text == "Trip to Paris" and overall.all_passed and overall.sub_results == {}
    with pytest.raises(ValueError, match="'workflow_result' or 'queries'"):
        await evaluate_workflow(workflow=workflow, evaluators=keyword_check("x"), store=store)
