"""A tiny MCP server to try agentnb's MCP tools without installing anything else.

Run it over stdio (what :class:`~agentnb.mcp.MCPStdioTool` starts)::

    python -m agentnb.mcp.demo_server

or over streamable HTTP on a loopback port (for :class:`~agentnb.mcp.MCPStreamableHTTPTool`)::

    python -m agentnb.mcp.demo_server --http 8000     # endpoint: http://127.0.0.1:8000/mcp

It offers deterministic tools (``add``, ``word_count``, ``shout``), a prompt (``review``) and a resource
(``demo://about``). Written with the official ``mcp`` SDK; not imported by ``agentnb.mcp`` itself.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["build_server", "main"]


def build_server(name: str = "agentnb-demo") -> MCPServer:
    """Build the demo ``MCPServer`` (imported here so ``--help`` stays fast)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name, instructions="A small deterministic demo server.", log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def word_count(text: str) -> int:
        """Count the words in a text."""
        return len(text.split())

    @server.tool()
    def shout(text: str) -> str:
        """Return the text in capital letters."""
        return text.upper()

    @server.prompt()
    def review(topic: str) -> str:
        """Ask for a short review of a topic."""
        return f"Write a three-sentence review of {topic}."

    @server.resource("demo://about", mime_type="text/plain")
    def about() -> str:
        """What this server is."""
        return "The agentnb demo MCP server."

    return server


def main(argv: list[str] | None = None) -> None:
    """Run the demo server over stdio, or over streamable HTTP with ``--http PORT``."""
    parser = argparse.ArgumentParser(
        prog="python -m agentnb.mcp.demo_server", description="A tiny MCP server to try agentnb's MCP tools."
    )
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args(argv)
    server = build_server()
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
