"""OpenAIChatCompletionClient against the scripted server: the real SDK over a real socket."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb._tools import tool
from agentnb._types import ChatResponse, Content, Message
from agentnb.exceptions import ContentFilterError
from agentnb.openai import OpenAIChatCompletionClient
from tests.openai_server import OpenAIServer, Reply, ToolCall, Usage

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


async def ask(client: OpenAIChatCompletionClient, messages: Any, *, stream: bool, **kwargs: Any) -> ChatResponse:
    if stream:
        response_stream = client.get_response(messages, stream=True, **kwargs)
        async for _ in response_stream:
            pass
        return await response_stream.get_final_response()
    return await client.get_response(messages, **kwargs)


@pytest.mark.parametrize("stream", [False, True])
async def test_text_reply_usage_and_ids(server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool):
    server.script(Reply(text="Hello there, traveller!", usage=Usage(21, 6, cached_tokens=8, reasoning_tokens=2)))
    response = await ask(chat_client, "Hi", stream=stream)

    assert response.text == "Hello there, traveller!"
    assert response.finish_reason == "stop"
    assert response.model_id == "test-model"
    assert response.response_id and response.response_id.startswith("chatcmpl-")
    assert response.conversation_id is None  # Chat Completions keeps no server-side state
    assert response.usage_details == {
        "input_token_count": 21,
        "output_token_count": 6,
        "total_token_count": 27,
        "cached_input_token_count": 8,
        "reasoning_token_count": 2,
    }
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "test-model"
    assert request.body["messages"] == [{"role": "user", "content": "Hi"}]
    if stream:
        assert request.body["stream"] is True
        assert request.body["stream_options"] == {"include_usage": True}
        assert request.completed and not request.disconnected
    else:
        assert "stream" not in request.body


async def test_streaming_yields_text_deltas_in_order(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    server.script(Reply(text="one two three four", chunk_size=4))
    stream = chat_client.get_response("count", stream=True)
    pieces = [update.text async for update in stream]
    assert [p for p in pieces if p] == ["one ", "two ", "thre", "e fo", "ur"]
    final = await stream.get_final_response()
    assert final.text == "one two three four"
    assert final.usage_details is not None and final.usage_details["input_token_count"] == 11


async def test_history_instructions_images_and_tool_results_on_the_wire(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient
):
    server.script(Reply(text="It is a cat."))
    history = [
        Message("user", ["What's the weather?"]),
        Message("assistant", [Content.from_function_call("call_9", "get_weather", {"city": "Paris"})]),
        Message("tool", [Content.from_function_result("call_9", result={"temp": 21})]),
        Message("assistant", ["Sunny, 21 degrees."]),
        Message(
            "user",
            [
                "And what is in these pictures?",
                Content.from_data(PNG, "image/png"),
                Content.from_uri("https://example.com/cat.jpg", media_type="image/jpeg"),
            ],
        ),
    ]
    response = await chat_client.get_response(history, options={"instructions": "Be brief."})
    assert response.text == "It is a cat."
    sent = server.requests[0].body["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    assert sent[1] == {"role": "user", "content": "What's the weather?"}
    assert sent[2]["role"] == "assistant"
    assert sent[2]["tool_calls"] == [
        {"id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    ]
    assert sent[3] == {"role": "tool", "tool_call_id": "call_9", "content": '{"temp": 21}'}
    assert sent[4] == {"role": "assistant", "content": "Sunny, 21 degrees."}
    parts = sent[5]["content"]
    assert parts[0] == {"type": "text", "text": "And what is in these pictures?"}
    assert parts[1]["type"] == "image_url" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert parts[2] == {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}


async def test_failed_tool_result_is_sent_as_error_text(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    server.script(Reply(text="Sorry."))
    await chat_client.get_response(
        [
            Message("user", ["go"]),
            Message("assistant", [Content.from_function_call("c1", "boom", "{}")]),
            Message("tool", [Content.from_function_result("c1", exception="ValueError: no")]),
        ]
    )
    assert server.requests[0].body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "Error: ValueError: no",
    }


async def test_unsupported_content_is_a_clear_error(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    with pytest.raises(ValueError, match="video/mp4"):
        await chat_client.get_response(Message("user", ["see", Content.from_data(b"x", "video/mp4")]))
    assert server.requests == []


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("interleave", [False, True])
async def test_parallel_tool_calls_run_and_results_go_back(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool, interleave: bool
):
    calls: list[tuple[str, str]] = []

    @tool
    def get_weather(city: str, unit: str) -> str:
        """Return the weather for a city."""
        calls.append((city, unit))
        return f"{city}: 20 {unit}"

    server.script(
        Reply(
            tool_calls=[
                ToolCall("get_weather", {"city": "Paris", "unit": "C"}, "call_a"),
                ToolCall("get_weather", {"city": "Lisbon, Portugal", "unit": "F"}, "call_b"),
            ],
            chunk_size=3,
            interleave_tool_calls=interleave,
        ),
        Reply(text="Paris 20C, Lisbon 20F."),
    )
    response = await ask(chat_client, "Weather in Paris and Lisbon?", stream=stream, tools=[get_weather])

    assert sorted(calls) == [("Lisbon, Portugal", "F"), ("Paris", "C")]
    assert response.text == "Paris 20C, Lisbon 20F."
    first, second = server.requests
    (spec,) = first.body["tools"]
    assert spec == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Return the weather for a city.",
            "strict": True,
            "parameters": {
                "title": "get_weather_input",
                "type": "object",
                "properties": {
                    "city": {"type": "string", "title": "City"},
                    "unit": {"type": "string", "title": "Unit"},
                },
                "required": ["city", "unit"],
                "additionalProperties": False,
            },
        },
    }
    assistant, *tool_messages = second.body["messages"][1:]
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        {"city": "Paris", "unit": "C"},
        {"city": "Lisbon, Portugal", "unit": "F"},
    ]
    assert {m["tool_call_id"]: m["content"] for m in tool_messages} == {
        "call_a": "Paris: 20 C",
        "call_b": "Lisbon, Portugal: 20 F",
    }
    # The whole turn's messages come back: the call, the results, the answer.
    kinds = [[c.type for c in m.contents] for m in response.messages]
    assert kinds[0] == ["function_call", "function_call"]
    assert response.usage_details is not None and response.usage_details["input_token_count"] == 22


async def test_optional_parameters_make_a_tool_non_strict(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient
):
    @tool
    def search(query: str, limit: int = 5) -> str:
        """Search."""
        return query

    server.script(Reply(text="ok"))
    await chat_client.get_response("x", tools=[search], options={"tool_choice": "required"})
    (spec,) = server.requests[0].body["tools"]
    assert spec["function"]["strict"] is False
    assert "additionalProperties" not in spec["function"]["parameters"]
    assert server.requests[0].body["tool_choice"] == "required"


async def test_options_map_to_request_parameters(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    server.script(Reply(text="ok"))
    server.extra_params.add("top_k")
    await chat_client.get_response(
        "x",
        tools=[lookup],
        options={
            "temperature": 0.2,
            "top_p": 0.9,
            "max_tokens": 64,
            "stop": ["END"],
            "seed": 7,
            "user": "u-1",
            "reasoning_effort": "low",
            "tool_choice": {"mode": "required", "required_function_name": "lookup"},
            "allow_multiple_tool_calls": False,
            "frequency_penalty": 0.5,  # a provider-specific key, passed through
            "additional_properties": {"top_k": 20},  # unknown to OpenAI, sent in the body for local servers
            "model_id": "other-model",
        },
    )
    body = server.requests[0].body
    assert body["model"] == "other-model"
    assert body["temperature"] == 0.2 and body["top_p"] == 0.9
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
    assert body["stop"] == ["END"] and body["seed"] == 7 and body["user"] == "u-1"
    assert body["reasoning_effort"] == "low"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert body["parallel_tool_calls"] is False
    assert body["frequency_penalty"] == 0.5
    assert body["top_k"] == 20


class CityInfo(BaseModel):
    name: str
    population: int
    landmarks: list[str]


@pytest.mark.parametrize("stream", [False, True])
async def test_structured_output_with_a_pydantic_model(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool
):
    server.script(Reply(text=json.dumps({"name": "Paris", "population": 2100000, "landmarks": ["Louvre"]})))
    response = await ask(chat_client, "Tell me about Paris", stream=stream, options={"response_format": CityInfo})
    assert response.value == CityInfo(name="Paris", population=2100000, landmarks=["Louvre"])
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "CityInfo" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert set(fmt["json_schema"]["schema"]["required"]) == {"name", "population", "landmarks"}


@pytest.mark.parametrize("stream", [False, True])
async def test_reasoning_content_from_local_servers(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool
):
    server.script(Reply(text="42", reasoning="Six times seven."))
    response = await ask(chat_client, "6*7?", stream=stream)
    (message,) = response.messages
    reasoning = [c.text for c in message.contents if c.type == "text_reasoning"]
    assert "".join(r or "" for r in reasoning) == "Six times seven."
    assert response.text == "42"  # reasoning is not part of the answer


# OpenRouter's structured reasoning: kept as the reasoning's protected data and sent back with its turn.
DETAILS = [
    {"type": "reasoning.text", "text": "Paris first.", "format": "unknown", "index": 0},
    {"type": "reasoning.encrypted", "data": "opaque==", "format": "unknown", "index": 1},
]


@pytest.mark.parametrize("stream", [False, True])
async def test_reasoning_details_go_back_with_the_tool_calls_they_came_with(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool
):
    @tool
    def get_weather(city: str) -> str:
        """Return the weather for a city."""
        return f"{city}: 20 C"

    # Streamed, the details arrive in fragments: the text piece by piece, each fragment naming its entry.
    fragments = [
        {"reasoning_details": [{"type": "reasoning.text", "text": "Paris ", "format": "unknown", "index": 0}]},
        {"reasoning_details": [{"type": "reasoning.text", "text": "first.", "index": 0}]},
        {"reasoning_details": [DETAILS[1]]},
    ]
    server.script(
        Reply(
            reasoning="Need the weather.",
            tool_calls=[ToolCall("get_weather", {"city": "Paris"}, "call_a")],
            provider_fields={"reasoning_details": DETAILS},
            provider_deltas=fragments,
        ),
        Reply(text="20 C in Paris."),
    )
    response = await ask(chat_client, "Weather in Paris?", stream=stream, tools=[get_weather])

    assert response.text == "20 C in Paris."
    kept = [json.loads(c.protected_data) for m in response.messages for c in m.contents if c.protected_data]
    assert kept == [DETAILS]
    assistant = server.requests[1].body["messages"][1]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_a"
    assert assistant["reasoning_details"] == DETAILS


async def test_reasoning_from_another_api_is_not_sent_as_reasoning_details(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient
):
    server.script(Reply(text="Fine."))
    signed = Content.from_reasoning("Thought.", protected_data="EqQBCkgIARABGAIiQL1x")  # e.g. a Claude signature
    await chat_client.get_response([Message("user", ["Hi"]), Message("assistant", [signed, "Hello."]), "And?"])
    assert server.requests[0].body["messages"][1] == {"role": "assistant", "content": "Hello."}


async def test_a_null_delta_on_the_finish_chunk_is_read_as_the_finish(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient
):
    @tool
    def get_weather(city: str) -> str:
        """Return the weather for a city."""
        return f"{city}: 20 C"

    server.script(
        Reply(tool_calls=[ToolCall("get_weather", {"city": "Oslo"}, "call_n")], null_finish_delta=True),
        Reply(text="20 C in Oslo.", null_finish_delta=True),
    )
    response = await ask(chat_client, "Weather in Oslo?", stream=True, tools=[get_weather])
    assert response.text == "20 C in Oslo." and response.finish_reason == "stop"
    assert server.requests[1].body["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_n",
        "content": "Oslo: 20 C",
    }


@pytest.mark.parametrize("stream", [False, True])
async def test_length_finish_reason(server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool):
    server.script(Reply(text="cut", finish_reason="length"))
    response = await ask(chat_client, "long story", stream=stream)
    assert response.finish_reason == "length"
    assert response.text == "cut"


@pytest.mark.parametrize("stream", [False, True])
async def test_content_filter_finish_is_a_typed_error(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient, stream: bool
):
    server.script(Reply(text="Here is how to", finish_reason="content_filter"))
    with pytest.raises(ContentFilterError, match="content filter") as info:
        await ask(chat_client, "something bad", stream=stream)
    assert info.value.body["partial_text"] == "Here is how to"


async def test_refusal_is_returned_as_text(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    server.script(Reply(refusal="I can't help with that."))
    response = await chat_client.get_response("bad")
    assert response.text == "I can't help with that."
    assert response.messages[0].contents[0].additional_properties == {"refusal": True}


async def test_developer_instruction_role(server: OpenAIServer):
    client = OpenAIChatCompletionClient("o3-mini", base_url=server.base_url, instruction_role="developer")
    server.script(Reply(text="ok"))
    await client.get_response("hi", options={"instructions": "Think first."})
    await client.close()
    assert server.requests[0].body["messages"][0] == {"role": "developer", "content": "Think first."}
    # A base URL without a key works: local servers get a placeholder key.
    assert server.requests[0].headers["authorization"].startswith("Bearer ")


async def test_agent_names_become_valid_wire_names(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    server.script(Reply(text="ok"))
    await chat_client.get_response(
        [Message("user", ["hi"], author_name="Ada L."), Message("assistant", ["hello"], author_name="Travel Agent")]
    )
    user, assistant = server.requests[0].body["messages"]
    assert user["name"] == "Ada_L_" and assistant["name"] == "Travel_Agent"


async def test_audio_and_pdf_inputs(server: OpenAIServer, chat_client: OpenAIChatCompletionClient):
    server.script(Reply(text="heard and read"))
    pdf = Content.from_data(b"%PDF-1.4 test", "application/pdf", additional_properties={"filename": "report.pdf"})
    await chat_client.get_response(Message("user", ["Summarise", Content.from_data(b"RIFFwav", "audio/wav"), pdf]))
    _, audio, document = server.requests[0].body["messages"][0]["content"]
    assert audio == {"type": "input_audio", "input_audio": {"data": "UklGRndhdg==", "format": "wav"}}
    assert document["type"] == "file" and document["file"]["filename"] == "report.pdf"
    assert document["file"]["file_data"].startswith("data:application/pdf;base64,")
