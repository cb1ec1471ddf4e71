"""compare names, per scorer, the cases that got worse, with the change of answer and of tool path."""

from __future__ import annotations

import json
from typing import Any

from agentnb import Agent, Content, Message, tool
from agentnb.evals import compare, evaluate, scorers
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"{query}: 21 degrees"


@tool
def guess(query: str) -> str:
    """Guess without looking."""
    return "probably warm"


def weather_model(tool_name: str) -> Any:
    def model(messages: list[Message], options: dict[str, Any]) -> Any:
        results = [c for m in messages for c in m.contents if c.type == "function_result"]
        if not results:
            city = next(m.text for m in messages if m.role == "user").split()[-1]
            return Content.from_function_call("c1", tool_name, json.dumps({"query": city}))
        return f"It is {results[-1].result}.\nHave a nice day."

    return model


DATASET = [{"case_id": c.lower(), "input": f"Weather in {c}", "expected": "21 degrees"} for c in ("Oslo", "Rome")]


async def test_compare_names_worse_cases_per_scorer_with_answer_and_tool_diffs(store: RunStore) -> None:
    checks = [scorers.contains(), scorers.tool_path(["search"], name="searched")]
    for name, tool_name in (("careful", "search"), ("hasty", "guess")):
        agent = Agent(FunctionChatClient(weather_model(tool_name)), name="weather", tools=[search, guess])
        await evaluate(agent, DATASET, checks, name=name, store=store, progress=False)

    diff = compare("careful", "hasty", store=store)
    assert diff.attrs["worse"] == {"contains": ["oslo", "rome"], "searched": ["oslo", "rome"]}
    row = diff.set_index("case_id").loc["rome"]
    assert row["change"] == "regression" and row["worse"] == ["contains", "searched"]
    assert (row["tools_a"], row["tools_b"]) == (["search"], ["guess"])
    # Only the changed line is marked; the line both answers share is context.
    assert [line for line in row["answer_diff"].splitlines() if line[:1] in "+- "] == [
        "--- baseline", "+++ candidate", "-It is Rome: 21 degrees.", "+It is probably warm.", " Have a nice day.",
    ]  # fmt: skip

    same = compare("careful", "careful", store=store)
    assert same.attrs["worse"] == {} and set(same["answer_diff"]) == {""} and set(same["change"]) == {"same"}
