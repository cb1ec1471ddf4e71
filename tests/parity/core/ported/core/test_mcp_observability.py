# Copyright (c) Microsoft. All rights reserved.

"""Tests for MCP client span instrumentation per OTel GenAI Semantic Conventions.

See: https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/#client
"""

from __future__ import annotations

from typing import Any
from unittest.mock import AsyncMock, Mock

import pytest
from mcp import types
from mcp.shared.exceptions import MCPError as McpError
from mcp.types import ErrorData
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agentnb.mcp import MCPStdioTool, MCPStreamableHTTPTool, MCPWebsocketTool
from agentnb.exceptions import ToolExecutionException
from agentnb.observability import OtelAttr

# region helpers




def _make_tool_list_result(
    tools: list[dict[str, Any]] | None = None,
) -> Mock:
    """Create a mock ListToolsResult."""
    if tools is None:
        tools = [{"name": "get-weather", "description": "Get weather", "inputSchema": {"type": "object"}}]
    result = Mock()
    result.tools = [
        types.Tool(name=t["name"], description=t.get("description", ""), inputSchema=t.get("inputSchema", {}))
        for t in tools
    ]
    result.nextCursor = None
    return result


def _make_prompt_list_result(
    prompts: list[dict[str, Any]] | None = None,
) -> Mock:
    """Create a mock ListPromptsResult."""
    if prompts is None:
        prompts = [{"name": "analyze-code", "description": "Analyze code"}]
    result = Mock()
    result.prompts = [
        types.Prompt(name=p["name"], description=p.get("description", ""), arguments=None) for p in prompts
    ]
    result.nextCursor = None
    return result


def _make_call_tool_result(text: str = "result", is_error: bool = False) -> Mock:
    """Create a mock CallToolResult."""
    result = Mock()
    result.isError = is_error
    result.content = [types.TextContent(type="text", text=text)]
    result.structuredContent = None
    return result


def _make_get_prompt_result(text: str = "prompt result") -> types.GetPromptResult:
    """Create a mock GetPromptResult."""
    return types.GetPromptResult(
        description="test prompt",
        messages=[
            types.PromptMessage(
                role="user",
                content=types.TextContent(type="text", text=text),
            )
        ],
    )


# endregion


# region initialize span




# endregion


# region tools/list span




# endregion


# region prompts/list span




# endregion


# region tools/call span








# endregion


# region prompts/get span






# endregion


# region transport attributes














# endregion


# region observability disabled




# endregion
