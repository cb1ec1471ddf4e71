"""Handoff orchestration: generated tools per the rules, owner across turns, user input, ending."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, Content, Message, tool
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import (
    HandoffBuilder,
    HandoffConfiguration,
    HandoffUserInputRequest,
    WorkflowRunState,
    clean_conversation_for_handoff,
)
from tests.workflows.orchestrations.orch_scenarios import handoff, handoff_agents


def _recording(name: str, reply: Any, seen: dict[str, list[list[str]]]) -> Agent:
    def model(messages: list[Message], options: dict) -> Any:
        seen.setdefault(name, []).append(sorted(t.name for t in options.get("tools") or []))
        return reply(messages, options) if callable(reply) else reply

    return Agent(FunctionChatClient(model), name=name)


async def test_each_agent_gets_handoff_tools_for_its_rules_only() -> None:
    seen: dict[str, list[list[str]]] = {}
    hop = iter(["handoff_to_billing", "handoff_to_tech"])

    def hand_on(messages: list[Message], options: dict) -> Content:
        return Content.from_function_call(f"c{len(messages)}", next(hop))

    triage = _recording("triage", hand_on, seen)
    billing = _recording("billing", hand_on, seen)
    tech = _recording("tech", "Fixed.", seen)
    workflow = (
        HandoffBuilder(participants=[triage, billing, tech])
        .with_start_agent(triage)
        .add_handoff(triage, [billing, tech])
        .add_handoff("billing", tech)
        .build()
    )
    result = await workflow.run("help")
    assert seen == {
        "triage": [["handoff_to_billing", "handoff_to_tech"]],
        "billing": [["handoff_to_tech"]],
        "tech": [[]],
    }
    assert [(e.data.source, e.data.target) for e in result.get_events("handoff_sent")] == [
        ("triage", "billing"),
        ("billing", "tech"),
    ]
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "tech" and request.data.agent_response.text == "Fixed."


def test_without_rules_every_agent_may_hand_off_to_every_other() -> None:
    builder = HandoffBuilder(participants=handoff_agents())
    assert builder.handoff_targets() == {
        "triage": ["billing", "tech"],
        "billing": ["triage", "tech"],
        "tech": ["triage", "billing"],
    }
    tools = {e.id: [t.name for t in e.tools] for e in builder.build().executors.values() if hasattr(e, "tools")}
    assert tools["tech"] == ["handoff_to_triage", "handoff_to_billing"]


async def test_the_owner_keeps_the_conversation_across_user_turns() -> None:
    workflow = handoff()
    result = await workflow.run("I want a refund")
    (request,) = result.get_request_info_events()
    assert result.get_final_state() == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    data = request.data
    assert isinstance(data, HandoffUserInputRequest)
    assert data.agent_name == "billing"
    assert [(m.role, m.author_name, m.text) for m in data.conversation] == [
        ("user", None, "I want a refund"),
        ("assistant", "triage", "Let me get billing."),
        ("tool", None, ""),
        ("assistant", "billing", "Which order should I refund?"),
    ]
    result_content = data.conversation[2].contents[0]
    assert result_content.type == "function_result" and result_content.result == "Handed off to billing."
    # The reply goes to billing (the owner), not back to triage, the start agent.
    result = await workflow.run(responses={request.request_id: Message("user", ["Order 7"])})
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "billing"
    assert request.data.agent_response.text == "Refund for order 7 issued."
    result = await workflow.run(responses={request.request_id: HandoffUserInputRequest.terminate()})
    (conversation,) = result.get_outputs()
    assert conversation[-1].text == "Refund for order 7 issued."
    assert result.get_events("handoff_completed")[0].data == {"reason": "user", "owner": "billing"}
    assert result.get_final_state() == WorkflowRunState.IDLE


async def test_termination_condition_ends_without_asking_the_user() -> None:
    triage, billing, tech = handoff_agents()
    workflow = HandoffBuilder(
        participants=[triage, billing, tech],
        termination_condition=lambda conversation: any("issued" in m.text for m in conversation),
    ).build()
    result = await workflow.run("refund for order 9")
    assert result.get_request_info_events() == []
    (conversation,) = result.get_outputs()
    assert conversation[-1].author_name == "billing" and conversation[-1].text == "Refund for order 9 issued."


async def test_other_calls_next_to_a_handoff_are_closed_not_run() -> None:
    ran: list[str] = []

    @tool
    def lookup(order: str) -> str:
        """Look up an order."""
        ran.append(order)
        return "found"

    triage = Agent(
        ScriptedChatClient(
            [[ScriptedChatClient.call("lookup", "c1", order="5"), ScriptedChatClient.call("handoff_to_billing", "c2")]]
        ),
        name="triage",
        tools=[lookup],
    )
    billing = Agent(ScriptedChatClient(["On it."]), name="billing")
    result = await HandoffBuilder(participants=[triage, billing]).build().run("refund")
    (request,) = result.get_request_info_events()
    tool_message = request.data.conversation[2]
    assert tool_message.role == "tool"
    by_id = {c.call_id: c for c in tool_message.contents}
    assert by_id["c2"].result == "Handed off to billing."
    assert by_id["c1"].exception == "Not run: triage handed the conversation to billing."
    assert ran == []


async def test_an_agent_without_handoffs_answers_the_user() -> None:
    triage, billing, tech = handoff_agents()
    workflow = HandoffBuilder(participants=[triage, billing, tech]).add_handoff(billing, tech).build()
    result = await workflow.run("refund please")  # triage may not hand off: no rule for it
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "triage" and request.data.agent_response.text == "How can I help?"


def test_builder_rejects_bad_rules() -> None:
    triage, billing, tech = handoff_agents()
    builder = HandoffBuilder(participants=[triage, billing])
    with pytest.raises(ValueError, match="itself"):
        builder.add_handoff(triage, [triage])
    with pytest.raises(ValueError, match="not a participant"):
        builder.add_handoff(triage, [tech])
    with pytest.raises(ValueError, match="not a participant"):
        builder.with_start_agent("nobody")
    impostor = Agent(ScriptedChatClient([]), name="billing")
    with pytest.raises(ValueError, match="not the participant object"):
        builder.add_handoff(triage, impostor)
    with pytest.raises(ValueError, match="at least 2"):
        HandoffBuilder(participants=[triage])
    with pytest.raises(ValueError, match="clashing handoff tool names"):
        HandoffBuilder(
            participants=[Agent(ScriptedChatClient([]), name="a b"), Agent(ScriptedChatClient([]), name="a_b")]
        )


def _worker() -> Agent:
    def model(messages: list[Message], options: dict) -> str:
        return f"step {sum(m.author_name == 'worker' for m in messages) + 1}"

    return Agent(FunctionChatClient(model), name="worker")


async def test_autonomous_mode_keeps_the_owner_working_until_the_condition() -> None:
    workflow = (
        HandoffBuilder(
            participants=[_worker(), Agent(ScriptedChatClient([]), name="idle")],
            termination_condition=lambda conversation: conversation[-1].text == "step 3",
        )
        .with_autonomous_mode(agents=["worker"], prompt="Keep going.")
        .build()
    )
    result = await workflow.run("Do three steps")
    assert result.get_request_info_events() == []
    (conversation,) = result.get_outputs()
    assert [m.text for m in conversation] == [
        "Do three steps",
        "step 1",
        "Keep going.",
        "step 2",
        "Keep going.",
        "step 3",
    ]


async def test_autonomous_turn_limit_then_the_user_is_asked_and_the_count_restarts() -> None:
    workflow = (
        HandoffBuilder(participants=[_worker(), Agent(ScriptedChatClient([]), name="idle")])
        .with_autonomous_mode(turn_limit=2)
        .build()
    )
    result = await workflow.run("Work")
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.text == "step 3"  # the first answer plus two autonomous turns
    result = await workflow.run(responses={request.request_id: "More"})
    (request,) = result.get_request_info_events()
    assert request.data.agent_response.text == "step 6"
    with pytest.raises(ValueError, match="turn_limit"):
        HandoffBuilder(participants=handoff_agents()).with_autonomous_mode(turn_limit=0)


def test_handoff_descriptions_come_from_the_call_or_a_handoff_configuration() -> None:
    triage, billing, tech = handoff_agents()
    builder = (
        HandoffBuilder(participants=[triage, billing, tech])
        .add_handoff(triage, [billing], description="Refunds and invoices.")
        .add_handoff(triage, [HandoffConfiguration(target=tech, description="Broken gadgets.")])
        .add_handoff("billing", HandoffConfiguration(target="triage"))
    )
    assert builder.handoff_targets()["triage"] == ["billing", "tech"]
    tools = {
        e.id: {t.name: t.description for t in e.tools}
        for e in builder.build().executors.values()
        if hasattr(e, "tools")
    }
    assert tools["triage"]["handoff_to_billing"].endswith("who handles: Refunds and invoices.")
    assert tools["triage"]["handoff_to_tech"].endswith("who handles: Broken gadgets.")
    # A configuration without a description says what a plain target would: the target's own description.
    plain = HandoffBuilder(participants=[triage, billing, tech]).add_handoff("billing", "triage").build()
    assert tools["billing"]["handoff_to_triage"] == plain.executors["billing"].tools[0].description  # type: ignore[attr-defined]
    assert HandoffConfiguration(target="tech") == HandoffConfiguration(target=tech, description="other")


def test_clean_conversation_for_handoff_keeps_text_only() -> None:
    conversation = [
        Message("user", ["Refund order 7"], author_name="ann"),
        Message("assistant", [Content.from_function_call("c1", "lookup", {"order": 7})]),
        Message("tool", [Content.from_function_result("c1", result="paid")]),
        Message("assistant", ["It was paid; ", Content.from_function_call("c2", "handoff_to_billing", {})]),
    ]
    cleaned = clean_conversation_for_handoff(conversation)
    assert [(m.role, m.text, m.author_name) for m in cleaned] == [
        ("user", "Refund order 7", "ann"),
        ("assistant", "It was paid; ", None),
    ]
    assert all(c.type == "text" for m in cleaned for c in m.contents)
    assert conversation[3].contents[1].type == "function_call"  # the original is left as it was


async def test_user_replies_go_back_to_the_agent_that_asked_unless_turned_off() -> None:
    triage, billing, tech = handoff_agents()
    builder = HandoffBuilder(participants=[triage, billing, tech]).with_start_agent(triage)
    workflow = builder.enable_return_to_previous().build()
    (request,) = (await workflow.run("I need a refund")).get_request_info_events()
    assert request.data.agent_name == "billing"
    result = await workflow.run(responses={request.request_id: "My router is broken"})
    assert [(e.data.source, e.data.target) for e in result.get_events("handoff_sent")] == [("billing", "tech")]

    workflow = builder.enable_return_to_previous(False).build()
    (request,) = (await workflow.run("I need a refund")).get_request_info_events()
    assert request.data.agent_name == "billing"
    result = await workflow.run(responses={request.request_id: "My router is broken"})
    # triage answers the reply and hands it on; billing is not run again.
    assert [(e.data.source, e.data.target) for e in result.get_events("handoff_sent")] == [("triage", "tech")]
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "tech"
    # A reply that needs no handoff is answered by triage itself, which then owns the conversation.
    result = await workflow.run(responses={request.request_id: "Thanks"})
    (request,) = result.get_request_info_events()
    assert (request.data.agent_name, request.data.agent_response.text) == ("triage", "How can I help?")


async def test_a_long_name_gives_a_handoff_tool_name_providers_accept() -> None:
    long_name = "specialist_for_" + "x" * 60
    seen: dict[str, list[list[str]]] = {}
    triage = _recording("triage", lambda m, o: Content.from_function_call("c1", o["tools"][0].name), seen)
    specialist = Agent(ScriptedChatClient(["On it."]), name=long_name)
    result = await HandoffBuilder(participants=[triage, specialist]).build().run("help")
    (tool_name,) = seen["triage"][0]
    assert len(tool_name) == 64 and tool_name == f"handoff_to_{long_name}"[:64]
    assert [(e.data.source, e.data.target) for e in result.get_events("handoff_sent")] == [("triage", long_name)]
    with pytest.raises(ValueError, match="clashing handoff tool names"):
        HandoffBuilder(participants=[specialist, Agent(ScriptedChatClient([]), name=long_name + "y")])
