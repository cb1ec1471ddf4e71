"""Orchestrations on a real provider client: the official ``openai`` SDK over HTTP to a loopback server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from agentnb import Agent
from agentnb.openai import OpenAIChatCompletionClient
from agentnb.workflows import GroupChatBuilder, GroupChatDecision, HandoffBuilder, MagenticBuilder
from tests.openai_server import OpenAIServer, RecordedRequest, Reply, ToolCall


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def server(openai_server: OpenAIServer) -> Iterator[OpenAIServer]:
    openai_server.reset()
    yield openai_server
    assert not openai_server.validation_errors, openai_server.validation_errors
    assert not openai_server.unexpected and not openai_server.pending
    openai_server.reset()


@pytest.fixture
async def make_agent(server: OpenAIServer) -> AsyncIterator[Callable[..., Agent]]:
    """Agents on their own OpenAI SDK clients (closed after the test)."""
    clients: list[OpenAIChatCompletionClient] = []

    def make(name: str, **kwargs: object) -> Agent:
        client = OpenAIChatCompletionClient("test-model", base_url=server.base_url, api_key="test", max_retries=0)
        clients.append(client)
        return Agent(client, f"You are {name}.", name=name, **kwargs)  # type: ignore[arg-type]

    yield make
    for client in clients:
        await client.close()


async def test_handoff_tools_and_the_handed_over_conversation_on_the_wire(
    server: OpenAIServer, make_agent: Callable[..., Agent]
) -> None:
    server.script(
        Reply(text="Passing you to billing.", tool_calls=[ToolCall("handoff_to_billing", {}, "call_h1")]),
        Reply(text="Which order should I refund?"),
    )
    triage = make_agent("triage")
    billing = make_agent("billing", description="Refunds and invoices.")
    workflow = HandoffBuilder(participants=[triage, billing]).add_handoff(triage, [billing]).build()
    result = await workflow.run("I want a refund")
    (request,) = result.get_request_info_events()
    assert request.data.agent_name == "billing"
    assert request.data.agent_response.text == "Which order should I refund?"

    first, second = (r.body for r in server.requests)
    (spec,) = first["tools"]
    assert spec["function"]["name"] == "handoff_to_billing"
    assert (
        spec["function"]["description"] == "Hand the conversation over to billing, who handles: Refunds and invoices."
    )
    assert spec["function"]["parameters"]["properties"] == {}
    assert "tools" not in second  # billing may not hand off to anyone
    roles = [(m["role"], m.get("tool_call_id")) for m in second["messages"]]
    assert roles == [("system", None), ("user", None), ("assistant", None), ("tool", "call_h1")]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "handoff_to_billing"
    assert second["messages"][3]["content"] == "Handed off to billing."


async def test_orchestrator_agent_decides_through_a_strict_json_schema(
    server: OpenAIServer, make_agent: Callable[..., Agent]
) -> None:
    def decide(request: RecordedRequest) -> Reply:
        spoken = sum(1 for m in request.body["messages"] if m["role"] == "assistant")
        decision = (
            GroupChatDecision(next_speaker="poet", reason="first")
            if spoken == 0
            else GroupChatDecision(terminate=True, reason="done", final_message="Thanks!")
        )
        return Reply(text=decision.model_dump_json())

    server.script(decide, Reply(text="Roses are red."), decide)
    workflow = GroupChatBuilder(
        participants=[make_agent("poet")], orchestrator_agent=make_agent("moderator"), max_rounds=3
    ).build()
    (conversation,) = (await workflow.run("A poem, please")).get_outputs()
    assert [(m.author_name, m.text) for m in conversation] == [
        (None, "A poem, please"),
        ("poet", "Roses are red."),
        ("moderator", "Thanks!"),
    ]
    response_format = server.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]
    assert schema["strict"] is True and schema["name"] == "GroupChatDecision"
    assert sorted(schema["schema"]["required"]) == ["final_message", "next_speaker", "reason", "terminate"]
    assert "default" not in json.dumps(schema["schema"])  # strict mode rejects defaults
    assert schema["schema"]["description"] == "The structured answer an orchestrator agent gives each round."


async def test_magentic_manager_ledgers_over_http(server: OpenAIServer, make_agent: Callable[..., Agent]) -> None:
    def manager(request: RecordedRequest) -> Reply:
        fmt = request.body.get("response_format", {}).get("json_schema", {}).get("name")
        if fmt == "MagenticTaskLedger":
            return Reply(text=json.dumps({"facts": "none", "plan": ["coder: write it"]}))
        if fmt == "MagenticProgressLedger":
            done = any(m["role"] == "assistant" for m in request.body["messages"])
            return Reply(
                text=json.dumps(
                    {
                        "is_request_satisfied": done,
                        "is_in_loop": False,
                        "is_progress_being_made": True,
                        "next_speaker": None if done else "coder",
                        "instruction": "Write hello world.",
                        "reason": "",
                    }
                )
            )
        return Reply(text="print('hello world') is the answer.")

    server.script(manager, manager, Reply(text="print('hello world')"), manager, manager)
    workflow = MagenticBuilder(participants=[make_agent("coder")], manager_agent=make_agent("lead")).build()
    (conversation,) = (await workflow.run("Hello world in Python")).get_outputs()
    assert [m.author_name for m in conversation] == [None, "lead", "coder", "lead"]
    assert conversation[-1].text == "print('hello world') is the answer."
