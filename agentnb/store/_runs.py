"""Runs and their events: what ran (an agent turn, a workflow, an evaluation case), its status, and what it did.

Runs carry a ``rev`` that grows with every write and events a per-run ``seq``, so a poller asks only for what
changed since it last looked.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict, cast

from ..exceptions import StoreError
from ._backend import Backend
from ._program import Program, Statement
from ._values import fast_json, json_text, tagged_dumps, to_iso

__all__ = ["RUN_SUMMARY_COLUMNS", "EventRow", "RunRow", "RunSummaryRow", "RunTables"]


class RunRow(TypedDict):
    """A stored run, as :meth:`Store.get_run` and :meth:`Store.list_runs` return it."""

    run_id: str
    kind: str
    name: str
    status: str
    started_at: str
    ended_at: str | None
    error: str | None
    metadata: dict[str, Any]
    rev: int


class RunSummaryRow(TypedDict):
    """A run as a runs table shows it (:meth:`Store.summarize_runs`, ``agentnb.runs()``)."""

    run_id: str
    kind: str
    name: str
    status: str
    started_at: str
    ended_at: str | None
    duration_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    error: str | None
    rev: int
    metadata: dict[str, Any]


class EventRow(TypedDict):
    """A stored event of a run, as :meth:`Store.list_events` returns it (``data`` stays JSON text)."""

    id: int
    run_id: str
    seq: int
    type: str
    executor_id: str | None
    timestamp: str
    data: str


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
_METADATA = _RUN_COLUMNS.index("metadata")
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
                json_text(event.get("data"), what="Event data"),
            )
        )
    return prepared, explicit


class RunTables(Backend):
    """Runs and events: the part of :class:`~agentnb.store.Store` that records what ran."""

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
        meta = tagged_dumps(dict(metadata)) if metadata is not None else None
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
                merged.update(json.loads(tagged_dumps(dict(metadata))))
            conn.execute(
                "UPDATE runs SET status = COALESCE(?, status), metadata = ?, "
                "rev = (SELECT COALESCE(MAX(rev), 0) + 1 FROM runs) WHERE run_id = ?",
                (status, json.dumps(merged, ensure_ascii=False), run_id),
            )

    @staticmethod
    def _run_row(row: Sequence[Any]) -> RunRow:
        run = cast(RunRow, dict(zip(_RUN_COLUMNS, row, strict=True)))
        run["metadata"] = json.loads(cast(str, run["metadata"]))  # stored as JSON text
        return run

    def get_run(self, run_id: str) -> RunRow | None:
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
    ) -> list[RunRow]:
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
        loads, columns = json.loads, _RUN_COLUMNS  # one row per run, maybe 100,000: no call per row but these
        rows = [dict(zip(columns, row, strict=True), metadata=loads(row[_METADATA])) for row in self._read(sql, params)]
        return cast("list[RunRow]", rows)

    def summarize_runs(
        self,
        *,
        kind: str | None = None,
        name: str | None = None,
        status: str | None = None,
        after_rev: int | None = None,
        limit: int | None = None,
    ) -> list[RunSummaryRow]:
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
        out: list[RunSummaryRow] = []
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
    ) -> list[EventRow]:
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
        # One cast for the list: typing.cast is a call, and a list of events can be long.
        return cast("list[EventRow]", [dict(zip(_EVENT_COLUMNS, row, strict=True)) for row in self._read(sql, params)])

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
                    fast_json(dict(run.get("metadata") or {})),
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
                        fast_json(event.get("data")),
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
