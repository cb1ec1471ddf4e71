"""What third-party OpenAI-compatible servers do that OpenAI itself rarely does, through the real SDK.

Claude and Llama models behind a gateway write a preamble before a tool call; gateways report upstream
failures inside a stream with the upstream's error code; proxies drop a connection mid-response.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import Agent, tool
from agentnb.exceptions import (
    ContentFilterError,
    RateLimitError,
    ServiceAuthenticationError,
    ServiceConnectionError,
    ServiceResponseError,
)
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import OpenAIServer, Reply, ToolCall

CLIENTS = [OpenAIChatCompletionClient, OpenAIChatClient]


class Weather(BaseModel):
    city: str
    sky: str


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."


def make(cls: type, server: OpenAIServer) -> Any:
    return cls("test-model", base_url=server.base_url, api_key="sk-test", max_retries=0)


def script_preamble_tool_json(server: OpenAIServer) -> None:
    server.script(
        Reply(text="Let me check.", tool_calls=[ToolCall("get_weather", {"city": "Paris"}, call_id="call_1")]),
        Reply(text='{"city": "Paris", "sky": "sunny"}'),
    )


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_structured_output_is_the_final_answer_not_the_preamble(
    server: OpenAIServer, cls: type, stream: bool
) -> None:
    script_preamble_tool_json(server)
    client = make(cls, server)
    agent = Agent(client, "Answer in JSON.", tools=[get_weather])
    options = {"response_format": Weather}
    if stream:
        response_stream = agent.run("Weather in Paris?", stream=True, options=options)
        async for _ in response_stream:
            pass
        response = await response_stream.get_final_response()
    else:
        response = await agent.run("Weather in Paris?", options=options)
    await client.close()
    assert response.value == Weather(city="Paris", sky="sunny")
    # An agent's text runs its messages together, as in the reference; the value is the final answer only.
    assert response.text == 'Let me check.{"city": "Paris", "sky": "sunny"}'


@pytest.mark.parametrize("cls", CLIENTS)
async def test_a_final_answer_that_is_not_json_still_fails_clearly(server: OpenAIServer, cls: type) -> None:
    from agentnb.exceptions import StructuredOutputError

    server.script(
        Reply(text='{"city": "Paris", "sky": "sunny"}', tool_calls=[ToolCall("get_weather", {"city": "Paris"})]),
        Reply(text="It is sunny in Paris."),
    )
    client = make(cls, server)
    agent = Agent(client, tools=[get_weather])
    response = await agent.run("Weather?", options={"response_format": Weather})
    await client.close()
    with pytest.raises(StructuredOutputError) as info:
        _ = response.value
    assert info.value.text == "It is sunny in Paris."


STREAM_ERRORS = [
    ("rate_limit_exceeded", RateLimitError),
    ("invalid_api_key", ServiceAuthenticationError),
    ("content_filter", ContentFilterError),
    ("server_error", ServiceResponseError),
]


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize(("code", "error_type"), STREAM_ERRORS, ids=[c for c, _ in STREAM_ERRORS])
async def test_errors_inside_a_stream_map_like_errors_outside_it(
    server: OpenAIServer, cls: type, code: str, error_type: type
) -> None:
    server.script(Reply(text="par", stream_error="Upstream said no.", stream_error_code=code))
    client = make(cls, server)
    seen: list[str] = []
    with pytest.raises(error_type, match="Upstream said no") as info:
        async for update in client.get_response("hi", stream=True):
            seen.append(update.text)
    await client.close()
    assert type(info.value) is error_type
    assert "".join(seen) == "par"
    assert info.value.body["code"] == code


@pytest.mark.parametrize(("code", "error_type"), STREAM_ERRORS, ids=[c for c, _ in STREAM_ERRORS])
async def test_a_bare_error_event_in_a_responses_stream_is_typed(
    server: OpenAIServer, code: str, error_type: type
) -> None:
    server.script(Reply(text="par", stream_error="Upstream said no.", stream_error_code=code, stream_error_event=True))
    client = make(OpenAIChatClient, server)
    with pytest.raises(error_type, match="Upstream said no") as info:
        async for _ in client.get_response("hi", stream=True):
            pass
    await client.close()
    assert type(info.value) is error_type


@pytest.mark.parametrize("cls", CLIENTS)
async def test_a_connection_dropped_mid_response_says_so_and_keeps_the_partial_text(
    server: OpenAIServer, cls: type
) -> None:
    server.script(Reply(text="The answer is forty-two, as computed.", chunk_size=5, cut_after=7))
    client = make(cls, server)
    seen: list[str] = []
    with pytest.raises(ServiceConnectionError) as info:
        async for update in client.get_response("hi", stream=True):
            seen.append(update.text)
    await client.close()
    message = str(info.value)
    assert "dropped" in message and "mid-response" in message
    assert "could not reach" not in message and ".." not in message
    assert "".join(seen), "some text had arrived before the drop"
    assert info.value.partial_text == "".join(seen)
    assert f"{len(info.value.partial_text)} characters" in message


@pytest.mark.parametrize("cls", CLIENTS)
async def test_an_unreachable_server_is_still_reported_as_unreachable(cls: type) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = cls("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(ServiceConnectionError) as info:
        async for _ in client.get_response("hi", stream=True):
            pass
    await client.close()
    assert "could not reach" in str(info.value)
    assert ".." not in str(info.value)
