# Copyright (c) Microsoft. All rights reserved.
# pyright: ignore[reportPrivateUsage]
import asyncio
import contextlib
import json
import logging
import os
import sys
import warnings
from contextlib import _AsyncGeneratorContextManager  # type: ignore
from datetime import timedelta
from typing import Any, cast
from unittest.mock import AsyncMock, Mock, patch

import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError as McpError
from pydantic import AnyUrl, BaseModel

from agentnb import Content, FunctionInvocationContext, FunctionMiddleware, FunctionTool, Message
from agentnb.mcp import MCPStdioTool, MCPStreamableHTTPTool, MCPWebsocketTool
from agentnb import ExperimentalFeature
from agentnb.exceptions import ToolException, ToolExecutionException

# Integration test skip condition
skip_if_mcp_integration_tests_disabled = pytest.mark.skipif(
    os.getenv("LOCAL_MCP_URL", "") == "",
    reason="No LOCAL_MCP_URL provided; skipping integration tests.",
)


def _mcp_result_to_text(result: str | list[Content]) -> str:
    """Normalize an MCP tool result to text for assertions."""
    if isinstance(result, str):
        return result
    text = "\n".join(content.text for content in result if content.type == "text" and content.text)
    return text or str(result)






# Helper function tests




def test_mcp_transport_subclasses_accept_tool_name_prefix() -> None:
    assert MCPStdioTool(name="stdio", command="python", tool_name_prefix="stdio").tool_name_prefix == "stdio"
    assert (
        MCPStreamableHTTPTool(
            name="http",
            url="https://example.com/mcp",
            tool_name_prefix="http",
        ).tool_name_prefix
        == "http"
    )
    assert (
        MCPWebsocketTool(
            name="ws",
            url="wss://example.com/mcp",
            tool_name_prefix="ws",
        ).tool_name_prefix
        == "ws"
    )




































































@pytest.mark.parametrize(
    "test_id,input_schema",
    [
        (test_id, input_schema)
        for test_id, input_schema, _, _, _, _ in [  # type: ignore[assignment]
            # Basic types with required/optional fields
            (
                "basic_types",
                {
                    "type": "object",
                    "properties": {"param1": {"type": "string"}, "param2": {"type": "number"}},
                    "required": ["param1"],
                },
                {"param1": "test", "param2": 42},
                {"param1": "test", "param2": 42},
                {"param2": 42},  # Missing required param1
                None,
            ),
            # Nested object
            (
                "nested_object",
                {
                    "type": "object",
                    "properties": {
                        "params": {
                            "type": "object",
                            "properties": {"customer_id": {"type": "integer"}},
                            "required": ["customer_id"],
                        }
                    },
                    "required": ["params"],
                },
                {"params": {"customer_id": 251}},
                {"params.customer_id": 251},
                {"params": {}},  # Missing required customer_id
                lambda instance: isinstance(instance.params, BaseModel),
            ),
            # $ref resolution
            (
                "ref_schema",
                {
                    "type": "object",
                    "properties": {"params": {"$ref": "#/$defs/CustomerIdParam"}},
                    "required": ["params"],
                    "$defs": {
                        "CustomerIdParam": {
                            "type": "object",
                            "properties": {"customer_id": {"type": "integer"}},
                            "required": ["customer_id"],
                        }
                    },
                },
                {"params": {"customer_id": 251}},
                {"params.customer_id": 251},
                {"params": {}},  # Missing required customer_id
                lambda instance: isinstance(instance.params, BaseModel),
            ),
            # Array of strings (typed)
            (
                "array_of_strings",
                {
                    "type": "object",
                    "properties": {
                        "tags": {
                            "type": "array",
                            "description": "List of tags",
                            "items": {"type": "string"},
                        }
                    },
                    "required": ["tags"],
                },
                {"tags": ["tag1", "tag2", "tag3"]},
                {"tags": ["tag1", "tag2", "tag3"]},
                None,  # No validation error test for this case
                None,
            ),
            # Array of integers (typed)
            (
                "array_of_integers",
                {
                    "type": "object",
                    "properties": {
                        "numbers": {
                            "type": "array",
                            "description": "List of integers",
                            "items": {"type": "integer"},
                        }
                    },
                    "required": ["numbers"],
                },
                {"numbers": [1, 2, 3]},
                {"numbers": [1, 2, 3]},
                None,
                None,
            ),
            # Array of objects (complex nested)
            (
                "array_of_objects",
                {
                    "type": "object",
                    "properties": {
                        "users": {
                            "type": "array",
                            "description": "List of users",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "integer", "description": "User ID"},
                                    "name": {"type": "string", "description": "User name"},
                                },
                                "required": ["id", "name"],
                            },
                        }
                    },
                    "required": ["users"],
                },
                {"users": [{"id": 1, "name": "Alice"}, {"id": 2, "name": "Bob"}]},
                {"users[0].id": 1, "users[0].name": "Alice", "users[1].id": 2, "users[1].name": "Bob"},
                {"users": [{"id": 1}]},  # Missing required 'name'
                lambda instance: all(isinstance(user, BaseModel) for user in instance.users),
            ),
            # Deeply nested objects (3+ levels)
            (
                "deeply_nested",
                {
                    "type": "object",
                    "properties": {
                        "query": {
                            "type": "object",
                            "properties": {
                                "filters": {
                                    "type": "object",
                                    "properties": {
                                        "date_range": {
                                            "type": "object",
                                            "properties": {
                                                "start": {"type": "string"},
                                                "end": {"type": "string"},
                                            },
                                            "required": ["start", "end"],
                                        },
                                        "categories": {"type": "array", "items": {"type": "string"}},
                                    },
                                    "required": ["date_range"],
                                }
                            },
                            "required": ["filters"],
                        }
                    },
                    "required": ["query"],
                },
                {
                    "query": {
                        "filters": {
                            "date_range": {"start": "2024-01-01", "end": "2024-12-31"},
                            "categories": ["tech", "science"],
                        }
                    }
                },
                {
                    "query.filters.date_range.start": "2024-01-01",
                    "query.filters.date_range.end": "2024-12-31",
                    "query.filters.categories": ["tech", "science"],
                },
                {"query": {"filters": {"date_range": {}}}},  # Missing required start and end
                None,
            ),
            # Complex $ref with nested structure
            (
                "ref_nested_structure",
                {
                    "type": "object",
                    "properties": {"order": {"$ref": "#/$defs/OrderParams"}},
                    "required": ["order"],
                    "$defs": {
                        "OrderParams": {
                            "type": "object",
                            "properties": {
                                "customer": {"$ref": "#/$defs/Customer"},
                                "items": {"type": "array", "items": {"$ref": "#/$defs/OrderItem"}},
                            },
                            "required": ["customer", "items"],
                        },
                        "Customer": {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}, "email": {"type": "string"}},
                            "required": ["id", "email"],
                        },
                        "OrderItem": {
                            "type": "object",
                            "properties": {"product_id": {"type": "string"}, "quantity": {"type": "integer"}},
                            "required": ["product_id", "quantity"],
                        },
                    },
                },
                {
                    "order": {
                        "customer": {"id": 123, "email": "test@example.com"},
                        "items": [{"product_id": "prod1", "quantity": 2}],
                    }
                },
                {
                    "order.customer.id": 123,
                    "order.customer.email": "test@example.com",
                    "order.items[0].product_id": "prod1",
                    "order.items[0].quantity": 2,
                },
                {"order": {"customer": {"id": 123}, "items": []}},  # Missing email
                lambda instance: isinstance(instance.order.customer, BaseModel),
            ),
            # Mixed types (primitives, arrays, nested objects)
            (
                "mixed_types",
                {
                    "type": "object",
                    "properties": {
                        "simple_string": {"type": "string"},
                        "simple_number": {"type": "integer"},
                        "string_array": {"type": "array", "items": {"type": "string"}},
                        "nested_config": {
                            "type": "object",
                            "properties": {
                                "enabled": {"type": "boolean"},
                                "options": {"type": "array", "items": {"type": "string"}},
                            },
                            "required": ["enabled"],
                        },
                    },
                    "required": ["simple_string", "nested_config"],
                },
                {
                    "simple_string": "test",
                    "simple_number": 42,
                    "string_array": ["a", "b"],
                    "nested_config": {"enabled": True, "options": ["opt1", "opt2"]},
                },
                {
                    "simple_string": "test",
                    "simple_number": 42,
                    "string_array": ["a", "b"],
                    "nested_config.enabled": True,
                    "nested_config.options": ["opt1", "opt2"],
                },
                None,
                None,
            ),
            # Empty schema (no properties)
            (
                "empty_schema",
                {"type": "object", "properties": {}},
                {},
                {},
                None,
                None,
            ),
            # All primitive types
            (
                "all_primitives",
                {
                    "type": "object",
                    "properties": {
                        "string_field": {"type": "string"},
                        "integer_field": {"type": "integer"},
                        "number_field": {"type": "number"},
                        "boolean_field": {"type": "boolean"},
                    },
                },
                {"string_field": "test", "integer_field": 42, "number_field": 3.14, "boolean_field": True},
                {"string_field": "test", "integer_field": 42, "number_field": 3.14, "boolean_field": True},
                None,
                None,
            ),
            # Edge case: unresolvable $ref (fallback to dict)
            (
                "unresolvable_ref",
                {
                    "type": "object",
                    "properties": {"data": {"$ref": "#/$defs/NonExistent"}},
                    "$defs": {},
                },
                {"data": {"key": "value"}},
                {"data": {"key": "value"}},
                None,
                None,
            ),
            # Edge case: array without items schema (fallback to bare list)
            (
                "array_no_items",
                {
                    "type": "object",
                    "properties": {"items": {"type": "array"}},
                },
                {"items": [1, "two", 3.0]},
                {"items": [1, "two", 3.0]},
                None,
                None,
            ),
            # Edge case: object without properties (fallback to dict)
            (
                "object_no_properties",
                {
                    "type": "object",
                    "properties": {"config": {"type": "object"}},
                },
                {"config": {"arbitrary": "data", "nested": {"key": "value"}}},
                {"config": {"arbitrary": "data", "nested": {"key": "value"}}},
                None,
                None,
            ),
        ]
    ],
)
def test_get_input_model_from_mcp_tool_parametrized(test_id: str, input_schema: dict[str, Any]) -> None:
    """Parametrized test for MCP tool input schema passthrough.

    This test verifies that MCP tool schemas are passed through as-is
    without Pydantic conversion, which improves performance and preserves
    the original schema structure.

    To add a new test case, add a tuple to the parametrize decorator with:
    - test_id: A descriptive name for the test case
    - input_schema: The JSON schema (inputSchema dict)
    """
    tool = types.Tool(name="test_tool", description="A test tool", inputSchema=input_schema)
    schema = tool.inputSchema

    # Verify schema is returned as-is (dict)
    assert isinstance(schema, dict), f"Expected dict, got {type(schema)}"
    assert schema == input_schema, "Schema should be passed through unchanged"






