"""MCP tools: use the tools, prompts and resources of Model Context Protocol servers from an agent.

Built on the official ``mcp`` SDK (``pip install "agentnb[mcp]"``). Each tool object stands for one server
and can go straight into ``Agent(tools=[...])``: it connects on first use and exposes the server's tools
as :class:`~agentnb.FunctionTool` objects with the server's own JSON schemas.

The SDK (2.x) ships stdio and streamable HTTP client transports and no websocket client: ``MCPWebsocketTool``
exists, as in the reference's release, only so code that names it imports; it cannot connect. Tools a server
runs as long-running tasks (MCP 2025-11-25) are submitted, polled and fetched for you (``MCPTaskOptions``).
"""

from __future__ import annotations

import importlib.util as _importlib_util

# Checked, not imported: the SDK is loaded on first connection, so importing agentnb.mcp stays cheap.
if _importlib_util.find_spec("mcp") is None:  # pragma: no cover - depends on the environment
    raise ImportError('agentnb.mcp needs the mcp SDK: pip install "agentnb[mcp]"')

from .._extensions import AGENT_MCP_SERVER as _AGENT_MCP_SERVER
from ._http import MCPStreamableHTTPTool
from ._sampling import SamplingApprovalCallback, SamplingRequest
from ._server import MCPHTTPServer, agent_mcp_server, mcp_http_app, serve_stdio
from ._stdio import MCPStdioTool
from ._tasks import MCPTaskOptions
from ._tool import ApprovalModeSetting, MCPTool
from ._websocket import MCPWebsocketTool

__all__ = [
    "ApprovalModeSetting",
    "MCPHTTPServer",
    "MCPStdioTool",
    "MCPStreamableHTTPTool",
    "MCPTaskOptions",
    "MCPTool",
    "MCPWebsocketTool",
    "SamplingApprovalCallback",
    "SamplingRequest",
    "agent_mcp_server",
    "mcp_http_app",
    "serve_stdio",
]

# Agent.as_mcp_server (in the core) builds its server through this (agentnb/_extensions.py).
_AGENT_MCP_SERVER.fill(agent_mcp_server)
