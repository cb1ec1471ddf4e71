"""Telemetry as layers: spans and metrics wrapped around an agent's run, a model call and a tool invocation.

Each decorator here wraps one seam from outside, the way the reference's telemetry layers wrap its clients and
agents, so the code inside holds no telemetry at all: ``Agent.run`` prepares and finishes a turn, the
function-invocation loop reads as model call -> tool calls -> results -> model call, and ``FunctionTool.invoke``
calls a function. The seams:

- :func:`traced_agent_turn` on the core of ``Agent``'s turn (what agent middleware calls last): an
  ``invoke_agent`` span around the turn, agent middleware left outside as in the reference, current while a
  streamed turn is being pulled;
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
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, TypeVar, cast

from . import _telemetry as tel
from ._types import AgentResponse, ChatResponse, ResponseStream, normalize_messages

if TYPE_CHECKING:
    from ._agents import Agent
    from ._clients import BaseChatClient
    from ._middleware import AgentContext, ChatContext, FunctionInvocationContext
    from ._tools import FunctionTool

__all__ = [
    "INSTRUCTIONS_METADATA",
    "traced_agent_turn",
    "traced_any_agent_run",
    "traced_model_call",
    "traced_tool_invoke",
]

#: The ``ChatContext.metadata`` key under which the function loop puts the system messages it made of
#: ``options["instructions"]`` (first in ``messages``): the ``chat`` span records them as the system
#: instructions, apart from the input messages, as the reference's span does.
INSTRUCTIONS_METADATA = "instructions"

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


def _end_with_response(
    span: Any, response: ChatResponse | AgentResponse, inner: tel.InnerResponses | None = None
) -> None:
    """End a span with its response; ``inner``: what the model calls of an agent's run recorded themselves."""
    tel.record_sensitive(span, tel.GEN_AI_OUTPUT_MESSAGES, response.messages, finish_reason=response.finish_reason)
    attributes = _response_attributes(response)
    if inner is not None:
        # The model calls' spans own these: the agent's span leaves out the response id one of them recorded
        # and carries their summed usage.
        if tel.INNER_RESPONSE_ID_CAPTURED_FIELD in inner.fields:
            attributes[tel.GEN_AI_RESPONSE_ID] = None
        if tel.INNER_USAGE_CAPTURED_FIELD in inner.fields:
            attributes[tel.GEN_AI_USAGE_INPUT_TOKENS] = inner.usage.get("input_token_count")
            attributes[tel.GEN_AI_USAGE_OUTPUT_TOKENS] = inner.usage.get("output_token_count")
    tel.end_span(span, attributes=attributes)


_UNKNOWN_MODEL = "unknown"


def _end_chat(span: Any, response: ChatResponse) -> None:
    """End a ``chat`` span; a request model that was unknown is taken from the response (name included)."""
    if response.model_id and tel.span_attribute(span, tel.GEN_AI_REQUEST_MODEL) == _UNKNOWN_MODEL:
        span.set_attribute(tel.GEN_AI_REQUEST_MODEL, response.model_id)
        span.update_name(f"{tel.OP_CHAT} {response.model_id}")
    tel.note_inner_response(response.response_id, response.usage_details)
    _end_with_response(span, response)


def _traced_stream(
    stream: ResponseStream[Any, Any],
    span: Any,
    finish: Callable[[Any, Any], None],
    inner: tel.InnerResponses | None = None,
) -> ResponseStream[Any, Any]:
    """A stream that makes ``span`` current while each update is pulled and ends it with the stream.

    ``inner`` (an agent's stream) is current while the stream is pulled, so its model calls report to it.
    """

    async def updates() -> AsyncIterator[Any]:
        with inner if inner is not None else nullcontext():
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


def _agent_span(agent: Agent, context: AgentContext) -> Any:
    options: Mapping[str, Any] = context.options or {}
    session = context.session
    span = tel.start_span(
        f"invoke_agent {agent.display_name}",
        {
            tel.GEN_AI_OPERATION_NAME: tel.OP_INVOKE_AGENT,
            tel.GEN_AI_PROVIDER_NAME: agent.otel_provider_name or agent.client.OTEL_PROVIDER_NAME,
            tel.GEN_AI_AGENT_ID: agent.id,
            tel.GEN_AI_AGENT_NAME: agent.name,
            tel.GEN_AI_REQUEST_MODEL: options.get("model_id") or options.get("model") or agent.model_id,
            tel.GEN_AI_CONVERSATION_ID: session.session_id if session is not None else None,
            tel.GEN_AI_AGENT_DESCRIPTION: agent.description,
            tel.OPENINFERENCE_SPAN_KIND: _AGENT,
        },
    )
    if tel.sensitive_data_enabled():
        # The agent's own instructions; its model calls extend them with what context providers and the run's
        # options add (see _extend_agent_instructions).
        if agent.instructions:
            tel.record_sensitive(span, tel.GEN_AI_SYSTEM_INSTRUCTIONS, agent.instructions)
        tel.record_sensitive(span, tel.GEN_AI_INPUT_MESSAGES, context.messages)
    return span