# MCPTool tests








































def _progressive_tool_list_page(*, tools: list[types.Tool] | None = None) -> types.ListToolsResult:
    if tools is not None:
        return types.ListToolsResult(tools=tools)
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="tool_one",
                description="First tool",
                inputSchema={
                    "type": "object",
                    "properties": {"param": {"type": "string"}},
                    "required": ["param"],
                },
            ),
            types.Tool(
                name="tool_two",
                description="Second tool",
                inputSchema={
                    "type": "object",
                    "properties": {"value": {"type": "integer"}},
                    "required": ["value"],
                },
            ),
            types.Tool(
                name="secret_tool",
                description="Secret tool",
                inputSchema={
                    "type": "object",
                    "properties": {"secret": {"type": "string"}},
                },
            ),
        ]
    )














































# Server implementation tests
def test_local_mcp_stdio_tool_init():
    """Test MCPStdioTool initialization."""
    tool = MCPStdioTool(name="test", command="echo", args=["hello"])
    assert tool.name == "test"
    assert tool.command == "echo"
    assert tool.args == ["hello"]


def test_local_mcp_websocket_tool_init():
    """Test MCPWebsocketTool initialization."""
    tool = MCPWebsocketTool(name="test", url="ws://localhost:8080")
    assert tool.name == "test"
    assert tool.url == "ws://localhost:8080"


def test_local_mcp_streamable_http_tool_init():
    """Test MCPStreamableHTTPTool initialization."""
    tool = MCPStreamableHTTPTool(name="test", url="http://localhost:8080")
    assert tool.name == "test"
    assert tool.url == "http://localhost:8080"


# Integration test




async def test_mcp_tool_message_handler_notification():
    """Test that message_handler correctly processes tools/list_changed and prompts/list_changed
    notifications by scheduling reloads as background tasks."""
    tool = MCPStdioTool(name="test_tool", command="python")

    # Mock the load_tools and load_prompts methods
    tool.load_tools = AsyncMock()  # type: ignore[method-assign]
    tool.load_prompts = AsyncMock()  # type: ignore[method-assign]

    # Test tools list changed notification
    tools_notification = Mock(spec=types.ServerNotification)
    tools_notification.root = Mock()
    tools_notification.root.method = "notifications/tools/list_changed"

    result = await tool.message_handler(tools_notification)  # type: ignore[func-returns-value]
    assert result is None
    # The reload is scheduled as a background task; let it run.
    await asyncio.sleep(0)
    tool.load_tools.assert_called_once()

    # Reset mock
    tool.load_tools.reset_mock()

    # Test prompts list changed notification
    prompts_notification = Mock(spec=types.ServerNotification)
    prompts_notification.root = Mock()
    prompts_notification.root.method = "notifications/prompts/list_changed"

    result = await tool.message_handler(prompts_notification)  # type: ignore[func-returns-value]
    assert result is None
    await asyncio.sleep(0)
    tool.load_prompts.assert_called_once()

    # Test unhandled notification
    unknown_notification = Mock(spec=types.ServerNotification)
    unknown_notification.root = Mock()
    unknown_notification.root.method = "notifications/unknown"

    result = await tool.message_handler(unknown_notification)  # type: ignore[func-returns-value]
    assert result is None


