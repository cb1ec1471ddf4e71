# Copyright (c) Microsoft. All rights reserved.

import contextlib
import inspect
import json
import logging
from collections.abc import AsyncIterable, Awaitable, Callable, MutableSequence, Sequence
from typing import Any, cast
from unittest.mock import AsyncMock, MagicMock, patch
from uuid import uuid4

import pytest
from pytest import raises

from agentnb import GROUP_ANNOTATION_KEY, GROUP_TOKEN_COUNT_KEY, Agent, AgentResponse, AgentResponseUpdate, AgentSession, ChatContext, ChatOptions, ChatResponse, ChatResponseUpdate, Content, ContextProvider, FunctionTool, HistoryProvider, InMemoryHistoryProvider, Message, MessageInjectionMiddleware, ResponseStream, ServiceSessionId, SessionContext, SlidingWindowStrategy, SupportsAgentRun, SupportsChatGetResponse, TruncationStrategy, chat_middleware, enqueue_messages, tool
from agentnb import FunctionInvocationContext
from agentnb.exceptions import ServiceResponseError as AgentInvalidRequestException, ServiceResponseError as ChatClientInvalidResponseException

from .conftest import MockBaseChatClient


class _FixedTokenizer:
    def __init__(self, token_count: int) -> None:
        self.token_count = token_count

    def count_tokens(self, text: str) -> int:
        return self.token_count




class _RecordingHistoryProvider(HistoryProvider):
    def __init__(self, source_id: str = "recording_history") -> None:
        super().__init__(source_id=source_id)

    async def get_messages(
        self,
        session_id: str | None,
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Message]:
        if state is None:
            return []
        state["get_call_count"] = state.get("get_call_count", 0) + 1
        return list(cast(list[Message], state.get("messages", [])))

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if state is None:
            return
        state["save_call_count"] = state.get("save_call_count", 0) + 1
        state.setdefault("messages", []).extend(messages)


class _ResponseIdRecordingHistoryProvider(_RecordingHistoryProvider):
    async def after_run(
        self,
        *,
        agent: SupportsAgentRun,
        session: AgentSession,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        state.setdefault("response_ids", []).append(context.response.response_id if context.response else None)
        await super().after_run(agent=agent, session=session, context=context, state=state)


class _ResponseMetadataRecordingHistoryProvider(_RecordingHistoryProvider):
    def __init__(self, source_id: str = "recording_response_metadata") -> None:
        super().__init__(source_id=source_id)
        self.responses: list[AgentResponse] = []

    async def after_run(
        self,
        *,
        agent: SupportsAgentRun,
        session: AgentSession,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        if context.response:
            self.responses.append(context.response)
        await super().after_run(agent=agent, session=session, context=context, state=state)


def test_agent_session_type(agent_session: AgentSession) -> None:
    assert isinstance(agent_session, AgentSession)


def test_agent_type(agent: SupportsAgentRun) -> None:
    assert isinstance(agent, SupportsAgentRun)


async def test_agent_run(agent: SupportsAgentRun) -> None:
    response = await agent.run("test")
    assert response.messages[0].role == "assistant"
    assert response.messages[0].text == "Response"


async def test_agent_run_with_content(agent: SupportsAgentRun) -> None:
    response = await agent.run(Content.from_text("test"))
    assert response.messages[0].role == "assistant"
    assert response.messages[0].text == "Response"


async def test_agent_run_streaming(agent: SupportsAgentRun) -> None:
    async def collect_updates(
        updates: AsyncIterable[AgentResponseUpdate],
    ) -> list[AgentResponseUpdate]:
        return [u async for u in updates]

    updates = await collect_updates(agent.run("test", stream=True))
    assert len(updates) == 1
    assert updates[0].text == "Response"


def test_chat_client_agent_type(client: SupportsChatGetResponse) -> None:
    chat_client_agent = Agent(client=client)
    assert isinstance(chat_client_agent, SupportsAgentRun)


def test_chat_client_agent_uses_client_model_attribute(chat_client_base) -> None:
    chat_client_base.model = "claude-model"  # type: ignore[attr-defined]

    agent = Agent(client=chat_client_base)

    assert agent.default_options["model"] == "claude-model"
    assert "model_id" not in agent.default_options


def test_chat_client_agent_prefers_default_model_over_client_model(chat_client_base) -> None:
    chat_client_base.model = "legacy-model"  # type: ignore[attr-defined]

    default_options: ChatOptions = {"model": "claude-model"}
    agent = Agent(client=chat_client_base, default_options=default_options)

    assert agent.default_options["model"] == "claude-model"
    assert "model_id" not in agent.default_options


def test_agent_init_docstring_surfaces_raw_agent_constructor_docs() -> None:
    docstring = inspect.getdoc(Agent.__init__)

    assert docstring is not None
    assert "client: The chat client to use for the agent." in docstring
    assert "middleware: List of middleware to intercept agent and function invocations." in docstring


def test_agent_run_docstring_surfaces_raw_agent_runtime_docs() -> None:
    docstring = inspect.getdoc(Agent.run)

    assert docstring is not None
    assert "Run the agent with the given messages and options." in docstring
    assert "function_invocation_kwargs: Keyword arguments forwarded to tool invocation." in docstring
    assert "middleware: Optional per-run agent, chat, and function middleware." in docstring


def test_agent_run_is_defined_on_agent_class() -> None:
    signature = inspect.signature(Agent.run)

    assert Agent.run.__qualname__ == "Agent.run"
    assert "middleware" in signature.parameters


async def test_chat_client_agent_init(client: SupportsChatGetResponse) -> None:
    agent_id = str(uuid4())
    agent = Agent(client=client, id=agent_id, description="Test")

    assert agent.id == agent_id
    assert agent.name is None
    assert agent.description == "Test"


async def test_chat_client_agent_init_with_name(
    client: SupportsChatGetResponse,
) -> None:
    agent_id = str(uuid4())
    agent = Agent(client=client, id=agent_id, name="Test Agent", description="Test")

    assert agent.id == agent_id
    assert agent.name == "Test Agent"
    assert agent.description == "Test"


def test_agent_init_rejects_direct_additional_properties(client: SupportsChatGetResponse) -> None:
    with pytest.raises(TypeError):
        Agent(client=client, legacy_key="legacy-value")  # type: ignore[call-arg]  # pyrefly: ignore[unexpected-keyword]  # ty: ignore[unknown-argument]


async def test_chat_client_agent_run(client: SupportsChatGetResponse) -> None:
    agent = Agent(client=client)

    result = await agent.run("Hello")

    assert result.text == "test response"


async def test_chat_client_agent_run_streaming(client: SupportsChatGetResponse) -> None:
    agent = Agent(client=client)

    result = await AgentResponse.from_update_generator(agent.run("Hello", stream=True))

    assert result.text == "test streaming response another update"


async def test_chat_client_agent_streaming_response_format_from_default_options(
    client: SupportsChatGetResponse,
) -> None:
    """AgentResponse.value must be parsed when response_format is set in default_options and streaming."""
    from pydantic import BaseModel

    class Greeting(BaseModel):
        greeting: str

    json_text = '{"greeting": "Hello"}'
    client.streaming_responses.append(  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text(json_text)],
                role="assistant",
                finish_reason="stop",
            )
        ]
    )

    agent = Agent(client=client, default_options={"response_format": Greeting})  # type: ignore[arg-type, typeddict-item]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
    stream = agent.run("Hello", stream=True)
    async for _ in stream:
        pass
    result = await stream.get_final_response()

    assert result.text == json_text
    assert result.value is not None
    assert isinstance(result.value, Greeting)
    assert result.value.greeting == "Hello"


async def test_chat_client_agent_streaming_response_format_from_run_options(
    client: SupportsChatGetResponse,
) -> None:
    """AgentResponse.value must be parsed when response_format is passed via run() options kwarg."""
    from pydantic import BaseModel

    class Greeting(BaseModel):
        greeting: str

    json_text = '{"greeting": "Hi"}'
    client.streaming_responses.append(  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text(json_text)],
                role="assistant",
                finish_reason="stop",
            )
        ]
    )

    agent = Agent(client=client)
    stream = agent.run("Hello", stream=True, options={"response_format": Greeting})
    async for _ in stream:
        pass
    result = await stream.get_final_response()

    assert result.text == json_text
    assert result.value is not None
    assert isinstance(result.value, Greeting)
    assert result.value.greeting == "Hi"


async def test_chat_client_agent_response_format_dict_from_default_options(
    client: SupportsChatGetResponse,
) -> None:
    """AgentResponse.value should parse JSON dicts from default_options response_format."""
    json_text = json.dumps({"greeting": "Hello"})
    client.responses.append(ChatResponse(messages=Message(role="assistant", contents=[json_text])))  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    agent = Agent(
        client=client,  # ty: ignore[invalid-argument-type]
        default_options={"response_format": {"type": "object", "properties": {"greeting": {"type": "string"}}}},  # pyrefly: ignore[bad-argument-type]
    )
    result = await agent.run("Hello")

    assert result.text == json_text
    assert result.value is not None
    assert isinstance(result.value, dict)
    assert result.value["greeting"] == "Hello"


async def test_chat_client_agent_streaming_response_format_dict_from_run_options(
    client: SupportsChatGetResponse,
) -> None:
    """Agent streaming should preserve mapping response_format and parse the final value as a dict."""
    json_text = json.dumps({"greeting": "Hi"})
    client.streaming_responses.append(  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text(json_text)],
                role="assistant",
                finish_reason="stop",
            )
        ]
    )

    agent = Agent(client=client)
    stream = agent.run(
        "Hello",
        stream=True,
        options={"response_format": {"type": "object", "properties": {"greeting": {"type": "string"}}}},
    )
    async for _ in stream:
        pass
    result = await stream.get_final_response()

    assert result.text == json_text
    assert result.value is not None
    assert isinstance(result.value, dict)
    assert result.value["greeting"] == "Hi"


async def test_chat_client_agent_create_session(
    client: SupportsChatGetResponse,
) -> None:
    agent = Agent(client=client)
    session = agent.create_session()

    assert isinstance(session, AgentSession)








