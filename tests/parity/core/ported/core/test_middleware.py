# Copyright (c) Microsoft. All rights reserved.

from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any
from unittest.mock import MagicMock

import pytest
from pydantic import BaseModel, Field

from agentnb import AgentResponse, AgentResponseUpdate, ChatResponse, ChatResponseUpdate, Content, Message, ResponseStream, SupportsAgentRun
from agentnb import AgentContext, AgentMiddleware, ChatContext, ChatMiddleware, FunctionInvocationContext, FunctionMiddleware, MiddlewareTermination
from agentnb import FunctionTool


class TestAgentContext:
    """Test cases for AgentContext."""

    def test_init_with_defaults(self, mock_agent: SupportsAgentRun) -> None:
        """Test AgentContext initialization with default values."""
        messages = [Message(role="user", contents=["test"])]
        context = AgentContext(agent=mock_agent, messages=messages)

        assert context.agent is mock_agent
        assert context.messages == messages
        assert context.stream is False
        assert context.metadata == {}

    def test_init_with_custom_values(self, mock_agent: SupportsAgentRun) -> None:
        """Test AgentContext initialization with custom values."""
        messages = [Message(role="user", contents=["test"])]
        metadata = {"key": "value"}
        context = AgentContext(agent=mock_agent, messages=messages, stream=True, metadata=metadata)

        assert context.agent is mock_agent
        assert context.messages == messages
        assert context.stream is True
        assert context.metadata == metadata

    def test_init_with_session(self, mock_agent: SupportsAgentRun) -> None:
        """Test AgentContext initialization with session parameter."""
        from agentnb import AgentSession

        messages = [Message(role="user", contents=["test"])]
        session = AgentSession()
        context = AgentContext(agent=mock_agent, messages=messages, session=session)

        assert context.agent is mock_agent
        assert context.messages == messages
        assert context.session is session
        assert context.stream is False
        assert context.metadata == {}


class TestFunctionInvocationContext:
    """Test cases for FunctionInvocationContext."""

    def test_init_with_defaults(self, mock_function: FunctionTool) -> None:
        """Test FunctionInvocationContext initialization with default values."""
        arguments = FunctionTestArgs(name="test")
        context = FunctionInvocationContext(function=mock_function, arguments=arguments)

        assert context.function is mock_function
        assert context.arguments == arguments
        assert context.metadata == {}

    def test_init_with_custom_metadata(self, mock_function: FunctionTool) -> None:
        """Test FunctionInvocationContext initialization with custom metadata."""
        arguments = FunctionTestArgs(name="test")
        metadata = {"key": "value"}
        context = FunctionInvocationContext(function=mock_function, arguments=arguments, metadata=metadata)

        assert context.function is mock_function
        assert context.arguments == arguments
        assert context.metadata == metadata


class TestChatContext:
    """Test cases for ChatContext."""

    def test_init_with_defaults(self, mock_chat_client: Any) -> None:
        """Test ChatContext initialization with default values."""
        messages = [Message(role="user", contents=["test"])]
        chat_options: dict[str, Any] = {}
        context = ChatContext(client=mock_chat_client, messages=messages, options=chat_options)

        assert context.client is mock_chat_client
        assert context.messages == messages
        assert context.options is chat_options
        assert context.stream is False
        assert context.metadata == {}
        assert context.result is None

    def test_init_with_custom_values(self, mock_chat_client: Any) -> None:
        """Test ChatContext initialization with custom values."""
        messages = [Message(role="user", contents=["test"])]
        chat_options: dict[str, Any] = {"temperature": 0.5}
        metadata = {"key": "value"}

        context = ChatContext(
            client=mock_chat_client,
            messages=messages,
            options=chat_options,
            stream=True,
            metadata=metadata,
        )

        assert context.client is mock_chat_client
        assert context.messages == messages
        assert context.options is chat_options
        assert context.stream is True
        assert context.metadata == metadata


class TestAgentMiddlewarePipeline:
    """Test cases for AgentMiddlewarePipeline."""

    class PreNextTerminateMiddleware(AgentMiddleware):
        async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
            raise MiddlewareTermination

    class PostNextTerminateMiddleware(AgentMiddleware):
        async def process(self, context: AgentContext, call_next: Any) -> None:
            await call_next()
            raise MiddlewareTermination















class TestFunctionMiddlewarePipeline:
    """Test cases for FunctionMiddlewarePipeline."""

    class PreNextTerminateFunctionMiddleware(FunctionMiddleware):
        async def process(self, context: FunctionInvocationContext, call_next: Any) -> None:
            raise MiddlewareTermination

    class PostNextTerminateFunctionMiddleware(FunctionMiddleware):
        async def process(self, context: FunctionInvocationContext, call_next: Any) -> None:
            await call_next()
            raise MiddlewareTermination









class TestChatMiddlewarePipeline:
    """Test cases for ChatMiddlewarePipeline."""

    class PreNextTerminateChatMiddleware(ChatMiddleware):
        async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
            raise MiddlewareTermination

    class PostNextTerminateChatMiddleware(ChatMiddleware):
        async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
            await call_next()
            raise MiddlewareTermination













class TestClassBasedMiddleware:
    """Test cases for class-based middleware implementations."""




class TestFunctionBasedMiddleware:
    """Test cases for function-based middleware implementations."""




class TestMixedMiddleware:
    """Test cases for mixed class and function-based middleware."""





class TestMultipleMiddlewareOrdering:
    """Test cases for multiple middleware execution order."""





class TestContextContentValidation:
    """Test cases for validating middleware context content."""





class TestStreamingScenarios:
    """Test cases for streaming and non-streaming scenarios."""






# region Helper classes and fixtures


class FunctionTestArgs(BaseModel):
    """Test arguments for function middleware tests."""

    name: str = Field(description="Test name parameter")


class TestAgentMiddleware(AgentMiddleware):
    """Test implementation of AgentMiddleware."""

    async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()


class TestFunctionMiddleware(FunctionMiddleware):
    """Test implementation of FunctionMiddleware."""

    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()


class TestChatMiddleware(ChatMiddleware):
    """Test implementation of ChatMiddleware."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()


class MockFunctionArgs(BaseModel):
    """Test arguments for function middleware tests."""

    name: str = Field(description="Test name parameter")


class TestMiddlewareExecutionControl:
    """Test cases for middleware execution control (when next() is called vs not called)."""









@pytest.fixture
def mock_agent() -> SupportsAgentRun:
    """Mock agent for testing."""
    agent = MagicMock(spec=SupportsAgentRun)
    agent.name = "test_agent"
    return agent


@pytest.fixture
def mock_function() -> FunctionTool:
    """Mock function for testing."""
    function = MagicMock(spec=FunctionTool)
    function.name = "test_function"
    return function


@pytest.fixture
def mock_chat_client() -> Any:
    """Mock chat client for testing."""
    from agentnb import SupportsChatGetResponse

    client = MagicMock(spec=SupportsChatGetResponse)
    client.service_url = MagicMock(return_value="mock://test")
    return client


class TestCategorizeMiddleware:
    """Test cases for categorize_middleware."""