async def test_mcp_tool_message_handler_error():
    """Test that message_handler gracefully handles exceptions by logging and returning None."""
    tool = MCPStdioTool(name="test_tool", command="python")

    # Test with exception message
    test_exception = RuntimeError("Test error message")

    # The message handler should log the error and return None
    result = await tool.message_handler(test_exception)  # type: ignore[func-returns-value]
    assert result is None








def _approve(_params: object) -> bool:
    """Approving sampling gate used by tests that exercise forwarding behavior."""
    return True


def _make_sampling_response(text: str = "response", model: str = "test-model") -> Mock:
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text(text)])]
    mock_response.model = model
    return mock_response


async def test_mcp_tool_sampling_callback_no_client():
    """Test sampling callback error path when no chat client is available."""
    tool = MCPStdioTool(name="test_tool", command="python")

    # Create minimal params mock
    params = Mock()
    params.messages = []

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.ErrorData)
    assert result.code == types.INTERNAL_ERROR
    assert "No chat client available" in result.message


async def test_mcp_tool_sampling_callback_denies_by_default():
    """Sampling is denied when no approval callback is configured (safe default)."""
    tool = MCPStdioTool(name="test_tool", command="python")
    mock_chat_client = AsyncMock()
    tool.client = mock_chat_client

    params = Mock()
    params.messages = []
    params.maxTokens = 128

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.ErrorData)
    assert result.code == types.INVALID_REQUEST
    assert "denied" in result.message
    assert "sampling_approval_callback" in result.message
    mock_chat_client.get_response.assert_not_called()


async def test_mcp_tool_sampling_callback_denied_by_callback():
    """Sampling is denied when the approval callback returns a falsy value."""
    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=lambda params: False)
    mock_chat_client = AsyncMock()
    tool.client = mock_chat_client

    params = Mock()
    params.messages = []
    params.maxTokens = 128

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.ErrorData)
    assert result.code == types.INVALID_REQUEST
    assert "denied by the 'sampling_approval_callback'" in result.message
    mock_chat_client.get_response.assert_not_called()


async def test_mcp_tool_sampling_callback_callback_exception_denies():
    """An approval callback that raises results in denial, not an LLM call."""

    def boom(_params: object) -> bool:
        raise RuntimeError("approval error")

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=boom)
    mock_chat_client = AsyncMock()
    tool.client = mock_chat_client

    params = Mock()
    params.messages = []
    params.maxTokens = 128

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.ErrorData)
    assert result.code == types.INVALID_REQUEST
    mock_chat_client.get_response.assert_not_called()


async def test_mcp_tool_sampling_callback_async_approval():
    """An async approval callback that approves allows the request through."""

    async def approve(_params: object) -> bool:
        return True

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=approve)
    mock_chat_client = AsyncMock()
    mock_chat_client.get_response.return_value = _make_sampling_response("ok")
    tool.client = mock_chat_client

    params = Mock()
    params.messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text="Hi"))]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    assert isinstance(result.content, types.TextContent)
    assert result.content.text == "ok"
    mock_chat_client.get_response.assert_awaited_once()


async def test_mcp_tool_sampling_callback_clamps_max_tokens():
    """An approved request's maxTokens is clamped to sampling_max_tokens."""
    tool = MCPStdioTool(
        name="test_tool",
        command="python",
        sampling_approval_callback=_approve,
        sampling_max_tokens=512,
    )
    mock_chat_client = AsyncMock()
    mock_chat_client.get_response.return_value = _make_sampling_response()
    tool.client = mock_chat_client

    params = Mock()
    params.messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text="Hi"))]
    params.temperature = None
    params.maxTokens = 1_000_000
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    options = mock_chat_client.get_response.call_args.kwargs.get("options") or {}
    assert options["max_tokens"] == 512


async def test_mcp_tool_sampling_callback_does_not_clamp_under_cap():
    """A request below the cap keeps its requested maxTokens."""
    tool = MCPStdioTool(
        name="test_tool",
        command="python",
        sampling_approval_callback=_approve,
        sampling_max_tokens=512,
    )
    mock_chat_client = AsyncMock()
    mock_chat_client.get_response.return_value = _make_sampling_response()
    tool.client = mock_chat_client

    params = Mock()
    params.messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text="Hi"))]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    options = mock_chat_client.get_response.call_args.kwargs.get("options") or {}
    assert options["max_tokens"] == 100




async def test_mcp_tool_sampling_callback_chat_client_exception():
    """Test sampling callback when chat client raises exception."""
    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    # Mock chat client that raises exception
    mock_chat_client = AsyncMock()
    mock_chat_client.get_response.side_effect = RuntimeError("Chat client error")

    tool.client = mock_chat_client

    # Create mock params
    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.ErrorData)
    assert result.code == types.INTERNAL_ERROR
    assert "Failed to get chat message content" in result.message


