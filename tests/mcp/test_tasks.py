"""MCP long-running tasks against a real task server (tests/mcp/servers/task_server.py) over stdio and HTTP.

The server logs every request it receives to ``events.jsonl`` in its state directory, so each test checks what
actually reached the server: how many ``tools/call``, the ``task.ttl`` sent, whether ``tasks/cancel`` came.
Tests that neither break nor reconfigure the server share one (``shared``) and read only their own part of
its log (``Log``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentnb import Agent, Message
from agentnb.exceptions import MCPConnectionError, MCPError, MCPTimeoutError, ToolExecutionError
from agentnb.local import ScriptedChatClient
from agentnb.mcp import MCPStdioTool, MCPStreamableHTTPTool, MCPTaskOptions
from tests.mcp.mcp_helpers import TASK_SERVER, HTTPServer


def task_tool(state: Path, *flags: str, **kwargs: Any) -> MCPStdioTool:
    """An MCPStdioTool for the task server keeping its state (and request log) in ``state``."""
    kwargs.setdefault("request_timeout", 10)
    kwargs.setdefault("connect_timeout", 20)
    return MCPStdioTool("tasks", sys.executable, args=[TASK_SERVER, "stdio", "--state", str(state), *flags], **kwargs)


def events(state: Path, method: str | None = None, *, start: int = 0) -> list[dict[str, Any]]:
    """The requests the server received (optionally only one method), oldest first, from entry ``start`` on."""
    path = state / "events.jsonl"
    if not path.exists():
        return []
    logged = [json.loads(line) for line in path.read_text().splitlines()][start:]
    return [e for e in logged if method is None or e["method"] == method]


class Log:
    """The part of a shared server's request log written after this object was made."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.start = len(events(state))

    def __call__(self, method: str | None = None) -> list[dict[str, Any]]:
        return events(self.state, method, start=self.start)

    def calls(self) -> list[dict[str, Any]]:
        return [e["params"] for e in self("tools/call")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[MCPStdioTool]:
    """One connected task server over stdio for the tests that do not break it; its options reset per test."""
    tool = task_tool(tmp_path_factory.mktemp("shared-tasks"))
    async with tool:
        yield tool


@pytest.fixture
def log(shared: MCPStdioTool) -> Iterator[Log]:
    shared.task_options = None
    yield Log(Path(shared.args[3]))
    shared.task_options = None


pytestmark = pytest.mark.asyncio(loop_scope="module")


def calls(state: Path) -> list[dict[str, Any]]:
    """The params of each tools/call the server received."""
    return [e["params"] for e in events(state, "tools/call")]


async def eventually(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the server never saw it"
        await asyncio.sleep(0.05)


@pytest.fixture
def http_tasks(tmp_path: Path) -> Iterator[HTTPServer]:
    server = HTTPServer("--state", str(tmp_path), script=TASK_SERVER)
    yield server
    server.stop()


# -- the lifecycle --------------------------------------------------------------------------------------------


async def test_task_tool_completes_after_several_polls_over_stdio(shared: MCPStdioTool, log: Log) -> None:
    assert await shared.call_tool("slow_add", {"a": 2, "b": 3}) == "5"
    [call] = log.calls()
    assert call["name"] == "slow_add" and call["task"] == {}  # augmented, no ttl unless asked
    task_id = log("tasks/result")[0]["params"]["taskId"]
    assert [e["params"]["taskId"] for e in log("tasks/get")] == [task_id] * 3
    assert log("tasks/cancel") == []


async def test_task_tool_completes_over_streamable_http(http_tasks: HTTPServer, tmp_path: Path) -> None:
    tool = MCPStreamableHTTPTool("tasks", http_tasks.url, request_timeout=10, connect_timeout=10)
    async with tool:
        assert await tool.call_tool("slow_add", {"a": 20, "b": 22}) == "42"
    assert [c["name"] for c in calls(tmp_path)] == ["slow_add"]
    assert len(events(tmp_path, "tasks/get")) == 3
    assert len(events(tmp_path, "tasks/result")) == 1


async def test_polls_follow_the_servers_poll_interval(tmp_path: Path) -> None:
    async with task_tool(tmp_path, "--poll-interval", "300") as tool:
        assert await tool.call_tool("slow_add", {"a": 1, "b": 1}) == "2"
    times = [e["time"] for e in events(tmp_path, "tasks/get")]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert len(gaps) == 2 and all(0.28 <= gap < 1.5 for gap in gaps), gaps


async def test_default_ttl_reaches_the_server_in_milliseconds(shared: MCPStdioTool, log: Log) -> None:
    shared.task_options = MCPTaskOptions(default_ttl=timedelta(seconds=7, milliseconds=250))
    assert await shared.call_tool("slow_add", {"a": 1, "b": 2}) == "3"
    assert log.calls()[0]["task"] == {"ttl": 7250}


async def test_only_tools_requiring_tasks_are_called_as_tasks(shared: MCPStdioTool, log: Log) -> None:
    assert await shared.call_tool("optional_add", {"a": 1, "b": 2}) == "plain:3"
    assert await shared.call_tool("plain_add", {"a": 1, "b": 2}) == "plain:3"
    assert [("task" in c) for c in log.calls()] == [False, False]
    assert log("tasks/get") == []


# -- giving up: cancel the task ---------------------------------------------------------------------------------


async def test_max_task_wait_cancels_the_task_and_raises(shared: MCPStdioTool, log: Log) -> None:
    shared.task_options = MCPTaskOptions(max_task_wait=timedelta(seconds=0.4))
    started = time.monotonic()
    with pytest.raises(MCPTimeoutError, match="max_task_wait") as info:
        await shared.call_tool("never_done", {})
    assert time.monotonic() - started < 3
    assert info.value.server == "tasks"
    [cancel] = log("tasks/cancel")  # sent before the error was raised
    assert cancel["params"]["taskId"] in str(info.value)
    assert len(log("tasks/get")) >= 2  # it did poll until the deadline


async def test_local_cancellation_cancels_the_remote_task(shared: MCPStdioTool, log: Log) -> None:
    call = asyncio.create_task(shared.call_tool("never_done", {}))
    await eventually(lambda: len(log("tasks/get")) >= 2)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await eventually(lambda: len(log("tasks/cancel")) == 1)
    assert log("tasks/cancel")[0]["params"]["taskId"] == log("tasks/get")[0]["params"]["taskId"]


async def test_local_cancellation_can_leave_the_remote_task_running(tmp_path: Path) -> None:
    options = MCPTaskOptions(cancel_remote_task_on_local_cancellation=False)
    async with task_tool(tmp_path, task_options=options) as tool:
        call = asyncio.create_task(tool.call_tool("never_done", {}))
        await eventually(lambda: len(events(tmp_path, "tasks/get")) >= 1)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    # Closing waits for any tasks/cancel in flight, so none was sent at all.
    assert events(tmp_path, "tasks/cancel") == []


async def test_a_poll_the_server_refuses_cancels_the_task(shared: MCPStdioTool, log: Log) -> None:
    with pytest.raises(MCPError, match="the task store is unavailable"):
        await shared.call_tool("poll_error", {})
    assert len(log("tasks/cancel")) == 1


async def test_a_slow_poll_is_retried(tmp_path: Path) -> None:
    # The first tasks/get takes 1.5 s, past request_timeout: a timeout while polling is transient.
    async with task_tool(tmp_path, request_timeout=1) as tool:
        assert await tool.call_tool("slow_first_poll", {"a": 4, "b": 4}) == "8"
        assert tool.connect_count == 1  # the server still answered, so the session was kept
    assert len(events(tmp_path, "tasks/get")) >= 3
    assert events(tmp_path, "tasks/cancel") == []


# -- the server ended the task: no cancel -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_name", "message"),
    [
        ("fail_task", r"task \w+ failed: disk full"),
        ("cancelled_task", r"task \w+ cancelled"),
        ("error_result", "failed: the report could not be built"),
    ],
)
async def test_a_task_the_server_ended_badly_raises_without_cancel(
    shared: MCPStdioTool, log: Log, tool_name: str, message: str
) -> None:
    with pytest.raises(ToolExecutionError, match=message):
        await shared.call_tool(tool_name, {})
    assert log("tasks/cancel") == []
    assert len(log.calls()) == 1


# -- servers without tasks ----------------------------------------------------------------------------------


async def test_a_server_ignoring_the_task_field_gives_its_plain_result(tmp_path: Path) -> None:
    async with task_tool(tmp_path, "--ignore-tasks") as tool:
        assert await tool.call_tool("slow_add", {"a": 2, "b": 2}) == "plain:4"
    [call] = calls(tmp_path)
    assert call["task"] == {}
    assert events(tmp_path, "tasks/get") == []


async def test_a_server_refusing_the_task_field_gets_a_plain_call(tmp_path: Path) -> None:
    async with task_tool(tmp_path, "--reject-tasks") as tool:
        assert await tool.call_tool("slow_add", {"a": 2, "b": 2}) == "plain:4"
    assert [("task" in c) for c in calls(tmp_path)] == [True, False]


# -- lost connections ---------------------------------------------------------------------------------------


async def test_connection_lost_before_the_task_id_is_not_submitted_again(tmp_path: Path) -> None:
    async with task_tool(tmp_path) as tool:
        with pytest.raises(MCPConnectionError, match="not sent again"):
            await tool.call_tool("crash_on_submit", {})
        # The tool itself recovers: the next call starts the server afresh.
        assert await tool.call_tool("plain_add", {"a": 1, "b": 1}) == "plain:2"
    assert [c["name"] for c in calls(tmp_path)] == ["crash_on_submit", "plain_add"]


async def test_connection_lost_after_the_task_id_reconnects_and_finishes(tmp_path: Path) -> None:
    async with task_tool(tmp_path) as tool:
        assert await tool.call_tool("crash_on_poll", {"a": 5, "b": 6}) == "11"
        assert tool.connect_count == 2
    [call] = calls(tmp_path)
    assert call["name"] == "crash_on_poll"
    assert len(events(tmp_path, "initialize")) == 2
    task_ids = {e["params"]["taskId"] for e in events(tmp_path) if e["method"].startswith("tasks/")}
    assert len(task_ids) == 1  # the same task, tracked across both server processes
    assert events(tmp_path, "tasks/cancel") == []


async def test_a_second_lost_connection_gives_up_and_cancels_the_task(tmp_path: Path) -> None:
    async with task_tool(tmp_path) as tool:
        with pytest.raises(MCPConnectionError, match="closed the connection during polling task"):
            await tool.call_tool("crash_twice", {})
    # One reconnect to keep polling, then one more only to send the cancel.
    assert len(events(tmp_path, "tasks/get")) == 2
    assert len(events(tmp_path, "initialize")) == 3
    [cancel] = events(tmp_path, "tasks/cancel")
    assert cancel["params"]["taskId"] == events(tmp_path, "tasks/get")[0]["params"]["taskId"]
    assert len(calls(tmp_path)) == 1


# -- through an agent -----------------------------------------------------------------------------------------


async def test_an_agent_calls_a_task_tool_after_approval(tmp_path: Path) -> None:
    tool = task_tool(tmp_path, approval_mode={"slow_add"})
    client = ScriptedChatClient([ScriptedChatClient.call("slow_add", a=3, b=4), "Seven."])
    agent = Agent(client, tools=[tool])
    session = agent.create_session()
    async with tool:
        response = await agent.run("Add 3 and 4.", session=session)
        [request] = response.user_input_requests
        assert calls(tmp_path) == []  # nothing runs before the approval
        response = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
    assert response.text == "Seven."
    result = next(c for m in client.calls[-1] for c in m.contents if c.type == "function_result")
    assert result.result == "7"
    assert [c["name"] for c in calls(tmp_path)] == ["slow_add"]


# -- the options ----------------------------------------------------------------------------------------------


async def test_task_options_are_frozen_and_validated() -> None:
    options = MCPTaskOptions()
    assert (options.default_ttl, options.cancel_remote_task_on_local_cancellation, options.max_task_wait) == (
        None,
        True,
        None,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_task_wait = timedelta(seconds=1)  # type: ignore[misc]
    for field in ("default_ttl", "max_task_wait"):
        with pytest.raises(ValueError, match="positive"):
            MCPTaskOptions(**{field: timedelta(0)})
    assert MCPTaskOptions(default_ttl=timedelta(minutes=2)).ttl_ms == 120_000


async def test_task_options_are_assignable_on_every_tool(tmp_path: Path) -> None:
    tool = task_tool(tmp_path)
    assert tool.task_options == MCPTaskOptions()
    options = MCPTaskOptions(max_task_wait=timedelta(seconds=30))
    tool.task_options = options
    assert tool.task_options is options
    tool.task_options = None
    assert tool.task_options == MCPTaskOptions()
    http = MCPStreamableHTTPTool("web", "http://127.0.0.1:1/mcp", task_options=options)
    assert http.task_options is options
    with pytest.raises(TypeError, match="MCPTaskOptions"):
        tool.task_options = {"max_task_wait": 3}  # type: ignore[assignment]
