"""traces() from a store: SQLite hands columns over as pyarrow arrays, and the frame equals the row path's."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agentnb import _telemetry as tel
from agentnb.exceptions import StoreError
from agentnb.observability import FRAME_COLUMNS, traces
from agentnb.store import RunStore, Store, open_store
from agentnb.store import _columns as columns_module

T0 = 1_767_000_000 * 10**9
MS = 10**6


def _span(trace: str, span: str, start_ms: float, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "trace_id": trace,
        "span_id": span,
        "name": f"span {span}",
        "start_ns": T0 + int(start_ms * MS),
        "end_ns": T0 + int((start_ms + 2) * MS),
    }
    row.update(extra)
    return row


def _rows() -> list[dict[str, Any]]:
    """Spans whose stored order is not their start order, with ties, NULLs next to empty texts, open spans."""
    agent = {tel.GEN_AI_OPERATION_NAME: "invoke_agent", tel.GEN_AI_AGENT_NAME: "bot"}
    chat = {
        tel.GEN_AI_OPERATION_NAME: "chat",
        tel.GEN_AI_AGENT_NAME: "bot",
        tel.GEN_AI_REQUEST_MODEL: "m1",
        tel.GEN_AI_USAGE_INPUT_TOKENS: 10,
        tel.GEN_AI_USAGE_OUTPUT_TOKENS: 4,
        tel.GEN_AI_RESPONSE_FINISH_REASONS: ["stop"],
    }
    return [
        # Children end (and are stored) before their parent, which started first.
        _span("t1", "c1", 1, parent_id="r1", kind="CLIENT", operation="chat", agent_name="bot", model="m1",
              input_tokens=10, output_tokens=4, attributes=chat),
        _span("t1", "c2", 1, parent_id="r1", name="execute_tool lookup", operation="execute_tool",
              tool_name="lookup", status_code="ERROR", status_message="no such key",
              attributes={tel.GEN_AI_TOOL_NAME: "lookup", "custom": {"nested": [1, 2.5, None]}}),
        _span("t1", "r1", 0, name="invoke_agent bot", operation="invoke_agent", agent_name="bot", attributes=agent),
        # Empty texts are not NULLs; an open span has no end; text beyond ASCII.
        _span("t2", "x1", 50, name="chat ✓ 模型", model="", status_message="", operation="chat",
              attributes={"note": "naïve ☃", "empty": ""}),
        _span("t2", "x2", 40, parent_id="x1", end_ns=None, input_tokens=0, output_tokens=None),
        _span("t3", "y1", 90, name="later", run_id="run-1", input_tokens=7, attributes={}),
        _span("t3", "y2", 90, parent_id="y1", name="same start, stored later", model="m\x1f"),  # not the marker
    ]  # fmt: skip


@pytest.fixture(params=["file", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunStore]:
    s = RunStore(tmp_path / "spans.db" if request.param == "file" else ":memory:")
    s.add_spans(_rows())
    yield s
    s.close()


def _by_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make traces() read rows, as it does when the column path gives up."""
    monkeypatch.setattr(RunStore, "select_span_columns", lambda self, *args, **kwargs: None)


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"flatten": True},
        {"trace_id": "t1"},
        {"trace_id": ["t3", "t2"]},
        {"agent": "bot"},
        {"start": (T0 + 40 * MS) / 1e9},
        {"end": (T0 + 45 * MS) / 1e9},
        {"last": 2},
        {"last": 0},
    ],
)
def test_columns_and_rows_give_the_same_frame(
    store: RunStore, filters: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columns_module, "_CHUNK", 2)  # several chunks per read
    monkeypatch.setattr(columns_module, "_FEW", 0)  # filtered reads take the column path too
    assert store.select_span_columns(["id", "name"]) is not None  # the column path is the one taken
    by_columns = traces(store=store, **filters)
    _by_rows(monkeypatch)
    by_rows = traces(store=store, **filters)
    pd.testing.assert_frame_equal(by_columns, by_rows)
    assert tuple(by_columns.columns[: len(FRAME_COLUMNS)]) == FRAME_COLUMNS


