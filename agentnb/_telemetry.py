"""OpenTelemetry instrumentation of agent runs, model calls and tool calls (GenAI semantic conventions).

Only ``opentelemetry-api`` is used here, and only once instrumentation is switched on
(``agentnb.observability.enable_instrumentation()`` or ``configure_otel_providers()``, or the
``AGENTNB_ENABLE_INSTRUMENTATION`` environment variable): until then every helper returns ``None`` after
one flag check, so an uninstrumented run pays nothing for tracing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "ERROR_TYPE",
    "GEN_AI_AGENT_ID",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "enable",
    "end_span",
    "is_enabled",
    "sensitive_data_enabled",
    "start_span",
    "use_span",
]

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
ERROR_TYPE = "error.type"

_state = {"enabled": os.environ.get("AGENTNB_ENABLE_INSTRUMENTATION", "").lower() in ("1", "true"), "sensitive": False}
_tracer: Any = None


def enable(*, sensitive_data: bool = False) -> None:
    """Switch span emission on (idempotent); ``sensitive_data`` also records messages and tool data."""
    _state["enabled"] = True
    _state["sensitive"] = sensitive_data


def disable() -> None:
    """Switch span emission off again."""
    _state["enabled"] = False
    _state["sensitive"] = False


def is_enabled() -> bool:
    """Whether spans are being emitted."""
    return bool(_state["enabled"])


def sensitive_data_enabled() -> bool:
    """Whether prompts, replies and tool data may be recorded on spans."""
    return bool(_state["enabled"] and _state["sensitive"])


def _get_tracer() -> Any:
    global _tracer
    if _tracer is None:
        from opentelemetry import trace

        _tracer = trace.get_tracer("agentnb")
    return _tracer


def start_span(name: str, attributes: dict[str, Any] | None = None, *, kind: str = "internal") -> Any:
    """Start a span as a child of the current one; ``None`` when instrumentation is off."""
    if not _state["enabled"]:
        return None
    from opentelemetry.trace import SpanKind

    span_kind = SpanKind.CLIENT if kind == "client" else SpanKind.INTERNAL
    clean = {k: v for k, v in (attributes or {}).items() if v is not None}
    return _get_tracer().start_span(name, attributes=clean, kind=span_kind)


@contextmanager
def use_span(span: Any) -> Iterator[Any]:
    """Make ``span`` current for the block, so spans started inside become its children."""
    if span is None:
        yield None
        return
    from opentelemetry import trace

    with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
        yield span


def end_span(span: Any, *, error: BaseException | None = None, attributes: dict[str, Any] | None = None) -> None:
    """Finish a span, recording the error type and status when the step failed."""
    if span is None:
        return
    if attributes:
        span.set_attributes({k: v for k, v in attributes.items() if v is not None})
    if error is not None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute(ERROR_TYPE, type(error).__qualname__)
        span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        span.record_exception(error)
    span.end()
