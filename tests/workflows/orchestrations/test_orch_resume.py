"""Every orchestration checkpoints mid-way and finishes identically when resumed in a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentnb.workflows import FileCheckpointStorage, HandoffUserInputRequest, MagenticPlanReviewRequest
from tests.workflows.orchestrations.orch_scenarios import DEPLOYS, SCENARIOS, approval_workflow, summary

SCRIPT = str(Path(__file__).with_name("orch_procs.py"))
ROOT = str(Path(__file__).resolve().parents[3])


def _resume(kind: str, directory: Path, checkpoint_id: str, responses: Any = None, later: Any = None) -> dict:
    args = [sys.executable, SCRIPT, kind, str(directory), checkpoint_id]
    if responses is not None or later is not None:
        args.append(json.dumps(responses or {}))
    if later is not None:
        args.append(json.dumps(later))
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", ["sequential", "concurrent", "group_chat", "magentic"])
async def test_mid_run_checkpoint_resumes_in_fresh_process(kind: str, tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    workflow = SCENARIOS[kind](storage)
    result = await workflow.run("quarterly sales")
    baseline = [summary(o) for o in result.get_outputs()]
    assert len(baseline) == 1 and len(baseline[0]) >= 1
    infos = await storage.list_checkpoints(run_id=result.run_id)
    last_step = max(i.step for i in infos)
    mid = [i for i in infos if 0 < i.step < last_step]
    assert mid, f"{kind} wrote no checkpoint between its first and last superstep"
    chosen = mid[len(mid) // 2]
    checkpoint = await storage.load(chosen.checkpoint_id)
    assert checkpoint.pending_messages, "a mid-run checkpoint has messages waiting for the next superstep"
    resumed = _resume(kind, tmp_path, chosen.checkpoint_id)
    assert resumed["state"] == "idle"
    assert resumed["outputs"] == baseline


async def test_handoff_conversation_and_owner_survive_a_fresh_process(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    workflow = SCENARIOS["handoff"](storage)
    first = await workflow.run("I need a refund")
    (request,) = first.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)
    assert request.data.agent_name == "billing"
    paused_at = first.checkpoint_id
    assert paused_at is not None

    # The same conversation in this process: the reply goes to billing, the owner since the handoff.
    owners = []
    result = await workflow.run(responses={request.request_id: "Order 42 please"})
    for reply in ["My router is broken", HandoffUserInputRequest.terminate()]:
        (pending,) = result.get_request_info_events()
        owners.append(pending.data.agent_name)
        result = await workflow.run(responses={pending.request_id: reply})
    baseline = [summary(o) for o in result.get_outputs()]
    assert owners == ["billing", "tech"]

    resumed = _resume(
        "handoff",
        tmp_path,
        paused_at,
        {request.request_id: "Order 42 please"},
        ["My router is broken", "__terminate__"],
    )
    assert resumed["owners"] == owners
    assert resumed["outputs"] == baseline
    texts = [m[2] for m in baseline[0]]
    assert "Refund for order 42 issued." in texts
    assert texts[-1].startswith("Tech support:")


async def test_plan_review_answered_in_fresh_process(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    workflow = SCENARIOS["magentic"](storage, plan_review=True)
    paused = await workflow.run("quarterly sales")
    (request,) = paused.get_request_info_events()
    assert isinstance(request.data, MagenticPlanReviewRequest)
    assert request.data.steps == ["researcher: gather numbers", "coder: plot them"]
    assert paused.get_outputs() == []
    resumed = _resume("magentic", tmp_path, paused.checkpoint_id or "", {request.request_id: True})
    assert resumed["state"] == "idle"
    final = resumed["outputs"][0]
    assert [m[1] for m in final] == [None, "manager", "researcher", "manager", "coder", "manager"]
    assert final[-1][2] == "Sales grew 10% a year; the chart is in chart.png."


async def test_tool_approval_answered_in_fresh_process(tmp_path: Path) -> None:
    DEPLOYS.clear()
    storage = FileCheckpointStorage(tmp_path)
    workflow = approval_workflow("concurrent", storage)
    paused = await workflow.run("ship it")
    (request,) = paused.get_request_info_events()
    assert request.data.type == "function_approval_request"
    assert DEPLOYS == []
    resumed = _resume("approval:concurrent", tmp_path, paused.checkpoint_id or "", {request.request_id: True})
    assert resumed["deploys"] == ["1.2"]
    assert DEPLOYS == []  # it ran in the other process only
    texts = [m[2] for m in resumed["outputs"][0]]
    assert texts == ["Deploy finished: version 1.2 is live", "Release notes written."]


async def test_participant_review_answered_in_fresh_process(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    paused = await SCENARIOS["review"](storage).run("a poem")
    (request,) = paused.get_request_info_events()
    resumed = _resume("review", tmp_path, paused.checkpoint_id or "", {request.request_id: "Shorter, please"}, [True])
    assert resumed["state"] == "idle"
    assert [m[2] for m in resumed["outputs"][0]] == ["Edited: Draft 2 (Shorter, please)"]


async def test_handoff_resumes_from_a_checkpoint_taken_between_agents(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    workflow = SCENARIOS["handoff"](storage)
    first = await workflow.run("I need a refund")
    infos = await storage.list_checkpoints(run_id=first.run_id)
    # After triage's handoff and before billing answered: the handoff is recorded, billing's turn is pending.
    middle = [i for i in infos if 0 < i.step < max(j.step for j in infos)]
    assert middle
    chosen = middle[-1]
    state = (await storage.load(chosen.checkpoint_id)).executor_states["handoff_coordinator"]
    assert state["owner"] == "billing"
    (request,) = first.get_request_info_events()
    result = await workflow.run(responses={request.request_id: "Order 42 please"})
    (request,) = result.get_request_info_events()
    result = await workflow.run(responses={request.request_id: HandoffUserInputRequest.terminate()})
    baseline = [summary(o) for o in result.get_outputs()]

    resumed = _resume("handoff", tmp_path, chosen.checkpoint_id, later=["Order 42 please", "__terminate__"])
    assert resumed["owners"] == ["billing", "billing"]
    assert resumed["outputs"] == baseline
