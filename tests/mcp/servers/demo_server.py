"""A small MCP server for agentnb's tests, written with the official ``mcp`` SDK.

Run it over stdio (``python demo_server.py stdio``) or streamable HTTP on a loopback port
(``python demo_server.py http PORT``). Flags: ``--name NAME`` (server name), ``--hang-on-start``
(never answer: the process sleeps before serving), ``--collide`` (adds two tools whose names
normalise to the same local name).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import time
from typing import Annotated, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

# A 1x1 transparent PNG.
PNG_BYTES = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)

# Raw ``tools/call`` arguments of the request being served, recorded before validation so a tool can
# report exactly what the client sent (the tests check that undeclared arguments never arrive).
_raw_arguments: dict[str, Any] = {}


class RecordArguments:
    """Server middleware that remembers the raw arguments of each tools/call."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if ctx.method == "tools/call" and ctx.params is not None:
            _raw_arguments.clear()
            _raw_arguments.update(dict(ctx.params.get("arguments") or {}))
        return await call_next(ctx)


def ask_model(text: str) -> Sample:
    """Ask the client's model to summarize (resolved before the ``summarize`` tool body runs)."""
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=500,
        system_prompt="Be brief.",
    )


def build(name: str, *, collide: bool) -> MCPServer:
    server = MCPServer(
        name, instructions="Test server for agentnb.", middleware=[RecordArguments()], log_level="WARNING"
    )

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo_args(text: str, user_id: str = "") -> str:
        """Return the raw arguments this call received, as JSON."""
        return json.dumps(_raw_arguments, sort_keys=True)

    @server.tool()
    def get_image() -> Image:
        """Return a tiny PNG image."""
        return Image(data=PNG_BYTES, format="png")

    @server.tool()
    def get_report() -> list[types.ContentBlock]:
        """Return a text block and an embedded text resource."""
        return [
            types.TextContent(type="text", text="Report follows."),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="demo://report", mime_type="text/plain", text="all good"),
            ),
        ]

    @server.tool()
    def fail(reason: str) -> str:
        """Always fail with the given reason."""
        raise ToolError(f"failed on purpose: {reason}")

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep for the given number of seconds, then answer."""
        await asyncio.sleep(seconds)
        return "woke up"

    @server.tool()
    async def freeze(seconds: float) -> str:
        """Block the server's event loop (not only this call) for the given number of seconds: a hung server."""
        time.sleep(seconds)  # blocking the loop is the point
        return "thawed"

    @server.tool()
    def big(size: int) -> str:
        """Answer with a text of the given length."""
        return "x" * size

    @server.tool()
    def crash() -> str:
        """Exit the server process abruptly."""
        os._exit(3)

    @server.tool()
    def request_headers(ctx: Context) -> str:
        """Return the x-* and authorization headers of this HTTP request, as JSON."""
        headers = ctx.headers or {}
        wanted = {
            k.lower(): v for k, v in headers.items() if k.lower().startswith("x-") or k.lower() == "authorization"
        }
        return json.dumps(wanted, sort_keys=True)

    @server.tool()
    def pid() -> int:
        """Return the server's process id."""
        return os.getpid()

    @server.tool()
    def summarize(text: str, sampled: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
        """Summarize text with the client's model (MCP sampling)."""
        content = sampled.content
        answer = content.text if isinstance(content, types.TextContent) else "<non-text>"
        return f"summary[{sampled.model}]: {answer}"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone by name."""
        return f"Say hello to {name}."

    @server.resource("demo://readme", mime_type="text/plain")
    def readme() -> str:
        """The server's readme."""
        return "Read me first."

    @server.resource("demo://logo", mime_type="image/png")
    def logo() -> bytes:
        """A tiny logo."""
        return PNG_BYTES

    if collide:

        @server.tool(name="lookup.user")
        def lookup_dot(user: str) -> str:
            """Look up a user (dotted name)."""
            return f"dot:{user}"

        @server.tool(name="lookup_user")
        def lookup_underscore(user: str) -> str:
            """Look up a user (underscore name)."""
            return f"underscore:{user}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--name", default="demo")
    parser.add_argument("--hang-on-start", action="store_true")
    parser.add_argument("--collide", action="store_true")
    args = parser.parse_args()
    if args.hang_on_start:
        time.sleep(3600)
    server = build(args.name, collide=args.collide)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    sys.exit(0)


if __name__ == "__main__":
    main()
