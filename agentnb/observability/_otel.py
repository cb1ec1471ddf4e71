"""The reference's OpenTelemetry helpers: a tracer and a meter under agentnb's name.

They let code written for the reference create its own spans and instruments next to agentnb's, through
whatever providers are configured (the API's no-op ones until then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer

__all__ = ["get_meter", "get_tracer"]


def _version() -> str:
    from .. import __version__

    return __version__


def get_tracer(
    instrumenting_module_name: str = "agentnb",
    instrumenting_library_version: str | None = None,
    schema_url: str | None = None,
    attributes: dict[str, Any] | None = None,
) -> Tracer:
    """A tracer from the current tracer provider (named ``agentnb`` unless told otherwise).

    Example:
        ```python
        from agentnb.observability import get_tracer

        with get_tracer().start_as_current_span("my_step") as span:
            span.set_attribute("my.attribute", "value")
        ```
    """
    from opentelemetry import trace

    return trace.get_tracer(
        instrumenting_module_name,
        instrumenting_library_version or _version(),
        schema_url=schema_url,
        attributes=attributes,
    )


def get_meter(
    name: str = "agentnb",
    version: str | None = None,
    schema_url: str | None = None,
    attributes: dict[str, Any] | None = None,
) -> Meter:
    """A meter from the current meter provider (named ``agentnb`` unless told otherwise).

    An OpenTelemetry API too old to take ``attributes`` gets the call without them.
    """
    from opentelemetry import metrics

    try:
        return metrics.get_meter(name=name, version=version or _version(), schema_url=schema_url, attributes=attributes)
    except TypeError:
        return metrics.get_meter(name=name, version=version or _version(), schema_url=schema_url)
