"""OpenAIChatClient (Responses API) against the scripted server: the real SDK over a real socket."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import Agent, ChatResponse, Content, Message, tool
from agentnb.exceptions import ContentFilterError
from agentnb.openai import OpenAIChatClient
from tests.openai_server import OpenAIServer, Reply, ToolCall, Usage

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


async def ask(client: OpenAIChatClient, messages: Any, *, stream: bool, **kwargs: Any) -> ChatResponse:
    if stream:
        response_stream = client.get_response(messages, stream=True, **kwargs)
        async for _ in response_stream:
            pass
        return await response_stream.get_final_response()
    return await client.get_response(messages, **kwargs)


@pytest.mark.parametrize("stream", [False, True])
async def test_text_reply_usage_and_ids(server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool):
    server.script(Reply(text="Hello from Responses!", usage=Usage(30, 9, cached_tokens=12, reasoning_tokens=4)))
    response = await ask(responses_client, "Hi", stream=stream, options={"instructions": "Be kind."})

    assert response.text == "Hello from Responses!"
    assert response.finish_reason == "stop"
    assert response.model_id == "test-model"
    assert response.response_id and response.response_id.startswith("resp_")
    assert response.messages[0].message_id == response.response_id
    assert response.conversation_id is None  # no server-side state unless asked for
    assert response.usage_details == {
        "input_token_count": 30,
        "output_token_count": 9,
        "total_token_count": 39,
        "cached_input_token_count": 12,
        "reasoning_token_count": 4,
    }
    (request,) = server.requests
    assert request.path == "/v1/responses"
    assert request.body["input"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Hi"},
    ]
    assert request.body.get("stream", False) is stream
    assert "previous_response_id" not in request.body


async def test_streaming_text_deltas(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text="alpha beta gamma", chunk_size=6))
    stream = responses_client.get_response("go", stream=True)
    pieces = [u.text async for u in stream if u.text]
    assert pieces == ["alpha ", "beta g", "amma"]
    assert (await stream.get_final_response()).text == "alpha beta gamma"


async def test_history_images_and_tool_results_on_the_wire(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text="A cat."))
    await responses_client.get_response(
        [
            Message("user", ["Weather?"]),
            Message("assistant", [Content.from_function_call("call_1", "get_weather", '{"city": "Oslo"}')]),
            Message("tool", [Content.from_function_result("call_1", result="Snow")]),
            Message("assistant", ["Snowing in Oslo."]),
            Message(
                "user",
                ["And this?", Content.from_data(PNG, "image/png"), Content.from_uri("https://example.com/a.png")],
            ),
        ]
    )
    items = server.requests[0].body["input"]
    assert items[0] == {"role": "user", "content": "Weather?"}
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Oslo"}',
    }
    assert items[2] == {"type": "function_call_output", "call_id": "call_1", "output": "Snow"}
    assert items[3] == {"role": "assistant", "content": "Snowing in Oslo."}
    parts = items[4]["content"]
    assert parts[0] == {"type": "input_text", "text": "And this?"}
    assert parts[1]["type"] == "input_image" and parts[1]["image_url"].startswith("data:image/png;base64,")
    assert parts[2] == {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"}


@pytest.mark.parametrize("stream", [False, True])
async def test_parallel_tool_calls_through_an_agent(
    server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool
):
    seen: list[str] = []

    @tool
    def stock_price(symbol: str) -> float:
        """Return a stock price."""
        seen.append(symbol)
        return {"MSFT": 410.5, "AAPL": 190.25}[symbol]

    server.script(
        Reply(tool_calls=[ToolCall("stock_price", {"symbol": "MSFT"}), ToolCall("stock_price", {"symbol": "AAPL"})]),
        Reply(text="MSFT 410.5, AAPL 190.25"),
    )
    agent = Agent(responses_client, "You answer with prices.", tools=[stock_price])
    if stream:
        run = agent.run("Prices?", stream=True)
        updates = [u async for u in run]
        response = await run.get_final_response()
        # The arguments streamed as deltas but every call arrives whole.
        assert any(c.type == "function_call" for u in updates for c in u.contents)
    else:
        response = await agent.run("Prices?")
    assert sorted(seen) == ["AAPL", "MSFT"]
    assert response.text == "MSFT 410.5, AAPL 190.25"

    first, second = server.requests
    (spec,) = first.body["tools"]
    assert spec["type"] == "function" and spec["name"] == "stock_price" and spec["strict"] is True
    assert spec["parameters"]["required"] == ["symbol"]
    calls = [i for i in second.body["input"] if i.get("type") == "function_call"]
    outputs = {i["call_id"]: i["output"] for i in second.body["input"] if i.get("type") == "function_call_output"}
    assert [json.loads(c["arguments"]) for c in calls] == [{"symbol": "MSFT"}, {"symbol": "AAPL"}]
    assert sorted(outputs.values()) == ["190.25", "410.5"]
    assert set(outputs) == {c["call_id"] for c in calls}


async def test_options_map_to_request_parameters(server: OpenAIServer, responses_client: OpenAIChatClient):
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    server.script(Reply(text="ok"))
    await responses_client.get_response(
        "x",
        tools=[lookup],
        options={
            "temperature": 0.3,
            "top_p": 0.5,
            "max_tokens": 99,
            "user": "u-2",
            "reasoning_effort": "high",
            "tool_choice": "none",
            "allow_multiple_tool_calls": True,
            "metadata": {"run": "7"},  # a provider-specific key, passed through
        },
    )
    body = server.requests[0].body
    assert body["temperature"] == 0.3 and body["top_p"] == 0.5
    assert body["max_output_tokens"] == 99
    assert body["user"] == "u-2"
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["tool_choice"] == "none"
    assert body["parallel_tool_calls"] is True
    assert body["metadata"] == {"run": "7"}


class Weather(BaseModel):
    city: str
    celsius: float


@pytest.mark.parametrize("stream", [False, True])
async def test_structured_output(server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool):
    server.script(Reply(text='{"city": "Rome", "celsius": 24.5}'))
    response = await ask(responses_client, "Rome?", stream=stream, options={"response_format": Weather})
    assert response.value == Weather(city="Rome", celsius=24.5)
    fmt = server.requests[0].body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "Weather" and fmt["strict"] is True
    assert fmt["schema"]["required"] == ["city", "celsius"]


@pytest.mark.parametrize("stream", [False, True])
async def test_reasoning_summary(server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool):
    server.script(Reply(text="Yes.", reasoning="Checked both cases.", usage=Usage(5, 50, reasoning_tokens=40)))
    response = await ask(responses_client, "Is it?", stream=stream, options={"reasoning_effort": "medium"})
    reasoning = "".join(c.text or "" for m in response.messages for c in m.contents if c.type == "text_reasoning")
    assert reasoning == "Checked both cases."
    assert response.text == "Yes."
    assert response.usage_details is not None and response.usage_details["reasoning_token_count"] == 40


@pytest.mark.parametrize("stream", [False, True])
async def test_incomplete_reply_reports_length(server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool):
    server.script(Reply(text="Once upon", finish_reason="length"))
    response = await ask(responses_client, "story", stream=stream)
    assert response.finish_reason == "length"
    assert response.text == "Once upon"


@pytest.mark.parametrize("stream", [False, True])
async def test_content_filter_is_a_typed_error(server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool):
    server.script(Reply(text="partial", finish_reason="content_filter"))
    with pytest.raises(ContentFilterError):
        await ask(responses_client, "bad", stream=stream)


@pytest.mark.parametrize("stream", [False, True])
async def test_previous_response_id_continuation_on_the_session(
    server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool
):
    """With store=True the session keeps the response id and later turns send only what is new."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    server.script(
        Reply(text="Hi Ada.", response_id="resp_turn1"),
        Reply(tool_calls=[ToolCall("add", {"a": 2, "b": 3}, "call_add")], response_id="resp_turn2a"),
        Reply(text="5", response_id="resp_turn2b"),
    )
    agent = Agent(responses_client, "Be terse.", tools=[add], default_options={"store": True})
    session = agent.create_session()

    async def run(text: str) -> Any:
        if stream:
            result = agent.run(text, session=session, stream=True)
            async for _ in result:
                pass
            return await result.get_final_response()
        return await agent.run(text, session=session)

    assert (await run("I am Ada.")).text == "Hi Ada."
    assert session.service_session_id == "resp_turn1"
    assert (await run("What is 2+3?")).text == "5"
    assert session.service_session_id == "resp_turn2b"

    first, second, third = (r.body for r in server.requests)
    assert "previous_response_id" not in first and first["store"] is True
    # Turn two continues turn one and sends only what is new: the agent's instructions (the server does not carry a
    # previous request's instructions over) and the new user message; no local history is loaded while the
    # service keeps the conversation.
    assert second["previous_response_id"] == "resp_turn1"
    assert [i.get("role") for i in second["input"]] == ["system", "user"]
    # The tool round inside turn two continues the tool call and sends only the result.
    assert third["previous_response_id"] == "resp_turn2a"
    assert third["input"] == [{"type": "function_call_output", "call_id": "call_add", "output": "5"}]


