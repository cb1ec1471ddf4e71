"""Spans read from SQLite column by column, as pyarrow arrays: the fast path behind ``traces()``.

Fetched row by row, 100,000 spans make sqlite3 build a Python object for every value (1.7 million) and a tuple
for every row, which costs more than all of SQLite's own work. Here each column of a chunk of rows comes back
as one ``group_concat`` text instead (strings joined by a separator, integers as decimal digits, NULL as a
marker), and pyarrow splits and converts the texts in C. Each text is checked: it must split into one part per
row, hold as many NULL markers as ``count(column)`` says there are NULLs, and an integer column must hold
integers. A stored value that breaks a check (one holding the separator, a text in an integer column, text
that is not UTF-8) makes the read give up (``None``), and the caller reads rows the ordinary way, so the
result never differs from the row path. The chunks of one read share one read transaction: they see one
committed state of the store.

A native SQLite-to-Arrow reader (ADBC's SQLite driver) would skip the texts, but it links its own copy of
SQLite, and two copies of SQLite in one process must not open the same database: POSIX locks belong to the
process, so when one copy closes its file it drops the locks the other copy holds (the write lock of a
transaction in progress included), and another process may then write at the same time
(https://www.sqlite.org/howtocorrupt.html, section 2.2.1). ``sqlite3`` is this process's one copy.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

__all__ = ["read_span_columns"]

# Column kinds, from the spans schema: NOT NULL text, nullable text, NOT NULL integer, nullable integer.
_TEXT = frozenset({"trace_id", "span_id", "name", "kind", "status_code", "attributes", "events", "resource"})
_NULLABLE_TEXT = frozenset({"parent_id", "status_message", "operation", "agent_name", "model", "tool_name", "run_id"})
_INTEGER = frozenset({"id", "start_ns"})
_NULLABLE_INTEGER = frozenset({"end_ns", "input_tokens", "output_tokens"})

# Texts are joined by a control character that JSON text, ids and names hold only escaped (a value that holds
# it splits into one part too many, which the count catches), integers by commas. A NULL text is another
# control character, a NULL integer is empty.
_SEP = "\x1e"
_NULL_TEXT = "\x1f"
_CHUNK = 65_536
"""Ids per query: bounds the texts in memory (and keeps each far below SQLite's 1 GB limit on a string)."""
_FEW = 2_048
"""Fewer matching spans than this are read as rows: cheap anyway, and ``traces(last=10)`` then costs one
indexed query instead of a query per chunk of the whole table."""


class _Inexact(Exception):
    """A stored value that the texts cannot carry exactly."""


def read_span_columns(
    conn: sqlite3.Connection, columns: Sequence[str], where: Sequence[str], params: Sequence[Any]
) -> dict[str, Any] | None:
    """Read ``columns`` of the spans matching ``where`` (SQL conditions, ``?`` placeholders) as pyarrow arrays.

    Spans come in chunks of ids, each in the order SQLite reads it (id order, unless an index serves a filter);
    ask for ``id`` to put them in order. Run inside a read transaction on ``conn``.

    Returns:
        Column name -> ``pyarrow`` array (``large_string`` or ``int64``, null where SQL has NULL), or ``None``
        when pyarrow is missing, a stored value cannot travel as text exactly, or the filters match fewer
        than :data:`_FEW` spans (rows cost less then).
    """
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        return None
    pa: Any = pyarrow
    pc: Any = pyarrow.compute
    unknown = [c for c in columns if c not in _TEXT | _NULLABLE_TEXT | _INTEGER | _NULLABLE_INTEGER]
    if unknown:
        raise ValueError(f"Unknown span columns {unknown}.")
    nullable = [c for c in columns if c in _NULLABLE_TEXT or c in _NULLABLE_INTEGER]
    # The separators are literals: an expression such as char(30) would be evaluated again for every row.
    aggregates = ["count(*)"]
    # As BLOBs, the texts reach Python as bytes that pyarrow reads in place (no UTF-8 decoding into str objects
    # and encoding back); pyarrow checks the UTF-8 of the text columns instead.
    aggregates += [f"CAST(group_concat({_value(c)}, '{_SEP if _is_text(c) else ','}') AS BLOB)" for c in columns]
    aggregates += [f"count({c})" for c in nullable]
    # Chunks are ranges of ids (the rowid), each a plain stretch of the table.
    sql = f"SELECT {', '.join(aggregates)} FROM spans WHERE {' AND '.join([*where, 'id > ?', 'id <= ?'])}"
    chunks: dict[str, list[Any]] = {c: [] for c in columns}
    if where:  # the filters' indexes say how many spans match and where their ids lie
        found, low, high = conn.execute(
            f"SELECT count(*), min(id), max(id) FROM spans WHERE {' AND '.join(where)}", params
        ).fetchone()
        if found < _FEW:
            return None
    else:
        low, high = conn.execute("SELECT min(id), max(id) FROM spans").fetchone()
    for after in range(int(low or 1) - 1, int(high or 0), _CHUNK):
        row = conn.execute(sql, (*params, after, after + _CHUNK)).fetchone()
        n = int(row[0])
        if not n:
            continue
        present = dict(zip(nullable, row[1 + len(columns) :], strict=True))
        try:
            for c, text in zip(columns, row[1:], strict=False):
                chunks[c].append(_column(pa, pc, c, text, n, present.get(c)))
        except (_Inexact, pa.ArrowInvalid, pa.ArrowTypeError):
            return None
    return {c: _concat(pa, parts, pa.large_string() if _is_text(c) else pa.int64()) for c, parts in chunks.items()}


def _is_text(column: str) -> bool:
    return column in _TEXT or column in _NULLABLE_TEXT


def _value(column: str) -> str:
    """The SQL expression that a column's ``group_concat`` joins (NULL replaced by its marker)."""
    if column in _NULLABLE_TEXT:
        return f"ifnull({column}, '{_NULL_TEXT}')"
    if column in _NULLABLE_INTEGER:
        return f"ifnull({column}, '')"
    return column


def _column(pa: Any, pc: Any, column: str, data: bytes | None, n: int, present: int | None) -> Any:
    """One chunk of a column as a pyarrow array, from its aggregated text; ``present`` counts non-NULLs.

    Raises:
        _Inexact: The text does not split into ``n`` parts, or holds more NULL markers than there are NULLs.
        pyarrow.ArrowInvalid: A text column's bytes are not UTF-8.
    """
    data = data or b""
    offsets = pa.array([0, len(data)], type=pa.int64()).buffers()[1]
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    if _is_text(column):
        text.validate(full=True)  # UTF-8, as the row path's decoding requires
    values = pc.split_pattern(text, _SEP if _is_text(column) else ",").flatten()
    if len(values) != n:
        raise _Inexact
    if present is not None:
        null = pc.equal(values, _NULL_TEXT if column in _NULLABLE_TEXT else "")
        if (pc.sum(null).as_py() or 0) != n - present:  # a stored value that looks like the marker
            raise _Inexact
        if present < n:
            values = pc.if_else(null, pa.scalar(None, pa.large_string()), values)
    # An integer column holding a REAL or a text fails here (pyarrow.ArrowInvalid).
    return values if _is_text(column) else values.cast(pa.int64())


def _concat(pa: Any, parts: list[Any], type_: Any) -> Any:
    if not parts:
        return pa.array([], type=type_)
    return parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