async def test_mcp_tool_sampling_callback_no_valid_content():
    """Test sampling callback when response has no valid content types."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    # Mock chat client with response containing only invalid content types
    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [
        Message(
            role="assistant",
            contents=[
                Content.from_uri(
                    uri="data:application/json;base64,e30K",
                    media_type="application/json",
                )
            ],
        )
    ]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    # Create mock params
    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.ErrorData)
    assert result.code == types.INTERNAL_ERROR
    assert "Failed to get right content types from the response." in result.message
    mock_chat_client.get_response.assert_awaited_once()
    _, kwargs = mock_chat_client.get_response.await_args
    assert kwargs["options"] == {"max_tokens": 100}


async def test_mcp_tool_sampling_callback_no_response_and_successful_message_creation():
    """Test sampling callback when the chat client returns no response and then valid content."""
    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)
    tool.client = AsyncMock()

    params = Mock()
    params.messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text="Hi"))]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    tool.client.get_response.return_value = None
    no_response = await tool.sampling_callback(Mock(), params)

    assert isinstance(no_response, types.ErrorData)
    assert no_response.message == "Failed to get chat message content."

    tool.client.get_response.return_value = Mock(
        messages=[Message(role="assistant", contents=[Content.from_text("Hello")])],
        model="test-model",
    )

    success = await tool.sampling_callback(Mock(), params)

    assert isinstance(success, types.CreateMessageResult)
    assert success.role == "assistant"
    assert success.model == "test-model"
    assert isinstance(success.content, types.TextContent)
    assert success.content.text == "Hello"


async def test_mcp_tool_sampling_callback_returns_tool_use_results():
    """Test sampling callback returns structured MCP tool-use content from function calls."""
    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_chat_client.get_response.return_value = Mock(
        messages=[
            Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="call-1",
                        name="Answer",
                        arguments={"answer": "hello"},
                    ),
                ],
            ),
            Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="call-2",
                        name="Citations",
                        arguments={"sources": ["docs"]},
                    ),
                ],
            ),
        ],
        model="test-model",
    )
    tool.client = mock_chat_client

    params = Mock()
    params.messages = [types.PromptMessage(role="user", content=types.TextContent(type="text", text="Answer"))]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = [
        types.Tool(name="Answer", description="Return an answer", inputSchema={"type": "object"}),
        types.Tool(name="Citations", description="Return source citations", inputSchema={"type": "object"}),
    ]
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResultWithTools)
    assert result.role == "assistant"
    assert result.model == "test-model"
    assert result.stopReason == "toolUse"
    assert isinstance(result.content, list)
    tool_use_contents = [content for content in result.content if isinstance(content, types.ToolUseContent)]
    assert tool_use_contents == result.content
    assert [(content.id, content.name, content.input) for content in tool_use_contents] == [
        ("call-1", "Answer", {"answer": "hello"}),
        ("call-2", "Citations", {"sources": ["docs"]}),
    ]




async def test_mcp_tool_sampling_callback_forwards_system_prompt():
    """Test sampling callback passes systemPrompt as instructions in options."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = "You are a helpful assistant"
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert options.get("instructions") == "You are a helpful assistant"


async def test_mcp_tool_sampling_callback_forwards_tools():
    """Test sampling callback converts MCP tools to FunctionTools and passes them in options."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    mcp_tool = types.Tool(
        name="get_weather",
        description="Get weather",
        inputSchema={"type": "object", "properties": {"city": {"type": "string"}}},
    )

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = [mcp_tool]
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    tools = options.get("tools")
    assert tools is not None
    assert len(tools) == 1
    assert isinstance(tools[0], FunctionTool)
    assert tools[0].name == "get_weather"
    assert tools[0].description == "Get weather"


async def test_mcp_tool_sampling_callback_forwards_tool_choice():
    """Test sampling callback passes toolChoice mode in options."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = types.ToolChoice(mode="required")

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert options.get("tool_choice") == "required"


async def test_mcp_tool_sampling_callback_forwards_empty_system_prompt():
    """Test sampling callback forwards empty string systemPrompt as instructions."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = ""
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert options.get("instructions") == ""


async def test_mcp_tool_sampling_callback_forwards_empty_tools_list():
    """Test sampling callback forwards empty tools list in options."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = []
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert options.get("tools") == []


async def test_mcp_tool_sampling_callback_forwards_generation_params_in_options():
    """Test sampling callback passes temperature, max_tokens, and stop in options."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = 0.7
    params.maxTokens = 256
    params.stopSequences = ["STOP"]
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert options.get("temperature") == 0.7
    assert options.get("max_tokens") == 256
    assert options.get("stop") == ["STOP"]
    # These should not be passed as top-level kwargs
    assert "temperature" not in call_kwargs.kwargs
    assert "max_tokens" not in call_kwargs.kwargs
    assert "stop" not in call_kwargs.kwargs


async def test_mcp_tool_sampling_callback_omits_temperature_when_none():
    """Test sampling callback does not set temperature in options when it is None."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 100
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert "temperature" not in options
    assert options.get("max_tokens") == 100
    assert "stop" not in options


async def test_mcp_tool_sampling_callback_always_passes_max_tokens():
    """Test sampling callback always sets max_tokens in options since maxTokens is a required int field."""
    from agentnb import Message

    tool = MCPStdioTool(name="test_tool", command="python", sampling_approval_callback=_approve)

    mock_chat_client = AsyncMock()
    mock_response = Mock()
    mock_response.messages = [Message(role="assistant", contents=[Content.from_text("response")])]
    mock_response.model = "test-model"
    mock_chat_client.get_response.return_value = mock_response

    tool.client = mock_chat_client

    params = Mock()
    mock_message = Mock()
    mock_message.role = "user"
    mock_message.content = Mock()
    mock_message.content.text = "Test question"
    params.messages = [mock_message]
    params.temperature = None
    params.maxTokens = 200
    params.stopSequences = None
    params.systemPrompt = None
    params.tools = None
    params.toolChoice = None

    result = await tool.sampling_callback(Mock(), params)

    assert isinstance(result, types.CreateMessageResult)
    call_kwargs = mock_chat_client.get_response.call_args
    options = call_kwargs.kwargs.get("options") or {}
    assert options["max_tokens"] == 200


async def test_connect_sampling_capabilities_with_client():
    """Test connect() passes sampling_capabilities to ClientSession when client is set."""
    tool = MCPStdioTool(name="test", command="test-command", load_tools=False, load_prompts=False)
    tool.client = Mock()

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session = AsyncMock()
        mock_session._request_id = 1

        session_cm = AsyncMock()
        session_cm.__aenter__ = AsyncMock(return_value=mock_session)
        session_cm.__aexit__ = AsyncMock(return_value=None)
        mock_session_class.return_value = session_cm

        await tool.connect()

        call_kwargs = mock_session_class.call_args.kwargs
        sampling_caps = call_kwargs.get("sampling_capabilities")
        assert sampling_caps is not None
        assert isinstance(sampling_caps, types.SamplingCapability)
        assert sampling_caps.tools is not None
        assert isinstance(sampling_caps.tools, types.SamplingToolsCapability)


async def test_connect_no_sampling_capabilities_without_client():
    """Test connect() does not pass sampling_capabilities when no client is set."""
    tool = MCPStdioTool(name="test", command="test-command", load_tools=False, load_prompts=False)
    # No client set

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session = AsyncMock()
        mock_session._request_id = 1

        session_cm = AsyncMock()
        session_cm.__aenter__ = AsyncMock(return_value=mock_session)
        session_cm.__aexit__ = AsyncMock(return_value=None)
        mock_session_class.return_value = session_cm

        await tool.connect()

        call_kwargs = mock_session_class.call_args.kwargs
        assert call_kwargs.get("sampling_capabilities") is None


# Test error handling in connect() method


async def test_connect_session_creation_failure():
    """Test connect() raises ToolException when ClientSession creation fails."""
    tool = MCPStdioTool(name="test", command="test-command")

    # Mock successful transport creation
    mock_transport = (Mock(), Mock())  # (read_stream, write_stream)
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    # Mock ClientSession to raise an exception
    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.side_effect = RuntimeError("Session creation failed")

        with pytest.raises(ToolException) as exc_info:
            await tool.connect()

        assert "Failed to create MCP session" in str(exc_info.value)
        assert "Session creation failed" in str(exc_info.value)  # exception text is now part of the message
        assert "Session creation failed" in str(exc_info.value.__cause__)


