"""The span store: finished spans kept in a bounded buffer and written to the run store in batches.

It is an OpenTelemetry span processor. For a store that writes to a database, ``on_end`` only appends the
finished span to two deques (the memory buffer and the write queue), so the traced code never waits for
SQLite; a background thread turns queued spans into rows and writes them in one transaction per batch, and
``force_flush``/``shutdown`` (and interpreter exit) write whatever is left. A memory-only store turns each
span into the compact tuple ``traces()`` reads as it ends, and runs no thread at all.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from .._telemetry import (
    GEN_AI_AGENT_NAME,
    GEN_AI_OPERATION_NAME,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    WORKFLOW_RUN_ID,
)
from ..store import SPAN_COLUMNS, Store, default_store, default_store_url, open_store, redact_url, store_file

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, Span

__all__ = [
    "DEFAULT",
    "FRAME_HIDDEN_ATTRIBUTES",
    "RECORD_COLUMNS",
    "SpanStore",
    "frame_record",
    "span_record",
    "span_to_row",
]

logger = logging.getLogger("agentnb.observability")

DEFAULT = "default"
"""Pass as ``store`` to write to :func:`agentnb.store.default_store` (opened on the first write)."""

# Attributes that become their own DataFrame columns; the ``attributes`` column holds the rest.
PROMOTED_ATTRIBUTES = frozenset(
    {GEN_AI_AGENT_NAME, GEN_AI_TOOL_NAME, GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_OUTPUT_TOKENS}
)


RECORD_COLUMNS: tuple[str, ...] = SPAN_COLUMNS[1:]
"""The fields of a span record, in order: the run store's span columns without its row ``id``."""


# Ids are written as lowercase hex, zero-padded: ``n.to_bytes(16, "big").hex()`` is what
# ``format(n, "032x")`` gives, at half the cost (it runs for every id of every span).


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _kind_names() -> dict[int, str]:
    from opentelemetry.trace import SpanKind, StatusCode

    # Keyed by identity: hashing an Enum member runs Python code, id() does not.
    return {id(member): member.name for enum in (SpanKind, StatusCode) for member in enum}


_NAMES: dict[int, str] = {}


def _resource_of(span: ReadableSpan) -> Resource | None:
    # Annotated as always present, but a ReadableSpan built without one holds None.
    return cast("Resource | None", span.resource)


def _attributes_of(span: Any) -> dict[str, Any]:
    """A finished span's attributes as a plain dict of its own.

    An SDK span's ``attributes`` is a read-only view of its attribute mapping; ``copy()`` on it returns a
    plain dict in one C call, so the lookups that follow are plain dict lookups (a miss raises nothing).
    """
    attributes = span.attributes
    if not attributes:
        return {}
    try:
        return attributes.copy()
    except AttributeError:  # a span type whose mapping cannot copy itself
        return dict(attributes)


def span_record(span: ReadableSpan, resources: dict[int, dict[str, Any]] | None = None) -> tuple[Any, ...]:
    """Turn a finished SDK span into a tuple in :data:`RECORD_COLUMNS` order (the fast internal form).

    ``attributes`` is the span's own (read-only) mapping; ``resources`` caches resource dicts across calls.
    """
    if not _NAMES:
        _NAMES.update(_kind_names())
    names = _NAMES
    ctx = span.context
    parent = span.parent
    attrs = _attributes_of(span)
    status = span.status
    get = attrs.get
    events = span.events
    resource = _resource_of(span)
    if resources is None:
        resource_attrs = dict(resource.attributes) if resource is not None else {}
    else:
        resource_attrs = resources.get(id(resource))
        if resource_attrs is None:
            resource_attrs = resources[id(resource)] = dict(resource.attributes) if resource is not None else {}
    return (
        ctx.trace_id.to_bytes(16, "big").hex() if ctx is not None else "0" * 32,
        ctx.span_id.to_bytes(8, "big").hex() if ctx is not None else "0" * 16,
        parent.span_id.to_bytes(8, "big").hex() if parent is not None else None,
        span.name,
        names[id(span.kind)],
        span.start_time or 0,
        span.end_time,
        names[id(status.status_code)],
        status.description,
        _str_or_none(get(GEN_AI_OPERATION_NAME)),
        _str_or_none(get(GEN_AI_AGENT_NAME)),
        _str_or_none(get(GEN_AI_RESPONSE_MODEL) or get(GEN_AI_REQUEST_MODEL)),
        _str_or_none(get(GEN_AI_TOOL_NAME)),
        _int_or_none(get(GEN_AI_USAGE_INPUT_TOKENS)),
        _int_or_none(get(GEN_AI_USAGE_OUTPUT_TOKENS)),
        _str_or_none(get(WORKFLOW_RUN_ID)),
        attrs,
        [{"name": e.name, "timestamp_ns": e.timestamp, "attributes": dict(e.attributes or {})} for e in events]
        if events
        else [],
        resource_attrs,
    )


