"""``agentnb.runs()``: the runs of the default store as a pandas DataFrame (pandas loads on first call)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._provenance import cell_label
from ._base import RUN_SUMMARY_COLUMNS, Store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["flush_before_reads", "runs"]


_flushes: list[Callable[[], None]] = []


def flush_before_reads(flush: Callable[[], None]) -> None:
    """Have :func:`runs` call ``flush`` before it reads, so writes a layer above batches are in the result.

    A run's tokens are summed from its stored model-call spans, and the span writer (``agentnb.observability``)
    batches them off the hot path: it registers its flush here when it loads, so a run that just ended shows
    its tokens while the store never imports the layer that writes spans. Registering twice is harmless.
    """
    if flush not in _flushes:
        _flushes.append(flush)


def runs(
    limit: int | None = 100,
    *,
    kind: str | None = None,
    name: str | None = None,
    status: str | None = None,
    store: Store | str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Return stored runs as a DataFrame, newest first: the same query the DevUI's runs view shows.

    Columns: ``run_id, kind, name, status, started_at, ended_at`` (timezone-aware UTC), ``duration_ms``
    (empty while running), ``input_tokens, output_tokens`` (summed over the run's model calls), ``error``,
    and ``cell``: the notebook cell that started the run (``"[12] r = await agent.run(...)"``; empty for runs
    started outside a notebook).
    Runs from every process, and with ``AGENTNB_STORE_URL=postgresql://...`` from every machine.

    Args:
        limit: At most this many runs (``None``: all).
        kind: Only runs of this kind (``"agent"``, ``"workflow"``, ...).
        name: Only runs of the agent or workflow with this name.
        status: Only runs with this status (``"running"``, ``"completed"``, ``"failed"``, ...).
        store: Read this store (or store URL / path) instead of the default one.

    Example:
        ```python
        import agentnb

        agentnb.runs(limit=20, kind="workflow", status="failed")
        ```
    """
    import pandas as pd

    from ._open import default_store, open_store

    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}.")
    for flush in _flushes:
        flush()
    owned = store is not None and not isinstance(store, Store)
    target = default_store() if store is None else store if isinstance(store, Store) else open_store(store)
    try:
        rows = target.summarize_runs(kind=kind, name=name, status=status, limit=limit)
    finally:
        if owned:
            target.close()
    frame = pd.DataFrame.from_records(rows, columns=list(RUN_SUMMARY_COLUMNS))
    frame["cell"] = pd.Series([cell_label(row.get("metadata")) for row in rows], dtype="object")
    for column in ("started_at", "ended_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    frame["duration_ms"] = frame["duration_ms"].astype("float64")
    for column in ("input_tokens", "output_tokens"):
        frame[column] = frame[column].astype("Int64")
    return frame
