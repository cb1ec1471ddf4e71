"""Light spans: agentnb's own span objects, for a tracer provider whose span processors only keep spans.

An OpenTelemetry SDK span checks every attribute through a bounded mapping under a lock, and hands its
processors a fresh read-only copy when it ends. That is most of what tracing an agent turn costs, and it
buys nothing when every processor of the provider is one of agentnb's span stores, which only keep the
finished span (processors say so with a true ``accepts_light_spans`` attribute). Then a light span is
made instead: a ``ReadableSpan`` that records into a plain dict and is handed over itself when it ends.

A light span takes everything else from the SDK tracer, so the spans are the same ones: ids from the
provider's id generator, its resource and instrumentation scope, the parent and trace state of the
current span, the span limits on counts, the processors' ``on_start`` and ``on_end``. Anything a light
span would not do the way the SDK does switches them off, and the SDK makes the span: another processor
(an exporter, a test's in-memory exporter), a sampler other than the default ones, a parent that is not
sampled, a limit on attribute length, a disabled tracer or the SDK's internal metrics.

Light spans rely on a few private parts of the SDK (the tracer's instrumentation scope and span limits,
the processors a provider holds, the fields of ``ReadableSpan``). The SDK range in ``pyproject.toml`` is the
one the suite ran on; should an SDK outside it lay those parts out differently, :func:`sdk_fits` says so,
agentnb warns once and the SDK makes every span (slower, never wrong).
"""

from __future__ import annotations

import logging
import traceback
import warnings
from collections.abc import Mapping
from time import time_ns
from typing import TYPE_CHECKING, Any, cast

from opentelemetry import trace as trace_api
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, sampling
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.span import DEFAULT_TRACE_STATE

if TYPE_CHECKING:
    from types import TracebackType

    from opentelemetry.sdk.trace import Tracer
    from opentelemetry.util import types

__all__ = ["LightSpan", "sdk_fits", "start_light_span"]

logger = logging.getLogger("agentnb.telemetry")

_DEFAULT_SAMPLERS = (sampling.DEFAULT_ON, sampling.ALWAYS_ON)
_UNSET = Status(StatusCode.UNSET)
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
# W3C trace context level 2's "random" flag, set by the SDK when the trace id came from a random generator.
_RANDOM = getattr(TraceFlags, "RANDOM_TRACE_ID", 0)
_SAMPLED_RANDOM = TraceFlags(TraceFlags.SAMPLED | _RANDOM)
_EXACT = frozenset({str, int, float, bool})
_STR = frozenset({str})