async def test_connect_initialization_failure_http_no_command():
    """Test connect() when session.initialize() fails for HTTP tool (no command attribute)."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")

    # Mock successful transport creation
    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    # Mock successful session creation but failed initialization
    mock_session = Mock()
    mock_session.initialize = AsyncMock(side_effect=ConnectionError("Server not ready"))

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(return_value=mock_session)
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(ToolException) as exc_info:
            await tool.connect()

        # Should use generic error message since HTTP tool doesn't have command
        assert "MCP server failed to initialize" in str(exc_info.value)
        assert "Server not ready" in str(exc_info.value)


async def test_connect_cleanup_on_transport_failure():
    """Test that _exit_stack.aclose() is called when transport creation fails."""
    tool = MCPStdioTool(name="test", command="test-command")

    # Mock _exit_stack.aclose to verify it's called
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    # Mock get_mcp_client to raise an exception
    tool.get_mcp_client = Mock(side_effect=RuntimeError("Transport failed"))  # type: ignore[method-assign]

    with pytest.raises(ToolException):
        await tool.connect()

    # Verify cleanup was called
    tool._exit_stack.aclose.assert_called_once()


async def test_connect_cleanup_on_transport_failure_http_uses_generic_message():
    """Test HTTP transport failures use the generic connection message when no command exists."""
    tool = MCPStreamableHTTPTool(name="test", url="https://example.com/mcp")
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]
    tool.get_mcp_client = Mock(side_effect=RuntimeError("Transport failed"))  # type: ignore[method-assign]

    with pytest.raises(ToolException, match="Failed to connect to MCP server: Transport failed"):
        await tool.connect()

    tool._exit_stack.aclose.assert_called_once()


async def test_connect_cleanup_on_initialization_failure():
    """Test that _exit_stack.aclose() is called when initialization fails."""
    tool = MCPStdioTool(name="test", command="test-command")

    # Mock _exit_stack.aclose to verify it's called
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    # Mock successful transport creation
    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    # Mock successful session creation but failed initialization
    mock_session = Mock()
    mock_session.initialize = AsyncMock(side_effect=RuntimeError("Init failed"))

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(return_value=mock_session)
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(ToolException):
            await tool.connect()

        # Verify cleanup was called
        tool._exit_stack.aclose.assert_called_once()


async def test_connect_cancelled_error_during_transport_creation_raises_tool_exception():
    """Test that CancelledError from transport creation is wrapped in ToolException."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]
    tool.get_mcp_client = Mock(side_effect=asyncio.CancelledError("cancel scope"))  # type: ignore[method-assign]

    with pytest.raises(ToolException, match="Failed to connect to MCP server"):
        await tool.connect()

    tool._exit_stack.aclose.assert_called_once()


async def test_connect_cancelled_error_during_transport_creation_stdio_raises_tool_exception():
    """Test that CancelledError from transport creation uses the command-specific message for MCPStdioTool."""
    tool = MCPStdioTool(name="test", command="my-server")
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]
    tool.get_mcp_client = Mock(side_effect=asyncio.CancelledError("cancel scope"))  # type: ignore[method-assign]

    with pytest.raises(ToolException, match="Failed to start MCP server 'my-server'"):
        await tool.connect()

    tool._exit_stack.aclose.assert_called_once()


async def test_connect_cancelled_error_during_session_creation_raises_tool_exception():
    """Test that CancelledError from session creation is wrapped in ToolException."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(side_effect=asyncio.CancelledError("cancel scope"))
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(ToolException, match="Failed to create MCP session"):
            await tool.connect()


async def test_connect_cancelled_error_during_initialize_raises_tool_exception():
    """Test that CancelledError from session.initialize() is wrapped in ToolException.

    This is the primary regression test for the bug: when an MCP server is unreachable,
    the MCP library raises asyncio.CancelledError internally, which previously escaped
    all except Exception handlers and could not be caught by user code.
    """
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    mock_session = Mock()
    mock_session.initialize = AsyncMock(side_effect=asyncio.CancelledError("Cancelled via cancel scope"))

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(return_value=mock_session)
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(ToolException, match="MCP server failed to initialize"):
            await tool.connect()


async def test_connect_cancelled_error_during_initialize_stdio_raises_tool_exception():
    """Test that CancelledError from session.initialize() uses the command-specific message for MCPStdioTool."""
    tool = MCPStdioTool(name="test", command="my-server", args=["--port", "8080"])

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    mock_session = Mock()
    mock_session.initialize = AsyncMock(side_effect=asyncio.CancelledError("Cancelled via cancel scope"))

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(return_value=mock_session)
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(ToolException, match="MCP server 'my-server --port 8080' failed to initialize"):
            await tool.connect()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="task.cancelling() requires Python >= 3.11")
async def test_connect_genuine_cancellation_during_transport_creation_propagates():
    """Test that genuine task cancellation (task.cancelling() > 0) propagates as CancelledError."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    mock_cancelled_task = Mock()
    mock_cancelled_task.cancelling.return_value = 1

    with patch("asyncio.current_task", return_value=mock_cancelled_task):
        tool.get_mcp_client = Mock(side_effect=asyncio.CancelledError("task cancelled"))  # type: ignore[method-assign]
        with pytest.raises(asyncio.CancelledError):
            await tool.connect()

    tool._exit_stack.aclose.assert_called_once()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="task.cancelling() requires Python >= 3.11")
async def test_connect_genuine_cancellation_during_initialize_propagates():
    """Test that genuine task cancellation during initialize() propagates as CancelledError."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    mock_session = Mock()
    mock_session.initialize = AsyncMock(side_effect=asyncio.CancelledError("task cancelled"))

    mock_cancelled_task = Mock()
    mock_cancelled_task.cancelling.return_value = 1

    with (
        patch("asyncio.current_task", return_value=mock_cancelled_task),
        patch("mcp.client.session.ClientSession") as mock_session_class,
    ):
        mock_session_class.return_value.__aenter__ = AsyncMock(return_value=mock_session)
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(asyncio.CancelledError):
            await tool.connect()

    tool._exit_stack.aclose.assert_called_once()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="task.cancelling() requires Python >= 3.11")
async def test_connect_genuine_cancellation_during_session_creation_propagates():
    """Test that genuine task cancellation during session creation propagates as CancelledError."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    mock_cancelled_task = Mock()
    mock_cancelled_task.cancelling.return_value = 1

    with (
        patch("asyncio.current_task", return_value=mock_cancelled_task),
        patch("mcp.client.session.ClientSession") as mock_session_class,
    ):
        mock_session_class.return_value.__aenter__ = AsyncMock(side_effect=asyncio.CancelledError("task cancelled"))
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(asyncio.CancelledError):
            await tool.connect()

    tool._exit_stack.aclose.assert_called_once()


