"""Session lifecycle: concurrent first use, several event loops, and the owner task's cleanup."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import agentnb.mcp
from tests.mcp.mcp_helpers import child_processes, stdio_tool


async def test_concurrent_first_calls_share_one_connection() -> None:
    server = stdio_tool(allowed_tools=["add"])
    try:
        results = await asyncio.gather(*(server.call_tool("add", {"a": i, "b": 1}) for i in range(5)))
    finally:
        await server.close()
    assert results == ["1", "2", "3", "4", "5"]
    assert server.connect_count == 1


def test_tool_survives_a_new_event_loop_per_call() -> None:
    """Scripts often call asyncio.run once per step; each loop gets its own session, none leaks."""
    server = stdio_tool(allowed_tools=["pid"])
    first = int(asyncio.run(server.call_tool("pid")))
    # The first loop is gone, and its shutdown stopped the server it owned.
    assert first not in child_processes()
    second = int(asyncio.run(server.call_tool("pid")))
    assert second != first
    asyncio.run(server.close())
    assert server.connect_count == 2


async def test_no_owner_task_outlives_close() -> None:
    server = stdio_tool(allowed_tools=["add"])
    await server.get_tools()
    owners = [t for t in asyncio.all_tasks() if t.get_name().startswith("agentnb-mcp-")]
    assert len(owners) == 1
    await server.close()
    assert owners[0].done()
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("agentnb-mcp-")]


def test_public_names_are_sorted_and_importing_stays_light() -> None:
    assert agentnb.mcp.__all__ == sorted(agentnb.mcp.__all__)
    code = "import sys, agentnb.mcp; print(sorted(m for m in ('mcp', 'httpx2', 'anyio') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # The SDK loads on first connection; anyio is small and needed for the session owner.
    assert loaded.strip() == "['anyio']"


async def test_the_websocket_tool_builds_but_never_connects() -> None:
    from agentnb.exceptions import FeatureNotAvailableError
    from agentnb.mcp import MCPWebsocketTool

    tool = MCPWebsocketTool("ws", "wss://example.invalid/mcp", tool_name_prefix="ws")  # the SDK has no ws client
    assert (tool.url, tool.tool_name_prefix, tool.is_connected) == ("wss://example.invalid/mcp", "ws", False)
    with pytest.raises(FeatureNotAvailableError, match="MCPStreamableHTTPTool") as raised:
        async with tool:
            pass
    assert isinstance(raised.value, RuntimeError)  # as the reference's release raises
    with pytest.raises(FeatureNotAvailableError):
        await tool.get_tools()


async def test_the_sampling_and_message_hooks_and_a_failed_enter() -> None:
    from agentnb.exceptions import ToolExecutionError
    from agentnb.local import ScriptedChatClient

    tool = stdio_tool(allowed_tools=["add"])
    model = ScriptedChatClient(["hi"])
    tool.client = model  # the client that answers approved sampling requests
    assert tool.sampling.client is model and tool.client is model
    assert await tool.message_handler(RuntimeError("the session hiccupped")) is None  # logged, not raised
    closed: list[bool] = []

    async def boom() -> None:
        raise RuntimeError("boom")

    async def close() -> None:
        closed.append(True)

    tool.connect = boom  # type: ignore[method-assign]
    tool.close = close  # type: ignore[method-assign]
    with pytest.raises(ToolExecutionError, match="Failed to enter context manager: RuntimeError: boom"):
        async with tool:
            pass
    assert closed == [True]


async def test_task_options_leave_a_server_without_tasks_alone() -> None:
    """The demo server runs no tool as a task (it speaks 2026-07-28): options apply to nothing, calls are plain."""
    import warnings
    from datetime import timedelta

    from agentnb.mcp import MCPTaskOptions

    options = MCPTaskOptions(default_ttl=timedelta(seconds=30), max_task_wait=timedelta(seconds=5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        server = stdio_tool(allowed_tools=["add"], task_options=options)
    try:
        assert await server.call_tool("add", {"a": 2, "b": 3}) == "5"
    finally:
        await server.close()
    assert server.task_options is options
