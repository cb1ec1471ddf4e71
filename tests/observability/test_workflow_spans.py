"""The workflow span helpers for code of one's own, the message-order log filter and the meter fallback."""

from __future__ import annotations

import logging
from typing import Any
from unittest.mock import patch

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from agentnb import _telemetry
from agentnb.observability import (
    EdgeGroupDeliveryStatus,
    MessageListTimestampFilter,
    OtelAttr,
    create_edge_group_processing_span,
    create_processing_span,
    create_workflow_span,
    get_meter,
    start_workflow_span,
    workflow_tracer,
)
from tests.observability.otel_fixtures import Otel


def test_workflow_tracer_is_a_no_op_while_instrumentation_is_off() -> None:
    saved = dict(_telemetry._state)  # pyright: ignore[reportPrivateUsage]
    _telemetry.disable()
    try:
        assert isinstance(workflow_tracer(), trace.NoOpTracer)
        with create_workflow_span("nothing") as span:
            assert not span.is_recording()
    finally:
        _telemetry._state.update(saved)  # pyright: ignore[reportPrivateUsage]


def test_workflow_span_nests_and_marks_failures(otel: Otel) -> None:
    with create_workflow_span(OtelAttr.WORKFLOW_RUN_SPAN, {OtelAttr.WORKFLOW_NAME: "report"}) as run:
        run.add_event(OtelAttr.WORKFLOW_STARTED)
        with pytest.raises(ValueError), create_workflow_span("step"):
            raise ValueError("bad step")
    recorded = otel.one("workflow.run")
    assert recorded.attributes is not None and recorded.attributes["workflow.name"] == "report"
    assert [e.name for e in recorded.events] == ["workflow.started"]
    step = otel.one("step")
    assert step.parent is not None and step.parent.span_id == recorded.context.span_id
    assert step.status.status_code == StatusCode.ERROR
    assert step.attributes is not None and step.attributes["error.type"] == "ValueError"


def test_started_workflow_span_is_not_current_until_used(otel: Otel) -> None:
    span = start_workflow_span("streamed run")
    assert trace.get_current_span() is not span
    with trace.use_span(span, end_on_exit=True), create_workflow_span("inside"):
        pass
    inside = otel.one("inside")
    assert inside.parent is not None and inside.parent.span_id == otel.one("streamed run").context.span_id


def test_processing_spans_link_to_the_senders(otel: Otel) -> None:
    with create_workflow_span("message.send") as sent:
        context = sent.get_span_context()
    traceparent = f"00-{context.trace_id:032x}-{context.span_id:016x}-01"
    with create_processing_span(
        "writer",
        "Writer",
        "standard",
        "str",
        source_trace_contexts=[{"traceparent": traceparent}, {"traceparent": "not a traceparent"}],
        source_span_ids=[f"{context.span_id:016x}", "zz"],
    ):
        pass
    with create_edge_group_processing_span(
        "FanInEdgeGroup",
        edge_group_id="fan-in",
        message_source_id="a",
        source_trace_contexts=[{"traceparent": "00-x"}],
        source_span_ids=["not hex"],
    ) as edge:
        edge.set_attribute(OtelAttr.EDGE_GROUP_DELIVERY_STATUS.value, str(EdgeGroupDeliveryStatus.DELIVERED))
    processing = otel.one("executor.process writer")
    assert processing.attributes is not None
    assert processing.attributes["executor.id"] == "writer" and processing.attributes["message.payload_type"] == "str"
    assert [link.context.span_id for link in processing.links] == [context.span_id]
    edge_span = otel.one("edge_group.process FanInEdgeGroup")
    assert edge_span.attributes is not None and edge_span.attributes["edge_group.id"] == "fan-in"
    assert edge_span.attributes["message.source_id"] == "a" and "message.target_id" not in edge_span.attributes
    assert edge_span.attributes["edge_group.delivery_status"] == "delivered" and not edge_span.links
    assert repr(EdgeGroupDeliveryStatus.DROPPED_CONDITION_FALSE) == "dropped condition evaluated to false"


def test_message_list_filter_spaces_records_by_their_index() -> None:
    log_filter = MessageListTimestampFilter()
    plain = logging.LogRecord("x", logging.INFO, "", 0, "m", (), None)
    before = plain.created
    assert log_filter.filter(plain) and plain.created == before
    indexed = logging.LogRecord("x", logging.INFO, "", 0, "m", (), None)
    setattr(indexed, MessageListTimestampFilter.INDEX_KEY, 4)
    before = indexed.created
    assert log_filter.filter(indexed) and indexed.created == pytest.approx(before + 4e-6)


def test_get_meter_retries_without_attributes_on_an_old_api() -> None:
    from opentelemetry import metrics

    calls: list[dict[str, Any]] = []
    real = metrics.get_meter

    def old_api(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        if "attributes" in kwargs:
            raise TypeError("unexpected keyword argument 'attributes'")
        return real(*args, **kwargs)

    with patch("agentnb.observability.metrics.get_meter", side_effect=old_api):
        assert get_meter("mine", attributes={"k": "v"}) is not None
    assert ["attributes" in c for c in calls] == [True, False]