def _cleaned(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """``attributes`` as the installed SDK keeps them (sequences as tuples, and so on): its own
    ``BoundedAttributes`` cleans them, so the rules and warnings are the SDK's, whatever its version."""
    return dict(BoundedAttributes(None, attributes, immutable=False))


def _plain_tuple(value: Any) -> bool:
    """Whether ``value`` is a tuple of one plain type (finish reasons, say), which every SDK keeps as it is."""
    return (
        type(value) is tuple
        and len(set(map(type, cast("tuple[Any, ...]", value)))) <= 1
        and (not value or type(cast("tuple[Any, ...]", value)[0]) in _EXACT)
    )


def _plain(attributes: Mapping[str, Any]) -> bool:
    """Whether every SDK keeps ``attributes`` as they are: plain names, plain values or tuples of one kind.

    agentnb's own attributes are, and are checked by passes in C."""
    values = attributes.values()
    return (
        _STR.issuperset(map(type, attributes))
        and "" not in attributes
        and (_EXACT.issuperset(map(type, values)) or all(_plain_tuple(v) for v in values if type(v) not in _EXACT))
    )


def _clean_items(target: dict[str, Any], attributes: Mapping[str, Any], limit: int | None) -> int:
    """Copy ``attributes`` into ``target`` as the SDK would; returns how many were dropped for the limit."""
    if not _plain(attributes):
        attributes = _cleaned(attributes)
    if limit is None or len(target) + len(attributes) <= limit:
        target.update(attributes)
        return 0
    # Over the limit, as the SDK's BoundedAttributes does: a value set again moves to the end, and a new key
    # pushes out the oldest one.
    dropped = 0
    for key, value in attributes.items():
        if key in target:
            del target[key]
        elif len(target) >= limit:
            dropped += 1
            if not target:  # a limit of 0 keeps nothing
                continue
            del target[next(iter(target))]
        target[key] = value
    return dropped


class LightSpan(trace_api.Span, ReadableSpan):
    """A recording span that is its own finished, readable form (see the module docstring)."""

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        tracer: Tracer,
        attributes: dict[str, Any],
        kind: SpanKind,
        limits: SpanLimits,
    ) -> None:
        # ReadableSpan's fields, set here rather than through its __init__ (which copies nothing either).
        self._name = name
        self._context = context
        self._kind = kind
        self._instrumentation_info = None
        self._instrumentation_scope = tracer._instrumentation_scope  # pyright: ignore[reportPrivateUsage]
        self._parent = parent
        self._start_time = time_ns()
        self._end_time: int | None = None
        self._attributes = attributes
        # Empty tuples until something is added: a span store holds many spans, and a tuple of nothing is
        # one shared object the garbage collector never visits, where a list is one more per span.
        self._events: tuple[Event, ...] | list[Event] = ()
        self._links: tuple[Link, ...] | list[Link] = ()
        self._resource = tracer.resource
        self._status = _UNSET
        self._processor: Any = tracer.span_processor
        self._limits = limits
        self._dropped: list[int] | None = None  # attributes, events and links over the limits, once any is

    def _drop(self, index: int, count: int = 1) -> None:
        if self._dropped is None:
            self._dropped = [0, 0, 0]
        self._dropped[index] += count

    def __repr__(self) -> str:
        return f'{type(self).__name__}(name="{self._name}", context={self._context})'

    @property
    def dropped_attributes(self) -> int:
        return 0 if self._dropped is None else self._dropped[0]

    @property
    def dropped_events(self) -> int:
        return 0 if self._dropped is None else self._dropped[1]

    @property
    def dropped_links(self) -> int:
        return 0 if self._dropped is None else self._dropped[2]

    def get_span_context(self) -> SpanContext:
        return self._context

    def is_recording(self) -> bool:
        return self._end_time is None

    def _ended(self, what: str) -> bool:
        if self._end_time is None:
            return False
        logger.warning("%s on an ended span.", what)
        return True

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        self.set_attributes({key: value})

    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        if self._end_time is None:
            dropped = _clean_items(self._attributes, attributes, self._limits.max_span_attributes)
            if dropped:
                self._drop(0, dropped)
        else:
            self._ended("Setting attribute")

    def add_event(self, name: str, attributes: types.Attributes = None, timestamp: int | None = None) -> None:
        if self._ended("Adding an event"):
            return
        limit = self._limits.max_events
        if limit is not None and len(self._events) >= limit:
            self._drop(1)
            return
        kept: dict[str, Any] = {}
        if attributes:
            _clean_items(kept, attributes, self._limits.max_event_attributes)
        events = self._events
        if isinstance(events, tuple):
            events = self._events = list(events)
        events.append(Event(name, kept, timestamp))

    def add_link(self, context: SpanContext, attributes: types.Attributes = None) -> None:
        if self._ended("Adding a link"):
            return
        if not context.is_valid and not attributes and not context.trace_state:
            return  # what the SDK ignores too: a link to nothing, saying nothing
        limit = self._limits.max_links
        if limit is not None and len(self._links) >= limit:
            self._drop(2)
            return
        kept: dict[str, Any] = {}
        if attributes:
            _clean_items(kept, attributes, self._limits.max_link_attributes)
        links = self._links
        if isinstance(links, tuple):
            links = self._links = list(links)
        links.append(Link(context, kept))

    def update_name(self, name: str) -> None:
        if not self._ended("Renaming"):
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self._ended("Setting status"):
            return
        # As in the SDK: an OK status is final, and UNSET is never set.
        code = status.status_code if isinstance(status, Status) else status
        if self._status.status_code is StatusCode.OK or code is StatusCode.UNSET:
            return
        self._status = status if isinstance(status, Status) else Status(status, description)

    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        module = type(exception).__module__
        qualname = type(exception).__qualname__
        recorded: dict[str, Any] = {
            "exception.type": f"{module}.{qualname}" if module and module != "builtins" else qualname,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        if attributes:
            recorded.update(attributes)
        self.add_event("exception", recorded, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self._ended("Calling end()"):
            return
        self._end_time = end_time if end_time is not None else time_ns()
        processor: Any = self._processor
        self._processor = None  # a finished span is data only, like the SDK's ReadableSpan copy
        ending = getattr(processor, "_on_ending", None)  # newer SDKs tell processors just before on_end
        if ending is not None:
            ending(self)
        processor.on_end(self)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        if exc_val is not None and self.is_recording():
            self.record_exception(exc_val, escaped=True)
            self.set_status(Status(StatusCode.ERROR, f"{type(exc_val).__name__}: {exc_val}"))
        self.end()


def _tracer_limits(tracer: Tracer) -> SpanLimits | None:
    """The tracer's span limits when its settings let light spans stand in for SDK spans, else ``None``.

    A tracer's sampler, limits and metrics are fixed when the provider makes it, so this runs once per tracer.
    """
    if not sdk_fits(tracer) or tracer.sampler not in _DEFAULT_SAMPLERS:
        return None
    metrics = getattr(tracer, "_tracer_metrics", None)  # newer SDKs: the SDK's own span metrics
    if metrics is not None and type(metrics).__name__ != "NoOpTracerMetrics":
        return None
    limits: SpanLimits | None = getattr(tracer, "_span_limits", None)
    if limits is None or limits.max_span_attribute_length is not None or limits.max_attribute_length is not None:
        return None
    return limits


#: The private fields of an SDK ``ReadableSpan`` a light span sets itself (and the span store reads back).
READABLE_SPAN_FIELDS = (
    "_name", "_context", "_kind", "_instrumentation_info", "_instrumentation_scope", "_parent", "_start_time",
    "_end_time", "_attributes", "_events", "_links", "_resource", "_status",
)  # fmt: skip
_TRACER_FIELDS = ("_instrumentation_scope", "_span_limits", "span_processor", "resource", "id_generator", "sampler")
_fits: dict[int, bool] = {}
_warned: list[bool] = []


def sdk_fits(tracer: object) -> bool:
    """Whether the installed SDK's private parts are laid out as light spans expect (checked once per class).

    When they are not, one ``RuntimeWarning`` says so and the SDK makes every span from then on.
    """
    key = id(type(tracer))
    fits = _fits.get(key)
    if fits is not None:
        return fits
    missing = [f"Tracer.{name}" for name in _TRACER_FIELDS if not hasattr(tracer, name)]
    if not isinstance(getattr(tracer, "_span_limits", None), SpanLimits):
        missing.append("Tracer._span_limits (a SpanLimits)")
    if not hasattr(getattr(tracer, "span_processor", None), "_span_processors"):
        missing.append("SynchronousMultiSpanProcessor._span_processors")
    sample = ReadableSpan(name="agentnb layout check", resource=Resource.get_empty())
    missing += [f"ReadableSpan.{name}" for name in READABLE_SPAN_FIELDS if not hasattr(sample, name)]
    fits = _fits[key] = not missing
    if not missing:
        return True
    if not _warned:  # one warning per process, whatever the tracer
        _warned.append(True)
        from importlib.metadata import version

        warnings.warn(
            f"agentnb's light spans do not fit opentelemetry-sdk {version('opentelemetry-sdk')} (it has no "
            f"{', '.join(missing)}); the SDK makes agentnb's spans instead, which is slower but records the same. "
            "Install an opentelemetry-sdk in the range agentnb declares to get light spans back.",
            RuntimeWarning,
            stacklevel=2,
        )
    return False


# The last tracer asked about and its limits (agentnb uses one tracer, so one entry is enough; it holds no more).
_last_tracer: list[Any] = [None, None]


def _light_limits(tracer: Tracer) -> SpanLimits | None:
    """The tracer's span limits when light spans can keep them, else ``None`` (the SDK must make spans).

    What may change while the tracer lives is checked every time: its processors (added at any time, and
    each may change its mind) and whether its configurator has switched it off (newer SDKs).
    """
    last = _last_tracer
    if last[0] is not tracer:
        last[:] = [tracer, _tracer_limits(tracer)]
    if last[1] is None:
        return None
    for processor in getattr(tracer.span_processor, "_span_processors", None) or (None,):
        if not getattr(processor, "accepts_light_spans", False):
            return None
    enabled = getattr(tracer, "_is_enabled", None)
    if enabled is not None and not enabled():
        return None
    return last[1]


def start_light_span(tracer: Any, name: str, attributes: dict[str, Any], kind: SpanKind) -> LightSpan | None:
    """Start a light span under the current span, or return ``None`` when the SDK must make it.

    ``attributes`` becomes the span's own dict (a new dict of the caller's; values that are not plain, or
    more than the limit allows, make a cleaned copy instead).
    """
    if not hasattr(tracer, "span_processor"):
        return None  # not an SDK tracer
    sdk_tracer = cast("Tracer", tracer)
    limits = _light_limits(sdk_tracer)
    if limits is None:
        return None
    parent = trace_api.get_current_span().get_span_context()
    ids = sdk_tracer.id_generator
    if parent.is_valid:
        if not parent.trace_flags.sampled:
            return None  # the sampler decides what an unsampled parent's children are
        trace_id = parent.trace_id
        flags = _SAMPLED_RANDOM if _RANDOM and parent.trace_flags & _RANDOM else _SAMPLED
        state = parent.trace_state
        parent_context: SpanContext | None = parent
    else:
        trace_id = ids.generate_trace_id()
        flags = _SAMPLED_RANDOM if _RANDOM and ids.is_trace_id_random() else _SAMPLED
        state = DEFAULT_TRACE_STATE
        parent_context = None
    context = SpanContext(trace_id, ids.generate_span_id(), is_remote=False, trace_flags=flags, trace_state=state)
    limit = limits.max_span_attributes
    own: dict[str, Any] = attributes
    dropped = 0
    if not _plain(attributes) or (limit is not None and len(attributes) > limit):
        own = {}
        dropped = _clean_items(own, attributes, limit)
    span = LightSpan(name, context, parent_context, sdk_tracer, own, kind, limits)
    if dropped:
        span._drop(0, dropped)  # pyright: ignore[reportPrivateUsage]
    processor: Any = sdk_tracer.span_processor  # typed for SDK spans; only processors that accept light ones
    processor.on_start(span, parent_context=None)
    return span