async def test_chat_agent_persists_history_per_service_call(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    session = AgentSession()
    session.state[provider.source_id] = {
        "messages": [
            Message(role="user", contents=["Earlier question"]),
            Message(role="assistant", contents=["Earlier answer"]),
        ]
    }
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="call_1",
                        name="lookup_weather",
                        arguments='{"location": "Seattle"}',
                    )
                ],
            ),
            response_id="resp_call_1",
        ),
        ChatResponse(
            messages=Message(role="assistant", contents=["It is sunny in Seattle."]), response_id="resp_call_2"
        ),
    ]

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    result = await agent.run("What's the weather in Seattle?", session=session)

    provider_state = session.state[provider.source_id]
    stored_messages = cast(list[Message], provider_state["messages"])

    assert result.text == "It is sunny in Seattle."
    assert result.response_id is None
    assert chat_client_base.call_count == 2  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert provider_state["get_call_count"] == 2
    assert provider_state["save_call_count"] == 2
    assert stored_messages[-1].text == "It is sunny in Seattle."
    assert session.service_session_id is None


async def test_message_injection_persists_each_injected_service_call(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()
    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}
    captured_messages: list[list[str | None]] = []

    async def fake_get_response(
        *,
        messages: Sequence[Message],
        options: dict[str, Any],
        **kwargs: Any,
    ) -> ChatResponse:
        captured_messages.append([message.text for message in messages])
        if len(captured_messages) == 1:
            enqueue_messages(session, "queued during first service call")
            return ChatResponse(messages=Message(role="assistant", contents=["first"]))
        return ChatResponse(messages=Message(role="assistant", contents=["second"]))

    agent = Agent(
        client=chat_client_base,
        context_providers=[provider],
        middleware=[MessageInjectionMiddleware()],
        require_per_service_call_history_persistence=True,
    )

    with patch.object(chat_client_base, "_get_non_streaming_response", side_effect=fake_get_response):
        result = await agent.run("initial message", session=session)

    provider_state = session.state[provider.source_id]
    stored_messages = cast(list[Message], provider_state["messages"])

    assert result.text == "second"
    assert captured_messages == [["initial message"], ["initial message", "first", "queued during first service call"]]
    assert provider_state["get_call_count"] == 2
    assert provider_state["save_call_count"] == 2
    assert stored_messages[-1].text == "second"


async def test_per_service_call_history_provider_receives_full_agent_response_metadata(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _ResponseMetadataRecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}
    first_response = ChatResponse(
        messages=Message(
            role="assistant",
            contents=[
                Content.from_function_call(
                    call_id="call_1",
                    name="lookup_weather",
                    arguments='{"location": "Seattle"}',
                )
            ],
        ),
        response_id="resp_call_1",
        created_at="2026-07-07T12:02:00Z",
        finish_reason="tool_calls",
        usage_details={"input_token_count": 5, "output_token_count": 1, "total_token_count": 6},
        continuation_token=cast(Any, {"token": "psc-next"}),
        additional_properties={"provider": "psc-test"},
    )
    final_response = ChatResponse(
        messages=Message(role="assistant", contents=["It is sunny in Seattle."]),
        response_id="resp_call_2",
        finish_reason="stop",
        usage_details={"input_token_count": 6, "output_token_count": 4, "total_token_count": 10},
    )
    chat_client_base.run_responses = [first_response, final_response]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    result = await agent.run("What's the weather in Seattle?", session=session)

    assert result.text == "It is sunny in Seattle."
    assert len(provider.responses) == 2
    captured = provider.responses[0]
    assert captured.response_id is None
    assert captured.created_at == "2026-07-07T12:02:00Z"
    assert captured.finish_reason == "tool_calls"
    assert captured.usage_details == {"input_token_count": 5, "output_token_count": 1, "total_token_count": 6}
    assert captured.continuation_token == {"token": "psc-next"}
    assert captured.additional_properties == {"provider": "psc-test"}
    assert captured.raw_representation is first_response


async def test_chat_agent_persists_history_per_service_call_streaming(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    session = AgentSession()
    session.state[provider.source_id] = {
        "messages": [
            Message(role="user", contents=["Earlier question"]),
            Message(role="assistant", contents=["Earlier answer"]),
        ]
    }
    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[
                    Content.from_function_call(
                        call_id="call_1",
                        name="lookup_weather",
                        arguments='{"location": "Seattle"}',
                    )
                ],
                role="assistant",
                finish_reason="stop",
                response_id="resp_call_1",
            )
        ],
        [
            ChatResponseUpdate(
                contents=[Content.from_text("It is sunny in Seattle.")],
                role="assistant",
                finish_reason="stop",
                response_id="resp_call_2",
            )
        ],
    ]

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    stream = agent.run("What's the weather in Seattle?", session=session, stream=True)
    async for _ in stream:
        pass
    result = await stream.get_final_response()

    provider_state = session.state[provider.source_id]
    stored_messages = cast(list[Message], provider_state["messages"])

    assert result.text == "It is sunny in Seattle."
    assert result.response_id is None
    assert chat_client_base.call_count == 2  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert provider_state["get_call_count"] == 2
    assert provider_state["save_call_count"] == 2
    assert stored_messages[-1].text == "It is sunny in Seattle."
    assert session.service_session_id is None


async def test_streaming_per_service_call_persistence_hides_response_id_from_after_run(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _ResponseIdRecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}
    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[
                    Content.from_function_call(
                        call_id="call_1",
                        name="lookup_weather",
                        arguments='{"location": "Seattle"}',
                    )
                ],
                role="assistant",
                finish_reason="stop",
                response_id="resp_call_1",
            )
        ],
        [
            ChatResponseUpdate(
                contents=[Content.from_text("It is sunny in Seattle.")],
                role="assistant",
                finish_reason="stop",
                response_id="resp_call_2",
            )
        ],
    ]

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    stream = agent.run("What's the weather in Seattle?", session=session, stream=True)
    async for _ in stream:
        pass
    result = await stream.get_final_response()

    provider_state = session.state[provider.source_id]

    assert result.response_id is None
    assert provider_state["response_ids"] == [None, None]


async def test_per_service_call_persistence_uses_real_service_storage_when_client_stores_by_default(
    chat_client_base: SupportsChatGetResponse,
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = _RecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    chat_client_base.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="call_1",
                        name="lookup_weather",
                        arguments='{"location": "Seattle"}',
                    )
                ],
            ),
            conversation_id="resp_service_managed",
            response_id="resp_call_1",
        ),
        ChatResponse(
            messages=Message(role="assistant", contents=["It is sunny in Seattle."]),
            conversation_id="resp_service_managed",
            response_id="resp_call_2",
        ),
    ]

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    with caplog.at_level(logging.WARNING, logger="agentnb"):
        result = await agent.run("What's the weather in Seattle?", session=session)

    provider_state = session.state[provider.source_id]

    assert result.text == "It is sunny in Seattle."
    assert result.response_id == "resp_call_2"
    assert chat_client_base.call_count == 2  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    # The service owns the conversation, so the provider never loads (issue #5798).
    assert "get_call_count" not in provider_state
    # Persistence is owned by the per-service-call middleware: it persists once per service call
    # (issue #5798: the provider must never be silently bypassed when the service stores history).
    # This run makes two service calls (function call + final answer), so it persists twice.
    assert provider_state["save_call_count"] == 2
    # load_messages=True while the service stores history surfaces a warning.
    assert any("load_messages" in record.message for record in caplog.records)
    assert session.service_session_id == "resp_service_managed"


async def test_service_storage_updates_session_handle_per_service_call_before_non_streaming_failure(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    chat_client_base.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}
    first_response = ChatResponse(
        messages=Message(
            role="assistant",
            contents=[
                Content.from_function_call(
                    call_id="call_1",
                    name="lookup_weather",
                    arguments='{"location": "Seattle"}',
                )
            ],
        ),
        conversation_id="resp_call_1",
        response_id="resp_call_1",
    )
    mock_get_non_streaming_response = AsyncMock(
        side_effect=[first_response, RuntimeError("service down")],
    )

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    with (
        patch.object(chat_client_base, "_get_non_streaming_response", new=mock_get_non_streaming_response),
        pytest.raises(RuntimeError, match="service down"),
    ):
        await agent.run("What's the weather in Seattle?", session=session)

    assert mock_get_non_streaming_response.await_count == 2
    assert session.service_session_id == "resp_call_1"


