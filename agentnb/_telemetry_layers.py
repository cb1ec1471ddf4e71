"""Telemetry as layers: spans and metrics wrapped around an agent's run, a model call and a tool invocation.

Each decorator here wraps one seam from outside, the way the reference's telemetry layers wrap its clients and
agents, so the code inside holds no telemetry at all: ``Agent.run`` prepares and finishes a turn, the
function-invocation loop reads as model call -> tool calls -> results -> model call, and ``FunctionTool.invoke``
calls a function. The seams:

- :func:`traced_agent_run` on ``Agent.run``: an ``invoke_agent`` span around the whole turn, agent middleware
  included, current while a streamed turn is being pulled;
- :func:`traced_model_call` on ``BaseChatClient._model_call`` (the innermost step of chat middleware): a
  ``chat`` span (kind CLIENT) per model call, ended when a streamed reply is complete;
- :func:`traced_tool_invoke` on ``FunctionTool.invoke`` (the innermost step of function middleware): an
  ``execute_tool`` span per call.

With instrumentation off, or on with no tracer provider to record to, each layer costs one check and a direct
call. Span names and attributes follow the OpenTelemetry GenAI conventions (see :mod:`agentnb._telemetry`),
plus OpenInference's span kind so that viewers such as Phoenix show agent, LLM and tool spans as such.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from . import _telemetry as tel
from ._types import AgentResponse, ChatResponse, ResponseStream, normalize_messages

if TYPE_CHECKING:
    from ._agents import Agent
    from ._clients import BaseChatClient
    from ._middleware import ChatContext, FunctionInvocationContext
    from ._tools import FunctionTool

__all__ = ["traced_agent_run", "traced_any_agent_run", "traced_model_call", "traced_tool_invoke"]

_F = TypeVar("_F", bound=Callable[..., Any])

_AGENT, _LLM, _TOOL = "AGENT", "LLM", "TOOL"


def _response_attributes(response: ChatResponse | AgentResponse) -> dict[str, Any]:
    usage = response.usage_details or {}
    return {
        tel.GEN_AI_RESPONSE_MODEL: response.model_id,
        tel.GEN_AI_RESPONSE_ID: response.response_id,
        tel.GEN_AI_RESPONSE_FINISH_REASONS: (response.finish_reason,) if response.finish_reason else None,
        tel.GEN_AI_USAGE_INPUT_TOKENS: usage.get("input_token_count"),
        tel.GEN_AI_USAGE_OUTPUT_TOKENS: usage.get("output_token_count"),
    }


def _end_with_response(span: Any, response: ChatResponse | AgentResponse) -> None:
    tel.record_sensitive(span, tel.GEN_AI_OUTPUT_MESSAGES, response.messages, finish_reason=response.finish_reason)
    tel.end_span(span, attributes=_response_attributes(response))


_UNKNOWN_MODEL = "unknown"


def _end_chat(span: Any, response: ChatResponse) -> None:
    """End a ``chat`` span; a request model that was unknown is taken from the response (name included)."""
    if response.model_id and tel.span_attribute(span, tel.GEN_AI_REQUEST_MODEL) == _UNKNOWN_MODEL:
        span.set_attribute(tel.GEN_AI_REQUEST_MODEL, response.model_id)
        span.update_name(f"{tel.OP_CHAT} {response.model_id}")
    _end_with_response(span, response)


def _traced_stream(
    stream: ResponseStream[Any, Any], span: Any, finish: Callable[[Any, Any], None]
) -> ResponseStream[Any, Any]:
    """A stream that makes ``span`` current while each update is pulled and ends it with the stream."""

    async def updates() -> AsyncIterator[Any]:
        try:
            iterator = aiter(stream)
            while True:
                with tel.use_span(span):
                    try:
                        update = await anext(iterator)
                    except StopAsyncIteration:
                        break
                yield update
            with tel.use_span(span):
                final = await stream.get_final_response()
        except BaseException as e:  # an error, a cancellation, or the consumer closing the stream early
            await stream.aclose()
            tel.end_span(span, error=e)
            raise
        finish(span, final)

    async def final_response(_updates: list[Any]) -> Any:
        return await stream.get_final_response()

    return ResponseStream(updates(), final_response)


# --- agents -----------------------------------------------------------------------------------------------


def _agent_span(agent: Agent, messages: Any, kwargs: dict[str, Any]) -> Any:
    options: Mapping[str, Any] = kwargs.get("options") or {}
    session = kwargs.get("session")
    span = tel.start_span(
        f"invoke_agent {agent.display_name}",
        {
            tel.GEN_AI_OPERATION_NAME: tel.OP_INVOKE_AGENT,
            tel.GEN_AI_PROVIDER_NAME: agent.otel_provider_name or agent.client.OTEL_PROVIDER_NAME,
            tel.GEN_AI_AGENT_ID: agent.id,
            tel.GEN_AI_AGENT_NAME: agent.name,
            tel.GEN_AI_REQUEST_MODEL: options.get("model_id") or agent.model_id,
            tel.GEN_AI_CONVERSATION_ID: session.session_id if session is not None else None,
            tel.GEN_AI_AGENT_DESCRIPTION: agent.description,
            tel.OPENINFERENCE_SPAN_KIND: _AGENT,
        },
    )
    if tel.sensitive_data_enabled():
        tel.record_sensitive(span, tel.GEN_AI_SYSTEM_INSTRUCTIONS, agent.instructions)
        tel.record_sensitive(span, tel.GEN_AI_INPUT_MESSAGES, normalize_messages(messages))
    return span


def _end_agent_span(span: Any, response: AgentResponse) -> None:
    _end_with_response(span, response)


async def _agent_response(
    run: Callable[..., Awaitable[AgentResponse]], agent: Agent, messages: Any, kwargs: Any
) -> Any:
    span = _agent_span(agent, messages, kwargs)
    try:
        with tel.use_span(span):
            response = await run(agent, messages, **kwargs)
    except BaseException as e:
        tel.end_span(span, error=e)
        raise
    _end_agent_span(span, response)
    return response


def _agent_stream(run: Callable[..., Any], agent: Agent, messages: Any, kwargs: Any) -> ResponseStream[Any, Any]:
    """The streamed turn, with its span started when the first update is asked for (when the turn starts)."""
    inner: ResponseStream[Any, Any] | None = None

    async def updates() -> AsyncIterator[Any]:
        nonlocal inner
        span = _agent_span(agent, messages, kwargs)
        with tel.use_span(span):
            stream: ResponseStream[Any, Any] = run(agent, messages, stream=True, **kwargs)
        inner = stream
        async for update in _traced_stream(stream, span, _end_agent_span):
            yield update

    async def final_response(_updates: list[Any]) -> Any:
        assert inner is not None  # the ResponseStream drains updates() before it finalizes
        return await inner.get_final_response()

    return ResponseStream(updates(), final_response)


def traced_agent_run(run: _F) -> _F:
    """Wrap ``Agent.run`` in an ``invoke_agent`` span (streamed or not)."""

    @functools.wraps(run)
    def run_traced(self: Agent, messages: Any = None, *, stream: bool = False, **kwargs: Any) -> Any:
        if not tel.recording():
            return run(self, messages, stream=stream, **kwargs)
        if stream:
            return _agent_stream(run, self, messages, kwargs)
        return _agent_response(run, self, messages, kwargs)

    return cast(_F, run_traced)  # the wrapper keeps the wrapped method's signature


def _any_agent_span(agent: Any, session: Any, messages: Any) -> Any:
    """An ``invoke_agent`` span for an agent class of the caller's own (one that mixes in the telemetry layer)."""
    agent_id = getattr(agent, "id", None) or "unknown"
    name = getattr(agent, "name", None) or agent_id
    service_session_id = getattr(session, "service_session_id", None)
    span = tel.start_span(
        f"invoke_agent {name}",
        {
            tel.GEN_AI_OPERATION_NAME: tel.OP_INVOKE_AGENT,
            tel.GEN_AI_PROVIDER_NAME: getattr(agent, "otel_provider_name", None)
            or getattr(agent, "AGENT_PROVIDER_NAME", None)
            or "unknown",
            tel.GEN_AI_AGENT_ID: agent_id,
            tel.GEN_AI_AGENT_NAME: name,
            tel.GEN_AI_AGENT_DESCRIPTION: getattr(agent, "description", None),
            tel.GEN_AI_CONVERSATION_ID: service_session_id if isinstance(service_session_id, str) else None,
            tel.OPENINFERENCE_SPAN_KIND: _AGENT,
        },
    )
    if messages is not None and tel.sensitive_data_enabled():
        tel.record_sensitive(span, tel.GEN_AI_INPUT_MESSAGES, normalize_messages(messages))
    return span


