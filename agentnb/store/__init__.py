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

from ._base import MEMORY, RUN_SUMMARY_COLUMNS, SPAN_COLUMNS, Store
from ._bulk import RunRecords
from ._frame import runs
from ._open import STORE_URL_ENV, default_store, default_store_url, open_store, redact_url, store_backend
from ._run_store import RunStore, default_store_path
from ._schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from ._postgres import PostgresStore

__all__ = [
    "MEMORY",
    "RUN_SUMMARY_COLUMNS",
    "SCHEMA_VERSION",
    "SPAN_COLUMNS",
    "STORE_URL_ENV",
    "PostgresStore",
    "RunRecords",
    "RunStore",
    "Store",
    "default_store",
    "default_store_path",
    "default_store_url",
    "open_store",
    "redact_url",
    "runs",
    "store_backend",
]


def __getattr__(name: str) -> Any:
    # The PostgreSQL driver loads only when a PostgreSQL store is used.
    if name == "PostgresStore":
        from ._postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
