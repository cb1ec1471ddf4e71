"""Concurrent orchestration: fan-out in parallel, default and custom aggregators."""

from __future__ import annotations

import asyncio

import pytest
from typing_extensions import Never

from agentnb import Agent, AgentResponse, AgentResponseUpdate, Message
from agentnb.local import FunctionChatClient
from agentnb.workflows import AgentExecutorResponse, ConcurrentBuilder, Executor, WorkflowContext, handler
from tests.workflows.orchestrations.orch_scenarios import concurrent, concurrent_agents, summary


async def test_default_aggregator_returns_one_response_with_every_answer_in_participant_order() -> None:
    result = await concurrent().run("a new phone")
    # As in the reference: one AgentResponse, one assistant message per agent, the prompt not repeated.
    (response,) = result.get_outputs()
    assert isinstance(response, AgentResponse)
    assert summary(response.messages) == [
        ["assistant", "researcher", "Research on a new phone: 3 sources.", ["text"]],
        ["assistant", "marketer", "Marketing angle for a new phone.", ["text"]],
        ["assistant", "legal", "Legal risk for a new phone: low.", ["text"]],
    ]
    assert result.get_intermediate_outputs() == []  # participants are not published unless selected
    started = [e for e in result if e.type == "superstep_started"]
    assert sorted(started[1].data) == ["legal", "marketer", "researcher"]  # one superstep for all three


async def test_participants_really_run_at_the_same_time() -> None:
    arrived = 0
    all_in = asyncio.Event()

    async def model(messages: list[Message], options: dict) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            all_in.set()
        # Each model waits for the other two: this only finishes if all three run concurrently.
        await asyncio.wait_for(all_in.wait(), timeout=5)
        return f"done {arrived}"

    agents = [Agent(FunctionChatClient(model), name=n) for n in ("a", "b", "c")]
    (response,) = (await ConcurrentBuilder(participants=agents).build().run("go")).get_outputs()
    assert [m.author_name for m in response.messages] == ["a", "b", "c"]


async def test_custom_aggregators_sync_async_and_with_context() -> None:
    def join(results: list[AgentExecutorResponse]) -> str:
        return " | ".join(f"{r.executor_id}: {r.agent_response.text}" for r in results)

    workflow = ConcurrentBuilder(participants=concurrent_agents()).with_aggregator(join).build()
    assert (await workflow.run("x")).get_outputs() == [
        "researcher: Research on x: 3 sources. | marketer: Marketing angle for x. | legal: Legal risk for x: low."
    ]

    async def count(results: list[AgentExecutorResponse]) -> dict[str, int]:
        await asyncio.sleep(0)
        return {r.executor_id: len(r.full_conversation or []) for r in results}

    workflow = ConcurrentBuilder(participants=concurrent_agents()).with_aggregator(count).build()
    assert (await workflow.run("x")).get_outputs() == [{"researcher": 2, "marketer": 2, "legal": 2}]

    async def each(results: list[AgentExecutorResponse], ctx: WorkflowContext) -> None:
        for r in results:
            await ctx.yield_output(r.agent_response.text)

    workflow = ConcurrentBuilder(participants=concurrent_agents()[:2]).with_aggregator(each).build()
    assert (await workflow.run("x")).get_outputs() == ["Research on x: 3 sources.", "Marketing angle for x."]


async def test_aggregator_returning_none_yields_nothing() -> None:
    seen: list[int] = []
    workflow = (
        ConcurrentBuilder(participants=concurrent_agents()).with_aggregator(lambda rs: seen.append(len(rs))).build()
    )
    result = await workflow.run("x")
    assert result.get_outputs() == [] and seen == [3]


async def test_output_from_selects_participants_alongside_the_aggregator_and_an_executor_aggregates() -> None:
    agents = concurrent_agents()
    workflow = ConcurrentBuilder(participants=agents, output_from=[agents[0]]).build()
    result = await workflow.run("x")
    assert [e.executor_id for e in result.get_events("output")] == ["researcher", "concurrent_aggregator"]
    selected = ConcurrentBuilder(participants=concurrent_agents(), intermediate_output_from="all").build()
    result = await selected.run("x")
    assert [r.text for r in result.get_intermediate_outputs()] == [
        "Research on x: 3 sources.",
        "Marketing angle for x.",
        "Legal risk for x: low.",
    ]
    assert len(result.get_outputs()) == 1  # the aggregator's

    class Joiner(Executor):
        @handler
        async def join(self, results: list[AgentExecutorResponse], ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(" | ".join(r.executor_id for r in results))

    workflow = ConcurrentBuilder(participants=concurrent_agents()).with_aggregator(Joiner("joiner")).build()
    assert (await workflow.run("x")).get_outputs() == ["researcher | marketer | legal"]


async def test_streaming_publishes_only_the_aggregated_response() -> None:
    events = [e async for e in concurrent().run("x", stream=True)]
    (output,) = [e for e in events if e.type == "output"]
    assert isinstance(output.data, AgentResponse) and output.executor_id == "concurrent_aggregator"
    assert not [e for e in events if isinstance(e.data, AgentResponseUpdate)]  # the agents' updates are hidden


def test_with_aggregator_needs_a_function() -> None:
    with pytest.raises(TypeError, match="aggregator must be a function"):
        ConcurrentBuilder(participants=concurrent_agents()).with_aggregator("join")  # type: ignore[arg-type]


class Tally(Executor):
    """A custom participant computing its answer in code."""

    @handler
    async def tally(self, conversation: list[Message], ctx: WorkflowContext[Message]) -> None:
        await ctx.send_message(Message("assistant", [f"{len(conversation[-1].text)} characters"], author_name=self.id))


async def test_custom_executors_run_alongside_agents() -> None:
    agents = concurrent_agents()[:1]
    (response,) = (await ConcurrentBuilder(participants=[*agents, Tally("tally")]).build().run("a")).get_outputs()
    assert [(m.author_name, m.text) for m in response.messages] == [
        ("researcher", "Research on a: 3 sources."),
        ("tally", "1 characters"),
    ]
    seen: list[list[str]] = []
    workflow = (
        ConcurrentBuilder(participants=[*concurrent_agents()[:1], Tally("tally")])
        .with_aggregator(lambda results: seen.append([type(r).__name__ for r in results]))
        .build()
    )
    await workflow.run("abc")
    assert seen == [["AgentExecutorResponse", "Message"]]


def test_group_chat_participants_must_be_agents() -> None:
    from agentnb.workflows import GroupChatBuilder

    with pytest.raises(TypeError, match="must be an agent"):
        GroupChatBuilder(participants=[Tally("tally")], selection_func=lambda s: None)