def traced_any_agent_run(
    agent: Any, run: Callable[..., Any], messages: Any, *, stream: bool, session: Any, kwargs: dict[str, Any]
) -> Any:
    """Run ``run`` (the next class's ``run``) in an ``invoke_agent`` span, for agents that are not agentnb's.

    ``run`` may return an awaitable response or, when streaming, a :class:`ResponseStream` or an awaitable of
    one; the span ends with the response (or the error).
    """
    if not tel.recording():
        return run(messages, stream=stream, session=session, **kwargs)
    span = _any_agent_span(agent, session, messages)
    if stream:
        try:
            with tel.use_span(span):
                result = run(messages, stream=True, session=session, **kwargs)
        except BaseException as e:
            tel.end_span(span, error=e)
            raise
        inner = cast(
            "ResponseStream[Any, Any]",
            result if isinstance(result, ResponseStream) else ResponseStream[Any, Any].from_awaitable(result),
        )
        return _traced_stream(inner, span, _end_agent_span)

    async def response() -> Any:
        try:
            with tel.use_span(span):
                answer = await run(messages, stream=False, session=session, **kwargs)
        except BaseException as e:
            tel.end_span(span, error=e)
            raise
        _end_agent_span(span, answer)
        return answer

    return response()


# --- model calls ------------------------------------------------------------------------------------------