async def test_service_storage_updates_session_handle_per_service_call_before_streaming_failure(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()

    @tool(name="lookup_weather", approval_mode="never_require")
    def lookup_weather(location: str) -> str:
        return f"Weather in {location}: sunny"

    chat_client_base.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}

    async def _first_stream_updates() -> AsyncIterable[ChatResponseUpdate]:
        yield ChatResponseUpdate(
            contents=[
                Content.from_function_call(
                    call_id="call_1",
                    name="lookup_weather",
                    arguments='{"location": "Seattle"}',
                )
            ],
            role="assistant",
            finish_reason="stop",
        )

    def _finalize_first_stream(_updates: Sequence[ChatResponseUpdate]) -> ChatResponse[Any]:
        return ChatResponse(
            messages=Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="call_1",
                        name="lookup_weather",
                        arguments='{"location": "Seattle"}',
                    )
                ],
            ),
            conversation_id="resp_call_1",
            response_id="resp_call_1",
        )

    first_stream = ResponseStream(_first_stream_updates(), finalizer=_finalize_first_stream)
    mock_get_streaming_response = MagicMock(side_effect=[first_stream, RuntimeError("service down")])

    agent = Agent(
        client=chat_client_base,
        tools=[lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    with (
        patch.object(chat_client_base, "_get_streaming_response", new=mock_get_streaming_response),
        pytest.raises(RuntimeError, match="service down"),
    ):
        stream = agent.run("What's the weather in Seattle?", session=session, stream=True)
        async for _ in stream:
            pass

    assert mock_get_streaming_response.call_count == 2
    assert session.service_session_id == "resp_call_1"


async def test_chat_agent_without_per_service_call_persistence_preserves_response_id(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=Message(role="assistant", contents=["Hello"]),
            response_id="resp_call_1",
        )
    ]

    agent = Agent(
        client=chat_client_base,
        context_providers=[InMemoryHistoryProvider()],
    )

    result = await agent.run("Hello", session=AgentSession(), options={"store": False})

    assert result.response_id == "resp_call_1"


async def test_per_service_call_persistence_rejects_real_service_conversation_id(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()
    chat_client_base.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=Message(role="assistant", contents=["Hello"]),
            conversation_id="resp_service_managed",
        )
    ]

    agent = Agent(
        client=chat_client_base,
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    with pytest.raises(
        ChatClientInvalidResponseException,
        match="require_per_service_call_history_persistence cannot be used",
    ):
        await agent.run("Hello", session=session, options={"store": False})


async def test_per_service_call_persistence_rejects_existing_conversation_id_when_service_not_storing_history(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    provider = _RecordingHistoryProvider()
    session = AgentSession()
    session.state[provider.source_id] = {"messages": []}

    agent = Agent(
        client=chat_client_base,
        context_providers=[provider],
        require_per_service_call_history_persistence=True,
    )

    with pytest.raises(
        AgentInvalidRequestException,
        match="require_per_service_call_history_persistence cannot be used",
    ):
        await agent.run("Hello", session=session, options={"store": False, "conversation_id": "existing_conversation"})


async def test_chat_client_agent_run_with_session(chat_client_base: SupportsChatGetResponse) -> None:
    mock_response = ChatResponse(
        messages=[Message(role="assistant", contents=[Content.from_text("test response")])],
        conversation_id="123",
    )
    chat_client_base.run_responses = [mock_response]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    agent = Agent(
        client=chat_client_base,
        tools={"type": "code_interpreter"},
    )
    session = agent.get_session(service_session_id="123")

    result = await agent.run("Hello", session=session)
    assert result.text == "test response"

    assert session.service_session_id == "123"


async def test_chat_client_agent_updates_existing_session_id_non_streaming(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=[Message(role="assistant", contents=[Content.from_text("test response")])],
            conversation_id="resp_new_123",
        )
    ]

    agent = Agent(client=chat_client_base)
    session = agent.get_session(service_session_id="resp_old_123")

    await agent.run("Hello", session=session)
    assert session.service_session_id == "resp_new_123"


async def test_chat_client_agent_update_session_id_streaming_uses_conversation_id(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text("stream part 1")],
                role="assistant",
                response_id="resp_stream_123",
                conversation_id="conv_stream_456",
            ),
            ChatResponseUpdate(
                contents=[Content.from_text(" stream part 2")],
                role="assistant",
                response_id="resp_stream_123",
                conversation_id="conv_stream_456",
                finish_reason="stop",
            ),
        ]
    ]

    agent = Agent(client=chat_client_base)
    session = agent.create_session()

    stream = agent.run("Hello", session=session, stream=True)
    async for _ in stream:
        pass
    result = await stream.get_final_response()
    assert result.text == "stream part 1 stream part 2"
    assert session.service_session_id == "conv_stream_456"


async def test_chat_client_agent_updates_existing_session_id_streaming(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text("stream part 1")],
                role="assistant",
                response_id="resp_stream_123",
                conversation_id="resp_new_456",
            ),
            ChatResponseUpdate(
                contents=[Content.from_text(" stream part 2")],
                role="assistant",
                response_id="resp_stream_123",
                conversation_id="resp_new_456",
                finish_reason="stop",
            ),
        ]
    ]

    agent = Agent(client=chat_client_base)
    session = agent.get_session(service_session_id="resp_old_456")

    stream = agent.run("Hello", session=session, stream=True)
    async for _ in stream:
        pass
    await stream.get_final_response()
    assert session.service_session_id == "resp_new_456"


async def test_chat_client_agent_update_session_id_streaming_does_not_use_response_id(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text("stream response without conversation id")],
                role="assistant",
                response_id="resp_only_123",
                finish_reason="stop",
            ),
        ]
    ]

    agent = Agent(client=chat_client_base)
    session = agent.create_session()

    stream = agent.run("Hello", session=session, stream=True)
    async for _ in stream:
        pass
    result = await stream.get_final_response()
    assert result.text == "stream response without conversation id"
    assert session.service_session_id is None


async def test_chat_client_agent_streaming_session_id_set_without_get_final_response(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Test that session.service_session_id is set during streaming iteration.

    This verifies the eager propagation of conversation_id via transform hook,
    which is needed for multi-turn flows (e.g. hosted MCP approval) where the
    user iterates the stream and then makes a follow-up call without calling
    get_final_response().
    """
    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text("part 1")],
                role="assistant",
                response_id="resp_123",
                conversation_id="resp_123",
            ),
            ChatResponseUpdate(
                contents=[Content.from_text(" part 2")],
                role="assistant",
                response_id="resp_123",
                conversation_id="resp_123",
                finish_reason="stop",
            ),
        ]
    ]

    agent = Agent(client=chat_client_base)
    session = agent.create_session()
    assert session.service_session_id is None

    # Only iterate — do NOT call get_final_response()
    async for _ in agent.run("Hello", session=session, stream=True):
        pass

    assert session.service_session_id == "resp_123"


async def test_chat_client_agent_streaming_session_history_saved_without_get_final_response(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Test that session history is saved after streaming iteration without get_final_response().

    Auto-finalization on iteration completion should trigger after_run providers,
    persisting conversation history to the session.
    """
    from agentnb import InMemoryHistoryProvider

    chat_client_base.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [
            ChatResponseUpdate(
                contents=[Content.from_text("Hello Alice!")],
                role="assistant",
                response_id="resp_1",
                finish_reason="stop",
            ),
        ]
    ]

    agent = Agent(client=chat_client_base)
    session = agent.create_session()

    # Only iterate — do NOT call get_final_response()
    async for _ in agent.run("My name is Alice", session=session, stream=True):
        pass

    chat_messages: list[Message] = session.state.get(InMemoryHistoryProvider.DEFAULT_SOURCE_ID, {}).get("messages", [])
    assert len(chat_messages) == 2
    assert chat_messages[0].text == "My name is Alice"
    assert chat_messages[1].text == "Hello Alice!"


async def test_chat_client_agent_update_session_messages(
    client: SupportsChatGetResponse,
) -> None:
    from agentnb import InMemoryHistoryProvider

    agent = Agent(client=client)
    session = agent.create_session()

    result = await agent.run("Hello", session=session)
    assert result.text == "test response"

    assert session.service_session_id is None

    chat_messages: list[Message] = session.state.get(InMemoryHistoryProvider.DEFAULT_SOURCE_ID, {}).get("messages", [])

    assert chat_messages is not None
    assert len(chat_messages) == 2
    assert chat_messages[0].text == "Hello"
    assert chat_messages[1].text == "test response"


async def test_chat_client_agent_update_session_conversation_id_missing(
    client: SupportsChatGetResponse,
) -> None:
    agent = Agent(client=client)
    session = agent.get_session(service_session_id="123")

    # With the session-based API, service_session_id is managed directly on the session
    assert session.service_session_id == "123"


async def test_chat_client_agent_default_author_name(
    client: SupportsChatGetResponse,
) -> None:
    # Name is not specified here, so default name should be used
    agent = Agent(client=client)

    result = await agent.run("Hello")
    assert result.text == "test response"
    assert result.messages[0].author_name == "UnnamedAgent"


async def test_chat_client_agent_author_name_as_agent_name(
    client: SupportsChatGetResponse,
) -> None:
    # Name is specified here, so it should be used as author name
    agent = Agent(client=client, name="TestAgent")

    result = await agent.run("Hello")
    assert result.text == "test response"
    assert result.messages[0].author_name == "TestAgent"


async def test_chat_client_agent_author_name_is_used_from_response(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=[
                Message(
                    role="assistant",
                    contents=[Content.from_text("test response")],
                    author_name="TestAuthor",
                )
            ]
        )
    ]

    agent = Agent(client=chat_client_base, tools={"type": "code_interpreter"})

    result = await agent.run("Hello")
    assert result.text == "test response"
    assert result.messages[0].author_name == "TestAuthor"


# Mock context provider for testing
class MockContextProvider(ContextProvider):
    def __init__(self, messages: list[Message] | None = None) -> None:
        super().__init__(source_id="mock")
        self.context_messages = messages
        self.before_run_called = False
        self.after_run_called = False
        self.new_messages: list[Message] = []
        self.last_service_session_id: str | ServiceSessionId | None = None

    async def before_run(self, *, agent: Any, session: Any, context: Any, state: Any) -> None:
        self.before_run_called = True
        if self.context_messages:
            context.extend_messages(self, self.context_messages)

    async def after_run(self, *, agent: Any, session: Any, context: Any, state: Any) -> None:
        self.after_run_called = True
        if session:
            self.last_service_session_id = session.service_session_id
        if context.response:
            self.new_messages.extend(context.input_messages)
            self.new_messages.extend(context.response.messages)


async def test_chat_agent_context_providers_model_before_run(
    client: SupportsChatGetResponse,
) -> None:
    """Test that context providers' before_run is called during agent run."""
    mock_provider = MockContextProvider(messages=[Message(role="system", contents=["Test context instructions"])])
    agent = Agent(client=client, context_providers=[mock_provider])

    await agent.run("Hello")

    assert mock_provider.before_run_called


async def test_chat_agent_context_providers_after_run(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Test that context providers' after_run is called during agent run."""
    mock_provider = MockContextProvider()
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=[Message(role="assistant", contents=[Content.from_text("test response")])],
            conversation_id="test-thread-id",
        )
    ]

    agent = Agent(client=chat_client_base, context_providers=[mock_provider])

    session = agent.get_session(service_session_id="test-thread-id")
    await agent.run("Hello", session=session)

    assert mock_provider.after_run_called
    assert mock_provider.last_service_session_id == "test-thread-id"