async def test_aenter_cancelled_error_during_connect_is_catchable_as_exception():
    """Test that CancelledError during __aenter__ is catchable as Exception.

    Verifies the end-to-end fix: async with MCPStreamableHTTPTool(...) raises an
    exception that can be caught by a normal `except Exception` block.
    """
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")

    mock_session = Mock()
    mock_session.initialize = AsyncMock(side_effect=asyncio.CancelledError("Cancelled via cancel scope"))

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(return_value=mock_session)
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        caught = None
        try:
            async with tool:
                pass
        except Exception as e:
            caught = e

        assert caught is not None, "Expected an exception to be caught by except Exception"
        assert isinstance(caught, ToolException)


# Tests for _should_propagate_cancelled_error helper










async def test_connect_cancelled_error_during_session_creation_includes_exception_in_message():
    """Test that CancelledError from session creation includes exception details in ToolException message."""
    tool = MCPStreamableHTTPTool(name="test", url="http://example.com")

    mock_transport = (Mock(), Mock())
    mock_context_manager = Mock()
    mock_context_manager.__aenter__ = AsyncMock(return_value=mock_transport)
    mock_context_manager.__aexit__ = AsyncMock(return_value=None)
    tool.get_mcp_client = Mock(return_value=mock_context_manager)  # type: ignore[method-assign]

    with patch("mcp.client.session.ClientSession") as mock_session_class:
        mock_session_class.return_value.__aenter__ = AsyncMock(
            side_effect=asyncio.CancelledError("cancel scope detail")
        )
        mock_session_class.return_value.__aexit__ = AsyncMock(return_value=None)

        with pytest.raises(ToolException) as exc_info:
            await tool.connect()

        assert "Failed to create MCP session" in str(exc_info.value)
        assert "cancel scope detail" in str(exc_info.value)




def test_mcp_stdio_tool_get_mcp_client_with_env_and_kwargs():
    """Test MCPStdioTool.get_mcp_client() with environment variables and client kwargs."""
    env_vars = {"PATH": "/usr/bin", "DEBUG": "1"}
    tool = MCPStdioTool(
        name="test",
        command="test-command",
        encoding="utf-16",
        env=env_vars,
        custom_param="value1",
        another_param=42,
    )

    with patch("mcp.client.stdio.stdio_client"), patch("mcp.client.stdio.StdioServerParameters") as mock_params:
        tool.get_mcp_client()

        # Verify all parameters including custom kwargs were passed
        mock_params.assert_called_once_with(
            command="test-command",
            args=[],
            encoding="utf-16",
            env=env_vars,
            custom_param="value1",
            another_param=42,
        )


def test_mcp_streamable_http_tool_get_mcp_client_all_params():
    """Test MCPStreamableHTTPTool.get_mcp_client() with all parameters."""
    tool = MCPStreamableHTTPTool(
        name="test",
        url="http://example.com",
        terminate_on_close=True,
    )

    with patch("mcp.client.streamable_http.streamable_http_client") as mock_http_client:
        tool.get_mcp_client()

        # Verify streamable_http_client was called with None for http_client
        # (since we didn't provide one, the API will create its own)
        mock_http_client.assert_called_once_with(
            url="http://example.com",
            http_client=None,
            terminate_on_close=True,
        )


def test_mcp_websocket_tool_get_mcp_client_with_kwargs():
    """Test MCPWebsocketTool.get_mcp_client() with client kwargs."""
    tool = MCPWebsocketTool(
        name="test",
        url="wss://example.com",
        max_size=1024,
        ping_interval=30,
        compression="deflate",
    )

    with patch("mcp.client.websocket.websocket_client") as mock_ws_client:
        tool.get_mcp_client()

        # Verify all kwargs were passed
        mock_ws_client.assert_called_once_with(
            url="wss://example.com",
            max_size=1024,
            ping_interval=30,
            compression="deflate",
        )
































async def test_mcp_tool_connection_properly_invalidated_after_closed_resource_error():
    """Test that verifies reconnection on ClosedResourceError for issue #2884.

    This test verifies the fix for issue #2884: the tool tries operations optimistically
    and only reconnects when ClosedResourceError is encountered, avoiding extra latency.
    """
    from unittest.mock import AsyncMock, MagicMock, patch

    from anyio.streams.memory import ClosedResourceError

    from agentnb.mcp import MCPStdioTool
    from agentnb.exceptions import ToolExecutionException

    # Create a mock MCP tool
    tool = MCPStdioTool(
        name="test_server",
        command="test_command",
        args=["arg1"],
        load_tools=True,
    )

    # Mock the session
    mock_session = MagicMock()
    mock_session._request_id = 1
    mock_session.call_tool = AsyncMock()

    # Mock _exit_stack.aclose to track cleanup calls
    original_exit_stack = tool._exit_stack
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    # Mock connect() to avoid trying to start actual process
    with patch.object(tool, "connect", new_callable=AsyncMock) as mock_connect:

        async def restore_session(*, reset=False):
            if reset:
                await original_exit_stack.aclose()
            tool.session = mock_session
            tool.is_connected = True
            tool._tools_loaded = True

        mock_connect.side_effect = restore_session

        # Simulate initial connection
        tool.session = mock_session
        tool.is_connected = True
        tool._tools_loaded = True

        # First call should work - connection is valid
        mock_session.call_tool.return_value = types.CallToolResult(content=[])
        result = await tool.call_tool("test_tool", arg1="value1")
        assert result is not None

        # Test Case 1: Connection closed unexpectedly, should reconnect and retry
        # Simulate ClosedResourceError on first call, then succeed
        call_count = 0

        async def call_tool_with_error(*args, **kwargs):
            nonlocal call_count
            call_count += 1
            if call_count == 1:
                raise ClosedResourceError
            return types.CallToolResult(content=[])

        mock_session.call_tool = call_tool_with_error

        # This call should trigger reconnection after ClosedResourceError
        result = await tool.call_tool("test_tool", arg1="value2")
        assert result is not None
        # Verify reconnect was attempted with reset=True
        assert mock_connect.call_count >= 1
        mock_connect.assert_called_with(reset=True)
        # Verify _exit_stack.aclose was called during reconnection
        original_exit_stack.aclose.assert_called()  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

        # Test Case 2: Reconnection failure
        # Reset counters
        call_count = 0
        mock_connect.reset_mock()
        original_exit_stack.aclose.reset_mock()  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

        # Make call_tool always raise ClosedResourceError
        async def always_fail(*args, **kwargs):
            raise ClosedResourceError

        mock_session.call_tool = always_fail

        # Change mock_connect to simulate failed reconnection
        mock_connect.side_effect = Exception("Failed to reconnect")

        # This should raise ToolExecutionException when reconnection fails
        with pytest.raises(ToolExecutionException) as exc_info:
            await tool.call_tool("test_tool", arg1="value3")

        # Verify reconnection was attempted
        assert mock_connect.call_count >= 1
        # Verify error message indicates reconnection failure
        assert "failed to reconnect" in str(exc_info.value).lower()


