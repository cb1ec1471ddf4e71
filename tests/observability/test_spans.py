"""The spans an agent turn emits: names, nesting, attributes, errors, and sensitive data only on request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel

from agentnb import Agent, AgentMiddleware, AgentMiddlewareLayer, AgentResponse, Message, tool
from agentnb import _telemetry as tel
from agentnb.local import FunctionChatClient, ScriptedChatClient, ToolCallingChatClient
from agentnb.observability import (
    AgentTelemetryLayer,
    disable_instrumentation,
    enable_instrumentation,
    is_instrumentation_enabled,
)
from tests.observability.otel_fixtures import Otel

SENSITIVE = {
    tel.GEN_AI_INPUT_MESSAGES,
    tel.GEN_AI_OUTPUT_MESSAGES,
    tel.GEN_AI_SYSTEM_INSTRUCTIONS,
    tel.GEN_AI_TOOL_CALL_ARGUMENTS,
    tel.GEN_AI_TOOL_CALL_RESULT,
}


@tool
async def weather(city: str) -> str:
    """Return the weather for a city."""
    await asyncio.sleep(0.05)  # long enough that the parallel call below overlaps with this one
    return f"Sunny in {city}"


@tool
async def population(city: str) -> int:
    """Return a city's population."""
    await asyncio.sleep(0.05)
    return 2_100_000


@tool
def broken(city: str) -> str:
    """Always fails."""
    raise RuntimeError(f"station in {city} is down")


def _agent(*tools: Any, name: str = "helper") -> Agent:
    return Agent(ToolCallingChatClient(), instructions="Secret system prompt.", name=name, tools=list(tools))