async def test_context_provider_receives_full_agent_response_non_streaming(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Context providers should see the same full AgentResponse returned by non-streaming runs."""
    captured_response: AgentResponse | None = None

    class CapturingContextProvider(ContextProvider):
        def __init__(self) -> None:
            super().__init__(source_id="capture_response")

        async def after_run(
            self,
            *,
            agent: SupportsAgentRun,
            session: AgentSession,
            context: SessionContext,
            state: dict[str, Any],
        ) -> None:
            nonlocal captured_response
            captured_response = context.response

    raw_response = ChatResponse(
        messages=[Message(role="assistant", contents=[Content.from_text('{"answer": "ok"}')])],
        response_id="resp_full",
        created_at="2026-07-07T12:00:00Z",
        finish_reason="stop",
        usage_details={"input_token_count": 3, "output_token_count": 2, "total_token_count": 5},
        continuation_token=cast(Any, {"token": "next"}),
        additional_properties={"provider": "test"},
    )
    chat_client_base.run_responses = [raw_response]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    agent = Agent(client=chat_client_base, context_providers=[CapturingContextProvider()])

    response = await agent.run(
        "Hello",
        options={"response_format": {"type": "object", "properties": {"answer": {"type": "string"}}}},
    )

    assert captured_response is response
    assert response.response_id == "resp_full"
    assert response.created_at == "2026-07-07T12:00:00Z"
    assert response.finish_reason == "stop"
    assert response.usage_details == {"input_token_count": 3, "output_token_count": 2, "total_token_count": 5}
    assert response.value == {"answer": "ok"}
    assert response.continuation_token == {"token": "next"}
    assert response.additional_properties == {"provider": "test"}
    assert response.raw_representation is raw_response


async def test_context_provider_after_run_preserves_lazy_structured_value_parsing(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Context providers should see the response before malformed structured output raises for callers."""
    captured_response: AgentResponse | None = None

    class CapturingContextProvider(ContextProvider):
        def __init__(self) -> None:
            super().__init__(source_id="capture_lazy_value_response")

        async def after_run(
            self,
            *,
            agent: SupportsAgentRun,
            session: AgentSession,
            context: SessionContext,
            state: dict[str, Any],
        ) -> None:
            nonlocal captured_response
            captured_response = context.response

    raw_response = ChatResponse(messages=[Message(role="assistant", contents=[Content.from_text("not-json")])])
    chat_client_base.run_responses = [raw_response]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    agent = Agent(client=chat_client_base, context_providers=[CapturingContextProvider()])

    response = await agent.run("Hello", options={"response_format": {"type": "object"}})

    assert captured_response is response
    assert response.text == "not-json"
    with pytest.raises(ValueError, match="not valid JSON"):
        _ = response.value


async def test_context_provider_receives_full_agent_response_streaming(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Context providers should see the same full AgentResponse finalized by streaming runs."""
    captured_response: AgentResponse | None = None
    raw_update = ChatResponseUpdate(
        contents=[
            Content.from_text('{"answer": "ok"}'),
            Content.from_usage({"input_token_count": 4, "output_token_count": 3, "total_token_count": 7}),
        ],
        role="assistant",
        response_id="resp_stream_full",
        created_at="2026-07-07T12:01:00Z",
        finish_reason="stop",
        continuation_token=cast(Any, {"token": "stream-next"}),
        additional_properties={"provider": "stream-test"},
    )

    class CapturingContextProvider(ContextProvider):
        def __init__(self) -> None:
            super().__init__(source_id="capture_stream_response")

        async def after_run(
            self,
            *,
            agent: SupportsAgentRun,
            session: AgentSession,
            context: SessionContext,
            state: dict[str, Any],
        ) -> None:
            nonlocal captured_response
            captured_response = context.response

    chat_client_base.streaming_responses = [[raw_update]]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    agent = Agent(client=chat_client_base, context_providers=[CapturingContextProvider()])

    stream = agent.run(
        "Hello",
        stream=True,
        options={"response_format": {"type": "object", "properties": {"answer": {"type": "string"}}}},
    )
    async for _ in stream:
        pass
    response = await stream.get_final_response()

    assert captured_response is response
    assert response.response_id == "resp_stream_full"
    assert response.created_at == "2026-07-07T12:01:00Z"
    assert response.finish_reason == "stop"
    assert response.usage_details == {"input_token_count": 4, "output_token_count": 3, "total_token_count": 7}
    assert response.value == {"answer": "ok"}
    assert response.continuation_token == {"token": "stream-next"}
    assert response.additional_properties == {"provider": "stream-test"}
    assert response.raw_representation == [raw_update]


async def test_chat_agent_context_providers_messages_adding(
    client: SupportsChatGetResponse,
) -> None:
    """Test that context providers' after_run is called during agent run."""
    mock_provider = MockContextProvider()
    agent = Agent(client=client, context_providers=[mock_provider])

    await agent.run("Hello")

    assert mock_provider.after_run_called
    # Should be called with both input and response messages
    assert len(mock_provider.new_messages) >= 2


    # instructions system message is added by a client




async def test_chat_agent_run_stream_context_providers(
    client: SupportsChatGetResponse,
) -> None:
    """Test that context providers work with run method."""
    mock_provider = MockContextProvider(messages=[Message(role="system", contents=["Stream context instructions"])])
    agent = Agent(client=client, context_providers=[mock_provider])

    # Collect all stream updates and get final response
    stream = agent.run("Hello", stream=True)
    updates: list[AgentResponseUpdate] = []
    async for update in stream:
        updates.append(update)
    # Get final response to trigger post-processing hooks (including context provider notification)
    await stream.get_final_response()

    # Verify context provider was called
    assert mock_provider.before_run_called
    assert mock_provider.after_run_called


async def test_chat_agent_context_providers_with_service_session_id(
    chat_client_base: SupportsChatGetResponse,
) -> None:
    """Test context providers with service-managed session."""
    mock_provider = MockContextProvider()
    chat_client_base.run_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        ChatResponse(
            messages=[Message(role="assistant", contents=[Content.from_text("test response")])],
            conversation_id="service-thread-123",
        )
    ]

    agent = Agent(client=chat_client_base, context_providers=[mock_provider])

    # Use existing service-managed session
    session = agent.get_session(service_session_id="existing-thread-id")
    await agent.run("Hello", session=session)

    # after_run should be called
    assert mock_provider.after_run_called


# Tests for as_tool method
async def test_chat_agent_as_tool_basic(client: SupportsChatGetResponse) -> None:
    """Test basic as_tool functionality."""
    agent = Agent(client=client, name="TestAgent", description="Test agent for as_tool")

    tool = agent.as_tool()

    assert tool.name == "TestAgent"
    assert tool.description == "Test agent for as_tool"
    assert tool.approval_mode == "never_require"
    assert hasattr(tool, "func")
    assert tool.input_model is None


async def test_chat_agent_as_tool_custom_parameters(
    client: SupportsChatGetResponse,
) -> None:
    """Test as_tool with custom parameters."""
    agent = Agent(client=client, name="TestAgent", description="Original description")

    tool = agent.as_tool(
        name="CustomTool",
        description="Custom description",
        arg_name="query",
        arg_description="Custom input description",
        approval_mode="always_require",
    )

    assert tool.name == "CustomTool"
    assert tool.description == "Custom description"
    assert tool.approval_mode == "always_require"

    # Check that the input model has the custom field name
    schema = tool.parameters()
    assert "query" in schema["properties"]
    assert schema["properties"]["query"]["description"] == "Custom input description"


async def test_chat_agent_as_tool_defaults(client: SupportsChatGetResponse) -> None:
    """Test as_tool with default parameters."""
    agent = Agent(
        client=client,
        name="TestAgent",
        # No description provided
    )

    tool = agent.as_tool()

    assert tool.name == "TestAgent"
    assert tool.description == ""  # Should default to empty string

    # Check default input field
    schema = tool.parameters()
    assert "task" in schema["properties"]
    assert "Task for TestAgent" in schema["properties"]["task"]["description"]


async def test_chat_agent_as_tool_no_name(client: SupportsChatGetResponse) -> None:
    """Test as_tool when agent has no name (should raise ValueError)."""
    agent = Agent(client=client)  # No name provided

    # Should raise ValueError since agent has no name
    with raises(ValueError, match="Agent tool name cannot be None"):
        agent.as_tool()


async def test_chat_agent_as_tool_function_execution(
    client: SupportsChatGetResponse,
) -> None:
    """Test that the generated FunctionTool can be executed."""
    agent = Agent(client=client, name="TestAgent", description="Test agent")

    tool = agent.as_tool()

    # Test function execution
    result = await tool.invoke(arguments={"task": "Hello"})

    # Should return the agent's response text as a list of Content items
    assert isinstance(result, list)
    assert len(result) == 1
    assert result[0].text == "test streaming response another update"  # From mock streaming client


async def test_chat_agent_as_tool_with_stream_callback(
    client: SupportsChatGetResponse,
) -> None:
    """Test as_tool with stream callback functionality."""
    agent = Agent(client=client, name="StreamingAgent")

    # Collect streaming updates
    collected_updates: list[AgentResponseUpdate] = []

    def stream_callback(update: AgentResponseUpdate) -> None:
        collected_updates.append(update)

    tool = agent.as_tool(stream_callback=stream_callback)

    # Execute the tool
    result = await tool.invoke(arguments={"task": "Hello"})

    # Should have collected streaming updates
    assert len(collected_updates) > 0
    assert isinstance(result, list)
    result_text = result[0].text
    # Result should be concatenation of all streaming updates
    expected_text = "".join(update.text for update in collected_updates)
    assert result_text == expected_text


async def test_chat_agent_as_tool_with_custom_arg_name(
    client: SupportsChatGetResponse,
) -> None:
    """Test as_tool with custom argument name."""
    agent = Agent(client=client, name="CustomArgAgent")

    tool = agent.as_tool(arg_name="prompt", arg_description="Custom prompt input")

    # Test that the custom argument name works
    result = await tool.invoke(arguments={"prompt": "Test prompt"})
    assert isinstance(result, list)
    assert result[0].text == "test streaming response another update"


async def test_chat_agent_as_tool_with_async_stream_callback(
    client: SupportsChatGetResponse,
) -> None:
    """Test as_tool with async stream callback functionality."""
    agent = Agent(client=client, name="AsyncStreamingAgent")

    # Collect streaming updates using an async callback
    collected_updates: list[AgentResponseUpdate] = []

    async def async_stream_callback(update: AgentResponseUpdate) -> None:
        collected_updates.append(update)

    tool = agent.as_tool(stream_callback=async_stream_callback)

    # Execute the tool
    result = await tool.invoke(arguments={"task": "Hello"})

    # Should have collected streaming updates
    assert len(collected_updates) > 0
    assert isinstance(result, list)
    result_text = result[0].text
    # Result should be concatenation of all streaming updates
    expected_text = "".join(update.text for update in collected_updates)
    assert result_text == expected_text


async def test_chat_agent_as_tool_name_sanitization(
    client: SupportsChatGetResponse,
) -> None:
    """Test as_tool name sanitization."""
    test_cases = [
        ("Invoice & Billing Agent", "Invoice_Billing_Agent"),
        ("Travel & Logistics Agent", "Travel_Logistics_Agent"),
        ("Agent@Company.com", "Agent_Company_com"),
        ("Agent___Multiple___Underscores", "Agent_Multiple_Underscores"),
        ("123Agent", "_123Agent"),  # Test digit prefix handling
        ("9to5Helper", "_9to5Helper"),  # Another digit prefix case
        ("@@@", "agent"),  # Test empty sanitization fallback
    ]

    for agent_name, expected_tool_name in test_cases:
        agent = Agent(client=client, name=agent_name, description="Test agent")
        tool = agent.as_tool()
        assert tool.name == expected_tool_name, f"Expected {expected_tool_name}, got {tool.name} for input {agent_name}"


async def test_chat_agent_as_tool_propagate_session_true(client: SupportsChatGetResponse) -> None:
    """Test that propagate_session=True forwards the session to the sub-agent."""
    agent = Agent(client=client, name="SubAgent", description="Sub agent")
    tool = agent.as_tool(propagate_session=True)

    parent_session = AgentSession(session_id="parent-session-123")
    parent_session.state["shared_key"] = "shared_value"

    original_run = agent.run
    captured_session = None

    def capturing_run(*args: Any, **kwargs: Any) -> Any:
        nonlocal captured_session
        captured_session = kwargs.get("session")
        return original_run(*args, **kwargs)

    agent.run = capturing_run  # type: ignore[assignment, method-assign]  # ty: ignore[invalid-assignment]

    await tool.invoke(
        context=FunctionInvocationContext(
            function=tool,
            arguments={"task": "Hello"},
            session=parent_session,
        )
    )

    # Child receives a separate AgentSession (not the parent object) to isolate
    # service_session_id, but shares the same state dict and session_id.
    assert captured_session is not None
    assert captured_session is not parent_session
    assert captured_session.session_id == "parent-session-123"
    assert captured_session.state is parent_session.state
    assert captured_session.state["shared_key"] == "shared_value"
    assert captured_session.service_session_id is None


async def test_chat_agent_as_tool_propagate_session_false_by_default(client: SupportsChatGetResponse) -> None:
    """Test that propagate_session defaults to False and does not forward the session."""
    agent = Agent(client=client, name="SubAgent", description="Sub agent")
    tool = agent.as_tool()  # default: propagate_session=False

    parent_session = AgentSession(session_id="parent-session-456")

    original_run = agent.run
    captured_session = None

    def capturing_run(*args: Any, **kwargs: Any) -> Any:
        nonlocal captured_session
        captured_session = kwargs.get("session")
        return original_run(*args, **kwargs)

    agent.run = capturing_run  # type: ignore[assignment, method-assign]  # ty: ignore[invalid-assignment]

    await tool.invoke(
        context=FunctionInvocationContext(
            function=tool,
            arguments={"task": "Hello"},
            session=parent_session,
        )
    )

    assert captured_session is None


async def test_chat_agent_as_tool_propagate_session_shares_state(client: SupportsChatGetResponse) -> None:
    """Test that a propagated session allows the sub-agent to read and write parent state."""
    agent = Agent(client=client, name="SubAgent", description="Sub agent")
    tool = agent.as_tool(propagate_session=True)

    parent_session = AgentSession(session_id="shared-session")
    parent_session.state["counter"] = 0

    original_run = agent.run
    captured_session = None

    def capturing_run(*args: Any, **kwargs: Any) -> Any:
        nonlocal captured_session
        captured_session = kwargs.get("session")
        if captured_session:
            captured_session.state["counter"] += 1
        return original_run(*args, **kwargs)

    agent.run = capturing_run  # type: ignore[assignment, method-assign]  # ty: ignore[invalid-assignment]

    await tool.invoke(
        context=FunctionInvocationContext(
            function=tool,
            arguments={"task": "Hello"},
            session=parent_session,
        )
    )

    assert parent_session.state["counter"] == 1


async def test_chat_agent_as_tool_propagate_session_clears_service_session_id(client: SupportsChatGetResponse) -> None:
    """Test that propagate_session=True gives the child a separate session with cleared service_session_id."""
    agent = Agent(client=client, name="SubAgent", description="Sub agent")
    tool = agent.as_tool(propagate_session=True)

    parent_session = AgentSession(session_id="shared-session")
    parent_session.service_session_id = "resp_parent_abc123"
    parent_session.state["data"] = "shared"

    original_run = agent.run
    captured_session = None

    def capturing_run(*args: Any, **kwargs: Any) -> Any:
        nonlocal captured_session
        captured_session = kwargs.get("session")
        # The child gets a different session object with isolated service_session_id
        assert captured_session is not None
        assert captured_session is not parent_session
        assert captured_session.service_session_id is None
        # But shares the same state dict by reference
        assert captured_session.state is parent_session.state
        assert captured_session.state["data"] == "shared"
        return original_run(*args, **kwargs)

    agent.run = capturing_run  # type: ignore[assignment, method-assign]  # ty: ignore[invalid-assignment]

    await tool.invoke(
        context=FunctionInvocationContext(
            function=tool,
            arguments={"task": "Hello"},
            session=parent_session,
        )
    )

    # Parent's service_session_id is never mutated
    assert parent_session.service_session_id == "resp_parent_abc123"


async def test_chat_agent_as_tool_propagate_session_restores_service_session_id_on_error(
    client: SupportsChatGetResponse,
) -> None:
    """Test that parent's service_session_id is untouched even if the child agent raises."""
    agent = Agent(client=client, name="SubAgent", description="Sub agent")
    tool = agent.as_tool(propagate_session=True)

    parent_session = AgentSession(session_id="shared-session")
    parent_session.service_session_id = "resp_parent_xyz789"

    def failing_run(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Child agent failed")

    agent.run = failing_run  # type: ignore[assignment, method-assign]  # ty: ignore[invalid-assignment]

    with raises(RuntimeError, match="Child agent failed"):
        await tool.invoke(
            context=FunctionInvocationContext(
                function=tool,
                arguments={"task": "Hello"},
                session=parent_session,
            )
        )

    # Parent's service_session_id is never mutated — child has its own session
    assert parent_session.service_session_id == "resp_parent_xyz789"


async def test_chat_agent_as_tool_propagate_session_no_service_session_id(client: SupportsChatGetResponse) -> None:
    """Test that child setting service_session_id does not leak back to the parent."""
    agent = Agent(client=client, name="SubAgent", description="Sub agent")
    tool = agent.as_tool(propagate_session=True)

    parent_session = AgentSession(session_id="shared-session")
    parent_session.service_session_id = None

    original_run = agent.run
    captured_session = None

    def capturing_run(*args: Any, **kwargs: Any) -> Any:
        nonlocal captured_session
        captured_session = kwargs.get("session")
        assert captured_session is not None
        assert captured_session.service_session_id is None
        # Simulate the child's run populating service_session_id
        captured_session.service_session_id = "resp_child_leaked"
        return original_run(*args, **kwargs)

    agent.run = capturing_run  # type: ignore[assignment, method-assign]  # ty: ignore[invalid-assignment]

    await tool.invoke(
        context=FunctionInvocationContext(
            function=tool,
            arguments={"task": "Hello"},
            session=parent_session,
        )
    )

    # The child's service_session_id must not leak back to the parent
    assert parent_session.service_session_id is None


async def test_chat_agent_as_mcp_server_basic(client: SupportsChatGetResponse) -> None:
    """Test basic as_mcp_server functionality."""
    agent = Agent(client=client, name="TestAgent", description="Test agent for MCP")

    # Create MCP server with default parameters
    server = agent.as_mcp_server()

    # Verify server is created
    assert server is not None
    assert hasattr(server, "name")
    assert hasattr(server, "version")
















async def test_agent_tool_without_context_does_not_receive_session(chat_client_base: Any) -> None:
    """Verify tools without FunctionInvocationContext no longer receive injected session kwargs."""

    captured: dict[str, Any] = {}

    @tool(name="echo_session_info", approval_mode="never_require")
    def echo_session_info(text: str, **kwargs: Any) -> str:  # type: ignore[reportUnknownParameterType]
        session = kwargs.get("session")
        captured["has_session"] = session is not None
        captured["has_state"] = session.state is not None if isinstance(session, AgentSession) else False
        return f"echo: {text}"

    chat_client_base.run_responses = [
        ChatResponse(
            messages=Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="1",
                        name="echo_session_info",
                        arguments='{"text": "hello"}',
                    )
                ],
            )
        ),
        ChatResponse(messages=Message(role="assistant", contents=["done"])),
    ]

    agent = Agent(client=chat_client_base, tools=[echo_session_info])
    session = agent.create_session()

    result = await agent.run("hello", session=session)

    assert result.text == "done"
    assert captured.get("has_session") is False
    assert captured.get("has_state") is False


