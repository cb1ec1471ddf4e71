"""Switching instrumentation on: SDK providers of our own, or joining the ones the user already set up."""

from __future__ import annotations

import importlib
import logging
import os
import threading
import warnings
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .. import _telemetry
from ..store import Store, default_store_url, flush_before_reads, store_key
from ._settings import ObservabilitySettings, active_settings
from ._span_store import DEFAULT, SpanStore

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.metrics.view import View
    from opentelemetry.sdk.trace import SpanProcessor

__all__ = [
    "configure_otel_providers",
    "disable_instrumentation",
    "enable_instrumentation",
    "enable_sensitive_telemetry",
    "get_span_store",
    "is_instrumentation_enabled",
]

logger = logging.getLogger("agentnb.observability")

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
    """Stop emitting spans and metrics, and keep them off (providers and stored spans stay as they are).

    The switch-off is sticky, as in the reference: :func:`enable_instrumentation`,
    :func:`enable_sensitive_telemetry`, :func:`configure_otel_providers` and writes to
    ``OBSERVABILITY_SETTINGS`` leave it off until one is called with ``force=True``, so code that switches
    instrumentation on by itself cannot undo the user's opt-out.
    """
    active_settings()._disable()  # pyright: ignore[reportPrivateUsage]


def _switch_on(*, enable_sensitive_data: bool | None, force: bool, caller: str) -> bool:
    """Switch instrumentation on through the active settings; ``False`` when a sticky disable refused it."""
    settings = active_settings()
    if settings.is_user_disabled and not force:
        logger.info(
            "%s() ignored: instrumentation was switched off by disable_instrumentation(); pass force=True.", caller
        )
        return False
    if force:
        settings._clear_disable()  # pyright: ignore[reportPrivateUsage]
    settings.enable_instrumentation = True
    # None: the environment decides, read now (it may have been loaded from a .env file after import).
    settings.enable_sensitive_data = (
        _telemetry.env_switch("ENABLE_SENSITIVE_DATA") if enable_sensitive_data is None else enable_sensitive_data
    )
    return True


def _attach_once(provider: Any, key: object, make: Any) -> None:
    """Add the processor ``make()`` builds unless one for ``key`` was added before (``None``: add nothing)."""
    seen = _attached.setdefault(provider, set())
    if id(key) in seen:
        return
    processor = make()
    if processor is not None:
        provider.add_span_processor(processor)
    seen.add(id(key))


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


def _otlp_exporter(signal: str, *, stacklevel: int, options: Mapping[str, Any] | None = None) -> Any:
    """Build the OTLP exporter the environment (and ``options``) ask for, or warn about the missing package.

    ``options`` holds the explicit ``endpoint``, ``protocol``, ``headers``, ``timeout`` and ``compression``;
    what is not given is left to the exporter, which reads OpenTelemetry's ``OTEL_EXPORTER_OTLP_*`` variables.
    """
    given = {k: v for k, v in (options or {}).items() if v is not None}
    if os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT"):
        given.pop("endpoint", None)  # a signal's own variable wins over the base endpoint, as in OpenTelemetry
    grpc = (given.pop("protocol", None) or _otlp_protocol(signal)) == "grpc"
    module = f"opentelemetry.exporter.otlp.proto.{'grpc' if grpc else 'http'}"
    package = f"opentelemetry-exporter-otlp-proto-{'grpc' if grpc else 'http'}"
    try:
        if signal == "TRACES":
            mod = __import__(f"{module}.trace_exporter", fromlist=["OTLPSpanExporter"])
            make = mod.OTLPSpanExporter
        else:
            mod = __import__(f"{module}.metric_exporter", fromlist=["OTLPMetricExporter"])
            make = mod.OTLPMetricExporter
    except ImportError:
        warnings.warn(
            f"An OTLP endpoint is set but {package} is not installed, so agentnb does not export "
            f"{signal.lower()} over OTLP; {_OTLP_HINT if not grpc else f'pip install {package}'}.",
            RuntimeWarning,
            stacklevel=stacklevel + 1,
        )
        return None
    if "endpoint" in given and not grpc:
        path = "/v1/traces" if signal == "TRACES" else "/v1/metrics"
        given["endpoint"] = str(given["endpoint"]).rstrip("/") + path
    if "compression" in given:
        # gRPC exporters take grpc's enum, HTTP ones their package's; both spell the members the same way.
        enum = importlib.import_module("grpc" if grpc else module).Compression
        name = {"gzip": "Gzip", "deflate": "Deflate"}.get(str(given["compression"]).lower(), "NoCompression")
        given["compression"] = getattr(enum, name)
    return make(**given)


