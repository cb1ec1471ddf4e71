"""The run store: runs, workflow events, spans, checkpoints and sessions that notebooks, workflows and the
DevUI share across processes and, on PostgreSQL, across machines.

One URL picks the backend everywhere: ``AGENTNB_STORE_URL`` (``sqlite:///path/to.db`` or
``postgresql://user@host/db``); unset, the store is SQLite at ``$AGENTNB_HOME/agentnb.db`` (else
``./.agentnb/agentnb.db``). :func:`open_store` opens a store by URL, :func:`default_store` returns the
process-wide default, and :class:`RunStore` is the SQLite store (``RunStore(":memory:")`` keeps everything in
the process). Both backends share one versioned schema, migrated on open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._base import MEMORY, RUN_SUMMARY_COLUMNS, SPAN_COLUMNS, Store, Watermark
from ._bulk import RunRecords
from ._checkpoints import CheckpointRow
from ._experiments import ExperimentCaseRow, ExperimentRow
from ._frame import flush_before_reads, runs
from ._open import (
    STORE_URL_ENV,
    default_store,
    default_store_url,
    open_store,
    redact_url,
    store_backend,
    store_exists,
    store_file,
    store_key,
)
from ._run_store import RunStore, default_store_path
from ._runs import EventRow, RunRow, RunSummaryRow
from ._schema import SCHEMA_VERSION
from ._sessions import SessionRow
from ._spans import SpanFilter, SpanFilterArgs, SpanRow, TraceRow
from ._values import to_iso, to_ns

if TYPE_CHECKING:
    from ._postgres import PostgresStore

__all__ = [
    "MEMORY",
    "RUN_SUMMARY_COLUMNS",
    "SCHEMA_VERSION",
    "SPAN_COLUMNS",
    "STORE_URL_ENV",
    "CheckpointRow",
    "EventRow",
    "ExperimentCaseRow",
    "ExperimentRow",
    "PostgresStore",
    "RunRecords",
    "RunRow",
    "RunStore",
    "RunSummaryRow",
    "SessionRow",
    "SpanFilter",
    "SpanFilterArgs",
    "SpanRow",
    "Store",
    "TraceRow",
    "Watermark",
    "default_store",
    "default_store_path",
    "default_store_url",
    "flush_before_reads",
    "open_store",
    "redact_url",
    "runs",
    "store_backend",
    "store_exists",
    "store_file",
    "store_key",
    "to_iso",
    "to_ns",
]


def __getattr__(name: str) -> Any:
    # The PostgreSQL driver loads only when a PostgreSQL store is used.
    if name == "PostgresStore":
        from ._postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
