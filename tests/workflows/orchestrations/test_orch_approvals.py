"""Tool approvals raised inside any participant surface to the workflow's caller and resume it."""

from __future__ import annotations

import pytest

from agentnb import AgentResponse, AgentResponseUpdate, Content
from agentnb.workflows import HandoffUserInputRequest, WorkflowRunState, merge_streamed_outputs
from tests.workflows.orchestrations.orch_scenarios import DEPLOYS, approval_workflow

KINDS = ["sequential", "concurrent", "group_chat", "handoff", "magentic"]


@pytest.fixture(autouse=True)
def _no_deploys() -> None:
    DEPLOYS.clear()


def _messages(output) -> list:
    """An orchestration's output as messages (Sequential and Concurrent yield an AgentResponse, as the reference)."""
    return output.messages if isinstance(output, AgentResponse) else output


def _texts(result) -> list[str]:
    outputs = result.get_outputs()
    if outputs:
        return [m.text for m in _messages(outputs[0])]
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)  # handoff waits for the user after the turn
    return [m.text for m in request.data.conversation]


@pytest.mark.parametrize("kind", KINDS)
async def test_approval_request_pauses_the_whole_workflow_until_answered(kind: str) -> None:
    workflow = approval_workflow(kind)
    paused = await workflow.run("release 1.2")
    (request,) = paused.get_request_info_events()
    assert request.executor_id == "ops"
    assert request.data.type == "function_approval_request"
    assert request.data.function_call.name == "deploy"
    assert request.data.function_call.parse_arguments() == {"version": "1.2"}
    assert paused.get_final_state() == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert paused.get_outputs() == []
    assert DEPLOYS == []  # never runs before a person approves

    resumed = await workflow.run(responses={request.request_id: True})
    assert DEPLOYS == ["1.2"]
    texts = _texts(resumed)
    assert "Deploy finished: version 1.2 is live" in texts
    # The conversation passed on holds the call and its result, not the approval bookkeeping.
    kinds = {c.type for m in _messages((resumed.get_outputs() or [[]])[0]) for c in m.contents}
    assert not kinds & {"function_approval_request", "function_approval_response"}


async def test_rejection_reaches_the_agent_and_the_tool_never_runs() -> None:
    workflow = approval_workflow("group_chat")
    (request,) = (await workflow.run("release 1.2")).get_request_info_events()
    result = await workflow.run(responses={request.request_id: request.data.to_function_approval_response(False)})
    assert DEPLOYS == []
    (conversation,) = result.get_outputs()
    assert [m.author_name for m in conversation if m.role == "assistant"] == ["ops", "ops", "helper"]
    assert conversation[3].text.startswith("Deploy finished:") and "1.2 is live" not in conversation[3].text


async def test_streaming_run_surfaces_the_request_and_resumes_streaming() -> None:
    workflow = approval_workflow("sequential")
    events = [e async for e in workflow.run("release 1.2", stream=True)]
    (request,) = [e for e in events if e.type == "request_info"]
    events = [
        e
        async for e in workflow.run(
            responses={
                request.request_id: Content.from_function_approval_response(
                    request.data.id, True, request.data.function_call
                )
            },
            stream=True,
        )
    ]
    assert DEPLOYS == ["1.2"]
    outputs = [e for e in events if e.type == "output"]
    assert outputs and all(isinstance(e.data, AgentResponseUpdate) and e.executor_id == "ops" for e in outputs)
    (reply,) = merge_streamed_outputs(e.data for e in outputs)
    assert reply.messages[-1].text == "Deploy finished: version 1.2 is live"


async def test_a_forged_answer_is_refused_and_loses_nothing() -> None:
    workflow = approval_workflow("concurrent")
    (request,) = (await workflow.run("release 1.2")).get_request_info_events()
    with pytest.raises(ValueError, match="No pending request"):
        await workflow.run(responses={"made-up": True})
    with pytest.raises(TypeError, match="must be"):
        await workflow.run(responses={request.request_id: "yes"})
    wrong = Content.from_function_approval_response("other-id", True, request.data.function_call)
    result = await workflow.run(responses={request.request_id: wrong})
    assert DEPLOYS == []
    (warning,) = result.get_events("warning")
    assert "expected the function_approval_response" in warning.data
    (again,) = result.get_request_info_events()
    # Asked again for the same approval, under its own id (the first request was answered, wrongly).
    assert again.request_id == again.data.id == request.data.id
    result = await workflow.run(responses={again.request_id: True})
    assert DEPLOYS == ["1.2"] and result.get_outputs()


async def test_two_participants_waiting_at_once_are_answered_together() -> None:
    from agentnb import Agent
    from agentnb.local import FunctionChatClient
    from agentnb.workflows import ConcurrentBuilder
    from tests.workflows.orchestrations.orch_scenarios import ops_agent

    second = Agent(FunctionChatClient(ops_agent().client.func), name="ops2", tools=ops_agent().tools)  # type: ignore[attr-defined]
    workflow = ConcurrentBuilder(participants=[ops_agent(), second]).build()
    requests = {r.executor_id: r for r in (await workflow.run("release")).get_request_info_events()}
    assert sorted(requests) == ["ops", "ops2"]
    # Answering one leaves the run paused on the other; the fan-in waits for both.
    partial = await workflow.run(responses={requests["ops"].request_id: True})
    assert partial.get_outputs() == [] and len(partial.get_request_info_events()) == 1
    done = await workflow.run(responses={requests["ops2"].request_id: False})
    (response,) = done.get_outputs()
    assert DEPLOYS == ["1.2"]
    by_author = {m.author_name: m.text for m in response.messages}
    assert by_author["ops"] == "Deploy finished: version 1.2 is live"
    assert by_author["ops2"].startswith("Deploy finished:") and "is live" not in by_author["ops2"]
