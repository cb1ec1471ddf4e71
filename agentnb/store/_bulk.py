"""Many runs with their events and spans in one read: a query per kind, not a query per run.

Building a dataset from 100,000 runs, or giving every case of an evaluation its spans, asked the store once
per run; a database answers one query over many ids far faster than as many single-id queries. Ids go in
fixed-size chunks (a short chunk repeats its last id), so each kind is one prepared statement, and no query
passes more parameters than SQLite or PostgreSQL accept. The SQL is portable, as everywhere in the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence
from operator import itemgetter
from typing import Any, Literal, TypedDict, cast

from .._gc import gc_paused
from ._backend import Backend
from ._runs import EventRow, RunRow
from ._spans import SpanRow

__all__ = ["RUN_PARTS", "BulkTables", "RunPart", "RunRecords", "read_runs"]

RunPart = Literal["run", "events", "spans"]
"""What :func:`read_runs` reads of each run: its row, its events, its spans."""

RUN_PARTS: tuple[RunPart, ...] = ("run", "events", "spans")

_CHUNK = 500
_RUN_COLUMNS: tuple[str, ...] = (
    "run_id",
    "kind",
    "name",
    "status",
    "started_at",
    "ended_at",
    "error",
    "metadata",
    "rev",
)
_EVENT_COLUMNS: tuple[str, ...] = ("id", "run_id", "seq", "type", "executor_id", "timestamp", "data")
_SPAN_COLUMNS: tuple[str, ...] = (
    "id",
    "trace_id",
    "span_id",
    "parent_id",
    "name",
    "kind",
    "start_ns",
    "end_ns",
    "status_code",
    "status_message",
    "operation",
    "agent_name",
    "model",
    "tool_name",
    "input_tokens",
    "output_tokens",
    "run_id",
    "attributes",
    "events",
    "resource",
)
_RUN_METADATA = _RUN_COLUMNS.index("metadata")
_SPAN_RUN_ID = _SPAN_COLUMNS.index("run_id")
_MARKS = ", ".join("?" * _CHUNK)
_RUNS_SQL = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE run_id IN ({_MARKS})"
_EVENTS_SQL = f"SELECT {', '.join(_EVENT_COLUMNS)} FROM events WHERE run_id IN ({_MARKS})"
_EVENTS_ORDER = " ORDER BY run_id, seq"
# Stored order, then a stable sort by start time per run: the order list_spans gives, without asking the
# database to walk the start-time index.
_SPANS_SQL = f"SELECT {', '.join(_SPAN_COLUMNS)} FROM spans WHERE run_id IN ({_MARKS}) ORDER BY id"


class RunRecords(TypedDict):
    """One run as :func:`read_runs` returns it; a part that was not asked for is ``None`` / empty.

    Attributes:
        run: The run's row (as ``Store.get_run`` gives it), ``None`` when it is not stored or not asked for.
        events: Its events in ``seq`` order (as ``Store.list_events`` gives them: ``data`` stays JSON text).
        spans: Its spans in start order (as ``Store.list_spans`` gives them, JSON columns decoded).
    """

    run: RunRow | None
    events: list[EventRow]
    spans: list[SpanRow]


class BulkTables(Backend):
    """Many runs with their events and spans at once: the part of :class:`~agentnb.store.Store` that reads
    across kinds for batch work (datasets from runs, spans for evaluation cases)."""

    def read_runs(
        self,
        run_ids: Sequence[str],
        *,
        parts: Collection[RunPart] | RunPart = ("run", "events"),
        event_types: Sequence[str] | None = None,
    ) -> dict[str, RunRecords]:
        """Read many runs with their events and spans: one query per kind for up to 500 runs, not one per run.

        Args:
            run_ids: The runs; each gets an entry, in this order (``run`` is ``None`` for one not stored).
            parts: What to read of each: ``"run"`` (its row), ``"events"``, ``"spans"``.
            event_types: Only events of these types.

        Returns:
            ``{run_id: {"run": ..., "events": [...], "spans": [...]}}`` in the shapes of :meth:`get_run`,
            :meth:`list_events` and :meth:`list_spans`; a part not asked for stays ``None`` / empty.
        """
        return read_runs(self._read, run_ids, parts=parts, event_types=event_types)


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        yield chunk + [chunk[-1]] * (_CHUNK - len(chunk))


def read_runs(
    query: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]],
    run_ids: Sequence[str],
    *,
    parts: Collection[RunPart] | RunPart = ("run", "events"),
    event_types: Sequence[str] | None = None,
) -> dict[str, RunRecords]:
    """Read the runs ``run_ids`` and the ``parts`` asked for; every id gets an entry, in the order given.

    ``query`` runs one SQL statement with ``?`` placeholders (a store's ``_read``).
    """
    chosen: tuple[str, ...] = (parts,) if isinstance(parts, str) else tuple(parts)
    unknown = [p for p in chosen if p not in RUN_PARTS]
    if unknown:
        raise ValueError(f"Unknown run parts {unknown}; choose from {list(RUN_PARTS)}.")
    with gc_paused():
        return _read(query, [str(r) for r in run_ids], chosen, list(event_types or ()))


def _read(
    query: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]],
    ids: list[str],
    parts: tuple[str, ...],
    types: list[str],
) -> dict[str, RunRecords]:
    out: dict[str, RunRecords] = {r: {"run": None, "events": [], "spans": []} for r in ids}
    if not out:
        return out
    events_sql = _EVENTS_SQL + (f" AND type IN ({', '.join('?' * len(types))})" if types else "") + _EVENTS_ORDER
    loads = json.loads
    # Each run's list's append, looked up once: a read of 100,000 runs appends hundreds of thousands of rows.
    appends: dict[str, dict[str, Callable[[Any], None]]] = {
        part: {r: cast("list[Any]", records[part]).append for r, records in out.items()}
        for part in ("events", "spans")
        if part in parts
    }
    add_event, add_span = appends.get("events", {}), appends.get("spans", {})
    for chunk in _chunks(list(out)):
        if "run" in parts:
            for row in query(_RUNS_SQL, chunk):
                run = dict(zip(_RUN_COLUMNS, row, strict=True), metadata=loads(row[_RUN_METADATA]))
                out[row[0]]["run"] = cast("RunRow", run)
        if "events" in parts:
            columns = _EVENT_COLUMNS
            for row in query(events_sql, [*chunk, *types]):
                add_event[row[1]](dict(zip(columns, row, strict=True)))
        if "spans" in parts:
            for row in query(_SPANS_SQL, chunk):
                span = dict(zip(_SPAN_COLUMNS, row, strict=True))
                span["attributes"] = _decode(span["attributes"], loads)
                span["events"] = _decode(span["events"], loads)
                span["resource"] = _decode(span["resource"], loads)
                add_span[row[_SPAN_RUN_ID]](span)
    if "spans" in parts:
        by_start = itemgetter("start_ns")  # a C key: the read may sort 100,000 runs' spans
        for records in out.values():
            records["spans"].sort(key=by_start)
    return out


def _decode(text: str, loads: Callable[[str], Any]) -> Any:
    # Most spans have no events and many no attributes: skip the parser for the empty ones.
    if text == "{}":
        return {}
    if text == "[]":
        return []
    return loads(text)