async def test_mcp_tool_get_prompt_reconnection_on_closed_resource_error():
    """Test that get_prompt also reconnects on ClosedResourceError.

    This verifies that the fix for issue #2884 applies to get_prompt as well,
    and that _exit_stack.aclose() is properly called during reconnection.
    """
    from unittest.mock import AsyncMock, MagicMock, patch

    from anyio.streams.memory import ClosedResourceError

    from agentnb.mcp import MCPStdioTool
    from agentnb.exceptions import ToolExecutionException

    # Create a mock MCP tool
    tool = MCPStdioTool(
        name="test_server",
        command="test_command",
        args=["arg1"],
        load_prompts=True,
    )

    # Mock the session
    mock_session = MagicMock()
    mock_session._request_id = 1
    mock_session.get_prompt = AsyncMock()

    # Mock _exit_stack.aclose to track cleanup calls
    original_exit_stack = tool._exit_stack
    tool._exit_stack.aclose = AsyncMock()  # type: ignore[method-assign]

    # Mock connect() to avoid trying to start actual process
    with patch.object(tool, "connect", new_callable=AsyncMock) as mock_connect:

        async def restore_session(*, reset=False):
            if reset:
                await original_exit_stack.aclose()
            tool.session = mock_session
            tool.is_connected = True
            tool._prompts_loaded = True

        mock_connect.side_effect = restore_session

        # Simulate initial connection
        tool.session = mock_session
        tool.is_connected = True
        tool._prompts_loaded = True

        # First call should work - connection is valid
        mock_session.get_prompt.return_value = MagicMock(messages=[])
        result = await tool.get_prompt("test_prompt", arg1="value1")
        assert result is not None

        # Test Case 1: Connection closed unexpectedly, should reconnect and retry
        # Simulate ClosedResourceError on first call, then succeed
        call_count = 0

        async def get_prompt_with_error(*args, **kwargs):
            nonlocal call_count
            call_count += 1
            if call_count == 1:
                raise ClosedResourceError
            return MagicMock(messages=[])

        mock_session.get_prompt = get_prompt_with_error

        # This call should trigger reconnection after ClosedResourceError
        result = await tool.get_prompt("test_prompt", arg1="value2")
        assert result is not None
        # Verify reconnect was attempted with reset=True
        assert mock_connect.call_count >= 1
        mock_connect.assert_called_with(reset=True)
        # Verify _exit_stack.aclose was called during reconnection
        original_exit_stack.aclose.assert_called()  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

        # Test Case 2: Reconnection failure
        # Reset counters
        call_count = 0
        mock_connect.reset_mock()
        original_exit_stack.aclose.reset_mock()  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

        # Make get_prompt always raise ClosedResourceError
        async def always_fail(*args, **kwargs):
            raise ClosedResourceError

        mock_session.get_prompt = always_fail

        # Change mock_connect to simulate failed reconnection
        mock_connect.side_effect = Exception("Failed to reconnect")

        # This should raise ToolExecutionException when reconnection fails
        with pytest.raises(ToolExecutionException) as exc_info:
            await tool.get_prompt("test_prompt", arg1="value3")

        # Verify reconnection was attempted
        assert mock_connect.call_count >= 1
        # Verify error message indicates reconnection failure
        assert "failed to reconnect" in str(exc_info.value).lower()












async def test_mcp_tool_aenter_wraps_unexpected_errors_and_closes() -> None:
    tool = MCPStdioTool(name="test_tool", command="python")

    with (
        patch.object(tool, "connect", AsyncMock(side_effect=RuntimeError("boom"))),
        patch.object(tool, "close", AsyncMock()) as mock_close,
        pytest.raises(ToolExecutionException, match="Failed to enter context manager"),
    ):
        await tool.__aenter__()

    mock_close.assert_awaited_once()












































# region: OTel trace context propagation via _meta
















# endregion


# region: MCPStreamableHTTPTool header_provider


async def test_mcp_streamable_http_tool_header_provider_injects_headers():
    """Test that header_provider integrates with call_tool via runtime kwargs.

    When header_provider is configured, runtime kwargs from FunctionInvocationContext
    are passed to the provider and the MCP session.call_tool is invoked successfully.
    """

    class _TestServer(MCPStreamableHTTPTool):
        async def connect(self):  # type: ignore[override]  # pyrefly: ignore[bad-override]  # ty: ignore[invalid-method-override]
            self.session = Mock(spec=ClientSession)
            self.session.list_tools = AsyncMock(
                return_value=types.ListToolsResult(
                    tools=[
                        types.Tool(
                            name="greet",
                            description="Says hello",
                            inputSchema={
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                                "required": ["name"],
                            },
                        )
                    ]
                )
            )
            self.session.call_tool = AsyncMock(
                return_value=types.CallToolResult(content=[types.TextContent(type="text", text="Hello!")])
            )
            self.session.send_ping = AsyncMock()
            self.is_connected = True

        def get_mcp_client(self):  # pyrefly: ignore[bad-override]
            return None

    def provider(kwargs):
        return {"X-Some-Token": kwargs.get("some_token", "")}

    server = _TestServer(
        name="test",
        url="http://example.com/mcp",
        header_provider=provider,
    )
    async with server:
        await server.load_tools()

        # Simulate the runtime kwargs that flow from FunctionInvocationContext.kwargs
        await server.call_tool("greet", name="Alice", some_token="my-secret")

        # Verify the MCP session.call_tool was called
        server.session.call_tool.assert_called_once()  # type: ignore[union-attr]  # ty: ignore[unresolved-attribute]


























async def test_mcp_streamable_http_tool_header_provider_applies_across_transport_tasks():
    """Regression test for #7161: header_provider headers must reach tools/call requests.

    The streamable HTTP transport sends requests from tasks spawned at connect time,
    whose contexts never observe the ContextVar value set later inside call_tool. This
    drives the real transport against an in-process mock server and asserts the
    per-call Authorization header arrives on the tools/call HTTP request.
    """
    import httpx

    captured_requests: list[tuple[str, str, dict[str, str]]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            return httpx.Response(200)
        if request.method == "GET":
            return httpx.Response(405)
        body = json.loads(request.content.decode())
        method = body.get("method", "")
        captured_requests.append((request.method, method, {k.lower(): v for k, v in request.headers.items()}))
        if method == "initialize":
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mock-server", "version": "1.0.0"},
            }
            return httpx.Response(
                200,
                headers={"mcp-session-id": "test-session"},
                json={"jsonrpc": "2.0", "id": body["id"], "result": result},
            )
        if method == "tools/list":
            result = {
                "tools": [
                    {
                        "name": "greet",
                        "description": "Says hello",
                        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                    }
                ]
            }
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})
        if method == "tools/call":
            result = {"content": [{"type": "text", "text": "Hello!"}], "isError": False}
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})
        if "id" in body:
            # Any other request (e.g. ping) gets an empty result so the session doesn't block on it.
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}})
        # Notifications (e.g. notifications/initialized)
        return httpx.Response(202)

    http_client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    tool = MCPStreamableHTTPTool(
        name="test",
        url="http://127.0.0.1:8000/mcp",
        load_prompts=False,
        http_client=http_client,
        header_provider=lambda kw: {"Authorization": f"Bearer {kw.get('api_key', '')}"},
    )
    try:
        async with tool:
            await tool.call_tool("greet", name="Alice", api_key="secret-token")
    finally:
        await http_client.aclose()

    call_headers = [headers for _, method, headers in captured_requests if method == "tools/call"]
    assert len(call_headers) == 1
    assert call_headers[0].get("authorization") == "Bearer secret-token"




