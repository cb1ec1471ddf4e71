"""Spans as pandas DataFrames: ``traces()`` (one row per span) and ``usage_summary()`` (per agent and model).

pandas is imported inside the functions, so importing agentnb never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._telemetry import GEN_AI_OPERATION_NAME
from ..store import RunStore, default_store_path
from ..store._run_store import to_ns
from ._span_store import PROMOTED_ATTRIBUTES, SpanStore

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRAME_COLUMNS", "spans_frame", "traces", "usage_summary"]

FRAME_COLUMNS = (
    "trace_id",
    "span_id",
    "parent_id",
    "name",
    "operation",
    "kind",
    "start_time",
    "end_time",
    "duration_ms",
    "status_code",
    "status_message",
    "agent_name",
    "model",
    "input_tokens",
    "output_tokens",
    "tool_name",
    "attributes",
)
"""The columns of :func:`traces`, in order (``attributes.*`` columns follow when flattened)."""

# Attributes already shown as columns; the ``attributes`` column holds everything else.
_HIDDEN = PROMOTED_ATTRIBUTES | {GEN_AI_OPERATION_NAME}

Source = Literal["auto", "memory", "store"]


def _import_pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - pandas is part of the observability extra
        raise ImportError('agentnb.traces() needs pandas: pip install "agentnb[observability]"') from e
    return pd


def spans_frame(rows: Sequence[dict[str, Any]], *, flatten: bool = False) -> pd.DataFrame:
    """Build the :func:`traces` DataFrame from run-store span rows (``attributes`` already decoded).

    Args:
        rows: Span rows as :meth:`RunStore.list_spans` or :meth:`SpanStore.rows` return them.
        flatten: Also add one ``attributes.<key>`` column per attribute key.
    """
    import numpy as np

    pd = _import_pandas()
    n = len(rows)
    start_ns = np.fromiter((r["start_ns"] for r in rows), dtype=np.int64, count=n)
    ends = [r["end_ns"] for r in rows]
    missing_end = np.fromiter((e is None for e in ends), dtype=bool, count=n)
    end_ns = np.fromiter((s if e is None else e for s, e in zip(start_ns.tolist(), ends, strict=True)), np.int64, n)
    start = pd.DatetimeIndex(start_ns.astype("datetime64[ns]")).tz_localize("UTC")
    end = pd.DatetimeIndex(end_ns.astype("datetime64[ns]")).tz_localize("UTC")
    duration = (end_ns - start_ns) / 1e6
    if missing_end.any():
        end = end.where(~missing_end)
        duration[missing_end] = np.nan
    hidden = _HIDDEN
    attributes = [{k: v for k, v in r["attributes"].items() if k not in hidden} for r in rows]

    def col(key: str) -> list[Any]:
        return [r[key] for r in rows]

    data: dict[str, Any] = {
        "trace_id": pd.array(col("trace_id"), dtype="string"),
        "span_id": pd.array(col("span_id"), dtype="string"),
        "parent_id": pd.array(col("parent_id"), dtype="string"),
        "name": pd.array(col("name"), dtype="string"),
        "operation": pd.array(col("operation"), dtype="string"),
        "kind": pd.array(col("kind"), dtype="string"),
        "start_time": start,
        "end_time": end,
        "duration_ms": duration,
        "status_code": pd.array(col("status_code"), dtype="string"),
        "status_message": pd.array(col("status_message"), dtype="string"),
        "agent_name": pd.array(col("agent_name"), dtype="string"),
        "model": pd.array(col("model"), dtype="string"),
        "input_tokens": pd.array(col("input_tokens"), dtype="Int64"),
        "output_tokens": pd.array(col("output_tokens"), dtype="Int64"),
        "tool_name": pd.array(col("tool_name"), dtype="string"),
        "attributes": pd.Series(attributes, dtype=object),
    }
    if flatten:
        keys: dict[str, None] = {}
        for attrs in attributes:
            keys.update(dict.fromkeys(attrs))
        for key in sorted(keys):
            data[f"attributes.{key}"] = pd.Series([a.get(key) for a in attributes], dtype=object)
    frame = pd.DataFrame(data)
    if n and not bool((start_ns[1:] >= start_ns[:-1]).all()):
        frame = frame.sort_values("start_time", kind="stable", ignore_index=True)
    return frame


def _filter_rows(
    rows: list[dict[str, Any]],
    *,
    trace_ids: set[str] | None,
    agent: str | None,
    start_ns: int | None,
    end_ns: int | None,
    last: int | None,
) -> list[dict[str, Any]]:
    if trace_ids is not None:
        rows = [r for r in rows if r["trace_id"] in trace_ids]
    if agent is not None:
        rows = [r for r in rows if r["agent_name"] == agent]
    if start_ns is not None:
        rows = [r for r in rows if r["start_ns"] >= start_ns]
    if end_ns is not None:
        rows = [r for r in rows if r["start_ns"] < end_ns]
    if last is not None:
        first_seen: dict[str, int] = {}
        for r in rows:
            t = r["trace_id"]
            if t not in first_seen or r["start_ns"] < first_seen[t]:
                first_seen[t] = r["start_ns"]
        keep = set(sorted(first_seen, key=first_seen.__getitem__)[-last:]) if last > 0 else set()
        rows = [r for r in rows if r["trace_id"] in keep]
    return rows


def _active_span_store() -> SpanStore | None:
    from ._setup import get_span_store

    return get_span_store()


def traces(
    trace_id: str | Sequence[str] | None = None,
    *,
    agent: str | None = None,
    start: Any = None,
    end: Any = None,
    last: int | None = None,
    source: Source = "auto",
    store: RunStore | str | os.PathLike[str] | None = None,
    flatten: bool = False,
) -> pd.DataFrame:
    """Return recorded spans as a pandas DataFrame, one row per span, oldest first.

    Columns: ``trace_id, span_id, parent_id, name, operation, kind, start_time, end_time`` (timezone-aware
    UTC), ``duration_ms, status_code, status_message, agent_name, model, input_tokens, output_tokens,
    tool_name`` and ``attributes`` (a dict of the attributes not already shown as columns).

    Args:
        trace_id: Only these traces (one id or several).
        agent: Only spans of this agent (its ``invoke_agent`` span and the model and tool calls inside it).
        start: Only spans that started at or after this time (datetime, epoch seconds or ISO string).
        end: Only spans that started before this time.
        last: Only the N most recent traces (runs).
        source: ``"memory"`` reads this process's span buffer; ``"store"`` reads the run store (spans from
            every process); ``"auto"`` reads the store when spans are being saved there, else memory.
        store: Read this run store (or database path) instead, e.g. from another process.
        flatten: Also add one ``attributes.<key>`` column per attribute.

    Example:
        ```python
        import agentnb
        from agentnb.observability import configure_otel_providers

        configure_otel_providers()
        # ... run agents ...
        df = agentnb.traces(last=1)
        df[["name", "duration_ms", "input_tokens", "output_tokens"]]
        ```
    """
    if last is not None and last < 0:
        raise ValueError(f"last must be >= 0, got {last}.")
    if source not in ("auto", "memory", "store"):
        raise ValueError(f"source must be 'auto', 'memory' or 'store', got {source!r}.")
    ids = None if trace_id is None else ({trace_id} if isinstance(trace_id, str) else set(trace_id))
    start_ns = None if start is None else to_ns(start)
    end_ns = None if end is None else to_ns(end)

    active = _active_span_store()
    run_store: RunStore | None = None
    close_after = False
    if store is not None:
        if isinstance(store, RunStore):
            run_store = store
        else:
            run_store, close_after = _open_existing(Path(store))
    elif source == "memory" or (source == "auto" and active is not None and not active.persistent):
        rows = active.rows() if active is not None else []
        rows = _filter_rows(rows, trace_ids=ids, agent=agent, start_ns=start_ns, end_ns=end_ns, last=last)
        return spans_frame(rows, flatten=flatten)
    elif active is not None and active.persistent:
        active.force_flush()  # what this process traced so far must be in the result
        run_store = active.run_store()
    else:
        run_store, close_after = _open_existing(default_store_path())

    if run_store is None:
        return spans_frame([], flatten=flatten)
    try:
        rows = run_store.list_spans(
            trace_id=sorted(ids) if ids is not None else None,
            agent_name=agent,
            start=start_ns / 1e9 if start_ns is not None else None,
            end=end_ns / 1e9 if end_ns is not None else None,
            last_traces=last,
        )
    finally:
        if close_after:
            run_store.close()
    return spans_frame(rows, flatten=flatten)


def _open_existing(path: Path) -> tuple[RunStore | None, bool]:
    # Reading must not create an empty database as a side effect.
    if not path.exists():
        return None, False
    return RunStore(path), True


def usage_summary(frame: pd.DataFrame | None = None, **filters: Any) -> pd.DataFrame:
    """Summarize model usage per agent and model: calls, errors, tokens and latency percentiles.

    Args:
        frame: A DataFrame from :func:`traces`; by default ``traces(**filters)`` is read.
        **filters: Passed to :func:`traces` when ``frame`` is not given.

    Returns:
        One row per ``(agent_name, model)`` with ``calls, errors, input_tokens, output_tokens, total_tokens,
        latency_p50_ms, latency_p95_ms, latency_mean_ms``; model calls outside any agent have an empty
        ``agent_name``.
    """
    pd = _import_pandas()
    if frame is None:
        frame = traces(**filters)
    elif filters:
        raise TypeError("Pass either a DataFrame or traces() filters to usage_summary(), not both.")
    chats = frame[frame["operation"] == "chat"] if len(frame) else frame
    columns = [
        "agent_name",
        "model",
        "calls",
        "errors",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_mean_ms",
    ]
    if not len(chats):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    chats = chats.assign(
        agent_name=chats["agent_name"].fillna(""),
        model=chats["model"].fillna(""),
        is_error=(chats["status_code"] == "ERROR").astype(int),
    )
    grouped = chats.groupby(["agent_name", "model"], sort=True)
    summary = grouped.agg(
        calls=("span_id", "size"),
        errors=("is_error", "sum"),
        input_tokens=("input_tokens", "sum"),
        output_tokens=("output_tokens", "sum"),
        latency_p50_ms=("duration_ms", lambda s: s.quantile(0.5)),
        latency_p95_ms=("duration_ms", lambda s: s.quantile(0.95)),
        latency_mean_ms=("duration_ms", "mean"),
    ).reset_index()
    summary["total_tokens"] = summary["input_tokens"] + summary["output_tokens"]
    return summary.loc[:, columns]
