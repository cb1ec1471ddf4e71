"""Two processes share one run store (a SQLite file, or a PostgreSQL server): one writes while the other reads
and writes, and nothing either committed is lost."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentnb.store import open_store

_REPO = Path(__file__).resolve().parents[2]

_WRITER = textwrap.dedent(
    """
    import sys
    from agentnb.store import open_store

    store = open_store(sys.argv[1], timeout=30)
    store.start_run("child", kind="workflow", name="flow", started_at=None)
    for i in range(200):
        store.add_events("child", [{"type": "step", "data": {"i": i}}])
        store.add_spans([{"trace_id": "child-trace", "span_id": f"s{i}", "name": "executor", "start_ns": i}])
        store.put_checkpoint(f"child-cp{i}", run_id="child", workflow_name="flow", parent_id=None, step=i, data="{}")
        if i % 50 == 0:
            store.save_session(f"child-{i}", "{}")
    store.finish_run("child", status="completed", ended_at=None)
    store.close()
    print("done")
    """
)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_processes_write_and_read_at_once(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    path = str(tmp_path / "shared.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    store = open_store(path, timeout=30)
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=_REPO,
    )
    try:
        store.start_run("parent", kind="agent", name="bot", started_at=None)
        for i in range(200):
            store.add_events("parent", [{"type": "tick", "data": i}])
            store.add_spans([{"trace_id": "parent-trace", "span_id": f"s{i}", "name": "step", "start_ns": i}])
            store.put_checkpoint(
                f"parent-cp{i}", run_id="parent", workflow_name="flow", parent_id=None, step=i, data="{}"
            )
            assert len(store.list_events("child")) <= 200
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert out.strip() == "done"
    assert [e["seq"] for e in store.list_events("child")] == list(range(200))
    assert [e["seq"] for e in store.list_events("parent")] == list(range(200))
    assert len(store.list_spans(trace_id="child-trace")) == 200
    assert len(store.list_spans(trace_id="parent-trace")) == 200
    assert len(store.list_checkpoints(run_id="child")) == len(store.list_checkpoints(run_id="parent")) == 200
    assert len({row["id"] for row in store.list_spans()}) == 400
    assert len(store.list_sessions()) == 4
    child_run = store.get_run("child")
    assert child_run is not None and child_run["status"] == "completed"
    store.close()

    # A fresh process sees everything the two wrote.
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from agentnb.store import open_store; s = open_store(sys.argv[1]); "
            "print(len(s.list_events('parent')), len(s.list_events('child')), len(s.list_runs()))",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=_REPO,
    )
    assert check.stdout.split() == ["200", "200", "2"]
