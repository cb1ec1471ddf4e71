"""How remote tools become local ones: allowed_tools, prefixes, collisions and approval modes."""

from __future__ import annotations

import pytest

from agentnb import Agent, Message
from agentnb.exceptions import MCPError
from agentnb.local import ScriptedChatClient
from tests.mcp.mcp_helpers import HTTPServer, stdio_tool


async def test_colliding_local_names_are_an_error_not_first_one_wins() -> None:
    server = stdio_tool("clash", "--collide")
    try:
        with pytest.raises(MCPError, match=r"'lookup\.user' and 'lookup_user' both map to the local name") as info:
            await server.get_tools()
        assert info.value.server == "clash"
        # A configuration problem, not a broken server: the session stays up, and excluding one of the two
        # by its remote name resolves it (the dotted name becomes a provider-safe local name).
        assert server.is_connected
        server.allowed_tools = frozenset({"lookup.user", "add"})
        tools = {t.name: t for t in await server.get_tools()}
        assert set(tools) == {"lookup_user", "add"}
        assert tools["lookup_user"].additional_properties["mcp_tool_name"] == "lookup.user"
        assert await tools["lookup_user"].invoke(arguments={"user": "ada"}, skip_parsing=True) == "dot:ada"
        assert server.connect_count == 1
    finally:
        await server.close()


async def test_prefix_keeps_two_servers_apart_and_approval_is_scoped_per_server(http_server: HTTPServer) -> None:
    # Two sessions (two tool objects, as for two servers) against one server process keep this test quick.
    first = http_server.tool("alpha", allowed_tools=["add"], tool_name_prefix="alpha", approval_mode="always_require")
    second = http_server.tool("beta", allowed_tools=["add"], tool_name_prefix="beta")
    client = ScriptedChatClient(
        [
            [ScriptedChatClient.call("alpha_add", a=1, b=2), ScriptedChatClient.call("beta_add", a=10, b=20)],
            "Both added.",
        ]
    )
    agent = Agent(client, tools=[first, second])
    session = agent.create_session()
    try:
        alpha_tools = await first.get_tools()
        beta_tools = await second.get_tools()
        assert [t.name for t in alpha_tools] == ["alpha_add"] and [t.name for t in beta_tools] == ["beta_add"]
        # Same remote tool, different servers: the label tells approval rules which server a call goes to.
        assert alpha_tools[0].additional_properties["server_label"] == "alpha"
        assert beta_tools[0].additional_properties["server_label"] == "beta"
        assert alpha_tools[0].approval_mode == "always_require"
        assert beta_tools[0].approval_mode == "never_require"

        paused = await agent.run("Add both.", session=session)
        [request] = paused.user_input_requests
        assert request.function_call.name == "alpha_add"
        assert not any(c.type == "function_result" for m in paused.messages for c in m.contents)

        done = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
    finally:
        await first.close()
        await second.close()
    results = {c.call_id: c for m in done.messages for c in m.contents if c.type == "function_result"}
    assert sorted(r.result for r in results.values()) == ["3", "30"]
    assert done.text == "Both added."


async def test_rejected_approval_never_reaches_the_server(http_server: HTTPServer) -> None:
    server = http_server.tool(allowed_tools=["echo_args", "add"], approval_mode={"echo_args"})
    client = ScriptedChatClient([ScriptedChatClient.call("echo_args", text="rm -rf"), "Not done."])
    agent = Agent(client, tools=[server])
    session = agent.create_session()
    try:
        tools = {t.name: t for t in await server.get_tools()}
        assert tools["echo_args"].approval_mode == "always_require"
        assert tools["add"].approval_mode == "never_require"
        paused = await agent.run("Do it.", session=session)
        [request] = paused.user_input_requests
        done = await agent.run(
            Message("user", [request.to_function_approval_response(False, reason="no")]), session=session
        )
    finally:
        await server.close()
    [result] = [c for m in done.messages for c in m.contents if c.type == "function_result"]
    assert "rejected by user" in str(result.result)
    assert "rm -rf" not in str(result.result)


def test_approval_mode_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="approval_mode"):
        stdio_tool(approval_mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="approval_mode"):
        stdio_tool(approval_mode={"add": "maybe"})
    with pytest.raises(TypeError, match="allowed_tools"):
        stdio_tool(allowed_tools="add")
    with pytest.raises(ValueError, match="on_tool_error"):
        stdio_tool(on_tool_error="ignore")  # type: ignore[arg-type]


async def test_maf_style_approval_mapping(http_server: HTTPServer) -> None:
    server = http_server.tool(
        allowed_tools=["add", "echo_args", "pid"],
        approval_mode={"always_require_approval": ["echo_args"], "never_require_approval": ["add"]},
    )
    try:
        modes = {t.name: t.approval_mode for t in await server.get_tools()}
    finally:
        await server.close()
    assert modes == {"add": "never_require", "echo_args": "always_require", "pid": "never_require"}


async def test_output_schemas_are_the_servers_declared_ones_by_remote_name(http_server: HTTPServer) -> None:
    tool = http_server.tool("demo", allowed_tools=["add"], tool_name_prefix="demo")
    try:
        assert tool.output_schemas == {}  # nothing listed yet
        (function,) = await tool.get_tools()
        schemas = tool.output_schemas
        # Every listed tool, allowed or not, under its remote name (the SDK wraps an int result as {"result": int});
        # tools answering with images or content blocks declare no schema and are left out.
        assert function.name == "demo_add" and {"add", "echo_args", "pid"} <= set(schemas)
        assert "get_image" not in schemas and "get_report" not in schemas
        assert schemas["add"]["properties"]["result"]["type"] == "integer"
        assert schemas["echo_args"]["properties"]["result"]["type"] == "string"
        schemas["add"]["properties"].clear()  # a copy: the tool's own listing is unchanged
        assert tool.output_schemas["add"]["properties"]["result"]["type"] == "integer"
    finally:
        await tool.close()
