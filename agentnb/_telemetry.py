"""OpenTelemetry instrumentation of agent runs, model calls and tool calls (GenAI semantic conventions).

Only ``opentelemetry-api`` is used here, and only once instrumentation is switched on
(``agentnb.observability.enable_instrumentation()`` or ``configure_otel_providers()``, or the
``ENABLE_INSTRUMENTATION`` environment variable, also spelled ``AGENTNB_ENABLE_INSTRUMENTATION``): until then
every helper returns after one flag check, so an uninstrumented run pays nothing for tracing. Switched on
without a tracer provider (only the API's no-op one), spans are skipped the same way instead of being created
as non-recording ones. ``ENABLE_SENSITIVE_DATA`` (or ``AGENTNB_ENABLE_SENSITIVE_DATA``) turns on the capture
of messages and tool data for instrumentation switched on by the environment. When every span processor of
the SDK provider is one of agentnb's span stores, the spans are agentnb's light spans
(:mod:`agentnb._telemetry_spans`), which cost a fraction of SDK spans; any other processor, such as an
exporter, gets SDK spans as usual.

Spans: ``invoke_agent {agent}`` around a turn, ``chat {model}`` around each model call (kind CLIENT),
``execute_tool {tool}`` around each tool call; workflows add ``workflow.run``, ``workflow.superstep`` and
``executor.process``. Model calls and tool calls inherit the agent id and name, the conversation id
and the run id from the span they run in, so each span can be filtered by agent on its own. Messages,
tool arguments and tool results are recorded only with sensitive-data capture on (off by default).

Metrics (histograms, through the global meter provider): ``gen_ai.client.operation.duration`` (seconds)
for every agent, model and tool operation, and ``gen_ai.client.token.usage`` (tokens) per model call,
tagged by operation, provider, model, agent name and (for tokens) ``gen_ai.token.type``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import Any, cast

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as _gen_ai
from opentelemetry.semconv.attributes import error_attributes as _error

from ._json import is_list_or_tuple

__all__ = [
    "BUILD_ERROR_MESSAGE",
    "BUILD_ERROR_TYPE",
    "ERROR_TYPE",
    "EVENT_BUILD_COMPLETED",
    "EVENT_BUILD_ERROR",
    "EVENT_BUILD_STARTED",
    "EVENT_BUILD_VALIDATION_COMPLETED",
    "EVENT_WORKFLOW_COMPLETED",
    "EVENT_WORKFLOW_ERROR",
    "EVENT_WORKFLOW_STARTED",
    "EXECUTOR_ID",
    "EXECUTOR_TYPE",
    "FUNCTION_INVOCATION_DURATION",
    "FUNCTION_NAME",
    "GEN_AI_AGENT_DESCRIPTION",
    "GEN_AI_AGENT_ID",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_OUTPUT_MESSAGES",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MAX_TOKENS",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_REQUEST_SEED",
    "GEN_AI_REQUEST_TEMPERATURE",
    "GEN_AI_REQUEST_TOP_P",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_SYSTEM_INSTRUCTIONS",
    "GEN_AI_TOKEN_TYPE",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_DESCRIPTION",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "INNER_ACCUMULATED_USAGE",
    "INNER_RESPONSE_ID_CAPTURED_FIELD",
    "INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS",
    "INNER_USAGE_CAPTURED_FIELD",
    "MESSAGE_PAYLOAD_TYPE",
    "MESSAGE_SOURCE_ID",
    "MESSAGE_TARGET_ID",
    "MESSAGE_TYPE",
    "OPENINFERENCE_SPAN_KIND",
    "OP_CHAT",
    "OP_EXECUTE_TOOL",
    "OP_INVOKE_AGENT",
    "SPAN_EXECUTOR",
    "SPAN_MESSAGE_SEND",
    "SPAN_SUPERSTEP",
    "SPAN_WORKFLOW_BUILD",
    "SPAN_WORKFLOW_RUN",
    "WORKFLOW_BUILDER_DESCRIPTION",
    "WORKFLOW_BUILDER_NAME",
    "WORKFLOW_DEFINITION",
    "WORKFLOW_ID",
    "WORKFLOW_NAME",
    "WORKFLOW_RUN_ID",
    "WORKFLOW_STEP",
    "WORKFLOW_STEPS",
    "InnerResponses",
    "current_span",
    "disable",
    "enable",
    "end_span",
    "env_switch",
    "instruction_texts",
    "is_enabled",
    "note_inner_response",
    "record_sensitive",
    "recording",
    "sensitive_data_enabled",
    "set_switches",
    "span_attribute",
    "start_span",
    "use_span",
]

# --- attribute names (OpenTelemetry GenAI semantic conventions, plus agentnb's own) --------------------
# The conventions' own constants wherever the semantic-conventions package defines them.
GEN_AI_OPERATION_NAME = _gen_ai.GEN_AI_OPERATION_NAME
GEN_AI_PROVIDER_NAME = _gen_ai.GEN_AI_PROVIDER_NAME
GEN_AI_REQUEST_MODEL = _gen_ai.GEN_AI_REQUEST_MODEL
GEN_AI_REQUEST_TEMPERATURE = _gen_ai.GEN_AI_REQUEST_TEMPERATURE
GEN_AI_REQUEST_TOP_P = _gen_ai.GEN_AI_REQUEST_TOP_P
GEN_AI_REQUEST_MAX_TOKENS = _gen_ai.GEN_AI_REQUEST_MAX_TOKENS
GEN_AI_REQUEST_SEED = _gen_ai.GEN_AI_REQUEST_SEED
GEN_AI_RESPONSE_MODEL = _gen_ai.GEN_AI_RESPONSE_MODEL
GEN_AI_RESPONSE_ID = _gen_ai.GEN_AI_RESPONSE_ID
GEN_AI_RESPONSE_FINISH_REASONS = _gen_ai.GEN_AI_RESPONSE_FINISH_REASONS
GEN_AI_USAGE_INPUT_TOKENS = _gen_ai.GEN_AI_USAGE_INPUT_TOKENS
GEN_AI_USAGE_OUTPUT_TOKENS = _gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS
GEN_AI_AGENT_ID = _gen_ai.GEN_AI_AGENT_ID
GEN_AI_AGENT_NAME = _gen_ai.GEN_AI_AGENT_NAME
GEN_AI_AGENT_DESCRIPTION = _gen_ai.GEN_AI_AGENT_DESCRIPTION
GEN_AI_CONVERSATION_ID = _gen_ai.GEN_AI_CONVERSATION_ID
GEN_AI_TOOL_NAME = _gen_ai.GEN_AI_TOOL_NAME
GEN_AI_TOOL_CALL_ID = _gen_ai.GEN_AI_TOOL_CALL_ID
GEN_AI_TOOL_TYPE = _gen_ai.GEN_AI_TOOL_TYPE
GEN_AI_TOOL_DESCRIPTION = _gen_ai.GEN_AI_TOOL_DESCRIPTION
GEN_AI_TOKEN_TYPE = _gen_ai.GEN_AI_TOKEN_TYPE
ERROR_TYPE = _error.ERROR_TYPE
# Sensitive: recorded only when sensitive-data capture is on.
GEN_AI_INPUT_MESSAGES = _gen_ai.GEN_AI_INPUT_MESSAGES
GEN_AI_OUTPUT_MESSAGES = _gen_ai.GEN_AI_OUTPUT_MESSAGES
GEN_AI_SYSTEM_INSTRUCTIONS = _gen_ai.GEN_AI_SYSTEM_INSTRUCTIONS
GEN_AI_TOOL_CALL_ARGUMENTS = _gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS
GEN_AI_TOOL_CALL_RESULT = _gen_ai.GEN_AI_TOOL_CALL_RESULT
# Workflows (agentnb's own names): the run id links spans to the run store's runs.
WORKFLOW_RUN_ID = "workflow.run_id"
# agentnb's own: what compaction left out of a model call (set on its chat span when something was).
COMPACTION_GROUPS_EXCLUDED = "agentnb.compaction.groups_excluded"
COMPACTION_TOKENS_SENT = "agentnb.compaction.tokens_sent"
COMPACTION_TOKEN_BUDGET = "agentnb.compaction.token_budget"
# agentnb's own: the tool a tool-duration measurement is of, and that measurement (a tool's own histogram).
FUNCTION_NAME = "agentnb.function.name"
FUNCTION_INVOCATION_DURATION = "agentnb.function.invocation.duration"
WORKFLOW_NAME = "workflow.name"
WORKFLOW_ID = "workflow.id"
WORKFLOW_STEP = "workflow.step"
WORKFLOW_STEPS = "workflow.steps"
EXECUTOR_ID = "executor.id"
EXECUTOR_TYPE = "executor.type"

# --- operation and span names -----------------------------------------------------------------------
# The GenAI conventions' operation names, written out: the semconv package deprecates its enum of them.
OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"
# OpenInference's name for what a span is (AGENT, LLM, TOOL, CHAIN): Phoenix and other OpenInference
# viewers show spans by it, and it is not part of the OpenTelemetry conventions.
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
SPAN_WORKFLOW_RUN = "workflow.run"
SPAN_WORKFLOW_BUILD = "workflow.build"
SPAN_SUPERSTEP = "workflow.superstep"
SPAN_EXECUTOR = "executor.process"
SPAN_MESSAGE_SEND = "message.send"
# Events on the workflow spans (the reference's names), and the build span's attributes.
EVENT_WORKFLOW_STARTED = "workflow.started"
EVENT_WORKFLOW_COMPLETED = "workflow.completed"
EVENT_WORKFLOW_ERROR = "workflow.error"
EVENT_BUILD_STARTED = "build.started"
EVENT_BUILD_VALIDATION_COMPLETED = "build.validation_completed"
EVENT_BUILD_COMPLETED = "build.completed"
EVENT_BUILD_ERROR = "build.error"
BUILD_ERROR_MESSAGE = "build.error.message"
BUILD_ERROR_TYPE = "build.error.type"
WORKFLOW_BUILDER_NAME = "workflow_builder.name"
WORKFLOW_BUILDER_DESCRIPTION = "workflow_builder.description"
WORKFLOW_DEFINITION = "workflow.definition"
MESSAGE_SOURCE_ID = "message.source_id"
MESSAGE_TARGET_ID = "message.target_id"
MESSAGE_TYPE = "message.type"
MESSAGE_PAYLOAD_TYPE = "message.payload_type"

# Bucket boundaries the GenAI semantic conventions recommend for these two histograms.
_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)

# Attributes a child span takes over from the span it runs in (so a model call knows its agent).
_INHERITED = (GEN_AI_AGENT_ID, GEN_AI_AGENT_NAME, GEN_AI_CONVERSATION_ID, WORKFLOW_RUN_ID)
# Tags of the metrics, read from the span's attributes when it ends.
_METRIC_TAGS = (GEN_AI_OPERATION_NAME, GEN_AI_PROVIDER_NAME, GEN_AI_AGENT_NAME, GEN_AI_TOOL_NAME, ERROR_TYPE)
_GEN_AI_OPERATIONS = frozenset({OP_INVOKE_AGENT, OP_CHAT, OP_EXECUTE_TOOL})


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def env_switch(name: str) -> bool:
    """A switch from the environment: the reference's ``NAME`` when set, else agentnb's ``AGENTNB_NAME``.

    Both spellings are read so that an environment written for the reference (``ENABLE_INSTRUMENTATION``,
    ``ENABLE_SENSITIVE_DATA``) works unchanged; unset, the switch is off.
    """
    if os.environ.get(name) is not None:
        return _env_flag(name)
    return _env_flag(f"AGENTNB_{name}")


_state = {
    "enabled": env_switch("ENABLE_INSTRUMENTATION"),
    "sensitive": env_switch("ENABLE_SENSITIVE_DATA"),
}
# The tracer of the real provider, once one is set (OpenTelemetry lets a process set it only once).
_tracer: Any = None
_instruments: dict[str, Any] = {}
_meter_live = False
# The API modules, imported on first use (``import agentnb`` stays free of OpenTelemetry).
_trace_api: Any = None
_metrics_api: Any = None
_UNKNOWN = object()
# What a span passes on to the spans started inside it (see _INHERITED), set while it is current.
_inherited: ContextVar[dict[str, Any] | None] = ContextVar("agentnb_inherited_attributes", default=None)
# Starts an agentnb light span, or returns None when the SDK must make the span; loaded by the first span
# (None when the SDK is not installed).
_light: Callable[[Any, str, dict[str, Any], Any], Any] | object | None = _UNKNOWN


# Response telemetry that the model calls inside an agent's run recorded on their own ``chat`` spans: the agent's
# span leaves out a response id one of them recorded and sums their token usage instead of repeating it. Each
# agent run sets both to fresh, mutable values (see ``InnerResponses``); a model call outside any run sees None.
INNER_RESPONSE_ID_CAPTURED_FIELD = "response_id"
INNER_USAGE_CAPTURED_FIELD = "usage"
INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS: ContextVar[set[str] | None] = ContextVar(
    "agentnb_inner_response_telemetry_captured_fields", default=None
)
INNER_ACCUMULATED_USAGE: ContextVar[dict[str, Any] | None] = ContextVar("agentnb_inner_accumulated_usage", default=None)


class InnerResponses:
    """What the model calls inside one agent run recorded: set current for the run (``with``), read after it.

    Entering makes fresh values current; leaving puts the previous ones back (by value, so that a streamed run
    whose generator is finished from another context cannot fail on a context token).
    """

    __slots__ = ("_previous", "fields", "usage")

    def __init__(self) -> None:
        self.fields: set[str] = set()
        self.usage: dict[str, Any] = {}
        self._previous: tuple[set[str] | None, dict[str, Any] | None] = (None, None)

    def __enter__(self) -> InnerResponses:
        self._previous = (INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS.get(), INNER_ACCUMULATED_USAGE.get())
        INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS.set(self.fields)
        INNER_ACCUMULATED_USAGE.set(self.usage)
        return self

    def __exit__(self, *exc: object) -> None:
        INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS.set(self._previous[0])
        INNER_ACCUMULATED_USAGE.set(self._previous[1])


def note_inner_response(response_id: str | None, usage: Mapping[str, Any] | None) -> None:
    """Tell the enclosing agent run (if any) that a model call's span recorded this response id and usage."""
    fields = INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS.get()
    if fields is None:
        return
    if response_id:
        fields.add(INNER_RESPONSE_ID_CAPTURED_FIELD)
    if usage:
        fields.add(INNER_USAGE_CAPTURED_FIELD)
        total = INNER_ACCUMULATED_USAGE.get()
        if total is not None:
            for key, count in usage.items():
                if isinstance(count, int) and not isinstance(count, bool):
                    total[key] = total.get(key, 0) + count


