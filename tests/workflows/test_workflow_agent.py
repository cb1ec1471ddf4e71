"""``workflow.as_agent()``: construction checks, sessions, checkpoints and merging several agents' streams."""

from __future__ import annotations

import pytest
from typing_extensions import Never

from agentnb import (
    AgentResponse,
    AgentResponseUpdate,
    AgentSession,
    Content,
    InMemoryHistoryProvider,
    Message,
)
from agentnb.workflows import (
    InMemoryCheckpointStorage,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    executor,
)


@executor(id="echo")
async def echo(messages: list[Message], ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(f"echo: {messages[-1].text}")


def test_name_and_description_default_to_the_workflows() -> None:
    workflow = WorkflowBuilder(start_executor=echo, name="echoes", description="Repeats the input.").build()

    agent = workflow.as_agent()

    assert (agent.name, agent.description) == ("echoes", "Repeats the input.")


def test_a_start_executor_that_takes_no_agent_input_is_refused_when_made() -> None:
    @executor(id="numbers")
    async def numbers(value: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(value)

    workflow = WorkflowBuilder(start_executor=numbers).build()

    with pytest.raises(ValueError, match=r"cannot handle list\[Message\], Message or str: 'numbers' .* accepts int"):
        workflow.as_agent()


async def test_a_session_adds_one_in_memory_history_provider_that_keeps_the_turns() -> None:
    agent = WorkflowBuilder(start_executor=echo).build().as_agent()
    session = AgentSession()

    await agent.run("first", session=session)
    second = await agent.run("second", session=session)

    assert [type(p) for p in agent.context_providers] == [InMemoryHistoryProvider]
    assert second.text == "echo: second"
    stored = InMemoryHistoryProvider().source_id
    assert [m.text for m in session.state[stored]["messages"]] == ["first", "echo: first", "second", "echo: second"]


async def test_checkpoint_storage_given_to_run_records_the_workflows_checkpoints() -> None:
    workflow = WorkflowBuilder(start_executor=echo, name="echoes").build()
    storage = InMemoryCheckpointStorage()

    response = await workflow.as_agent().run("hi", checkpoint_storage=storage)

    assert response.text == "echo: hi"
    assert await storage.list_checkpoints(workflow_name="echoes")


def test_merge_updates_keeps_each_response_together_and_tool_results_after_their_calls() -> None:
    call = Content.from_function_call(call_id="c1", name="weather", arguments="{}")
    updates = [
        AgentResponseUpdate(contents=[Content.from_text("A1")], role="assistant", response_id="a", message_id="1"),
        AgentResponseUpdate(contents=[Content.from_text("B1")], role="assistant", response_id="b", message_id="2"),
        AgentResponseUpdate(contents=[call], role="assistant", response_id="a", message_id="3"),
        AgentResponseUpdate(contents=[Content.from_text("loose")], role="assistant", message_id="4"),
        AgentResponseUpdate(
            contents=[Content.from_function_result(call_id="c1", result="sunny")], role="tool", message_id="5"
        ),
        AgentResponseUpdate(contents=[Content.from_text("A2")], role="assistant", response_id="a", message_id="6"),
    ]

    merged = WorkflowAgent.merge_updates(updates, "merged")

    kinds = [(m.role, m.contents[0].type, m.text) for m in merged.messages]
    assert kinds == [
        ("assistant", "text", "A1"),
        ("assistant", "function_call", ""),
        ("tool", "function_result", ""),
        ("assistant", "text", "A2"),
        ("assistant", "text", "B1"),
        ("assistant", "text", "loose"),
    ]
    assert merged.response_id == "merged"


def test_merge_updates_orders_a_responses_messages_by_time_and_sums_usage() -> None:
    def update(text: str, at: float, tokens: int) -> AgentResponseUpdate:
        usage = Content.from_usage(
            {"input_token_count": tokens, "output_token_count": 1, "total_token_count": tokens + 1}
        )
        return AgentResponseUpdate(
            contents=[Content.from_text(text), usage],
            role="assistant",
            response_id="r",
            message_id=text,
            created_at=at,
        )

    merged = WorkflowAgent.merge_updates([update("later", 20.0, 3), update("earlier", 10.0, 5)], "m")

    assert [m.text for m in merged.messages] == ["earlier", "later"]
    assert merged.usage_details == {"input_token_count": 8, "output_token_count": 2, "total_token_count": 10}
    assert merged.created_at == 20.0


async def test_progress_is_forwarded_as_it_is_and_bookkeeping_events_stay_inside() -> None:
    @executor(id="draft")
    async def draft(messages: list[Message], ctx: WorkflowContext[str, AgentResponse]) -> None:
        note = Message("assistant", ["a draft"], additional_properties={"tracking_id": "t-1"})
        await ctx.yield_output(AgentResponse(messages=[note]))
        await ctx.add_event(WorkflowEvent("group_chat", {"internal": "bookkeeping"}))
        await ctx.send_message("go on")

    @executor(id="final")
    async def final(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output("the answer")

    workflow = (
        WorkflowBuilder(start_executor=draft, output_from=[final], intermediate_output_from=[draft])
        .add_edge(draft, final)
        .build()
    )

    response = await workflow.as_agent().run("hi")

    assert [(m.author_name, m.text) for m in response.messages] == [("draft", "a draft"), ("final", "the answer")]
    assert response.messages[0].additional_properties == {"tracking_id": "t-1"}
    streamed = [u.text async for u in workflow.as_agent().run("hi", stream=True)]
    assert streamed == ["a draft", "the answer"]


async def test_a_functional_workflow_as_agent_is_given_only_the_kwargs_passed() -> None:
    from agentnb.workflows import get_run_context, workflow

    seen: list[dict[str, object]] = []

    @workflow
    async def note(text: str) -> str:
        seen.append(get_run_context().run_kwargs)
        return text

    agent = note.build().as_agent()
    await agent.run("a")
    await agent.run("b", client_kwargs={"seed": 1})

    assert seen == [{}, {"client_kwargs": {"seed": 1}}]
