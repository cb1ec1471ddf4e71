"""Tracing for the notebook: switch span emission on into agentnb's span store, and read the spans back.

Loading the extension calls :func:`enable_tracing`, which sets up OpenTelemetry through
:func:`agentnb.observability.configure_otel_providers` (SDK providers plus the span store, which also
writes to the run store so the DevUI sees the same traces). Unloading switches emission off again; the
spans recorded so far stay readable.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["TracingHandle", "enable_tracing", "span_rows"]


class TracingHandle:
    """What :func:`enable_tracing` switched on; :meth:`close` switches it off again."""

    def __init__(self, *, span_store: Any, enabled_here: bool) -> None:
        self.span_store = span_store
        self._enabled_here = enabled_here

    def close(self) -> None:
        """Switch span emission off if loading the extension switched it on."""
        if self._enabled_here:
            from .. import observability

            # Undo our own switch-on without disable_instrumentation(): that is the user's sticky opt-out.
            observability.OBSERVABILITY_SETTINGS.enable_instrumentation = False
            self._enabled_here = False


def enable_tracing() -> TracingHandle | None:
    """Switch agentnb's spans on and record them into the span store.

    Returns:
        A handle whose ``close()`` undoes it, or ``None`` when OpenTelemetry's SDK is not installed
        (then a warning says how to get traces).
    """
    try:
        from ..observability import configure_otel_providers, enable_instrumentation, is_instrumentation_enabled
    except ImportError:  # pragma: no cover - the SDK is part of the notebook extra
        warnings.warn(
            'agentnb traces need opentelemetry-sdk: pip install "agentnb[notebook]"', RuntimeWarning, stacklevel=3
        )
        return None
    was_enabled = is_instrumentation_enabled()
    try:
        store = configure_otel_providers()
    except RuntimeError:
        # Someone set a non-SDK tracer provider; join it instead of replacing it.
        store = enable_instrumentation()
    return TracingHandle(span_store=store, enabled_here=not was_enabled)


def span_rows(*, last: int | None = None, trace_id: str | None = None) -> list[dict[str, Any]]:
    """Return this kernel's recorded spans as run-store rows (oldest first).

    Args:
        last: Only the spans of the ``last`` most recent traces.
        trace_id: Only the spans of this trace.

    Returns:
        Span rows (``trace_id``, ``span_id``, ``parent_id``, ``name``, ``start_ns``, ``end_ns``, ``status_code``,
        ``attributes``, ...), or an empty list when nothing was traced.
    """
    try:
        from ..observability import get_span_store
    except ImportError:  # pragma: no cover - the SDK is part of the notebook extra
        return []
    store = get_span_store()
    rows = store.rows() if store is not None else []
    if trace_id is not None:
        rows = [r for r in rows if r["trace_id"] == trace_id]
    if last is not None:
        order: list[str] = []
        for row in sorted(rows, key=lambda r: r["start_ns"]):
            if row["trace_id"] not in order:
                order.append(row["trace_id"])
        keep: set[str] = set(order[-last:]) if last > 0 else set()
        rows = [r for r in rows if r["trace_id"] in keep]
    return rows