def current_span() -> Any:
    """The span current in this context (the API's invalid span when there is none)."""
    return _api().get_current_span()


def enable(*, sensitive_data: bool | None = None) -> None:
    """Switch span emission on (idempotent); ``sensitive_data`` also records messages and tool data.

    ``None`` takes ``ENABLE_SENSITIVE_DATA`` (or ``AGENTNB_ENABLE_SENSITIVE_DATA``) from the environment
    (off when unset).
    """
    _state["enabled"] = True
    _state["sensitive"] = env_switch("ENABLE_SENSITIVE_DATA") if sensitive_data is None else sensitive_data


def disable() -> None:
    """Switch span emission off again."""
    _state["enabled"] = False
    _state["sensitive"] = False


def set_switches(*, enabled: bool, sensitive: bool) -> None:
    """Set both switches at once (what the active ``ObservabilitySettings`` says)."""
    _state["enabled"] = enabled
    _state["sensitive"] = sensitive


def is_enabled() -> bool:
    """Whether spans are being emitted."""
    return bool(_state["enabled"])


def sensitive_data_enabled() -> bool:
    """Whether prompts, replies and tool data may be recorded on spans."""
    return bool(_state["enabled"] and _state["sensitive"])


def _global_provider(module: Any, name: str) -> Any:
    """The provider an OpenTelemetry API module holds in its global ``name`` (``None`` while none is set).

    While instrumentation is on but no provider is set, every traced call asks this. The API's public
    getters cost about a microsecond each (they look the environment up on every call), a fifth of a whole
    turn's budget, and the API offers no notice when a provider is set; so the global the setter writes is
    read directly. Should the API ever drop that name, ``_UNKNOWN`` sends the caller to the public getter.
    """
    return getattr(module, name, _UNKNOWN)


