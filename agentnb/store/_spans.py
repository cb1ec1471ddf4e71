"""Spans and the per-trace summary every span write keeps: what traces (``agentnb.traces()``) and the DevUI read.

SQLite stores each span with its trace's number (``trace_no``), PostgreSQL with its trace id; ``_trace_key``
names that column, so the SQL here is written once for both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

from typing_extensions import Unpack

from ._backend import Backend
from ._values import plain_json, to_ns

__all__ = [
    "SPAN_COLUMNS",
    "TRACE_COLUMNS",
    "TRACE_UPSERT_SQL",
    "SpanFilter",
    "SpanFilterArgs",
    "SpanOrder",
    "SpanRow",
    "SpanTables",
    "TraceRow",
]

SpanOrder = Literal["start", "id"]
"""How :meth:`Store.select_spans` orders spans: by start time (then id), or by id (the order they were stored)."""

SPAN_COLUMNS: tuple[str, ...] = (
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
_SPAN_INSERT_COLUMNS = SPAN_COLUMNS[1:]
# SQLite (schema version 6) stores each span with its trace's number, keyed by (trace_no, span_id).
_SPAN_INSERT_SQL = (
    f"INSERT INTO spans (trace_no, {', '.join(_SPAN_INSERT_COLUMNS)}) "
    f"VALUES (?, {', '.join('?' * len(_SPAN_INSERT_COLUMNS))}) ON CONFLICT (trace_no, span_id) DO NOTHING"
)
# The same with the row id given, to continue past span_id_floor after the newest spans were deleted.
_SPAN_INSERT_WITH_ID_SQL = (
    f"INSERT INTO spans (id, trace_no, {', '.join(_SPAN_INSERT_COLUMNS)}) "
    f"VALUES (?, ?, {', '.join('?' * len(_SPAN_INSERT_COLUMNS))}) ON CONFLICT (trace_no, span_id) DO NOTHING"
)
# Trace numbers are looked up a fixed number of ids at a time (a short chunk repeats its last id), so the
# statement is prepared once; SQLite's JSON functions are not in every build, so no json_each.
_TRACE_NUMBERS_CHUNK = 64
_TRACE_NUMBERS_SQL = (
    f"SELECT trace_id, trace_no FROM traces WHERE trace_id IN ({', '.join('?' * _TRACE_NUMBERS_CHUNK)})"
)
_SPAN_IDS_SQL = "SELECT (SELECT MAX(id) FROM span_id_floor), (SELECT MAX(id) FROM spans)"
_SPAN_REQUIRED = ("trace_id", "span_id", "name", "start_ns")
TRACE_COLUMNS = ("trace_id", "start_ns", "end_ns", "spans", "errors", "root", "agent_name")
# Adds one batch's summary of a trace to the stored one (CASE instead of min/max: portable SQL).
TRACE_UPSERT_SQL = (
    f"INSERT INTO traces ({', '.join(TRACE_COLUMNS)}) VALUES ({', '.join('?' * len(TRACE_COLUMNS))}) "
    "ON CONFLICT (trace_id) DO UPDATE SET "
    "start_ns = CASE WHEN excluded.start_ns < traces.start_ns THEN excluded.start_ns ELSE traces.start_ns END, "
    "end_ns = CASE WHEN excluded.end_ns IS NULL THEN traces.end_ns "
    "WHEN traces.end_ns IS NULL OR excluded.end_ns > traces.end_ns THEN excluded.end_ns ELSE traces.end_ns END, "
    "spans = traces.spans + excluded.spans, errors = traces.errors + excluded.errors, "
    "root = COALESCE(excluded.root, traces.root), agent_name = COALESCE(excluded.agent_name, traces.agent_name)"
)
# Recount the summary of one trace from its stored spans (after a delete, or a batch with repeats), in place
# (its number stays: SQLite's spans refer to it), once the summaries of traces with no span left are gone.
# ``{key}`` is the column spans and traces share: ``trace_no`` in SQLite, ``trace_id`` in PostgreSQL.
_TRACE_PRUNE_SQL = (
    "DELETE FROM traces WHERE trace_id = ? AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.{key} = traces.{key})"
)
_TRACE_RECOUNT_SQL = (
    "UPDATE traces SET (start_ns, end_ns, spans, errors, root, agent_name) = ("
    "SELECT MIN(start_ns), MAX(end_ns), COUNT(*), SUM(CASE WHEN status_code = 'ERROR' THEN 1 ELSE 0 END), "
    "MAX(CASE WHEN parent_id IS NULL THEN name END), MAX(CASE WHEN parent_id IS NULL THEN agent_name END) "
    "FROM spans s WHERE s.{key} = traces.{key}) WHERE trace_id = ?"
)
_I_SPAN = _SPAN_INSERT_COLUMNS.index("span_id")
_I_TRACE, _I_PARENT, _I_NAME, _I_START, _I_END, _I_STATUS, _I_AGENT = (
    _SPAN_INSERT_COLUMNS.index(c)
    for c in ("trace_id", "parent_id", "name", "start_ns", "end_ns", "status_code", "agent_name")
)


def _trace_summaries(records: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Summarize a batch of span records per trace, as rows of the ``traces`` table."""
    out: dict[str, list[Any]] = {}
    for r in records:
        root = r[_I_PARENT] is None
        row = out.get(r[_I_TRACE])
        if row is None:
            out[r[_I_TRACE]] = [
                r[_I_TRACE],
                r[_I_START],
                r[_I_END],
                1,
                1 if r[_I_STATUS] == "ERROR" else 0,
                r[_I_NAME] if root else None,
                r[_I_AGENT] if root else None,
            ]
            continue
        if r[_I_START] < row[1]:
            row[1] = r[_I_START]
        if r[_I_END] is not None and (row[2] is None or r[_I_END] > row[2]):
            row[2] = r[_I_END]
        row[3] += 1
        if r[_I_STATUS] == "ERROR":
            row[4] += 1
        if root:
            row[5], row[6] = r[_I_NAME], r[_I_AGENT]
    return list(out.values())


