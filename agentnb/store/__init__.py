"""The run store: one SQLite file that notebooks, workflows and the DevUI share across processes.

It holds runs, workflow events, spans, checkpoints and sessions (JSON text columns), in WAL mode with a
schema version. ``RunStore(":memory:")`` keeps everything in the process; :func:`default_store` returns the
process-wide store at ``$AGENTNB_HOME/agentnb.db`` (else ``./.agentnb/agentnb.db``).
"""

from __future__ import annotations

from ._run_store import MEMORY, SPAN_COLUMNS, RunStore, default_store, default_store_path
from ._schema import SCHEMA_VERSION

__all__ = ["MEMORY", "SCHEMA_VERSION", "SPAN_COLUMNS", "RunStore", "default_store", "default_store_path"]
