"""One global OpenTelemetry SDK provider for the whole test process, and fresh span sinks per test.

OpenTelemetry lets a process set its global tracer provider only once, so the provider is set up a single
time (through ``configure_otel_providers``, the way users do it) with a forwarding processor; each test
gets its own memory-only :class:`SpanStore` behind that forwarder. Every test that takes ``otel`` runs
twice: once with an ``InMemorySpanExporter`` beside the span store, so the SDK makes every span, and once
with the span store alone, so agentnb makes light spans (see ``agentnb._telemetry_spans``): both kinds
must give the same spans. Tests that need a pristine process (provider creation, OTLP, metrics) run in a
subprocess instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentnb import _telemetry
from agentnb.observability import SpanStore, _setup, configure_otel_providers
from tests.observability.otel_fixtures import Otel


class _Forward:
    """A span processor that hands spans to whatever the current test installed."""

    def __init__(self) -> None:
        self.targets: list[Any] = []
        self.accepts_light_spans = False

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        for t in self.targets:
            t.on_start(span, parent_context=parent_context)

    def _on_ending(self, span: Any) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        for t in self.targets:
            t.on_end(span)

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


_FORWARD = _Forward()


@pytest.fixture(scope="session")
def _provider() -> Iterator[None]:
    saved = dict(_telemetry._state)  # pyright: ignore[reportPrivateUsage]
    configure_otel_providers(processors=[_FORWARD], span_store=False)
    yield
    _telemetry._state.update(saved)  # pyright: ignore[reportPrivateUsage]


@pytest.fixture(params=["sdk spans", "light spans"])
def otel(_provider: None, request: pytest.FixtureRequest) -> Iterator[Otel]:
    light = request.param == "light spans"
    # The forwarder is the provider's only processor while the test runs, whatever tests that ran earlier in
    # this process added to the global provider (the SDK can add processors but not remove them).
    processors: Any = cast(Any, trace.get_tracer_provider())._active_span_processor
    saved = processors._span_processors
    processors._span_processors = (_FORWARD,)
    exporter = None if light else InMemorySpanExporter()
    span_store = SpanStore(None)
    _FORWARD.targets = [span_store] if exporter is None else [SimpleSpanProcessor(exporter), span_store]
    _FORWARD.accepts_light_spans = light
    previous = _setup._active["span_store"]  # pyright: ignore[reportPrivateUsage]
    _setup._active["span_store"] = span_store  # pyright: ignore[reportPrivateUsage]
    _telemetry.enable(sensitive_data=False)
    yield Otel(exporter, span_store)
    _telemetry.disable()
    _FORWARD.targets = []
    _FORWARD.accepts_light_spans = False
    processors._span_processors = saved
    span_store.shutdown()
    _setup._active["span_store"] = previous  # pyright: ignore[reportPrivateUsage]