def _trace_numbers(conn: Any, trace_ids: list[str]) -> dict[str, int]:
    """The ``trace_no`` of each of these stored traces (SQLite)."""
    numbers: dict[str, int] = {}
    size = _TRACE_NUMBERS_CHUNK
    for i in range(0, len(trace_ids), size):
        chunk = trace_ids[i : i + size]
        chunk += [chunk[-1]] * (size - len(chunk))
        numbers.update(conn.execute(_TRACE_NUMBERS_SQL, chunk).fetchall())
    return numbers


_SPAN_DEFAULTS: dict[str, Any] = {"kind": "INTERNAL", "status_code": "UNSET"}
_SPAN_JSON_DEFAULTS = {"attributes": "{}", "events": "[]", "resource": "{}"}


class SpanRow(TypedDict):
    """A stored span, as :meth:`Store.list_spans` returns it (the keys are :data:`SPAN_COLUMNS`).

    ``attributes`` and ``resource`` are dicts and ``events`` a list, or their JSON text with ``decode=False``.
    """

    id: int
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int | None
    status_code: str
    status_message: str | None
    operation: str | None
    agent_name: str | None
    model: str | None
    tool_name: str | None
    input_tokens: int | None
    output_tokens: int | None
    run_id: str | None
    attributes: Any
    events: Any
    resource: Any


class TraceRow(TypedDict):
    """One trace's summary, as :meth:`Store.list_traces` returns it (the keys are :data:`TRACE_COLUMNS`)."""

    trace_id: str
    start_ns: int
    end_ns: int | None
    spans: int
    errors: int
    root: str | None
    agent_name: str | None


class SpanFilterArgs(TypedDict, total=False):
    """:class:`SpanFilter`'s fields as keywords, for the span reads that take them one by one."""

    trace_id: str | Sequence[str] | None
    agent_name: str | None
    run_id: str | None
    start: Any
    end: Any
    last_traces: int | None
    after_id: int | None


