"""Small API shapes code written for the reference relies on: printing, typed options, hooks, helpers."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import (
    Agent,
    AgentResponse,
    AgentResponseUpdate,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationContext,
    FunctionMiddleware,
    FunctionTool,
    InMemoryHistoryProvider,
    Message,
    MiddlewareTermination,
    SessionContext,
    tool,
)
from agentnb.local import ScriptedChatClient
from agentnb.openai import OpenAIChatCompletionOptions, OpenAIChatOptions
from agentnb.workflows import WorkflowEvent, WorkflowRunState


class Weather(BaseModel):
    city: str
    sunny: bool


def test_responses_and_updates_print_as_their_text() -> None:
    response = AgentResponse(messages=[Message("assistant", ["Hello", "there"])])  # text contents join with a space
    chat = ChatResponse(messages=[Message("assistant", ["Hi"])])
    assert str(response) == "Hello there" and f"{response}" == "Hello there"
    assert str(chat) == "Hi"
    assert str(AgentResponseUpdate(contents=["chunk"])) == "chunk"
    assert str(ChatResponseUpdate(contents=["piece"])) == "piece"
    assert repr(response).startswith("AgentResponse(text='Hello there'")
    assert str(Content.from_text("t")) == "t"
    assert str(Content.from_error("boom", error_code="E1")) == "Error E1: boom"


async def test_from_update_generator_assembles_a_stream() -> None:
    agent = Agent(ScriptedChatClient(["streamed reply"]), name="bot")
    response = await AgentResponse.from_update_generator(agent.run("hi", stream=True))
    assert response.text == "streamed reply"
    assert response.messages[0].author_name == "bot"

    async def chat_updates() -> Any:
        yield ChatResponseUpdate(contents=["a"], message_id="m")
        yield ChatResponseUpdate(contents=["b"], message_id="m")

    assert (await ChatResponse.from_update_generator(chat_updates())).text == "ab"


async def test_typed_options_are_generic_dicts_that_drive_structured_output() -> None:
    options = OpenAIChatOptions[Weather](response_format=Weather, max_tool_calls=2)
    assert options == {"response_format": Weather, "max_tool_calls": 2}
    assert ChatOptions[Weather](temperature=0.2) == {"temperature": 0.2}
    assert OpenAIChatCompletionOptions[Weather](logprobs=True) == {"logprobs": True}
    agent = Agent[OpenAIChatOptions](ScriptedChatClient([Weather(city="Oslo", sunny=False)]))
    response = await agent.run("weather?", options=ChatOptions[Weather](response_format=Weather))
    assert response.value == Weather(city="Oslo", sunny=False)
    assert AgentResponse[Weather] is not AgentResponse  # a subscripted alias, usable in annotations


class _Resource:
    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    async def __aenter__(self) -> _Resource:
        self.log.append(f"enter {self.name}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.log.append(f"exit {self.name}")


async def test_async_with_agent_enters_client_and_tool_resources_in_order() -> None:
    log: list[str] = []
    client = ScriptedChatClient(["ok"])
    client_closed: list[bool] = []

    async def close() -> None:
        client_closed.append(True)

    client.close = close  # type: ignore[method-assign]
    agent = Agent(client, tools=[_Resource(log, "a"), _Resource(log, "b")])
    async with agent as entered:
        assert entered is agent
        assert log == ["enter a", "enter b"]
    assert log == ["enter a", "enter b", "exit b", "exit a"]
    assert client_closed == [True]


async def test_async_with_agent_connects_and_closes_an_mcp_server() -> None:
    pytest.importorskip("mcp")
    from agentnb.mcp import MCPStdioTool

    server = Path(__file__).parents[1] / "mcp" / "servers" / "demo_server.py"
    mcp = MCPStdioTool("demo", sys.executable, args=[str(server), "stdio"])
    client = ScriptedChatClient([ScriptedChatClient.call("add", a=2, b=3), "5"])
    async with Agent(client, tools=[mcp]) as agent:
        assert mcp.is_connected
        assert (await agent.run("2+3?")).text == "5"
    assert not mcp.is_connected
    assert "5" in str(client.calls[1][-1].contents[0].result)


def test_session_context_get_messages_filters_by_source_and_adds_response() -> None:
    sc = SessionContext(session_id="s", input_messages=[Message("user", ["q"])])
    provider = InMemoryHistoryProvider()
    sc.extend_messages(provider, [Message("user", ["old"])])
    sc.extend_messages("rag", [Message("system", ["doc"])])
    assert [m.text for m in sc.get_messages()] == ["old", "doc"]
    assert [m.text for m in sc.get_messages(sources={"rag"})] == ["doc"]
    assert [m.text for m in sc.get_messages(exclude_sources={"in_memory"}, include_input=True)] == ["doc", "q"]
    sc.response = AgentResponse(messages=[Message("assistant", ["a"])])
    assert [m.text for m in sc.get_messages(include_input=True, include_response=True)] == ["old", "doc", "q", "a"]


async def test_history_provider_can_store_context_from_other_providers() -> None:
    from agentnb import ContextProvider

    class Docs(ContextProvider):
        async def before_run(self, *, agent: Any, session: Any, context: SessionContext, state: Any) -> None:
            context.extend_messages(self, [Message("user", ["doc"])])

    history = InMemoryHistoryProvider(store_context_messages=True, store_context_from={"Docs"})
    agent = Agent(ScriptedChatClient(["ok"]), context_providers=[history, Docs()])
    session = agent.create_session()
    await agent.run("q", session=session)
    assert [m.text for m in session.state["in_memory"]["messages"]] == ["doc", "q", "ok"]
    assert await history.get_messages(None) == []  # state is optional, as in the reference


async def test_invocation_exception_count_and_limit() -> None:
    def flaky() -> str:
        raise RuntimeError("down")

    flaky_tool = tool(flaky, max_invocation_exceptions=1)
    assert isinstance(flaky_tool, FunctionTool)
    client = ScriptedChatClient([ScriptedChatClient.call("flaky"), ScriptedChatClient.call("flaky"), "gave up"])
    response = await Agent(client, tools=[flaky_tool]).run("go")
    assert response.text == "gave up"
    assert flaky_tool.invocation_exception_count == 1 and flaky_tool.invocation_count == 1
    second_result = client.calls[2][-1].contents[0]
    assert "limit" in str(second_result.exception or second_result.result)


class _StopAfterTool(FunctionMiddleware):
    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()
        raise MiddlewareTermination(result=context.result)


@pytest.mark.parametrize("per_call", [False, True])
async def test_per_service_call_history_leaves_out_unsent_tool_results(per_call: bool) -> None:
    @tool
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    agent = Agent(
        ScriptedChatClient([ScriptedChatClient.call("lookup", city="Oslo")]),
        tools=[lookup],
        context_providers=[InMemoryHistoryProvider()],
        middleware=[_StopAfterTool()],
        require_per_service_call_history_persistence=per_call,
    )
    session = agent.create_session()
    await agent.run("weather?", session=session)
    roles = [m.role for m in session.state["in_memory"]["messages"]]
    assert roles == (["user", "assistant"] if per_call else ["user", "assistant", "tool"])


def test_observability_helpers() -> None:
    from agentnb.observability import (
        disable_instrumentation,
        enable_sensitive_telemetry,
        get_meter,
        get_tracer,
        is_instrumentation_enabled,
    )

    with get_tracer().start_as_current_span("custom") as span:
        span.set_attribute("k", "v")
    get_meter().create_counter("parity_requests").add(1)
    from agentnb import _telemetry, observability

    try:
        enable_sensitive_telemetry(force=True)
        assert is_instrumentation_enabled() and _telemetry.sensitive_data_enabled()
        disable_instrumentation()
        enable_sensitive_telemetry()  # the switch-off is sticky: ignored without force=True
        assert not is_instrumentation_enabled() and not _telemetry.sensitive_data_enabled()
    finally:
        observability.enable_instrumentation(force=True, span_store=False)
        observability.OBSERVABILITY_SETTINGS.enable_instrumentation = False  # off, but not the sticky opt-out


def test_workflow_event_generic_request_type_and_state_printing() -> None:
    event = WorkflowEvent[Weather]("request_info", Weather(city="Oslo", sunny=True), request_id="r1")
    assert event.request_type is Weather
    assert WorkflowEvent("output", 1).request_type is None
    assert WorkflowEvent("superstep_started", step=3).iteration == 3
    assert str(WorkflowRunState.IDLE) == "WorkflowRunState.IDLE" == f"{WorkflowRunState.IDLE}"
    assert WorkflowRunState.IDLE == "idle"


async def test_orchestration_builders_take_the_reference_output_selection() -> None:
    from agentnb.orchestrations import SequentialBuilder

    writer = Agent(ScriptedChatClient(["draft"]), name="writer")
    editor = Agent(ScriptedChatClient(["final"]), name="editor")
    workflow = SequentialBuilder(
        participants=[writer, editor], output_from=[editor], intermediate_output_from="all_other"
    ).build()
    result = await workflow.run("write")
    assert [o.text for o in result.get_outputs()] == ["final"]
    assert [o.text for o in result.get_intermediate_outputs()] == ["draft"]

    everyone = SequentialBuilder(participants=[Agent(ScriptedChatClient(["a"]), name="x")], output_from="all")
    assert [o.text for o in (await everyone.build().run("go")).get_outputs()] == ["a"]
    with pytest.raises(ValueError, match="output_from must be 'all'"):
        SequentialBuilder(participants=[writer], output_from="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both output_from and intermediate_output_from"):
        SequentialBuilder(
            participants=[writer, editor], output_from=[writer], intermediate_output_from=[writer]
        ).build()


async def test_handoff_speaks_the_reference_names() -> None:
    from agentnb.orchestrations import HandoffAgentUserRequest, HandoffBuilder, HandoffSentEvent

    triage = Agent(ScriptedChatClient([ScriptedChatClient.call("handoff_to_billing")]), name="triage")
    billing = Agent(ScriptedChatClient(["Refund issued.", "You're welcome."]), name="billing")
    workflow = HandoffBuilder(participants=[triage, billing]).build()
    result = await workflow.run("refund please")
    assert [e.data for e in result.get_events("handoff_sent")] == [HandoffSentEvent("triage", "billing")]
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, HandoffAgentUserRequest) and request.request_type is HandoffAgentUserRequest
    reply = HandoffAgentUserRequest.create_response("thanks")
    assert [(m.role, m.text) for m in reply] == [("user", "thanks")]
    follow_up = await workflow.run(responses={request.request_id: reply})
    assert follow_up.get_request_info_events()[0].data.agent_response.text == "You're welcome."
    with pytest.raises(TypeError):
        HandoffAgentUserRequest.create_response([1])  # type: ignore[list-item]
