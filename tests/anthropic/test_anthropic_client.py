"""AnthropicClient over the real ``anthropic`` SDK and HTTP, against a local Messages API server."""

from __future__ import annotations

import base64

import pytest
from pydantic import BaseModel

from agentnb import Agent, Content, Message, tool
from agentnb.anthropic import AnthropicClient, RawAnthropicClient
from agentnb.exceptions import (
    ContentFilterError,
    RateLimitError,
    ServiceAuthenticationError,
    ServiceConnectionError,
    ServiceInitializationError,
    ServiceResponseError,
)
from tests.anthropic_server import AnthropicServer, ErrorReply, Reply, ToolUse

ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    ran.append(city)
    return f"Sunny in {city}."


@pytest.mark.parametrize("stream", [False, True])
async def test_text_usage_and_the_request_shape(client: AnthropicClient, server: AnthropicServer, stream: bool) -> None:
    server.script(Reply(text="Hello from Claude.", input_tokens=12, output_tokens=4, cache_read_input_tokens=3))
    agent = Agent(client, "Be brief.")
    if stream:
        run = agent.run("Hi", stream=True, options={"temperature": 0.2, "stop": "END", "top_k": 5, "user": "u1"})
        assert "".join([u.text async for u in run]) == "Hello from Claude."
        response = await run.get_final_response()
    else:
        response = await agent.run("Hi", options={"temperature": 0.2, "stop": "END", "top_k": 5, "user": "u1"})
    assert response.text == "Hello from Claude."
    assert response.usage_details is not None
    assert response.usage_details["input_token_count"] == 12 and response.usage_details["output_token_count"] == 4
    if not stream:
        assert response.usage_details.get("cached_input_token_count") == 3
    body = server.requests[0].body
    assert body["system"] == "Be brief." and body["max_tokens"] == 1024 and body["model"] == "claude-test"
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert body["stop_sequences"] == ["END"] and body["top_k"] == 5 and body["temperature"] == 0.2
    assert body["metadata"] == {"user_id": "u1"}
    assert server.requests[0].headers["x-api-key"] == "sk-ant-test"


@pytest.mark.parametrize("stream", [False, True])
async def test_parallel_tool_calls_run_and_their_results_go_back(
    client: AnthropicClient, server: AnthropicServer, stream: bool
) -> None:
    ran.clear()
    server.script(
        Reply(tool_uses=[ToolUse("get_weather", {"city": "Paris"}), ToolUse("get_weather", {"city": "Oslo"})]),
        Reply(text="Paris and Oslo are sunny."),
    )
    agent = Agent(client, tools=[get_weather])
    if stream:
        run = agent.run("Weather?", stream=True)
        _ = [u async for u in run]
        response = await run.get_final_response()
    else:
        response = await agent.run("Weather?")
    assert response.text == "Paris and Oslo are sunny."
    assert sorted(ran) == ["Oslo", "Paris"]
    first, second = (r.body for r in server.requests)
    assert first["tools"] == [
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "input_schema": get_weather.parameters(),
        }
    ]
    assistant, results = second["messages"][1], second["messages"][2]
    assert [b["type"] for b in assistant["content"]] == ["tool_use", "tool_use"]
    assert [b["input"] for b in assistant["content"]] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert results["role"] == "user"
    assert [(b["type"], b["content"]) for b in results["content"]] == [
        ("tool_result", "Sunny in Paris."),
        ("tool_result", "Sunny in Oslo."),
    ]
    assert [b["tool_use_id"] for b in results["content"]] == [b["id"] for b in assistant["content"]]


