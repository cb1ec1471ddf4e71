"""The store's shared behaviour: every query and write, in SQL that SQLite and PostgreSQL both accept.

A backend (:class:`~agentnb.store.RunStore` for SQLite, :class:`~agentnb.store.PostgresStore`) supplies only
connections and transactions: ``_write()`` yields a connection for one transaction, ``_read()`` runs one
query. Statements here use ``?`` placeholders and portable SQL (upserts as ``ON CONFLICT ... DO``), so a
method written once works on both backends.

The operations that async code awaits (checkpoints, run mirroring) are written as programs
(:mod:`agentnb.store._program`): the blocking method and its ``a``-prefixed coroutine twin run the same
program, so their SQL exists once. A backend with async connections runs them on those; the others run the
blocking method in a worker thread.
"""

from __future__ import annotations

import abc
import asyncio
import datetime as _dt
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from .._serialization import dumps as _tagged_dumps
from ..exceptions import StoreError
from ._bulk import RunPart, RunRecords
from ._bulk import read_runs as _read_runs
from ._program import Program, Statement, drive, perform
from ._schema import MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE

__all__ = [
    "MEMORY",
    "RUN_SUMMARY_COLUMNS",
    "SPAN_COLUMNS",
    "TRACE_COLUMNS",
    "TRACE_UPSERT_SQL",
    "Store",
    "to_iso",
    "to_ns",
]

T = TypeVar("T")

SpanOrder = Literal["start", "id"]
"""How :meth:`Store.select_spans` orders spans: by start time (then id), or by id (the order they were stored)."""

MEMORY = ":memory:"
"""Pass as ``path`` for a store that lives only in this process (tests, nothing on disk)."""

_EVENT_COLUMNS: tuple[str, ...] = ("id", "run_id", "seq", "type", "executor_id", "timestamp", "data")
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
RUN_SUMMARY_COLUMNS: tuple[str, ...] = (
    "run_id",
    "kind",
    "name",
    "status",
    "started_at",
    "ended_at",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "error",
)
"""The columns of :meth:`Store.summarize_runs` rows and of ``agentnb.runs()``."""
_CHECKPOINT_COLUMNS: tuple[str, ...] = ("checkpoint_id", "run_id", "workflow_name", "parent_id", "step", "created_at")
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
_START_RUN_SQL = (
    "INSERT INTO runs (run_id, kind, name, status, started_at, metadata, rev) "
    "VALUES (?, ?, ?, 'running', ?, ?, (SELECT COALESCE(MAX(rev), 0) + 1 FROM runs)) "
    "ON CONFLICT (run_id) DO UPDATE SET status = 'running', ended_at = NULL, error = NULL, "
    "kind = excluded.kind, name = excluded.name, "
    "metadata = CASE WHEN CAST(? AS TEXT) IS NULL THEN runs.metadata ELSE excluded.metadata END, "
    "rev = excluded.rev"
)
_FINISH_RUN_SQL = (
    "UPDATE runs SET status = ?, ended_at = ?, error = ?, "
    "rev = (SELECT COALESCE(MAX(rev), 0) + 1 FROM runs) WHERE run_id = ?"
)
_NEXT_SEQ_SQL = "SELECT COALESCE(MAX(seq), -1) + 1 FROM events WHERE run_id = ?"
_EVENT_INSERT_SQL = "INSERT INTO events (run_id, seq, type, executor_id, timestamp, data) VALUES (?, ?, ?, ?, ?, ?)"
_PUT_CHECKPOINT_SQL = (
    "INSERT INTO checkpoints (checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (checkpoint_id) DO UPDATE SET "
    "run_id = excluded.run_id, workflow_name = excluded.workflow_name, parent_id = excluded.parent_id, "
    "step = excluded.step, created_at = excluded.created_at, data = excluded.data"
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


def _now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def to_iso(value: Any) -> str:
    """Normalize a time to a fixed-width ISO 8601 UTC string (so text order is time order).

    Accepts aware or naive datetimes (naive means local time, as everywhere in Python), epoch seconds and
    ISO 8601 strings; ``None`` means now.
    """
    if value is None:
        return _now_iso()
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        moment = _dt.datetime.fromtimestamp(value, _dt.timezone.utc)
    elif isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value)
        except ValueError as e:
            raise ValueError(f"Expected an ISO 8601 time, got {value!r}.") from e
    else:
        raise TypeError(f"Expected a datetime, epoch seconds or ISO 8601 string, got {type(value).__name__}.")
    return moment.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


def to_ns(value: Any) -> int:
    """Convert a datetime, epoch seconds or ISO 8601 string to integer nanoseconds since the epoch."""
    if isinstance(value, _dt.datetime):
        moment = value.astimezone(_dt.timezone.utc)
        delta = moment - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value * 1_000_000_000)
    if isinstance(value, str):
        return to_ns(_dt.datetime.fromisoformat(to_iso(value)))
    raise TypeError(f"Expected a datetime, epoch seconds or ISO 8601 string, got {type(value).__name__}.")


