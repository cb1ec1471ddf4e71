"""OpenAIChatCompletionClient's conversion hooks, over real HTTP: ``response_parser`` and ``message_preparer``.

The scripted provider answers like OpenRouter: besides the standard fields, the assistant message carries
``reasoning_details``, which the SDK keeps as an extra attribute and the client does not read. A parser
surfaces it as reasoning; a preparer sends it back on the next turn, where the server records it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage
from openai.types.chat.chat_completion_chunk import ChoiceDelta

from agentnb import Agent
from agentnb._types import ChatResponse, Content, Message
from agentnb.openai import (
    OpenAIChatCompletionClient,
    OpenAIChatMessagePreparer,
    OpenAIChatResponseContentsParser,
)
from tests.openai_server import OpenAIServer, Reply

DETAILS = [{"type": "reasoning.text", "text": "Six times seven is 42.", "format": "unknown", "index": 0}]


def surface_reasoning_details(message: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
    """Reasoning text from OpenRouter's ``reasoning_details``, keeping the details to echo them back."""
    details: list[dict[str, Any]] = getattr(message, "reasoning_details", None) or []
    text = "".join(d.get("text", "") for d in details if d.get("type") == "reasoning.text")
    if not text:
        return contents
    return [Content.from_text_reasoning(text=text, additional_properties={"reasoning_details": details}), *contents]