def traced_model_call(call: _F) -> _F:
    """Wrap a chat client's single model call (``context.result`` set by ``call``) in a ``chat`` span."""

    @functools.wraps(call)
    def model_call(self: BaseChatClient, context: ChatContext) -> Awaitable[None]:
        # Not a coroutine itself: untraced, the call's own coroutine is handed out (one frame less per call).
        if not tel.recording():
            return call(self, context)
        return traced(self, context)

    async def traced(self: BaseChatClient, context: ChatContext) -> None:
        options = context.options
        # "unknown" until the response names the model (see _end_chat), as the GenAI conventions' span name
        # always carries one.
        model = options.get("model_id") or options.get("model") or self.model_id or _UNKNOWN_MODEL
        span = tel.start_span(
            f"chat {model}",
            {
                tel.GEN_AI_OPERATION_NAME: tel.OP_CHAT,
                tel.GEN_AI_PROVIDER_NAME: self.OTEL_PROVIDER_NAME,
                tel.GEN_AI_REQUEST_MODEL: model,
                tel.GEN_AI_REQUEST_TEMPERATURE: options.get("temperature"),
                tel.GEN_AI_REQUEST_TOP_P: options.get("top_p"),
                tel.GEN_AI_REQUEST_MAX_TOKENS: options.get("max_tokens"),
                tel.GEN_AI_REQUEST_SEED: options.get("seed"),
                tel.OPENINFERENCE_SPAN_KIND: _LLM,
            },
            kind="client",
        )
        tel.record_sensitive(span, tel.GEN_AI_INPUT_MESSAGES, context.messages)
        compaction: Any = context.metadata.get("compaction")
        if compaction is not None and compaction.compacted:
            span.set_attribute(tel.COMPACTION_GROUPS_EXCLUDED, compaction.groups_excluded)
            span.set_attribute(tel.COMPACTION_TOKENS_SENT, compaction.tokens_sent)
            if compaction.budget is not None:
                span.set_attribute(tel.COMPACTION_TOKEN_BUDGET, compaction.budget)
        try:
            with tel.use_span(span):
                await call(self, context)
        except BaseException as e:
            tel.end_span(span, error=e)
            raise
        result = context.result
        if isinstance(result, ResponseStream):
            context.result = _traced_stream(cast("ResponseStream[Any, Any]", result), span, _end_chat)
        elif isinstance(result, ChatResponse):
            _end_chat(span, cast(ChatResponse, result))
        else:  # the loop reports the wrong type; the span just ends
            tel.end_span(span)
        return None

    return cast(_F, model_call)  # the wrapper keeps the wrapped method's signature


# --- tool calls -------------------------------------------------------------------------------------------


