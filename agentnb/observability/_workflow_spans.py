"""Workflow spans for code of one's own: a run or step span, an executor's processing span, an edge group's span.

agentnb's runners trace themselves (``workflow.run``, ``workflow.superstep``, ``executor.process``; see
:mod:`agentnb.workflows`). These helpers let a custom runner, executor or edge routine open the same kinds of
spans the reference's workflow helpers open, under agentnb's tracer: :func:`create_workflow_span` for any
named step, :func:`create_processing_span` for one message handled by one executor and
:func:`create_edge_group_processing_span` for an edge group routing a message, the last two linked (not
nested) to the spans that sent the message, given their W3C ``traceparent`` and span ids. With
instrumentation off, :func:`workflow_tracer` is the API's no-op tracer, so the spans cost nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping
from enum import Enum
from typing import TYPE_CHECKING

from .. import _telemetry
from ._otel import get_tracer
from ._resources import OtelAttr
from ._user_spans import capture_exception

if TYPE_CHECKING:
    from opentelemetry.trace import Link, Span, SpanKind, Tracer

__all__ = [
    "EdgeGroupDeliveryStatus",
    "create_edge_group_processing_span",
    "create_processing_span",
    "create_workflow_span",
    "start_workflow_span",
    "workflow_tracer",
]


class EdgeGroupDeliveryStatus(Enum):
    """What became of a message an edge group routed (the value of ``edge_group.delivery_status``)."""

    DELIVERED = "delivered"
    DROPPED_TYPE_MISMATCH = "dropped type mismatch"
    DROPPED_TARGET_MISMATCH = "dropped target mismatch"
    DROPPED_CONDITION_FALSE = "dropped condition evaluated to false"
    EXCEPTION = "exception"
    BUFFERED = "buffered"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return self.value


def workflow_tracer() -> Tracer:
    """agentnb's tracer while instrumentation is on, else the API's no-op tracer (spans that record nothing)."""
    from opentelemetry import trace

    return get_tracer() if _telemetry.is_enabled() else trace.NoOpTracer()


@contextlib.contextmanager
def _failures_marked(span_context: contextlib.AbstractContextManager[Span]) -> Generator[Span]:
    """Enter ``span_context``; an exception leaving the block marks the span (see ``capture_exception``)."""
    with span_context as span:
        try:
            yield span
        except Exception as e:
            capture_exception(span, e)
            raise


def _plain(attributes: Mapping[str, str | int] | None) -> dict[str, str | int] | None:
    """``attributes`` with plain string keys (``OtelAttr`` members become their values)."""
    return {str(key): value for key, value in attributes.items()} if attributes else None


def _kind(kind: SpanKind | None) -> SpanKind:
    from opentelemetry.trace import SpanKind

    return SpanKind.INTERNAL if kind is None else kind


def create_workflow_span(
    name: str, attributes: Mapping[str, str | int] | None = None, kind: SpanKind | None = None
) -> contextlib.AbstractContextManager[Span]:
    """A span named ``name``, current for the ``with`` block and ended after it (kind INTERNAL by default).

    Example:
        ```python
        from agentnb.observability import OtelAttr, create_workflow_span

        with create_workflow_span(OtelAttr.WORKFLOW_RUN_SPAN, {OtelAttr.WORKFLOW_NAME: "report"}) as span:
            span.add_event(OtelAttr.WORKFLOW_STARTED)
        ```
    """
    return _failures_marked(
        workflow_tracer().start_as_current_span(
            str(name),
            kind=_kind(kind),
            attributes=_plain(attributes),
            record_exception=False,
            set_status_on_exception=False,
        )
    )


def start_workflow_span(
    name: str, attributes: Mapping[str, str | int] | None = None, kind: SpanKind | None = None
) -> Span:
    """A started span that is not made current: for a generator that yields while the span is open.

    The caller ends it (``span.end()``) and makes it current only around work that does not yield
    (``opentelemetry.trace.use_span``), since a context attached across a ``yield`` cannot be detached safely.
    """
    return workflow_tracer().start_span(str(name), kind=_kind(kind), attributes=_plain(attributes))


def _links(trace_contexts: list[dict[str, str]] | None, span_ids: list[str] | None) -> list[Link]:
    """Links to the spans that sent a message, from their ``traceparent`` and span ids (unreadable ones skipped)."""
    from opentelemetry.trace import Link, SpanContext

    links: list[Link] = []
    for trace_context, span_id in zip(trace_contexts or (), span_ids or (), strict=False):
        parts = trace_context.get("traceparent", "").split("-")  # version-trace_id-parent_id-flags
        if len(parts) < 3:
            continue
        try:
            context = SpanContext(trace_id=int(parts[1], 16), span_id=int(span_id, 16), is_remote=True)
        except (ValueError, TypeError):
            continue
        links.append(Link(context))
    return links


def create_processing_span(
    executor_id: str,
    executor_type: str,
    message_type: str,
    payload_type: str,
    source_trace_contexts: list[dict[str, str]] | None = None,
    source_span_ids: list[str] | None = None,
) -> contextlib.AbstractContextManager[Span]:
    """An ``executor.process {executor_id}`` span for one message an executor handles, current for the block.

    Args:
        executor_id: The executor handling the message.
        executor_type: Its class name.
        message_type: ``"standard"``, or ``"response"`` for an answer to a request.
        payload_type: The type name of the message's data.
        source_trace_contexts: The W3C trace contexts (``{"traceparent": ...}``) of the spans that sent it.
        source_span_ids: Those spans' ids (16 hex digits), in the same order; each pair becomes a link.
    """
    from opentelemetry.trace import SpanKind

    return _failures_marked(
        workflow_tracer().start_as_current_span(
            f"{OtelAttr.EXECUTOR_PROCESS_SPAN.value} {executor_id}",
            kind=SpanKind.INTERNAL,
            attributes={
                OtelAttr.EXECUTOR_ID.value: executor_id,
                OtelAttr.EXECUTOR_TYPE.value: executor_type,
                OtelAttr.MESSAGE_TYPE.value: message_type,
                OtelAttr.MESSAGE_PAYLOAD_TYPE.value: payload_type,
            },
            links=_links(source_trace_contexts, source_span_ids),
            record_exception=False,
            set_status_on_exception=False,
        )
    )


def create_edge_group_processing_span(
    edge_group_type: str,
    edge_group_id: str | None = None,
    message_source_id: str | None = None,
    message_target_id: str | None = None,
    source_trace_contexts: list[dict[str, str]] | None = None,
    source_span_ids: list[str] | None = None,
) -> contextlib.AbstractContextManager[Span]:
    """An ``edge_group.process {edge_group_type}`` span for an edge group routing one message.

    Record the outcome on it with ``span.set_attribute(OtelAttr.EDGE_GROUP_DELIVERY_STATUS,
    str(EdgeGroupDeliveryStatus.DELIVERED))``. The source arguments link it to the sending spans as in
    :func:`create_processing_span`.
    """
    from opentelemetry.trace import SpanKind

    attributes: dict[str, str] = {OtelAttr.EDGE_GROUP_TYPE.value: edge_group_type}
    for key, value in (
        (OtelAttr.EDGE_GROUP_ID, edge_group_id),
        (OtelAttr.MESSAGE_SOURCE_ID, message_source_id),
        (OtelAttr.MESSAGE_TARGET_ID, message_target_id),
    ):
        if value is not None:
            attributes[key.value] = value
    return _failures_marked(
        workflow_tracer().start_as_current_span(
            f"{OtelAttr.EDGE_GROUP_PROCESS_SPAN.value} {edge_group_type}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=_links(source_trace_contexts, source_span_ids),
            record_exception=False,
            set_status_on_exception=False,
        )
    )
