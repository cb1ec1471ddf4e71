"""Sequential orchestration: order, shared conversation, outputs, streaming, failures."""

from __future__ import annotations

import pytest
from typing_extensions import Never

from agentnb import Agent, AgentResponse, AgentResponseUpdate, Message
from agentnb.exceptions import WorkflowRunError, WorkflowValidationError
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import (
    AgentExecutorResponse,
    Executor,
    InMemoryCheckpointStorage,
    SequentialBuilder,
    Workflow,
    WorkflowContext,
    handler,
    merge_streamed_outputs,
)
from tests.workflows.orchestrations.orch_scenarios import sequential, summary


async def test_agents_answer_in_order_and_the_output_is_the_last_reply() -> None:
    result = await sequential().run("solar panels")
    # As in the reference: the output is the last agent's AgentResponse, earlier turns are not published.
    (reply,) = result.get_outputs()
    assert isinstance(reply, AgentResponse)
    assert summary(reply.messages) == [["assistant", "editor", "Final: DRAFT ABOUT SOLAR PANELS.", ["text"]]]
    assert [e.executor_id for e in result.get_events("output")] == ["editor"]
    assert result.get_intermediate_outputs() == []
    # Each agent still saw the whole conversation so far: the editor quotes the writer's draft.


async def test_participant_turns_can_be_published_as_intermediate_outputs() -> None:
    result = await sequential(intermediate_outputs=True).run("solar panels")
    steps = result.get_intermediate_outputs()
    assert [r.messages[-1].author_name for r in steps] == ["writer", "reviewer"]
    assert [r.text for r in steps] == ["Draft about solar panels.", "Reviewed 2 messages; last was writer."]
    assert [r.text for r in result.get_outputs()] == ["Final: DRAFT ABOUT SOLAR PANELS."]


async def test_what_each_model_was_sent() -> None:
    first = ScriptedChatClient(["one"])
    second = ScriptedChatClient(["two"])
    workflow = SequentialBuilder(
        participants=[Agent(first, "Be brief.", name="a"), Agent(second, "Be kind.", name="b")]
    ).build()
    history = [Message("user", ["earlier question"]), Message("assistant", ["earlier answer"]), Message("user", ["q"])]
    (reply,) = (await workflow.run(history)).get_outputs()
    assert reply.text == "two"
    assert [m.text for m in first.calls[0]] == ["Be brief.", "earlier question", "earlier answer", "q"]
    assert [m.text for m in second.calls[0]] == ["Be kind.", "earlier question", "earlier answer", "q", "one"]


async def test_the_result_is_an_ordinary_checkpointed_workflow() -> None:
    storage = InMemoryCheckpointStorage()
    builder = SequentialBuilder(participants=[Agent(ScriptedChatClient(["x"]), name="solo")]).with_checkpointing(
        storage
    )
    workflow = builder.build()
    assert isinstance(workflow, Workflow)
    assert list(workflow.executors) == ["sequential_start", "solo"]
    result = await workflow.run(Message("user", ["go"]))
    assert result.get_intermediate_outputs() == []
    assert result.get_outputs()[0].text == "x"
    assert len(storage) >= 3 and result.checkpoint_id is not None


async def test_streaming_yields_the_last_agents_updates_as_the_output() -> None:
    events = [e async for e in sequential().run("wind", stream=True)]
    outputs = [e for e in events if e.type == "output"]
    # The reference's shape: the last agent's AgentResponseUpdates are the output events; no whole response.
    assert len(outputs) > 1 and all(isinstance(e.data, AgentResponseUpdate) for e in outputs)
    assert {e.executor_id for e in outputs} == {"editor"} and {e.data.author_name for e in outputs} == {"editor"}
    (merged,) = merge_streamed_outputs(e.data for e in outputs)
    assert merged.text == (await sequential().run("wind")).get_outputs()[0].text
    assert not [e for e in events if e.type == "intermediate"]
    # Selected as intermediate, the earlier agents stream too.
    events = [
        e
        async for e in sequential(intermediate_output_from="all_other", output_from=["editor"]).run("wind", stream=True)
    ]
    progress = [e for e in events if e.type == "intermediate"]
    assert progress[0].executor_id == "writer"
    assert {e.executor_id for e in progress} == {"writer", "reviewer"}
    assert "".join(e.data.text for e in progress if e.executor_id == "writer") == "Draft about wind."


