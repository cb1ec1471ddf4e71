"""Progressive disclosure against real MCP servers: the model sees the loader tools, loads a schema, calls it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentnb import Agent, Content, Message
from agentnb.exceptions import ToolExecutionError
from agentnb.local import FunctionChatClient
from agentnb.mcp import MCPStdioTool
from tests.mcp.mcp_helpers import HTTPServer, stdio_tool

LOADERS = ["list_mcp_tools", "load_tool", "unload_tool"]


def _call(name: str, **arguments: Any) -> Content:
    return Content.from_function_call(f"call_{name}", name, json.dumps(arguments))


def _last_result(messages: list[Message]) -> Any:
    for message in reversed(messages):
        for content in message.contents:
            if content.type == "function_result":
                return content.result
    raise AssertionError("no tool result yet")


class Model:
    """A scripted model that records the tools each request offered (name -> schema)."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.offered: list[dict[str, dict[str, Any]]] = []

    def __call__(self, messages: list[Message], options: dict[str, Any]) -> Any:
        self.offered.append({t.name: t.parameters() for t in options.get("tools") or []})
        step = self.steps.pop(0)
        return step(messages) if callable(step) else step


async def test_the_model_sees_the_index_then_loads_a_schema_then_calls_the_tool() -> None:
    server = stdio_tool(allowed_tools=["add", "echo_args", "pid"], use_progressive_disclosure=True)
    index: list[dict[str, Any]] = []

    def after_listing(messages: list[Message]) -> Content:
        index.extend(_last_result(messages))  # the list the model receives as JSON
        return _call("load_tool", tool="add")

    model = Model(
        _call("list_mcp_tools"),
        after_listing,
        _call("add", a=2, b=3),
        lambda messages: f"The sum is {_last_result(messages)}.",
    )
    agent = Agent(FunctionChatClient(model), tools=[server])
    try:
        response = await agent.run("Add 2 and 3.")
    finally:
        await server.close()

    assert response.text == "The sum is 5."
    # First request: only the loader tools, no schema of the server's own tools.
    assert list(model.offered[0]) == LOADERS
    assert model.offered[1] == model.offered[0]
    # The index names every allowed tool with its full schema; nothing is loaded yet.
    by_name = {entry["name"]: entry for entry in index}
    assert sorted(by_name) == ["add", "echo_args", "pid"]
    assert by_name["add"]["parameters"]["required"] == ["a", "b"]
    assert (by_name["add"]["remote_name"], by_name["add"]["loaded"], by_name["add"]["approval_mode"]) == (
        "add",
        False,
        "never_require",
    )
    # After load_tool, the next request carries add's schema from the server, and add is callable.
    assert list(model.offered[2]) == [*LOADERS, "add"]
    assert model.offered[2]["add"]["properties"]["a"]["type"] == "integer"
    # The loaded tool stays offered for later runs of the same MCP tool object.
    assert [f.name for f in server.functions] == [*LOADERS, "add"]
    assert sorted(f.name for f in server.all_functions) == ["add", "echo_args", "pid"]


async def test_always_load_tools_are_offered_from_the_start_and_cannot_be_unloaded() -> None:
    server = stdio_tool(allowed_tools=["add", "pid"], use_progressive_disclosure=True, always_load=["pid"])
    model = Model(
        _call("unload_tool", tool=["pid", "add", "nope", "unload_tool"]),
        lambda messages: str(_last_result(messages)),
    )
    try:
        response = await Agent(FunctionChatClient(model), tools=[server]).run("Tidy up.")
    finally:
        await server.close()
    assert list(model.offered[0]) == [*LOADERS, "pid"]
    assert response.text.splitlines() == [
        "MCP tool 'pid' is configured in always_load and cannot be unloaded.",
        "MCP tool 'add' is not currently loaded.",
        "MCP tool 'nope' is not available. Available tools: add, pid.",
        "MCP loader tool 'unload_tool' cannot be unloaded.",
    ]


async def test_load_and_unload_change_the_next_iteration_over_http_with_a_prefix() -> None:
    http = HTTPServer()
    server = http.tool(
        "web", tool_name_prefix="web", allowed_tools=["add", "echo_args"], use_progressive_disclosure=True
    )
    model = Model(
        _call("web_load_tool", tool=["add", "web_echo_args", "add"]),
        _call("web_unload_tool", tool="web_add"),
        lambda messages: "done",
    )
    try:
        await Agent(FunctionChatClient(model), tools=[server]).run("Go.")
    finally:
        await server.close()
        http.stop()
    prefixed = ["web_list_mcp_tools", "web_load_tool", "web_unload_tool"]
    assert list(model.offered[0]) == prefixed
    assert sorted(model.offered[1]) == sorted([*prefixed, "web_add", "web_echo_args"])
    assert list(model.offered[2]) == [*prefixed, "web_echo_args"]


async def test_loading_reports_unknown_and_repeated_names_to_the_model() -> None:
    server = stdio_tool(allowed_tools=["add"], use_progressive_disclosure=True)
    model = Model(
        _call("load_tool", tool=["add", "add", "missing"]),
        _call("load_tool", tool="add"),
        lambda messages: str(_last_result(messages)),
    )
    try:
        response = await Agent(FunctionChatClient(model), tools=[server]).run("Load.")
    finally:
        await server.close()
    first_result = next(c.result for m in response.messages for c in m.contents if c.type == "function_result")
    assert first_result.splitlines() == [
        "Loaded MCP tool 'add'. It is available on the next model iteration.",
        "MCP tool 'add' is already queued to load.",
        "MCP tool 'missing' is not available. Available tools: add.",
    ]
    assert response.text == "MCP tool 'add' is already available."


async def test_the_loaders_need_a_run_and_the_settings_are_checked() -> None:
    server = stdio_tool(allowed_tools=["add"], use_progressive_disclosure=True)
    try:
        load = next(t for t in await server.get_tools() if t.name == "load_tool")
        with pytest.raises(ToolExecutionError, match="inside an agent"):
            await load.invoke(arguments={"tool": "add"}, skip_parsing=True)
    finally:
        await server.close()
    with pytest.raises(TypeError, match="always_load"):
        MCPStdioTool("x", "python", always_load="add")