def _resolve_tracer() -> Any:
    """Return agentnb's tracer, or ``None`` while no tracer provider is set (only the API's no-op one).

    Without a provider every span would be a non-recording one: skipping them entirely is what makes
    instrumentation that is on but has nowhere to send spans cost next to nothing. The first call goes
    through the public ``get_tracer_provider()``, which also loads a provider named by
    ``OTEL_PYTHON_TRACER_PROVIDER``; later calls look at the API's global only (see :func:`_global_provider`).
    """
    global _tracer, _trace_api
    api = _trace_api
    if api is None:
        from opentelemetry import trace as api

        provider = api.get_tracer_provider()
        _trace_api = api
    else:
        provider = _global_provider(api, "_TRACER_PROVIDER")
        if provider is None:
            return None
        if provider is _UNKNOWN:
            provider = api.get_tracer_provider()
    if isinstance(provider, (api.ProxyTracerProvider, api.NoOpTracerProvider)):
        return None
    _tracer = provider.get_tracer("agentnb")
    return _tracer


def _load_light_spans() -> Callable[[Any, str, dict[str, Any], Any], Any] | None:
    """Load light spans (see :mod:`agentnb._telemetry_spans`), or ``None`` without the SDK."""
    global _light
    try:
        from ._telemetry_spans import start_light_span
    except ImportError:  # the API without the SDK: its tracers make the spans
        _light = None
        return None
    _light = start_light_span
    return start_light_span


