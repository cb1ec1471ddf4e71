"""Faults: crashes, hangs and unreachable servers give typed errors naming the server, within the timeout."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
import mcp.client.client  # noqa: F401  # load the SDK here, outside the timed sections
import pytest

from agentnb import Agent
from agentnb.exceptions import MCPConnectionError, MCPTimeoutError
from agentnb.local import ScriptedChatClient
from agentnb.mcp import MCPStreamableHTTPTool
from tests.mcp.mcp_helpers import HTTPServer, child_processes, free_port, stdio_tool


async def test_crashed_stdio_server_is_restarted_on_next_use() -> None:
    async with stdio_tool(allowed_tools=["pid", "crash"]) as server:
        first = int(await server.call_tool("pid"))
        with pytest.raises(MCPConnectionError, match="'demo'") as info:
            await server.call_tool("crash")
        assert info.value.server == "demo"
        assert first not in child_processes()
        second = int(await server.call_tool("pid"))
        assert second != first
        assert server.connect_count == 2


async def test_server_that_died_while_idle_is_restarted_before_the_call() -> None:
    async with stdio_tool(allowed_tools=["pid"]) as server:
        first = int(await server.call_tool("pid"))
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while server.is_connected and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not server.is_connected
        # No error for the caller: the dead server is noticed and replaced before the request is sent.
        second = int(await server.call_tool("pid"))
        assert second != first


async def test_hanging_tool_times_out_and_the_run_continues_with_the_error() -> None:
    server = stdio_tool(allowed_tools=["sleep", "add"], request_timeout=1)
    client = ScriptedChatClient([ScriptedChatClient.call("sleep", seconds=30), "The tool timed out."])
    try:
        await server.get_tools()  # start the server outside the timed part
        started = time.monotonic()
        response = await Agent(client, tools=[server]).run("Wait a bit.")
        elapsed = time.monotonic() - started
        # The session survives a timed-out request.
        assert await server.call_tool("add", {"a": 1, "b": 1}) == "2"
    finally:
        await server.close()
    [result] = [c for m in response.messages for c in m.contents if c.type == "function_result"]
    assert result.exception is not None
    assert "MCPTimeoutError" in result.exception and "'demo'" in result.exception
    assert response.text == "The tool timed out."
    assert elapsed < 10  # the 1 s timeout (plus slack), not the tool's 30 s


async def test_on_tool_error_raise_fails_the_run_cleanly() -> None:
    server = stdio_tool(allowed_tools=["sleep"], request_timeout=1, on_tool_error="raise")
    client = ScriptedChatClient([ScriptedChatClient.call("sleep", seconds=30), "never reached"])
    try:
        with pytest.raises(MCPTimeoutError, match="'demo'"):
            await Agent(client, tools=[server]).run("Wait a bit.")
    finally:
        await server.close()


async def test_crash_during_agent_run_with_raise() -> None:
    server = stdio_tool(allowed_tools=["crash"], on_tool_error="raise")
    client = ScriptedChatClient([ScriptedChatClient.call("crash"), "never reached"])
    try:
        with pytest.raises(MCPConnectionError, match="'demo'"):
            await Agent(client, tools=[server]).run("Crash it.")
    finally:
        await server.close()


async def test_server_that_never_answers_the_handshake_times_out() -> None:
    server = stdio_tool("stuck", "--hang-on-start", connect_timeout=1.5)
    started = time.monotonic()
    with pytest.raises(MCPTimeoutError, match="'stuck'") as info:
        await server.get_tools()
    assert info.value.server == "stuck"
    # Within the timeout plus the SDK's bounded shutdown of the stuck process (close stdin, TERM, KILL).
    assert time.monotonic() - started < 15
    assert not server.is_connected


async def test_unreachable_http_server_is_a_connection_error() -> None:
    server = MCPStreamableHTTPTool("nowhere", f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=5)
    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match="'nowhere'") as info:
        await server.get_tools()
    assert info.value.server == "nowhere"
    assert time.monotonic() - started < 5


async def test_http_server_restart_is_picked_up_on_next_use() -> None:
    first = HTTPServer()
    try:
        server = MCPStreamableHTTPTool("web", first.url, request_timeout=5, connect_timeout=5, allowed_tools=["pid"])
        first_pid = int(await server.call_tool("pid"))
        first.stop()
        with pytest.raises(MCPConnectionError, match="'web'"):
            await server.call_tool("pid")
        # A new server on the same port: the tool reconnects on the next call.
        second = HTTPServer.on_port(first.port)
        try:
            second_pid = int(await server.call_tool("pid"))
            assert second_pid != first_pid
        finally:
            await server.close()
            second.stop()
    finally:
        first.stop()


async def test_unreachable_server_through_a_user_httpx_client() -> None:
    async with httpx.AsyncClient() as client:
        server = MCPStreamableHTTPTool(
            "nowhere", f"http://127.0.0.1:{free_port()}/mcp", http_client=client, connect_timeout=5
        )
        with pytest.raises(MCPConnectionError, match=r"'nowhere'.*ConnectError"):
            await server.get_tools()


async def test_a_hung_server_is_stopped_with_its_process_group_and_restarted_on_next_use() -> None:
    server = stdio_tool(allowed_tools=["freeze", "pid", "add"], request_timeout=1)
    try:
        first = int(await server.call_tool("pid"))
        started = time.monotonic()
        with pytest.raises(MCPTimeoutError, match="no longer answers") as info:
            await server.call_tool("freeze", {"seconds": 120})
        assert info.value.server == "demo"
        assert first not in child_processes(), "the hung server process must be gone"
        # The next call starts a fresh server at once instead of waiting out another timeout.
        assert await server.call_tool("add", {"a": 2, "b": 3}) == "5"
        second = int(await server.call_tool("pid"))
        assert second != first
        assert server.connect_count == 2
        assert time.monotonic() - started < 30
    finally:
        await server.close()


async def test_a_slow_tool_on_a_healthy_server_keeps_its_session() -> None:
    server = stdio_tool(allowed_tools=["sleep", "pid"], request_timeout=1)
    try:
        first = int(await server.call_tool("pid"))
        with pytest.raises(MCPTimeoutError) as info:
            await server.call_tool("sleep", {"seconds": 30})
        assert "no longer answers" not in str(info.value)
        assert int(await server.call_tool("pid")) == first
        assert server.connect_count == 1
    finally:
        await server.close()


async def test_a_result_over_the_size_cap_is_a_clear_error() -> None:
    from agentnb.exceptions import MCPError

    async with stdio_tool(allowed_tools=["big"], max_result_bytes=10_000) as server:
        assert len(await server.call_tool("big", {"size": 9_000})) == 9_000
        with pytest.raises(MCPError, match=r"returned 50,\d{3} bytes, more than max_result_bytes=10,000"):
            await server.call_tool("big", {"size": 50_000})
        # The session is fine: the cap is about what reaches the model, not a server fault.
        assert len(await server.call_tool("big", {"size": 10})) == 10


def test_max_result_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_result_bytes"):
        stdio_tool(max_result_bytes=0)
