"""DefaultMCPToolHandler against a real MCP server over streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentnb.declarative import (
    DeclarativeActionError,
    DefaultMCPToolHandler,
    MCPToolInvocation,
    ToolApprovalRequest,
    ToolApprovalResponse,
    WorkflowFactory,
)
from tests.mcp.mcp_helpers import free_port

SERVER = str(Path(__file__).parent / "mcp_session_server.py")


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, f"MCP test server exited with {process.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "MCP test server did not listen within 20 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def open_connections(url: str) -> set[int]:
    """Local ports of this machine's established TCP connections to the server at ``url`` (its clients' side)."""
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    found: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state = fields[1], fields[2], fields[3]
            if state == "01" and int(remote.rsplit(":", 1)[1], 16) == port:
                found.add(int(local.rsplit(":", 1)[1], 16))
    return found


async def settled_connections(url: str, expected: set[int]) -> set[int]:
    """The open connections, once they equal ``expected`` or two seconds have passed."""
    deadline = time.monotonic() + 2
    while (found := open_connections(url)) != expected and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return found


async def whoami(handler: DefaultMCPToolHandler, url: str, token: str, header: str = "X-Token") -> dict[str, Any]:
    result = await handler(MCPToolInvocation(url, "whoami", {}, headers={header: token}))
    assert not result.is_error, result.content
    return json.loads(result.content)


async def test_calls_a_tool_and_returns_its_result(mcp_url: str) -> None:
    async with DefaultMCPToolHandler() as mcp:
        result = await mcp(MCPToolInvocation(mcp_url, "add", {"a": 2, "b": 3}))
    assert not result.is_error
    assert str(result.content) == "5"


async def test_tool_errors_and_unreachable_servers_are_error_results(mcp_url: str) -> None:
    async with DefaultMCPToolHandler(connect_timeout=5) as mcp:
        failed = await mcp(MCPToolInvocation(mcp_url, "fail", {"reason": "disk full"}))
        nowhere = await mcp(MCPToolInvocation(f"http://127.0.0.1:{free_port()}/mcp", "add", {"a": 1, "b": 1}))
    assert failed.is_error and "disk full" in failed.content and failed.content.startswith("Error: ")
    assert nowhere.is_error and nowhere.content.startswith("Error: Failed to connect to MCP server")


async def test_tools_list_returns_the_catalog_as_json_text(mcp_url: str) -> None:
    async with DefaultMCPToolHandler() as mcp:
        assert mcp.LIST_TOOLS_TOOL_NAME == DefaultMCPToolHandler.LIST_TOOLS_TOOL_NAME == "tools/list"
        result = await mcp(MCPToolInvocation(mcp_url, "tools/list", {}))
        with_arguments = await mcp(MCPToolInvocation(mcp_url, "tools/list", {"cursor": "x"}))
    catalog = json.loads(result.content)
    tools = {tool["name"]: tool for tool in catalog["tools"]}
    assert set(tools) == {"whoami", "add", "fail", "method_counts"}
    assert list(tools["add"]) == ["name", "description", "inputSchema", "outputSchema"]
    assert tools["add"]["description"] == "Add two integers."
    assert set(tools["add"]["inputSchema"]["properties"]) == {"a", "b"}
    # The server's declared output schema (the SDK wraps an int result as {"result": integer}); none for "fail".
    assert tools["add"]["outputSchema"]["properties"]["result"]["type"] == "integer"
    assert tools["add"]["outputSchema"]["required"] == ["result"]
    assert tools["whoami"]["outputSchema"]["properties"]["result"]["type"] == "string"
    assert tools["fail"]["outputSchema"] is None
    assert with_arguments.is_error and "takes no arguments" in with_arguments.content


async def test_one_cached_client_per_server_and_header_set(mcp_url: str) -> None:
    async with DefaultMCPToolHandler() as mcp:
        first = await whoami(mcp, mcp_url, "alice")
        again = await whoami(mcp, mcp_url, "alice")
        other_case = await whoami(mcp, mcp_url, "alice", header="x-token")  # header names are case-insensitive
        bob = await whoami(mcp, mcp_url, "bob")
    assert first["token"] == "alice" and bob["token"] == "bob"
    # The same cached client's kept-alive connection carries alice's calls; bob's token gets its own client.
    assert first["port"] == again["port"] == other_case["port"]
    assert bob["port"] != first["port"]


async def test_concurrent_first_calls_open_one_connection_per_key(mcp_url: str) -> None:
    async with DefaultMCPToolHandler() as probe:

        async def handshakes() -> int:
            result = await probe(MCPToolInvocation(mcp_url, "method_counts", {}))
            return json.loads(result.content)["server/discover"]

        before = await handshakes()
        async with DefaultMCPToolHandler() as mcp:
            calls = [whoami(mcp, mcp_url, "erin") for _ in range(5)] + [whoami(mcp, mcp_url, "frank")]
            results = await asyncio.gather(*calls)
        assert [r["token"] for r in results] == ["erin"] * 5 + ["frank"]
        assert await handshakes() == before + 2  # one per header set, not one per call


async def test_eviction_and_aclose_close_the_owned_clients(mcp_url: str) -> None:
    assert open_connections(mcp_url) == set()
    mcp = DefaultMCPToolHandler(cache_max_size=1)
    alice = await whoami(mcp, mcp_url, "alice")
    assert alice["port"] in open_connections(mcp_url)
    bob = await whoami(mcp, mcp_url, "bob")  # evicts alice's entry: its client and connection are closed
    assert await settled_connections(mcp_url, {bob["port"]}) == {bob["port"]}
    alice_again = await whoami(mcp, mcp_url, "alice")  # a new client for alice; bob's is closed
    assert alice_again["port"] not in (alice["port"], bob["port"])
    assert await settled_connections(mcp_url, {alice_again["port"]}) == {alice_again["port"]}
    await mcp.aclose()
    assert await settled_connections(mcp_url, set()) == set()
    closed = await mcp(MCPToolInvocation(mcp_url, "add", {"a": 1, "b": 1}))
    assert closed.is_error and "closed" in closed.content


async def test_without_eviction_the_clients_stay_open(mcp_url: str) -> None:
    async with DefaultMCPToolHandler(cache_max_size=2) as mcp:
        alice = await whoami(mcp, mcp_url, "alice")
        bob = await whoami(mcp, mcp_url, "bob")
        assert open_connections(mcp_url) == {alice["port"], bob["port"]}
        assert (await whoami(mcp, mcp_url, "alice"))["port"] == alice["port"]
    assert await settled_connections(mcp_url, set()) == set()


async def test_client_provider_gives_each_call_its_own_session_and_keeps_its_client(mcp_url: str) -> None:
    seen: list[MCPToolInvocation] = []
    async with httpx.AsyncClient() as client:

        async def provider(invocation: MCPToolInvocation) -> httpx.AsyncClient | None:
            seen.append(invocation)
            return client if invocation.tool_name != "add" else None

        async with DefaultMCPToolHandler(client_provider=provider) as mcp:
            one = await whoami(mcp, mcp_url, "carol")
            listed = await mcp(MCPToolInvocation(mcp_url, "tools/list", {}))
            added = await mcp(MCPToolInvocation(mcp_url, "add", {"a": 1, "b": 2}))
            # Nothing is cached: the fallback client of the provider-less call is closed with its call.
            assert open_connections(mcp_url) <= {one["port"]}
        assert not client.is_closed
        assert one["token"] == "carol" and one["port"] in open_connections(mcp_url)  # the caller's own connection
    assert not listed.is_error and str(added.content) == "3"
    assert [call.tool_name for call in seen] == ["whoami", "tools/list", "add"]


async def test_allowed_urls_refuses_other_servers_by_name_before_connecting(mcp_url: str) -> None:
    outside = mcp_url.replace("127.0.0.1", "localhost")
    async with DefaultMCPToolHandler(allowed_urls=[mcp_url]) as mcp:
        assert not (await mcp(MCPToolInvocation(mcp_url, "add", {"a": 1, "b": 2}))).is_error
        for url in (outside, mcp_url + "-admin", "http://169.254.169.254/latest/meta-data"):
            with pytest.raises(DeclarativeActionError, match="not under any of allowed_urls") as info:
                await mcp(MCPToolInvocation(url, "add", {"a": 1, "b": 2}))
            assert repr(url) in str(info.value)


WORKFLOW = """\
name: mcp-end-to-end
actions:
  - kind: InvokeMcpTool
    id: who
    serverUrl: =Env.MCP_URL
    serverLabel: sessions
    toolName: whoami
    headers:
      X-Token: =inputs.token
    output:
      result: Local.who
  - kind: InvokeMcpTool
    id: sum
    serverUrl: =Env.MCP_URL
    toolName: add
    requireApproval: true
    arguments:
      a: =inputs.a
      b: 40
    output:
      result: Local.sum
  - kind: InvokeMcpTool
    id: catalog
    serverUrl: =Env.MCP_URL
    toolName: tools/list
    output:
      result: Local.catalog
  - kind: SendActivity
    activity:
      text: =Concat(Local.who, " | ", Text(Local.sum))
  - kind: SendActivity
    activity:
      text: =Local.catalog