def recording() -> bool:
    """Whether spans started now are recorded: instrumentation is on and a tracer provider is set."""
    return bool(_state["enabled"]) and (_tracer is not None or _resolve_tracer() is not None)


def _metrics_on() -> bool:
    """Whether a meter provider is set (before that, recording a measurement would reach nobody).

    Runs at the end of every span until a meter provider is set, so it reads the API's global the way
    :func:`_resolve_tracer` does.
    """
    global _meter_live, _metrics_api
    if _meter_live:
        return True
    if _metrics_api is None:
        try:
            from opentelemetry.metrics import _internal
        except ImportError:  # an API that moved it: the public getter answers instead (see _global_provider)
            _internal = object()
        _metrics_api = _internal
    provider = _global_provider(_metrics_api, "_METER_PROVIDER")
    if provider is None:
        return False
    from opentelemetry import metrics

    if provider is _UNKNOWN:
        provider = metrics.get_meter_provider()
    _meter_live = not isinstance(provider, metrics.NoOpMeterProvider) and "Proxy" not in type(provider).__name__
    return _meter_live


def _get_instruments() -> dict[str, Any]:
    # The API meter is a proxy until a meter provider is set, so instruments made early start recording later.
    if not _instruments:
        from opentelemetry import metrics
        from opentelemetry.semconv._incubating.metrics import gen_ai_metrics

        meter = metrics.get_meter("agentnb")
        _instruments["duration"] = meter.create_histogram(
            gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="Duration of GenAI operations (agent turns, model calls, tool calls).",
            explicit_bucket_boundaries_advisory=list(_DURATION_BUCKETS),
        )
        _instruments["tokens"] = meter.create_histogram(
            gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Input and output tokens used per model call.",
            explicit_bucket_boundaries_advisory=list(_TOKEN_BUCKETS),
        )
    return _instruments


