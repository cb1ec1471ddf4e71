"""Experiments: named evaluations and their cases (scores, the run and trace each case made).

Cases are keyed by (experiment, case, repetition), so a resumed evaluation replaces what it runs again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict, cast

from ..exceptions import StoreError
from ._backend import Backend
from ._values import now_iso, plain_json, tagged_dumps

__all__ = ["ExperimentCaseRow", "ExperimentRow", "ExperimentTables"]


class ExperimentRow(TypedDict):
    """A stored experiment, as :meth:`Store.list_experiments` returns it (``cases``: how many case rows)."""

    name: str
    created_at: str
    updated_at: str
    status: str
    target: str | None
    metadata: dict[str, Any]
    rev: int
    cases: int


class ExperimentCaseRow(TypedDict):
    """A stored case of an experiment; ``scores`` and ``data`` are dicts, or JSON text with ``decode=False``."""

    case_id: str
    repetition: int
    position: int
    status: str
    run_id: str | None
    trace_id: str | None
    updated_at: str
    scores: Any
    data: Any


_EXPERIMENT_COLUMNS = ("name", "created_at", "updated_at", "status", "target", "metadata", "rev", "cases")
_EXPERIMENT_SELECT = (
    "SELECT e.name, e.created_at, e.updated_at, e.status, e.target, e.metadata, e.rev, "
    "(SELECT COUNT(*) FROM experiment_cases c WHERE c.experiment = e.name) FROM experiments e"
)
_CASE_COLUMNS = ("case_id", "repetition", "position", "status", "run_id", "trace_id", "updated_at", "scores", "data")


def _experiment_row(row: Sequence[Any]) -> ExperimentRow:
    experiment = cast(ExperimentRow, dict(zip(_EXPERIMENT_COLUMNS, row, strict=True)))
    experiment["metadata"] = json.loads(cast(str, experiment["metadata"]))  # stored as JSON text
    return experiment


class ExperimentTables(Backend):
    """Experiments and their cases: the part of :class:`~agentnb.store.Store` that evaluations write."""

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
        now = now_iso()
        meta = None if metadata is None else tagged_dumps(dict(metadata))
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

    def get_experiment(self, name: str) -> ExperimentRow | None:
        """Return one experiment (the keys of :meth:`list_experiments`), or ``None`` when there is none."""
        rows = self._read(f"{_EXPERIMENT_SELECT} WHERE e.name = ?", (name,))
        return _experiment_row(rows[0]) if rows else None

    def list_experiments(self, *, after_rev: int | None = None, limit: int | None = None) -> list[ExperimentRow]:
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
        now = now_iso()
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
                plain_json(case.get("scores"), "{}"),
                plain_json(case.get("data"), "{}"),
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

    def list_experiment_cases(self, name: str, *, decode: bool = True) -> list[ExperimentCaseRow]:
        """List an experiment's cases in dataset order (then repetition).

        Each has ``case_id, repetition, position, status, run_id, trace_id, updated_at, scores, data``;
        ``scores`` and ``data`` are parsed unless ``decode=False``.
        """
        rows = self._read(
            f"SELECT {', '.join(_CASE_COLUMNS)} FROM experiment_cases WHERE experiment = ? "
            "ORDER BY position, repetition, case_id",
            (name,),
        )
        out: list[dict[str, Any]] = []  # cast once at the end: typing.cast is a call per row otherwise
        for row in rows:
            case: dict[str, Any] = dict(zip(_CASE_COLUMNS, row, strict=True))
            if decode:
                case["scores"] = json.loads(case["scores"])
                case["data"] = json.loads(case["data"])
            out.append(case)
        return cast("list[ExperimentCaseRow]", out)