def _json_text(value: Any, *, what: str) -> str:
    """Return JSON text: strings are taken as JSON already (and checked), anything else is encoded."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError as e:
            raise ValueError(f"{what} must be JSON text or a JSON-serializable value; got invalid JSON: {e}") from e
        return value
    return _tagged_dumps(value)


def _get_checkpoint(checkpoint_id: str) -> Program[str | None]:
    rows = yield Statement("SELECT data FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,), result="all")
    return rows[0][0] if rows else None


def _prepare_events(run_id: str, events: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[Any, ...]], list[int | None]]:
    """Check and encode events for :meth:`Store.add_events`: their rows without ``seq``, and the given seqs."""
    prepared: list[tuple[Any, ...]] = []
    explicit: list[int | None] = []
    for event in events:
        if "type" not in event:
            raise ValueError(f"Every event needs a 'type'; got keys {sorted(event)}.")
        seq = event.get("seq")
        explicit.append(None if seq is None else int(seq))
        prepared.append(
            (
                run_id,
                str(event["type"]),
                event.get("executor_id"),
                to_iso(event.get("timestamp")),
                _json_text(event.get("data"), what="Event data"),
            )
        )
    return prepared, explicit


def _plain_json(value: Any, default: str) -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class Store(abc.ABC):
    """A run store: runs, workflow events, spans, checkpoints and sessions, shared across processes.

    Open one with :func:`agentnb.store.open_store` (a URL picks the backend) or use
    :func:`agentnb.store.default_store`. Values are JSON text; times are ISO 8601 UTC strings (spans use
    integer nanoseconds). Every ``list_*`` that the DevUI polls has a cheap "since" filter, and
    :meth:`watermark` tells a poller whether anything changed at all.
    """

    backend: str = ""
    """``"sqlite"`` or ``"postgresql"``."""

    path: Path | None = None
    """The SQLite database file (``None`` for in-memory and PostgreSQL stores)."""

    # Orders checkpoints written in the same microsecond by insertion (SQLite's rowid, a serial in Postgres).
    _insert_order: str = "rowid"
    # Exceptions a backend raises when a UNIQUE constraint fails.
    _integrity_errors: tuple[type[BaseException], ...] = ()
    # The column that ties spans to their row in ``traces`` (and leads the spans' unique key).
    _trace_key: str = "trace_no"

    # ------------------------------------------------------------------ plumbing (per backend)

    @abc.abstractmethod
    def _write(self) -> AbstractContextManager[Any]:
        """Return a context manager that yields a connection for one short write transaction."""

    @abc.abstractmethod
    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one query and return its rows."""

    def _turn(self, table: str) -> tuple[Statement, ...]:
        """The statements that open a write transaction changing ``table`` (none by default).

        A backend may make writers of the table take turns (so ids and revisions grow in commit order and a
        poller asking for "after N" never skips a row) and tell watchers when the transaction commits.
        SQLite's ``BEGIN IMMEDIATE`` already serializes writers; PostgreSQL takes an advisory lock and
        sends a ``NOTIFY``. Programs open with ``yield from self._turn(table)`` (the statements return nothing).
        """
        return ()

    def _serialize(self, conn: Any, table: str) -> None:
        """Run :meth:`_turn`'s statements, first thing in the write transaction on ``conn``."""
        for statement in self._turn(table):
            perform(conn, statement)

    def _transact(self, program: Program[T]) -> T:
        """Run a program that writes, in one transaction."""
        with self._write() as conn:
            return drive(program, lambda statement: perform(conn, statement))

    def _query(self, program: Program[T]) -> T:
        """Run a program that only reads (each statement's result is its rows)."""
        return drive(program, lambda statement: self._read(statement.sql, statement.params))

    async def _atransact(self, program: Program[T]) -> T:
        """Await a writing program; this default runs it on a worker thread (sqlite3 has no async API)."""
        return await asyncio.to_thread(self._transact, program)

    async def _aquery(self, program: Program[T]) -> T:
        """Await a reading program; this default runs it on a worker thread."""
        return await asyncio.to_thread(self._query, program)

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection(s); closing twice is harmless."""

    async def aclose(self) -> None:
        """Close the store from async code (a backend with async connections waits for them to close)."""
        await asyncio.to_thread(self.close)

    @property
    @abc.abstractmethod
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """Where the store lives, as a URL without any password (safe to log and show)."""

    def _migrate(self, conn: Any, *, fresh: bool) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION` inside the caller's transaction, or refuse a newer one."""
        if fresh:
            conn.execute(VERSION_TABLE)
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
            version = 0
        else:
            version = int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"The run store at {self._where()} has schema version {version}, but this agentnb reads "
                f"up to version {SCHEMA_VERSION}; upgrade agentnb, or use another store URL or AGENTNB_HOME."
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target].statements(self.backend):
                conn.execute(statement)
        if version < SCHEMA_VERSION:
            conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    def _where(self) -> str:
        return repr(self.url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self._read("SELECT MAX(version) FROM schema_version")[0][0])

    def watermark(self) -> dict[str, Any]:
        """Return cheap change markers per table, for pollers that only want to know whether anything changed.

        Keys: ``runs`` (highest run ``rev``), ``events`` and ``spans`` (highest row ``id``), ``checkpoints``
        and ``sessions`` (latest write time, or ``None``).
        """
        row = self._read(
            "SELECT (SELECT MAX(rev) FROM runs), (SELECT MAX(id) FROM events), (SELECT MAX(id) FROM spans), "
            "(SELECT MAX(created_at) FROM checkpoints), (SELECT MAX(updated_at) FROM sessions)"
        )[0]
        return {
            "runs": row[0] or 0,
            "events": row[1] or 0,
            "spans": row[2] or 0,
            "checkpoints": row[3],
            "sessions": row[4],
        }

    # ------------------------------------------------------------------ runs

    def start_run(
        self,
        run_id: str,
        *,
        kind: str,
        name: str,
        started_at: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that a run started (status ``"running"``).

        Starting an id that exists resumes it: the status goes back to ``"running"``, the end time and
        error are cleared, the original start time is kept, and ``metadata`` (when given) replaces the old.

        Args:
            run_id: A unique id for the run.
            kind: What ran, e.g. ``"agent"`` or ``"workflow"``.
            name: The agent's or workflow's name.
            started_at: A datetime, epoch seconds or ISO string; ``None`` means now.
            metadata: JSON-serializable extra data.
        """
        self._transact(self._start_run(run_id, kind, name, started_at, metadata))

    async def astart_run(
        self,
        run_id: str,
        *,
        kind: str,
        name: str,
        started_at: Any = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Await :meth:`start_run` (on PostgreSQL over an async connection; the event loop never blocks)."""
        await self._atransact(self._start_run(run_id, kind, name, started_at, metadata))

    def _start_run(
        self, run_id: str, kind: str, name: str, started_at: Any, metadata: Mapping[str, Any] | None
    ) -> Program[None]:
        meta = _tagged_dumps(dict(metadata)) if metadata is not None else None
        params = (run_id, kind, name, to_iso(started_at), meta or "{}", meta)
        yield from self._turn("runs")
        yield Statement(_START_RUN_SQL, params, final=True)

    def finish_run(self, run_id: str, *, status: str, ended_at: Any = None, error: str | None = None) -> None:
        """Record that a run ended with ``status`` (e.g. ``"completed"``, ``"failed"``, ``"cancelled"``).

        Raises:
            StoreError: No run has this id.
        """
        self._transact(self._finish_run(run_id, status, ended_at, error))

    async def afinish_run(self, run_id: str, *, status: str, ended_at: Any = None, error: str | None = None) -> None:
        """Await :meth:`finish_run`."""
        await self._atransact(self._finish_run(run_id, status, ended_at, error))

    def _finish_run(self, run_id: str, status: str, ended_at: Any, error: str | None) -> Program[None]:
        params = (status, to_iso(ended_at), error, run_id)
        yield from self._turn("runs")
        changed = yield Statement(_FINISH_RUN_SQL, params, result="rowcount", final=True)
        if changed == 0:
            raise StoreError(f"No run {run_id!r} in the run store; call start_run() first.")

    def update_run(self, run_id: str, *, status: str | None = None, metadata: Mapping[str, Any] | None = None) -> None:
        """Change a run's status (e.g. ``"paused"``) or merge keys into its metadata while it runs."""
        with self._write() as conn:
            self._serialize(conn, "runs")
            row = conn.execute("SELECT metadata FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise StoreError(f"No run {run_id!r} in the run store; call start_run() first.")
            merged = json.loads(row[0])
            if metadata:
                merged.update(json.loads(_tagged_dumps(dict(metadata))))
            conn.execute(
                "UPDATE runs SET status = COALESCE(?, status), metadata = ?, "
                "rev = (SELECT COALESCE(MAX(rev), 0) + 1 FROM runs) WHERE run_id = ?",
                (status, json.dumps(merged, ensure_ascii=False), run_id),
            )

    @staticmethod
    def _run_row(row: Sequence[Any]) -> dict[str, Any]:
        run = dict(zip(_RUN_COLUMNS, row, strict=True))
        run["metadata"] = json.loads(run["metadata"])
        return run

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """Return one run as a dict (``run_id, kind, name, status, started_at, ended_at, error, metadata, rev``)."""
        rows = self._read(f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE run_id = ?", (run_id,))
        return self._run_row(rows[0]) if rows else None

    def list_runs(
        self,
        *,
        kind: str | None = None,
        name: str | None = None,
        status: str | None = None,
        since: Any = None,
        after_rev: int | None = None,
        limit: int | None = None,
        order: Literal["newest", "oldest"] = "newest",
    ) -> list[dict[str, Any]]:
        """List runs, newest first by default.

        Args:
            kind: Only runs of this kind.
            name: Only runs with this name.
            status: Only runs with this status.
            since: Only runs started at or after this time.
            after_rev: Only runs created or changed after this ``rev`` (pollers keep the highest ``rev``
                they saw and pass it back).
            limit: At most this many runs.
            order: ``"newest"`` or ``"oldest"`` first, by start time.
        """
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("kind", kind), ("name", name), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if since is not None:
            where.append("started_at >= ?")
            params.append(to_iso(since))
        if after_rev is not None:
            where.append("rev > ?")
            params.append(int(after_rev))
        sql = f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        direction = "DESC" if order == "newest" else "ASC"
        sql += f" ORDER BY started_at {direction}, rev {direction}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [self._run_row(row) for row in self._read(sql, params)]

    def summarize_runs(
        self,
        *,
        kind: str | None = None,
        name: str | None = None,
        status: str | None = None,
        after_rev: int | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """List runs newest first with what a runs table shows: times, duration and the tokens their model calls used.

        The query behind ``agentnb.runs()`` and the DevUI's runs view. Each row has
        :data:`RUN_SUMMARY_COLUMNS` plus ``rev`` and ``metadata``; ``duration_ms`` is ``None`` while a run is
        going, and the token counts are sums over the run's model-call spans (``None`` when it has none).
        Filters are those of :meth:`list_runs`.
        """
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("kind", kind), ("name", name), ("status", status)):
            if value is not None:
                where.append(f"r.{column} = ?")
                params.append(value)
        if after_rev is not None:
            where.append("r.rev > ?")
            params.append(int(after_rev))
        tokens = "(SELECT SUM(s.{0}) FROM spans s WHERE s.run_id = r.run_id AND s.operation = 'chat')"
        sql = (
            "SELECT r.run_id, r.kind, r.name, r.status, r.started_at, r.ended_at, r.error, r.rev, r.metadata, "
            f"{tokens.format('input_tokens')}, {tokens.format('output_tokens')} FROM runs r"
        )
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY r.started_at DESC, r.rev DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        out: list[dict[str, Any]] = []
        for run_id, kind_, name_, status_, started, ended, error, rev, meta, tokens_in, tokens_out in self._read(
            sql, params
        ):
            duration = None
            if started and ended:
                delta = _dt.datetime.fromisoformat(ended) - _dt.datetime.fromisoformat(started)
                duration = delta.total_seconds() * 1000.0
            out.append(
                {
                    "run_id": run_id,
                    "kind": kind_,
                    "name": name_,
                    "status": status_,
                    "started_at": started,
                    "ended_at": ended,
                    "duration_ms": duration,
                    "input_tokens": None if tokens_in is None else int(tokens_in),
                    "output_tokens": None if tokens_out is None else int(tokens_out),
                    "error": error,
                    "rev": rev,
                    "metadata": json.loads(meta),
                }
            )
        return out

    def delete_run(self, run_id: str) -> None:
        """Delete a run and its events (its spans and checkpoints stay)."""
        with self._write() as conn:
            self._serialize(conn, "runs")
            conn.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))

    # ------------------------------------------------------------------ events

    def add_events(self, run_id: str, events: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append events to a run in one transaction and return their sequence numbers.

        Each event is a mapping with ``type`` and optionally ``seq`` (default: the next number of this run),
        ``executor_id``, ``timestamp`` (default now) and ``data`` (JSON text, or a value to encode).

        Raises:
            StoreError: A ``seq`` is already taken in this run (nothing of the batch is written).
            ValueError: An event has no ``type`` or invalid JSON ``data``.
        """
        prepared, explicit = _prepare_events(run_id, events)
        if not prepared:
            return []
        return self._transact(self._add_events(run_id, prepared, explicit))

    async def aadd_events(self, run_id: str, events: Iterable[Mapping[str, Any]]) -> list[int]:
        """Await :meth:`add_events`."""
        prepared, explicit = _prepare_events(run_id, events)
        if not prepared:
            return []
        return await self._atransact(self._add_events(run_id, prepared, explicit))

    def _add_events(
        self, run_id: str, prepared: list[tuple[Any, ...]], explicit: list[int | None]
    ) -> Program[list[int]]:
        yield from self._turn("events")
        next_seq = (yield Statement(_NEXT_SEQ_SQL, (run_id,), result="one"))[0]
        seqs: list[int] = []
        for given in explicit:
            if given is None:
                given = next_seq
            seqs.append(given)
            next_seq = max(next_seq, given + 1)
        rows = [(p[0], seq, *p[1:]) for p, seq in zip(prepared, seqs, strict=True)]
        try:
            yield Statement(_EVENT_INSERT_SQL, rows, many=True, final=True)
        except self._integrity_errors as e:
            raise StoreError(f"Run {run_id!r} already has an event with one of the seq numbers {seqs}.") from e
        return seqs

    def list_events(
        self,
        run_id: str,
        *,
        offset: int = 0,
        limit: int | None = None,
        after_seq: int | None = None,
        types: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """List a run's events in ``seq`` order (``data`` stays JSON text).

        Args:
            run_id: The run.
            offset: Skip this many events.
            limit: At most this many events.
            after_seq: Only events with a larger ``seq`` (pollers pass the last one they saw).
            types: Only events of these types.
        """
        sql = f"SELECT {', '.join(_EVENT_COLUMNS)} FROM events WHERE run_id = ?"
        params: list[Any] = [run_id]
        if after_seq is not None:
            sql += " AND seq > ?"
            params.append(int(after_seq))
        if types:
            sql += f" AND type IN ({', '.join('?' * len(types))})"
            params.extend(types)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        if offset:
            sql += " OFFSET ?"
            params.append(int(offset))
        return [dict(zip(_EVENT_COLUMNS, row, strict=True)) for row in self._read(sql, params)]

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
        return _read_runs(self._read, run_ids, parts=parts, event_types=event_types)

    # ------------------------------------------------------------------ spans

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
                _plain_json(row.get(col), _SPAN_JSON_DEFAULTS[col])
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
        *,
        trace_id: str | Sequence[str] | None = None,
        agent_name: str | None = None,
        run_id: str | None = None,
        start: Any = None,
        end: Any = None,
        last_traces: int | None = None,
        after_id: int | None = None,
        limit: int | None = None,
        decode: bool = True,
    ) -> list[dict[str, Any]]:
        """List stored spans in start order.

        Args:
            trace_id: One trace id or several.
            agent_name: Only spans of this agent.
            run_id: Only spans tagged with this run id.
            start: Only spans that started at or after this time (datetime, epoch seconds or ISO string).
            end: Only spans that started before this time.
            last_traces: Only spans of the N most recently started traces.
            after_id: Only spans stored after the row with this ``id`` (pollers pass the last one they saw).
            limit: At most this many spans.
            decode: Parse ``attributes``, ``events`` and ``resource`` into Python values (else JSON text).
        """
        rows = self.select_spans(
            SPAN_COLUMNS,
            trace_id=trace_id,
            agent_name=agent_name,
            run_id=run_id,
            start=start,
            end=end,
            last_traces=last_traces,
            after_id=after_id,
            limit=limit,
        )
        out: list[dict[str, Any]] = []
        loads = json.loads
        for row in rows:
            span = dict(zip(SPAN_COLUMNS, row, strict=True))
            if decode:
                span["attributes"] = loads(span["attributes"])
                span["events"] = loads(span["events"])
                span["resource"] = loads(span["resource"])
            out.append(span)
        return out

    def select_spans(
        self,
        columns: Sequence[str],
        *,
        trace_id: str | Sequence[str] | None = None,
        agent_name: str | None = None,
        run_id: str | None = None,
        start: Any = None,
        end: Any = None,
        last_traces: int | None = None,
        after_id: int | None = None,
        limit: int | None = None,
        order: SpanOrder = "start",
    ) -> list[tuple[Any, ...]]:
        """Return chosen span columns as tuples, in start order (JSON columns stay text).

        The fast path behind DataFrames; the filters are those of :meth:`list_spans`. ``order="id"`` returns
        the spans in the order they were stored instead, which costs the database nothing: a caller that
        sorts by start time itself (a stable sort, so equal start times stay in stored order) gets the same
        order as ``"start"`` without the database looking each row up through the start-time index.
        """
        sql, params = self._span_query(
            columns,
            trace_id=trace_id,
            agent_name=agent_name,
            run_id=run_id,
            start=start,
            end=end,
            last_traces=last_traces,
            after_id=after_id,
            limit=limit,
            order=order,
        )
        return self._read(sql, params)

    def select_span_columns(
        self,
        columns: Sequence[str],
        *,
        trace_id: str | Sequence[str] | None = None,
        agent_name: str | None = None,
        start: Any = None,
        end: Any = None,
        last_traces: int | None = None,
    ) -> dict[str, Any] | None:
        """Return chosen span columns as pyarrow arrays, in id order (stored order), or ``None``.

        A backend that can hand columns over without a Python object per value does (SQLite); ``None``
        means it cannot for this store or these values, and :meth:`select_spans` is the way to read them.
        The filters are those of :meth:`list_spans`.
        """
        return None

    @classmethod
    def _span_filters(
        cls,
        *,
        trace_id: str | Sequence[str] | None = None,
        agent_name: str | None = None,
        run_id: str | None = None,
        start: Any = None,
        end: Any = None,
        last_traces: int | None = None,
        after_id: int | None = None,
    ) -> tuple[list[str], list[Any]]:
        """The SQL conditions (``?`` placeholders) and parameters of the span filters."""
        where: list[str] = []
        params: list[Any] = []
        key = cls._trace_key
        if trace_id is not None:
            ids = [trace_id] if isinstance(trace_id, str) else list(trace_id)
            marks = ", ".join("?" * len(ids))
            # Spans are found by the key their unique index leads with (a trace's number in SQLite).
            where.append(
                f"trace_id IN ({marks})"
                if key == "trace_id"
                else f"{key} IN (SELECT {key} FROM traces WHERE trace_id IN ({marks}))"
            )
            params.extend(ids)
        if agent_name is not None:
            where.append("agent_name = ?")
            params.append(agent_name)
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if start is not None:
            where.append("start_ns >= ?")
            params.append(to_ns(start))
        if end is not None:
            where.append("start_ns < ?")
            params.append(to_ns(end))
        if after_id is not None:
            where.append("id > ?")
            params.append(int(after_id))
        if last_traces is not None:
            where.append(f"{key} IN (SELECT {key} FROM traces ORDER BY start_ns DESC LIMIT ?)")
            params.append(int(last_traces))
        return where, params

    @classmethod
    def _span_query(
        cls,
        columns: Sequence[str],
        *,
        trace_id: str | Sequence[str] | None = None,
        agent_name: str | None = None,
        run_id: str | None = None,
        start: Any = None,
        end: Any = None,
        last_traces: int | None = None,
        after_id: int | None = None,
        limit: int | None = None,
        order: SpanOrder = "start",
    ) -> tuple[str, list[Any]]:
        """The SQL and parameters of :meth:`select_spans` (tests read its query plan)."""
        unknown = [c for c in columns if c not in SPAN_COLUMNS]
        if unknown:
            raise ValueError(f"Unknown span columns {unknown}; choose from {list(SPAN_COLUMNS)}.")
        where, params = cls._span_filters(
            trace_id=trace_id,
            agent_name=agent_name,
            run_id=run_id,
            start=start,
            end=end,
            last_traces=last_traces,
            after_id=after_id,
        )
        sql = f"SELECT {', '.join(columns)} FROM spans"
        if where:
            sql += " WHERE " + " AND ".join(where)
        if order not in ("start", "id"):
            raise ValueError(f"order must be 'start' or 'id', got {order!r}.")
        sql += " ORDER BY start_ns, id" if order == "start" else " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return sql, params

    def list_traces(self, *, limit: int | None = None, since: Any = None) -> list[dict[str, Any]]:
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
        return [dict(zip(TRACE_COLUMNS, row, strict=True)) for row in self._read(sql, params)]

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

    # ------------------------------------------------------------------ checkpoints

    def put_checkpoint(
        self,
        checkpoint_id: str,
        *,
        run_id: str | None,
        workflow_name: str | None,
        parent_id: str | None,
        step: int | None,
        created_at: Any = None,
        data: str,
    ) -> None:
        """Store a checkpoint's JSON text (replacing one with the same id)."""
        self._transact(self._put_checkpoint(checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data))

    async def aput_checkpoint(
        self,
        checkpoint_id: str,
        *,
        run_id: str | None,
        workflow_name: str | None,
        parent_id: str | None,
        step: int | None,
        created_at: Any = None,
        data: str,
    ) -> None:
        """Await :meth:`put_checkpoint` (on PostgreSQL over an async connection)."""
        await self._atransact(
            self._put_checkpoint(checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data)
        )

    def _put_checkpoint(
        self,
        checkpoint_id: str,
        run_id: str | None,
        workflow_name: str | None,
        parent_id: str | None,
        step: int | None,
        created_at: Any,
        data: str,
    ) -> Program[None]:
        if not isinstance(cast(object, data), str):  # untyped callers may pass anything
            raise TypeError(f"Checkpoint data must be JSON text (str), got {type(data).__name__}.")
        params = (checkpoint_id, run_id, workflow_name, parent_id, step, to_iso(created_at), data)
        yield from self._turn("checkpoints")
        yield Statement(_PUT_CHECKPOINT_SQL, params, final=True)

    def get_checkpoint(self, checkpoint_id: str) -> str | None:
        """Return a checkpoint's JSON text, or ``None`` when there is no such checkpoint."""
        return self._query(_get_checkpoint(checkpoint_id))

    async def aget_checkpoint(self, checkpoint_id: str) -> str | None:
        """Await :meth:`get_checkpoint`."""
        return await self._aquery(_get_checkpoint(checkpoint_id))

    def get_checkpoint_info(self, checkpoint_id: str) -> dict[str, Any] | None:
        """Return a checkpoint's metadata row (no data), or ``None``."""
        rows = self._read(
            f"SELECT {', '.join(_CHECKPOINT_COLUMNS)} FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        )
        return dict(zip(_CHECKPOINT_COLUMNS, rows[0], strict=True)) if rows else None

    def list_checkpoints(self, *, run_id: str | None = None, workflow_name: str | None = None) -> list[dict[str, Any]]:
        """List checkpoint metadata, oldest first.

        Each row has ``checkpoint_id, run_id, workflow_name, parent_id, step, created_at`` (no data).
        """
        return self._query(self._list_checkpoints(run_id, workflow_name))

    async def alist_checkpoints(
        self, *, run_id: str | None = None, workflow_name: str | None = None
    ) -> list[dict[str, Any]]:
        """Await :meth:`list_checkpoints`."""
        return await self._aquery(self._list_checkpoints(run_id, workflow_name))

    def _list_checkpoints(self, run_id: str | None, workflow_name: str | None) -> Program[list[dict[str, Any]]]:
        where: list[str] = []
        params: list[Any] = []
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if workflow_name is not None:
            where.append("workflow_name = ?")
            params.append(workflow_name)
        sql = f"SELECT {', '.join(_CHECKPOINT_COLUMNS)} FROM checkpoints"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY created_at, {self._insert_order}"
        rows = yield Statement(sql, params, result="all")
        return [dict(zip(_CHECKPOINT_COLUMNS, row, strict=True)) for row in rows]

    def delete_checkpoint(self, checkpoint_id: str) -> bool:
        """Delete a checkpoint; return whether it existed."""
        return self._transact(self._delete_checkpoint(checkpoint_id))

    async def adelete_checkpoint(self, checkpoint_id: str) -> bool:
        """Await :meth:`delete_checkpoint`."""
        return await self._atransact(self._delete_checkpoint(checkpoint_id))

    def _delete_checkpoint(self, checkpoint_id: str) -> Program[bool]:
        yield from self._turn("checkpoints")
        sql = "DELETE FROM checkpoints WHERE checkpoint_id = ?"
        deleted = yield Statement(sql, (checkpoint_id,), result="rowcount", final=True)
        return bool(deleted > 0)

    # ------------------------------------------------------------------ sessions

    def save_session(self, session_id: str, data: str) -> None:
        """Store a session's JSON text (replacing the previous version)."""
        if not isinstance(cast(object, data), str):  # untyped callers may pass anything
            raise TypeError(f"Session data must be JSON text (str), got {type(data).__name__}.")
        with self._write() as conn:
            self._serialize(conn, "sessions")
            conn.execute(
                "INSERT INTO sessions (session_id, updated_at, data) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at, data = excluded.data",
                (session_id, _now_iso(), data),
            )

    def load_session(self, session_id: str) -> str | None:
        """Return a session's JSON text, or ``None`` when it was never saved."""
        rows = self._read("SELECT data FROM sessions WHERE session_id = ?", (session_id,))
        return rows[0][0] if rows else None

    def list_sessions(self) -> list[dict[str, Any]]:
        """List saved sessions, most recently saved first: ``session_id``, ``updated_at``, ``size`` (characters)."""
        rows = self._read("SELECT session_id, updated_at, LENGTH(data) FROM sessions ORDER BY updated_at DESC")
        return [{"session_id": r[0], "updated_at": r[1], "size": r[2]} for r in rows]

    def delete_session(self, session_id: str) -> bool:
        """Delete a saved session; return whether it existed."""
        with self._write() as conn:
            self._serialize(conn, "sessions")
            return conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,)).rowcount > 0

    # ------------------------------------------------------------------ bulk runs

    def add_runs(self, runs: Iterable[Mapping[str, Any]]) -> int:
        """Write finished runs, each with its events, in one transaction (a batch of evaluation cases).

        Each mapping has the keys of :meth:`get_run` (``run_id``, ``kind``, ``name``, ``status``, optional
        ``started_at``, ``ended_at``, ``error``, ``metadata``) plus an optional ``events`` list as taken by
        :meth:`add_events`. A run id that exists is replaced, with its events.

        Returns:
            How many runs were written.
        """
        rows: list[tuple[Any, ...]] = []
        events: list[tuple[Any, ...]] = []
        for run in runs:
            run_id = str(run["run_id"])
            rows.append(
                (
                    run_id,
                    str(run["kind"]),
                    str(run["name"]),
                    str(run["status"]),
                    to_iso(run.get("started_at")),
                    to_iso(run.get("ended_at")),
                    run.get("error"),
                    _fast_json(dict(run.get("metadata") or {})),
                )
            )
            for seq, event in enumerate(run.get("events") or ()):
                events.append(
                    (
                        run_id,
                        seq,
                        str(event["type"]),
                        event.get("executor_id"),
                        to_iso(event.get("timestamp")),
                        _fast_json(event.get("data")),
                    )
                )
        if not rows:
            return 0
        with self._write() as conn:
            self._serialize(conn, "runs")
            rev = conn.execute("SELECT COALESCE(MAX(rev), 0) FROM runs").fetchone()[0]
            conn.executemany("DELETE FROM events WHERE run_id = ?", [(row[0],) for row in rows])
            conn.executemany(
                "INSERT INTO runs (run_id, kind, name, status, started_at, ended_at, error, metadata, rev) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO UPDATE SET kind = excluded.kind, name = excluded.name, "
                "status = excluded.status, started_at = excluded.started_at, ended_at = excluded.ended_at, "
                "error = excluded.error, metadata = excluded.metadata, rev = excluded.rev",
                [(*row, rev + i) for i, row in enumerate(rows, start=1)],
            )
            conn.executemany(
                "INSERT INTO events (run_id, seq, type, executor_id, timestamp, data) VALUES (?, ?, ?, ?, ?, ?)",
                events,
            )
        return len(rows)

    # ------------------------------------------------------------------ experiments

    def put_experiment(
        self,
        name: str,
        *,
        status: str,
        target: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Create or update an experiment: a named evaluation whose cases :meth:`add_experiment_cases` writes.

        Updating keeps the creation time; ``target`` and ``metadata`` replace the old ones when given.

        Args:
            name: The experiment's unique name.
            status: ``"running"``, ``"completed"`` or ``"interrupted"``.
            target: What was evaluated, as text (an agent's name, an import string).
            metadata: JSON-serializable details (dataset size, scorers, repetitions, summary).
        """
        if not name:
            raise ValueError("An experiment needs a non-empty name.")
        now = _now_iso()
        meta = None if metadata is None else _tagged_dumps(dict(metadata))
        with self._write() as conn:
            self._serialize(conn, "experiments")
            conn.execute(
                "INSERT INTO experiments (name, created_at, updated_at, status, target, metadata, rev) "
                "VALUES (?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(rev), 0) + 1 FROM experiments)) "
                "ON CONFLICT (name) DO UPDATE SET updated_at = excluded.updated_at, status = excluded.status, "
                "target = COALESCE(CAST(? AS TEXT), experiments.target), "
                "metadata = CASE WHEN CAST(? AS TEXT) IS NULL THEN experiments.metadata ELSE excluded.metadata END, "
                "rev = excluded.rev",
                (name, now, now, status, target, meta or "{}", target, meta),
            )

    def get_experiment(self, name: str) -> dict[str, Any] | None:
        """Return one experiment (the keys of :meth:`list_experiments`), or ``None`` when there is none."""
        rows = self._read(f"{_EXPERIMENT_SELECT} WHERE e.name = ?", (name,))
        return _experiment_row(rows[0]) if rows else None

    def list_experiments(self, *, after_rev: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """List experiments, most recently updated first.

        Each has ``name, created_at, updated_at, status, target, metadata, rev`` and ``cases`` (how many case
        rows are stored). Pollers pass the highest ``rev`` they saw as ``after_rev``.
        """
        sql = _EXPERIMENT_SELECT
        params: list[Any] = []
        if after_rev is not None:
            sql += " WHERE e.rev > ?"
            params.append(int(after_rev))
        sql += " ORDER BY e.updated_at DESC, e.rev DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [_experiment_row(row) for row in self._read(sql, params)]

    def delete_experiment(self, name: str) -> bool:
        """Delete an experiment and its cases (their runs and traces stay); return whether it existed."""
        with self._write() as conn:
            self._serialize(conn, "experiments")
            conn.execute("DELETE FROM experiment_cases WHERE experiment = ?", (name,))
            return conn.execute("DELETE FROM experiments WHERE name = ?", (name,)).rowcount > 0

    def add_experiment_cases(self, name: str, cases: Iterable[Mapping[str, Any]]) -> int:
        """Write finished cases of an experiment in one transaction, replacing the same case and repetition.

        Each mapping has ``case_id``, ``position`` (the case's place in the dataset), ``status``, and
        optionally ``repetition`` (default 0), ``run_id``, ``trace_id``, ``scores`` (a dict of numbers) and
        ``data`` (a JSON-serializable dict: input, output, expected, error, ...).

        Raises:
            StoreError: There is no experiment ``name`` (call :meth:`put_experiment` first).
        """
        now = _now_iso()
        rows = [
            (
                name,
                str(case["case_id"]),
                int(case.get("repetition") or 0),
                int(case["position"]),
                str(case["status"]),
                case.get("run_id"),
                case.get("trace_id"),
                now,
                _plain_json(case.get("scores"), "{}"),
                _plain_json(case.get("data"), "{}"),
            )
            for case in cases
        ]
        if not rows:
            return 0
        with self._write() as conn:
            self._serialize(conn, "experiments")
            if conn.execute("SELECT 1 FROM experiments WHERE name = ?", (name,)).fetchone() is None:
                raise StoreError(f"No experiment {name!r} in the run store; call put_experiment() first.")
            conn.executemany(
                "INSERT INTO experiment_cases "
                "(experiment, case_id, repetition, position, status, run_id, trace_id, updated_at, scores, data) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (experiment, case_id, repetition) DO UPDATE SET position = excluded.position, "
                "status = excluded.status, run_id = excluded.run_id, trace_id = excluded.trace_id, "
                "updated_at = excluded.updated_at, scores = excluded.scores, data = excluded.data",
                rows,
            )
        return len(rows)

    def list_experiment_cases(self, name: str, *, decode: bool = True) -> list[dict[str, Any]]:
        """List an experiment's cases in dataset order (then repetition).

        Each has ``case_id, repetition, position, status, run_id, trace_id, updated_at, scores, data``;
        ``scores`` and ``data`` are parsed unless ``decode=False``.
        """
        rows = self._read(
            f"SELECT {', '.join(_CASE_COLUMNS)} FROM experiment_cases WHERE experiment = ? "
            "ORDER BY position, repetition, case_id",
            (name,),
        )
        out: list[dict[str, Any]] = []
        for row in rows:
            case: dict[str, Any] = dict(zip(_CASE_COLUMNS, row, strict=True))
            if decode:
                case["scores"] = json.loads(case["scores"])
                case["data"] = json.loads(case["data"])
            out.append(case)
        return out


def _fast_json(value: Any) -> str:
    """JSON text for a value that is usually plain data: the C encoder first, tagged JSON when it must."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return _tagged_dumps(value)


_EXPERIMENT_COLUMNS = ("name", "created_at", "updated_at", "status", "target", "metadata", "rev", "cases")
_EXPERIMENT_SELECT = (
    "SELECT e.name, e.created_at, e.updated_at, e.status, e.target, e.metadata, e.rev, "
    "(SELECT COUNT(*) FROM experiment_cases c WHERE c.experiment = e.name) FROM experiments e"
)
_CASE_COLUMNS = ("case_id", "repetition", "position", "status", "run_id", "trace_id", "updated_at", "scores", "data")


def _experiment_row(row: Sequence[Any]) -> dict[str, Any]:
    experiment: dict[str, Any] = dict(zip(_EXPERIMENT_COLUMNS, row, strict=True))
    experiment["metadata"] = json.loads(experiment["metadata"])
    return experiment