_KINDS = {
    "internal": "INTERNAL",
    "client": "CLIENT",
    "server": "SERVER",
    "producer": "PRODUCER",
    "consumer": "CONSUMER",
}


class _Api:
    """The opentelemetry-api names the helpers use, imported once on first use (not per span)."""

    loaded = False
    get_current_span: Any
    set_span_in_context: Any
    attach: Any
    detach: Any
    kinds: dict[str, Any]
    Status: Any
    ERROR: Any

    @classmethod
    def load(cls) -> type[_Api]:
        from opentelemetry import context, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        cls.get_current_span = staticmethod(trace.get_current_span)
        cls.set_span_in_context = staticmethod(trace.set_span_in_context)
        cls.attach = staticmethod(context.attach)
        cls.detach = staticmethod(context.detach)
        cls.kinds = {key: SpanKind[value] for key, value in _KINDS.items()}
        cls.Status = Status
        cls.ERROR = StatusCode.ERROR
        cls.loaded = True
        return cls


def _api() -> type[_Api]:
    return _Api if _Api.loaded else _Api.load()


def start_span(name: str, attributes: dict[str, Any] | None = None, *, kind: str = "internal") -> Any:
    """Start a span as a child of the current one; ``None`` when nothing would record it.

    ``None`` attribute values are dropped. The agent id and name, conversation id and run id of the
    enclosing agentnb span are inherited unless ``attributes`` sets them; the OpenInference span kind is
    ``CHAIN`` unless ``attributes`` names another.
    """
    if not _state["enabled"]:
        return None
    tracer = _tracer if _tracer is not None else _resolve_tracer()
    if tracer is None:
        return None
    api = _Api if _Api.loaded else _Api.load()
    clean = {k: v for k, v in attributes.items() if v is not None} if attributes else {}
    if OPENINFERENCE_SPAN_KIND not in clean:
        clean[OPENINFERENCE_SPAN_KIND] = "CHAIN"  # a workflow step: OpenInference's name for any other step
    parent = _inherited.get()
    if parent:
        clean = parent | clean  # the span's own values win
    span_kind = api.kinds.get(kind) or api.kinds["internal"]
    light = _load_light_spans() if _light is _UNKNOWN else cast("Callable[..., Any] | None", _light)
    if light is not None:
        span = light(tracer, name, clean, span_kind)
        if span is not None:
            return span
    return tracer.start_span(name, attributes=clean, kind=span_kind)


