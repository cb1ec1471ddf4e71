"""Give finished cases their stored spans when a scorer first reads a trace, many cases in one read.

A case that ran with tracing on has spans in the run store (a chat span per model call with its model, tokens
and duration; an execute_tool span per tool call), which say more than the conversation: per-call tokens,
latency, the model each call used. ``evaluate`` hands every such case to a :class:`CaseSpans`; the first
``result.trace`` asked for writes out the spans this process has queued and reads the spans of up to 500 cases
waiting, in one bulk read of the store, so rescoring 10,000 stored cases costs 20 queries, not 10,000.
A case whose trace no scorer reads costs nothing. Traced with no store behind the tracing (a memory-only span
store), the spans are read from the span store's memory instead, so the same scorers see the same trace.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._cases import CaseResult

__all__ = ["READ_AT_ONCE", "SPAN_LOADER", "CaseSpans", "memory_spans"]

#: Where a waiting result keeps the loader that will give it its spans (read by ``CaseResult.trace``).
SPAN_LOADER = "_span_loader"

#: How many waiting cases one read gives spans to (the store reads 500 runs per query).
READ_AT_ONCE = 500


def _span_store() -> Any:
    """The span store agentnb traces to in this process (``None`` when nothing was traced here)."""
    if "agentnb.observability" not in sys.modules:  # nothing traced here; never load it just to ask
        return None
    from ..observability import get_span_store

    return get_span_store()


def _tracing_store(run_store: Any, span_store: Any) -> Any:
    """The store this process's spans are written to, with everything queued written; else ``run_store``.

    Spans traced in this process wait in the span writer's queue (it writes in batches, off the hot path);
    cases run on Ray workers have theirs written by the worker before it reports, to the shared store.
    """
    if span_store is None or not span_store.persistent:
        return run_store
    span_store.force_flush()
    return span_store.run_store() or run_store


#: Spans may end slightly out of order across threads: the newest-first scan of memory looks this far (10 ms)
#: (in nanoseconds) past the point where a run's spans should have ended.
_SLACK_NS = 10_000_000


def memory_spans(span_store: Any, run_ids: Collection[str]) -> dict[str, list[dict[str, Any]]]:
    """The spans of ``run_ids`` that a memory-only span store keeps, as run-store span rows in start order.

    With no run store behind the tracing (``configure_otel_providers(store=None)``), a case's spans live only
    in the span store's memory buffer. The buffer is scanned newest first: a run's outermost span (the
    case's own, or its workflow run's) ends last and starts first, so once the scan passes the earliest start
    of every run asked for, nothing older can belong to them and it stops. Runs without spans in memory
    are left out.
    """
    from ..observability import span_to_row

    wanted = set(run_ids)
    try:  # newest first without copying the buffer: a finished case's spans are among the newest
        found = _scan(span_store.newest_spans(), wanted)
    except RuntimeError:  # a span ended during the scan: read a copy of the buffer
        found = _scan(reversed(span_store.spans()), wanted)
    rows: dict[str, list[dict[str, Any]]] = {}
    for run_id, spans in found.items():
        rows[run_id] = sorted((span_to_row(s) for s in spans), key=lambda row: row["start_ns"])
    return rows


def _scan(newest_first: Iterable[Any], wanted: set[str]) -> dict[str, list[Any]]:
    """The spans of the runs ``wanted``, from spans newest first; stops once past the earliest start of all."""
    from .._telemetry import WORKFLOW_RUN_ID

    found: dict[str, list[Any]] = {}
    earliest: int | None = None  # the earliest start of a span found
    for span in newest_first:
        if earliest is not None and len(found) == len(wanted) and (span.end_time or 0) < earliest - _SLACK_NS:
            break
        attributes = span.attributes
        run_id = attributes.get(WORKFLOW_RUN_ID) if attributes else None
        if run_id not in wanted:
            continue
        found.setdefault(run_id, []).append(span)
        start = span.start_time or 0
        earliest = start if earliest is None else min(earliest, start)
    return found


class CaseSpans:
    """Cases waiting for their stored spans, read together the first time any one of them is needed.

    Args:
        run_store: The evaluation's store (where spans are read when this process writes none itself).
    """

    def __init__(self, run_store: Any) -> None:
        self._run_store = run_store
        self._waiting: dict[str, CaseResult] = {}

    def expect(self, result: CaseResult) -> None:
        """Queue a result whose spans may be stored (it ran traced and has no spans yet)."""
        if result.spans is None and result.trace_id and result.run_id:
            self._waiting[result.run_id] = result
            result.__dict__[SPAN_LOADER] = self

    def forget(self, result: CaseResult) -> None:
        """Drop a result nobody asked the trace of (scored already: it must not be kept alive here)."""
        if result.run_id is not None and self._waiting.get(result.run_id) is result:
            del self._waiting[result.run_id]
        result.__dict__.pop(SPAN_LOADER, None)

    def load(self, result: CaseResult | None = None) -> None:
        """Read the spans of ``result`` and of the results queued with it (one bulk read), giving each its own.

        At most :data:`READ_AT_ONCE` results per read, the oldest waiting first: scoring 10,000 stored cases
        then keeps a few hundred cases' spans alive at a time, not all of them (every object alive makes each
        full garbage collection longer), at the same number of queries (the store reads 500 runs per query).
        """
        if not self._waiting:
            return
        batch: dict[str, CaseResult] = {}
        if result is not None and result.run_id is not None and self._waiting.get(result.run_id) is result:
            batch[result.run_id] = self._waiting.pop(result.run_id)
        for run_id in list(itertools.islice(self._waiting, READ_AT_ONCE - len(batch))):
            batch[run_id] = self._waiting.pop(run_id)
        span_store = _span_store()
        spans: dict[str, list[Any]] = {}
        if span_store is not None and not span_store.persistent:
            spans = memory_spans(span_store, list(batch))  # traced with no store behind: spans live in memory
        stored = [run_id for run_id in batch if run_id not in spans]
        if stored:
            read = _tracing_store(self._run_store, span_store).read_runs(stored, parts=("spans",))
            spans.update((run_id, read[run_id]["spans"]) for run_id in stored)
        for run_id, waiting in batch.items():
            waiting.spans = spans[run_id]
            waiting.__dict__.pop(SPAN_LOADER, None)