async def test_mcp_streamable_http_tool_header_provider_serializes_concurrent_calls():
    """Concurrent call_tool invocations on the same tool must not mix per-call headers.

    The framework executes parallel tool invocations concurrently, so a second call
    must not overwrite the active header snapshot while the first call's requests
    are still in flight (that would attach the wrong credentials).
    """
    release = asyncio.Event()
    in_call = asyncio.Event()

    async def blocking_call_tool(tool_name, *, arguments=None, meta=None):
        in_call.set()
        await release.wait()
        return types.CallToolResult(content=[types.TextContent(type="text", text="Hello!")])

    class _TestServer(MCPStreamableHTTPTool):
        async def connect(self):  # type: ignore[override]  # pyrefly: ignore[bad-override]  # ty: ignore[invalid-method-override]
            self.session = Mock(spec=ClientSession)
            self.session.list_tools = AsyncMock(
                return_value=types.ListToolsResult(
                    tools=[
                        types.Tool(
                            name="greet",
                            description="Says hello",
                            inputSchema={"type": "object", "properties": {"name": {"type": "string"}}},
                        )
                    ]
                )
            )
            self.session.call_tool = AsyncMock(side_effect=blocking_call_tool)
            self.session.send_ping = AsyncMock()
            self.is_connected = True

        def get_mcp_client(self):  # pyrefly: ignore[bad-override]
            return None

    server = _TestServer(
        name="test",
        url="http://example.com/mcp",
        header_provider=lambda kw: {"X-Auth": kw.get("auth_token", "")},
    )
    async with server:
        await server.load_tools()

        first = asyncio.create_task(server.call_tool("greet", name="A", auth_token="token-a"))
        await in_call.wait()
        assert server._active_call_headers == {"X-Auth": "token-a"}

        second = asyncio.create_task(server.call_tool("greet", name="B", auth_token="token-b"))
        for _ in range(10):
            await asyncio.sleep(0)
        # The second call must be waiting on the first; its headers must not have
        # replaced the snapshot the request hook reads for the in-flight call.
        assert server._active_call_headers == {"X-Auth": "token-a"}

        release.set()
        await asyncio.gather(first, second)

    assert server._active_call_headers is None


# endregion


# region: MCP long-running task (SEP-2663) tests


def _utc_now() -> Any:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)


def _make_task_snapshot(
    *,
    task_id: str = "task-1",
    status: str = "working",
    status_message: str | None = None,
    poll_interval_ms: int | None = None,
) -> types.GetTaskResult:
    now = _utc_now()
    return types.GetTaskResult(
        taskId=task_id,
        status=status,  # type: ignore[arg-type]  # ty: ignore[invalid-argument-type]
        statusMessage=status_message,
        createdAt=now,
        lastUpdatedAt=now,
        ttl=None,
        pollInterval=poll_interval_ms,
    )


def _make_create_task_result(task_id: str = "task-1") -> types.CreateTaskResult:
    now = _utc_now()
    return types.CreateTaskResult(
        task=types.Task(
            taskId=task_id,
            status="working",
            statusMessage=None,
            createdAt=now,
            lastUpdatedAt=now,
            ttl=None,
        )
    )


def _make_payload(text: str = "done!", is_error: bool = False) -> types.GetTaskPayloadResult:
    return types.GetTaskPayloadResult.model_validate({
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
    })




def _send_request_dispatcher(*responses_by_method: tuple[str, Any]) -> Any:
    """Build a send_request side_effect that returns responses keyed by request method.

    Each tuple is ``(method_name, response_or_exception_or_callable)``. The dispatcher
    advances a per-method queue on every call. A callable response is invoked with no
    args so tests can raise exceptions deterministically.
    """
    from collections import defaultdict

    queues: dict[str, list[Any]] = defaultdict(list)
    for method, response in responses_by_method:
        queues[method].append(response)

    async def _dispatch(request: Any, _result_type: Any, *_args: Any, **_kw: Any) -> Any:
        method = getattr(request.root, "method", None) or getattr(request, "method", None)
        queue = queues.get(method)  # type: ignore[arg-type, call-overload]  # pyrefly: ignore[bad-argument-type]
        if not queue:
            raise AssertionError(f"No mocked send_request response for method '{method}'.")
        item = queue.pop(0)
        if callable(item):
            return item()
        if isinstance(item, BaseException):
            raise item
        return item

    return _dispatch


async def test_task_options_defaults_are_sane() -> None:
    from agentnb.mcp import MCPTaskOptions

    opts = MCPTaskOptions()
    assert opts.default_ttl is None
    assert opts.cancel_remote_task_on_local_cancellation is True


async def test_task_options_rejects_non_positive_default_ttl() -> None:
    from datetime import timedelta

    from agentnb.mcp import MCPTaskOptions

    with pytest.raises(ValueError, match="positive"):
        MCPTaskOptions(default_ttl=timedelta(seconds=-1))
    with pytest.raises(ValueError, match="positive"):
        MCPTaskOptions(default_ttl=timedelta(0))




























































async def test_mcp_task_options_is_frozen() -> None:
    from dataclasses import FrozenInstanceError

    from agentnb.mcp import MCPTaskOptions

    opts = MCPTaskOptions()
    with pytest.raises(FrozenInstanceError):
        opts.default_ttl = timedelta(seconds=5)  # type: ignore[misc]  # ty: ignore[invalid-assignment]


async def test_mcp_task_options_max_task_wait_rejects_non_positive() -> None:
    from agentnb.mcp import MCPTaskOptions

    with pytest.raises(ValueError, match="positive"):
        MCPTaskOptions(max_task_wait=timedelta(0))
    with pytest.raises(ValueError, match="positive"):
        MCPTaskOptions(max_task_wait=timedelta(seconds=-1))










# endregion


# region additional_tool_argument_names / allowlist filtering
































# endregion