async def _agent_turn(core: Callable[..., Awaitable[None]], agent: Agent, turn: Any) -> None:
    """Run the turn's core in an ``invoke_agent`` span; a streamed turn's span ends with its stream."""
    context: AgentContext = turn.context
    span = _agent_span(agent, context)
    captured = tel.InnerResponses()
    try:
        with captured, tel.use_span(span):
            await core(agent, turn)
    except BaseException as e:
        tel.end_span(span, error=e)
        raise
    result = context.result
    if isinstance(result, ResponseStream):
        finish = functools.partial(_end_with_response, inner=captured)
        context.result = _traced_stream(cast("ResponseStream[Any, Any]", result), span, finish, captured)
    elif isinstance(result, AgentResponse):
        _end_with_response(span, cast("AgentResponse[Any]", result), captured)
    else:  # a turn that left no response behind: the span just ends
        tel.end_span(span)


def traced_agent_turn(core: _F) -> _F:
    """Wrap the core of an agent's turn (``Agent._run_core`` / ``_stream_core``, what agent middleware calls
    last) in an ``invoke_agent`` span, so the span times the agent and not its middleware, as in the reference.

    ``core(agent, turn)`` leaves the response (or, streaming, the stream of it) in ``turn.context.result``.
    """

    @functools.wraps(core)
    def core_traced(self: Agent, turn: Any) -> Awaitable[None]:
        # Not a coroutine itself: untraced, the core's own coroutine is handed out (one frame less per turn).
        if not tel.recording():
            return core(self, turn)
        return _agent_turn(core, self, turn)

    return cast(_F, core_traced)  # the wrapper keeps the wrapped method's signature


def _any_agent_span(agent: Any, session: Any, messages: Any, options: Any) -> Any:
    """An ``invoke_agent`` span for an agent class of the caller's own (one that mixes in the telemetry layer).

    The model and instructions are read from the agent's ``default_options`` merged with the run's ``options``.
    """
    from ._chat_options import merge_chat_options

    default_options = getattr(agent, "default_options", None)
    merged = merge_chat_options(
        cast("Mapping[str, Any]", default_options) if isinstance(default_options, Mapping) else None,
        cast("Mapping[str, Any]", options) if isinstance(options, Mapping) else None,
    )
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
            tel.GEN_AI_REQUEST_MODEL: merged.get("model") or merged.get("model_id"),
            tel.OPENINFERENCE_SPAN_KIND: _AGENT,
        },
    )
    if messages is not None and tel.sensitive_data_enabled():
        instructions = tel.instruction_texts(merged.get("instructions"))
        if instructions:
            tel.record_sensitive(span, tel.GEN_AI_SYSTEM_INSTRUCTIONS, instructions)
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
    span = _any_agent_span(agent, session, messages, kwargs.get("options"))
    captured = tel.InnerResponses()
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
        return _traced_stream(inner, span, functools.partial(_end_with_response, inner=captured), captured)

    async def response() -> Any:
        try:
            with captured, tel.use_span(span):
                answer = await run(messages, stream=False, session=session, **kwargs)
        except BaseException as e:
            tel.end_span(span, error=e)
            raise
        _end_with_response(span, answer, captured)
        return answer

    return response()


# --- model calls ------------------------------------------------------------------------------------------


def _record_chat_input(span: Any, context: ChatContext) -> None:
    """Record a model call's input: the system instructions apart from the conversation's messages.

    The instructions are the system messages the function loop made of ``options["instructions"]``; an agent's
    span whose model call this is takes them over when they extend its own (see _extend_agent_instructions).
    """
    instruction_messages: list[Any] = context.metadata.get(INSTRUCTIONS_METADATA) or []
    messages = context.messages
    if instruction_messages:
        texts = [m.text for m in instruction_messages]
        tel.record_sensitive(span, tel.GEN_AI_SYSTEM_INSTRUCTIONS, texts)
        _extend_agent_instructions(tel.current_span(), texts)  # the chat span is not current yet
        messages = [m for m in messages if not any(m is i for i in instruction_messages)]
    tel.record_sensitive(span, tel.GEN_AI_INPUT_MESSAGES, messages)


def _instruction_contents(recorded: Any) -> list[str] | None:
    """The texts of system instructions as a span records them (None when they cannot be read)."""
    try:
        parts = json.loads(recorded)
    except (TypeError, ValueError):
        return None
    if not isinstance(parts, list):
        return None
    contents: list[str] = []
    for part in cast("list[Any]", parts):
        content = cast("dict[str, Any]", part).get("content") if isinstance(part, dict) else None
        if isinstance(content, str):
            contents.append(content)
    return contents


def _extend_agent_instructions(parent: Any, texts: list[str]) -> None:
    """Give the ``invoke_agent`` span a model call runs in the call's full instructions.

    Only when they extend what the agent span holds (the agent's own instructions, to which context providers
    and the run's options add): an unrelated model call made during the run (a context provider asking
    another model, say) leaves the agent's instructions alone.
    """
    if parent is None or tel.span_attribute(parent, tel.GEN_AI_OPERATION_NAME) != tel.OP_INVOKE_AGENT:
        return
    if not parent.is_recording():
        return
    recorded = tel.span_attribute(parent, tel.GEN_AI_SYSTEM_INSTRUCTIONS)
    new = "\n".join(texts)
    if recorded is not None:
        existing = _instruction_contents(recorded)
        if existing is None:
            return
        old = "\n".join(existing)
        if new != old and not new.startswith(f"{old}\n"):
            return
    tel.record_sensitive(parent, tel.GEN_AI_SYSTEM_INSTRUCTIONS, texts)


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
        if tel.sensitive_data_enabled():
            _record_chat_input(span, context)
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
