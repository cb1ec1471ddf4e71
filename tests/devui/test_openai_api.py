"""The DevUI's OpenAI-compatible API, driven by the official ``openai`` SDK over real HTTP.

One background DevUI server (the demo agents and workflows on the offline models, a token set) serves the
whole module; each test talks to it the way any Responses API client would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from agentnb import Agent, Message
from agentnb.devui import Entity, serve, stop
from agentnb.devui.demos import demo_catalog
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.store import RunStore
from agentnb.workflows import WorkflowBuilder

pytestmark = [pytest.mark.timeout(120)]

TOKEN = "api-test-token"


async def echo_model(messages: list[Message], options: dict[str, Any]) -> Any:
    for word in f"You said: {messages[-1].text}".split(" "):
        yield word + " "


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    catalog = demo_catalog()
    echo = Agent(FunctionChatClient(echo_model), name="echo")
    catalog.entities.append(Entity(id="echo", name="echo", kind="agent", obj=echo))
    writer = Agent(FunctionChatClient(echo_model), name="writer")
    reviewer = Agent(ScriptedChatClient(["Looks good to me."], chunk_size=4), name="reviewer")
    pair = WorkflowBuilder(start_executor=writer, name="pair").add_edge(writer, reviewer).build()
    catalog.entities.append(Entity(id="pair", name="pair", kind="workflow", obj=pair))
    url = serve(catalog, store=RunStore(":memory:"), token=TOKEN)
    try:
        yield url
    finally:
        stop(url)


@pytest.fixture
def client(server: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server + "v1", api_key=TOKEN, max_retries=0, timeout=60) as client:
        yield client


def items_of(response: Any, kind: str) -> list[Any]:
    return [item for item in response.output if item.type == kind]


def test_models_lists_the_entities(client: openai.OpenAI) -> None:
    ids = {model.id for model in client.models.list()}
    assert {"assistant", "mailer", "greeting-pipeline", "human-review"} <= ids


def test_plain_response(client: openai.OpenAI) -> None:
    response = client.responses.create(model="echo", input="Hello there")
    assert response.status == "completed"
    assert response.output_text.strip() == "You said: Hello there"


def test_streamed_response_arrives_in_pieces(client: openai.OpenAI) -> None:
    deltas: list[str] = []
    kinds: list[str] = []
    with client.responses.create(model="echo", input="Tell me something", stream=True) as stream:
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            if event.type == "response.completed":
                final = event.response
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert len(deltas) > 1
    assert "".join(deltas) == final.output_text
    assert "response.output_text.done" in kinds


def test_tool_calls_run_on_the_server_and_come_back_as_items(client: openai.OpenAI) -> None:
    response = client.responses.create(model="assistant", input="What's the weather in Paris?")
    calls = items_of(response, "function_call")
    assert calls[0].name == "get_weather"
    assert json.loads(calls[0].arguments) == {"city": "Paris"}
    results = items_of(response, "function_call_output")
    assert results and results[0].call_id == calls[0].call_id and "sunny" in results[0].output
    assert "sunny, 21 °C" in response.output_text
    assert response.usage is not None and response.usage.total_tokens > 0


def test_approval_round_trip(client: openai.OpenAI) -> None:
    first = client.responses.create(model="mailer", input="Email Bob the report")
    (request,) = items_of(first, "mcp_approval_request")
    assert request.name == "send_email" and "Bob" in request.arguments
    assert "was queued" not in json.dumps(first.model_dump())  # the tool has not run
    # Anything but an answer is refused while the request waits.
    with pytest.raises(openai.BadRequestError, match="waits on approval request"):
        client.responses.create(model="mailer", input="hello?", previous_response_id=first.id)
    second = client.responses.create(
        model="mailer",
        previous_response_id=first.id,
        input=[{"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}],
    )
    assert "was queued" in second.output_text
    assert second.conversation is not None and second.conversation.id == first.conversation.id
    items = client.conversations.items.list(first.conversation.id, order="asc")
    kinds = [item.type for item in items.data]
    assert kinds[0] == "message" and "mcp_approval_request" in kinds and "mcp_approval_response" in kinds


def test_denied_approval_does_not_run_the_tool(client: openai.OpenAI) -> None:
    conversation = client.conversations.create()
    first = client.responses.create(model="mailer", input="Email Carol the numbers", conversation=conversation.id)
    (request,) = items_of(first, "mcp_approval_request")
    second = client.responses.create(
        model="mailer",
        conversation=conversation.id,
        input=[{"type": "mcp_approval_response", "approval_request_id": request.id, "approve": False}],
    )
    assert "was queued" not in second.output_text
    assert second.status == "completed"


def test_a_workflow_streams_its_events_and_answers_with_its_output(client: openai.OpenAI) -> None:
    workflow_events: list[dict[str, Any]] = []
    with client.responses.create(model="greeting-pipeline", input=json.dumps({"name": "Grace"}), stream=True) as stream:
        for event in stream:
            if event.type == "response.workflow_event":
                workflow_events.append(event.model_dump()["event"])
            if event.type == "response.completed":
                final = event.response
    assert "HELLO GRACE!!" in final.output_text
    invoked = [e["executor_id"] for e in workflow_events if e["type"] == "executor_invoked"]
    assert invoked == ["prepare", "shout", "decorate"]
    assert not any("__agentnb__" in json.dumps(e) for e in workflow_events)


def test_streamed_agents_in_a_workflow_answer_one_message_each(client: openai.OpenAI) -> None:
    deltas = 0
    with client.responses.create(model="pair", input="hi", stream=True) as stream:
        for event in stream:
            deltas += event.type == "response.output_text.delta"
            if event.type == "response.completed":
                final = event.response
    messages = items_of(final, "message")
    # Each agent's updates are deltas of its own message, not one message per update.
    assert [m.content[0].text for m in messages] == ["You said: hi ", "Looks good to me."]
    assert deltas > len(messages)


def test_a_workflow_asks_for_input_and_continues_with_the_answer(client: openai.OpenAI) -> None:
    first = client.responses.create(model="human-review", input="agents")
    (request,) = items_of(first, "workflow_request")
    data = request.model_dump()
    assert data["request"]["draft"] == "A short note about agents."  # fields, no type tags
    assert "__agentnb__" not in json.dumps(data) and data["response_schema"]["properties"]["approved"]
    with pytest.raises(openai.BadRequestError, match="waits on request"):
        client.responses.create(model="human-review", input="again", previous_response_id=first.id)
    with pytest.raises(openai.BadRequestError, match="does not fit"):
        client.responses.create(
            model="human-review",
            previous_response_id=first.id,
            input=[{"type": "workflow_response", "request_id": request.id, "response": {"approved": "maybe"}}],
        )
    answer = {"approved": True, "comment": "ok"}
    second = client.responses.create(
        model="human-review",
        previous_response_id=first.id,
        input=[{"type": "workflow_response", "request_id": request.id, "response": answer}],
    )
    assert second.output_text == "published: A short note about agents. (ok)"


def test_a_wrong_token_is_refused(server: str) -> None:
    client = openai.OpenAI(base_url=server + "v1", api_key="wrong", max_retries=0)
    with client, pytest.raises(openai.AuthenticationError):
        client.responses.create(model="assistant", input="Hello")
    assert httpx.get(server + "v1/models", timeout=10).status_code == 401


def test_an_unknown_model_is_not_found(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="known:"):
        client.responses.create(model="nobody", input="Hello")


def test_a_bad_workflow_input_is_a_bad_request(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="not JSON"):
        client.responses.create(model="greeting-pipeline", input="{not json")
