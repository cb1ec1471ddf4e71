"""MCPStreamableHTTPTool against the demo server running over streamable HTTP on a loopback port."""

from __future__ import annotations

import json
import time

import httpx
import httpx2
import pytest

from agentnb import Agent
from agentnb.exceptions import MCPTimeoutError
from agentnb.local import ScriptedChatClient, ToolCallingChatClient
from agentnb.mcp import MCPStreamableHTTPTool, SamplingRequest
from tests.mcp.mcp_helpers import HTTPServer


async def test_agent_calls_http_tool_end_to_end_on_offline_model(http_server: HTTPServer) -> None:
    server = http_server.tool(allowed_tools=["add"])
    agent = Agent(ToolCallingChatClient(), tools=[server])
    try:
        response = await agent.run("Add the numbers.")
        # Streaming runs use the same tools over the same session.
        stream = agent.run("Add again.", stream=True)
        updates = [update async for update in stream]
        streamed = await stream.get_final_response()
    finally:
        await server.close()
    call = next(c for m in response.messages for c in m.contents if c.type == "function_call")
    result = next(c for m in response.messages for c in m.contents if c.type == "function_result")
    args = call.parse_arguments()
    assert result.result == str(args["a"] + args["b"])
    assert updates
    assert any(c.type == "function_result" and c.exception is None for m in streamed.messages for c in m.contents)
    assert server.connect_count == 1


async def test_headers_reach_the_server(http_server: HTTPServer) -> None:
    async with http_server.tool(headers={"Authorization": "Bearer t0ken", "X-Tenant": "acme"}) as server:
        seen = json.loads(await server.call_tool("request_headers"))
    assert seen["authorization"] == "Bearer t0ken"
    assert seen["x-tenant"] == "acme"


async def test_user_httpx_client_is_relayed_with_its_hooks_and_headers(http_server: HTTPServer) -> None:
    requests: list[str] = []

    async def record(request: httpx.Request) -> None:
        requests.append(request.method)

    async with httpx.AsyncClient(headers={"X-From-Client": "yes"}, event_hooks={"request": [record]}) as client:
        async with http_server.tool(http_client=client, headers={"X-Extra": "1"}) as server:
            seen = json.loads(await server.call_tool("request_headers"))
            image = await server.call_tool("get_image")
        # Leaving the tool does not close the user's client.
        assert not client.is_closed
    assert seen["x-from-client"] == "yes" and seen["x-extra"] == "1"
    assert "POST" in requests
    assert image[0].media_type == "image/png"


async def test_user_httpx2_client_is_used_directly(http_server: HTTPServer) -> None:
    async with httpx2.AsyncClient(headers={"X-Direct": "2"}) as client:
        async with http_server.tool(http_client=client) as server:
            seen = json.loads(await server.call_tool("request_headers"))
        assert not client.is_closed
    assert seen["x-direct"] == "2"


async def test_http_sampling_and_prompts(http_server: HTTPServer) -> None:
    model = ScriptedChatClient(["Short."])
    asked: list[SamplingRequest] = []
    async with http_server.tool(client=model, sampling_approval_callback=lambda r: asked.append(r) or True) as server:
        assert await server.call_tool("summarize", {"text": "long"}) == "summary[scripted]: Short."
        [message] = await server.get_prompt("greet", {"name": "Lin"})
    assert [r.server for r in asked] == ["web"]
    assert message.text == "Say hello to Lin."


def test_bad_arguments_are_rejected_early() -> None:
    with pytest.raises(ValueError, match="url"):
        MCPStreamableHTTPTool("x", "127.0.0.1:8000/mcp")
    with pytest.raises(TypeError, match="http_client"):
        MCPStreamableHTTPTool("x", "http://127.0.0.1:1/mcp", http_client=object())  # type: ignore[arg-type]


async def test_http_hang_times_out_within_the_request_timeout(http_server: HTTPServer) -> None:
    async with http_server.tool(request_timeout=1) as server:
        started = time.monotonic()
        with pytest.raises(MCPTimeoutError, match="'web'") as info:
            await server.call_tool("sleep", {"seconds": 30})
        assert time.monotonic() - started < 5
        assert info.value.server == "web"
        # The session is still usable afterwards.
        assert await server.call_tool("add", {"a": 2, "b": 2}) == "4"
