"""Observability: OpenTelemetry spans and metrics for agents, a span store, and traces as pandas DataFrames.

agentnb's core emits spans named by the OpenTelemetry GenAI semantic conventions (``invoke_agent``,
``chat``, ``execute_tool``, and the workflow spans) through ``opentelemetry-api``; nothing is recorded
until you switch instrumentation on:

- :func:`configure_otel_providers` creates SDK tracer and meter providers with agentnb's
  :class:`SpanStore` (and OTLP export when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set);
- :func:`enable_instrumentation` joins the providers you already own.

:func:`traces` returns the recorded spans as a DataFrame (from this process's memory or from the run
store, so another process can read them) and :func:`usage_summary` sums tokens, latency and (given a
price table, see :func:`token_cost`) cost per agent and model. The SDK and pandas are imported only when
used.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .._layers import AgentTelemetryLayer, ChatTelemetryLayer, EmbeddingTelemetryLayer
from .._telemetry import INNER_ACCUMULATED_USAGE, INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS
from ._frames import FRAME_COLUMNS, records_frame, spans_frame, traces, usage_summary
from ._log_order import MessageListTimestampFilter
from ._otel import get_meter, get_tracer
from ._prices import Prices, price_for, token_cost
from ._resources import ROLE_EVENT_MAP, OtelAttr, create_metric_views, create_resource
from ._settings import ObservabilitySettings, activate_settings
from ._setup import (
    configure_otel_providers,
    disable_instrumentation,
    enable_instrumentation,
    enable_sensitive_telemetry,
    get_span_store,
    is_instrumentation_enabled,
)
from ._span_store import RECORD_COLUMNS, SpanStore, frame_record, span_record, span_to_row
from ._user_spans import (
    capture_exception,
    create_mcp_client_span,
    get_function_span,
    get_function_span_attributes,
    set_mcp_span_error,
)
from ._workflow_spans import (
    EdgeGroupDeliveryStatus,
    create_edge_group_processing_span,
    create_processing_span,
    create_workflow_span,
    start_workflow_span,
    workflow_tracer,
)

# The settings agentnb's spans obey, read from the environment when this module is (re)loaded. Assigning
# another ObservabilitySettings to this name (as tests do with ``unittest.mock.patch``) makes it the active one.
OBSERVABILITY_SETTINGS: ObservabilitySettings = activate_settings(ObservabilitySettings())


class _ObservabilityModule(types.ModuleType):
    """This package's module type: assigning ``OBSERVABILITY_SETTINGS`` activates the new settings."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "OBSERVABILITY_SETTINGS":
            activate_settings(value)
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:
        # The reference's module holds OpenTelemetry's metrics API as ``metrics`` (tests patch
        # ``metrics.get_meter`` through it); loaded when first asked for, as nothing here needs it sooner.
        if name == "metrics":
            from opentelemetry import metrics

            return metrics
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _ObservabilityModule

__all__ = [
    "FRAME_COLUMNS",
    "INNER_ACCUMULATED_USAGE",
    "INNER_RESPONSE_TELEMETRY_CAPTURED_FIELDS",
    "OBSERVABILITY_SETTINGS",
    "RECORD_COLUMNS",
    "ROLE_EVENT_MAP",
    "AgentTelemetryLayer",
    "ChatTelemetryLayer",
    "EdgeGroupDeliveryStatus",
    "EmbeddingTelemetryLayer",
    "MessageListTimestampFilter",
    "ObservabilitySettings",
    "OtelAttr",
    "Prices",
    "SpanStore",
    "capture_exception",
    "configure_otel_providers",
    "create_edge_group_processing_span",
    "create_mcp_client_span",
    "create_metric_views",
    "create_processing_span",
    "create_resource",
    "create_workflow_span",
    "disable_instrumentation",
    "enable_instrumentation",
    "enable_sensitive_telemetry",
    "frame_record",
    "get_function_span",
    "get_function_span_attributes",
    "get_meter",
    "get_span_store",
    "get_tracer",
    "is_instrumentation_enabled",
    "price_for",
    "records_frame",
    "set_mcp_span_error",
    "span_record",
    "span_to_row",
    "spans_frame",
    "start_workflow_span",
    "token_cost",
    "traces",
    "usage_summary",
    "workflow_tracer",
]
