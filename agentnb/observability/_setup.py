"""Switching instrumentation on: SDK providers of our own, or joining the ones the user already set up."""

from __future__ import annotations

import importlib
import os
import threading
import warnings
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .. import _telemetry
from ..store import Store, default_store_url, flush_before_reads, store_key
from ._span_store import DEFAULT, SpanStore

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = [
    "configure_otel_providers",
    "disable_instrumentation",
    "enable_instrumentation",
    "get_span_store",
    "is_instrumentation_enabled",
]

_lock = threading.RLock()
# What agentnb attached to each provider, so that a second call never adds anything twice.
_attached: weakref.WeakKeyDictionary[Any, set[int]] = weakref.WeakKeyDictionary()
_span_stores: weakref.WeakKeyDictionary[Any, dict[tuple[str, Any], SpanStore]] = weakref.WeakKeyDictionary()
_active: dict[str, Any] = {"span_store": None}

_OTLP_HINT = 'pip install "agentnb[otlp]"'


def _import_sdk() -> None:
    try:
        importlib.import_module("opentelemetry.sdk.trace")
    except ImportError as e:  # pragma: no cover - the SDK is part of the observability extra
        raise ImportError('agentnb.observability needs opentelemetry-sdk: pip install "agentnb[observability]"') from e


def get_span_store() -> SpanStore | None:
    """Return the span store agentnb attached most recently (``None`` before any setup)."""
    return _active["span_store"]


def _flush_stored_spans() -> None:
    """Write the spans this process traced so far to the run store (before ``agentnb.runs()`` reads it)."""
    span_store = _active["span_store"]
    if span_store is not None and span_store.persistent:
        span_store.force_flush()


flush_before_reads(_flush_stored_spans)


def is_instrumentation_enabled() -> bool:
    """Whether agentnb emits spans and metrics."""
    return _telemetry.is_enabled()


def disable_instrumentation() -> None:
    """Stop emitting spans and metrics (providers and stored spans stay as they are)."""
    _telemetry.disable()


def _attach_once(provider: Any, key: object, make: Any) -> None:
    """Add the processor ``make()`` builds unless one for ``key`` was added before (``None``: add nothing)."""
    seen = _attached.setdefault(provider, set())
    if id(key) in seen:
        return
    processor = make()
    if processor is not None:
        provider.add_span_processor(processor)
    seen.add(id(key))


# Marks the OTLP span exporter in ``_attached`` (it is built by us, so it has no user object to key on).
_OTLP_TRACES = object()


def _target_key(store: Any) -> tuple[str, Any]:
    """Identify where a span store writes, so asking again for the same place reuses it."""
    if store is None:
        return ("memory", None)
    if isinstance(store, Store):
        return ("store", id(store))
    target = default_store_url() if store == DEFAULT else os.fspath(cast("str | os.PathLike[str]", store))
    return ("url", store_key(target))


def _attach_span_store(provider: Any, span_store: SpanStore | bool, store: Any) -> SpanStore | None:
    """Attach a span store to ``provider`` once per destination and make it the one ``traces()`` reads."""
    stores = _span_stores.setdefault(provider, {})
    if span_store is False:
        return _active["span_store"] if _active["span_store"] in stores.values() else None
    if isinstance(span_store, SpanStore):
        key: tuple[str, Any] = ("instance", id(span_store))
        chosen = stores.get(key)
        if chosen is None:
            provider.add_span_processor(span_store)
            chosen = stores[key] = span_store
    else:
        key = _target_key(store)
        chosen = stores.get(key)
        if chosen is None:
            chosen = stores[key] = SpanStore(store)
            provider.add_span_processor(chosen)
    _active["span_store"] = chosen
    return chosen


def _otlp_endpoint(signal: str) -> str | None:
    return os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")


def _otlp_protocol(signal: str) -> str:
    return (
        os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    ).strip() or "http/protobuf"


def _otlp_exporter(signal: str, *, stacklevel: int) -> Any:
    """Build the OTLP exporter the environment asks for, or warn once about the missing package."""
    grpc = _otlp_protocol(signal) == "grpc"
    module = f"opentelemetry.exporter.otlp.proto.{'grpc' if grpc else 'http'}"
    package = f"opentelemetry-exporter-otlp-proto-{'grpc' if grpc else 'http'}"
    try:
        if signal == "TRACES":
            mod = __import__(f"{module}.trace_exporter", fromlist=["OTLPSpanExporter"])
            return mod.OTLPSpanExporter()
        mod = __import__(f"{module}.metric_exporter", fromlist=["OTLPMetricExporter"])
        return mod.OTLPMetricExporter()
    except ImportError:
        warnings.warn(
            f"OTEL_EXPORTER_OTLP_ENDPOINT is set but {package} is not installed, so agentnb does not export "
            f"{signal.lower()} over OTLP; {_OTLP_HINT if not grpc else f'pip install {package}'}.",
            RuntimeWarning,
            stacklevel=stacklevel + 1,
        )
        return None