def span_attribute(span: Any, key: str) -> Any:
    """One attribute of a span (``None`` when unset, or when the span records nothing)."""
    attributes = getattr(span, "attributes", None)
    return attributes.get(key) if attributes else None


def _plain_attributes(span: Any) -> dict[str, Any]:
    """A span's attributes as a plain dict (an SDK span's read-only mapping copies itself in one C call)."""
    attributes = getattr(span, "attributes", None)  # API spans that record nothing have none
    if not attributes:
        return {}
    try:
        return attributes.copy()
    except AttributeError:
        return dict(attributes)


class _Current:
    """Make a span the current one for a block (``opentelemetry.trace.use_span`` without its generator).

    It also makes the span's inheritable attributes (``_INHERITED``) what spans started inside take over,
    kept in a context variable of their own so that starting a span never reads another span's attributes.
    """

    __slots__ = ("_context", "_inherit", "_inherit_token", "_token")

    def __init__(self, span: Any) -> None:
        self._context = _api().set_span_in_context(span)
        # Read in place where the span keeps a mapping of its own (SDK and light spans): no copy per span.
        own: Mapping[str, Any] | None = getattr(span, "_attributes", None)
        if not isinstance(own, Mapping):
            own = _plain_attributes(span)
        self._inherit = {key: own[key] for key in _INHERITED if key in own} or None
        self._token: Any = None
        self._inherit_token: Any = None

    def __enter__(self) -> None:
        self._token = _Api.attach(self._context)
        self._inherit_token = _inherited.set(self._inherit)

    def __exit__(self, *exc: object) -> None:
        _inherited.reset(self._inherit_token)
        _Api.detach(self._token)


_NO_SPAN = nullcontext()


def use_span(span: Any) -> AbstractContextManager[Any]:
    """Make ``span`` current for the block, so spans started inside become its children."""
    if span is None:
        return _NO_SPAN  # the common, uninstrumented case costs one comparison
    return _Current(span)


def end_span(span: Any, *, error: BaseException | None = None, attributes: dict[str, Any] | None = None) -> None:
    """Finish a span, recording the error type and status when the step failed, and the metrics."""
    if span is None:
        return
    if attributes:
        span.set_attributes({k: v for k, v in attributes.items() if v is not None})
    if error is not None:
        api = _api()
        span.set_attribute(ERROR_TYPE, type(error).__qualname__)
        span.set_status(api.Status(api.ERROR, str(error)[:500]))
        span.record_exception(error)
    span.end()
    if _meter_live or _metrics_on():
        start_ns = getattr(span, "start_time", None)
        recorded = _plain_attributes(span)
        if recorded and start_ns and recorded.get(GEN_AI_OPERATION_NAME) in _GEN_AI_OPERATIONS:
            _record_metrics(recorded, (time.time_ns() - start_ns) / 1e9)


def _record_metrics(attributes: Mapping[str, Any], seconds: float) -> None:
    instruments = _get_instruments()
    tags = {key: attributes[key] for key in _METRIC_TAGS if key in attributes}
    model = attributes.get(GEN_AI_RESPONSE_MODEL) or attributes.get(GEN_AI_REQUEST_MODEL)
    if model:
        tags[GEN_AI_REQUEST_MODEL] = model
    instruments["duration"].record(seconds, tags)
    if attributes.get(GEN_AI_OPERATION_NAME) != OP_CHAT:
        return  # an agent's tokens are its model calls' tokens: count them once
    for key, token_type in ((GEN_AI_USAGE_INPUT_TOKENS, "input"), (GEN_AI_USAGE_OUTPUT_TOKENS, "output")):
        count = attributes.get(key)
        if count is not None:
            instruments["tokens"].record(count, {**tags, GEN_AI_TOKEN_TYPE: token_type})