def echo_reasoning_details(message: Message, dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send a message's ``reasoning_details`` back on its assistant dict, as the provider asks."""
    details = [
        detail
        for content in message.contents
        if content.type == "text_reasoning"
        for detail in content.additional_properties.get("reasoning_details", ())
    ]
    if details and dicts and dicts[-1]["role"] == "assistant":
        dicts[-1]["reasoning_details"] = details
    return dicts


async def ask(client: OpenAIChatCompletionClient, messages: Any, *, stream: bool) -> ChatResponse:
    if stream:
        response_stream = client.get_response(messages, stream=True)
        async for _ in response_stream:
            pass
        return await response_stream.get_final_response()
    return await client.get_response(messages)


def summary(response: ChatResponse) -> list[tuple[Any, ...]]:
    return [
        (m.role, c.type, c.text, c.call_id, c.name, c.arguments, dict(c.additional_properties))
        for m in response.messages
        for c in m.contents
    ]


@pytest.fixture
async def make_client(server: OpenAIServer) -> AsyncIterator[Any]:
    made: list[OpenAIChatCompletionClient] = []

    def make(**hooks: Any) -> OpenAIChatCompletionClient:
        client = OpenAIChatCompletionClient(
            "test-model", base_url=server.base_url, api_key="sk-test", max_retries=0, **hooks
        )
        made.append(client)
        return client

    yield make
    for client in made:
        await client.close()


async def test_a_parser_surfaces_a_provider_field_as_reasoning(server: OpenAIServer, make_client: Any):
    seen: list[object] = []

    def parser(message: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
        seen.append(message)
        return surface_reasoning_details(message, contents)

    server.script(Reply(text="42.", provider_fields={"reasoning_details": DETAILS}))
    server.script(Reply(text="42.", provider_fields={"reasoning_details": DETAILS}))
    plain = await make_client().get_response("What is 6 x 7?")
    parsed = await make_client(response_parser=parser).get_response("What is 6 x 7?")

    # Without a parser the field is not read; with it, it is reasoning beside the unchanged answer.
    assert [c.type for c in plain.messages[0].contents] == ["text"]
    reasoning, answer = parsed.messages[0].contents
    assert reasoning.type == "text_reasoning" and reasoning.text == "Six times seven is 42."
    assert reasoning.additional_properties["reasoning_details"] == DETAILS
    assert answer.type == "text" and parsed.text == "42."
    # Called once, with the SDK's message itself.
    (message,) = seen
    assert isinstance(message, ChatCompletionMessage) and message.content == "42."


async def test_a_parser_runs_on_every_streamed_delta(server: OpenAIServer, make_client: Any):
    seen: list[object] = []

    def parser(delta: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
        seen.append(delta)
        return surface_reasoning_details(delta, contents)

    server.script(Reply(text="42 it is.", chunk_size=3, provider_fields={"reasoning_details": DETAILS}))
    stream = make_client(response_parser=parser).get_response("What is 6 x 7?", stream=True)
    updates = [update async for update in stream]
    final = await stream.get_final_response()

    # The role delta, the provider's delta, three text deltas and the finish delta (the usage chunk has none).
    assert len(seen) == 6 and all(isinstance(delta, ChoiceDelta) for delta in seen)
    surfaced = [c for u in updates for c in u.contents if c.type == "text_reasoning"]
    assert [c.text for c in surfaced] == ["Six times seven is 42."]
    assert [c.type for c in final.messages[0].contents] == ["text_reasoning", "text"]
    assert final.messages[0].contents[0].text == "Six times seven is 42."
    assert final.text == "42 it is."


@pytest.mark.parametrize("stream", [False, True])
async def test_a_preparer_echoes_the_reasoning_on_the_next_turn(server: OpenAIServer, make_client: Any, stream: bool):
    prepared: list[tuple[str, list[dict[str, Any]]]] = []

    def preparer(message: Message, dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prepared.append((message.role, [dict(d) for d in dicts]))
        return echo_reasoning_details(message, dicts)

    client = make_client(response_parser=surface_reasoning_details, message_preparer=preparer)
    agent = Agent(client, instructions="Answer briefly.")
    session = agent.create_session()
    server.script(Reply(text="42.", provider_fields={"reasoning_details": DETAILS}), Reply(text="84."))
    first = agent.run("What is 6 x 7?", session=session, stream=True) if stream else None
    if first is not None:
        async for _ in first:
            pass
        await first.get_final_response()
    else:
        await agent.run("What is 6 x 7?", session=session)
    second = await agent.run("And doubled?", session=session)

    assert second.text == "84."
    first_sent, second_sent = (request.body["messages"] for request in server.requests)
    # Nothing to echo on the first turn: the preparer returned the default dicts as they were.
    assert first_sent == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 6 x 7?"},
    ]
    # On the second the provider gets its own field back on the assistant message it came with.
    assert second_sent == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 6 x 7?"},
        {"role": "assistant", "content": "42.", "reasoning_details": DETAILS},
        {"role": "user", "content": "And doubled?"},
    ]
    # Called once per message of each request, system included, with the default dicts.
    assert [role for role, _ in prepared] == ["system", "user", "system", "user", "assistant", "user"]
    assert prepared[4][1] == [{"role": "assistant", "content": "42."}]


async def test_a_preparer_can_split_and_drop_messages(server: OpenAIServer, make_client: Any):
    def preparer(message: Message, dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if message.role == "system":
            return []  # a gateway that takes no system prompt
        if message.role == "user":
            return [*dicts, {"role": "user", "content": "(reply in French)"}]
        return dicts

    server.script(Reply(text="Bonjour."))
    await make_client(message_preparer=preparer).get_response(
        [Message("system", ["Be kind."]), Message("user", ["Hello"])]
    )
    assert server.requests[0].body["messages"] == [
        {"role": "user", "content": "Hello"},
        {"role": "user", "content": "(reply in French)"},
    ]


@pytest.mark.parametrize("stream", [False, True])
async def test_hooks_that_return_their_input_change_nothing(server: OpenAIServer, make_client: Any, stream: bool):
    calls = {"parser": 0, "preparer": 0}

    def same_contents(message: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
        calls["parser"] += 1
        return contents

    def same_dicts(message: Message, dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        calls["preparer"] += 1
        return dicts

    history = [
        Message("system", ["Use the tool."]),
        Message("user", ["Weather?"]),
        Message("assistant", [Content.from_function_call("c1", "weather", {"city": "Oslo"})]),
        Message("tool", [Content.from_function_result("c1", result="snow")]),
        Message("user", ["And in Rome?"]),
    ]
    reply = Reply(text="Cold.", reasoning="Rome is mild.", provider_fields={"reasoning_details": DETAILS})
    server.script(reply, reply)
    plain = await ask(make_client(), history, stream=stream)
    hooked = await ask(make_client(response_parser=same_contents, message_preparer=same_dicts), history, stream=stream)

    assert summary(hooked) == summary(plain)
    assert [(c.type, c.text) for c in plain.messages[0].contents] == [
        ("text_reasoning", "Rome is mild."),
        ("text", "Cold."),
    ]
    plain_body, hooked_body = (request.body for request in server.requests)
    assert hooked_body == plain_body
    assert calls["preparer"] == len(history)
    # Once for the answer; streamed, once per delta: role, four reasoning pieces, the provider's, two text, finish.
    assert calls["parser"] == (9 if stream else 1)


def test_the_hook_types_are_what_the_client_takes() -> None:
    parser: OpenAIChatResponseContentsParser = surface_reasoning_details
    preparer: OpenAIChatMessagePreparer = echo_reasoning_details
    client = OpenAIChatCompletionClient("m", base_url="http://localhost:1/v1", response_parser=parser)
    assert client.response_parser is parser and client.message_preparer is None
    client = OpenAIChatCompletionClient("m", base_url="http://localhost:1/v1", message_preparer=preparer)
    assert client.message_preparer is preparer and client.response_parser is None
