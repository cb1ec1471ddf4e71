"""Experiments, their cases and bulk-written runs in the run store, on each backend (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb.exceptions import StoreError
from agentnb.store import SCHEMA_VERSION, ExperimentCaseRow, ExperimentRow, RunStore, Store, open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param == "sqlite":
        s: Store = RunStore(":memory:")
    else:
        s = open_store(request.getfixturevalue("pg_url"))
    yield s
    s.close()


def test_experiment_upsert_keeps_creation_time_and_replaces_metadata(store: Store) -> None:
    store.put_experiment("exp", status="running", target="agent:a", metadata={"scorers": ["x"]})
    first = store.get_experiment("exp")
    assert first is not None
    assert (first["status"], first["target"], first["metadata"], first["cases"]) == (
        "running",
        "agent:a",
        {"scorers": ["x"]},
        0,
    )
    store.put_experiment("exp", status="completed")
    second = store.get_experiment("exp")
    assert second is not None
    assert second["created_at"] == first["created_at"]
    assert second["updated_at"] >= first["updated_at"]
    assert (second["status"], second["target"], second["metadata"]) == ("completed", "agent:a", {"scorers": ["x"]})
    assert second["rev"] > first["rev"]
    store.put_experiment("exp", status="completed", metadata={"means": {"x": 0.5}})
    assert store.get_experiment("exp")["metadata"] == {"means": {"x": 0.5}}  # type: ignore[index]
    assert store.get_experiment("missing") is None
    with pytest.raises(ValueError, match="non-empty name"):
        store.put_experiment("", status="running")


def test_cases_upsert_in_dataset_order_and_count(store: Store) -> None:
    store.put_experiment("exp", status="running")
    written = store.add_experiment_cases(
        "exp",
        [
            {"case_id": "b", "position": 1, "status": "ok", "scores": {"s": 1.0}, "data": {"input": "B"}},
            {"case_id": "a", "position": 0, "status": "error", "run_id": "r1", "data": {"input": "A"}},
            {"case_id": "a", "position": 0, "repetition": 1, "status": "ok", "trace_id": "t" * 32},
        ],
    )
    assert written == 3
    rows = store.list_experiment_cases("exp")
    assert [(r["case_id"], r["repetition"]) for r in rows] == [("a", 0), ("a", 1), ("b", 0)]
    assert rows[0]["run_id"] == "r1" and rows[1]["trace_id"] == "t" * 32
    assert rows[2]["scores"] == {"s": 1.0} and rows[2]["data"] == {"input": "B"}
    # The same case and repetition again replaces the row.
    store.add_experiment_cases("exp", [{"case_id": "a", "position": 0, "status": "ok", "scores": {"s": 0.5}}])
    rows = store.list_experiment_cases("exp")
    assert len(rows) == 3 and rows[0]["status"] == "ok" and rows[0]["scores"] == {"s": 0.5}
    assert store.list_experiment_cases("exp", decode=False)[0]["scores"] == '{"s": 0.5}'
    assert store.get_experiment("exp")["cases"] == 3  # type: ignore[index]
    assert store.add_experiment_cases("exp", []) == 0


def test_cases_need_their_experiment(store: Store) -> None:
    with pytest.raises(StoreError, match="put_experiment"):
        store.add_experiment_cases("nope", [{"case_id": "a", "position": 0, "status": "ok"}])
    assert store.list_experiment_cases("nope") == []


def test_list_and_delete_experiments(store: Store) -> None:
    for name in ("one", "two", "three"):
        store.put_experiment(name, status="completed")
    store.add_experiment_cases("two", [{"case_id": "x", "position": 0, "status": "ok"}])
    listed = store.list_experiments()
    assert [e["name"] for e in listed] == ["three", "two", "one"]
    assert [e["name"] for e in store.list_experiments(limit=1)] == ["three"]
    rev = listed[1]["rev"]
    assert [e["name"] for e in store.list_experiments(after_rev=rev)] == ["three"]
    assert store.delete_experiment("two") is True
    assert store.delete_experiment("two") is False
    assert store.list_experiment_cases("two") == []
    assert [e["name"] for e in store.list_experiments()] == ["three", "one"]


def test_add_runs_writes_runs_and_events_in_one_go(store: Store) -> None:
    runs = [
        {
            "run_id": f"r{i}",
            "kind": "agent",
            "name": "helper",
            "status": "completed" if i else "failed",
            "started_at": 1_700_000_000 + i,
            "ended_at": 1_700_000_001 + i,
            "error": None if i else "boom",
            "metadata": {"case_id": str(i)},
            "events": [{"type": "input", "data": {"input": i}}, {"type": "output", "data": {"output": i}}],
        }
        for i in range(3)
    ]
    assert store.add_runs(runs) == 3
    assert store.add_runs([]) == 0
    listed = store.list_runs(order="oldest")
    assert [r["run_id"] for r in listed] == ["r0", "r1", "r2"]
    assert listed[0]["status"] == "failed" and listed[0]["error"] == "boom"
    assert listed[1]["metadata"] == {"case_id": "1"}
    assert len({r["rev"] for r in listed}) == 3
    events = store.list_events("r2")
    assert [(e["seq"], e["type"]) for e in events] == [(0, "input"), (1, "output")]
    # Writing a run again replaces it and its events.
    store.add_runs([{**runs[0], "status": "completed", "error": None, "events": [{"type": "input"}]}])
    assert store.get_run("r0")["status"] == "completed"  # type: ignore[index]
    assert len(store.list_events("r0")) == 1
    poll = store.list_runs(after_rev=listed[-1]["rev"])
    assert [r["run_id"] for r in poll] == ["r0"]


def test_older_database_gains_experiment_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with RunStore(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE experiment_cases")
    conn.execute("DROP TABLE experiments")
    conn.execute("UPDATE schema_version SET version = ?", (2,))  # before experiments (version 3)
    conn.commit()
    conn.close()
    with RunStore(path) as reopened:
        assert reopened.schema_version == SCHEMA_VERSION
        reopened.put_experiment("after-upgrade", status="running")
        assert reopened.get_experiment("after-upgrade") is not None


def test_experiment_rows_have_the_keys_their_types_declare(store: Store) -> None:
    store.put_experiment("exp", status="running")
    store.add_experiment_cases("exp", [{"case_id": "c", "position": 0, "status": "passed", "scores": {"s": 1.0}}])
    experiment = store.get_experiment("exp")
    assert experiment is not None and list(experiment) == list(ExperimentRow.__annotations__)
    (case,) = store.list_experiment_cases("exp")
    assert list(case) == list(ExperimentCaseRow.__annotations__) and case["scores"] == {"s": 1.0}