# --- sensitive data -----------------------------------------------------------------------------------


def record_sensitive(span: Any, key: str, value: Any, *, finish_reason: str | None = None) -> None:
    """Record messages, tool arguments or a tool result on ``span``, only when sensitive-data capture is on.

    Lists of messages are written in the GenAI semantic conventions' JSON shape (role plus typed parts), system
    instructions as a list of text parts, tool arguments as a plain JSON object; other values as JSON. Nothing
    is computed when capture is off.
    """
    if span is None or not _state["sensitive"]:
        return
    try:
        if key in (GEN_AI_INPUT_MESSAGES, GEN_AI_OUTPUT_MESSAGES):
            text = json.dumps(_messages_json(value, finish_reason=finish_reason), ensure_ascii=False, default=str)
        elif key == GEN_AI_SYSTEM_INSTRUCTIONS:
            text = _instructions_json(value)
        elif key == GEN_AI_TOOL_CALL_ARGUMENTS:
            text = _arguments_json(value)
        else:
            text = _value_json(value)
    except Exception as e:  # telemetry must never break a run
        text = f"<unserializable {type(value).__name__}: {e}>"
    span.set_attribute(key, text)


def instruction_texts(instructions: Any) -> list[str]:
    """The instructions as a list of texts: a string, a list of strings, or (as providers widen them) mappings
    with a ``text``; anything else and empty texts are left out."""
    items: Iterable[Any] = instructions if is_list_or_tuple(instructions) else [instructions]
    texts: list[str] = []
    for item in items:
        text: Any = cast("Mapping[str, Any]", item).get("text") if isinstance(item, Mapping) else item
        if isinstance(text, str) and text:
            texts.append(text)
    return texts


def _instructions_json(instructions: Any) -> str:
    """System instructions in the GenAI conventions' shape: a JSON list of text parts."""
    parts = [{"type": "text", "content": text} for text in instruction_texts(instructions)]
    return json.dumps(parts, ensure_ascii=False)


def _plain_default(value: Any) -> Any:
    """What ``json.dumps`` writes for a value it cannot: a pydantic model's fields, else the value's text."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else str(value)


def _arguments_json(arguments: Any) -> str:
    """Tool arguments as the plain JSON object the tool was called with (pydantic models as their fields)."""
    if callable(getattr(arguments, "model_dump", None)):
        arguments = _plain_default(arguments)
    return json.dumps(arguments, ensure_ascii=False, default=_plain_default)


def _value_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    from ._serialization import dumps

    try:
        return dumps(value)
    except Exception:
        return json.dumps(value, ensure_ascii=False, default=str)


def _part_json(content: Any) -> dict[str, Any]:
    kind = getattr(content, "type", None)
    if kind == "text":
        return {"type": "text", "content": content.text}
    if kind == "text_reasoning":
        return {"type": "reasoning", "content": content.text}
    if kind == "function_call":
        return {"type": "tool_call", "id": content.call_id, "name": content.name, "arguments": content.arguments}
    if kind == "function_result":
        response = content.result if content.exception is None else content.exception
        return {"type": "tool_call_response", "id": content.call_id, "response": response}
    if kind in ("data", "uri"):
        return {"type": "blob" if kind == "data" else "uri", "mime_type": getattr(content, "media_type", None)}
    return {"type": str(kind)}


def _messages_json(messages: Any, *, finish_reason: str | None) -> list[dict[str, Any]]:
    items: Iterable[Any] = messages if is_list_or_tuple(messages) else [messages]
    out: list[dict[str, Any]] = []
    for message in items:
        if isinstance(message, str):
            out.append({"role": "user", "parts": [{"type": "text", "content": message}]})
            continue
        entry: dict[str, Any] = {
            "role": getattr(message, "role", "user"),
            "parts": [_part_json(c) for c in getattr(message, "contents", [])],
        }
        if finish_reason is not None:
            entry["finish_reason"] = finish_reason
        out.append(entry)
    return out
