"""The store: every kind of row behind one object, over one connection and statement layer.

Each kind lives in its own module (runs and events in :mod:`._runs`, spans and traces in :mod:`._spans`,
:mod:`._checkpoints`, :mod:`._sessions`, :mod:`._experiments`) on the shared layer in :mod:`._backend`;
:class:`Store` is all of them at once, and a backend (:class:`~agentnb.store.RunStore`,
:class:`~agentnb.store.PostgresStore`) supplies its connections.
"""

from __future__ import annotations

from typing import TypedDict

from ._backend import MEMORY
from ._bulk import BulkTables
from ._checkpoints import CheckpointTables
from ._experiments import ExperimentTables
from ._runs import RUN_SUMMARY_COLUMNS, RunTables
from ._sessions import SessionTables
from ._spans import SPAN_COLUMNS, TRACE_COLUMNS, TRACE_UPSERT_SQL, SpanTables

__all__ = [
    "MEMORY",
    "RUN_SUMMARY_COLUMNS",
    "SPAN_COLUMNS",
    "TRACE_COLUMNS",
    "TRACE_UPSERT_SQL",
    "Store",
    "Watermark",
]


class Watermark(TypedDict):
    """Change markers per table (:meth:`Store.watermark`): a poller compares them with the ones it saw last."""

    runs: int
    events: int
    spans: int
    checkpoints: str | None
    sessions: str | None


class Store(RunTables, SpanTables, CheckpointTables, ExperimentTables, SessionTables, BulkTables):
    """A run store: runs, workflow events, spans, checkpoints and sessions, shared across processes.

    Open one with :func:`agentnb.store.open_store` (a URL picks the backend) or use
    :func:`agentnb.store.default_store`. Values are JSON text; times are ISO 8601 UTC strings (spans use
    integer nanoseconds). Every ``list_*`` that the DevUI polls has a cheap "since" filter, and
    :meth:`watermark` tells a poller whether anything changed at all.
    """

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def watermark(self) -> Watermark:
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
