"""Store.read_runs: many runs with their events and spans, a query per kind, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentnb.store import RunStore, Store, open_store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param == "sqlite":
        s: Store = RunStore(":memory:")
    else:
        s = open_store(request.getfixturevalue("pg_url"))
    yield s
    s.close()


def _span(trace: str, span: str, start: int, run_id: str | None, **extra: Any) -> dict[str, Any]:
    return {
        "trace_id": trace,
        "span_id": span,
        "name": extra.pop("name", "chat m"),
        "start_ns": start,
        "end_ns": start + 10,
        "run_id": run_id,
        **extra,
    }


def _count_queries(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    read = store._read  # pyright: ignore[reportPrivateUsage]

    def counting(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        seen.append(sql)
        return read(sql, params)

    monkeypatch.setattr(store, "_read", counting)
    return seen


def test_runs_events_and_spans_come_grouped_per_run_in_order(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.add_runs(
        [
            {
                "run_id": "a",
                "kind": "agent",
                "name": "geo",
                "status": "completed",
                "metadata": {"tags": ["x"]},
                "events": [{"type": "input", "data": {"input": "A?"}}, {"type": "output", "data": {"output": "A"}}],
            },
            {
                "run_id": "b",
                "kind": "workflow",
                "name": "flow",
                "status": "failed",
                "error": "boom",
                "events": [{"type": "input", "data": "B?"}],
            },
        ]
    )
    # Events given out of seq order come back in seq order; spans of another run or of none stay out.
    late = [{"type": "message", "seq": 7, "data": '"late"'}, {"type": "message", "seq": 5, "data": "1"}]
    store.add_events("a", late)
    store.add_spans(
        [
            _span(
                "t1",
                "s2",
                200,
                "a",
                name="execute_tool f",
                operation="execute_tool",
                tool_name="f",
                attributes={"gen_ai.tool.call.arguments": '{"q": 1}'},
            ),
            _span("t1", "s1", 100, "a", operation="chat", model="m", input_tokens=3, output_tokens=4),
            _span("t2", "s3", 150, "b", operation="chat"),
            _span("t3", "s4", 50, None),
        ]
    )
    queries = _count_queries(store, monkeypatch)
    read = store.read_runs(["b", "missing", "a"], parts=("run", "events", "spans"))

    assert list(read) == ["b", "missing", "a"]
    assert len(queries) == 3  # one per kind, not one per run
    a, b, missing = read["a"], read["b"], read["missing"]
    assert a["run"] is not None and b["run"] is not None
    assert (a["run"]["name"], a["run"]["metadata"], b["run"]["status"], b["run"]["error"]) == (
        "geo",
        {"tags": ["x"]},
        "failed",
        "boom",
    )
    assert a["run"] == store.get_run("a")
    assert [e["seq"] for e in a["events"]] == [0, 1, 5, 7]
    assert a["events"] == store.list_events("a")
    assert [e["type"] for e in b["events"]] == ["input"]
    assert [s["span_id"] for s in a["spans"]] == ["s1", "s2"]  # start order, not stored order
    assert a["spans"] == store.list_spans(run_id="a")
    assert a["spans"][1]["attributes"] == {"gen_ai.tool.call.arguments": '{"q": 1}'}
    assert [s["span_id"] for s in b["spans"]] == ["s3"]
    assert missing == {"run": None, "events": [], "spans": []}


def test_parts_and_event_types_limit_what_is_read(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.add_runs(
        [
            {
                "run_id": "a",
                "kind": "agent",
                "name": "geo",
                "status": "completed",
                "events": [
                    {"type": "input", "data": "q"},
                    {"type": "step", "data": 1},
                    {"type": "output", "data": "x"},
                ],
            }
        ]
    )
    store.add_spans([_span("t", "s", 1, "a")])
    queries = _count_queries(store, monkeypatch)
    only_events = store.read_runs(["a"], parts=("events",), event_types=["output", "input"])
    assert len(queries) == 1
    assert only_events["a"]["run"] is None and only_events["a"]["spans"] == []
    assert [e["type"] for e in only_events["a"]["events"]] == ["input", "output"]
    assert store.read_runs(["a"], parts="spans")["a"]["spans"][0]["span_id"] == "s"
    assert store.read_runs([]) == {}
    with pytest.raises(ValueError, match=r"Unknown run parts \['logs'\]"):
        store.read_runs(["a"], parts=("events", "logs"))  # type: ignore[list-item]


def test_many_runs_are_read_in_chunks_without_mixing_them_up(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 1203  # three chunks, the last one short (padded with its last id)
    store.add_runs(
        {
            "run_id": f"r{i}",
            "kind": "agent",
            "name": "geo",
            "status": "completed",
            "events": [{"type": "input", "data": f"q{i}"}] * (1 + i % 3),
        }
        for i in range(n)
    )
    store.add_spans([_span(f"t{i}", "s", i, f"r{i}") for i in range(0, n, 100)])
    ids = [f"r{i}" for i in reversed(range(n))]
    queries = _count_queries(store, monkeypatch)
    read = store.read_runs([*ids, "r5"], parts=("run", "events", "spans"))
    assert len(queries) == 3 * 3
    assert list(read) == ids  # a repeated id is one entry
    for i in range(n):
        records = read[f"r{i}"]
        assert records["run"] is not None and records["run"]["run_id"] == f"r{i}"
        assert [e["data"] for e in records["events"]] == [f'"q{i}"'] * (1 + i % 3)
        assert [s["trace_id"] for s in records["spans"]] == ([f"t{i}"] if i % 100 == 0 else [])


def test_a_dataset_from_runs_reads_their_events_in_bulk_on_each_backend(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentnb.evals import dataset_from_runs

    store.add_runs(
        {"run_id": f"r{i}", "kind": "agent", "name": "geo" if i % 4 else "other", "status": "completed",
         "started_at": 1_700_000_000 + i,
         "events": [{"type": "input", "data": {"input": f"q{i}"}}, {"type": "step", "data": None},
                    {"type": "output", "data": {"output": f"a{i}", "status": "ok"}}]}
        for i in range(600)
    )  # fmt: skip
    queries = _count_queries(store, monkeypatch)
    data = dataset_from_runs(agent="geo", store=store)
    assert len(queries) == 1 + 1  # the runs, then their events (450 runs: one chunk)
    assert len(data) == 450 and data.rows[0] == {
        "case_id": "r599", "input": "q599", "expected": "a599", "source_run": "r599", "agent": "geo",
        "started_at": data.rows[0]["started_at"],
    }  # fmt: skip
    assert [r["case_id"] for r in dataset_from_runs(agent="geo", limit=3, store=store)] == ["r599", "r598", "r597"]
