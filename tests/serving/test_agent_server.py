"""One server, one access rule: the same agent over A2A and MCP, called with each protocol's own client."""

from __future__ import annotations

import httpx
import mcp
import pytest

from agentnb import Agent
from agentnb.a2a import A2AAgent
from agentnb.local import ScriptedChatClient
from agentnb.mcp import MCPStreamableHTTPTool
from agentnb.serving import AgentServer


async def test_the_same_agent_answers_over_a2a_and_mcp() -> None:
    agent = Agent(ScriptedChatClient(["over a2a", "over mcp"]), name="Both", description="Serves twice.")
    async with AgentServer(agent) as server:
        async with A2AAgent(url=server.a2a_url) as remote:
            assert (await remote.run("hi")).text == "over a2a"
        async with mcp.Client(server.mcp_url) as client:
            result = await client.call_tool("Both", {"task": "hi"})
    assert result.content[0].text == "over mcp"


async def test_one_token_guards_both_protocols() -> None:
    agent = Agent(ScriptedChatClient(["a2a with token", "mcp with token"]), name="Guarded")
    async with AgentServer(agent, token="tok") as server:
        async with httpx.AsyncClient() as http:
            assert (await http.get(server.a2a_url + ".well-known/agent-card.json")).status_code == 401
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await http.post(server.mcp_url, json=ping)).status_code == 401
        async with A2AAgent(url=server.a2a_url, headers={"Authorization": "Bearer tok"}) as remote:
            assert (await remote.run("hi")).text == "a2a with token"
        async with MCPStreamableHTTPTool("guarded", server.mcp_url, headers={"Authorization": "Bearer tok"}) as tool:
            (served,) = await tool.get_tools()
            assert await served.invoke(arguments={"task": "hi"}, skip_parsing=True) == "mcp with token"
    with pytest.raises(ValueError, match="without authentication"):
        AgentServer(agent, host="0.0.0.0")
