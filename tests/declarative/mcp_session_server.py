"""An MCP server over streamable HTTP that says which connection each call came on, for the default MCP handler's tests.

``python tests/declarative/mcp_session_server.py PORT`` serves ``/mcp`` on ``127.0.0.1:PORT``. Tools: ``whoami``
(the ``x-token`` header and the client's port of this request's TCP connection, as JSON: calls a client makes
over its kept-alive connection share the port, another client's calls do not), ``add``, ``fail`` (a tool
error; the only tool declaring no output schema), ``method_counts`` (how often clients have called each MCP
method: one ``server/discover`` per connecting client).
"""

from __future__ import annotations

import collections
import json
import sys
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

methods: collections.Counter[str] = collections.Counter()


class CountMethods:
    """Server middleware that counts the MCP methods clients call."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        methods[ctx.method] += 1
        return await call_next(ctx)


def build() -> MCPServer:
    server = MCPServer("sessions", middleware=[CountMethods()], log_level="WARNING")

    @server.tool()
    def method_counts() -> str:
        """How many times clients have called each MCP method, as JSON."""
        return json.dumps(dict(methods))

    @server.tool()
    def whoami(ctx: Context) -> str:
        """This request's x-token header and client port."""
        headers = {k.lower(): v for k, v in (ctx.headers or {}).items()}
        client = getattr(ctx.request_context.request, "client", None)
        return json.dumps({"token": headers.get("x-token"), "port": client.port if client else None})

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(structured_output=False)  # lists no outputSchema
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(reason)

    return server


if __name__ == "__main__":
    build().run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
