"""MCPStdioTool against the real demo server: agent runs, results, filtering, prompts, resources, lifecycle."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from agentnb import Agent, Content, FunctionTool
from agentnb.exceptions import MCPConnectionError, MCPError, ToolExecutionError
from agentnb.local import ScriptedChatClient, ToolCallingChatClient
from agentnb.mcp import MCPStdioTool
from tests.mcp.mcp_helpers import child_processes, stdio_tool

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared() -> AsyncIterator[MCPStdioTool]:
    """One connected demo server for the tests that do not break or reconfigure it."""
    tool = stdio_tool(additional_tool_argument_names={"echo_args": ["trace_id"], "*": ["tenant"]})
    async with tool:
        yield tool


def _results(response) -> list[Content]:
    return [c for m in response.messages for c in m.contents if c.type == "function_result"]


async def test_agent_calls_stdio_tool_end_to_end_on_offline_model() -> None:
    server = stdio_tool(allowed_tools=["add"])
    agent = Agent(ToolCallingChatClient(), instructions="Use the tools.", tools=[server])
    try:
        response = await agent.run("Add the numbers.")
    finally:
        await server.close()
    [result] = _results(response)
    assert result.exception is None
    # ToolCallingChatClient sends schema-valid sample integers; the server really added them.
    call = next(c for m in response.messages for c in m.contents if c.type == "function_call")
    args = call.parse_arguments()
    assert result.result == str(args["a"] + args["b"])
    assert "add" in response.text


async def test_tools_use_server_schema_and_metadata(shared: MCPStdioTool) -> None:
    tools = {t.name: t for t in await shared.get_tools()}
    assert {"add", "echo_args", "get_image", "summarize"} <= set(tools)
    add = tools["add"]
    assert isinstance(add, FunctionTool)
    assert add.description == "Add two integers."
    assert add.parameters()["properties"]["a"]["type"] == "integer"
    assert add.parameters()["required"] == ["a", "b"]
    assert add.additional_properties == {"server_label": "demo", "mcp_tool_name": "add"}
    assert add.approval_mode == "never_require"


async def test_lazy_connection_and_close_end_the_subprocess() -> None:
    server = stdio_tool(allowed_tools=["pid"])
    assert not server.is_connected
    before = set(child_processes())
    [pid_tool] = await server.get_tools()
    assert server.is_connected
    pid = int(await pid_tool.invoke(arguments={}, skip_parsing=True))
    assert pid in child_processes() and pid not in before
    await server.close()
    assert not server.is_connected
    assert pid not in child_processes(), "the server process (or its zombie) is still there after close()"


async def test_results_map_to_contents(shared: MCPStdioTool) -> None:
    image = await shared.call_tool("get_image", {})
    report = await shared.call_tool("get_report", {})
    with pytest.raises(ToolExecutionError, match="failed on purpose: disk full") as info:
        await shared.call_tool("fail", {"reason": "disk full"})
    [picture] = image
    assert picture.type == "data" and picture.media_type == "image/png"
    assert picture.data is not None and picture.data.startswith(b"\x89PNG")
    text, resource = report
    assert text.text == "Report follows."
    assert resource.text == "all good"
    assert resource.additional_properties == {"uri": "demo://report", "media_type": "text/plain"}
    assert "demo" in str(info.value)


async def test_is_error_result_reaches_the_model_and_run_continues(shared: MCPStdioTool) -> None:
    client = ScriptedChatClient([ScriptedChatClient.call("fail", reason="no quota"), "It failed, sorry."])
    response = await Agent(client, tools=[shared]).run("Try it.")
    [result] = _results(response)
    assert result.exception is not None and "failed on purpose: no quota" in result.exception
    assert response.text == "It failed, sorry."
    # The model's second call saw the error text as the tool result.
    assert any("no quota" in (c.exception or "") for m in client.calls[1] for c in m.contents)


async def test_arguments_are_filtered_to_declared_properties(shared: MCPStdioTool) -> None:
    client = ScriptedChatClient(
        [ScriptedChatClient.call("echo_args", text="hi", password="hunter2", _meta={"progressToken": 1}), "done"]
    )
    await client.get_response(
        "go", tools=[shared], function_invocation_kwargs={"user_id": "u-7", "api_key": "sk-secret"}
    )
    result = next(c for m in client.calls[1] for c in m.contents if c.type == "function_result")
    received = json.loads(result.result)
    # Declared by the server: the model's "text" and the runtime "user_id"; nothing else travels.
    assert received == {"text": "hi", "user_id": "u-7"}


async def test_additional_argument_names_are_forwarded(shared: MCPStdioTool) -> None:
    echo = next(t for t in await shared.get_tools() if t.name == "echo_args")
    received = json.loads(
        await echo.invoke(arguments={"text": "x", "trace_id": "t1", "tenant": "acme", "other": 1}, skip_parsing=True)
    )
    assert received == {"text": "x", "trace_id": "t1", "tenant": "acme"}


async def test_prompts_and_resources(shared: MCPStdioTool) -> None:
    prompts = await shared.list_prompts()
    messages = await shared.get_prompt("greet", {"name": "Ada"})
    resources = await shared.list_resources()
    readme = await shared.read_resource("demo://readme")
    logo = await shared.read_resource("demo://logo")
    assert [p.name for p in prompts] == ["greet"]
    assert [(m.role, m.text) for m in messages] == [("user", "Say hello to Ada.")]
    assert {str(r.uri) for r in resources} == {"demo://readme", "demo://logo"}
    assert readme[0].text == "Read me first."
    assert readme[0].additional_properties["uri"] == "demo://readme"
    assert logo[0].type == "data" and logo[0].media_type == "image/png"


async def test_unknown_prompt_is_a_typed_error_naming_the_server(shared: MCPStdioTool) -> None:
    with pytest.raises(MCPError, match="'demo'") as info:
        await shared.get_prompt("nope")
    assert info.value.server == "demo"
    assert shared.is_connected  # a rejected request does not end the session


async def test_missing_command_is_a_connection_error() -> None:
    server = MCPStdioTool("ghost", "/nonexistent/agentnb-mcp-server", connect_timeout=5)
    with pytest.raises(MCPConnectionError, match="'ghost'") as info:
        await server.get_tools()
    assert info.value.server == "ghost"
    assert not server.is_connected


async def test_server_that_exits_at_startup_reports_its_stderr() -> None:
    server = MCPStdioTool("broken", sys.executable, args=["-c", "import sys; sys.exit('no config found')"])
    with pytest.raises(MCPConnectionError, match="'broken'") as info:
        await server.get_tools()
    assert "no config found" in str(info.value)


async def test_env_and_cwd_reach_the_server(tmp_path) -> None:
    script = "import os, sys; sys.stderr.write(os.environ['AGENTNB_TEST'] + '|' + os.getcwd()); sys.exit(1)"
    server = MCPStdioTool("envcheck", sys.executable, args=["-c", script], env={"AGENTNB_TEST": "v42"}, cwd=tmp_path)
    with pytest.raises(MCPConnectionError) as info:
        await server.get_tools()
    assert f"v42|{os.path.realpath(tmp_path)}" in str(info.value)