def configure_otel_providers(
    *,
    exporters: Iterable[Any] = (),
    processors: Iterable[SpanProcessor] = (),
    metric_readers: Iterable[MetricReader] = (),
    span_store: SpanStore | bool = True,
    store: Store | str | os.PathLike[str] | None = DEFAULT,
    enable_sensitive_data: bool | None = None,
    service_name: str | None = None,
    service_version: str | None = None,
    resource_attributes: Mapping[str, Any] | None = None,
    views: Iterable[View] | None = None,
    enable_console_exporters: bool | None = None,
    enable_message_events: bool | None = None,
    otel_semconv_stability_opt_in: str | None = None,
    vs_code_extension_port: int | None = None,
    otlp_endpoint: str | None = None,
    otlp_protocol: str | None = None,
    otlp_headers: dict[str, str] | None = None,
    otlp_timeout: float | None = None,
    otlp_compression: str | None = None,
    env_file_path: str | None = None,
    env_file_encoding: str | None = None,
) -> SpanStore | None:
    """Set up OpenTelemetry SDK tracing and metrics for agentnb, and switch instrumentation on.

    Creates the global SDK tracer and meter providers unless some are already set (then it adds to the
    existing tracer provider, like :func:`enable_instrumentation`). Finished spans go to agentnb's span
    store (memory plus the run store, so :func:`agentnb.traces` and the DevUI see them); when an OTLP
    endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``otlp_endpoint``) they are also exported over OTLP
    (``pip install "agentnb[otlp]"``; without it you get a warning). Calling it again adds only what is new:
    the same destination reuses its span store, another ``store`` adds a span store for it (and ``traces()``
    reads the one asked for last). The switches land on ``OBSERVABILITY_SETTINGS``; after
    :func:`disable_instrumentation` providers are still set up but instrumentation stays off.

    Args:
        exporters: Span exporters (each behind a ``BatchSpanProcessor``) and metric exporters (each behind a
            periodic reader of a new meter provider).
        processors: Span processors to add as they are (e.g. a ``SimpleSpanProcessor`` in tests).
        metric_readers: Metric readers for a new meter provider (ignored when one is already set). Without
            readers (and without an OTLP endpoint) no meter provider is set, so metrics cost nothing.
        span_store: Attach agentnb's span store (``True``), a given :class:`SpanStore`, or none (``False``).
        store: Where the span store writes: the default run store, a :class:`~agentnb.store.Store`, a path or
            store URL, or ``None`` for memory only.
        enable_sensitive_data: Also record messages, tool arguments and results on spans (off by default:
            they may hold personal data; ``None`` reads ``ENABLE_SENSITIVE_DATA``).
        service_name: The ``service.name`` of new providers (else ``OTEL_SERVICE_NAME``, else ``agentnb``).
        service_version: Their ``service.version`` (else ``OTEL_SERVICE_VERSION``, else agentnb's version).
        resource_attributes: More resource attributes for new providers.
        views: Metric views for a new meter provider (see :func:`create_metric_views`).
        enable_console_exporters: Also print spans and metrics (``None`` reads ``ENABLE_CONSOLE_EXPORTERS``).
        enable_message_events: Kept on ``OBSERVABILITY_SETTINGS`` (``None`` reads ``ENABLE_MESSAGE_EVENTS``).
        otel_semconv_stability_opt_in: Kept on ``OBSERVABILITY_SETTINGS`` (``None`` reads
            ``OTEL_SEMCONV_STABILITY_OPT_IN``).
        vs_code_extension_port: Also export over OTLP/gRPC to ``localhost`` on this port (the AI Toolkit's
            collector; ``None`` reads ``VS_CODE_EXTENSION_PORT``).
        otlp_endpoint, otlp_protocol, otlp_headers, otlp_timeout, otlp_compression: OTLP export settings that
            win over ``OTEL_EXPORTER_OTLP_*`` (signal-specific variables still win over ``otlp_endpoint``).
        env_file_path, env_file_encoding: A ``.env`` file to read the switches from.

    Returns:
        The span store in use, or ``None`` when ``span_store=False`` and none was attached before.

    Example:
        ```python
        from agentnb.observability import configure_otel_providers

        spans = configure_otel_providers()
        ```
    """
    settings = active_settings()
    if settings.is_user_disabled:
        logger.info(
            "configure_otel_providers(): instrumentation was switched off by disable_instrumentation(); providers "
            "are set up but nothing is emitted until enable_instrumentation(force=True)."
        )
    switches: dict[str, Any] = {
        "enable_sensitive_data": enable_sensitive_data,
        "enable_console_exporters": enable_console_exporters,
        "enable_message_events": enable_message_events,
        "otel_semconv_stability_opt_in": otel_semconv_stability_opt_in,
        "vs_code_extension_port": vs_code_extension_port,
    }
    # Read now, not at import: the environment may have been loaded from a .env file since.
    fresh = ObservabilitySettings(
        enable_instrumentation=True, env_file_path=env_file_path, env_file_encoding=env_file_encoding, **switches
    )
    settings.enable_instrumentation = fresh.enable_instrumentation
    settings.enable_sensitive_data = fresh.enable_sensitive_data
    settings.enable_console_exporters = fresh.enable_console_exporters
    settings.enable_message_events = fresh.enable_message_events
    settings.otel_semconv_stability_opt_in = fresh.otel_semconv_stability_opt_in
    settings.vs_code_extension_port = fresh.vs_code_extension_port
    settings.env_file_path = env_file_path
    settings.env_file_encoding = env_file_encoding
    settings.service_name = service_name
    settings.service_version = service_version
    settings.resource_attributes = dict(resource_attributes) if resource_attributes is not None else None
    settings.otlp_endpoint = otlp_endpoint
    settings.otlp_protocol = otlp_protocol
    settings.otlp_headers = otlp_headers
    settings.otlp_timeout = otlp_timeout
    settings.otlp_compression = otlp_compression
    return settings._configure(  # pyright: ignore[reportPrivateUsage]
        additional_exporters=list(exporters),
        views=list(views) if views is not None else None,
        processors=list(processors),
        metric_readers=list(metric_readers),
        span_store=span_store,
        store=store,
    )