@dataclass(frozen=True, slots=True)
class SpanFilter:
    """Which spans a read keeps; every span read of the store (and ``traces()``) takes one.

    Fields left ``None`` do not filter. Times are datetimes, epoch seconds or ISO 8601 strings.

    Example:
        ```python
        from agentnb.store import RunStore, SpanFilter

        store = RunStore(":memory:")
        print(store.list_spans(SpanFilter(agent_name="helper", last_traces=5)))  # []
        ```
    """

    trace_id: str | Sequence[str] | None = None
    """One trace id or several."""
    agent_name: str | None = None
    """Only spans of this agent."""
    run_id: str | None = None
    """Only spans tagged with this run id."""
    start: Any = None
    """Only spans that started at or after this time."""
    end: Any = None
    """Only spans that started before this time."""
    last_traces: int | None = None
    """Only spans of the N most recently started traces."""
    after_id: int | None = None
    """Only spans stored after the row with this ``id`` (pollers pass the last one they saw)."""

    @classmethod
    def of(cls, where: SpanFilter | None, filters: SpanFilterArgs) -> SpanFilter:
        """The filter a read was given: ``where``, or its fields as keywords (not both)."""
        if where is None:
            return cls(**filters) if filters else _EVERY_SPAN
        if filters:
            raise TypeError(f"Give a SpanFilter or its fields as keywords, not both (got also {sorted(filters)}).")
        return where

    def conditions(self, trace_key: str) -> tuple[list[str], list[Any]]:
        """The SQL conditions (``?`` placeholders) and their parameters.

        ``trace_key`` is the column spans and traces share (``trace_no`` in SQLite, ``trace_id`` in PostgreSQL).
        """
        where: list[str] = []
        params: list[Any] = []
        key = trace_key
        if self.trace_id is not None:
            ids = [self.trace_id] if isinstance(self.trace_id, str) else list(self.trace_id)
            marks = ", ".join("?" * len(ids))
            # Spans are found by the key their unique index leads with (a trace's number in SQLite).
            where.append(
                f"trace_id IN ({marks})"
                if key == "trace_id"
                else f"{key} IN (SELECT {key} FROM traces WHERE trace_id IN ({marks}))"
            )
            params.extend(ids)
        if self.agent_name is not None:
            where.append("agent_name = ?")
            params.append(self.agent_name)
        if self.run_id is not None:
            where.append("run_id = ?")
            params.append(self.run_id)
        if self.start is not None:
            where.append("start_ns >= ?")
            params.append(to_ns(self.start))
        if self.end is not None:
            where.append("start_ns < ?")
            params.append(to_ns(self.end))
        if self.after_id is not None:
            where.append("id > ?")
            params.append(int(self.after_id))
        if self.last_traces is not None:
            where.append(f"{key} IN (SELECT {key} FROM traces ORDER BY start_ns DESC LIMIT ?)")
            params.append(int(self.last_traces))
        return where, params


_EVERY_SPAN = SpanFilter()