"""


async def test_a_workflow_reaches_mcp_through_the_default_handler(mcp_url: str) -> None:
    async with DefaultMCPToolHandler(allowed_urls=[mcp_url]) as mcp:
        factory = WorkflowFactory(mcp_tool_handler=mcp, configuration={"MCP_URL": mcp_url})
        workflow = factory.create_workflow_from_yaml(WORKFLOW)
        paused = await workflow.run({"token": "dave", "a": 2})
        (request,) = paused.get_request_info_events()
        assert isinstance(request.data, ToolApprovalRequest)
        assert (request.data.function_name, request.data.arguments) == ("add", {"a": 2, "b": 40})
        assert request.request_id is not None
        result = await workflow.run(responses={request.request_id: ToolApprovalResponse(approved=True)})
    who_text, catalog_text = result.get_outputs()
    who, _, total = who_text.partition(" | ")
    assert json.loads(who)["token"] == "dave"
    assert total == "42"
    assert {tool["name"] for tool in json.loads(catalog_text)["tools"]} == {"whoami", "add", "fail", "method_counts"}


ERRORS_WORKFLOW = """
name: mcp-errors
actions:
  - kind: InvokeMcpTool
    id: broken
    serverUrl: =Env.MCP_URL
    toolName: fail
    arguments:
      reason: disk full
    output:
      result: Local.failed
      autoSend: true
  - kind: InvokeMcpTool
    id: unreachable
    serverUrl: =Env.NOWHERE
    toolName: add
    arguments: {a: 1, b: 1}
    output:
      result: Local.nowhere
  - kind: InvokeMcpTool
    id: sum
    serverUrl: =Env.MCP_URL
    toolName: add
    arguments: {a: 2, b: 3}
    output:
      result: Local.sum
  - kind: SendActivity
    activity:
      text: =Concat(Local.failed, " | ", Local.nowhere, " | ", Text(Local.sum))