def build_providers(
    settings: ObservabilitySettings,
    *,
    additional_exporters: list[Any],
    views: list[View] | None,
    processors: list[SpanProcessor],
    metric_readers: list[MetricReader],
    span_store: SpanStore | bool,
    store: Store | str | os.PathLike[str] | None,
) -> SpanStore | None:
    """Create or join the SDK providers and attach what ``settings`` and the arguments ask for (once each)."""
    _import_sdk()
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from ._resources import create_resource

    otlp = {
        "endpoint": settings.otlp_endpoint,
        "protocol": settings.otlp_protocol,
        "headers": settings.otlp_headers,
        "timeout": settings.otlp_timeout,
        "compression": settings.otlp_compression,
    }
    with _lock:
        resource = create_resource(
            settings.service_name, settings.service_version, **dict(settings.resource_attributes or {})
        )
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
        readers = list(metric_readers)
        for exporter in additional_exporters:
            if isinstance(exporter, MetricExporter):
                readers.append(PeriodicExportingMetricReader(exporter))
            elif _is_span_exporter(exporter):
                _attach_once(provider, exporter, lambda e=exporter: BatchSpanProcessor(e))
            else:
                warnings.warn(
                    f"agentnb exports spans and metrics only; {type(exporter).__name__} is not used.",
                    RuntimeWarning,
                    stacklevel=4,
                )
        if settings.enable_console_exporters:
            _attach_once(provider, _CONSOLE_TRACES, _console_span_processor)
        if settings.otlp_endpoint or _otlp_endpoint("TRACES"):
            _attach_once(provider, _OTLP_TRACES, lambda: _otlp_processor(otlp, stacklevel=7))
        if settings.vs_code_extension_port:
            local = {"endpoint": f"http://localhost:{settings.vs_code_extension_port}", "protocol": "grpc"}
            _attach_once(provider, _VS_CODE_TRACES, lambda: _otlp_processor(local, stacklevel=7))

        meter_provider = metrics.get_meter_provider()
        if not isinstance(meter_provider, MeterProvider):
            if settings.otlp_endpoint or _otlp_endpoint("METRICS"):
                metric_exporter = _otlp_exporter("METRICS", stacklevel=4, options=otlp)
                if metric_exporter is not None:
                    readers.append(PeriodicExportingMetricReader(metric_exporter))
            if settings.enable_console_exporters:
                from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

                readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
            # A meter provider without readers would aggregate every measurement for nobody: only set one
            # when something reads the metrics (the API's no-op meter costs nothing per measurement).
            if readers:
                metrics.set_meter_provider(
                    MeterProvider(metric_readers=readers, resource=resource, views=list(views or ()))
                )
        elif readers:
            warnings.warn(
                "A meter provider is already set, so metric readers cannot be added to it; pass them when the "
                "first provider is created.",
                RuntimeWarning,
                stacklevel=4,
            )
        return result


