"""Sequential orchestration: order, shared conversation, outputs, streaming, failures."""

from __future__ import annotations

import pytest

from agentnb import Agent, AgentResponse, AgentResponseUpdate, Message
from agentnb.exceptions import WorkflowRunError, WorkflowValidationError
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import (
    Executor,
    InMemoryCheckpointStorage,
    SequentialBuilder,
    Workflow,
    WorkflowContext,
    handler,
)
from tests.workflows.orchestrations.orch_scenarios import sequential, summary


async def test_agents_answer_in_order_each_seeing_the_conversation_so_far() -> None:
    result = await sequential().run("solar panels")
    (conversation,) = result.get_outputs()
    assert summary(conversation) == [
        ["user", None, "solar panels", ["text"]],
        ["assistant", "writer", "Draft about solar panels.", ["text"]],
        ["assistant", "reviewer", "Reviewed 2 messages; last was writer.", ["text"]],
        ["assistant", "editor", "Final: DRAFT ABOUT SOLAR PANELS.", ["text"]],
    ]
    steps = [r.text for r in result.get_intermediate_outputs()]
    assert steps == [m.text for m in conversation[1:]]
    assert all(isinstance(r, AgentResponse) for r in result.get_intermediate_outputs())


async def test_what_each_model_was_sent() -> None:
    first = ScriptedChatClient(["one"])
    second = ScriptedChatClient(["two"])
    workflow = SequentialBuilder(
        participants=[Agent(first, "Be brief.", name="a"), Agent(second, "Be kind.", name="b")]
    ).build()
    history = [Message("user", ["earlier question"]), Message("assistant", ["earlier answer"]), Message("user", ["q"])]
    (conversation,) = (await workflow.run(history)).get_outputs()
    assert [m.text for m in conversation] == ["earlier question", "earlier answer", "q", "one", "two"]
    assert [m.text for m in first.calls[0]] == ["Be brief.", "earlier question", "earlier answer", "q"]
    assert [m.text for m in second.calls[0]] == ["Be kind.", "earlier question", "earlier answer", "q", "one"]


async def test_intermediate_outputs_can_be_hidden_and_the_result_is_an_ordinary_workflow() -> None:
    storage = InMemoryCheckpointStorage()
    builder = SequentialBuilder(
        participants=[Agent(ScriptedChatClient(["x"]), name="solo")], intermediate_outputs=False
    ).with_checkpointing(storage)
    workflow = builder.build()
    assert isinstance(workflow, Workflow)
    assert list(workflow.executors) == ["sequential_start", "solo", "sequential_end"]
    result = await workflow.run(Message("user", ["go"]))
    assert result.get_intermediate_outputs() == []
    assert [m.text for m in result.get_outputs()[0]] == ["go", "x"]
    assert len(storage) >= 3 and result.checkpoint_id is not None


async def test_streaming_emits_each_agents_updates_and_the_same_output() -> None:
    events = [e async for e in sequential().run("wind", stream=True)]
    updates = [e for e in events if isinstance(e.data, AgentResponseUpdate)]
    assert {e.type for e in updates} == {"intermediate"}  # each participant's turn is progress
    assert updates[0].executor_id == "writer"
    assert {e.executor_id for e in updates} == {"writer", "reviewer", "editor"}
    assert "".join(e.data.text for e in updates if e.executor_id == "writer") == "Draft about wind."
    (output,) = [e.data for e in events if e.type == "output"]
    assert summary(output) == summary((await sequential().run("wind")).get_outputs()[0])


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
    with pytest.raises(TypeError, match="got a int"):
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


async def test_custom_executors_take_part_in_the_chain() -> None:
    writer = Agent(ScriptedChatClient(["Bread is good."]), name="writer")
    critic = Agent(FunctionChatClient(lambda m, o: f"Noted: {m[-1].text}"), name="critic")
    workflow = SequentialBuilder(participants=[writer, WordCount("counter"), critic]).build()
    (conversation,) = (await workflow.run("bake")).get_outputs()
    assert [(m.author_name, m.text) for m in conversation] == [
        (None, "bake"),
        ("writer", "Bread is good."),
        ("counter", "3 words so far"),
        ("critic", "Noted: 3 words so far"),
    ]
    writer = Agent(ScriptedChatClient(["Bread is good."]), name="writer")
    ending = SequentialBuilder(participants=[writer, WordCount("counter")]).build()
    assert (await ending.run("x")).get_outputs()[0][-1].text == "3 words so far"


def test_an_executor_that_cannot_take_the_conversation_is_refused_at_build() -> None:
    with pytest.raises(WorkflowValidationError, match="shout"):
        SequentialBuilder(participants=[Agent(ScriptedChatClient([]), name="a"), Shout("shout")]).build()


def test_unknown_options_are_named() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*'checkpoint'"):
        SequentialBuilder(participants=[Agent(ScriptedChatClient([]), name="a")], checkpoint=None)  # type: ignore[call-arg]
