"""Behaviour of the run store in one process, on each backend (the ``store`` fixture runs SQLite and PostgreSQL)."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb.exceptions import StoreError
from agentnb.store import (
    SCHEMA_VERSION,
    CheckpointRow,
    EventRow,
    RunRow,
    RunStore,
    RunSummaryRow,
    SessionRow,
    SpanFilter,
    SpanRow,
    Store,
    TraceRow,
    Watermark,
    default_store,
    default_store_path,
    open_store,
    to_iso,
    to_ns,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param == "sqlite":
        s: Store = RunStore(":memory:")
    else:
        s = open_store(request.getfixturevalue("pg_url"))
    yield s
    s.close()


def test_default_path_uses_agentnb_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "home"))
    assert default_store_path() == tmp_path / "home" / "agentnb.db"
    monkeypatch.delenv("AGENTNB_HOME")
    monkeypatch.chdir(tmp_path)
    assert default_store_path() == tmp_path / ".agentnb" / "agentnb.db"


def test_default_store_is_shared_per_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "a"))
    first = default_store()
    assert default_store() is first
    assert first.path == (tmp_path / "a" / "agentnb.db").resolve()
    assert (tmp_path / "a" / "agentnb.db").exists()
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "b"))
    second = default_store()
    assert second is not first
    first.close()
    second.close()
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "a"))
    reopened = default_store()
    assert reopened is not first and not reopened.closed
    reopened.close()


def test_file_store_uses_wal_and_busy_timeout(tmp_path: Path) -> None:
    with RunStore(tmp_path / "x.db", timeout=3) as s:
        assert s._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 3000
        assert s.schema_version == SCHEMA_VERSION


def test_run_lifecycle_and_polling(store: Store) -> None:
    t0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
    store.start_run("r1", kind="agent", name="helper", started_at=t0, metadata={"model": "m"})
    store.start_run("r2", kind="workflow", name="flow", started_at=t0 + dt.timedelta(minutes=1))
    mark = store.watermark()["runs"]
    store.finish_run("r1", status="completed", ended_at=t0 + dt.timedelta(seconds=5))

    run = store.get_run("r1")
    assert run is not None
    assert run["status"] == "completed"
    assert run["started_at"] == "2026-01-01T12:00:00.000000+00:00"
    assert run["ended_at"] == "2026-01-01T12:00:05.000000+00:00"
    assert run["metadata"] == {"model": "m"}
    assert [r["run_id"] for r in store.list_runs()] == ["r2", "r1"]
    assert [r["run_id"] for r in store.list_runs(order="oldest")] == ["r1", "r2"]
    assert [r["run_id"] for r in store.list_runs(kind="workflow")] == ["r2"]
    assert [r["run_id"] for r in store.list_runs(status="running")] == ["r2"]
    assert [r["run_id"] for r in store.list_runs(since=t0 + dt.timedelta(seconds=30))] == ["r2"]
    # Only the run that changed after the poller's mark comes back.
    assert [r["run_id"] for r in store.list_runs(after_rev=mark)] == ["r1"]
    assert store.list_runs(limit=1)[0]["run_id"] == "r2"
    assert store.get_run("nope") is None


def test_restarting_a_run_resumes_it(store: Store) -> None:
    store.start_run("r", kind="workflow", name="flow", started_at=0, metadata={"a": 1})
    store.finish_run("r", status="failed", ended_at=1, error="boom")
    store.start_run("r", kind="workflow", name="flow", started_at=50)
    run = store.get_run("r")
    assert run is not None
    assert (run["status"], run["ended_at"], run["error"]) == ("running", None, None)
    assert run["started_at"] == to_iso(0)
    assert run["metadata"] == {"a": 1}
    store.update_run("r", status="paused", metadata={"b": 2})
    run = store.get_run("r")
    assert run is not None
    assert run["status"] == "paused" and run["metadata"] == {"a": 1, "b": 2}


def test_finishing_an_unknown_run_is_a_clear_error(store: Store) -> None:
    with pytest.raises(StoreError, match="No run 'ghost'"):
        store.finish_run("ghost", status="completed", ended_at=None)
    with pytest.raises(StoreError, match="start_run"):
        store.update_run("ghost", status="paused")


def test_events_get_sequence_numbers_and_can_be_polled(store: Store) -> None:
    store.start_run("r", kind="workflow", name="flow", started_at=None)
    assert store.add_events("r", [{"type": "started"}, {"type": "output", "executor_id": "e1", "data": {"x": 1}}]) == [
        0,
        1,
    ]
    assert store.add_events("r", [{"type": "step", "data": '{"step": 2}', "timestamp": 10}]) == [2]
    assert store.add_events("r", [{"type": "late", "seq": 10}, {"type": "next"}]) == [10, 11]
    events = store.list_events("r")
    assert [e["seq"] for e in events] == [0, 1, 2, 10, 11]
    assert events[1]["executor_id"] == "e1"
    assert json.loads(events[1]["data"]) == {"x": 1}
    assert events[2]["data"] == '{"step": 2}'
    assert events[2]["timestamp"] == to_iso(10)
    assert [e["seq"] for e in store.list_events("r", after_seq=2)] == [10, 11]
    assert [e["seq"] for e in store.list_events("r", offset=1, limit=2)] == [1, 2]
    assert [e["type"] for e in store.list_events("r", types=["output", "late"])] == ["output", "late"]
    assert store.list_events("other") == []
    assert store.add_events("r", []) == []


def test_a_taken_seq_rejects_the_whole_batch(store: Store) -> None:
    store.add_events("r", [{"type": "a"}])
    with pytest.raises(StoreError, match="already has an event"):
        store.add_events("r", [{"type": "b"}, {"type": "c", "seq": 0}])
    assert [e["type"] for e in store.list_events("r")] == ["a"]


def test_bad_events_are_rejected_before_writing(store: Store) -> None:
    with pytest.raises(ValueError, match="needs a 'type'"):
        store.add_events("r", [{"data": 1}])
    with pytest.raises(ValueError, match="invalid JSON"):
        store.add_events("r", [{"type": "x", "data": "not json"}])
    assert store.list_events("r") == []


def _span(trace: str, span: str, start_s: float, **extra: object) -> dict[str, object]:
    row: dict[str, object] = {
        "trace_id": trace,
        "span_id": span,
        "name": extra.pop("name", "chat m"),
        "start_ns": int(start_s * 1e9),
        "end_ns": int((start_s + 1) * 1e9),
    }
    row.update(extra)
    return row


def test_spans_round_trip_and_filter(store: Store) -> None:
    rows = [
        _span("t1", "a", 100, name="invoke_agent bot", agent_name="bot", attributes={"k": [1, 2]}),
        _span("t1", "b", 101, parent_id="a", agent_name="bot", model="m", input_tokens=3, output_tokens=4),
        _span("t2", "c", 200, name="invoke_agent other", agent_name="other", status_code="ERROR", run_id="run-9"),
        _span("t3", "d", 300, name="workflow.run", events=[{"name": "e"}], resource={"service.name": "s"}),
    ]
    assert store.add_spans(rows) == 4
    assert store.add_spans(rows[:2]) == 0  # the exporter retried: nothing is stored twice
    spans = store.list_spans()
    assert [s["span_id"] for s in spans] == ["a", "b", "c", "d"]
    assert spans[0]["attributes"] == {"k": [1, 2]}
    assert spans[0]["kind"] == "INTERNAL" and spans[0]["status_code"] == "UNSET"
    assert spans[1]["parent_id"] == "a" and spans[1]["input_tokens"] == 3
    assert spans[3]["events"] == [{"name": "e"}] and spans[3]["resource"] == {"service.name": "s"}
    assert [s["span_id"] for s in store.list_spans(trace_id="t1")] == ["a", "b"]
    assert [s["span_id"] for s in store.list_spans(trace_id=["t2", "t3"])] == ["c", "d"]
    assert [s["span_id"] for s in store.list_spans(agent_name="bot")] == ["a", "b"]
    assert [s["span_id"] for s in store.list_spans(run_id="run-9")] == ["c"]
    assert [s["span_id"] for s in store.list_spans(start=150, end=250)] == ["c"]
    assert [s["span_id"] for s in store.list_spans(last_traces=2)] == ["c", "d"]
    assert [s["span_id"] for s in store.list_spans(after_id=spans[1]["id"])] == ["c", "d"]
    assert [s["span_id"] for s in store.list_spans(limit=1)] == ["a"]
    assert store.list_spans(trace_id="t1", decode=False)[0]["attributes"] == '{"k": [1, 2]}'
    # One filter object says the same as the keywords, for every span read.
    where = SpanFilter(trace_id=["t1", "t2"], start=100, end=250, agent_name="bot")
    assert [s["span_id"] for s in store.list_spans(where)] == ["a", "b"]
    assert store.select_spans(["span_id"], where) == store.select_spans(
        ["span_id"], trace_id=["t1", "t2"], start=100, end=250, agent_name="bot"
    )
    assert [s["span_id"] for s in store.list_spans(SpanFilter(after_id=spans[1]["id"]), limit=1)] == ["c"]
    with pytest.raises(TypeError, match="not both"):
        store.list_spans(where, run_id="run-9")  # pyright: ignore[reportCallIssue]
    traces = store.list_traces()
    assert [t["trace_id"] for t in traces] == ["t3", "t2", "t1"]
    assert traces[2] == {
        "trace_id": "t1",
        "start_ns": int(100e9),
        "end_ns": int(102e9),
        "spans": 2,
        "errors": 0,
        "root": "invoke_agent bot",
        "agent_name": "bot",
    }
    assert traces[1]["errors"] == 1
    assert store.delete_spans(before=150) == 2
    assert store.delete_spans() == 2


def test_span_rows_need_ids(store: Store) -> None:
    with pytest.raises(ValueError, match="span_id"):
        store.add_spans([{"trace_id": "t", "name": "x", "start_ns": 1}])


def test_checkpoints(store: Store) -> None:
    store.put_checkpoint("c2", run_id="r", workflow_name="w", parent_id="c1", step=2, created_at=20, data='{"n": 2}')
    store.put_checkpoint("c1", run_id="r", workflow_name="w", parent_id=None, step=1, created_at=10, data='{"n": 1}')
    store.put_checkpoint("c3", run_id="r2", workflow_name="v", parent_id=None, step=1, created_at=5, data="{}")
    assert store.get_checkpoint("c1") == '{"n": 1}'
    assert store.get_checkpoint("missing") is None
    assert [c["checkpoint_id"] for c in store.list_checkpoints(run_id="r")] == ["c1", "c2"]
    assert [c["checkpoint_id"] for c in store.list_checkpoints(workflow_name="v")] == ["c3"]
    assert [c["checkpoint_id"] for c in store.list_checkpoints()] == ["c3", "c1", "c2"]
    meta = store.list_checkpoints(run_id="r")[1]
    assert meta == {
        "checkpoint_id": "c2",
        "run_id": "r",
        "workflow_name": "w",
        "parent_id": "c1",
        "step": 2,
        "created_at": to_iso(20),
    }
    assert store.get_checkpoint_info("c2") == meta
    store.put_checkpoint("c2", run_id="r", workflow_name="w", parent_id="c1", step=2, created_at=20, data='{"n": 3}')
    assert store.get_checkpoint("c2") == '{"n": 3}'
    assert store.delete_checkpoint("c2") is True
    assert store.delete_checkpoint("c2") is False
    with pytest.raises(TypeError, match="JSON text"):
        store.put_checkpoint("c9", run_id=None, workflow_name=None, parent_id=None, step=0, data={"x": 1})  # pyright: ignore[reportArgumentType]


def test_sessions(store: Store) -> None:
    assert store.load_session("s") is None
    store.save_session("s", '{"v": 1}')
    store.save_session("t", "{}")
    store.save_session("s", '{"v": 2}')
    assert store.load_session("s") == '{"v": 2}'
    listed = store.list_sessions()
    assert [s["session_id"] for s in listed] == ["s", "t"]
    assert listed[0]["size"] == len('{"v": 2}')
    assert store.delete_session("t") is True
    assert store.delete_session("t") is False
    with pytest.raises(TypeError):
        store.save_session("s", {"v": 3})  # pyright: ignore[reportArgumentType]


def test_watermark_moves_on_every_kind_of_write(store: Store) -> None:
    before = store.watermark()
    assert before == {"runs": 0, "events": 0, "spans": 0, "checkpoints": None, "sessions": None}
    store.start_run("r", kind="agent", name="a", started_at=None)
    store.add_events("r", [{"type": "x"}])
    store.add_spans([_span("t", "s", 1)])
    store.put_checkpoint("c", run_id="r", workflow_name="w", parent_id=None, step=0, created_at=None, data="{}")
    store.save_session("s", "{}")
    after = store.watermark()
    assert after["runs"] == 1 and after["events"] == 1 and after["spans"] == 1
    assert after["checkpoints"] is not None and after["sessions"] is not None


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.close()
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}.*upgrade agentnb"):
        RunStore(path)


def test_foreign_sqlite_file_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an agentnb run store"):
        RunStore(path)
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    conn.close()
    assert tables == ["notes"]


def test_garbage_file_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    payload = b"this is not a database, it is a text file that happens to be long enough" * 20
    path.write_bytes(payload)
    with pytest.raises(StoreError, match="not a readable agentnb run store"):
        RunStore(path)
    assert path.read_bytes() == payload


def test_closed_store_says_so(store: Store) -> None:
    s = store
    s.close()
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.list_runs()


def test_threads_share_one_store(store: Store) -> None:
    s = store
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                s.add_events(f"run-{n % 2}", [{"type": f"t{n}-{i}"}])
                s.list_events(f"run-{n % 2}", after_seq=i)
        except BaseException as e:  # collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for run in ("run-0", "run-1"):
        seqs = [e["seq"] for e in s.list_events(run)]
        assert seqs == list(range(150))
    s.close()


def test_time_helpers() -> None:
    aware = dt.datetime(2026, 3, 1, 10, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert to_iso(aware) == "2026-03-01T08:30:00.000000+00:00"
    assert to_iso("2026-03-01T08:30:00Z") == "2026-03-01T08:30:00.000000+00:00"
    assert to_ns(aware) == to_ns("2026-03-01T08:30:00+00:00") == int(aware.timestamp()) * 1_000_000_000
    assert to_ns(1.5) == 1_500_000_000
    with pytest.raises(ValueError, match="ISO 8601"):
        to_iso("yesterday")
    with pytest.raises(TypeError):
        to_ns(object())


def test_span_tuples_fast_paths(store: Store) -> None:
    from agentnb.store import SPAN_COLUMNS

    record = tuple(
        {"trace_id": "t", "span_id": "s", "name": "n", "kind": "CLIENT", "start_ns": 5, "status_code": "OK",
         "attributes": '{"a": 1}', "events": "[]", "resource": "{}"}.get(column)
        for column in SPAN_COLUMNS[1:]
    )  # fmt: skip
    assert store.add_span_records([record]) == 1
    assert store.add_span_records([record]) == 0
    assert store.add_span_records([]) == 0
    assert store.select_spans(("name", "kind", "attributes")) == [("n", "CLIENT", '{"a": 1}')]
    assert store.select_spans(("span_id",), trace_id="other") == []
    with pytest.raises(ValueError, match="Unknown span columns"):
        store.select_spans(("name; DROP TABLE spans",))


def test_trace_summary_follows_every_write_and_delete(store: RunStore) -> None:
    # The root ends (and is written) last, in a later batch than its children; one child fails.
    store.add_spans([_span("t1", "b", 101, parent_id="a", status_code="ERROR"), _span("t2", "x", 300)])
    root = _span("t1", "a", 100, name="invoke_agent bot", agent_name="bot")
    store.add_spans([_span("t1", "c", 99, parent_id="a"), root])
    first = {t["trace_id"]: t for t in store.list_traces()}
    assert first["t1"] == {
        "trace_id": "t1", "start_ns": int(99e9), "end_ns": int(102e9), "spans": 3, "errors": 1,
        "root": "invoke_agent bot", "agent_name": "bot",
    }  # fmt: skip
    # A batch that repeats stored spans counts each span once.
    assert store.add_spans([_span("t1", "a", 100, name="invoke_agent bot"), _span("t1", "d", 150, parent_id="a")]) == 1
    assert {t["trace_id"]: t["spans"] for t in store.list_traces()} == {"t1": 4, "t2": 1}
    assert store.delete_spans(before=100) == 1  # span c: t1 now starts at its root
    assert store.list_traces(limit=1)[0]["trace_id"] == "t2"
    assert {t["trace_id"]: (t["start_ns"], t["spans"]) for t in store.list_traces()}["t1"] == (int(100e9), 3)
    assert store.delete_spans(before=1000) == 4 and store.list_traces() == []


def test_agent_and_run_filters_search_their_partial_indexes(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "partial.db")
    rows = [
        _span(f"t{i}", "s", i, agent_name="bot" if i % 2 else None, run_id="r" if i % 3 == 0 else None)
        for i in range(30)
    ]
    store.add_spans(rows)
    conn = sqlite3.connect(tmp_path / "partial.db")
    indexes = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE name IN ('spans_agent', 'spans_run')"))
    assert (
        "WHERE agent_name IS NOT NULL" in indexes["spans_agent"] and "WHERE run_id IS NOT NULL" in indexes["spans_run"]
    )
    for filters, index in (({"agent_name": "bot"}, "spans_agent"), ({"run_id": "r"}, "spans_run")):
        sql, params = store._span_query(["span_id"], **filters)  # pyright: ignore[reportPrivateUsage]
        plan = " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
        assert f"SEARCH spans USING INDEX {index}" in plan, plan
    tokens = "SELECT (SELECT SUM(s.input_tokens) FROM spans s WHERE s.run_id = r.run_id) FROM runs r"  # as runs() asks
    assert "USING INDEX spans_run" in " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {tokens}"))
    conn.close()
    assert len(store.list_spans(agent_name="bot")) == 15 and len(store.list_spans(run_id="r")) == 10
    store.close()


def test_span_ids_keep_growing_after_the_newest_spans_are_deleted(store: Store) -> None:
    # Pollers read spans with after_id: an id given out once must never come back, even when the span that
    # held the highest one is deleted (here it started earliest, so a time cutoff takes it).
    store.add_spans([_span("t1", "a", 100), _span("t1", "b", 50)])
    seen = store.watermark()["spans"]
    assert store.delete_spans(before=60) == 1  # b, the newest row
    store.add_spans([_span("t2", "c", 200)])
    assert [(s["span_id"], s["id"] > seen) for s in store.list_spans(after_id=seen)] == [("c", True)]
    seen = store.watermark()["spans"]
    assert store.delete_spans() == 2
    assert store.add_spans([_span("t3", "d", 300)]) == 1
    assert store.add_spans([_span("t3", "d", 300)]) == 0  # a repeat neither counts nor moves the floor away
    store.add_spans([_span("t3", "e", 301)])
    assert [s["span_id"] for s in store.list_spans(after_id=seen)] == ["d", "e"]
    assert [(t["trace_id"], t["spans"]) for t in store.list_traces()] == [("t3", 2)]


def test_one_batch_of_many_traces_finds_every_trace(store: Store) -> None:
    rows = [_span(f"t{i:03}", s, i) for i in range(150) for s in ("a", "b")]
    assert store.add_spans(rows) == 300
    assert store.add_spans(rows[::7]) == 0
    assert len(store.list_traces()) == 150 and {t["spans"] for t in store.list_traces()} == {2}
    assert [s["span_id"] for s in store.list_spans(trace_id=["t000", "t149"])] == ["a", "b", "a", "b"]
    assert store.add_spans([{"trace_id": 7, "span_id": 8, "name": "n", "start_ns": 1}]) == 1  # ids kept as text
    assert [(s["trace_id"], s["span_id"]) for s in store.list_spans(trace_id="7")] == [("7", "8")]


def test_none_binds_as_null_through_the_fast_adapter(tmp_path: Path) -> None:
    assert sqlite3.adapters[(type(None), sqlite3.PrepareProtocol)](None) is None
    store = RunStore(tmp_path / "nulls.db")
    store.add_spans([_span("t", "a", 1)])
    store.close()
    conn = sqlite3.connect(tmp_path / "nulls.db")
    kinds = conn.execute("SELECT typeof(parent_id), typeof(status_message), typeof(input_tokens) FROM spans").fetchone()
    conn.close()
    assert kinds == ("null", "null", "null")


def _version_5_store(path: Path) -> None:
    """A run store as agentnb wrote it at schema version 5 (AUTOINCREMENT span ids, text trace key)."""
    from agentnb.store._schema import MIGRATIONS, VERSION_TABLE  # pyright: ignore[reportPrivateUsage]

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(VERSION_TABLE)
    conn.execute("INSERT INTO schema_version (version) VALUES (5)")
    for version in range(1, 6):
        for statement in MIGRATIONS[version].statements("sqlite"):
            conn.execute(statement)
    columns = ("trace_id", "span_id", "parent_id", "name", "start_ns", "end_ns", "status_code", "agent_name")
    insert = f"INSERT INTO spans ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    rows = [
        ("t1", "a", None, "invoke_agent bot", 100, 104, "UNSET", "bot"),
        ("t1", "b", "a", "chat m", 101, 102, "ERROR", "bot"),
        ("t2", "c", None, "workflow.run", 200, 201, "UNSET", None),
        ("t3", "d", None, "gone", 300, 301, "UNSET", None),  # deleted below: its id 4 must not come back
    ]
    conn.executemany(insert, rows)
    conn.execute("DELETE FROM spans WHERE span_id = 'd'")
    conn.execute(
        "INSERT INTO traces (trace_id, start_ns, end_ns, spans, errors, root, agent_name) "
        "VALUES ('t1', 100, 104, 2, 1, 'invoke_agent bot', 'bot')"
    )  # t2's summary row is missing: the upgrade makes it from its spans
    conn.close()


def test_a_version_5_store_is_upgraded_with_its_spans_and_ids(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    _version_5_store(path)
    store = RunStore(path)
    assert store.schema_version == SCHEMA_VERSION
    spans = store.list_spans()
    assert [(s["id"], s["trace_id"], s["span_id"]) for s in spans] == [(1, "t1", "a"), (2, "t1", "b"), (3, "t2", "c")]
    assert {t["trace_id"]: (t["spans"], t["errors"], t["root"]) for t in store.list_traces()} == {
        "t1": (2, 1, "invoke_agent bot"),
        "t2": (1, 0, "workflow.run"),
    }
    assert [s["span_id"] for s in store.list_spans(trace_id="t1")] == ["a", "b"]
    assert [s["span_id"] for s in store.list_spans(last_traces=1)] == ["c"]
    assert store.add_spans([_span("t1", "b", 101)]) == 0  # stored before the upgrade: still a repeat
    assert store.add_spans([_span("t2", "e", 202)]) == 1
    assert [(s["id"], s["span_id"]) for s in store.list_spans(after_id=3)] == [(5, "e")]  # not 4: d had it
    assert {t["trace_id"]: t["spans"] for t in store.list_traces()} == {"t1": 2, "t2": 2}
    store.close()


def test_last_traces_reads_an_index_not_every_span(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "plan.db")
    store.add_spans([_span(f"t{i}", "s", i) for i in range(50)])
    sql, params = store._span_query(["trace_id"], last_traces=10)  # pyright: ignore[reportPrivateUsage]
    conn = sqlite3.connect(tmp_path / "plan.db")
    plan = " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    traces_plan = " | ".join(
        row[3] for row in conn.execute("EXPLAIN QUERY PLAN SELECT trace_id FROM traces ORDER BY start_ns DESC LIMIT 10")
    )
    conn.close()
    index_scan = re.compile(r"SCAN traces USING (COVERING )?INDEX traces_start")
    assert "SCAN spans" not in plan and "SCAN traces" not in index_scan.sub("", plan), plan
    assert "traces_start" in plan and "SEARCH spans USING INDEX" in plan, plan
    assert "traces_start" in traces_plan and "TEMP B-TREE" not in traces_plan, traces_plan
    assert [r[0] for r in store.select_spans(["trace_id"], last_traces=3)] == ["t47", "t48", "t49"]
    store.close()


def test_runs_frame_newest_first_with_durations_and_tokens(store: Store) -> None:
    import agentnb

    t0 = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
    store.start_run("old", kind="workflow", name="flow", started_at=t0)
    store.finish_run("old", status="failed", ended_at=t0 + dt.timedelta(milliseconds=1500), error="boom")
    cell = {"execution_count": 12, "source": "r = await helper.run('hi')", "notebook": None, "kernel": "k"}
    store.start_run(
        "new", kind="agent", name="helper", started_at=t0 + dt.timedelta(minutes=1), metadata={"cell": cell}
    )
    store.add_spans(
        [
            {**_span("t", "a", 1), "run_id": "new", "operation": "chat", "input_tokens": 10, "output_tokens": 3},
            {**_span("t", "b", 2), "run_id": "new", "operation": "chat", "input_tokens": 5, "output_tokens": 2},
            {**_span("t", "c", 0), "run_id": "new", "operation": "invoke_agent", "input_tokens": 15},
        ]
    )
    frame = agentnb.runs(store=store)
    assert list(frame.columns) == [
        "run_id", "kind", "name", "status", "started_at", "ended_at", "duration_ms", "input_tokens", "output_tokens",
        "error", "cell",
    ]  # fmt: skip
    assert list(frame["run_id"]) == ["new", "old"]
    assert list(frame["cell"]) == ["[12] r = await helper.run('hi')", None]  # the notebook cell that started it
    new, old = frame.iloc[0], frame.iloc[1]
    assert (new["input_tokens"], new["output_tokens"]) == (15, 5)
    assert new["status"] == "running" and frame["duration_ms"].isna().iloc[0]
    assert old["duration_ms"] == 1500.0 and old["error"] == "boom" and old["input_tokens"] is pd_na()
    assert str(frame["started_at"].dt.tz) == "UTC"
    assert list(agentnb.runs(store=store, status="failed")["run_id"]) == ["old"]
    assert list(agentnb.runs(store=store, kind="agent", name="helper")["run_id"]) == ["new"]
    assert len(agentnb.runs(1, store=store)) == 1
    assert store.summarize_runs(after_rev=store.get_run("new")["rev"]) == []


def pd_na() -> object:
    import pandas as pd

    return pd.NA


async def test_async_twins_write_and_read_what_the_blocking_methods_do(store: Store) -> None:
    await store.astart_run("r", kind="workflow", name="flow", metadata={"who": "async"})
    assert await store.aadd_events("r", [{"type": "a"}, {"type": "b", "data": {"x": 1}}]) == [0, 1]
    assert store.add_events("r", [{"type": "c"}]) == [2]
    with pytest.raises(StoreError, match="already has an event"):
        await store.aadd_events("r", [{"type": "d", "seq": 1}])
    assert [e["type"] for e in store.list_events("r")] == ["a", "b", "c"]  # the failed batch left nothing
    await store.aput_checkpoint("c1", run_id="r", workflow_name="flow", parent_id=None, step=1, data='{"n": 1}')
    await store.aput_checkpoint("c1", run_id="r", workflow_name="flow", parent_id=None, step=2, data='{"n": 2}')
    assert await store.aget_checkpoint("c1") == '{"n": 2}' == store.get_checkpoint("c1")
    assert await store.aget_checkpoint("missing") is None
    assert [c["step"] for c in await store.alist_checkpoints(run_id="r")] == [2]
    assert await store.alist_checkpoints(workflow_name="other") == []
    with pytest.raises(TypeError, match="JSON text"):
        await store.aput_checkpoint("c2", run_id="r", workflow_name="flow", parent_id=None, step=1, data={})  # type: ignore[arg-type]
    assert await store.adelete_checkpoint("c1") is True
    assert await store.adelete_checkpoint("c1") is False
    await store.afinish_run("r", status="completed")
    with pytest.raises(StoreError, match="No run 'nope'"):
        await store.afinish_run("nope", status="completed")
    run = store.get_run("r")
    assert run is not None and run["status"] == "completed" and run["metadata"] == {"who": "async"}
    await store.aclose()
    assert store.closed
    with pytest.raises(StoreError, match="closed"):
        await store.aget_checkpoint("c1")


def test_rows_have_the_keys_their_types_declare(store: Store) -> None:
    store.start_run("r1", kind="workflow", name="w", metadata={"a": 1})
    store.add_events("r1", [{"type": "started", "data": {"x": 1}}])
    store.finish_run("r1", status="completed")
    store.add_spans([_span("t1", "a", 100, run_id="r1")])
    store.put_checkpoint("c1", run_id="r1", workflow_name="w", parent_id=None, step=0, data="{}")
    store.save_session("s1", "{}")
    run = store.get_run("r1")
    assert run is not None
    expected: list[tuple[object, type]] = [
        (run, RunRow),
        (store.list_runs()[0], RunRow),
        (store.summarize_runs()[0], RunSummaryRow),
        (store.list_events("r1")[0], EventRow),
        (store.list_spans()[0], SpanRow),
        (store.list_traces()[0], TraceRow),
        (store.list_checkpoints()[0], CheckpointRow),
        (store.list_sessions()[0], SessionRow),
        (store.watermark(), Watermark),
    ]
    for row, declared in expected:
        assert isinstance(row, dict)
        assert list(row) == list(declared.__annotations__), declared.__name__
    assert run["metadata"] == {"a": 1} and run["status"] == "completed"


def test_runs_lets_the_layer_that_batches_spans_write_them_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentnb
    import agentnb.observability  # registers the span writer's flush when it loads
    from agentnb.store import _frame, flush_before_reads

    registered = list(_frame._flushes)  # pyright: ignore[reportPrivateUsage]
    assert any(getattr(f, "__module__", "").startswith("agentnb.observability") for f in registered)
    monkeypatch.setattr(_frame, "_flushes", list(registered))
    store = RunStore(":memory:")
    store.start_run("r", kind="agent", name="a")
    batched = [{**_span("t", "a", 1), "run_id": "r", "operation": "chat", "input_tokens": 7, "output_tokens": 1}]

    def write_batched() -> None:  # what a batching span writer holds until it flushes
        if batched:
            store.add_spans([batched.pop()])

    flush_before_reads(write_batched)
    flush_before_reads(write_batched)  # twice is harmless
    assert _frame._flushes.count(write_batched) == 1  # pyright: ignore[reportPrivateUsage]
    assert int(agentnb.runs(store=store).iloc[0]["input_tokens"]) == 7