# Mark the exporters agentnb builds itself in ``_attached`` (they have no user object to key on).
_CONSOLE_TRACES = object()
_VS_CODE_TRACES = object()


def _is_span_exporter(exporter: object) -> bool:
    from opentelemetry.sdk.trace.export import SpanExporter

    return isinstance(exporter, SpanExporter)


def _console_span_processor() -> Any:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    return BatchSpanProcessor(ConsoleSpanExporter())


def _otlp_processor(options: Mapping[str, Any], *, stacklevel: int) -> Any:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter = _otlp_exporter("TRACES", stacklevel=stacklevel, options=options)
    return None if exporter is None else BatchSpanProcessor(exporter)


def enable_instrumentation(
    enable_sensitive_data: bool | None = None,
    *,
    enable_message_events: bool | None = None,
    force: bool = False,
    span_store: SpanStore | bool = True,
    store: Store | str | os.PathLike[str] | None = DEFAULT,
) -> SpanStore | None:
    """Switch agentnb's spans and metrics on, using the OpenTelemetry providers you already set up.

    Nothing is created: spans go to the global tracer provider you configured. When that is an SDK
    ``TracerProvider``, agentnb's span store is added to it (once), so :func:`agentnb.traces` and the DevUI
    see the spans too. Calling it again is harmless (the last ``enable_sensitive_data`` wins). After
    :func:`disable_instrumentation` it does nothing unless ``force=True``.

    Args:
        enable_sensitive_data: Also record messages, tool arguments and results on spans (``None``: off
            unless ``ENABLE_SENSITIVE_DATA`` is set now).
        enable_message_events: Kept on ``OBSERVABILITY_SETTINGS`` (``None`` keeps the current value).
        force: Clear a :func:`disable_instrumentation` first.
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
        if not _switch_on(enable_sensitive_data=enable_sensitive_data, force=force, caller="enable_instrumentation"):
            return get_span_store()
        if enable_message_events is not None:
            active_settings().enable_message_events = enable_message_events
        from opentelemetry import trace

        try:
            from opentelemetry.sdk.trace import TracerProvider
        except ImportError:  # API only: spans go wherever the user's provider sends them
            return None
        provider = trace.get_tracer_provider()
        if isinstance(provider, TracerProvider):
            return _attach_span_store(provider, span_store, store)
        return None


def enable_sensitive_telemetry(*, force: bool = False) -> None:
    """Switch instrumentation on and record messages, tool arguments and results on spans.

    Only for development and tests: prompts and replies end up in the spans. Providers are not configured
    here (see :func:`configure_otel_providers`). After :func:`disable_instrumentation` it does nothing
    unless ``force=True``.
    """
    with _lock:
        _switch_on(enable_sensitive_data=True, force=force, caller="enable_sensitive_telemetry")