def _hex(span_id: int) -> str:
    return format(span_id, "016x")


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_a_turn_nests_chat_and_tool_spans_inside_invoke_agent(otel: Otel) -> None:
    agent = _agent(weather, population)
    session = agent.create_session()
    response = await agent.run("What is the weather in Paris?", session=session)
    assert "Sunny in Paris" in response.text

    root = otel.one("invoke_agent helper")
    chats = otel.by_name("chat tool-calling-test-model")
    tools = [otel.one("execute_tool weather"), otel.one("execute_tool population")]
    assert len(chats) == 2
    assert len(otel.spans()) == 5
    assert root.parent is None
    for span in [*chats, *tools]:
        assert _parent(span) == root.context.span_id
        assert span.context.trace_id == root.context.trace_id
    # The two tool calls ran concurrently (asyncio.gather) and both kept the agent span as parent.
    a, b = tools
    assert a.start_time < b.end_time and b.start_time < a.end_time

    assert root.kind is SpanKind.INTERNAL
    assert root.attributes[tel.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert root.attributes[tel.GEN_AI_PROVIDER_NAME] == "agentnb.local"
    assert root.attributes[tel.GEN_AI_AGENT_NAME] == "helper"
    assert root.attributes[tel.GEN_AI_AGENT_ID] == agent.id
    assert root.attributes[tel.GEN_AI_CONVERSATION_ID] == session.session_id
    assert root.attributes[tel.GEN_AI_REQUEST_MODEL] == "tool-calling-test-model"
    assert root.attributes[tel.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    usage = response.usage_details or {}
    assert root.attributes[tel.GEN_AI_USAGE_INPUT_TOKENS] == usage["input_token_count"]
    assert root.attributes[tel.GEN_AI_USAGE_OUTPUT_TOKENS] == usage["output_token_count"]

    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert first.kind is SpanKind.CLIENT
    assert first.attributes[tel.GEN_AI_OPERATION_NAME] == "chat"
    assert first.attributes[tel.GEN_AI_RESPONSE_MODEL] == "tool-calling-test-model"
    assert first.attributes[tel.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_calls",)
    assert second.attributes[tel.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert first.attributes[tel.GEN_AI_USAGE_INPUT_TOKENS] > 0
    assert (
        first.attributes[tel.GEN_AI_USAGE_INPUT_TOKENS] + second.attributes[tel.GEN_AI_USAGE_INPUT_TOKENS]
        == (usage["input_token_count"])
    )
    # Model and tool calls carry the agent and conversation they ran for.
    for span in [*chats, *tools]:
        assert span.attributes[tel.GEN_AI_AGENT_NAME] == "helper"
        assert span.attributes[tel.GEN_AI_CONVERSATION_ID] == session.session_id
    call = otel.one("execute_tool weather")
    assert call.attributes[tel.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert call.attributes[tel.GEN_AI_TOOL_NAME] == "weather"
    assert call.attributes[tel.GEN_AI_TOOL_CALL_ID]
    assert call.attributes[tel.GEN_AI_TOOL_TYPE] == "function"
    assert call.status.status_code is StatusCode.UNSET


async def test_a_failing_tool_marks_its_span_as_error_and_the_run_goes_on(otel: Otel) -> None:
    response = await _agent(broken, weather).run("Weather in Oslo?")
    assert "Sunny in Oslo" in response.text
    failed = otel.one("execute_tool broken")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "station in Oslo is down"
    assert failed.attributes[tel.ERROR_TYPE] == "RuntimeError"
    assert [e.name for e in failed.events] == ["exception"]
    assert otel.one("execute_tool weather").status.status_code is StatusCode.UNSET
    assert otel.one("invoke_agent helper").status.status_code is StatusCode.UNSET


async def test_a_failing_model_marks_chat_and_agent_spans(otel: Otel) -> None:
    def model(messages: list[Message], options: dict[str, Any]) -> str:
        raise ConnectionError("model unreachable")

    with pytest.raises(ConnectionError):
        await Agent(FunctionChatClient(model), name="fragile").run("hi")
    chat = otel.one("chat function:model")
    agent = otel.one("invoke_agent fragile")
    for span in (chat, agent):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes[tel.ERROR_TYPE] == "ConnectionError"
    assert _parent(chat) == agent.context.span_id


async def test_sensitive_data_is_absent_by_default(otel: Otel) -> None:
    await _agent(weather).run("Weather in Reykjavik?")
    assert otel.spans()
    for span in otel.spans():
        assert not SENSITIVE & set(span.attributes or {}), span.name
        text = json.dumps(dict(span.attributes or {}), default=str)
        assert "Reykjavik" not in text and "Secret system prompt" not in text


async def test_sensitive_data_is_recorded_when_enabled(otel: Otel) -> None:
    enable_instrumentation(enable_sensitive_data=True, span_store=False)
    await _agent(weather).run("Weather in Reykjavik?")
    root = otel.one("invoke_agent helper")
    instructions = [{"type": "text", "content": "Secret system prompt."}]
    assert json.loads(root.attributes[tel.GEN_AI_SYSTEM_INSTRUCTIONS]) == instructions
    sent = json.loads(root.attributes[tel.GEN_AI_INPUT_MESSAGES])
    assert sent == [{"role": "user", "parts": [{"type": "text", "content": "Weather in Reykjavik?"}]}]
    answer = json.loads(root.attributes[tel.GEN_AI_OUTPUT_MESSAGES])
    assert answer[-1]["role"] == "assistant" and answer[-1]["finish_reason"] == "stop"
    assert "Sunny in Reykjavik" in answer[-1]["parts"][0]["content"]

    first_chat = min(otel.by_name("chat tool-calling-test-model"), key=lambda s: s.start_time or 0)
    # The instructions are recorded apart from the conversation, as on the agent's span.
    assert json.loads(first_chat.attributes[tel.GEN_AI_SYSTEM_INSTRUCTIONS]) == instructions
    model_input = json.loads(first_chat.attributes[tel.GEN_AI_INPUT_MESSAGES])
    assert [m["role"] for m in model_input] == ["user"]
    model_output = json.loads(first_chat.attributes[tel.GEN_AI_OUTPUT_MESSAGES])
    assert model_output[0]["parts"][0]["type"] == "tool_call"
    assert model_output[0]["parts"][0]["name"] == "weather"

    call = otel.one("execute_tool weather")
    assert json.loads(call.attributes[tel.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"city": "Reykjavik"}
    assert call.attributes[tel.GEN_AI_TOOL_CALL_RESULT] == "Sunny in Reykjavik"


async def test_streaming_turn_has_the_same_structure(otel: Otel) -> None:
    agent = _agent(weather)
    stream = agent.run("Weather in Rome?", stream=True)
    chunks = [update async for update in stream]
    final = await stream.get_final_response()
    assert chunks and "Sunny in Rome" in final.text
    root = otel.one("invoke_agent helper")
    children = [s for s in otel.spans() if _parent(s) == root.context.span_id]
    assert sorted(s.name for s in children) == [
        "chat tool-calling-test-model",
        "chat tool-calling-test-model",
        "execute_tool weather",
    ]
    assert root.attributes[tel.GEN_AI_USAGE_OUTPUT_TOKENS] == (final.usage_details or {})["output_token_count"]


async def test_an_agent_used_as_a_tool_nests_under_the_tool_call(otel: Otel) -> None:
    inner = _agent(weather, name="forecaster")
    outer = Agent(ToolCallingChatClient(), name="planner", tools=[inner.as_tool(name="ask_forecaster")])
    await outer.run("Plan a day in Lisbon")
    call = otel.one("execute_tool ask_forecaster")
    inner_root = otel.one("invoke_agent forecaster")
    outer_root = otel.one("invoke_agent planner")
    assert _parent(call) == outer_root.context.span_id
    assert _parent(inner_root) == call.context.span_id
    assert call.attributes[tel.GEN_AI_AGENT_NAME] == "planner"
    inner_chats = [s for s in otel.by_name("chat tool-calling-test-model") if _parent(s) == inner_root.context.span_id]
    assert len(inner_chats) == 2
    assert {s.attributes[tel.GEN_AI_AGENT_NAME] for s in inner_chats} == {"forecaster"}
    assert otel.one("execute_tool weather").attributes[tel.GEN_AI_AGENT_NAME] == "forecaster"


async def test_parallel_agent_runs_keep_their_parents_across_gather(otel: Otel) -> None:
    tracer = trace.get_tracer("tests")
    agents = [Agent(ScriptedChatClient(["a"]), name="one"), Agent(ScriptedChatClient(["b"]), name="two")]
    with tracer.start_as_current_span("batch") as batch:
        await asyncio.gather(*(a.run("go") for a in agents))
    batch_id = batch.get_span_context().span_id
    for name in ("invoke_agent one", "invoke_agent two"):
        root = otel.one(name)
        assert _parent(root) == batch_id
    for chat in otel.by_name("chat scripted"):
        assert chat.parent is not None
    chats_by_agent = {s.attributes[tel.GEN_AI_AGENT_NAME] for s in otel.spans() if s.name.startswith("chat")}
    assert chats_by_agent == {"one", "two"}


async def test_nothing_is_emitted_when_instrumentation_is_off(otel: Otel) -> None:
    disable_instrumentation()
    assert not is_instrumentation_enabled()
    assert tel.start_span("x") is None
    await _agent(weather).run("Weather in Bern?")
    assert otel.spans() == []
    enable_instrumentation(span_store=False)  # the switch-off is sticky: only force=True undoes it
    assert not is_instrumentation_enabled()
    enable_instrumentation(span_store=False, force=True)
    assert is_instrumentation_enabled()
    enable_instrumentation(span_store=False)  # twice is harmless
    await _agent(weather).run("Weather in Bern?")
    assert len(otel.by_name("invoke_agent helper")) == 1


class Greeting(BaseModel):
    message: str


@tool
def greet(greeting: Greeting, count: int) -> str:
    """Greet."""
    return greeting.message * count


async def test_tool_arguments_are_plain_json_with_text_unescaped(otel: Otel) -> None:
    enable_instrumentation(enable_sensitive_data=True, span_store=False)
    await greet.invoke(arguments=greet.input_model(greeting=Greeting(message="こんにちは"), count=1))
    await greet.invoke(arguments={"greeting": {"message": "안녕"}, "count": 2}, tool_call_id="call-7")
    first, second = sorted(otel.by_name("execute_tool greet"), key=lambda s: s.start_time or 0)
    recorded = str(first.attributes[tel.GEN_AI_TOOL_CALL_ARGUMENTS])
    assert "\\u" not in recorded and json.loads(recorded) == {"greeting": {"message": "こんにちは"}, "count": 1}
    assert json.loads(str(second.attributes[tel.GEN_AI_TOOL_CALL_ARGUMENTS]))["greeting"] == {"message": "안녕"}
    assert second.attributes[tel.GEN_AI_TOOL_CALL_ID] == "call-7"


class _Timed(AgentMiddleware):
    """Agent middleware with a span of its own around the turn; ``answer`` short-circuits the agent."""

    def __init__(self, answer: str | None = None) -> None:
        self.answer = answer

    async def process(self, context: Any, call_next: Any) -> None:
        with trace.get_tracer("middleware").start_as_current_span("middleware"):
            if self.answer is not None:
                context.result = AgentResponse(messages=[Message("assistant", [self.answer])])
                return
            await call_next()


@pytest.mark.parametrize("stream", [False, True])
async def test_agent_middleware_runs_outside_the_agent_span(otel: Otel, stream: bool) -> None:
    assert Agent.__mro__.index(AgentMiddlewareLayer) < Agent.__mro__.index(AgentTelemetryLayer)
    agent = Agent(ToolCallingChatClient(), name="timed", middleware=[_Timed()])
    if stream:
        response_stream = agent.run("Hi", stream=True)
        _ = [update async for update in response_stream]
        await response_stream.get_final_response()
    else:
        await agent.run("Hi")
    middleware, root = otel.one("middleware"), otel.one("invoke_agent timed")
    assert _parent(root) == middleware.context.span_id  # the middleware is outside, the agent inside
    await Agent(ToolCallingChatClient(), name="skipped", middleware=[_Timed("cached")]).run("Hi")
    assert not otel.by_name("invoke_agent skipped")  # a middleware that answers itself: the agent never ran