# Attributes a DataFrame shows as columns; its ``attributes`` column holds the rest.
FRAME_HIDDEN_ATTRIBUTES = (*sorted(PROMOTED_ATTRIBUTES), GEN_AI_OPERATION_NAME)


# The last trace id frame_record made hex of, as one tuple (read and replaced whole, so threads never mix two).
_LAST_TRACE: list[tuple[int, str]] = [(-1, "")]


def frame_record(span: ReadableSpan) -> tuple[Any, ...]:
    """Turn a finished SDK span into the first 17 :data:`RECORD_COLUMNS` fields, ready for a DataFrame.

    The per-span step of ``traces()`` from memory: no events or resource, and ``attributes`` is a private
    copy without the keys that became columns (they are popped out of it, not looked up twice).
    """
    if not _NAMES:
        _NAMES.update(_kind_names())
    names = _NAMES
    sdk_spans, bounded, sdk_fields, public_fields, _ = _READERS[0] if _READERS else _readers()
    attrs: dict[str, Any]
    if type(span) in sdk_spans:  # the fields in one call, as the writer reads them (see _PUBLIC_FIELDS)
        ctx, parent, raw, status, _, _, name, kind, start, end = sdk_fields(span)
        if type(raw) is dict:
            attrs = cast("dict[str, Any]", raw).copy()
        else:
            attrs = raw._dict.copy() if type(raw) is bounded else dict(raw or {})
    else:
        ctx, parent, _, status, _, _, name, kind, start, end = public_fields(span)
        attrs = _attributes_of(span)
    pop = attrs.pop
    operation = pop(GEN_AI_OPERATION_NAME, None)
    agent = pop(GEN_AI_AGENT_NAME, None)
    tool = pop(GEN_AI_TOOL_NAME, None)
    input_tokens = pop(GEN_AI_USAGE_INPUT_TOKENS, None)
    output_tokens = pop(GEN_AI_USAGE_OUTPUT_TOKENS, None)
    get = attrs.get
    if ctx is None:
        trace_hex, span_hex = "0" * 32, "0" * 16
    else:
        # The spans of a turn end one after another: their trace id becomes hex once.
        trace, span_hex = ctx.trace_id, ctx.span_id.to_bytes(8, "big").hex()
        last = _LAST_TRACE[0]
        if last[0] == trace:
            trace_hex = last[1]
        else:
            trace_hex = trace.to_bytes(16, "big").hex()
            _LAST_TRACE[0] = (trace, trace_hex)
    return (
        trace_hex,
        span_hex,
        parent.span_id.to_bytes(8, "big").hex() if parent is not None else None,
        name,
        names[id(kind)],
        start or 0,
        end,
        names[id(status.status_code)],
        status.description,
        operation,
        agent,
        get(GEN_AI_RESPONSE_MODEL) or get(GEN_AI_REQUEST_MODEL),
        tool,
        input_tokens if input_tokens is None or type(input_tokens) is int else _int_or_none(input_tokens),
        output_tokens if output_tokens is None or type(output_tokens) is int else _int_or_none(output_tokens),
        get(WORKFLOW_RUN_ID),
        attrs,
    )


