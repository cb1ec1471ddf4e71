"""Spans as pandas DataFrames: ``traces()`` (one row per span) and ``usage_summary()`` (per agent and model).

pandas is imported inside the functions, so importing agentnb never loads it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

from .._gc import gc_paused
from ..store import SpanFilter, Store, default_store, default_store_url, open_store, store_exists, to_ns
from ._prices import Prices, token_cost
from ._span_store import FRAME_HIDDEN_ATTRIBUTES, RECORD_COLUMNS, SpanStore

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRAME_COLUMNS", "records_frame", "spans_frame", "traces", "usage_summary"]

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

Source = Literal["auto", "memory", "store"]


def _import_pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - pandas is part of the observability extra
        raise ImportError('agentnb.traces() needs pandas: pip install "agentnb[observability]"') from e
    return pd


# The record fields a frame is built from (a prefix of RECORD_COLUMNS: everything up to ``attributes``).
_SOURCE = RECORD_COLUMNS[: RECORD_COLUMNS.index("attributes") + 1]
_I = {name: i for i, name in enumerate(_SOURCE)}
# What a frame reads from a store: the same fields without ``run_id``, which no column shows.
_STORE_SOURCE = tuple(name for name in _SOURCE if name != "run_id")
_I_STORE = {name: i for i, name in enumerate(_STORE_SOURCE)}
_STRING_COLUMNS = ("trace_id", "span_id", "parent_id", "name", "operation", "kind")
_STRING_COLUMNS_2 = ("status_code", "status_message", "agent_name", "model")


def spans_frame(rows: Sequence[Mapping[str, Any]], *, flatten: bool = False) -> pd.DataFrame:
    """Build the :func:`traces` DataFrame from run-store span rows (``attributes`` decoded or JSON text).

    Args:
        rows: Span rows as :meth:`RunStore.list_spans` or :meth:`SpanStore.rows` return them.
        flatten: Also add one ``attributes.<key>`` column per attribute key.
    """
    records = [tuple(row.get(name) for name in _SOURCE) for row in rows]
    return records_frame(records, flatten=flatten)


def records_frame(
    records: Sequence[Sequence[Any]], *, flatten: bool = False, attributes_filtered: bool = False
) -> pd.DataFrame:
    """Build the :func:`traces` DataFrame from span tuples in :data:`RECORD_COLUMNS` order (the fast path).

    Only the fields up to ``attributes`` are read; ``attributes`` may be a mapping or JSON text.
    ``attributes_filtered`` says they are already private copies without the keys shown as columns
    (as :func:`frame_record` makes them).
    """
    with gc_paused():
        return _records_frame(records, _I, flatten=flatten, attributes_filtered=attributes_filtered)


def _records_frame(
    records: Sequence[Sequence[Any]], index: Mapping[str, int], *, flatten: bool, attributes_filtered: bool
) -> pd.DataFrame:
    """Build the frame from tuples whose fields ``index`` places (``_I``, or ``_I_STORE`` for store rows)."""
    import numpy as np

    pd = _import_pandas()
    n = len(records)
    i_start = index["start_ns"]
    # Rows are put in start order before they become columns: reordering a list of tuples costs a tenth
    # of sorting the finished DataFrame (which moves every column, strings and dicts included). The sort
    # is stable, so spans that started at the same time keep the order they came in (stored order).
    start_ns = np.fromiter(map(itemgetter(i_start), records), dtype=np.int64, count=n)
    if n > 1 and not bool((start_ns[1:] >= start_ns[:-1]).all()):
        order = np.argsort(start_ns, kind="stable")
        records = itemgetter(*order.tolist())(records)
        start_ns = start_ns[order]
    columns: list[tuple[Any, ...]] = list(zip(*records, strict=False)) if n else [()] * len(index)
    ends = columns[index["end_ns"]]
    missing_end = None
    if None in ends:  # a span still open when it was read: no end time, no duration
        missing_end = np.array([e is None for e in ends], dtype=bool)
        ends = tuple(s if e is None else e for s, e in zip(columns[i_start], ends, strict=True))
    end_ns = np.fromiter(ends, dtype=np.int64, count=n)
    raw_attributes = columns[index["attributes"]]
    # Filtered records may be cached by the span store: copy, so editing a cell never edits the cache.
    attributes: list[dict[str, Any]] = (
        [a.copy() for a in raw_attributes] if attributes_filtered else _visible(raw_attributes)
    )
    strings = _string_array(pd)
    integers = _int_array(pd)
    return _assemble(
        pd,
        start_ns,
        end_ns,
        missing_end,
        {name: strings(columns[index[name]]) for name in (*_STRING_COLUMNS, *_STRING_COLUMNS_2, "tool_name")},
        {name: integers(columns[index[name]]) for name in ("input_tokens", "output_tokens")},
        attributes,
        flatten=flatten,
    )


def _columns_frame(columns: Mapping[str, Any], *, flatten: bool) -> pd.DataFrame:
    """Build the frame from pyarrow arrays of ``id`` and the :data:`_STORE_SOURCE` fields, in any order."""
    import numpy as np
    import pyarrow
    import pyarrow.compute

    pa: Any = pyarrow
    pc: Any = pyarrow.compute
    pd = _import_pandas()
    ids = columns["id"].to_numpy()
    start_ns = columns["start_ns"].to_numpy()
    if len(ids) > 1:
        later, tied = start_ns[1:] > start_ns[:-1], start_ns[1:] == start_ns[:-1]
        if not bool((later | (tied & (ids[1:] > ids[:-1]))).all()):
            order = np.lexsort((ids, start_ns))  # start time, then id: the order select_spans gives
            indices = pa.array(order)
            columns = {name: array.take(indices) for name, array in columns.items()}
            start_ns = start_ns[order]
    ends = columns["end_ns"]
    missing_end = None
    if ends.null_count:  # a span still open when it was read: no end time, no duration
        missing_end = ends.is_null().to_numpy(zero_copy_only=False)
        ends = pc.if_else(ends.is_null(), columns["start_ns"], ends)
    strings = pd.arrays.ArrowStringArray
    integers = pd.arrays.IntegerArray
    return _assemble(
        pd,
        start_ns,
        ends.to_numpy(),
        missing_end,
        {name: strings(columns[name]) for name in (*_STRING_COLUMNS, *_STRING_COLUMNS_2, "tool_name")},
        {name: integers(*_values_and_mask(columns[name])) for name in ("input_tokens", "output_tokens")},
        _visible(columns["attributes"].to_pylist()),
        flatten=flatten,
    )


def _values_and_mask(array: Any) -> tuple[Any, Any]:
    """A pyarrow integer array as numpy values (0 where missing) and its numpy mask of missing values."""
    return array.fill_null(0).to_numpy(), array.is_null().to_numpy(zero_copy_only=False)


def _assemble(
    pd: Any,
    start_ns: Any,
    end_ns: Any,
    missing_end: Any,
    strings: Mapping[str, Any],
    integers: Mapping[str, Any],
    attributes: list[dict[str, Any]],
    *,
    flatten: bool,
) -> pd.DataFrame:
    """The frame from its columns: times as int64 ns arrays (``missing_end`` masks open spans), pandas arrays."""
    import numpy as np

    start = pd.DatetimeIndex(start_ns.astype("datetime64[ns]")).tz_localize("UTC")
    end = pd.DatetimeIndex(end_ns.astype("datetime64[ns]")).tz_localize("UTC")
    duration = (end_ns - start_ns) / 1e6
    if missing_end is not None:
        end = end.where(~missing_end)
        duration[missing_end] = np.nan
    data: dict[str, Any] = {name: strings[name] for name in _STRING_COLUMNS}
    data |= {"start_time": start, "end_time": end, "duration_ms": duration}
    data |= {name: strings[name] for name in _STRING_COLUMNS_2}
    data |= {
        "input_tokens": integers["input_tokens"],
        "output_tokens": integers["output_tokens"],
        "tool_name": strings["tool_name"],
        "attributes": pd.Series(attributes, dtype=object),
    }
    if flatten:
        keys: dict[str, None] = {}
        for attrs in attributes:
            keys.update(dict.fromkeys(attrs))
        for key in sorted(keys):
            data[f"attributes.{key}"] = pd.Series([a.get(key) for a in attributes], dtype=object)
    return pd.DataFrame(data)


def _string_array(pd: Any) -> Callable[[Sequence[str | None]], Any]:
    """A builder of pandas ``string`` arrays from lists of ``str`` or ``None``.

    With pyarrow installed, ``pyarrow.array`` converts a list in one C pass and the pandas array wraps
    it as it is, several times faster than ``pd.array(..., dtype="string")``, which checks every element
    in Python first.
    """
    try:
        import pyarrow
    except ImportError:
        return lambda values: pd.array(values, dtype="string")
    pa: Any = pyarrow
    large_string = pa.large_string()
    wrap = pd.arrays.ArrowStringArray
    return lambda values: wrap(pa.array(values, type=large_string))


def _int_array(pd: Any) -> Callable[[Sequence[int | None]], Any]:
    """A builder of pandas ``Int64`` arrays (missing values masked) from lists of ``int`` or ``None``.

    With pyarrow installed the values and the mask are made in C, about three times faster than
    ``pd.array(..., dtype="Int64")``.
    """
    try:
        import pyarrow
    except ImportError:
        return lambda values: pd.array(values, dtype="Int64")
    pa: Any = pyarrow
    int64 = pa.int64()

    def build(values: Sequence[int | None]) -> Any:
        try:
            array = pa.array(values, type=int64)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # not plain integers: let pandas judge
            return pd.array(values, dtype="Int64")
        return pd.arrays.IntegerArray(*_values_and_mask(array))

    return build


def _json_loads() -> Callable[[str], Any]:
    """The fastest JSON decoder at hand: orjson when installed (about three times faster), else json.

    orjson refuses some of what json accepts (NaN, say); the caller falls back to json for those.
    """
    try:
        from orjson import loads
    except ImportError:
        return json.loads
    return loads


def _p50(values: pd.Series[float]) -> float:
    return float(values.quantile(0.5))


def _p95(values: pd.Series[float]) -> float:
    return float(values.quantile(0.95))


def _visible(raw: Sequence[Any]) -> list[dict[str, Any]]:
    """Decode (when JSON text) and copy attribute dicts, dropping the keys already shown as columns."""
    loads = _json_loads()
    hidden = FRAME_HIDDEN_ATTRIBUTES
    out: list[dict[str, Any]] = []
    append = out.append
    for value in raw:
        if type(value) is str:
            try:
                attrs: dict[str, Any] = loads(value)
            except ValueError:  # what json accepts and orjson does not, e.g. NaN
                attrs = json.loads(value)
        else:
            attrs = dict(value or {})
        # Popped while the dict is fresh in the CPU's cache: a pass per key over all the dicts costs four
        # times as much.
        for key in hidden:
            attrs.pop(key, None)
        append(attrs)
    return out


def _filter_records(
    records: list[tuple[Any, ...]],
    *,
    trace_ids: set[str] | None,
    agent: str | None,
    start_ns: int | None,
    end_ns: int | None,
    last: int | None,
) -> list[tuple[Any, ...]]:
    t, a, s = _I["trace_id"], _I["agent_name"], _I["start_ns"]
    if trace_ids is not None:
        records = [r for r in records if r[t] in trace_ids]
    if agent is not None:
        records = [r for r in records if r[a] == agent]
    if start_ns is not None:
        records = [r for r in records if r[s] >= start_ns]
    if end_ns is not None:
        records = [r for r in records if r[s] < end_ns]
    if last is not None:
        first_seen: dict[str, int] = {}
        for r in records:
            if r[t] not in first_seen or r[s] < first_seen[r[t]]:
                first_seen[r[t]] = r[s]
        keep = set(sorted(first_seen, key=first_seen.__getitem__)[-last:]) if last > 0 else set[str]()
        records = [r for r in records if r[t] in keep]
    return records


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
    store: Store | str | os.PathLike[str] | None = None,
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
        store: Read this store (or database path or store URL) instead, e.g. from another process.
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
    run_store: Store | None = None
    close_after = False
    if store is not None:
        if isinstance(store, Store):
            run_store = store
        else:
            run_store, close_after = _open_existing(os.fspath(store))
    elif source == "memory" or (source == "auto" and active is not None and not active.persistent):
        with gc_paused():
            records = active.frame_records() if active is not None else []
        records = _filter_records(records, trace_ids=ids, agent=agent, start_ns=start_ns, end_ns=end_ns, last=last)
        return records_frame(records, flatten=flatten, attributes_filtered=True)
    elif active is not None and active.persistent:
        active.force_flush()  # what this process traced so far must be in the result
        run_store = active.run_store()
    else:
        run_store, close_after = _open_existing(None)

    if run_store is None:
        return records_frame([], flatten=flatten)
    where = SpanFilter(
        trace_id=sorted(ids) if ids is not None else None, agent_name=agent, start=start, end=end, last_traces=last
    )
    try:
        with gc_paused():
            columns = run_store.select_span_columns(["id", *_STORE_SOURCE], where)
            if columns is not None:
                return _columns_frame(columns, flatten=flatten)
            # Stored order; the frame sorts by start time itself (stably, so ties stay in id order).
            records = run_store.select_spans(_STORE_SOURCE, where, order="id")
            return _records_frame(records, _I_STORE, flatten=flatten, attributes_filtered=False)
    finally:
        if close_after:
            run_store.close()


def _open_existing(url: str | None) -> tuple[Store | None, bool]:
    """Open a store to read from, and say whether to close it after; ``None`` is the default store.

    Reading must not create an empty SQLite file as a side effect; a server store is simply opened.
    """
    target = default_store_url() if url is None else url
    if not store_exists(target):
        return None, False
    if url is None:
        return default_store(), False
    return open_store(target), True


_SUMMARY_COLUMNS = (
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
)
_COST_COLUMNS = ("input_cost", "output_cost", "total_cost")


def usage_summary(frame: pd.DataFrame | None = None, *, prices: Prices | None = None, **filters: Any) -> pd.DataFrame:
    """Summarize model usage per agent and model: calls, errors, tokens, latency percentiles and cost.

    Args:
        frame: A DataFrame from :func:`traces`; by default ``traces(**filters)`` is read.
        prices: Model name -> ``(price per 1M input tokens, price per 1M output tokens)``; adds the
            ``input_cost, output_cost, total_cost`` columns (NaN for a model the table does not price; a
            dated model name such as ``gpt-4o-mini-2024-07-18`` takes the price of ``gpt-4o-mini``, see
            :func:`~agentnb.observability.token_cost`).
        **filters: Passed to :func:`traces` when ``frame`` is not given.

    Returns:
        One row per ``(agent_name, model)`` with ``calls, errors, input_tokens, output_tokens, total_tokens,
        latency_p50_ms, latency_p95_ms, latency_mean_ms`` (and the cost columns with ``prices``); model
        calls outside any agent have an empty ``agent_name``.

    Example:
        ```python
        import agentnb

        agentnb.usage_summary(prices={"gpt-4o-mini": (0.15, 0.60)})
        ```
    """
    pd = _import_pandas()
    if frame is None:
        frame = traces(**filters)
    elif filters:
        raise TypeError("Pass either a DataFrame or traces() filters to usage_summary(), not both.")
    columns = [*_SUMMARY_COLUMNS, *(_COST_COLUMNS if prices is not None else ())]
    chats = frame[frame["operation"] == "chat"] if len(frame) else frame
    if not len(chats):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    chats = chats.assign(
        agent_name=chats["agent_name"].fillna(""),
        model=chats["model"].fillna(""),
        is_error=(chats["status_code"] == "ERROR").fillna(False).astype(int),
    )
    grouped = chats.groupby(["agent_name", "model"], sort=True)
    summary = grouped.agg(
        calls=("span_id", "size"),
        errors=("is_error", "sum"),
        input_tokens=("input_tokens", "sum"),
        output_tokens=("output_tokens", "sum"),
        latency_p50_ms=("duration_ms", _p50),
        latency_p95_ms=("duration_ms", _p95),
        latency_mean_ms=("duration_ms", "mean"),
    ).reset_index()
    summary["total_tokens"] = summary["input_tokens"] + summary["output_tokens"]
    if prices is not None:
        costs = [
            token_cost(model, int(i), int(o), prices) or (math.nan, math.nan)
            for model, i, o in zip(summary["model"], summary["input_tokens"], summary["output_tokens"], strict=True)
        ]
        summary["input_cost"] = [c[0] for c in costs]
        summary["output_cost"] = [c[1] for c in costs]
        summary["total_cost"] = summary["input_cost"] + summary["output_cost"]
    return summary.loc[:, columns]
