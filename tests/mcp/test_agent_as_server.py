"""Agents served as MCP servers, called with the mcp SDK's own client over stdio and streamable HTTP."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import mcp
import pytest
from mcp import StdioServerParameters

from agentnb import Agent, Content, tool
from agentnb.local import ScriptedChatClient
from agentnb.mcp import MCPHTTPServer, MCPStreamableHTTPTool

REPO = Path(__file__).resolve().parents[2]


def _stdio(expose: str) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tests.mcp.servers.agent_server", expose], env=env, cwd=str(REPO)
    )


async def test_the_agent_is_one_tool_over_stdio() -> None:
    async with mcp.Client(_stdio("agent")) as client:
        listed = await client.list_tools()
        (agent_tool,) = listed.tools
        assert agent_tool.name == "RestaurantAgent"
        assert agent_tool.description == "Answer questions about the menu."
        assert agent_tool.input_schema["required"] == ["task"]
        result = await client.call_tool("RestaurantAgent", {"task": "What is the special soup?"})
    assert result.is_error is False
    assert [c.text for c in result.content if c.type == "text"] == ["Today's special soup is Clam Chowder."]


async def test_the_agents_tools_over_stdio_hold_back_approval_tools() -> None:
    async with mcp.Client(_stdio("both")) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        price = await client.call_tool("get_item_price", {"menu_item": "Cobb Salad"})
        refused = await client.call_tool("refund", {"order": "42"})
    assert names == ["RestaurantAgent", "get_item_price", "get_specials"]
    assert price.content[0].text == "Cobb Salad: $9.99"
    assert refused.is_error is True
    assert "Unknown tool 'refund'" in refused.content[0].text


async def test_streamable_http_with_the_sdk_client_and_an_agentnb_agent_as_caller() -> None:
    served = Agent(ScriptedChatClient(["Forty-two.", "Forty-two again."]), name="Oracle", description="Answers.")
    async with MCPHTTPServer(served) as server:
        async with mcp.Client(server.url) as client:
            result = await client.call_tool("Oracle", {"task": "What is the answer?"})
        assert result.content[0].text == "Forty-two."

        # An agentnb agent calling the served agent through agentnb's own MCP tool.
        remote = MCPStreamableHTTPTool("oracle", server.url)
        caller = Agent(
            ScriptedChatClient([Content.from_function_call("c1", "Oracle", {"task": "again?"}), "It said: again."]),
            tools=[remote],
        )
        async with caller:
            response = await caller.run("Ask the oracle")
    results = [c.result for m in response.messages for c in m.contents if c.type == "function_result"]
    assert results == ["Forty-two again."]


async def test_an_approval_request_is_refused_not_run() -> None:
    ran: list[str] = []

    @tool(approval_mode="always_require")
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        ran.append(disk)
        return "wiped"

    model = ScriptedChatClient([Content.from_function_call("c1", "wipe", {"disk": "sda"})])
    served = Agent(model, name="Ops", tools=[wipe])
    async with MCPHTTPServer(served) as server, mcp.Client(server.url) as client:
        result = await client.call_tool("Ops", {"task": "wipe it"})
    assert ran == []
    assert result.is_error is True
    assert "needs a person's approval" in result.content[0].text


async def test_http_needs_the_token_when_one_is_set() -> None:
    served = Agent(ScriptedChatClient(["ok"]), name="Guarded")
    async with MCPHTTPServer(served, token="s3cret") as server:
        async with httpx.AsyncClient() as http:
            refused = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        remote = MCPStreamableHTTPTool("guarded", server.url, headers={"Authorization": "Bearer s3cret"})
        async with remote:
            assert [t.name for t in await remote.get_tools()] == ["Guarded"]
    with pytest.raises(ValueError, match="without authentication"):
        MCPHTTPServer(served, host="0.0.0.0")
