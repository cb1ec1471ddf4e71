"""A person reviews participants' turns: approve to pass them on, or send feedback the agent answers."""

from __future__ import annotations

import pytest

from agentnb import Message
from agentnb.workflows import (
    AgentExecutorResponse,
    AgentRequestInfoResponse,
    ConcurrentBuilder,
    GroupChatBuilder,
    ParticipantReviewRequest,
    ParticipantReviewResponse,
    WorkflowRunState,
)
from tests.workflows.orchestrations.orch_scenarios import concurrent_agents, review, summary


async def test_feedback_goes_back_to_the_agent_then_approval_passes_the_turn_on() -> None:
    workflow = review()
    result = await workflow.run("a poem")
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, ParticipantReviewRequest)
    assert request.executor_id == "writer"
    assert (request.data.participant, request.data.agent_response.text) == ("writer", "Draft 1")
    assert result.get_final_state() == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert result.get_intermediate_outputs() == []  # nothing is passed on before the review

    result = await workflow.run(responses={request.request_id: "Shorter, please"})
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.messages[-1].text == "Draft 2 (Shorter, please)"
    assert [m.text for m in request.data.conversation] == [
        "a poem",
        "Draft 1",
        "Shorter, please",
        "Draft 2 (Shorter, please)",
    ]

    result = await workflow.run(responses={request.request_id: ParticipantReviewResponse.approve()})
    (reply,) = result.get_outputs()  # the editor's reply, made on the approved draft
    assert summary(reply) == [["assistant", "editor", "Edited: Draft 2 (Shorter, please)", ["text"]]]


async def test_every_agent_can_be_reviewed_at_once() -> None:
    workflow = ConcurrentBuilder(participants=concurrent_agents()[:2]).with_request_info().build()
    result = await workflow.run("x")
    requests = result.get_request_info_events()
    assert sorted(r.data.participant for r in requests) == ["marketer", "researcher"]
    result = await workflow.run(responses={r.request_id: True for r in requests})
    (response,) = result.get_outputs()
    assert [m.author_name for m in response.messages] == ["researcher", "marketer"]


async def test_review_in_a_group_chat_and_revise_helpers() -> None:
    from tests.workflows.orchestrations.orch_scenarios import group_chat_agents

    writer, critic = group_chat_agents()
    workflow = (
        GroupChatBuilder(participants=[writer, critic], selection_func=lambda s: "writer", max_rounds=1)
        .with_request_info(agents=["writer"])
        .build()
    )
    (request,) = (await workflow.run("x")).get_request_info_events()
    revision = ParticipantReviewResponse.revise(Message("user", ["Add a rhyme."]))
    result = await workflow.run(responses={request.request_id: revision})
    (request,) = result.get_request_info_events()
    assert request.data.conversation[-2].text == "Add a rhyme."
    (conversation,) = (await workflow.run(responses={request.request_id: ""})).get_outputs()  # "" approves
    assert [m.text for m in conversation][-1] == "Slogan v2: Fresh every day."


def test_unknown_agents_are_refused() -> None:
    with pytest.raises(ValueError, match="not a participant"):
        ConcurrentBuilder(participants=concurrent_agents()).with_request_info(agents=["nobody"])


async def test_review_in_the_reference_shape_agent_executor_response_and_agent_request_info_response() -> None:
    from tests.workflows.orchestrations.orch_scenarios import group_chat_agents

    writer, critic = group_chat_agents()
    workflow = (
        GroupChatBuilder(participants=[writer, critic], selection_func=lambda s: "writer", max_rounds=1)
        .with_request_info(agents=[writer])
        .build()
    )
    (request,) = (await workflow.run("x")).get_request_info_events()
    assert isinstance(request.data, AgentExecutorResponse)
    assert request.data.executor_id == "writer"
    assert [m.text for m in request.data.full_conversation or []] == ["x", request.data.agent_response.text]
    feedback = AgentRequestInfoResponse.from_strings(["Add a rhyme."])
    (request,) = (await workflow.run(responses={request.request_id: feedback})).get_request_info_events()
    assert request.data.conversation[-2].text == "Add a rhyme."
    result = await workflow.run(responses={request.request_id: AgentRequestInfoResponse.approve()})
    (conversation,) = result.get_outputs()
    assert [m.text for m in conversation][-1] == "Slogan v2: Fresh every day."
    assert AgentRequestInfoResponse.from_messages([Message("user", ["hi"])]).messages[0].text == "hi"


def test_a_review_request_keeps_the_whole_turn_through_tagged_json() -> None:
    from agentnb import AgentResponse, _serialization

    turn = AgentResponse(messages=[Message("assistant", ["Draft 1"]), Message("user", ["More"])])
    request = ParticipantReviewRequest("writer", AgentResponse(text="Draft 2"), [Message("user", ["x"])], turn=turn)
    back = _serialization.loads(_serialization.dumps(request))
    assert type(back) is ParticipantReviewRequest
    assert (back.participant, back.agent_response.text) == ("writer", "Draft 2")
    assert [m.text for m in back.conversation] == ["x"]
    assert back.turn is not None and [m.text for m in back.turn.messages] == ["Draft 1", "More"]