async def test_a_failing_participant_fails_the_run_naming_it() -> None:
    def broken(messages: list[Message], options: dict) -> str:
        raise RuntimeError("model exploded")

    workflow = SequentialBuilder(
        participants=[Agent(ScriptedChatClient(["ok"]), name="a"), Agent(FunctionChatClient(broken), name="b")]
    ).build()
    with pytest.raises(WorkflowRunError, match=r"'b'.*model exploded"):
        await workflow.run("go")


async def test_input_of_the_wrong_type_is_refused() -> None:
    workflow = SequentialBuilder(participants=[Agent(ScriptedChatClient([]), name="a")]).build()
    with pytest.raises(TypeError, match="cannot handle input of type 'int'"):
        await workflow.run(42)


def test_builder_rejects_bad_participants() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        SequentialBuilder(participants=[Agent(ScriptedChatClient([]))])
    with pytest.raises(ValueError, match="unique"):
        SequentialBuilder(
            participants=[Agent(ScriptedChatClient([]), name="a"), Agent(ScriptedChatClient([]), name="a")]
        )
    with pytest.raises(ValueError, match="at least 1"):
        SequentialBuilder(participants=[])
    with pytest.raises(TypeError, match="must be an agent"):
        SequentialBuilder(participants=["writer"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="uses for its own executor"):
        SequentialBuilder(participants=[Agent(ScriptedChatClient([]), name="sequential_end")])


class WordCount(Executor):
    """A custom participant: appends a message computed in code."""

    @handler
    async def count(self, conversation: list[Message], ctx: WorkflowContext[list[Message]]) -> None:
        words = sum(len(m.text.split()) for m in conversation if m.role == "assistant")
        await ctx.send_message([*conversation, Message("assistant", [f"{words} words so far"], author_name=self.id)])


class Shout(Executor):
    @handler
    async def shout(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())


class Summarizer(Executor):
    """A last participant in the reference's style: takes the agent's response and yields the answer."""

    @handler
    async def summarize(self, last: AgentExecutorResponse, ctx: WorkflowContext[Never, AgentResponse]) -> None:
        users = sum(1 for m in last.full_conversation or [] if m.role == "user")
        await ctx.yield_output(AgentResponse(messages=[Message("assistant", [f"users:{users}"])]))


async def test_custom_executors_take_part_in_the_chain() -> None:
    writer = Agent(ScriptedChatClient(["Bread is good."]), name="writer")
    critic = Agent(FunctionChatClient(lambda m, o: f"Noted: {m[-1].text} ({len(m)} messages)"), name="critic")
    workflow = SequentialBuilder(participants=[writer, WordCount("counter"), critic]).build()
    (reply,) = (await workflow.run("bake")).get_outputs()
    assert [(m.author_name, m.text) for m in reply.messages] == [("critic", "Noted: 3 words so far (3 messages)")]
    # A custom last participant that sends the conversation on: its last message is the reply.
    writer = Agent(ScriptedChatClient(["Bread is good."]), name="writer")
    ending = SequentialBuilder(participants=[writer, WordCount("counter")]).build()
    (reply,) = (await ending.run("x")).get_outputs()
    assert isinstance(reply, AgentResponse) and reply.text == "3 words so far"
    # One that yields the answer itself, taking the agent's AgentExecutorResponse as in the reference.
    writer = Agent(ScriptedChatClient(["Bread is good."]), name="writer")
    summarized = SequentialBuilder(participants=[writer, Summarizer("summarizer")]).build()
    assert list(summarized.executors) == ["sequential_start", "writer", "summarizer"]
    assert [o.text for o in (await summarized.run("x")).get_outputs()] == ["users:1"]


def test_an_executor_that_cannot_take_the_conversation_is_refused_at_build() -> None:
    with pytest.raises(WorkflowValidationError, match="shout"):
        SequentialBuilder(participants=[Agent(ScriptedChatClient([]), name="a"), Shout("shout")]).build()


def test_unknown_options_are_named() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*'checkpoint'"):
        SequentialBuilder(participants=[Agent(ScriptedChatClient([]), name="a")], checkpoint=None)  # type: ignore[call-arg]