def span_to_row(span: ReadableSpan) -> dict[str, Any]:
    """Turn a finished SDK span into a run-store span row (see :data:`agentnb.store.SPAN_COLUMNS`)."""
    row = dict(zip(RECORD_COLUMNS, span_record(span), strict=True))
    row["attributes"] = dict(row["attributes"])
    return row


# OTel attribute values are primitives or tuples of them; anything else is shown as text, never lost. One
# encoder for every span: json.dumps with non-default options would build a new encoder per call.
_json_text = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":")).encode


def _json_encoder() -> Callable[[Any], str]:
    """The writer's JSON encoder: orjson when installed (about eight times faster), else :mod:`json`.

    What orjson refuses (an integer over 64 bits, say) is encoded by :mod:`json` instead.
    """
    try:
        from orjson import dumps
    except ImportError:
        return _json_text

    def encode(value: Any) -> str:
        try:
            return dumps(value, default=str).decode()
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            return _json_text(value)

    return encode


class SpanStore:
    """Keep finished spans in memory (bounded) and write them to the run store off the hot path.

    Add it to an SDK ``TracerProvider`` as a span processor; :func:`configure_otel_providers` and
    :func:`enable_instrumentation` do that for you.

    Args:
        store: A :class:`~agentnb.store.Store`, a database path or store URL, ``"default"`` (the process-wide default
            store, opened on the first write) or ``None`` to keep spans in memory only.
        max_spans: How many recent spans the memory buffer keeps.
        max_pending: How many spans may wait to be written; past this the oldest are dropped, counted in
            :attr:`dropped` and reported once as a warning, rather than letting a stuck database grow memory
            without bound.
        flush_interval: Seconds between background writes.
        batch_size: A write starts early once this many spans wait.
        precompute: For memory-only stores, convert each span for :func:`traces` as it ends (about two
            microseconds), so a DataFrame of many spans builds fast; off, they are converted on the first read.

    Example:
        ```python
        from opentelemetry.sdk.trace import TracerProvider
        from agentnb.observability import SpanStore

        spans = SpanStore(None)
        provider = TracerProvider()
        provider.add_span_processor(spans)
        with provider.get_tracer("demo").start_as_current_span("hello"):
            pass
        print([s.name for s in spans.spans()])
        ```
    """

    accepts_light_spans = True
    """It only keeps finished spans, so agentnb may hand it light spans (see :mod:`agentnb._telemetry_spans`)."""

    def __init__(
        self,
        store: Store | str | os.PathLike[str] | None = DEFAULT,
        *,
        max_spans: int = 100_000,
        max_pending: int = 100_000,
        flush_interval: float = 0.5,
        batch_size: int = 512,
        precompute: bool = True,
    ) -> None:
        if max_spans < 1 or max_pending < 1 or batch_size < 1:
            raise ValueError("max_spans, max_pending and batch_size must be >= 1.")
        if flush_interval <= 0:
            raise ValueError(f"flush_interval must be > 0, got {flush_interval}.")
        self._store_arg = store
        self._store: Store | None = store if isinstance(store, Store) else None
        self._owns_store = False
        # Each entry is [span, frame record or None]. Memory-only stores are read from memory, so with
        # ``precompute`` a span is converted as it ends; otherwise the first traces() call that needs the
        # record computes and keeps it (stores that write to SQLite are read from there instead).
        self._buffer: deque[list[Any]] = deque(maxlen=max_spans)
        self._precompute = precompute and store is None
        self._pending: deque[ReadableSpan] = deque()
        self.max_pending = max_pending
        self.flush_interval = flush_interval
        self.batch_size = batch_size
        self.dropped = 0
        """Spans that were never written because the queue was full or the database failed."""
        self.written = 0
        """Spans written to the run store so far."""
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._drain_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._shutdown = False
        self._warned = False
        self._warned_full = False
        # Interpreter exit writes what is still queued (the SDK provider also calls shutdown() at exit).
        ref = weakref.ref(self)
        atexit.register(lambda: (s := ref()) is not None and s.shutdown())
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=lambda: (s := ref()) is not None and s._after_fork())

    def __repr__(self) -> str:
        return f"SpanStore({self.store_url or 'memory'}, spans={len(self._buffer)}, pending={len(self._pending)})"

    @property
    def persistent(self) -> bool:
        """Whether spans are written to a run store (else they live only in memory)."""
        return self._store_arg is not None

    @property
    def store_path(self) -> Path | None:
        """The database file spans are written to (``None`` for memory-only and in-memory databases)."""
        if self._store is not None:
            return self._store.path
        url = self.store_url
        return None if url is None else store_file(url)

    @property
    def store_url(self) -> str | None:
        """The URL of the store spans are written to, without a password (``None`` for memory-only)."""
        if self._store is not None:
            return self._store.url
        arg = self._store_arg
        if arg is None or isinstance(arg, Store):
            return None if arg is None else arg.url
        return redact_url(default_store_url() if arg == DEFAULT else os.fspath(arg))

    def run_store(self) -> Store | None:
        """Return the run store spans go to, opening it if needed (``None`` for memory-only)."""
        if self._store is None and self._store_arg is not None:
            arg = self._store_arg
            if arg == DEFAULT:
                self._store = default_store()
            elif not isinstance(arg, Store):
                self._store = open_store(arg)
                self._owns_store = True
        return self._store

    # ------------------------------------------------------------------ SpanProcessor interface

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Do nothing: spans are recorded when they end."""

    def _on_ending(self, span: Span) -> None:
        """Do nothing (newer SDKs call this just before ``on_end``)."""

    def on_end(self, span: ReadableSpan) -> None:
        """Record a finished span; cheap, never touches the database."""
        if self._store_arg is None:
            self._buffer.append([span, frame_record(span) if self._precompute else None])
            return
        self._buffer.append([span, None])
        if self._shutdown:
            return
        if len(self._pending) >= self.max_pending:
            self._pending.popleft()
            self.dropped += 1
            if not self._warned_full:
                self._warned_full = True
                logger.warning(
                    "agentnb's span store is shedding load: %d spans wait to be written (max_pending), so the "
                    "oldest are dropped; SpanStore.dropped counts them. Is the run store's disk slow or locked?",
                    self.max_pending,
                )
        self._pending.append(span)
        if self._thread is None:
            self._start_thread()
        if len(self._pending) >= self.batch_size:
            self._wake.set()

    def shutdown(self) -> None:
        """Stop the background thread and write every queued span; calling it again does nothing."""
        if self._shutdown:
            return
        self._shutdown = True
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
        self._drain()
        if self._owns_store and self._store is not None:
            self._store.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Write every queued span now, in the calling thread."""
        self._drain()
        return True

    # ------------------------------------------------------------------ memory buffer

    def spans(self) -> list[ReadableSpan]:
        """Return the spans in the memory buffer, oldest first."""
        return [entry[0] for entry in list(self._buffer)]

    def newest_spans(self) -> Iterator[ReadableSpan]:
        """Yield the spans in the memory buffer, newest first, without copying it (for readers that stop early).

        Raises:
            RuntimeError: A span ended during the iteration (read :meth:`spans` instead).
        """
        for entry in reversed(self._buffer):
            yield entry[0]

    def rows(self) -> list[dict[str, Any]]:
        """Return the memory buffer as run-store span rows, oldest first."""
        return [span_to_row(entry[0]) for entry in list(self._buffer)]

    def records(self) -> list[tuple[Any, ...]]:
        """Return the memory buffer as span tuples in :data:`RECORD_COLUMNS` order, oldest first."""
        resources: dict[int, dict[str, Any]] = {}
        return [span_record(entry[0], resources) for entry in list(self._buffer)]

    def frame_records(self) -> list[tuple[Any, ...]]:
        """Return the memory buffer as :func:`frame_record` tuples, oldest first (what ``traces()`` reads)."""
        entries = list(self._buffer)
        if self._precompute:  # every span was converted as it ended
            return [entry[1] for entry in entries]
        records: list[tuple[Any, ...]] = []
        for entry in entries:
            record = entry[1]
            if record is None:
                # Two readers may race to fill the same entry; both compute the same tuple.
                record = entry[1] = frame_record(entry[0])
            records.append(record)
        return records

    def clear(self) -> None:
        """Forget the spans in the memory buffer (stored spans stay)."""
        self._buffer.clear()

    def __len__(self) -> int:
        return len(self._buffer)

    # ------------------------------------------------------------------ writing

    def _start_thread(self) -> None:
        with self._thread_lock:
            if self._thread is None and not self._shutdown:
                self._thread = threading.Thread(target=self._run, name="agentnb-span-store", daemon=True)
                self._thread.start()

    def _after_fork(self) -> None:
        # The writer thread did not survive the fork and the parent's SQLite connection must not be reused.
        self._thread = None
        self._drain_lock = threading.Lock()
        self._thread_lock = threading.Lock()
        self._pending.clear()
        if self._store_arg == DEFAULT or self._owns_store:
            self._store = None
            self._owns_store = False

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.flush_interval)
            self._wake.clear()
            self._drain()

    def _drain(self) -> None:
        with self._drain_lock:
            while self._pending:
                batch: list[ReadableSpan] = []
                while self._pending and len(batch) < self.batch_size:
                    batch.append(self._pending.popleft())
                self._write(batch)

    def _write(self, batch: Sequence[ReadableSpan]) -> None:
        try:
            store = self.run_store()
            if store is None:
                return
            store.add_span_records(self._encode(batch))
            self.written += len(batch)
        except Exception as exc:  # a background writer must not die; report once and count the loss
            self.dropped += len(batch)
            if self._store_arg == DEFAULT:
                self._store = None  # look the shared store up again next time (it may have been closed)
            if not self._warned:
                self._warned = True
                logger.error("agentnb could not write %d spans to the run store: %s", len(batch), exc)

    @staticmethod
    def _encode(batch: Iterable[ReadableSpan]) -> list[tuple[Any, ...]]:
        """Turn spans into run-store records (:data:`RECORD_COLUMNS` order) with the JSON columns as text.

        The writer thread's inner loop (see :func:`_encode_spans`).
        """
        return _encode_spans(batch)


