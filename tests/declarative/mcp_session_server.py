"""An MCP server over streamable HTTP that says which connection each call came on, for the default MCP handler's tests.

``python tests/declarative/mcp_session_server.py PORT`` serves ``/mcp`` on ``127.0.0.1:PORT``. Tools: ``whoami``
(the ``x-token`` header and the client's port of this request's TCP connection, as JSON: calls a client makes
over its kept-alive connection share the port, another client's calls do not), ``add``, ``fail`` (a tool error).
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build() -> MCPServer:
    server = MCPServer("sessions", log_level="WARNING")

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

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(reason)

    return server


if __name__ == "__main__":
    build().run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
