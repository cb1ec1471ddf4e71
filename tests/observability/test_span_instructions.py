"""System instructions on spans (apart from the conversation) and response telemetry an agent's model calls own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentnb import (
    Agent,
    AgentResponse,
    AgentResponseUpdate,
    ChatResponse,
    Content,
    ContextProvider,
    Message,
    ResponseStream,
    UsageDetails,
)
from agentnb import _telemetry as tel
from agentnb.local import ScriptedChatClient
from agentnb.observability import AgentTelemetryLayer, enable_instrumentation
from tests.observability.otel_fixtures import Otel


def _reply(text: str, response_id: str, tokens: tuple[int, int]) -> ChatResponse:
    return ChatResponse(
        messages=[Message("assistant", [text])],
        response_id=response_id,
        usage_details=UsageDetails(input_token_count=tokens[0], output_token_count=tokens[1]),
        finish_reason="stop",
    )


def _instructions(span: Any) -> list[str]:
    return [part["content"] for part in json.loads(span.attributes[tel.GEN_AI_SYSTEM_INSTRUCTIONS])]


def _roles(span: Any) -> list[str]:
    return [message["role"] for message in json.loads(span.attributes[tel.GEN_AI_INPUT_MESSAGES])]


@pytest.fixture
def sensitive(otel: Otel) -> Otel:
    enable_instrumentation(enable_sensitive_data=True, span_store=False)
    return otel


async def test_chat_span_records_instructions_apart_from_the_conversation(sensitive: Otel) -> None:
    client = ScriptedChatClient(["one", "two"], model_id="m")
    history = [Message("system", ["From the history."]), Message("user", ["Hi"])]
    await client.get_response(history, options={"instructions": "Be brief."})
    await client.get_response("Hi", options={"instructions": ["First rule.", "Second rule."]})
    with_history, with_list = sorted(sensitive.by_name("chat m"), key=lambda s: s.start_time or 0)
    assert _instructions(with_history) == ["Be brief."]
    assert _roles(with_history) == ["system", "user"]  # the history's own system message stays in the input
    assert _instructions(with_list) == ["First rule.", "Second rule."]
    assert _roles(with_list) == ["user"]
    # The model still gets the instructions, one system message each, before the conversation.
    assert [m.text for m in client.calls[1]] == ["First rule.", "Second rule.", "Hi"]


class _Memory(ContextProvider):
    def __init__(self, nested: ScriptedChatClient) -> None:
        super().__init__(source_id="memory")
        self.nested = nested

    async def before_run(self, *, agent: Any, session: Any, context: Any, state: dict[str, Any]) -> None:
        context.extend_instructions(self.source_id, "The user is Alice.")

    async def after_run(self, *, agent: Any, session: Any, context: Any, state: dict[str, Any]) -> None:
        await self.nested.get_response("Summarise", options={"instructions": "Unrelated."})


@pytest.mark.parametrize("stream", [False, True])
async def test_agent_span_takes_the_instructions_its_model_call_extends(sensitive: Otel, stream: bool) -> None:
    nested = ScriptedChatClient(["summary"], model_id="nested")
    agent = Agent(
        ScriptedChatClient(["Hello Alice"], model_id="m"),
        instructions="Be friendly.",
        name="host",
        context_providers=[_Memory(nested)],
    )
    if stream:
        response_stream = agent.run("Hi", stream=True)
        _ = [update async for update in response_stream]
        await response_stream.get_final_response()
    else:
        await agent.run("Hi")
    (contents,) = _instructions(sensitive.one("invoke_agent host"))
    assert "Be friendly." in contents and "The user is Alice." in contents
    assert "Unrelated." not in contents  # the provider's own model call does not overwrite them
    assert _instructions(sensitive.one("chat nested")) == ["Unrelated."]


@pytest.mark.parametrize("stream", [False, True])
async def test_agent_span_leaves_response_telemetry_to_its_model_calls(otel: Otel, stream: bool) -> None:
    replies = [
        ChatResponse(
            messages=[Message("assistant", [ScriptedChatClient.call("lookup", call_id="c1", q="x")])],
            response_id="resp-1",
            usage_details=UsageDetails(input_token_count=10, output_token_count=2),
        ),
        _reply("done", "resp-2", (15, 5)),
    ]

    def lookup(q: str) -> str:
        return q

    agent = Agent(ScriptedChatClient(replies, model_id="m"), name="worker", tools=[lookup])
    if stream:
        response_stream = agent.run("go", stream=True)
        _ = [update async for update in response_stream]
        await response_stream.get_final_response()
    else:
        await agent.run("go")
    chats = sorted(otel.by_name("chat m"), key=lambda s: s.start_time or 0)
    assert [c.attributes[tel.GEN_AI_RESPONSE_ID] for c in chats] == ["resp-1", "resp-2"]
    root = otel.one("invoke_agent worker")
    assert tel.GEN_AI_RESPONSE_ID not in root.attributes
    assert root.attributes[tel.GEN_AI_USAGE_INPUT_TOKENS] == 25  # the sum over its model calls
    assert root.attributes[tel.GEN_AI_USAGE_OUTPUT_TOKENS] == 7


class _Own:
    """An agent class of one's own (no model calls of agentnb's): its span keeps the response telemetry."""

    id = "own-id"
    name = "own"
    description = "answers itself"

    def __init__(self) -> None:
        self.default_options: dict[str, Any] = {"model": "own-model", "instructions": "Default."}

    def run(self, messages: Any = None, *, stream: bool = False, session: Any = None, **kwargs: Any) -> Any:
        response = AgentResponse(
            messages=[Message("assistant", ["ok"])],
            response_id="own-resp",
            usage_details=UsageDetails(input_token_count=3, output_token_count=4),
        )
        if stream:

            async def updates() -> Any:
                yield AgentResponseUpdate(contents=[Content.from_text("ok")], role="assistant")

            return ResponseStream(updates(), AgentResponse.from_updates)

        async def answer() -> AgentResponse:
            return response

        return answer()


class _TracedOwn(AgentTelemetryLayer, _Own):
    pass


@pytest.mark.parametrize("stream", [False, True])
async def test_own_agent_span_reads_model_and_instructions_from_merged_options(sensitive: Otel, stream: bool) -> None:
    agent = _TracedOwn()
    if stream:
        response_stream = agent.run("hi", stream=True, options={"instructions": "Extra."})
        _ = [update async for update in response_stream]
        await response_stream.get_final_response()
    else:
        await agent.run("hi", options={"instructions": "Extra."})
    span = sensitive.one("invoke_agent own")
    assert span.attributes[tel.GEN_AI_REQUEST_MODEL] == "own-model"
    (contents,) = _instructions(span)
    assert "Default." in contents and "Extra." in contents
    assert _roles(span) == ["user"]
    if not stream:
        assert span.attributes[tel.GEN_AI_RESPONSE_ID] == "own-resp"
        assert span.attributes[tel.GEN_AI_USAGE_INPUT_TOKENS] == 3