# What the SDK's ReadableSpan properties return, read in one C call: each of its properties returns one of
# these fields as is (``attributes`` wraps its field in a read-only view, ``events`` copies its list into a
# tuple). Only an exact ReadableSpan or an agentnb light span (which keeps the same fields, its attributes in a
# plain dict) is read this way; any other span class goes through the properties,
# and a test checks that both give the same records.
_PUBLIC_FIELDS = (
    "context",
    "parent",
    "attributes",
    "status",
    "resource",
    "events",
    "name",
    "kind",
    "start_time",
    "end_time",
)
_SDK_FIELDS = tuple(f"_{field}" for field in _PUBLIC_FIELDS)


# The attributes copied into columns of their own, in the order _encode_spans reads them.
_COLUMN_ATTRIBUTES = (
    GEN_AI_OPERATION_NAME,
    GEN_AI_AGENT_NAME,
    GEN_AI_RESPONSE_MODEL,
    GEN_AI_REQUEST_MODEL,
    GEN_AI_TOOL_NAME,
    GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS,
    WORKFLOW_RUN_ID,
)


class _Readers(NamedTuple):
    sdk_spans: tuple[type, ...]
    bounded: type
    sdk_fields: Callable[[Any], tuple[Any, ...]]
    public_fields: Callable[[Any], tuple[Any, ...]]
    dumps: Callable[[Any], str]