class SpanTables(Backend):
    """Spans and traces: the part of :class:`~agentnb.store.Store` that keeps telemetry."""

    def add_spans(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Write finished spans in one transaction; a span already stored (same trace and span id) is skipped.

        Each row needs ``trace_id``, ``span_id``, ``name`` and ``start_ns``; optional keys are the other
        columns of :data:`SPAN_COLUMNS` (``attributes``/``resource`` dicts, ``events`` a list, or JSON text).

        Returns:
            How many spans were new.
        """
        values: list[tuple[Any, ...]] = []
        for row in rows:
            missing = [key for key in _SPAN_REQUIRED if row.get(key) is None]
            if missing:
                raise ValueError(f"A span row needs {missing}; got keys {sorted(row)}.")
            value = tuple(
                plain_json(row.get(col), _SPAN_JSON_DEFAULTS[col])
                if col in _SPAN_JSON_DEFAULTS
                else row.get(col, _SPAN_DEFAULTS.get(col))
                for col in _SPAN_INSERT_COLUMNS
            )
            # Ids are text columns (a number given as an id is stored as its text, as SQLite's affinity did).
            if type(value[_I_TRACE]) is not str or type(value[_I_SPAN]) is not str:
                value = (str(value[_I_TRACE]), str(value[_I_SPAN]), *value[2:])
            values.append(value)
        return self.add_span_records(values)

    def add_span_records(self, records: Sequence[Sequence[Any]]) -> int:
        """Write spans given as tuples in :data:`SPAN_COLUMNS` order without ``id`` (JSON columns as text).

        The span store's fast path; :meth:`add_spans` checks and fills in dict rows instead. The ``traces``
        summary (what :meth:`list_traces` and ``last_traces`` read) is updated in the same transaction. A span
        stored before (same trace and span id) is skipped.

        Returns:
            How many spans were new.
        """
        if not records:
            return 0
        summaries = _trace_summaries(records)
        with self._write() as conn:
            self._serialize(conn, "spans")
            # The batch's traces first: a new trace gets the next number, a known one adds to its summary.
            conn.executemany(TRACE_UPSERT_SQL, summaries)
            numbers = _trace_numbers(conn, [t[0] for t in summaries])
            floor, top = conn.execute(_SPAN_IDS_SQL).fetchone()
            if floor is None:
                rows = [(numbers[r[_I_TRACE]], *r) for r in records]
                added = max(conn.executemany(_SPAN_INSERT_SQL, rows).rowcount, 0)
            else:  # the newest spans were deleted: ids go on from the highest ever given out
                first = max(floor, top or 0) + 1
                rows = [(first + i, numbers[r[_I_TRACE]], *r) for i, r in enumerate(records)]
                added = max(conn.executemany(_SPAN_INSERT_WITH_ID_SQL, rows).rowcount, 0)
                if added:  # a stored span's id is now the highest given out
                    conn.execute("DELETE FROM span_id_floor")
            if added < len(records):  # some spans were stored before: count their traces again
                self._recount_traces(conn, numbers)
            return added

    def _recount_traces(self, conn: Any, trace_ids: Iterable[str]) -> None:
        ids = [(trace_id,) for trace_id in trace_ids]
        conn.executemany(_TRACE_PRUNE_SQL.format(key=self._trace_key), ids)
        conn.executemany(_TRACE_RECOUNT_SQL.format(key=self._trace_key), ids)

    def list_spans(
        self,
        where: SpanFilter | None = None,
        *,
        limit: int | None = None,
        decode: bool = True,
        **filters: Unpack[SpanFilterArgs],
    ) -> list[SpanRow]:
        """List stored spans in start order.

        Args:
            where: Which spans to keep, as a :class:`SpanFilter` (or give its fields as keywords).
            limit: At most this many spans.
            decode: Parse ``attributes``, ``events`` and ``resource`` into Python values (else JSON text).
            filters: :class:`SpanFilter`'s fields (``trace_id``, ``agent_name``, ``run_id``, ``start``, ``end``,
                ``last_traces``, ``after_id``).
        """
        rows = self.select_spans(SPAN_COLUMNS, SpanFilter.of(where, filters), limit=limit)
        out: list[dict[str, Any]] = []  # cast once at the end: typing.cast is a call per row otherwise
        loads = json.loads
        for row in rows:
            span: dict[str, Any] = dict(zip(SPAN_COLUMNS, row, strict=True))
            if decode:
                span["attributes"] = loads(span["attributes"])
                span["events"] = loads(span["events"])
                span["resource"] = loads(span["resource"])
            out.append(span)
        return cast("list[SpanRow]", out)

    def select_spans(
        self,
        columns: Sequence[str],
        where: SpanFilter | None = None,
        *,
        limit: int | None = None,
        order: SpanOrder = "start",
        **filters: Unpack[SpanFilterArgs],
    ) -> list[tuple[Any, ...]]:
        """Return chosen span columns as tuples, in start order (JSON columns stay text).

        The fast path behind DataFrames; the filters are those of :meth:`list_spans`. ``order="id"`` returns
        the spans in the order they were stored instead, which costs the database nothing: a caller that
        sorts by start time itself (a stable sort, so equal start times stay in stored order) gets the same
        order as ``"start"`` without the database looking each row up through the start-time index.
        """
        sql, params = self._span_query(columns, SpanFilter.of(where, filters), limit=limit, order=order)
        return self._read(sql, params)

    def select_span_columns(
        self, columns: Sequence[str], where: SpanFilter | None = None, **filters: Unpack[SpanFilterArgs]
    ) -> dict[str, Any] | None:
        """Return chosen span columns as pyarrow arrays, in id order (stored order), or ``None``.

        A backend that can hand columns over without a Python object per value does (SQLite); ``None``
        means it cannot for this store or these values, and :meth:`select_spans` is the way to read them.
        The filters are those of :meth:`list_spans`.
        """
        return None

    @classmethod
    def _span_query(
        cls,
        columns: Sequence[str],
        where: SpanFilter | None = None,
        *,
        limit: int | None = None,
        order: SpanOrder = "start",
        **filters: Unpack[SpanFilterArgs],
    ) -> tuple[str, list[Any]]:
        """The SQL and parameters of :meth:`select_spans` (tests read its query plan)."""
        unknown = [c for c in columns if c not in SPAN_COLUMNS]
        if unknown:
            raise ValueError(f"Unknown span columns {unknown}; choose from {list(SPAN_COLUMNS)}.")
        conditions, params = SpanFilter.of(where, filters).conditions(cls._trace_key)
        sql = f"SELECT {', '.join(columns)} FROM spans"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        if order not in ("start", "id"):
            raise ValueError(f"order must be 'start' or 'id', got {order!r}.")
        sql += " ORDER BY start_ns, id" if order == "start" else " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return sql, params

    def list_traces(self, *, limit: int | None = None, since: Any = None) -> list[TraceRow]:
        """Summarize stored traces, newest first: ``trace_id``, ``root`` span name, ``start_ns``, ``end_ns``,
        ``spans`` count, ``errors`` count and the ``agent_name`` of the root (when it is an agent).

        Reads the per-trace summary that every span write keeps, so it costs the same for a million spans
        as for ten. ``since`` keeps the traces that started at or after that time.
        """
        sql = f"SELECT {', '.join(TRACE_COLUMNS)} FROM traces"
        params: list[Any] = []
        if since is not None:
            sql += " WHERE start_ns >= ?"
            params.append(to_ns(since))
        sql += " ORDER BY start_ns DESC, trace_id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return cast("list[TraceRow]", [dict(zip(TRACE_COLUMNS, row, strict=True)) for row in self._read(sql, params)])

    def delete_spans(self, *, before: Any = None) -> int:
        """Delete spans that started before ``before`` (all spans when ``None``); return how many went."""
        with self._write() as conn:
            self._serialize(conn, "spans")
            top = self._highest_span_id(conn)
            if before is None:
                conn.execute("DELETE FROM traces")
                deleted = conn.execute("DELETE FROM spans").rowcount
            else:
                cutoff = to_ns(before)
                touched = conn.execute("SELECT DISTINCT trace_id FROM spans WHERE start_ns < ?", (cutoff,)).fetchall()
                deleted = conn.execute("DELETE FROM spans WHERE start_ns < ?", (cutoff,)).rowcount
                self._recount_traces(conn, [row[0] for row in touched])
            if deleted and top is not None:
                self._keep_span_ids_above(conn, top)
            return deleted

    def _highest_span_id(self, conn: Any) -> int | None:
        """The highest span row id given out so far, for a backend that could give it out again (else None).

        SQLite's plain rowid continues from the highest stored id, so deleting the newest spans would hand
        their ids out again and a poller that already read past them would skip the new spans.
        """
        floor, top = conn.execute(_SPAN_IDS_SQL).fetchone()
        return max(floor or 0, top or 0) or None

    def _keep_span_ids_above(self, conn: Any, top: int) -> None:
        """After a delete: remember ``top`` if no stored span holds it any more (the writer continues past it)."""
        (left,) = conn.execute("SELECT MAX(id) FROM spans").fetchone()
        conn.execute("DELETE FROM span_id_floor")
        if left is None or left < top:
            conn.execute("INSERT INTO span_id_floor (id) VALUES (?)", (top,))