def _tool_arguments(arguments: Any, context: FunctionInvocationContext | None, kwargs: Mapping[str, Any]) -> Any:
    """The arguments a tool call was given, for the span (a model instance as its fields)."""
    if arguments is None:
        arguments = (
            context.arguments
            if context is not None
            else {k: v for k, v in kwargs.items() if k not in ("tool_call_id", "skip_parsing")}
        )
    dump = getattr(arguments, "model_dump", None)
    return dump() if callable(dump) else arguments


def _tool_result_text(result: Any, *, raw_as_str: bool) -> str | None:
    """A tool's result for the span: parsed contents as their text; a raw value as ``str`` or JSON."""
    from ._types import Content

    items = cast("list[Any]", result) if isinstance(result, list) else None
    if items is not None and all(isinstance(c, Content) for c in items):
        contents = cast("list[Content]", items)
        return "\n".join(c.text or "" for c in contents if c.type == "text") or str(contents)
    return str(cast(object, result)) if raw_as_str else None


def traced_tool_invoke(invoke: _F) -> _F:
    """Wrap ``FunctionTool.invoke`` (or ``invoke_raw``) in an ``execute_tool`` span.

    A failure marks the span and propagates. A tool's own duration histogram (``_invocation_duration_histogram``,
    as the reference's tests set it) records each traced call.
    """
    raw_as_str = invoke.__name__ == "invoke"  # the public invoke's unparsed value is shown as str(), as the reference

    @functools.wraps(invoke)
    def invoke_traced(
        self: FunctionTool, *, arguments: Any = None, context: FunctionInvocationContext | None = None, **kwargs: Any
    ) -> Awaitable[Any]:
        # Not a coroutine itself: untraced, the invocation's own coroutine is handed out (one frame less per call).
        if not tel.recording():
            return invoke(self, arguments=arguments, context=context, **kwargs)
        return traced(self, arguments=arguments, context=context, **kwargs)

    async def traced(
        self: FunctionTool, *, arguments: Any = None, context: FunctionInvocationContext | None = None, **kwargs: Any
    ) -> Any:
        call_id = kwargs.get("tool_call_id") or (context.call_id if context is not None else None)
        span = tel.start_span(
            f"execute_tool {self.name}",
            {
                tel.GEN_AI_OPERATION_NAME: tel.OP_EXECUTE_TOOL,
                tel.GEN_AI_TOOL_NAME: self.name,
                tel.GEN_AI_TOOL_CALL_ID: call_id,
                tel.GEN_AI_TOOL_TYPE: "function",
                tel.GEN_AI_TOOL_DESCRIPTION: self.description or None,
                tel.OPENINFERENCE_SPAN_KIND: _TOOL,
            },
        )
        tel.record_sensitive(span, tel.GEN_AI_TOOL_CALL_ARGUMENTS, _tool_arguments(arguments, context, kwargs))
        histogram = getattr(self, "_invocation_duration_histogram", None)
        started = time.perf_counter()
        try:
            with tel.use_span(span):
                result = await invoke(self, arguments=arguments, context=context, **kwargs)
        except BaseException as e:
            _record_duration(histogram, self.name, call_id, started, e)
            tel.end_span(span, error=e)
            raise
        _record_duration(histogram, self.name, call_id, started, None)
        text = _tool_result_text(result, raw_as_str=raw_as_str)
        tel.record_sensitive(span, tel.GEN_AI_TOOL_CALL_RESULT, result if text is None else text)
        tel.end_span(span)
        return result

    return cast(_F, invoke_traced)  # the wrapper keeps the wrapped method's signature


def _record_duration(
    histogram: Any, name: str, call_id: str | None, started: float, error: BaseException | None
) -> None:
    if histogram is None:
        return
    attributes: dict[str, Any] = {
        tel.GEN_AI_OPERATION_NAME: tel.OP_EXECUTE_TOOL,
        tel.GEN_AI_TOOL_NAME: name,
        tel.GEN_AI_TOOL_TYPE: "function",
        tel.FUNCTION_NAME: name,
    }
    if call_id is not None:
        attributes[tel.GEN_AI_TOOL_CALL_ID] = call_id
    if error is not None:
        attributes[tel.ERROR_TYPE] = type(error).__name__
    histogram.record(time.perf_counter() - started, attributes=attributes)
