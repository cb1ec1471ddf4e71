"""HandoffAgentExecutor: the handoff builder's participants, and handoff graphs wired by hand from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, AgentResponse, AgentResponseUpdate, Message
from agentnb.local import FunctionChatClient
from agentnb.workflows import (
    AgentExecutor,
    FileCheckpointStorage,
    HandoffAgentExecutor,
    HandoffBuilder,
    HandoffConfiguration,
    HandoffSentEvent,
    HandoffUserInputRequest,
    ParticipantReviewRequest,
    Workflow,
    WorkflowBuilder,
    WorkflowRunState,
)
from tests.workflows.orchestrations.orch_scenarios import DEPLOYS, handoff, handoff_agents, ops_agent


def mesh(
    *, storage: FileCheckpointStorage | None = None, **options: dict[str, Any]
) -> tuple[Workflow, dict[str, HandoffAgentExecutor]]:
    """The customer-service agents wired by hand: triage -> billing/tech, billing -> tech, every pair connected.

    ``options`` gives an agent's extra constructor arguments by name.
    """
    triage, billing, tech = handoff_agents()
    executors = {
        "triage": HandoffAgentExecutor(
            triage,
            [HandoffConfiguration(target=billing), HandoffConfiguration(target="tech", description="Broken devices.")],
            is_start_agent=True,
            **options.get("triage", {}),
        ),
        "billing": HandoffAgentExecutor(
            billing,
            [HandoffConfiguration(target=tech)],
            **options.get("billing", {}),
        ),
        "tech": HandoffAgentExecutor(tech, [], **options.get("tech", {})),
    }
    builder = WorkflowBuilder(start_executor=executors["triage"], checkpoint_storage=storage)
    for source in executors.values():
        for target in executors.values():
            if source is not target:
                builder.add_edge(source, target)
    return builder.build(), executors


def _texts(messages: list[Message]) -> list[tuple[str, str | None, str]]:
    return [(m.role, m.author_name, m.text) for m in messages if m.text]


# -- inside HandoffBuilder -----------------------------------------------------------------------------------
def test_the_builder_runs_each_participant_in_a_handoff_agent_executor() -> None:
    workflow = handoff()
    participants = {k: v for k, v in workflow.executors.items() if k != "handoff_coordinator"}
    assert sorted(participants) == ["billing", "tech", "triage"]
    handoff_executors = {k: e for k, e in participants.items() if isinstance(e, HandoffAgentExecutor)}
    assert handoff_executors == participants
    assert all(isinstance(e, AgentExecutor) and e.coordinated for e in handoff_executors.values())
    assert [k for k, e in handoff_executors.items() if e.is_start_agent] == ["triage"]
    triage = handoff_executors["triage"]
    assert [h.target_id for h in triage.handoffs] == ["billing", "tech"]
    assert [t.name for t in triage.tools] == ["handoff_to_billing", "handoff_to_tech"]
    assert triage.tools[0].description == "Hand the conversation over to billing, who handles: Refunds and invoices."


async def test_under_the_coordinator_the_executor_saves_only_its_turn() -> None:
    workflow = handoff()
    await workflow.run("I need a refund")
    billing = workflow.executors["billing"]
    assert set(billing.on_checkpoint_save()) == {"input", "turn", "awaiting"}


# -- wired by hand -------------------------------------------------------------------------------------------
async def test_hand_built_graph_hands_off_and_asks_the_user() -> None:
    workflow, executors = mesh()
    result = await workflow.run("I need a refund")
    assert [e.data for e in result if e.type == "handoff_sent"] == [HandoffSentEvent("triage", "billing")]
    outputs = [(e.executor_id, e.data.text) for e in result if e.type == "output"]
    assert outputs == [("triage", "Let me get billing."), ("billing", "Which order should I refund?")]
    (request,) = result.get_request_info_events()
    assert request.executor_id == "billing"
    assert isinstance(request.data, HandoffUserInputRequest)
    assert request.data.agent_name == "billing"
    assert request.data.agent_response.text == "Which order should I refund?"
    expected = [
        ("user", None, "I need a refund"),
        ("assistant", "triage", "Let me get billing."),
        ("assistant", "billing", "Which order should I refund?"),
    ]
    assert _texts(request.data.conversation) == expected
    # Every participant heard the same conversation, without triage's handoff call.
    for executor in executors.values():
        assert _texts(executor.conversation) == expected
        assert {c.type for m in executor.conversation for c in m.contents} == {"text"}

    result = await workflow.run(responses={request.request_id: "Order 42 please"})
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.text == "Refund for order 42 issued."

    result = await workflow.run(responses={request.request_id: HandoffUserInputRequest.terminate()})
    assert result.get_request_info_events() == []
    assert [e.data for e in result if e.type == "handoff_completed"] == [{"reason": "user", "owner": "billing"}]
    assert result.get_final_state() == WorkflowRunState.IDLE


async def test_the_agent_that_handed_off_keeps_its_call_and_result() -> None:
    workflow, executors = mesh()
    await workflow.run("I need a refund")
    history = executors["triage"].on_checkpoint_save()["history"]
    assert [(m.role, [c.type for c in m.contents]) for m in history] == [
        ("user", ["text"]),
        ("assistant", ["text", "function_call"]),
        ("tool", ["function_result"]),
        ("assistant", ["text"]),  # billing's answer, as everyone heard it
    ]
    (result,) = history[2].contents
    assert (result.call_id, result.result) == (history[1].contents[1].call_id, "Handed off to billing.")


async def test_termination_condition_ends_without_asking() -> None:
    def done(conversation: list[Message]) -> bool:
        return any("issued" in m.text for m in conversation)

    workflow, _ = mesh(billing={"termination_condition": done})
    (request,) = (await workflow.run("I need a refund")).get_request_info_events()
    result = await workflow.run(responses={request.request_id: "Order 42 please"})
    assert result.get_request_info_events() == []
    assert [e.data for e in result if e.type == "handoff_completed"] == [
        {"reason": "termination_condition", "owner": "billing"}
    ]
    assert [e.data.text for e in result if e.type == "output"] == ["Refund for order 42 issued."]


@pytest.mark.parametrize(("limit", "answers"), [(0, 1), (2, 3)])
async def test_autonomous_mode_runs_the_agent_again_up_to_its_limit(limit: int, answers: int) -> None:
    calls: list[int] = []

    def worker(messages: list[Message], options: dict[str, Any]) -> str:
        calls.append(len(messages))
        return f"Step {len(calls)} done."

    helper = Agent(FunctionChatClient(lambda m, o: "Hi."), name="helper")
    executor = HandoffAgentExecutor(
        Agent(FunctionChatClient(worker), name="worker"),
        [HandoffConfiguration(target=helper)],
        is_start_agent=True,
        autonomous_mode=True,
        autonomous_mode_prompt="Keep going.",
        autonomous_mode_turn_limit=limit,
    )
    other = HandoffAgentExecutor(helper, [])
    workflow = WorkflowBuilder(start_executor=executor).add_edge(executor, other).add_edge(other, executor).build()
    result = await workflow.run("Research this")
    assert len(calls) == answers
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.text == f"Step {answers} done."
    prompts = [m.text for m in request.data.conversation if m.role == "user"]
    assert prompts == ["Research this", *["Keep going."] * limit]
    # The user's reply resets the count: the agent works autonomously again.
    calls.clear()
    await workflow.run(responses={request.request_id: "More"})
    assert len(calls) == answers


async def test_user_replies_can_go_to_another_agent() -> None:
    workflow, _ = mesh(billing={"user_response_target_id": "triage"})
    (request,) = (await workflow.run("I need a refund")).get_request_info_events()
    result = await workflow.run(responses={request.request_id: "My router is broken"})
    assert [e.data for e in result if e.type == "handoff_sent"] == [HandoffSentEvent("triage", "tech")]
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "tech"
    assert request.data.agent_response.text.startswith("Tech support: try restarting it")


async def test_a_streamed_hand_built_run_yields_each_agents_updates() -> None:
    workflow, _ = mesh()
    events = [e async for e in workflow.run("I need a refund", stream=True)]
    outputs = [e.data for e in events if e.type == "output"]
    assert outputs and all(isinstance(o, AgentResponseUpdate) for o in outputs)
    assert {o.author_name for o in outputs} == {"triage", "billing"}
    (request,) = [e for e in events if e.type == "request_info"]
    assert request.data.agent_name == "billing"


async def test_a_hand_built_conversation_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    workflow, _ = mesh(storage=FileCheckpointStorage(tmp_path))
    paused = await workflow.run("I need a refund")
    (request,) = paused.get_request_info_events()
    assert paused.checkpoint_id is not None

    fresh, executors = mesh(storage=FileCheckpointStorage(tmp_path))
    result = await fresh.run(checkpoint_id=paused.checkpoint_id, responses={request.request_id: "Order 42 please"})
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.text == "Refund for order 42 issued."
    assert _texts(executors["tech"].conversation)[-2:] == [
        ("user", None, "Order 42 please"),
        ("assistant", "billing", "Refund for order 42 issued."),
    ]


async def test_tool_approval_inside_a_hand_built_handoff() -> None:
    DEPLOYS.clear()
    helper = Agent(FunctionChatClient(lambda m, o: "Release notes written."), name="helper")
    ops = HandoffAgentExecutor(ops_agent(), [HandoffConfiguration(target=helper)], is_start_agent=True)
    other = HandoffAgentExecutor(helper, [])
    workflow = WorkflowBuilder(start_executor=ops).add_edge(ops, other).add_edge(other, ops).build()
    (request,) = (await workflow.run("release 1.2")).get_request_info_events()
    assert request.data.type == "function_approval_request"
    assert DEPLOYS == []
    result = await workflow.run(responses={request.request_id: True})
    assert DEPLOYS == ["1.2"]
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.text == "Deploy finished: version 1.2 is live"
    outputs = [e.data for e in result if e.type == "output"]
    assert len(outputs) == 1 and isinstance(outputs[0], AgentResponse)
    # The tool call and its result stay with ops; the others hear only its words.
    assert [m.text for m in other.conversation] == ["release 1.2", "Deploy finished: version 1.2 is live"]


def test_constructor_checks_what_it_is_given() -> None:
    agent = Agent(FunctionChatClient(lambda m, o: "Hi."), name="a")
    with pytest.raises(ValueError, match="autonomous_mode_turn_limit"):
        HandoffAgentExecutor(agent, [], autonomous_mode_turn_limit=-1)
    with pytest.raises(TypeError, match="termination_condition"):
        HandoffAgentExecutor(agent, [], termination_condition="done")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same tool name"):
        HandoffAgentExecutor(agent, [HandoffConfiguration(target="b"), HandoffConfiguration(target="b")])
    executor = HandoffAgentExecutor(agent, [])
    assert (executor.id, executor.autonomous_mode_turn_limit, executor.is_start_agent) == ("a", 50, False)


def test_an_agent_tool_named_like_a_handoff_tool_is_refused_when_the_graph_is_built() -> None:
    def handoff_to_billing() -> str:
        """The agent's own tool, named like the generated one."""
        return "ran"

    triage = Agent(FunctionChatClient(lambda m, o: "Hi."), name="triage", tools=[handoff_to_billing])
    billing = Agent(FunctionChatClient(lambda m, o: "Hi."), name="billing")
    with pytest.raises(ValueError, match="already has a tool named 'handoff_to_billing'"):
        HandoffAgentExecutor(triage, [HandoffConfiguration(target=billing)])
    with pytest.raises(ValueError, match="already has a tool named 'handoff_to_billing'"):
        HandoffBuilder(participants=[triage, billing]).build()


async def test_a_reviewed_turn_is_passed_on_once_approved() -> None:
    workflow, executors = mesh()
    executors["billing"].review = True
    (review,) = (await workflow.run("I need a refund")).get_request_info_events()
    assert isinstance(review.data, ParticipantReviewRequest)
    assert review.data.agent_response.text == "Which order should I refund?"
    assert executors["tech"].conversation[-1].author_name == "triage"  # nothing shared before the approval

    result = await workflow.run(responses={review.request_id: True})
    assert [(e.executor_id, e.data.text) for e in result if e.type == "output"] == [
        ("billing", "Which order should I refund?")
    ]
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)
    assert executors["tech"].conversation[-1].text == "Which order should I refund?"
