"""Orchestrations are ordinary workflows: exports, graph, run store, serialization, as_agent."""

from __future__ import annotations

import json

import agentnb.workflows as wf
from agentnb import AgentResponse, Message, _serialization
from agentnb.store import RunStore
from agentnb.workflows import (
    GroupChatState,
    HandoffUserInputRequest,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
    MagenticTaskLedger,
    WorkflowViz,
)
from tests.workflows.orchestrations.orch_scenarios import handoff, magentic, sequential

BUILDERS = ["ConcurrentBuilder", "GroupChatBuilder", "HandoffBuilder", "MagenticBuilder", "SequentialBuilder"]


def test_builders_are_exported_from_agentnb_workflows_with_a_sorted_all() -> None:
    assert set(BUILDERS) <= set(wf.__all__)
    # Ruff's order (RUF022): CONSTANTS, then Classes, then functions, each alphabetical.
    assert wf.__all__ == sorted(wf.__all__, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    for name in BUILDERS:
        assert getattr(wf, name).__module__.startswith("agentnb.workflows._orchestrations")


def test_star_graph_and_its_drawing() -> None:
    workflow = handoff()
    assert workflow.start_executor_id == "handoff_coordinator"
    edges = {(s, t) for g in workflow.edge_groups for s, t in g.pairs()}
    for agent in ("triage", "billing", "tech"):
        assert ("handoff_coordinator", agent) in edges and (agent, "handoff_coordinator") in edges
    mermaid = WorkflowViz(workflow).to_mermaid()
    assert "handoff_coordinator (Start)" in mermaid
    assert workflow._repr_svg_().startswith("<svg")


def test_same_orchestration_built_twice_has_the_same_graph_signature() -> None:
    # Resuming in another process depends on it.
    assert magentic().graph_signature == magentic().graph_signature
    assert sequential().graph_signature != magentic().graph_signature


async def test_runs_and_orchestration_events_are_mirrored_into_the_run_store() -> None:
    store = RunStore(":memory:")
    await magentic().run("quarterly sales", run_store=store)
    (run,) = store.list_runs()
    assert run["status"] == "completed"
    events = store.list_events(run["run_id"])
    types = [e["type"] for e in events]
    assert types.count("magentic_progress") == 3 and "magentic_completed" in types
    plan = json.loads(events[types.index("magentic_plan")]["data"])
    assert plan["type"] == "agentnb.workflows:MagenticTaskLedger"
    assert plan["data"]["plan"] == ["researcher: gather numbers", "coder: plot them"]


def test_request_payloads_round_trip_through_tagged_json() -> None:
    values = [
        HandoffUserInputRequest("billing", AgentResponse(text="Which order?"), [Message("user", ["refund"])]),
        MagenticPlanReviewRequest(
            Message("assistant", ["1. a: b"]), MagenticProgressLedger(is_request_satisfied=False), True, steps=["a: b"]
        ),
        MagenticPlanReviewResponse.revise("more detail"),
        MagenticTaskLedger(facts="f", plan=["x"]),
        GroupChatState(1, {"a": ""}, [Message("user", ["hi"])], "a"),
    ]
    for value in values:
        text = _serialization.dumps(value)
        assert "_orchestrations" not in text  # stored under stable public ids
        back = _serialization.loads(text)
        assert type(back) is type(value)
    request = _serialization.loads(_serialization.dumps(values[0]))
    assert request.agent_response.text == "Which order?" and request.conversation[0].text == "refund"


async def test_an_orchestration_runs_as_an_agent() -> None:
    agent = sequential().as_agent(name="pipeline")
    response = await agent.run("tea")
    assert "Final: DRAFT ABOUT TEA." in response.text