def configure_otel_providers(
    *,
    exporters: Iterable[SpanExporter] = (),
    processors: Iterable[SpanProcessor] = (),
    metric_readers: Iterable[MetricReader] = (),
    span_store: SpanStore | bool = True,
    store: Store | str | os.PathLike[str] | None = DEFAULT,
    enable_sensitive_data: bool | None = None,
    service_name: str = "agentnb",
    resource_attributes: Mapping[str, Any] | None = None,
) -> SpanStore | None:
    """Set up OpenTelemetry SDK tracing and metrics for agentnb, and switch instrumentation on.

    Creates the global SDK tracer and meter providers unless some are already set (then it adds to the
    existing tracer provider, like :func:`enable_instrumentation`). Finished spans go to agentnb's span
    store (memory plus the run store, so :func:`agentnb.traces` and the DevUI see them); when
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set they are also exported over OTLP (``pip install
    "agentnb[otlp]"``; without it you get a warning). Calling it again adds only what is new: the same
    destination reuses its span store, another ``store`` adds a span store for it (and ``traces()`` reads
    the one asked for last).

    Args:
        exporters: Span exporters to add, each behind a ``BatchSpanProcessor``.
        processors: Span processors to add as they are (e.g. a ``SimpleSpanProcessor`` in tests).
        metric_readers: Metric readers for a new meter provider (ignored when one is already set). Without
            readers (and without an OTLP endpoint) no meter provider is set, so metrics cost nothing.
        span_store: Attach agentnb's span store (``True``), a given :class:`SpanStore`, or none (``False``).
        store: Where the span store writes: the default run store, a :class:`~agentnb.store.Store`, a path or
            store URL, or ``None`` for memory only.
        enable_sensitive_data: Also record messages, tool arguments and results on spans (off by default:
            they may hold personal data; ``None`` reads ``AGENTNB_ENABLE_SENSITIVE_DATA``).
        service_name: The ``service.name`` resource attribute of new providers.
        resource_attributes: More resource attributes for new providers.

    Returns:
        The span store in use, or ``None`` when ``span_store=False`` and none was attached before.

    Example:
        ```python
        from agentnb.observability import configure_otel_providers

        spans = configure_otel_providers()
        ```
    """
    _import_sdk()
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    with _lock:
        resource = Resource.create({"service.name": service_name, **dict(resource_attributes or {})})
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            if type(provider).__name__ != "ProxyTracerProvider":
                raise RuntimeError(
                    f"A tracer provider of type {type(provider).__name__} is already set and cannot be replaced; "
                    "use an opentelemetry-sdk TracerProvider, then call enable_instrumentation()."
                )
            provider = TracerProvider(resource=resource)
            trace.set_tracer_provider(provider)
        result = _attach_span_store(provider, span_store, store)
        for processor in processors:
            _attach_once(provider, processor, lambda p=processor: p)
        for exporter in exporters:
            _attach_once(provider, exporter, lambda e=exporter: BatchSpanProcessor(e))
        if _otlp_endpoint("TRACES"):

            def otlp_processor() -> Any:
                exporter = _otlp_exporter("TRACES", stacklevel=4)  # <- otlp_processor <- _attach_once <- configure
                return None if exporter is None else BatchSpanProcessor(exporter)

            _attach_once(provider, _OTLP_TRACES, otlp_processor)

        meter_provider = metrics.get_meter_provider()
        readers = list(metric_readers)
        if not isinstance(meter_provider, MeterProvider):
            if _otlp_endpoint("METRICS"):
                from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

                metric_exporter = _otlp_exporter("METRICS", stacklevel=2)
                if metric_exporter is not None:
                    readers.append(PeriodicExportingMetricReader(metric_exporter))
            # A meter provider without readers would aggregate every measurement for nobody: only set one
            # when something reads the metrics (the API's no-op meter costs nothing per measurement).
            if readers:
                metrics.set_meter_provider(MeterProvider(metric_readers=readers, resource=resource))
        elif readers:
            warnings.warn(
                "A meter provider is already set, so metric_readers cannot be added to it; pass them when the "
                "first provider is created.",
                RuntimeWarning,
                stacklevel=2,
            )
        _telemetry.enable(sensitive_data=enable_sensitive_data)
        return result


def enable_instrumentation(
    enable_sensitive_data: bool | None = None,
    *,
    span_store: SpanStore | bool = True,
    store: Store | str | os.PathLike[str] | None = DEFAULT,
) -> SpanStore | None:
    """Switch agentnb's spans and metrics on, using the OpenTelemetry providers you already set up.

    Nothing is created: spans go to the global tracer provider you configured. When that is an SDK
    ``TracerProvider``, agentnb's span store is added to it (once), so :func:`agentnb.traces` and the DevUI
    see the spans too. Calling it again is harmless (the last ``enable_sensitive_data`` wins).

    Args:
        enable_sensitive_data: Also record messages, tool arguments and results on spans (``None``: off
            unless ``AGENTNB_ENABLE_SENSITIVE_DATA`` is set).
        span_store: Attach agentnb's span store (``True``), a given :class:`SpanStore`, or none (``False``).
        store: Where the span store writes (see :func:`configure_otel_providers`).

    Returns:
        The span store in use, or ``None`` when there is none (e.g. no SDK provider is set).

    Example:
        ```python
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from agentnb.observability import enable_instrumentation

        if not isinstance(trace.get_tracer_provider(), TracerProvider):
            trace.set_tracer_provider(TracerProvider())
        enable_instrumentation()
        ```
    """
    with _lock:
        from opentelemetry import trace

        result: SpanStore | None = None
        try:
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError:  # API only: spans go wherever the user's provider sends them
            pass
        else:
            provider = trace.get_tracer_provider()
            if isinstance(provider, TracerProvider):
                result = _attach_span_store(provider, span_store, store)
        _telemetry.enable(sensitive_data=enable_sensitive_data)
        return result
