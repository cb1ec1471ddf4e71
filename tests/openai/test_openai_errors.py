"""HTTP errors, retries, timeouts, connection failures and cancellation, through the real SDK."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from agentnb.exceptions import (
    ContentFilterError,
    RateLimitError,
    ServiceAuthenticationError,
    ServiceConnectionError,
    ServiceResponseError,
    ServiceTimeoutError,
)
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import ErrorReply, OpenAIServer, Reply

CLIENTS = [OpenAIChatCompletionClient, OpenAIChatClient]


def make(cls: type, server: OpenAIServer, **kwargs: Any) -> Any:
    kwargs.setdefault("max_retries", 0)
    return cls("test-model", base_url=server.base_url, api_key="sk-test", **kwargs)


async def ask(client: Any, *, stream: bool) -> Any:
    if stream:
        response_stream = client.get_response("hi", stream=True)
        async for _ in response_stream:
            pass
        return await response_stream.get_final_response()
    return await client.get_response("hi")


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("reply", "error_type"),
    [
        (ErrorReply(400, "Invalid 'messages[0].content'.", code="invalid_value"), ServiceResponseError),
        (ErrorReply(401, "Incorrect API key provided.", type="invalid_api_key"), ServiceAuthenticationError),
        (ErrorReply(403, "Project has no access.", type="permission_denied"), ServiceAuthenticationError),
        (ErrorReply(429, "Rate limit reached for requests.", type="requests"), RateLimitError),
        (ErrorReply(500, "The server had an error.", type="server_error"), ServiceResponseError),
        (ErrorReply(400, "Your prompt was flagged.", code="content_filter"), ContentFilterError),
    ],
    ids=["400", "401", "403", "429", "500", "400-content-filter"],
)
async def test_http_errors_are_typed_with_status_and_message(
    server: OpenAIServer, cls: type, stream: bool, reply: ErrorReply, error_type: type
):
    server.script(reply)
    client = make(cls, server)
    with pytest.raises(error_type) as info:
        await ask(client, stream=stream)
    await client.close()
    error = info.value
    assert type(error) is error_type
    assert error.status_code == reply.status
    assert reply.message in str(error)
    assert f"HTTP {reply.status}" in str(error)
    assert error.body["message"] == reply.message
    assert isinstance(error.__cause__, Exception)  # the SDK's exception is kept as the cause


@pytest.mark.parametrize("cls", CLIENTS)
async def test_retries_follow_the_sdk_setting(server: OpenAIServer, cls: type):
    fast = {"retry-after-ms": "10"}  # the SDK honours this, keeping the test quick
    server.script(*(ErrorReply(500, f"boom {i}", type="server_error", headers=fast) for i in range(3)))
    client = make(cls, server, max_retries=2)
    with pytest.raises(ServiceResponseError, match="boom 2"):
        await client.get_response("hi")
    await client.close()
    assert len(server.requests) == 3


@pytest.mark.parametrize("cls", CLIENTS)
async def test_a_retry_can_succeed(server: OpenAIServer, cls: type):
    server.script(ErrorReply(429, "slow down", headers={"retry-after-ms": "10"}), Reply(text="finally"))
    client = make(cls, server, max_retries=1)
    assert (await client.get_response("hi")).text == "finally"
    await client.close()
    assert len(server.requests) == 2


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_timeout_is_a_typed_error(server: OpenAIServer, cls: type, stream: bool):
    server.script(Reply(text="late", first_delay=1.0))
    client = make(cls, server, timeout=0.2)
    with pytest.raises(ServiceTimeoutError, match="timed out"):
        await ask(client, stream=stream)
    await client.close()


@pytest.mark.parametrize("cls", CLIENTS)
async def test_a_slow_stream_times_out_between_chunks(server: OpenAIServer, cls: type):
    server.script(Reply(text="a b c d e f", chunk_size=2, chunk_delay=0.6))
    client = make(cls, server, timeout=0.25)
    with pytest.raises(ServiceTimeoutError):
        await ask(client, stream=True)
    await client.close()
    assert await server.until(lambda: server.requests[0].disconnected)


@pytest.mark.parametrize("cls", CLIENTS)
async def test_unreachable_server_is_a_connection_error(cls: type):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = cls("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(ServiceConnectionError, match=f"127.0.0.1:{port}"):
        await client.get_response("hi")
    await client.close()


@pytest.mark.parametrize("cls", CLIENTS)
async def test_cancelling_a_streaming_run_closes_the_http_stream(server: OpenAIServer, cls: type):
    server.script(Reply(text="x" * 400, chunk_size=1, chunk_delay=0.02))
    client = make(cls, server)
    received: list[str] = []

    async def consume() -> None:
        async for update in client.get_response("long", stream=True):
            received.append(update.text)

    task = asyncio.create_task(consume())
    while len("".join(received)) < 5:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await server.until(lambda: server.requests[0].disconnected, timeout=5)
    assert not server.requests[0].completed
    await client.close()


@pytest.mark.parametrize("cls", CLIENTS)
async def test_closing_a_stream_early_hangs_up(server: OpenAIServer, cls: type):
    server.script(Reply(text="y" * 400, chunk_size=1, chunk_delay=0.02))
    client = make(cls, server)
    stream = client.get_response("long", stream=True)
    async for update in stream:
        if update.text:
            break
    await stream.aclose()
    assert await server.until(lambda: server.requests[0].disconnected, timeout=5)
    await client.close()


@pytest.mark.parametrize("cls", CLIENTS)
async def test_a_failure_mid_stream_is_typed_after_the_partial_text(server: OpenAIServer, cls: type):
    server.script(Reply(text="partial answer", stream_error="The model crashed."))
    client = make(cls, server)
    seen: list[str] = []
    with pytest.raises(ServiceResponseError, match=r"The model crashed\.") as info:
        async for update in client.get_response("hi", stream=True):
            seen.append(update.text)
    await client.close()
    assert "".join(seen) == "partial answer"
    assert info.value.body["message"] == "The model crashed."


async def test_the_server_rejects_requests_the_sdk_types_do_not_allow(server: OpenAIServer):
    """The wire checks are real: a body the SDK's TypedDicts reject gets a 400 and is reported."""
    import httpx

    async with httpx.AsyncClient() as http:
        response = await http.post(
            f"{server.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "robot", "content": "hi"}]},
        )
        misspelled = await http.post(f"{server.base_url}/responses", json={"model": "m", "input": "hi", "max_token": 5})
    assert response.status_code == 400 and misspelled.status_code == 400
    assert "max_token" in misspelled.json()["error"]["message"]
    assert len(server.validation_errors) == 2
    server.validation_errors.clear()  # expected here; the fixture fails tests that leave any


@pytest.mark.parametrize("cls", CLIENTS)
async def test_closing_an_agent_stream_early_hangs_up(server: OpenAIServer, cls: type):
    from agentnb import Agent

    server.script(Reply(text="z" * 400, chunk_size=1, chunk_delay=0.02))
    client = make(cls, server)
    stream = Agent(client, "Talk a lot.").run("go", stream=True)
    async for update in stream:
        if update.text:
            break
    await stream.aclose()
    assert await server.until(lambda: server.requests[0].disconnected, timeout=5)
    await client.close()
