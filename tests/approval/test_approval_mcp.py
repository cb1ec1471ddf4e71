"""Standing rules are scoped by MCP server: two servers (one real process, two labels) expose one tool name."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb import Agent, AgentSession, Content, Message, ToolApprovalMiddleware, create_always_approve_tool_response
from agentnb.local import ScriptedChatClient
from agentnb.mcp import MCPStreamableHTTPTool

SERVER = str(Path(__file__).resolve().parents[1] / "mcp" / "servers" / "demo_server.py")
call = ScriptedChatClient.call


@pytest.fixture
def server_url() -> Iterator[str]:
    """The demo MCP server over streamable HTTP on a loopback port, stopped after the test."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60  # generous: the machine may be busy
        while True:
            assert process.poll() is None, "the demo MCP server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the demo MCP server did not start listening"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _server(name: str, url: str) -> MCPStreamableHTTPTool:
    # The label is the client-side name: the same server reached under two names is two sources.
    return MCPStreamableHTTPTool(
        name, url, allowed_tools=["add"], approval_mode="always_require", request_timeout=30, connect_timeout=60
    )


def _results(messages: list[Message]) -> list[Content]:
    return [c for m in messages for c in m.contents if c.type == "function_result"]


@pytest.mark.slow
async def test_a_rule_for_one_servers_tool_does_not_approve_another_servers_tool(server_url: str) -> None:
    labels: list[str | None] = []

    def watch(function_call: Content) -> bool:
        labels.append(function_call.additional_properties.get("server_label"))
        return False

    middleware = ToolApprovalMiddleware(auto_approval_rules=[watch])
    client = ScriptedChatClient(
        [call("add", a=1, b=2), "3", call("add", a=5, b=5), "Not added.", call("add", a=2, b=2), "4"]
    )
    session = AgentSession()
    async with _server("alpha", server_url) as alpha, _server("beta", server_url) as beta:
        alpha_agent = Agent(client, tools=[alpha], middleware=[middleware])
        beta_agent = Agent(client, tools=[beta], middleware=[middleware])

        response = await alpha_agent.run("Add 1 and 2", session=session)
        [request] = response.user_input_requests
        assert request.additional_properties["server_label"] == "alpha"
        response = await alpha_agent.run(
            Message("user", [create_always_approve_tool_response(request)]), session=session
        )
        assert [r.result for r in _results(response.messages)] == ["3"]  # the real server added them

        # beta's "add" has the same name; alpha's standing rule does not cover it.
        response = await beta_agent.run("Add 5 and 5", session=session)
        [request] = response.user_input_requests
        assert request.additional_properties["server_label"] == "beta"
        response = await beta_agent.run(
            Message("user", [request.to_function_approval_response(False, reason="not beta")]), session=session
        )
        assert "rejected by user" in _results(response.messages)[0].result

        # alpha's next call is approved by the rule, without asking.
        response = await alpha_agent.run("Add 2 and 2", session=session)
        assert response.user_input_requests == []
        assert [r.result for r in _results(response.messages)] == ["4"]

    assert labels == ["alpha", "beta"]  # the predicate saw each call's server; the rule answered the last one