@pytest.mark.parametrize("stream", [False, True])
async def test_thinking_blocks_travel_back_with_their_tool_calls(
    client: AnthropicClient, server: AnthropicServer, stream: bool
) -> None:
    server.script(
        Reply(
            thinking="The user wants weather; call the tool.",
            signature="sig-abc",
            tool_uses=[ToolUse("get_weather", {"city": "Rome"})],
        ),
        Reply(text="Rome is sunny."),
    )
    agent = Agent(client, tools=[get_weather])
    options = {"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 4096}
    if stream:
        run = agent.run("Weather in Rome?", stream=True, options=options)
        _ = [u async for u in run]
        response = await run.get_final_response()
    else:
        response = await agent.run("Weather in Rome?", options=options)
    reasoning = [c for m in response.messages for c in m.contents if c.type == "text_reasoning"]
    assert [(c.text, c.protected_data) for c in reasoning] == [("The user wants weather; call the tool.", "sig-abc")]
    second = server.requests[1].body
    assert server.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assistant = second["messages"][1]["content"]
    assert assistant[0] == {
        "type": "thinking",
        "thinking": "The user wants weather; call the tool.",
        "signature": "sig-abc",
    }
    assert assistant[1]["type"] == "tool_use"


class Weather(BaseModel):
    city: str
    degrees: int


async def test_structured_output_sends_a_closed_schema_and_parses_the_reply(
    client: AnthropicClient, server: AnthropicServer
) -> None:
    server.script(Reply(text='{"city": "Lima", "degrees": 21}'))
    response = await Agent(client).run("Weather in Lima as JSON", options={"response_format": Weather})
    assert response.value == Weather(city="Lima", degrees=21)
    output_format = server.requests[0].body["output_config"]["format"]
    assert output_format["type"] == "json_schema"
    assert output_format["schema"]["additionalProperties"] is False
    assert set(output_format["schema"]["required"]) == {"city", "degrees"}


async def test_images_and_tool_choice(client: AnthropicClient, server: AnthropicServer) -> None:
    server.script(
        Reply(tool_uses=[ToolUse("get_weather", {"city": "Nice"})]), Reply(text="A red square; Nice is sunny.")
    )
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    message = Message(
        "user",
        [
            "What is this?",
            Content.from_data(png, "image/png"),
            Content.from_uri("https://example.com/a.jpg", "image/jpeg"),
        ],
    )
    response = await client.get_response(
        [message], tools=[get_weather], options={"tool_choice": "required", "allow_multiple_tool_calls": False}
    )
    assert response.text == "A red square; Nice is sunny."
    first = server.requests[0].body
    blocks = first["messages"][0]["content"]
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()},
    }
    assert blocks[2] == {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}}
    assert first["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    # "required" holds for the first call only; the answer after the tool ran is the model's choice.
    assert server.requests[1].body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


@pytest.mark.parametrize(
    ("reply", "error", "text"),
    [
        (ErrorReply(401, "authentication_error", "invalid x-api-key"), ServiceAuthenticationError, "ANTHROPIC_API_KEY"),
        (
            ErrorReply(429, "rate_limit_error", "slow down", headers={"retry-after": "7"}),
            RateLimitError,
            "slow down",
        ),
        (ErrorReply(400, "invalid_request_error", "max_tokens too large"), ServiceResponseError, "HTTP 400"),
        (ErrorReply(529, "overloaded_error", "Overloaded"), ServiceResponseError, "Overloaded"),
    ],
)
async def test_http_errors_map_as_for_openai(
    client: AnthropicClient, server: AnthropicServer, reply: ErrorReply, error: type[Exception], text: str
) -> None:
    server.script(reply)
    with pytest.raises(error, match=text) as info:
        await client.get_response("hi")
    assert getattr(info.value, "status_code", None) == reply.status
    if isinstance(info.value, RateLimitError):
        assert info.value.retry_after == 7.0


async def test_a_refusal_is_a_content_filter_error(client: AnthropicClient, server: AnthropicServer) -> None:
    server.script(Reply(text="I can't help", stop_reason="refusal"), Reply(text="I can't help", stop_reason="refusal"))
    with pytest.raises(ContentFilterError, match="refusal"):
        await client.get_response("bad")
    with pytest.raises(ContentFilterError, match="I can't help"):
        await client.get_response("bad", stream=True).get_final_response()


async def test_stream_failures_keep_what_arrived(client: AnthropicClient, server: AnthropicServer) -> None:
    server.script(Reply(text="partial answer here", error_after=4), Reply(text="partial answer here", cut_after=4))
    with pytest.raises(ServiceResponseError, match="Overloaded"):
        await client.get_response("hi", stream=True).get_final_response()
    with pytest.raises(ServiceConnectionError) as info:
        await client.get_response("hi", stream=True).get_final_response()
    assert info.value.partial_text == "partial "  # the two text deltas sent before the drop


async def test_configuration_from_the_environment(server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ServiceInitializationError, match="needs a model"):
        AnthropicClient(api_key="k")
    with pytest.raises(ServiceInitializationError, match="ANTHROPIC_API_KEY"):
        AnthropicClient(model="m")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_CHAT_MODEL", "claude-env")
    client = RawAnthropicClient()
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    assert server.requests[0].body["model"] == "claude-env" and server.requests[0].headers["x-api-key"] == "sk-env"
    assert client.service_url() == server.base_url and client.OTEL_PROVIDER_NAME == "anthropic"
    await client.close()


async def test_beta_flags_go_in_the_anthropic_beta_header(server: AnthropicServer) -> None:
    client = AnthropicClient(
        model="claude-test", base_url=server.base_url, api_key="sk-ant-test", additional_beta_flags=["beta-a"]
    )
    server.script(Reply(text="ok"), Reply(text="ok"))
    await client.get_response("hi")
    await client.get_response("hi", options={"additional_beta_flags": ["beta-b", "beta-a"]})
    first, second = server.requests
    assert first.headers["anthropic-beta"] == "beta-a"
    assert second.headers["anthropic-beta"] == "beta-a,beta-b"  # each flag once
    assert "additional_beta_flags" not in second.body and "anthropic_beta" not in second.body
    await client.close()
