"""Group chat: selection functions and orchestrator agents pick speakers; conditions and limits end it."""

from __future__ import annotations

import pytest

from agentnb import Agent, Message
from agentnb.exceptions import WorkflowRunError
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.orchestrations import GroupChatOrchestrator, TerminationCondition
from agentnb.workflows import (
    GroupChatBuilder,
    GroupChatDecision,
    GroupChatRequestSentEvent,
    GroupChatResponseReceivedEvent,
    GroupChatSelectionFunction,
    GroupChatState,
)
from tests.workflows.orchestrations.orch_scenarios import group_chat, group_chat_agents


async def test_selection_function_sees_the_state_and_the_round_limit_ends_the_chat() -> None:
    states: list[GroupChatState] = []

    def round_robin(state: GroupChatState) -> str:
        states.append(state)
        return list(state.participants)[state.current_round % 2]

    workflow = GroupChatBuilder(participants=group_chat_agents(), selection_func=round_robin, max_rounds=3).build()
    result = await workflow.run("a bakery")
    (conversation,) = result.get_outputs()
    assert [(m.author_name, m.text) for m in conversation] == [
        (None, "a bakery"),
        ("writer", "Slogan v1: Fresh every day."),
        ("critic", "Make it shorter."),
        ("writer", "Slogan v2: Fresh every day."),
    ]
    assert [s.current_round for s in states] == [0, 1, 2]
    assert [s.last_speaker for s in states] == [None, "writer", "critic"]
    assert states[0].participants == {"writer": "Writes slogans.", "critic": "Critiques."}
    assert [len(s.conversation) for s in states] == [1, 2, 3]
    assert [e.data["speaker"] for e in result.get_events("group_chat_speaker")] == ["writer", "critic", "writer"]
    assert result.get_events("group_chat_completed")[0].data == {"reason": "max_rounds", "rounds": 3}


async def test_termination_condition_and_async_selection() -> None:
    async def pick(state: GroupChatState) -> str:
        return "writer" if state.last_speaker != "writer" else "critic"

    def two_slogans(conversation: list[Message]) -> bool:
        return sum("Slogan" in m.text for m in conversation) >= 2

    condition: TerminationCondition = two_slogans  # the reference's name for the condition's type
    workflow = (
        GroupChatBuilder(participants=group_chat_agents(), selection_func=pick, max_rounds=10)
        .with_termination_condition(condition)
        .build()
    )
    # The executor at the centre goes by the reference's name too.
    assert isinstance(workflow.get_start_executor(), GroupChatOrchestrator)
    result = await workflow.run("a gym")
    (conversation,) = result.get_outputs()
    assert [m.author_name for m in conversation] == [None, "writer", "critic", "writer"]
    assert result.get_events("group_chat_completed")[0].data["reason"] == "termination_condition"


async def test_selection_function_returning_none_ends_the_chat() -> None:
    workflow = GroupChatBuilder(
        participants=group_chat_agents(),
        selection_func=lambda state: None if state.current_round else "critic",
    ).build()
    (conversation,) = (await workflow.run("x")).get_outputs()
    assert [m.author_name for m in conversation] == [None, "critic"]


async def test_orchestrator_agent_picks_speakers_with_structured_output_and_closes() -> None:
    result = await group_chat().run("a bakery")
    (conversation,) = result.get_outputs()
    assert [(m.author_name, m.text) for m in conversation] == [
        (None, "a bakery"),
        ("writer", "Slogan v1: Fresh every day."),
        ("critic", "Make it shorter."),
        ("writer", "Slogan v2: Fresh every day."),
        ("moderator", "The slogan is ready."),
    ]
    assert result.get_events("group_chat_completed")[0].data == {"reason": "manager", "rounds": 3}


async def test_orchestrator_agent_is_told_the_participants_and_round() -> None:
    client = ScriptedChatClient([GroupChatDecision(terminate=True)])
    workflow = GroupChatBuilder(
        participants=group_chat_agents(), orchestrator_agent=Agent(client, name="mod"), max_rounds=4
    ).build()
    (conversation,) = (await workflow.run("topic")).get_outputs()
    assert [m.text for m in conversation] == ["topic"]
    prompt = client.calls[0][-1].text
    assert "- writer: Writes slogans." in prompt and "- critic: Critiques." in prompt
    assert "Round 1 of at most 4" in prompt
    assert client.call_options[0]["response_format"] is GroupChatDecision