def test_a_filter_that_matches_few_spans_reads_rows(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store.select_span_columns(["id", "name"], last_traces=1) is None  # one indexed query, not a scan
    assert store.select_span_columns(["id", "name"]) is not None  # no filter: the column path
    monkeypatch.setattr(columns_module, "_FEW", 2)
    assert store.select_span_columns(["id", "name"], last_traces=1) is not None  # 2 spans match
    assert store.select_span_columns(["id", "name"], trace_id="none") is None


def test_the_frame_is_in_start_order_with_ties_in_stored_order(store: RunStore) -> None:
    df = traces(store=store)
    assert list(df["span_id"]) == ["r1", "c1", "c2", "x2", "x1", "y1", "y2"]
    open_span, named = df.iloc[3], df.iloc[4]
    assert pd.isna(open_span["end_time"]) and pd.isna(open_span["duration_ms"])
    assert open_span["input_tokens"] == 0 and pd.isna(open_span["output_tokens"])
    assert named["name"] == "chat ✓ 模型" and named["model"] == "" and named["status_message"] == ""
    assert pd.isna(df.iloc[0]["parent_id"]) and pd.isna(df.iloc[0]["model"])
    assert named["attributes"] == {"note": "naïve ☃", "empty": ""}
    assert df.iloc[2]["attributes"] == {"custom": {"nested": [1, 2.5, None]}}  # shown-as-column keys dropped


def test_gaps_in_ids_are_read(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns_module, "_CHUNK", 2)
    store.delete_spans(before=(T0 + 45 * MS) / 1e9)  # the first five ids go
    store.add_spans([_span("t4", "z", 200)])
    assert list(traces(store=store)["span_id"]) == ["x1", "y1", "y2", "z"]
    empty = RunStore(":memory:")
    by_columns = traces(store=empty)  # an empty store: no chunk at all
    _by_rows(monkeypatch)
    pd.testing.assert_frame_equal(by_columns, traces(store=empty))
    assert len(by_columns) == 0 and str(by_columns["start_time"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("name", "a\x1eb"),  # the text separator inside a value
        ("status_message", "\x1f"),  # a value equal to the NULL marker
        ("tool_name", "\x1f"),
        ("parent_id", "p\x1e"),
    ],
)
def test_values_the_texts_cannot_carry_are_read_as_rows(
    store: RunStore, column: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add_spans([_span("t9", "odd", 300, **{column: value})])
    assert store.select_span_columns(["id", column]) is None  # given up, not guessed
    df = traces(store=store)
    odd = df[df["span_id"] == "odd"].iloc[0]
    assert odd[column] == value
    _by_rows(monkeypatch)
    pd.testing.assert_frame_equal(df, traces(store=store))


def test_an_integer_column_holding_text_is_read_as_rows(store: RunStore) -> None:
    store._conn.execute("UPDATE spans SET input_tokens = 'many' WHERE span_id = 'y1'")
    assert store.select_span_columns(["id", "input_tokens"]) is None
    with pytest.raises((TypeError, ValueError)):  # the row path refuses it too: not an integer
        traces(store=store)


def test_text_that_is_not_utf8_is_read_as_rows(store: RunStore) -> None:
    store._conn.execute("UPDATE spans SET name = CAST(X'ff' AS TEXT) WHERE span_id = 'y1'")
    assert store.select_span_columns(["id", "name"]) is None
    with pytest.raises(StoreError, match="decode"):  # the row path cannot decode it either
        traces(store=store)


def test_a_reader_sees_only_committed_spans(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "spans.db")
    store.add_spans(_rows())
    writer = sqlite3.connect(tmp_path / "spans.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE spans SET name = 'renamed' WHERE span_id = 'x1'")
        writer.execute("DELETE FROM spans WHERE span_id = 'y2'")
        df = traces(store=store)
        assert "renamed" not in set(df["name"]) and "y2" in set(df["span_id"])
        writer.execute("COMMIT")
        df = traces(store=store)
        assert "renamed" in set(df["name"]) and "y2" not in set(df["span_id"])
    finally:
        writer.close()
        store.close()


def test_the_chunks_of_one_read_see_one_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, other = RunStore(tmp_path / "spans.db"), RunStore(tmp_path / "spans.db")
    store.add_spans(_rows())
    monkeypatch.setattr(columns_module, "_CHUNK", 2)
    column = columns_module._column
    deleted: list[int] = []

    def column_then_delete(*args: Any) -> Any:
        if not deleted:  # while the first chunk is read, another connection deletes every span and commits
            deleted.append(other.delete_spans())
        return column(*args)

    monkeypatch.setattr(columns_module, "_column", column_then_delete)
    try:
        assert len(traces(store=store)) == len(_rows())  # the later chunks still read the state the first did
        assert deleted == [len(_rows())]
        assert len(traces(store=store)) == 0
    finally:
        other.close()
        store.close()


def test_postgres_reads_rows_and_gives_the_same_frame(pg_url: str, store: RunStore) -> None:
    pg: Store = open_store(pg_url)
    try:
        pg.add_spans(_rows())
        assert pg.select_span_columns(["id", "name"]) is None  # PostgreSQL has no column path: rows
        for filters in ({}, {"agent": "bot"}, {"last": 1}):
            pd.testing.assert_frame_equal(traces(store=pg, **filters), traces(store=store, **filters))
    finally:
        pg.close()


def test_select_spans_orders_by_start_or_by_stored_id(store: RunStore) -> None:
    by_id = [row[0] for row in store.select_spans(["span_id"], order="id")]
    assert by_id == [row["span_id"] for row in _rows()]  # the order add_spans stored them in
    assert [row[0] for row in store.select_spans(["span_id"])] == ["r1", "c1", "c2", "x2", "x1", "y1", "y2"]
    with pytest.raises(ValueError, match="order must be"):
        store.select_spans(["span_id"], order="name")  # pyright: ignore[reportArgumentType]