async def test_options_the_api_lacks_warn_once(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text="a"), Reply(text="b"))
    with pytest.warns(UserWarning, match="no stop or seed parameter"):
        await responses_client.get_response("x", options={"stop": ["END"], "seed": 1})
    await responses_client.get_response("x", options={"stop": ["END"]})  # no second warning (filterwarnings=error)
    assert "stop" not in server.requests[0].body and "seed" not in server.requests[0].body


@pytest.mark.parametrize("stream", [False, True])
async def test_encrypted_reasoning_goes_back_with_the_tool_results(
    server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool
):
    """Stateless reasoning models (store=False) need their encrypted reasoning sent back with tool outputs."""

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key.upper()

    server.script(
        Reply(
            reasoning="I should look it up.",
            encrypted_reasoning="gAAAA-opaque",
            tool_calls=[ToolCall("lookup", {"key": "k"}, "call_r")],
        ),
        Reply(text="K"),
    )
    options = {"reasoning_effort": "low", "store": False}
    response = await ask(responses_client, "Look up k", stream=stream, tools=[lookup], options=options)
    assert response.text == "K"
    first, second = (r.body for r in server.requests)
    assert first["include"] == ["reasoning.encrypted_content"]
    kinds = [i.get("type", "message") for i in second["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    reasoning = second["input"][1]
    assert reasoning["encrypted_content"] == "gAAAA-opaque"
    assert reasoning["id"].startswith("rs_")
    shown = "".join(c.text or "" for m in response.messages for c in m.contents if c.type == "text_reasoning")
    assert shown == "I should look it up."


async def test_pdf_input(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text="read"))
    pdf = Content.from_data(b"%PDF-1.4 test", "application/pdf", additional_properties={"filename": "r.pdf"})
    await responses_client.get_response(Message("user", ["Summarise", pdf]))
    _, document = server.requests[0].body["input"][0]["content"]
    assert document["type"] == "input_file" and document["filename"] == "r.pdf"
    assert document["file_data"].startswith("data:application/pdf;base64,")
