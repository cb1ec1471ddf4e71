"""DefaultMCPToolHandler: a ready-made ``mcp_tool_handler`` for declarative workflows, over streamable HTTP.

Nothing is enabled by default: a workflow reaches MCP servers only through a handler the caller passes to
``WorkflowFactory``. This one calls tools with :class:`~agentnb.mcp.MCPStreamableHTTPTool`, keeping one
session per server and header set so a workflow does not pay a handshake per action while two callers'
``Authorization`` headers never share a session.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from ..exceptions import MCPError, ToolExecutionError
from ._actions import MCPToolInvocation, MCPToolResult
from ._allowlist import UrlAllowlist

if TYPE_CHECKING:
    import httpx

    from ..mcp import MCPStreamableHTTPTool

__all__ = ["DefaultMCPToolHandler", "MCPClientProvider"]

#: Picks the ``httpx.AsyncClient`` an invocation's session goes through (``None``: the tool's own client).
MCPClientProvider = Callable[[MCPToolInvocation], Awaitable["httpx.AsyncClient | None"]]

_Key = tuple[str, str, str]


class DefaultMCPToolHandler:
    """Call a declarative workflow's InvokeMcpTool on a streamable-HTTP MCP server; pass it as ``mcp_tool_handler``.

    Without ``client_provider`` the handler keeps a connected :class:`~agentnb.mcp.MCPStreamableHTTPTool` per
    (server URL, server label, headers) in a least-recently-used cache of ``cache_max_size`` entries; an
    evicted entry's session is closed (with the HTTP client it owns). Header names count case-insensitively,
    values exactly, so a different token is a different session. With ``client_provider`` (an async function
    returning the ``httpx.AsyncClient`` for an invocation, or ``None``) every call gets its own session, opened
    and closed around it; the provider's clients are never closed by the handler.

    A failed call is a result, not an exception: ``MCPToolResult(content="Error: ...", is_error=True)`` (the
    server reported an error, could not be reached, or did not answer in time). The reserved tool name
    :attr:`LIST_TOOLS_TOOL_NAME` (``"tools/list"``) returns the server's catalog as JSON text:
    ``{"tools": [{"name", "description", "inputSchema", "outputSchema"}, ...]}``.

    Use ``allowed_urls`` in production: URL prefixes of the MCP servers a workflow may call. A server URL
    outside them raises :class:`~agentnb.exceptions.DeclarativeActionError` naming it, before any connection.
    Without it the handler connects to any http(s) URL the workflow computes.

    Example:
        ```python
        from agentnb.declarative import DefaultMCPToolHandler, WorkflowFactory

        async with DefaultMCPToolHandler(allowed_urls=["https://learn.microsoft.com/api/mcp"]) as mcp:
            workflow = WorkflowFactory(mcp_tool_handler=mcp).create_workflow_from_yaml(text)
            result = await workflow.run({"question": "What is MCP?"})
        ```
    """

    LIST_TOOLS_TOOL_NAME: ClassVar[str] = "tools/list"
    """The tool name that lists the server's tools instead of calling one (the MCP method's own name)."""

    def __init__(
        self,
        *,
        client_provider: MCPClientProvider | None = None,
        cache_max_size: int = 32,
        allowed_urls: Iterable[str] | None = None,
        request_timeout: float = 60.0,
        connect_timeout: float = 30.0,
    ) -> None:
        if cache_max_size <= 0:
            raise ValueError(f"cache_max_size must be positive, got {cache_max_size}")
        self.cache_max_size = cache_max_size
        self.allowed_urls = UrlAllowlist(allowed_urls) if allowed_urls is not None else None
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self._client_provider = client_provider
        self._cache: OrderedDict[_Key, MCPStreamableHTTPTool] = OrderedDict()
        self._opening: dict[_Key, asyncio.Lock] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    async def __call__(self, invocation: MCPToolInvocation, /) -> MCPToolResult:
        """Call the tool; what ``WorkflowFactory`` calls."""
        return await self.invoke_tool(invocation)

    async def invoke_tool(self, invocation: MCPToolInvocation) -> MCPToolResult:
        """Call ``invocation.tool_name`` (or list the tools) on ``invocation.server_url``."""
        if self.allowed_urls is not None:
            self.allowed_urls.check(invocation.server_url, what="DefaultMCPToolHandler")
        if invocation.tool_name == self.LIST_TOOLS_TOOL_NAME and invocation.arguments:
            return _error(f"the reserved {self.LIST_TOOLS_TOOL_NAME!r} operation takes no arguments")
        if self._closed:
            return _error("DefaultMCPToolHandler is closed")
        if self._client_provider is not None:
            client = await self._client_provider(invocation)
            tool = self._new_tool(invocation, client)
            try:
                return await self._run(tool, invocation)
            finally:
                await tool.close()
        try:
            tool = await self._cached(invocation)
        except MCPError as exc:
            return _error(f"Failed to connect to MCP server: {exc}")
        return await self._run(tool, invocation)

    async def _run(self, tool: MCPStreamableHTTPTool, invocation: MCPToolInvocation) -> MCPToolResult:
        try:
            if invocation.tool_name == self.LIST_TOOLS_TOOL_NAME:
                return MCPToolResult(content=await _catalog(tool))
            return MCPToolResult(content=await tool.call_tool(invocation.tool_name, invocation.arguments))
        except (MCPError, ToolExecutionError) as exc:
            return _error(str(exc) or type(exc).__name__)

    def _new_tool(self, invocation: MCPToolInvocation, client: httpx.AsyncClient | None) -> MCPStreamableHTTPTool:
        from ..mcp import MCPStreamableHTTPTool

        return MCPStreamableHTTPTool(
            invocation.server_label or "McpClient",
            invocation.server_url,
            headers=invocation.headers,
            http_client=client,
            request_timeout=self.request_timeout,
            connect_timeout=self.connect_timeout,
        )

    async def _cached(self, invocation: MCPToolInvocation) -> MCPStreamableHTTPTool:
        """The connected tool for this server, label and header set, opened once even under concurrent calls."""
        key = _cache_key(invocation)
        async with self._lock:
            tool = self._cache.get(key)
            if tool is not None:
                self._cache.move_to_end(key)
                return tool
            opening = self._opening.setdefault(key, asyncio.Lock())
        async with opening:
            async with self._lock:
                tool = self._cache.get(key)
                if tool is not None:
                    self._cache.move_to_end(key)
                    return tool
            tool = self._new_tool(invocation, None)
            try:
                await tool.connect()
            except BaseException:
                await tool.close()
                async with self._lock:
                    self._opening.pop(key, None)
                raise
            evicted: list[MCPStreamableHTTPTool] = []
            async with self._lock:
                self._opening.pop(key, None)
                if self._closed:
                    evicted.append(tool)
                else:
                    self._cache[key] = tool
                    while len(self._cache) > self.cache_max_size:
                        evicted.append(self._cache.popitem(last=False)[1])
            for old in evicted:
                await old.close()
            if self._closed:
                raise MCPError("DefaultMCPToolHandler was closed while connecting", server=tool.name)
            return tool

    async def aclose(self) -> None:
        """Close every cached session (and the HTTP clients they own); later calls return an error result."""
        async with self._lock:
            self._closed = True
            tools = list(self._cache.values())
            self._cache.clear()
        for tool in tools:
            await tool.close()

    async def __aenter__(self) -> DefaultMCPToolHandler:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _cache_key(invocation: MCPToolInvocation) -> _Key:
    headers = sorted((name.lower(), value) for name, value in invocation.headers.items())
    digest = hashlib.sha256(json.dumps(headers).encode()).hexdigest() if headers else ""
    return invocation.server_url, invocation.server_label or "", digest


def _error(message: str) -> MCPToolResult:
    return MCPToolResult(content=f"Error: {message}", is_error=True)


async def _catalog(tool: MCPStreamableHTTPTool) -> str:
    """The server's tools as the JSON text ``tools/list`` returns (every page; remote names)."""
    functions = await tool.get_tools()
    output_schemas = tool.output_schemas
    entries: list[dict[str, Any]] = []
    for function in functions:
        name = function.additional_properties.get("mcp_tool_name", function.name)
        entries.append(
            {
                "name": name,
                "description": function.description,
                "inputSchema": function.parameters(),
                "outputSchema": output_schemas.get(name),
            }
        )
    return json.dumps({"tools": entries}, indent=2, allow_nan=False)