"""


async def test_an_error_result_is_stored_in_the_result_and_the_workflow_goes_on(mcp_url: str) -> None:
    # As the reference's executor (the .NET AssignErrorAsync): "Error: <message>" in output.result, nothing sent.
    nowhere = f"http://127.0.0.1:{free_port()}/mcp"
    async with DefaultMCPToolHandler(connect_timeout=5) as mcp:
        factory = WorkflowFactory(mcp_tool_handler=mcp, configuration={"MCP_URL": mcp_url, "NOWHERE": nowhere})
        result = await factory.create_workflow_from_yaml(ERRORS_WORKFLOW).run({})
    (text,) = result.get_outputs()
    failed, unreachable, total = text.split(" | ")
    assert failed.startswith("Error: ") and "disk full" in failed and not failed.startswith("Error: Error:")
    assert unreachable.startswith("Error: Failed to connect to MCP server")
    assert total == "5"


async def test_transport_and_tool_exceptions_from_a_handler_become_error_results(mcp_url: str) -> None:
    # The reference turns a handler's tool, MCP and httpx exceptions into error results; any other one propagates.
    from agentnb.declarative import MCPToolResult
    from agentnb.mcp import MCPStreamableHTTPTool

    dead = f"http://127.0.0.1:{free_port()}/mcp"

    async def raising(invocation: MCPToolInvocation) -> MCPToolResult:
        if invocation.tool_name == "http":  # a refused connection, raised as httpx's own error
            async with httpx.AsyncClient() as client:
                await client.post(dead, json={})
        if invocation.tool_name == "sdk":  # the mcp SDK's own error type, as a handler on the bare SDK raises it
            from mcp.shared.exceptions import MCPError as SDKError

            raise SDKError(-32000, "session lost")
        tool = MCPStreamableHTTPTool("sessions", invocation.server_url, request_timeout=5)
        try:  # a tool error from the real server, or MCPConnectionError from the dead URL, raised as they come
            return MCPToolResult(content=await tool.call_tool(invocation.tool_name, invocation.arguments))
        finally:
            await tool.close()

    workflow_yaml = """
name: raising
actions:
  - kind: InvokeMcpTool
    serverUrl: =Env.DEAD
    toolName: http
    output: {result: Local.http}
  - kind: InvokeMcpTool
    serverUrl: =Env.DEAD
    toolName: add
    arguments: {a: 1, b: 1}
    output: {result: Local.mcp}
  - kind: InvokeMcpTool
    serverUrl: =Env.DEAD
    toolName: sdk
    output: {result: Local.sdk}
  - kind: InvokeMcpTool
    serverUrl: =Env.MCP_URL
    toolName: fail
    arguments: {reason: quota}
    output: {result: Local.tool}
  - kind: SendActivity
    activity:
      text: =Concat(Local.http, " | ", Local.mcp, " | ", Local.sdk, " | ", Local.tool)
"""
    factory = WorkflowFactory(mcp_tool_handler=raising, configuration={"MCP_URL": mcp_url, "DEAD": dead})
    (text,) = (await factory.create_workflow_from_yaml(workflow_yaml).run({})).get_outputs()
    http_error, mcp_error, sdk_error, tool_error = text.split(" | ")
    assert http_error.startswith("Error: ConnectError: ")
    assert mcp_error.startswith("Error: ") and "sessions" in mcp_error
    assert sdk_error == "Error: session lost"
    assert tool_error.startswith("Error: ") and "quota" in tool_error

    def buggy(invocation: MCPToolInvocation) -> MCPToolResult:
        raise TypeError("a bug in the handler")

    factory = WorkflowFactory(mcp_tool_handler=buggy, configuration={"MCP_URL": mcp_url, "DEAD": dead})
    with pytest.raises(TypeError, match="a bug in the handler"):
        await factory.create_workflow_from_yaml(workflow_yaml).run({})