async def test_an_unknown_speaker_fails_clearly() -> None:
    workflow = GroupChatBuilder(participants=group_chat_agents(), selection_func=lambda s: "poet", max_rounds=2).build()
    with pytest.raises(WorkflowRunError, match=r"chose 'poet'.*participants: \['writer', 'critic'\]"):
        await workflow.run("x")
    moderator = Agent(FunctionChatClient(lambda m, o: GroupChatDecision(next_speaker="nobody")), name="mod")
    workflow = GroupChatBuilder(participants=group_chat_agents(), orchestrator_agent=moderator).build()
    with pytest.raises(WorkflowRunError, match="orchestrator agent 'mod' chose 'nobody'"):
        await workflow.run("x")


async def test_orchestrator_agent_that_does_not_decide_fails_clearly() -> None:
    moderator = Agent(ScriptedChatClient([Message("assistant", ["{}"])]), name="mod")
    workflow = GroupChatBuilder(participants=group_chat_agents(), orchestrator_agent=moderator).build()
    with pytest.raises(WorkflowRunError, match="neither ended the chat nor named a next speaker"):
        await workflow.run("x")
    assert workflow.state is not None and workflow.state.value == "failed"
    moderator = Agent(ScriptedChatClient(["Let the writer go."]), name="mod")
    workflow = GroupChatBuilder(participants=group_chat_agents(), orchestrator_agent=moderator).build()
    with pytest.raises(WorkflowRunError, match="GroupChatDecision"):
        await workflow.run("x")


def test_builder_validation() -> None:
    agents = group_chat_agents()
    with pytest.raises(ValueError, match="exactly one"):
        GroupChatBuilder(participants=agents)
    with pytest.raises(ValueError, match="exactly one"):
        GroupChatBuilder(
            participants=agents,
            selection_func=lambda s: None,
            orchestrator_agent=Agent(ScriptedChatClient([]), name="m"),
        )
    with pytest.raises(ValueError, match="cannot also be a participant"):
        GroupChatBuilder(participants=agents, orchestrator_agent=agents[0])
    with pytest.raises(ValueError, match="max_rounds"):
        GroupChatBuilder(participants=agents, selection_func=lambda s: None, max_rounds=0)
    with pytest.raises(TypeError, match="termination condition"):
        GroupChatBuilder(participants=agents, selection_func=lambda s: None).with_termination_condition(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True])
async def test_group_chat_events_carry_the_references_request_and_response_payloads(stream: bool) -> None:
    def round_robin(state: GroupChatState) -> str:
        return list(state.participants)[state.current_round % 2]

    selection: GroupChatSelectionFunction = round_robin
    workflow = GroupChatBuilder(participants=group_chat_agents(), selection_func=selection, max_rounds=3).build()
    if stream:
        events = [e async for e in workflow.run("a bakery", stream=True) if e.type == "group_chat"]
    else:
        events = (await workflow.run("a bakery")).get_events("group_chat")
    assert [(type(e.data).__name__, e.data.round_index, e.data.participant_name) for e in events] == [
        ("GroupChatRequestSentEvent", 0, "writer"),
        ("GroupChatResponseReceivedEvent", 0, "writer"),
        ("GroupChatRequestSentEvent", 1, "critic"),
        ("GroupChatResponseReceivedEvent", 1, "critic"),
        ("GroupChatRequestSentEvent", 2, "writer"),
        ("GroupChatResponseReceivedEvent", 2, "writer"),
    ]
    assert all(isinstance(e.data, GroupChatRequestSentEvent | GroupChatResponseReceivedEvent) for e in events)


def test_the_references_orchestration_helper_names() -> None:
    from agentnb import orchestrations

    assert orchestrations.MAGENTIC_MANAGER_NAME == orchestrations.StandardMagenticManager.name == "magentic_manager"
    kinds = (
        orchestrations.ORCH_MSG_KIND_USER_TASK,
        orchestrations.ORCH_MSG_KIND_TASK_LEDGER,
        orchestrations.ORCH_MSG_KIND_INSTRUCTION,
        orchestrations.ORCH_MSG_KIND_NOTICE,
    )
    assert kinds == ("user_task", "task_ledger", "instruction", "notice")
    done = orchestrations.create_completion_message(author_name="manager")
    assert (done.role, done.text, done.author_name) == ("assistant", "Conversation completed.", "manager")
    assert orchestrations.create_completion_message(text="Bye.", author_name="m").text == "Bye."
