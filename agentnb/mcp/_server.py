"""Serve an agentnb agent as an MCP server, so editors and desktop assistants can call a notebook's agent.

:func:`agent_mcp_server` (``agent.as_mcp_server()``) builds a low-level ``mcp`` SDK ``Server`` exposing the
agent as one tool (``{"task": "..."}`` in, the agent's answer out), its own tools, or both. Run it over
stdio (:func:`serve_stdio`, what desktop assistants start) or streamable HTTP (:func:`mcp_http_app`,
:class:`MCPHTTPServer`), where the usual access rule holds: loopback clients only unless a token is given.

Approval stays in force: a tool that needs approval is never listed as a tool of its own, and when the
agent stops to ask for one, the call returns an error naming the tool instead of running it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, cast

from .._serving import LoopbackOrTokenGuard, LoopbackServer, check_bind_address, free_port
from .._tools import FunctionTool, result_to_text

if TYPE_CHECKING:
    from mcp import types
    from mcp.server.lowlevel import Server

__all__ = ["MCPHTTPServer", "agent_mcp_server", "mcp_http_app", "serve_stdio"]

logger = logging.getLogger("agentnb.mcp")

Expose = Literal["agent", "tools", "both"]


def _agent_of(target: Any) -> Any:
    from .._agents import BaseAgent

    if not isinstance(target, BaseAgent) and callable(getattr(target, "as_agent", None)):
        return target.as_agent()
    return target


def _own_tools(agent: Any) -> list[FunctionTool]:
    """The agent's function tools that may run without asking anyone (approval-required ones are held back)."""
    tools: list[FunctionTool] = []
    items: list[Any] = list(getattr(agent, "tools", None) or [])
    for item in items:
        if isinstance(item, FunctionTool) and item.func is not None:
            if item.approval_mode == "always_require":
                logger.info(
                    "Not exposing %r over MCP: it needs approval, which MCP clients cannot give here.", item.name
                )
                continue
            tools.append(item)
    return tools


def agent_mcp_server(
    agent: Any,
    *,
    server_name: str | None = None,
    version: str | None = None,
    instructions: str | None = None,
    expose: Expose = "agent",
    lifespan: Callable[[Server[Any]], AbstractAsyncContextManager[Any]] | None = None,
    **kwargs: Any,
) -> Server[Any]:
    """A low-level MCP ``Server`` for ``agent`` (or a workflow, served through ``as_agent()``).

    Args:
        agent: The agent to serve.
        server_name: The server's name (default: the agent's name).
        version: The server's version string.
        instructions: What the server tells clients about itself (default: the agent's description).
        expose: ``"agent"`` (one tool that runs the agent), ``"tools"`` (the agent's function tools), or both.
        lifespan: The SDK's lifespan hook.
        kwargs: More ``Server`` arguments.
    """
    try:
        from mcp import types
        from mcp.server.lowlevel import Server
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError('as_mcp_server needs the mcp SDK: pip install "agentnb[mcp]"') from e
    if expose not in ("agent", "tools", "both"):
        raise ValueError(f"expose must be 'agent', 'tools' or 'both', got {expose!r}")
    agent = _agent_of(agent)
    name = getattr(agent, "name", None) or "Agent"
    tools: dict[str, FunctionTool] = {}
    agent_tool: FunctionTool | None = None
    if expose in ("agent", "both"):
        agent_tool = cast(FunctionTool, agent.as_tool(name=None))
        agent_tool = _approval_aware(agent, agent_tool)
        tools[agent_tool.name] = agent_tool
    if expose in ("tools", "both"):
        for tool in _own_tools(agent):
            if tool.name in tools:
                raise ValueError(f"Tool {tool.name!r} clashes with the agent's own tool name; rename one of them.")
            tools[tool.name] = tool

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description or None, input_schema=t.parameters())
                for t in tools.values()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            return _error(f"Unknown tool {params.name!r}; this server has {sorted(tools)}.")
        try:
            result = await tool.invoke_raw(arguments=dict(params.arguments or {}))
        except _ApprovalNeeded as e:
            return _error(str(e))
        except Exception as e:
            logger.warning("MCP tool %r failed: %s", params.name, e)
            return _error(f"{params.name} failed: {type(e).__name__}: {e}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=result_to_text(result))])

    server_args: dict[str, Any] = {
        "version": version or "",
        "instructions": instructions or getattr(agent, "description", None),
        "on_list_tools": list_tools,
        "on_call_tool": call_tool,
        **kwargs,
    }
    if lifespan is not None:
        server_args["lifespan"] = lifespan
    return Server(server_name or name, **server_args)


class _ApprovalNeeded(Exception):
    """The served agent stopped to ask for an approval MCP cannot carry."""


def _approval_aware(agent: Any, tool: FunctionTool) -> FunctionTool:
    """The agent-as-tool, refusing (not skipping) calls that end waiting for approval."""

    async def run_agent(task: str) -> str:
        response = await agent.run(task)
        requests = response.user_input_requests
        if requests:
            names = [r.function_call.name for r in requests if r.function_call is not None]
            raise _ApprovalNeeded(
                f"The agent wants to call {names}, which needs a person's approval; nothing was run. "
                "Use the agent from agentnb, the DevUI or A2A to approve."
            )
        return str(response.text)

    return FunctionTool(
        run_agent,
        name=tool.name,
        description=tool.description,
        input_model=tool.parameters(),
    )


def _error(text: str) -> types.CallToolResult:
    from mcp import types

    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin/stdout until the client hangs up (what desktop assistants run)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def mcp_http_app(
    server: Server[Any], *, path: str = "/mcp", token: str | None = None, host: str = "127.0.0.1"
) -> LoopbackOrTokenGuard:
    """An ASGI app serving ``server`` over streamable HTTP at ``path``, behind the loopback-or-token rule."""
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    return LoopbackOrTokenGuard(cast(Any, app), token=token)


class MCPHTTPServer:
    """Serve an agent (or a ready MCP ``Server``) over streamable HTTP from this event loop.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.mcp import MCPHTTPServer, MCPStreamableHTTPTool

        async with MCPHTTPServer(Agent(ScriptedChatClient(["Hi"]), name="Greeter")) as server:
            async with MCPStreamableHTTPTool("greeter", server.url) as remote:
                print([t.name for t in await remote.get_tools()])
        ```
    """

    def __init__(
        self,
        agent: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/mcp",
        token: str | None = None,
        expose: Expose = "agent",
    ) -> None:
        check_bind_address(host, token=token, what="an MCP server")
        from mcp.server.lowlevel import Server

        self.server: Server[Any] = agent if isinstance(agent, Server) else agent_mcp_server(agent, expose=expose)
        self.port = port or free_port(host)
        self._runner = LoopbackServer(
            mcp_http_app(self.server, path=path, token=token, host=host), host=host, port=self.port, lifespan=True
        )
        self.url = self._runner.base_url + path

    async def __aenter__(self) -> MCPHTTPServer:
        await self._runner.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.stop()
