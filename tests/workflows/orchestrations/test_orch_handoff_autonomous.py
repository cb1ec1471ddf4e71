"""HandoffBuilder.with_autonomous_mode in both shapes: per agent (``prompts`` / ``turn_limits``) and one value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, Content, Message
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import FileCheckpointStorage, HandoffBuilder, HandoffUserInputRequest, resolve_agent_id
from tests.workflows.orchestrations.orch_scenarios import handoff_agents

FIXTURES = Path(__file__).with_name("fixtures")


def _counting(name: str, *, hand_to: str | None = None, after: int = 0) -> Agent:
    """An agent that numbers its answers; with ``hand_to`` its answer number ``after`` + 1 is a handoff."""

    def model(messages: list[Message], options: dict[str, Any]) -> Any:
        spoken = sum(m.role == "assistant" and m.author_name == name for m in messages)
        if hand_to is not None and spoken == after:
            return Content.from_function_call(f"call_{name}_{len(messages)}", f"handoff_to_{hand_to}")
        return f"{name} {spoken + 1}"

    return Agent(FunctionChatClient(model), name=name)


def _texts(conversation: list[Message]) -> list[str]:
    return [m.text for m in conversation if m.text]


async def test_turn_limits_and_prompts_are_per_agent() -> None:
    # lead answers once, then hands to research; research has its own limit and prompt.
    lead = _counting("lead", hand_to="research", after=1)
    research = _counting("research")
    workflow = (
        HandoffBuilder(participants=[lead, research])
        .with_autonomous_mode(
            turn_limits={"lead": 1, "research": 2},
            prompts={"research": "Dig deeper."},
        )
        .build()
    )
    result = await workflow.run("Study handoffs")
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "research"
    # lead used its one autonomous turn (with the default prompt) and then handed off; research used two.
    assert _texts(request.data.conversation) == [
        "Study handoffs",
        "lead 1",
        "The user did not respond. Continue on your own, or hand off if another agent should take over.",
        "research 1",
        "Dig deeper.",
        "research 2",
        "Dig deeper.",
        "research 3",
    ]


async def test_a_limit_of_zero_asks_the_user_at_once_for_that_agent_only() -> None:
    lead = _counting("lead", hand_to="research", after=2)
    research = _counting("research")
    builder = HandoffBuilder(participants=[lead, research]).with_autonomous_mode(turn_limits={"research": 0})
    assert builder.autonomous_turn_limits() == {"lead": 50, "research": 0}
    result = await builder.build().run("Go")
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "research"
    assert _texts(request.data.conversation) == [
        "Go",
        "lead 1",
        "The user did not respond. Continue on your own, or hand off if another agent should take over.",
        "lead 2",
        "The user did not respond. Continue on your own, or hand off if another agent should take over.",
        "research 1",
    ]


async def test_one_value_is_the_default_the_mapping_overrides() -> None:
    a, b, c = (_counting(n) for n in ("a", "b", "c"))
    builder = HandoffBuilder(participants=[a, b, c]).with_autonomous_mode(
        agents=[a, "b"], turn_limit=3, turn_limits={b: 1}, prompt="Go on.", prompts={"a": "More, a."}
    )
    assert builder.autonomous_turn_limits() == {"a": 3, "b": 1}
    result = await builder.build().run("Start")
    (request,) = result.get_request_info_events()
    assert _texts(request.data.conversation) == [
        "Start",
        "a 1",
        "More, a.",
        "a 2",
        "More, a.",
        "a 3",
        "More, a.",
        "a 4",
    ]

    b_first = (
        HandoffBuilder(participants=[a, b, c])
        .with_start_agent(b)
        .with_autonomous_mode(agents=[a, "b"], turn_limit=3, turn_limits={b: 1}, prompt="Go on.")
    )
    (request,) = (await b_first.build().run("Start")).get_request_info_events()
    assert _texts(request.data.conversation) == ["Start", "b 1", "Go on.", "b 2"]


async def test_the_references_sample_keys_by_resolve_agent_id() -> None:
    coordinator, worker = _counting("coordinator", hand_to="worker", after=0), _counting("worker")
    workflow = (
        HandoffBuilder(participants=[coordinator, worker])
        .with_start_agent(coordinator)
        .with_autonomous_mode(turn_limits={resolve_agent_id(coordinator): 5, resolve_agent_id(worker): 2})
        .build()
    )
    (request,) = (await workflow.run("Go")).get_request_info_events()
    assert request.data.agent_response.text == "worker 3"


async def test_the_existing_keywords_behave_as_before() -> None:
    worker = _counting("worker")
    idle = Agent(ScriptedChatClient([]), name="idle")
    builder = HandoffBuilder(participants=[worker, idle]).with_autonomous_mode(agents=["worker"], turn_limit=2)
    assert builder.autonomous_turn_limits() == {"worker": 2}
    (request,) = (await builder.build().run("Work")).get_request_info_events()
    assert request.data.agent_response.text == "worker 3"
    # A later call without prompt= keeps the prompt an earlier call set; its per-agent prompts are replaced.
    builder.with_autonomous_mode(prompt="Carry on.", prompts={"worker": "Only this call."})
    builder.with_autonomous_mode(turn_limit=1)
    assert builder.autonomous_turn_limits() == {"worker": 1, "idle": 1}
    (request,) = (await builder.build().run("Work")).get_request_info_events()
    assert _texts(request.data.conversation) == ["Work", "worker 1", "Carry on.", "worker 2"]


def test_mixing_the_shapes_wrongly_is_refused_with_the_keyword_to_use() -> None:
    builder = HandoffBuilder(participants=handoff_agents())
    with pytest.raises(TypeError, match="pass turn_limit= instead"):
        builder.with_autonomous_mode(turn_limits=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="per-agent values go in turn_limits="):
        builder.with_autonomous_mode(turn_limit={"billing": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pass prompt= instead"):
        builder.with_autonomous_mode(prompts="Keep going.")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="per-agent values go in prompts="):
        builder.with_autonomous_mode(prompt={"billing": "Keep going."})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"prompts\['billing'\] must be text"):
        builder.with_autonomous_mode(prompts={"billing": 3})  # type: ignore[dict-item]


def test_names_and_limits_are_checked() -> None:
    triage, billing, tech = handoff_agents()
    builder = HandoffBuilder(participants=[triage, billing, tech])
    with pytest.raises(ValueError, match="'sales' is not a participant"):
        builder.with_autonomous_mode(turn_limits={"sales": 2})
    with pytest.raises(ValueError, match="leaves out of autonomous mode"):
        builder.with_autonomous_mode(agents=[billing], prompts={"tech": "Keep going."})
    with pytest.raises(ValueError, match="names 'billing' twice"):
        builder.with_autonomous_mode(turn_limits={"billing": 1, billing: 2})  # type: ignore[dict-item]
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match=r"turn_limits\['tech'\] must be an int >= 0"):
            builder.with_autonomous_mode(turn_limits={"tech": bad})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="give it 0 in turn_limits="):
        builder.with_autonomous_mode(turn_limit=0)
    # A refused call leaves the earlier setting in place.
    builder.with_autonomous_mode(turn_limits={"tech": 4}, agents=["tech"])
    with pytest.raises(ValueError):
        builder.with_autonomous_mode(turn_limits={"tech": -1})
    assert builder.autonomous_turn_limits() == {"tech": 4}


async def test_a_checkpoint_saved_before_per_agent_limits_resumes_with_them(tmp_path: Path) -> None:
    """The saved user-input pause (billing owns the conversation) resumes under billing's own limit and prompt."""
    data = json.loads((FIXTURES / "handoff_user_input_checkpoint.json").read_text())
    shutil.copy(FIXTURES / "handoff_user_input_checkpoint.json", tmp_path / f"{data['checkpoint_id']}.json")
    (pending,) = data["pending_requests"]
    triage, billing, tech = handoff_agents()
    workflow = (
        HandoffBuilder(participants=[triage, billing, tech], checkpoint_storage=FileCheckpointStorage(tmp_path))
        .with_start_agent(triage)
        .add_handoff(triage, [billing, tech])
        .add_handoff(billing, [tech])
        .with_autonomous_mode(agents=[billing], turn_limits={"billing": 1}, prompts={"billing": "Order 43 too."})
        .build()
    )
    result = await workflow.run(checkpoint_id=data["checkpoint_id"], responses={pending["request_id"]: "Order 42"})
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffUserInputRequest)
    assert _texts(request.data.conversation)[-4:] == [
        "Order 42",
        "Refund for order 42 issued.",
        "Order 43 too.",
        "Refund for order 43 issued.",
    ]
