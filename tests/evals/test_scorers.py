"""Every built-in scorer, custom scorers (sync, async, dicts, failures) and the judge's own tokens."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb.evals import CaseResult, EvalCase, Scorer, scorers
from agentnb.local import FunctionChatClient


def case(expected: Any = None, input: Any = "question") -> EvalCase:
    return EvalCase(case_id="c", input=input, expected=expected)


def result(output: Any = None, **fields: Any) -> CaseResult:
    return CaseResult(case_id="c", output=output, **fields)


async def score(scorer: Scorer, c: EvalCase, r: CaseResult) -> float:
    scored = await scorer.score(c, r)
    assert scored.error is None, scored.error
    (value,) = scored.values.values()
    return value


async def test_exact_match() -> None:
    s = scorers.exact_match()
    assert s.name == "exact_match"
    assert await score(s, case("Paris"), result(" Paris\n")) == 1.0
    assert await score(s, case("Paris"), result("paris")) == 0.0
    assert await score(scorers.exact_match(case_sensitive=False), case("Paris"), result("paris")) == 1.0
    assert await score(scorers.exact_match(strip=False), case("Paris"), result("Paris ")) == 0.0
    assert await score(s, case({"a": 1}), result({"a": 1})) == 1.0
    assert math.isnan(await score(s, case(None), result("anything")))  # abstains without expected


async def test_contains() -> None:
    assert await score(scorers.contains("paris"), case(), result("It is Paris.")) == 1.0
    assert await score(scorers.contains("paris", case_sensitive=True), case(), result("It is Paris.")) == 0.0
    assert await score(scorers.contains(["Paris", "France"]), case(), result("Paris, France")) == 1.0
    assert await score(scorers.contains(["Paris", "Spain"]), case(), result("Paris, France")) == 0.0
    assert await score(scorers.contains(), case("42"), result("The answer is 42.")) == 1.0
    assert math.isnan(await score(scorers.contains(), case(None), result("x")))
    assert await score(scorers.contains("x"), case(), result(None)) == 0.0


async def test_regex() -> None:
    assert await score(scorers.regex(r"\d{4}"), case(), result("In 1889.")) == 1.0
    assert await score(scorers.regex(r"\d{4}", full=True), case(), result("In 1889.")) == 0.0
    assert await score(scorers.regex(r"[A-Z]\w+", full=True), case(), result("Paris")) == 1.0
    import re

    assert await score(scorers.regex("paris", flags=re.IGNORECASE), case(), result("PARIS")) == 1.0


class City(BaseModel):
    name: str
    population: int


async def test_json_valid() -> None:
    plain = scorers.json_valid()
    assert await score(plain, case(), result('{"a": 1}')) == 1.0
    assert await score(plain, case(), result("not json")) == 0.0
    assert await score(plain, case(), result('```json\n{"a": 1}\n```')) == 1.0
    assert await score(plain, case(), result({"already": "parsed"})) == 1.0
    model = scorers.json_valid(City)
    assert await score(model, case(), result(json.dumps({"name": "Paris", "population": 2}))) == 1.0
    assert await score(model, case(), result(json.dumps({"name": "Paris"}))) == 0.0
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    checked = scorers.json_valid(schema)
    assert await score(checked, case(), result('{"n": 3}')) == 1.0
    assert await score(checked, case(), result('{"n": "3"}')) == 0.0
    with pytest.raises(TypeError, match="pydantic model class or a JSON Schema"):
        scorers.json_valid(42)


CALLS = [
    {"name": "search", "arguments": {"query": "paris", "limit": 3}},
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "search", "arguments": {"query": "lyon"}},
]


async def test_tool_called() -> None:
    assert await score(scorers.tool_called("get_weather"), case(), result(tool_calls=CALLS)) == 1.0
    assert await score(scorers.tool_called("get_weather", city="Paris"), case(), result(tool_calls=CALLS)) == 1.0
    assert await score(scorers.tool_called("get_weather", city="Lyon"), case(), result(tool_calls=CALLS)) == 0.0
    assert await score(scorers.tool_called("search", query="lyon"), case(), result(tool_calls=CALLS)) == 1.0
    assert await score(scorers.tool_called("search", limit=3.5), case(), result(tool_calls=CALLS)) == 0.0
    assert await score(scorers.tool_called("delete"), case(), result(tool_calls=CALLS)) == 0.0
    assert scorers.tool_called("search").name == "tool_called[search]"
    assert scorers.tool_called("search", name="searched").name == "searched"


async def test_trajectory_modes() -> None:
    r = result(tool_calls=CALLS)
    assert await score(scorers.trajectory(["search", "get_weather", "search"]), case(), r) == 1.0
    assert await score(scorers.trajectory(["search", "get_weather"]), case(), r) == 0.0
    assert await score(scorers.trajectory(["search", "search"], mode="in_order"), case(), r) == 1.0
    assert await score(scorers.trajectory(["get_weather", "search"], mode="in_order"), case(), r) == 1.0
    assert await score(scorers.trajectory(["search", "get_weather", "get_weather"], "in_order"), case(), r) == 0.0
    assert await score(scorers.trajectory(["get_weather", "search", "search"], "any_order"), case(), r) == 1.0
    assert await score(scorers.trajectory(["search", "search", "search"], "any_order"), case(), r) == 0.0
    assert await score(scorers.trajectory([], "exact"), case(), result(tool_calls=[])) == 1.0
    with pytest.raises(ValueError, match="trajectory mode"):
        scorers.trajectory(["a"], mode="sometimes")  # type: ignore[arg-type]


async def test_latency_under() -> None:
    s = scorers.latency_under(100)
    assert s.name == "latency_under_100ms"
    assert await score(s, case(), result(latency_ms=99.0)) == 1.0
    assert await score(s, case(), result(latency_ms=100.0)) == 0.0
    with pytest.raises(ValueError, match="positive"):
        scorers.latency_under(0)


async def test_llm_judge_structured_verdict_and_its_own_tokens() -> None:
    seen: list[str] = []

    def judge_model(messages: list[Any], options: dict[str, Any]) -> str:
        assert options["response_format"].__name__ == "Verdict"
        assert options["temperature"] == 0.0
        prompt = messages[-1].text
        seen.append(prompt)
        good = "Answer:\nParis" in prompt
        return json.dumps({"score": 1.0 if good else 0.2, "reason": "names the capital" if good else "wrong city"})

    judge = scorers.llm_judge(FunctionChatClient(judge_model), "The answer names the capital city.")
    good = await judge.score(case("Paris", input="Capital of France?"), result("Paris"))
    assert good.values == {"llm_judge": 1.0} and good.note == "names the capital" and good.error is None
    assert good.input_tokens and good.input_tokens > 0 and good.output_tokens and good.output_tokens > 0
    bad = await judge.score(case("Paris"), result("Lyon"))
    assert bad.values == {"llm_judge": 0.2} and bad.note == "wrong city"
    assert "Rubric:\nThe answer names the capital city." in seen[0]
    assert "Reference answer:\nParis" in seen[0] and "Task:\nCapital of France?" in seen[0]
    with pytest.raises(TypeError, match="get_response"):
        scorers.llm_judge(object(), "rubric")


async def test_llm_judge_out_of_range_verdict_is_a_scorer_error() -> None:
    judge = scorers.llm_judge(FunctionChatClient(lambda m, o: '{"score": 7, "reason": "?"}'), "rubric", name="judge")
    scored = await judge.score(case(), result("x"))
    assert math.isnan(scored.values["judge"])
    assert scored.error is not None


async def test_custom_scorers_sync_async_dict_and_failures() -> None:
    def short(c: EvalCase, r: CaseResult) -> bool:
        return len(r.output) < 5

    async def graded(c: EvalCase, r: CaseResult) -> float:
        return 0.25

    def parts(c: EvalCase, r: CaseResult) -> dict[str, float]:
        return {"fluency": 1, "accuracy": 0.5}

    def broken(c: EvalCase, r: CaseResult) -> float:
        raise RuntimeError("scorer bug")

    def wrong_type(c: EvalCase, r: CaseResult) -> str:
        return "good"

    from agentnb.evals.scorers import as_scorer

    assert (await as_scorer(short).score(case(), result("hi"))).values == {"short": 1.0}
    assert (await as_scorer(graded).score(case(), result("hi"))).values == {"graded": 0.25}
    assert (await as_scorer(parts).score(case(), result("hi"))).values == {"parts.fluency": 1.0, "parts.accuracy": 0.5}
    failed = await as_scorer(broken).score(case(), result("hi"))
    assert math.isnan(failed.values["broken"]) and failed.error == "RuntimeError: scorer bug"
    typed = await as_scorer(wrong_type).score(case(), result("hi"))
    assert typed.error is not None and "return a bool, a number" in typed.error
    with pytest.raises(ValueError, match="lambda scorer needs a name"):
        as_scorer(lambda c, r: True)
    assert Scorer(lambda c, r: True, name="always").name == "always"
    with pytest.raises(TypeError, match="callable"):
        as_scorer(3)
