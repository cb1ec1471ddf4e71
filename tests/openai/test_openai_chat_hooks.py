"""OpenAIChatCompletionClient's conversion hooks, over real HTTP: ``response_parser`` and ``message_preparer``.

The scripted provider puts its reasoning in a field of its own, ``thinking``, which the SDK keeps as an extra
attribute and the client does not read (it reads ``reasoning_content``, ``reasoning`` and ``reasoning_details``).
A parser surfaces it as reasoning; a preparer sends it back on the next turn, where the server records it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

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

THOUGHT = "Six times seven is 42."
DETAILS = [{"type": "reasoning.text", "text": "Rome is mild.", "format": "unknown", "index": 0}]
# Marks the reasoning a parser surfaced, so the preparer echoes exactly that back.
FIELD = "source_field"


def surface_thinking(message: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
    """The provider's ``thinking`` as reasoning, marked with the field it came from."""
    thinking = getattr(message, "thinking", None)
    if not isinstance(thinking, str) or not thinking:
        return contents
    return [Content.from_text_reasoning(text=thinking, additional_properties={FIELD: "thinking"}), *contents]


def echo_thinking(message: Message, dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send the surfaced reasoning back under the provider's field, on the assistant dict of its turn."""
    fields: dict[str, str] = {}
    for content in message.contents:
        if content.type == "text_reasoning" and FIELD in content.additional_properties and content.text:
            field = content.additional_properties[FIELD]
            fields[field] = fields.get(field, "") + content.text
    if fields and dicts and dicts[-1]["role"] == "assistant":
        dicts[-1].update(fields)
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
        (m.role, c.type, c.text, c.protected_data, c.call_id, c.name, c.arguments, dict(c.additional_properties))
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
        return surface_thinking(message, contents)

    server.script(Reply(text="42.", provider_fields={"thinking": THOUGHT}))
    server.script(Reply(text="42.", provider_fields={"thinking": THOUGHT}))
    plain = await make_client().get_response("What is 6 x 7?")
    parsed = await make_client(response_parser=parser).get_response("What is 6 x 7?")

    # Without a parser the field is not read; with it, it is reasoning beside the unchanged answer.
    assert [c.type for c in plain.messages[0].contents] == ["text"]
    reasoning, answer = parsed.messages[0].contents
    assert reasoning.type == "text_reasoning" and reasoning.text == THOUGHT
    assert reasoning.additional_properties == {FIELD: "thinking"}
    assert answer.type == "text" and parsed.text == "42."
    # Called once, with the SDK's message itself.
    (message,) = seen
    assert isinstance(message, ChatCompletionMessage) and message.content == "42."


async def test_a_parser_runs_on_every_streamed_delta(server: OpenAIServer, make_client: Any):
    seen: list[object] = []

    def parser(delta: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
        seen.append(delta)
        return surface_thinking(delta, contents)

    server.script(Reply(text="42 it is.", chunk_size=3, provider_fields={"thinking": THOUGHT}))
    stream = make_client(response_parser=parser).get_response("What is 6 x 7?", stream=True)
    updates = [update async for update in stream]
    final = await stream.get_final_response()

    # The role delta, the provider's delta, three text deltas and the finish delta (the usage chunk has none).
    assert len(seen) == 6 and all(isinstance(delta, ChoiceDelta) for delta in seen)
    surfaced = [c for u in updates for c in u.contents if c.type == "text_reasoning"]
    assert [c.text for c in surfaced] == [THOUGHT]
    assert [c.type for c in final.messages[0].contents] == ["text_reasoning", "text"]
    assert final.messages[0].contents[0].text == THOUGHT
    assert final.text == "42 it is."


@pytest.mark.parametrize("stream", [False, True])
async def test_a_preparer_echoes_the_reasoning_on_the_next_turn(server: OpenAIServer, make_client: Any, stream: bool):
    prepared: list[tuple[str, list[dict[str, Any]]]] = []

    def preparer(message: Message, dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prepared.append((message.role, [dict(d) for d in dicts]))
        return echo_thinking(message, dicts)

    client = make_client(response_parser=surface_thinking, message_preparer=preparer)
    agent = Agent(client, instructions="Answer briefly.")
    session = agent.create_session()
    server.script(Reply(text="42.", provider_fields={"thinking": THOUGHT}), Reply(text="84."))
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
        {"role": "assistant", "content": "42.", "thinking": THOUGHT},
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
        Message(
            "assistant",
            [
                Content.from_reasoning("Oslo needs a lookup.", protected_data=json.dumps(DETAILS)),
                Content.from_function_call("c1", "weather", {"city": "Oslo"}),
            ],
        ),
        Message("tool", [Content.from_function_result("c1", result="snow")]),
        Message("user", ["And in Rome?"]),
    ]
    reply = Reply(text="Cold.", reasoning="Rome is mild.", provider_fields={"reasoning_details": DETAILS})
    server.script(reply, reply)
    plain = await ask(make_client(), history, stream=stream)
    hooked = await ask(make_client(response_parser=same_contents, message_preparer=same_dicts), history, stream=stream)

    assert summary(hooked) == summary(plain)
    # Streamed, the reasoning_details come whole when the answer finishes, in a reasoning content of their own.
    kept = json.dumps(DETAILS)
    assert [(c.type, c.text, c.protected_data) for c in plain.messages[0].contents] == (
        [("text_reasoning", "Rome is mild.", None), ("text", "Cold.", None), ("text_reasoning", None, kept)]
        if stream
        else [("text_reasoning", "Rome is mild.", kept), ("text", "Cold.", None)]
    )
    plain_body, hooked_body = (request.body for request in server.requests)
    assert hooked_body == plain_body
    assert plain_body["messages"][2]["reasoning_details"] == DETAILS
    assert calls["preparer"] == len(history)
    # Once for the answer; streamed, once per delta: role, four reasoning pieces, the provider's, two text, finish.
    assert calls["parser"] == (9 if stream else 1)


def test_the_hook_types_are_what_the_client_takes() -> None:
    parser: OpenAIChatResponseContentsParser = surface_thinking
    preparer: OpenAIChatMessagePreparer = echo_thinking
    client = OpenAIChatCompletionClient("m", base_url="http://localhost:1/v1", response_parser=parser)
    assert client.response_parser is parser and client.message_preparer is None
    client = OpenAIChatCompletionClient("m", base_url="http://localhost:1/v1", message_preparer=preparer)
    assert client.message_preparer is preparer and client.response_parser is None


# Mistral's reasoning models answer with typed parts instead of text.
PARTS = [
    {"type": "thinking", "thinking": [{"type": "text", "text": "Six sevens."}]},
    {"type": "text", "text": "42."},
]


def expand_parts(message: ChatCompletionMessage | ChoiceDelta, contents: list[Content]) -> list[Content]:
    """Typed-part content as reasoning and text."""
    parts: object = message.content
    if not isinstance(parts, list):
        return contents
    expanded = list(contents)
    for part in cast(list[dict[str, Any]], parts):
        if part.get("type") == "thinking":
            text = "".join(piece.get("text", "") for piece in part.get("thinking", []))
            expanded.append(Content.from_text_reasoning(text=text))
        elif part.get("type") == "text":
            expanded.append(Content.from_text(part["text"]))
    return expanded


@pytest.mark.parametrize("stream", [False, True])
async def test_a_parser_can_read_content_sent_as_typed_parts(server: OpenAIServer, make_client: Any, stream: bool):
    server.script(Reply(content_parts=PARTS), Reply(content_parts=PARTS))
    plain = await ask(make_client(), "6 x 7?", stream=stream)
    parsed = await ask(make_client(response_parser=expand_parts), "6 x 7?", stream=stream)

    # The client reads text only: typed parts are neither text nor an error until a parser reads them.
    assert [c for m in plain.messages for c in m.contents] == [] and plain.text == ""
    assert [(c.type, c.text) for c in parsed.messages[0].contents] == [
        ("text_reasoning", "Six sevens."),
        ("text", "42."),
    ]
    assert parsed.text == "42."
