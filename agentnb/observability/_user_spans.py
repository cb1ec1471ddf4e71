"""Spans that code of one's own opens beside agentnb's: MCP client requests, tool executions, errors on spans.

``create_mcp_client_span("tools/call", "get_weather")`` opens a CLIENT span named ``tools/call get_weather``
with ``mcp.method.name`` set, current for what runs inside it, and ended on exit. Like agentnb's own spans
it obeys the instrumentation switches: with instrumentation off the span is a non-recording one, and an
error's message reaches the span only with sensitive-data capture on (it may quote user data).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .. import _telemetry
from ._otel import get_tracer
from ._resources import OtelAttr

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = [
    "capture_exception",
    "create_mcp_client_span",
    "get_function_span",
    "get_function_span_attributes",
    "set_mcp_span_error",
]


def capture_exception(span: Span, exception: BaseException, timestamp: int | None = None) -> None:
    """Mark ``span`` as failed with ``error.type``; the exception itself only with sensitive-data capture on."""
    from opentelemetry.trace import StatusCode

    span.set_attribute(OtelAttr.ERROR_TYPE.value, type(exception).__name__)
    if _telemetry.sensitive_data_enabled():
        span.record_exception(exception, timestamp=timestamp)
        span.set_status(StatusCode.ERROR, repr(exception))
    else:
        span.set_status(StatusCode.ERROR)


@contextmanager
def create_mcp_client_span(
    method_name: str,
    target: str | None = None,
    attributes: dict[str, Any] | None = None,
    *,
    capture_unhandled_exceptions: bool = True,
) -> Generator[Span]:
    """Run the block inside a CLIENT span for one MCP request (``{method} {target}``, or ``{method}``).

    Args:
        method_name: The MCP method (``initialize``, ``tools/call``, ``prompts/get``, ...).
        target: A low-cardinality target such as the tool or prompt name.
        attributes: More span attributes.
        capture_unhandled_exceptions: Record an exception that leaves the block with
            :func:`capture_exception`; turn off when the caller sets a protocol error type itself
            (:func:`set_mcp_span_error`), and the exception is then only attached with sensitive data on.

    Example:
        ```python
        from agentnb.observability import create_mcp_client_span

        with create_mcp_client_span("tools/call", "get_weather") as span:
            span.set_attribute("mcp.session.id", "abc")
        ```
    """
    from opentelemetry import trace

    tracer = get_tracer() if _telemetry.is_enabled() else trace.NoOpTracer()
    span = tracer.start_span(
        f"{method_name} {target}" if target else method_name,
        kind=trace.SpanKind.CLIENT,
        attributes={OtelAttr.MCP_METHOD_NAME.value: method_name, **(attributes or {})},
    )
    with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
        try:
            yield span
        except Exception as e:
            if capture_unhandled_exceptions:
                capture_exception(span, e)
            elif _telemetry.sensitive_data_enabled():
                span.record_exception(e)
            raise


def set_mcp_span_error(span: Span, error_type: str, description: str | None = None) -> None:
    """Mark an MCP span as failed with ``error.type`` (the description only with sensitive-data capture on)."""
    from opentelemetry.trace import StatusCode

    span.set_attribute(OtelAttr.ERROR_TYPE.value, error_type)
    span.set_status(StatusCode.ERROR, description if _telemetry.sensitive_data_enabled() else None)


def get_function_span_attributes(function: Any, tool_call_id: str | None = None) -> dict[str, str]:
    """The ``execute_tool`` span attributes of a tool (``name`` and ``description``) and, given, its call id."""
    attributes = {
        OtelAttr.OPERATION.value: OtelAttr.TOOL_EXECUTION_OPERATION.value,
        OtelAttr.TOOL_NAME.value: str(function.name),
        OtelAttr.TOOL_TYPE.value: "function",
    }
    if tool_call_id:
        attributes[OtelAttr.TOOL_CALL_ID.value] = tool_call_id
    description = getattr(function, "description", None)
    if description:
        attributes[OtelAttr.TOOL_DESCRIPTION.value] = str(description)
    return attributes


@contextmanager
def get_function_span(attributes: dict[str, Any]) -> Generator[Span]:
    """Run the block inside an ``execute_tool {tool}`` span with ``attributes``.

    ``attributes`` are typically :func:`get_function_span_attributes`'s. The span is current inside the
    block and ended on exit; an exception leaving the block is recorded with :func:`capture_exception`.
    """
    from opentelemetry import trace

    plain = {str(getattr(key, "value", key)): value for key, value in attributes.items()}
    tracer = get_tracer() if _telemetry.is_enabled() else trace.NoOpTracer()
    span = tracer.start_span(f"{OtelAttr.TOOL_EXECUTION_OPERATION.value} {plain.get(OtelAttr.TOOL_NAME.value)}")
    span.set_attributes(plain)
    with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
        try:
            yield span
        except Exception as e:
            capture_exception(span, e)
            raise
