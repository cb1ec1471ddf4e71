"""Compaction on an agent: per-run overrides, the provider, and what is sent versus what is kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentnb import Agent, AgentSession, Content, FileHistoryProvider, InMemoryHistoryProvider, Message, tool
from agentnb.compaction import (
    EXCLUDED_KEY,
    CompactionProvider,
    SlidingWindowStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    compaction_reports,
    session_compaction_log,
)
from agentnb.local import FunctionChatClient


class Recorder:
    """A model that answers "ok" and keeps what each call was sent."""

    def __init__(self) -> None:
        self.sent: list[list[Message]] = []

    def __call__(self, messages: list[Message], options: dict[str, Any]) -> str:
        self.sent.append(list(messages))
        return f"answer {len(self.sent)}"


def four_messages() -> list[Message]:
    return [
        Message("user", ["Collect the deployment requirements."]),
        Message("assistant", ["I will gather the constraints first."]),
        Message("user", ["Summarize the rollout risks."]),
        Message("assistant", ["The main risks are drift, downtime, and rollback gaps."]),
    ]


async def test_run_overrides_agent_which_overrides_client() -> None:
    model = Recorder()
    client = FunctionChatClient(model, compaction_strategy=TruncationStrategy(max_n=3, compact_to=2))
    await Agent(client).run(four_messages())
    assert len(model.sent[-1]) == 2
    agent = Agent(client, compaction_strategy=SlidingWindowStrategy(keep_last_groups=3))
    await agent.run(four_messages())
    assert len(model.sent[-1]) == 3
    await agent.run(four_messages(), compaction_strategy=SlidingWindowStrategy(keep_last_groups=1))
    # The newest user turn is always sent, whatever the strategy keeps.
    assert [m.text for m in model.sent[-1]] == [
        "Summarize the rollout risks.",
        "The main risks are drift, downtime, and rollback gaps.",
    ]


async def test_instructions_are_never_compacted_away() -> None:
    model = Recorder()
    agent = Agent(
        FunctionChatClient(model), "Stay on topic.", compaction_strategy=SlidingWindowStrategy(keep_last_groups=1)
    )
    session = agent.create_session()
    for i in range(4):
        await agent.run(f"question {i}", session=session)
    sent = model.sent[-1]
    assert sent[0].role == "system" and sent[0].text == "Stay on topic."
    assert sent[-1].text == "question 3"


async def test_in_run_compaction_changes_what_is_sent_not_what_is_kept() -> None:
    model = Recorder()
    agent = Agent(FunctionChatClient(model), compaction_strategy=SlidingWindowStrategy(keep_last_groups=2))
    session = agent.create_session()
    for i in range(5):
        response = await agent.run(f"question {i}", session=session)
    assert len(session.messages) == 10
    assert not any(m.additional_properties.get(EXCLUDED_KEY) for m in session.messages)
    assert len(model.sent[-1]) == 2
    report = compaction_reports(response)[-1]
    assert report.messages_sent == 2 and report.messages_total == 9
    assert {g["reason"] for g in report.excluded_groups} == {"sliding_window"}
    assert len(session_compaction_log(session)) == 5


async def test_a_reloaded_session_gives_the_same_model_input() -> None:
    model = Recorder()
    agent = Agent(FunctionChatClient(model), compaction_strategy=TruncationStrategy(max_n=4, compact_to=3))
    session = agent.create_session()
    for i in range(4):
        await agent.run(f"question {i}", session=session)
    restored = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
    await agent.run("again", session=session)
    await agent.run("again", session=restored)
    assert [m.to_dict() for m in model.sent[-2]] == [m.to_dict() for m in model.sent[-1]]
    assert len(model.sent[-1]) == 3


async def test_a_file_history_keeps_every_original_message(tmp_path: Path) -> None:
    model = Recorder()
    history = FileHistoryProvider(tmp_path)
    agent = Agent(
        FunctionChatClient(model),
        context_providers=[history],
        compaction_strategy=SlidingWindowStrategy(keep_last_groups=1),
    )
    session = agent.create_session()
    for i in range(4):
        await agent.run(f"question {i}", session=session)
    stored = await history.get_messages(session.session_id)
    assert [m.text for m in stored] == [t for i in range(4) for t in (f"question {i}", f"answer {i + 1}")]
    assert not any(m.additional_properties.get(EXCLUDED_KEY) for m in stored)
    assert [m.text for m in model.sent[-1]] == ["question 3"]


@tool(approval_mode="always_require")
def deploy(env: str) -> str:
    """Deploy to an environment."""
    return f"deployed to {env}"


async def test_a_pending_approval_survives_compaction() -> None:
    replies = iter([Content.from_function_call("c1", "deploy", arguments='{"env": "prod"}'), "Deployed."])

    def model(messages: list[Message], options: dict[str, Any]) -> Any:
        return next(replies)

    history = InMemoryHistoryProvider(skip_excluded=True)
    compaction = CompactionProvider(
        before_strategy=SlidingWindowStrategy(keep_last_groups=1), history_source_id=history.source_id
    )
    agent = Agent(FunctionChatClient(model), tools=[deploy], context_providers=[history, compaction])
    session = agent.create_session()
    first = await agent.run("Deploy to prod", session=session)
    request = first.user_input_requests[0]
    second = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
    assert second.text == "Deployed."
    assert any(
        c.type == "function_result" and c.result == "deployed to prod" for m in second.messages for c in m.contents
    )


async def test_provider_compacts_loaded_history_and_stored_history() -> None:
    weather = {"London": "cloudy, 12°C", "Paris": "sunny, 18°C", "Tokyo": "rainy, 22°C"}

    @tool
    def get_weather(city: str) -> str:
        """Get the weather."""
        return weather[city]

    def model(messages: list[Message], options: dict[str, Any]) -> Any:
        last = messages[-1]
        if last.role == "tool":
            return f"It is {last.contents[0].result}."
        city = last.text.split()[-1].rstrip("?")
        return Content.from_function_call(f"c_{city}", "get_weather", arguments=json.dumps({"city": city}))

    history = InMemoryHistoryProvider(skip_excluded=True)
    compaction = CompactionProvider(
        before_strategy=SlidingWindowStrategy(keep_last_groups=3),
        after_strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
        history_source_id=history.source_id,
    )
    agent = Agent(FunctionChatClient(model), tools=[get_weather], context_providers=[history, compaction])
    session = agent.create_session()
    for city in ("London", "Paris", "Tokyo"):
        await agent.run(f"Weather in {city}?", session=session)
    stored = session.state[history.source_id]["messages"]
    assert any(m.text == "[Tool results: get_weather: cloudy, 12°C]" for m in stored)
    assert sum(1 for m in stored if m.additional_properties.get(EXCLUDED_KEY)) >= 2
    response = await agent.run("Weather in London?", session=session)
    assert compaction_reports(response)[0].source == "provider"


async def test_the_harness_budgets_compact_each_request() -> None:
    from agentnb.harness import create_harness_agent

    agent = create_harness_agent(FunctionChatClient(Recorder()), max_context_window_tokens=3_000, max_output_tokens=500)
    session = agent.create_session()
    for i in range(8):
        response = await agent.run(f"question {i} " + "word " * 300, session=session)
    report = compaction_reports(response)[0]
    assert report.budget == 2_500 and report.groups_excluded > 0
    assert report.tokens_sent <= 2_500 < report.tokens_total
    assert response.text == "answer 8"
