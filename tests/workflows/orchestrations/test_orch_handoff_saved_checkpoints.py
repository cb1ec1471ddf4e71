"""Handoff checkpoints written before HandoffAgentExecutor existed resume on today's handoff workflows.

The fixtures are checkpoint files saved by the earlier handoff builder (participants were plain participant
executors): one paused for the user's next message, one paused on a tool approval inside a participant, and
one paused on a person's review of a participant's turn. Each is resumed on a workflow built by today's
builder and must finish the conversation as the original would have.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentnb.workflows import (
    CheckpointStorage,
    FileCheckpointStorage,
    HandoffBuilder,
    HandoffUserInputRequest,
    ParticipantReviewRequest,
    Workflow,
)
from tests.workflows.orchestrations.orch_scenarios import DEPLOYS, approval_workflow, handoff, handoff_agents

FIXTURES = Path(__file__).with_name("fixtures")


def reviewed_handoff(storage: CheckpointStorage | None = None) -> Workflow:
    """The handoff scenario with a person reviewing billing's turns (as the review fixture was written)."""
    triage, billing, tech = handoff_agents()
    return (
        HandoffBuilder(participants=[triage, billing, tech], checkpoint_storage=storage)
        .with_start_agent(triage)
        .add_handoff(triage, [billing, tech])
        .add_handoff(billing, [tech])
        .with_request_info(agents=[billing])
        .build()
    )


def _saved(name: str, directory: Path) -> tuple[str, str]:
    """Place a saved checkpoint in ``directory``: its checkpoint id and its one pending request id."""
    data = json.loads((FIXTURES / f"handoff_{name}_checkpoint.json").read_text())
    shutil.copy(FIXTURES / f"handoff_{name}_checkpoint.json", directory / f"{data['checkpoint_id']}.json")
    (pending,) = data["pending_requests"]
    return data["checkpoint_id"], pending["request_id"]


@pytest.fixture(autouse=True)
def _no_deploys() -> None:
    DEPLOYS.clear()


@pytest.mark.parametrize(
    ("name", "build"),
    [("user_input", handoff), ("approval", lambda s: approval_workflow("handoff", s)), ("review", reviewed_handoff)],
)
async def test_saved_checkpoint_matches_todays_graph(
    name: str, build: Callable[[CheckpointStorage | None], Workflow], tmp_path: Path
) -> None:
    checkpoint_id, _ = _saved(name, tmp_path)
    saved = await FileCheckpointStorage(tmp_path).load(checkpoint_id)
    assert build(None).graph_signature == saved.graph_signature


async def test_saved_user_input_pause_resumes_with_the_owner(tmp_path: Path) -> None:
    checkpoint_id, request_id = _saved("user_input", tmp_path)
    workflow = handoff(FileCheckpointStorage(tmp_path))
    result = await workflow.run(checkpoint_id=checkpoint_id, responses={request_id: "Order 42 please"})
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)
    assert request.data.agent_name == "billing"
    assert request.data.agent_response.text == "Refund for order 42 issued."

    result = await workflow.run(responses={request.request_id: HandoffUserInputRequest.terminate()})
    (conversation,) = result.get_outputs()
    assert [(m.role, m.author_name, m.text) for m in conversation if m.text] == [
        ("user", None, "I need a refund"),
        ("assistant", "triage", "Let me get billing."),
        ("assistant", "billing", "Which order should I refund?"),
        ("user", None, "Order 42 please"),
        ("assistant", "billing", "Refund for order 42 issued."),
    ]


async def test_saved_approval_pause_resumes_inside_the_participant(tmp_path: Path) -> None:
    checkpoint_id, request_id = _saved("approval", tmp_path)
    workflow = approval_workflow("handoff", FileCheckpointStorage(tmp_path))
    result = await workflow.run(checkpoint_id=checkpoint_id, responses={request_id: True})
    assert DEPLOYS == ["1.2"]
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)
    assert request.data.agent_name == "ops"
    assert request.data.agent_response.text == "Deploy finished: version 1.2 is live"
    kinds = [c.type for m in request.data.conversation for c in m.contents]
    assert kinds == ["text", "function_call", "function_result", "text"]


async def test_saved_review_pause_resumes_with_the_feedback(tmp_path: Path) -> None:
    checkpoint_id, request_id = _saved("review", tmp_path)
    workflow = reviewed_handoff(FileCheckpointStorage(tmp_path))
    result = await workflow.run(checkpoint_id=checkpoint_id, responses={request_id: "Order 7, please"})
    (review,) = result.get_request_info_events()
    assert isinstance(review.data, ParticipantReviewRequest)
    assert review.data.participant == "billing"
    assert review.data.agent_response.text == "Refund for order 7 issued."

    result = await workflow.run(responses={review.request_id: True})
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)
    assert request.data.agent_name == "billing"
    assert [m.text for m in request.data.conversation if m.role == "user"] == ["I need a refund", "Order 7, please"]
