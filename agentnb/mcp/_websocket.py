"""MCPWebsocketTool: the reference's name for an MCP server over websockets, kept so imports resolve.

MCP 2.x dropped the websocket transport (it was never part of the MCP specification) and the ``mcp`` SDK
ships no websocket client; the reference's own release keeps the class only as an import-compatibility
symbol that cannot connect. agentnb does the same: the object builds (so configuration code runs) and the
first connection raises, pointing at :class:`~agentnb.mcp.MCPStreamableHTTPTool`.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from agentnb.exceptions import FeatureNotAvailableError

from ._tool import MCPTool

__all__ = ["MCPWebsocketTool"]


class MCPWebsocketTool(MCPTool):
    """An MCP server at a ``ws://`` or ``wss://`` URL: kept for source compatibility, never connects.

    Args:
        name: A label for this server.
        url: The websocket URL (kept as ``url``).
        **kwargs: Everything :class:`MCPTool` accepts.

    Raises (on first use):
        FeatureNotAvailableError: Always (a ``NotImplementedError``, hence a ``RuntimeError``); serve the
            server over streamable HTTP and use :class:`~agentnb.mcp.MCPStreamableHTTPTool`.
    """

    def __init__(self, name: str, url: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.url = url

    def _unavailable(self) -> FeatureNotAvailableError:
        return FeatureNotAvailableError(
            f"MCP server {self.name!r}: MCP 2.x has no websocket transport and the mcp SDK no websocket client; "
            "serve the server over streamable HTTP and use MCPStreamableHTTPTool instead.",
            feature="MCP over websockets",
        )

    async def connect(self) -> None:
        """Always raises: there is no websocket transport to connect with."""
        raise self._unavailable()

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        raise self._unavailable()

    def __repr__(self) -> str:
        return f"MCPWebsocketTool(name={self.name!r}, url={self.url!r})"