_READERS: list[_Readers] = []


class _NoSuchType:
    """Stands for a type the installed SDK does not lay out as expected (nothing is ever of this type)."""


def _readers() -> _Readers:
    if not _READERS:
        from opentelemetry.attributes import BoundedAttributes
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan

        from .._telemetry_spans import LightSpan

        # An SDK outside the declared range may keep these fields differently: its spans are then read
        # through their public properties (slower, the same records); light spans always have them.
        sample = ReadableSpan(name="agentnb layout check", resource=Resource.get_empty())
        fits = all(hasattr(sample, field) for field in _SDK_FIELDS)
        bounded: type = BoundedAttributes if hasattr(BoundedAttributes(), "_dict") else _NoSuchType
        _READERS.append(
            _Readers(
                (ReadableSpan, LightSpan) if fits else (LightSpan,),
                bounded,
                attrgetter(*_SDK_FIELDS),
                attrgetter(*_PUBLIC_FIELDS),
                _json_encoder(),
            )
        )
    return _READERS[0]


def _encode_spans(batch: Iterable[ReadableSpan], *, public: bool = False) -> list[tuple[Any, ...]]:
    """Turn finished spans into run-store records (:data:`RECORD_COLUMNS` order), JSON columns as text.

    Each span is read once, straight into its record: an SDK ``ReadableSpan``'s fields in one call (its
    attribute dict is encoded as it is, not copied), the resource (shared by every span of a provider) and
    the status (the SDK shares one for all spans that never set theirs) converted once per batch, and a
    trace id turned into hex once for the spans of a trace that follow one another. ``public`` reads every
    span through its public properties (what any other span class gets; tests compare the two).
    """
    if not _NAMES:
        _NAMES.update(_kind_names())
    names = _NAMES
    sdk_spans, bounded, sdk_fields, public_fields, dumps = _readers()
    # Keyed by id(): each object is kept alive in ``seen`` for the batch, so its id cannot be reused by another
    # (a span class whose property makes a new object on every read would otherwise free it at once).
    resources: dict[int, str] = {}
    statuses: dict[int, tuple[str, str | None]] = {}
    seen: list[Any] = []
    last_trace, last_hex = -1, ""
    out: list[tuple[Any, ...]] = []
    append = out.append
    for span in batch:
        attrs: dict[str, Any]
        if type(span) in sdk_spans and not public:
            ctx, parent, raw, status, resource, events, name, kind, start, end = sdk_fields(span)
            if type(raw) is bounded:
                attrs = raw._dict
            elif raw is None:
                attrs = {}
            else:
                attrs = cast("dict[str, Any]", raw) if type(raw) is dict else dict(raw)
        else:
            ctx, parent, _, status, resource, events, name, kind, start, end = public_fields(span)
            attrs = _attributes_of(span)
        key = id(resource)
        resource_text = resources.get(key)
        if resource_text is None:
            resource_text = resources[key] = dumps(dict(resource.attributes) if resource is not None else {})
            seen.append(resource)
        code = statuses.get(id(status))
        if code is None:
            code = statuses[id(status)] = (names[id(status.status_code)], status.description)
            seen.append(status)
        if ctx is None:
            trace_hex, span_hex = "0" * 32, "0" * 16
        else:
            trace = ctx.trace_id
            if trace != last_trace:
                last_trace, last_hex = trace, trace.to_bytes(16, "big").hex()
            trace_hex, span_hex = last_hex, ctx.span_id.to_bytes(8, "big").hex()
        operation, agent, model, request_model, tool, input_tokens, output_tokens, run_id = map(
            attrs.get, _COLUMN_ATTRIBUTES
        )
        model = model or request_model
        append(
            (
                trace_hex,
                span_hex,
                parent.span_id.to_bytes(8, "big").hex() if parent is not None else None,
                name,
                names[id(kind)],
                start or 0,
                end,
                code[0],
                code[1],
                operation if operation is None or type(operation) is str else str(operation),
                agent if agent is None or type(agent) is str else str(agent),
                model if model is None or type(model) is str else str(model),
                tool if tool is None or type(tool) is str else str(tool),
                input_tokens if input_tokens is None or type(input_tokens) is int else _int_or_none(input_tokens),
                output_tokens if output_tokens is None or type(output_tokens) is int else _int_or_none(output_tokens),
                run_id if run_id is None or type(run_id) is str else str(run_id),
                dumps(attrs) if attrs else "{}",
                dumps(
                    [
                        {"name": e.name, "timestamp_ns": e.timestamp, "attributes": dict(e.attributes or {})}
                        for e in events
                    ]
                )
                if events
                else "[]",
                resource_text,
            )
        )
    return out
