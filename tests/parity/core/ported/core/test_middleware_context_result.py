# Copyright (c) Microsoft. All rights reserved.

from collections.abc import AsyncIterable, Awaitable, Callable
from unittest.mock import MagicMock

import pytest
from pydantic import BaseModel, Field

from agentnb import Agent, AgentResponse, AgentResponseUpdate, Content, Message, ResponseStream, SupportsAgentRun
from agentnb import AgentContext, AgentMiddleware, FunctionInvocationContext, FunctionMiddleware
from agentnb import FunctionTool

from .conftest import MockChatClient


class FunctionTestArgs(BaseModel):
    """Test arguments for function middleware tests."""

    name: str = Field(description="Test name parameter")


class TestResultOverrideMiddleware:
    """Test cases for middleware result override functionality."""




    async def test_chat_agent_middleware_response_override(self) -> None:
        """Test result override functionality with Agent integration."""
        mock_chat_client = MockChatClient()

        class ChatAgentResponseOverrideMiddleware(AgentMiddleware):
            async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
                # Always call next() first to allow execution
                await call_next()
                # Then conditionally override based on content
                if any("special" in msg.text for msg in context.messages if msg.text):
                    context.result = AgentResponse(
                        messages=[Message(role="assistant", contents=["Special response from middleware!"])]
                    )

        # Create Agent with override middleware
        middleware = ChatAgentResponseOverrideMiddleware()
        agent = Agent(client=mock_chat_client, middleware=[middleware])  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

        # Test override case
        override_messages = [Message(role="user", contents=["Give me a special response"])]
        override_response = await agent.run(override_messages)
        assert override_response.messages[0].text == "Special response from middleware!"
        # Verify chat client was called since middleware called next()
        assert mock_chat_client.call_count == 1

        # Test normal case
        normal_messages = [Message(role="user", contents=["Normal request"])]
        normal_response = await agent.run(normal_messages)
        assert normal_response.messages[0].text == "test response"
        # Verify chat client was called for normal case
        assert mock_chat_client.call_count == 2

    async def test_chat_agent_middleware_streaming_override(self) -> None:
        """Test streaming result override functionality with Agent integration."""
        mock_chat_client = MockChatClient()

        async def custom_stream() -> AsyncIterable[AgentResponseUpdate]:
            yield AgentResponseUpdate(contents=[Content.from_text(text="Custom")])
            yield AgentResponseUpdate(contents=[Content.from_text(text=" streaming")])
            yield AgentResponseUpdate(contents=[Content.from_text(text=" response!")])

        class ChatAgentStreamOverrideMiddleware(AgentMiddleware):
            async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
                # Check if we want to override BEFORE calling next to avoid creating unused streams
                if any("custom stream" in msg.text for msg in context.messages if msg.text):
                    context.result = ResponseStream(custom_stream())
                    return  # Don't call next() - we're overriding the entire result
                # Normal case - let the agent handle it
                await call_next()

        # Create Agent with override middleware
        middleware = ChatAgentStreamOverrideMiddleware()
        agent = Agent(client=mock_chat_client, middleware=[middleware])  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

        # Test streaming override case
        override_messages = [Message(role="user", contents=["Give me a custom stream"])]
        override_updates: list[AgentResponseUpdate] = []
        async for update in agent.run(override_messages, stream=True):
            override_updates.append(update)

        assert len(override_updates) == 3
        assert override_updates[0].text == "Custom"
        assert override_updates[1].text == " streaming"
        assert override_updates[2].text == " response!"

        # Test normal streaming case
        normal_messages = [Message(role="user", contents=["Normal streaming request"])]
        normal_updates: list[AgentResponseUpdate] = []
        async for update in agent.run(normal_messages, stream=True):
            normal_updates.append(update)

        assert len(normal_updates) == 2
        assert normal_updates[0].text == "test streaming response "
        assert normal_updates[1].text == "another update"




class TestResultObservability:
    """Test cases for middleware result observability functionality."""






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