async def test_agent_tool_receives_explicit_session_via_function_invocation_context_kwargs(
    chat_client_base: Any,
) -> None:
    """Verify ctx-based tools receive the session via FunctionInvocationContext.session."""

    captured: dict[str, Any] = {}

    @tool(name="capture_session_context", approval_mode="never_require")
    def capture_session_context(text: str, ctx: FunctionInvocationContext) -> str:
        captured["session"] = ctx.session
        captured["has_state"] = ctx.session.state is not None if isinstance(ctx.session, AgentSession) else False
        return f"echo: {text}"

    chat_client_base.run_responses = [
        ChatResponse(
            messages=Message(
                role="assistant",
                contents=[
                    Content.from_function_call(
                        call_id="1",
                        name="capture_session_context",
                        arguments='{"text": "hello"}',
                    )
                ],
            )
        ),
        ChatResponse(messages=Message(role="assistant", contents=["done"])),
    ]

    agent = Agent(client=chat_client_base, tools=[capture_session_context])
    session = agent.create_session()

    result = await agent.run("hello", session=session)

    assert result.text == "done"
    assert captured["session"] is session
    assert captured["has_state"] is True


async def test_chat_agent_tool_choice_run_level_overrides_agent_level(chat_client_base: Any, tool_tool: Any) -> None:
    """Verify that tool_choice passed to run() overrides agent-level tool_choice."""

    captured_options: list[dict[str, Any]] = []

    # Store the original inner method
    original_inner = chat_client_base._inner_get_response

    async def capturing_inner(
        *, messages: MutableSequence[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        captured_options.append(options)
        return await original_inner(messages=messages, options=options, **kwargs)

    chat_client_base._inner_get_response = capturing_inner

    # Create agent with agent-level tool_choice="auto" and a tool (tools required for tool_choice to be meaningful)
    agent = Agent(
        client=chat_client_base,
        tools=[tool_tool],
        default_options={"tool_choice": "auto"},
    )

    # Run with run-level tool_choice="required"
    await agent.run("Hello", options={"tool_choice": "required"})

    # Verify the client received tool_choice="required", not "auto"
    assert len(captured_options) >= 1
    assert captured_options[0]["tool_choice"] == "required"


async def test_chat_agent_tool_choice_agent_level_used_when_run_level_not_specified(
    chat_client_base: Any, tool_tool: Any
) -> None:
    """Verify that agent-level tool_choice is used when run() doesn't specify one."""
    captured_options: list[ChatOptions] = []

    original_inner = chat_client_base._inner_get_response

    async def capturing_inner(
        *, messages: MutableSequence[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        captured_options.append(options)  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
        return await original_inner(messages=messages, options=options, **kwargs)

    chat_client_base._inner_get_response = capturing_inner

    # Create agent with agent-level tool_choice="required" and a tool
    agent = Agent(
        client=chat_client_base,
        tools=[tool_tool],
        default_options={"tool_choice": "required"},
    )

    # Run without specifying tool_choice
    await agent.run("Hello")

    # Verify the client received tool_choice="required" from agent-level
    assert len(captured_options) >= 1
    assert captured_options[0]["tool_choice"] == "required"
    # older code compared to ToolMode constants; ensure value is 'required'
    assert captured_options[0]["tool_choice"] == "required"


async def test_chat_agent_tool_choice_none_at_run_preserves_agent_level(chat_client_base: Any, tool_tool: Any) -> None:
    """Verify that tool_choice=None at run() uses agent-level default."""
    captured_options: list[ChatOptions] = []

    original_inner = chat_client_base._inner_get_response

    async def capturing_inner(
        *, messages: MutableSequence[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        captured_options.append(options)  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
        return await original_inner(messages=messages, options=options, **kwargs)

    chat_client_base._inner_get_response = capturing_inner

    # Create agent with agent-level tool_choice="auto" and a tool
    agent = Agent(
        client=chat_client_base,
        tools=[tool_tool],
        default_options={"tool_choice": "auto"},
    )

    # Run with explicitly passing None (same as not specifying)
    await agent.run("Hello", options={"tool_choice": None})  # ty: ignore[invalid-argument-type, no-matching-overload]  # type: ignore[typeddict-item]

    # Verify the client received tool_choice="auto" from agent-level
    assert len(captured_options) >= 1
    assert captured_options[0]["tool_choice"] == "auto"


async def test_chat_agent_compaction_overrides_client_defaults(chat_client_base: Any) -> None:
    captured_roles: list[list[str]] = []
    captured_token_counts: list[list[int | None]] = []
    original_inner = chat_client_base._inner_get_response

    async def capturing_inner(
        *, messages: MutableSequence[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        captured_roles.append([message.role for message in messages])
        captured_token_counts.append([
            group.get(GROUP_TOKEN_COUNT_KEY) if isinstance(group, dict) else None
            for group in (message.additional_properties.get(GROUP_ANNOTATION_KEY) for message in messages)
        ])
        return await original_inner(messages=messages, options=options, **kwargs)

    chat_client_base._inner_get_response = capturing_inner
    chat_client_base.function_invocation_configuration["enabled"] = False
    chat_client_base.compaction_strategy = TruncationStrategy(max_n=1, compact_to=1)
    chat_client_base.tokenizer = _FixedTokenizer(5)

    agent = Agent(
        client=chat_client_base,
        compaction_strategy=SlidingWindowStrategy(keep_last_groups=2),
        tokenizer=_FixedTokenizer(9),
    )

    await agent.run([
        Message(role="user", contents=["Hello"]),
        Message(role="assistant", contents=["Previous response"]),
    ])

    assert captured_roles == [["user", "assistant"]]
    assert captured_token_counts == [[9, 9]]


async def test_chat_agent_uses_client_compaction_defaults_when_agent_unset(chat_client_base: Any) -> None:
    captured_roles: list[list[str]] = []
    original_inner = chat_client_base._inner_get_response

    async def capturing_inner(
        *, messages: MutableSequence[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        captured_roles.append([message.role for message in messages])
        return await original_inner(messages=messages, options=options, **kwargs)

    chat_client_base._inner_get_response = capturing_inner
    chat_client_base.function_invocation_configuration["enabled"] = False
    chat_client_base.compaction_strategy = TruncationStrategy(max_n=1, compact_to=1)

    agent = Agent(client=chat_client_base)

    await agent.run([
        Message(role="user", contents=["Hello"]),
        Message(role="assistant", contents=["Previous response"]),
    ])

    assert captured_roles == [["assistant"]]


async def test_chat_agent_run_level_compaction_and_tokenizer_override_agent_defaults(chat_client_base: Any) -> None:
    captured_roles: list[list[str]] = []
    captured_token_counts: list[list[int | None]] = []
    original_inner = chat_client_base._inner_get_response

    async def capturing_inner(
        *, messages: MutableSequence[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        captured_roles.append([message.role for message in messages])
        captured_token_counts.append([
            group.get(GROUP_TOKEN_COUNT_KEY) if isinstance(group, dict) else None
            for group in (message.additional_properties.get(GROUP_ANNOTATION_KEY) for message in messages)
        ])
        return await original_inner(messages=messages, options=options, **kwargs)

    chat_client_base._inner_get_response = capturing_inner
    chat_client_base.function_invocation_configuration["enabled"] = False

    agent = Agent(
        client=chat_client_base,
        compaction_strategy=SlidingWindowStrategy(keep_last_groups=2),
        tokenizer=_FixedTokenizer(9),
    )

    await agent.run(
        [
            Message(role="user", contents=["Hello"]),
            Message(role="assistant", contents=["Previous response"]),
        ],
        compaction_strategy=TruncationStrategy(max_n=1, compact_to=1),
        tokenizer=_FixedTokenizer(23),
    )

    assert captured_roles == [["assistant"]]
    assert captured_token_counts == [[23]]


# region Test _merge_options














































# endregion


# region Test _sanitize_agent_name








# endregion


# region Test SupportsAgentRun.create_session


@pytest.mark.asyncio
async def test_agent_create_session(chat_client_base: SupportsChatGetResponse, tool_tool: FunctionTool):
    """Test that create_session returns a new AgentSession."""
    agent = Agent(client=chat_client_base, tools=[tool_tool])

    session = agent.create_session()

    assert session is not None
    assert isinstance(session, AgentSession)


@pytest.mark.asyncio
async def test_agent_create_session_with_context_providers(
    chat_client_base: SupportsChatGetResponse, tool_tool: FunctionTool
):
    """Test that create_session works when context_providers are set on the agent."""

    class TestContextProvider(ContextProvider):
        def __init__(self):
            super().__init__(source_id="test")

    provider = TestContextProvider()
    agent = Agent(client=chat_client_base, tools=[tool_tool], context_providers=[provider])

    session = agent.create_session()

    assert session is not None
    assert agent.context_providers[0] is provider


@pytest.mark.asyncio
async def test_agent_get_session_with_service_session_id(
    chat_client_base: SupportsChatGetResponse, tool_tool: FunctionTool
):
    """Test that get_session creates a session with service_session_id."""
    agent = Agent(client=chat_client_base, tools=[tool_tool])

    session = agent.get_session(service_session_id="test-thread-123")

    assert session is not None
    assert session.service_session_id == "test-thread-123"


@pytest.mark.asyncio
async def test_agent_get_session_with_structured_service_session_id(
    chat_client_base: SupportsChatGetResponse, tool_tool: FunctionTool
):
    """Test that get_session accepts structured service_session_id."""
    agent = Agent(client=chat_client_base, tools=[tool_tool])
    structured_service_session_id = {"context_id": "ctx-123", "task_id": "task-456", "task_state": "working"}

    session = agent.get_session(service_session_id=structured_service_session_id)

    assert session is not None
    assert session.service_session_id == structured_service_session_id


@pytest.mark.asyncio
async def test_agent_run_rejects_structured_service_session_id_for_generic_chat_clients(
    chat_client_base: SupportsChatGetResponse,
):
    """Structured service_session_id must fail before generic chat client calls."""
    agent = Agent(client=chat_client_base)
    session = agent.get_session(service_session_id={"context_id": "ctx-123"})

    with pytest.raises(
        AgentInvalidRequestException,
        match="expects a string service_session_id",
    ):
        await agent.run("Hello", session=session)


def test_agent_session_from_dict(chat_client_base: SupportsChatGetResponse, tool_tool: FunctionTool):
    """Test AgentSession.from_dict restores a session from serialized state."""
    # Create serialized session state
    serialized_state = {  # type: ignore[var-annotated]
        "type": "session",
        "session_id": "test-session",
        "service_session_id": None,
        "state": {},
    }

    session = AgentSession.from_dict(serialized_state)

    assert session is not None
    assert isinstance(session, AgentSession)
    assert session.session_id == "test-session"


# endregion


# region Test Agent initialization edge cases


def test_chat_agent_calls_update_agent_name_on_client():
    """Test that Agent calls _update_agent_name_and_description on client if available."""
    mock_client = MagicMock()
    mock_client._update_agent_name_and_description = MagicMock()

    Agent(
        client=mock_client,
        name="TestAgent",
        description="Test description",
    )

    assert mock_client._update_agent_name_and_description.call_count == 1
    mock_client._update_agent_name_and_description.assert_called_with("TestAgent", "Test description")








# region STORES_BY_DEFAULT tests


async def test_stores_by_default_skips_inmemory_injection(
    client: SupportsChatGetResponse,
) -> None:
    """Client with STORES_BY_DEFAULT=True should not auto-inject InMemoryHistoryProvider."""
    from agentnb import InMemoryHistoryProvider

    # Simulate a client that stores by default
    client.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    agent = Agent(client=client)
    session = agent.create_session()

    await agent.run("Hello", session=session)

    # No InMemoryHistoryProvider should have been injected
    assert not any(isinstance(p, InMemoryHistoryProvider) for p in agent.context_providers)


async def test_stores_by_default_false_injects_inmemory(
    client: SupportsChatGetResponse,
) -> None:
    """Client with STORES_BY_DEFAULT=False (default) should auto-inject InMemoryHistoryProvider."""
    from agentnb import InMemoryHistoryProvider

    agent = Agent(client=client)
    session = agent.create_session()

    await agent.run("Hello", session=session)

    # InMemoryHistoryProvider should have been injected
    assert any(isinstance(p, InMemoryHistoryProvider) for p in agent.context_providers)


async def test_stores_by_default_with_store_false_injects_inmemory(
    client: SupportsChatGetResponse,
) -> None:
    """Client with STORES_BY_DEFAULT=True but store=False should still inject InMemoryHistoryProvider."""
    from agentnb import InMemoryHistoryProvider

    client.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    agent = Agent(client=client)
    session = agent.create_session()

    await agent.run("Hello", session=session, options={"store": False})

    # User explicitly disabled server storage, so InMemoryHistoryProvider should be injected
    assert any(isinstance(p, InMemoryHistoryProvider) for p in agent.context_providers)


async def test_store_true_skips_inmemory_injection(
    client: SupportsChatGetResponse,
) -> None:
    """Explicitly setting store=True should not auto-inject InMemoryHistoryProvider."""
    from agentnb import InMemoryHistoryProvider

    agent = Agent(client=client)
    session = agent.create_session()

    await agent.run("Hello", session=session, options={"store": True})

    # User explicitly enabled server storage, so InMemoryHistoryProvider should not be injected
    assert not any(isinstance(p, InMemoryHistoryProvider) for p in agent.context_providers)


async def test_stores_by_default_with_store_false_in_default_options_injects_inmemory(
    client: SupportsChatGetResponse,
) -> None:
    """Client with STORES_BY_DEFAULT=True but store=False in default_options should inject InMemoryHistoryProvider.

    This covers the regression where store=False is set via Agent(..., default_options={"store": False})
    with no per-run override while the client has STORES_BY_DEFAULT=True.
    """
    from agentnb import InMemoryHistoryProvider

    client.STORES_BY_DEFAULT = True  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    # Set store=False at agent initialization via default_options, not at run-time
    agent = Agent(client=client, default_options={"store": False})  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
    session = agent.create_session()

    # Run without any per-run options override
    await agent.run("Hello", session=session)

    # User explicitly disabled server storage in default_options, so InMemoryHistoryProvider should be injected
    assert any(isinstance(p, InMemoryHistoryProvider) for p in agent.context_providers)


async def test_non_history_context_provider_still_injects_inmemory(
    client: SupportsChatGetResponse,
) -> None:
    """A non-history context provider must not suppress local history injection.

    Regression for the case where registering a context provider that is not a
    HistoryProvider (e.g. SkillsProvider, FileAccessProvider, or a RAG memory
    provider) prevented the auto-injected InMemoryHistoryProvider. Without local
    history, multi-turn flows on stateless clients (such as the tool-approval
    resume turn) drop the prior assistant function_call.
    """
    from agentnb import InMemoryHistoryProvider

    agent = Agent(client=client, context_providers=[MockContextProvider()])
    session = agent.create_session()

    await agent.run("Hello", session=session)

    # The non-history provider should not block local-history injection.
    assert any(isinstance(p, InMemoryHistoryProvider) for p in agent.context_providers)


async def test_existing_loading_history_provider_skips_inmemory_injection(
    client: SupportsChatGetResponse,
) -> None:
    """An existing loading HistoryProvider suppresses injection even with other providers."""
    from agentnb import InMemoryHistoryProvider

    existing = InMemoryHistoryProvider("custom", load_messages=True)
    agent = Agent(client=client, context_providers=[existing, MockContextProvider()])
    session = agent.create_session()

    await agent.run("Hello", session=session)

    history_providers = [p for p in agent.context_providers if isinstance(p, InMemoryHistoryProvider)]
    assert history_providers == [existing]


async def test_persist_only_history_provider_still_injects_inmemory(
    client: SupportsChatGetResponse,
) -> None:
    """A persist-only (load_messages=False) HistoryProvider does not satisfy the loading need."""
    from agentnb import InMemoryHistoryProvider

    audit = InMemoryHistoryProvider("audit", load_messages=False)
    agent = Agent(client=client, context_providers=[audit])
    session = agent.create_session()

    await agent.run("Hello", session=session)

    loading_providers = [
        p for p in agent.context_providers if isinstance(p, InMemoryHistoryProvider) and p.load_messages
    ]
    assert len(loading_providers) == 1
    assert loading_providers[0] is not audit




# region as_tool user_input_request propagation


async def test_as_tool_raises_on_user_input_request(client: SupportsChatGetResponse) -> None:
    """Test that as_tool raises when the wrapped sub-agent requests user input."""
    from agentnb.exceptions import UserInputRequiredError as UserInputRequiredException

    consent_content = Content.from_oauth_consent_request(
        consent_link="https://login.microsoftonline.com/consent",
    )
    client.streaming_responses = [  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        [ChatResponseUpdate(contents=[consent_content], role="assistant")],
    ]

    agent = Agent(client=client, name="OAuthAgent", description="Agent requiring consent")
    agent_tool = agent.as_tool()

    with raises(UserInputRequiredException) as exc_info:
        await agent_tool.invoke(arguments={"task": "Do something"})

    assert len(exc_info.value.contents) == 1
    assert exc_info.value.contents[0].type == "oauth_consent_request"
    assert exc_info.value.contents[0].consent_link == "https://login.microsoftonline.com/consent"


# region Per-service-call history persistence scenario matrix
#
# The driving field is ``require_per_service_call_history_persistence``. Every scenario runs a
# single agent run that makes **two service calls** -- a function call followed by a final
# completion -- so the *timing* of persistence is observable:
#
# * When the flag is ``True``, the per-service-call middleware persists the provider **after each
#   service call**. So the function-call turn is already saved by the time the second (final)
#   service call starts. This holds regardless of whether the chat client stores history
#   server-side (the bug in issue #5798 was that a storing client silently bypassed persistence).
# * When the flag is ``False``, the provider persists **once, at the end of the run** -- nothing is
#   saved between the two service calls.
#
# ``SpyChatClient.saves_before_call`` records ``provider.save_calls`` at the start of every service
# call, so ``[0, 1]`` means "the function-call turn was persisted before the final call" and
# ``[0, 0]`` means "no persistence happened mid-run". The client's ``store`` / ``STORES_BY_DEFAULT``
# only selects *how* the middleware behaves -- never *whether* the provider persists.

_PSC_SERVICE_CONVERSATION_ID = "svc-conversation"

_psc_stream_params = pytest.mark.parametrize("stream", [False, True], ids=["sync", "stream"])


@tool(name="lookup_weather", approval_mode="never_require")
def _psc_lookup_weather(location: str) -> str:
    return f"Weather in {location}: sunny"


def _psc_function_call_script() -> list[tuple[str, ...]]:
    """A fresh function-call-then-final-completion script (the client mutates it)."""
    return [
        ("call", "call_1", "lookup_weather", '{"location": "Seattle"}'),
        ("text", "It is sunny in Seattle."),
    ]


class _PscSpyHistoryProvider(HistoryProvider):
    """In-memory history provider that records load/save calls for assertions."""

    def __init__(self, source_id: str = "spy_history", **kwargs: Any) -> None:
        super().__init__(source_id, **kwargs)
        self._messages: list[Message] = []
        self.get_calls: int = 0
        self.save_calls: int = 0
        self.saved_batches: list[list[Message]] = []

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        self.get_calls += 1
        return list(self._messages)

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.save_calls += 1
        self.saved_batches.append(list(messages))
        self._messages.extend(messages)

    @property
    def stored_messages(self) -> list[Message]:
        return list(self._messages)


class _PscSpyChatClient(MockBaseChatClient):
    """Chat client that scripts a function-call/final-completion sequence.

    It records, at the start of each service call, how many provider saves have already happened
    (``saves_before_call``), what messages it received, and what options it saw. When the effective
    ``store`` is truthy it returns a stable ``conversation_id`` to mimic a server-managed
    conversation, so the framework propagates ``session.service_session_id``.
    """

    def __init__(
        self,
        *,
        provider: _PscSpyHistoryProvider,
        stores_by_default: bool = False,
        script: list[tuple[str, ...]] | None = None,
        echo_conversation_id: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.STORES_BY_DEFAULT = stores_by_default  # type: ignore[attr-defined, misc]  # ty: ignore[invalid-attribute-access]
        self._provider = provider
        self._script = list(script) if script is not None else [("text", "ok")]
        self._echo_conversation_id = echo_conversation_id
        self.received_messages: list[list[Message]] = []
        self.received_options: list[dict[str, Any]] = []
        self.saves_before_call: list[int] = []

    def _effective_store(self, options: dict[str, Any]) -> bool:
        store = options.get("store")
        if store is None:
            return bool(self.STORES_BY_DEFAULT)
        return bool(store)

    def _next_contents(self) -> list[Content]:
        turn: tuple[str, ...] = self._script.pop(0) if self._script else ("text", "ok")
        if turn[0] == "call":
            assert len(turn) == 4
            _, call_id, name, args = turn
            return [Content.from_function_call(call_id=call_id, name=name, arguments=args)]
        return [Content.from_text(turn[1])]

    def _inner_get_response(  # type: ignore[override]
        self,
        *,
        messages: MutableSequence[Message],
        stream: bool,
        options: dict[str, Any],
        **kwargs: Any,
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        self.received_messages.append(list(messages))
        self.received_options.append(dict(options))
        self.saves_before_call.append(self._provider.save_calls)
        store_and_echo = self._effective_store(options) and self._echo_conversation_id
        conv_id = _PSC_SERVICE_CONVERSATION_ID if store_and_echo else None
        contents = self._next_contents()

        if stream:

            async def _stream() -> AsyncIterable[ChatResponseUpdate]:
                self.call_count += 1
                yield ChatResponseUpdate(
                    contents=contents,
                    role="assistant",
                    finish_reason="stop",
                    conversation_id=conv_id,
                )

            def _finalize(updates: Sequence[ChatResponseUpdate]) -> ChatResponse:
                response = ChatResponse.from_updates(updates, output_format_type=options.get("response_format"))
                if conv_id:
                    response.conversation_id = conv_id
                return response

            return ResponseStream(_stream(), finalizer=_finalize)

        async def _get() -> ChatResponse:
            self.call_count += 1
            return ChatResponse(
                messages=Message(role="assistant", contents=contents),
                conversation_id=conv_id,
            )

        return _get()


def _psc_build_agent(
    client: _PscSpyChatClient,
    provider: _PscSpyHistoryProvider,
    *,
    require_per_service_call_history_persistence: bool,
    default_options: dict[str, Any] | None = None,
) -> Agent:
    kwargs: dict[str, Any] = {}
    if default_options is not None:
        kwargs["default_options"] = default_options
    return Agent(
        client=client,
        tools=[_psc_lookup_weather],
        context_providers=[provider],
        require_per_service_call_history_persistence=require_per_service_call_history_persistence,
        **kwargs,
    )


async def _psc_run(agent: Agent, text: str, session: AgentSession, *, stream: bool) -> str:
    if stream:
        chunks: list[str] = []
        async for update in agent.run(text, session=session, stream=True):
            chunks.append(update.text or "")
        return "".join(chunks)
    result = await agent.run(text, session=session)
    return result.text


# driver=True (the contract under test): persistence happens per service call


@_psc_stream_params
async def test_psc_flag_on_store_false_persists_after_each_service_call(stream: bool) -> None:
    """Mode A (flag on, service does not store): function-call turn is persisted before the final call."""
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=False, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    text = await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert text == "It is sunny in Seattle."
    # Two service calls: function call, then final completion.
    assert client.call_count == 2
    # The contract: the function-call turn was persisted *before* the second service call started.
    assert client.saves_before_call == [0, 1]
    assert provider.save_calls == 2
    # Mode A loads local history (the middleware injects it before each service call).
    assert provider.get_calls >= 1
    # No service-side storage, so no conversation id is propagated.
    assert session.service_session_id is None


@_psc_stream_params
async def test_psc_flag_on_stores_by_default_persists_after_each_service_call(
    stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Mode B (flag on, service stores by default): still persists per service call, but skips load (issue #5798)."""
    provider = _PscSpyHistoryProvider()  # load_messages=True by default
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    with caplog.at_level(logging.WARNING, logger="agentnb"):
        text = await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert text == "It is sunny in Seattle."
    assert client.call_count == 2
    # The invariant the bug violated: persistence still happens per service call when the service stores.
    assert client.saves_before_call == [0, 1]
    assert provider.save_calls == 2
    # The service owns loading, so the provider is never asked to load.
    assert provider.get_calls == 0
    # A warning surfaces the bypassed load (load_messages=True).
    assert any("load_messages" in record.message for record in caplog.records)
    # The real service conversation id propagates to the session.
    assert session.service_session_id == _PSC_SERVICE_CONVERSATION_ID


@_psc_stream_params
async def test_psc_flag_on_store_only_provider_no_load_no_warning(
    stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Mode B with a store-only provider (load_messages=False): persists per call, no load, no warning."""
    provider = _PscSpyHistoryProvider(load_messages=False)
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    with caplog.at_level(logging.WARNING, logger="agentnb"):
        await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert client.saves_before_call == [0, 1]
    assert provider.save_calls == 2
    assert provider.get_calls == 0
    assert not any("load_messages" in record.message for record in caplog.records)


@_psc_stream_params
async def test_psc_flag_on_store_false_override_behaves_as_mode_a(stream: bool) -> None:
    """Flag on + storing client but store=False override: falls back to Mode A (local, per call)."""
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(
        client, provider, require_per_service_call_history_persistence=True, default_options={"store": False}
    )
    session = agent.create_session()

    await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert client.saves_before_call == [0, 1]
    assert provider.save_calls == 2
    assert provider.get_calls >= 1
    # store=False forces local handling, so no real service conversation id.
    assert session.service_session_id is None


@_psc_stream_params
async def test_psc_flag_on_store_none_treated_as_absent(stream: bool, caplog: pytest.LogCaptureFixture) -> None:
    """Flag on + storing client + explicit store=None: None is "unset", so the storing default applies (Mode B)."""
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(
        client, provider, require_per_service_call_history_persistence=True, default_options={"store": None}
    )
    session = agent.create_session()

    with caplog.at_level(logging.WARNING, logger="agentnb"):
        await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert client.saves_before_call == [0, 1]
    assert provider.save_calls == 2
    assert provider.get_calls == 0
    assert session.service_session_id == _PSC_SERVICE_CONVERSATION_ID
    assert any("load_messages" in record.message for record in caplog.records)
    # store=None must not be forwarded to the client; the service decides its own default.
    assert all("store" not in options for options in client.received_options)


@_psc_stream_params
async def test_psc_flag_on_respects_store_outputs_flag(stream: bool) -> None:
    """Flag on: the provider's store_inputs/store_outputs flags still apply per service call."""
    provider = _PscSpyHistoryProvider(store_inputs=True, store_outputs=False)
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert provider.save_calls == 2
    # Outputs disabled, so no assistant/tool-call messages were stored, only user/tool inputs.
    assert provider.stored_messages
    assert all(message.role != "assistant" for message in provider.stored_messages)


# driver=False (control): persistence happens once, at the end of the run


@_psc_stream_params
async def test_psc_flag_off_store_false_persists_once_at_end(stream: bool) -> None:
    """Flag off + non-storing client: nothing is persisted mid-run; one save at the end."""
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=False, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=False)
    session = agent.create_session()

    text = await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert text == "It is sunny in Seattle."
    assert client.call_count == 2
    # The control contract: no save happened between the function call and the final completion.
    assert client.saves_before_call == [0, 0]
    assert provider.save_calls == 1


@_psc_stream_params
async def test_psc_flag_off_stores_by_default_persists_once_at_end(stream: bool) -> None:
    """Flag off + storing client: once-per-run persistence, and the service conversation id propagates."""
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=False)
    session = agent.create_session()

    await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert client.saves_before_call == [0, 0]
    assert provider.save_calls == 1
    assert session.service_session_id == _PSC_SERVICE_CONVERSATION_ID


@_psc_stream_params
async def test_psc_flag_on_storing_with_existing_conversation_id_does_not_raise(stream: bool) -> None:
    """Allow side of the guard: flag on + storing client + an existing conversation_id resumes (no raise).

    The non-storing path raises on an existing service-managed conversation id, but with a storing
    client the run must proceed and the service conversation id must propagate to the session.
    """
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    if stream:
        chunks: list[str] = []
        async for update in agent.run(
            "What's the weather in Seattle?",
            session=session,
            stream=True,
            options={"conversation_id": "existing_conversation"},
        ):
            chunks.append(update.text or "")
        text = "".join(chunks)
    else:
        result = await agent.run(
            "What's the weather in Seattle?",
            session=session,
            options={"conversation_id": "existing_conversation"},
        )
        text = result.text

    assert text == "It is sunny in Seattle."
    # Persistence still happens per service call, and the real service id propagates to the session.
    assert provider.save_calls == 2
    assert provider.get_calls == 0
    assert session.service_session_id == _PSC_SERVICE_CONVERSATION_ID


@_psc_stream_params
async def test_psc_flag_on_storing_two_runs_same_session(stream: bool) -> None:
    """Storing mode across two runs on one session: persistence keeps happening, id is stable, no load.

    The second run exercises the precedence branch where the session already carries a
    service_session_id, which must continue to skip provider loading and keep persisting.
    """
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(provider=provider, stores_by_default=True, script=_psc_function_call_script())
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    assert provider.save_calls == 2
    assert provider.get_calls == 0
    first_run_service_id = session.service_session_id
    assert first_run_service_id == _PSC_SERVICE_CONVERSATION_ID

    # Reset the scripted client for a second run on the same session.
    client._script = _psc_function_call_script()
    client.call_count = 0
    client.saves_before_call = []

    await _psc_run(agent, "And in Portland?", session, stream=stream)

    # Persistence keeps happening on the second run (two more saves), still per service call.
    assert client.saves_before_call == [2, 3]
    assert provider.save_calls == 4
    # Loading stays skipped and the service conversation id stays stable across runs.
    assert provider.get_calls == 0
    assert session.service_session_id == first_run_service_id


@_psc_stream_params
async def test_psc_flag_on_storing_without_conversation_id_warns_every_call(
    stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Storing mode but the client returns no conversation_id: warn on every service call.

    Without an echoed conversation id the next run has nothing to resume from, so cross-turn
    history can be lost silently. The warning fires per service call (no dedup) so the uncommon
    failure mode cannot pass unnoticed.
    """
    provider = _PscSpyHistoryProvider()
    client = _PscSpyChatClient(
        provider=provider,
        stores_by_default=True,
        script=_psc_function_call_script(),
        echo_conversation_id=False,
    )
    agent = _psc_build_agent(client, provider, require_per_service_call_history_persistence=True)
    session = agent.create_session()

    with caplog.at_level(logging.WARNING, logger="agentnb"):
        await _psc_run(agent, "What's the weather in Seattle?", session, stream=stream)

    # Persistence still happens, but no service id is captured to resume from.
    assert provider.save_calls == 2
    assert session.service_session_id is None
    # Two service calls -> the warning is emitted twice (one per call, not deduped).
    missing_id_warnings = [r for r in caplog.records if "returned no conversation_id" in r.message]
    assert len(missing_id_warnings) == 2
