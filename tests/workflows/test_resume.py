"""Resume in a new process: after a kill, after a pause for input, and with two processes sharing SQLite."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agentnb.store import RunStore, open_store
from agentnb.workflows import (
    CheckpointHistory,
    FileCheckpointStorage,
    RunStoreCheckpointStorage,
    SQLiteCheckpointStorage,
)

SCRIPT = str(Path(__file__).with_name("wf_procs.py"))
ROOT = str(Path(__file__).resolve().parents[2])


def _run(*args: str, delay: float = 0.0) -> dict:
    env = {**os.environ, "WF_DELAY": str(delay)}
    out = subprocess.run(
        [sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spawn(*args: str, delay: float) -> subprocess.Popen[str]:
    env = {**os.environ, "WF_DELAY": str(delay)}
    return subprocess.Popen(
        [sys.executable, SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )


def _count_files(path: Path) -> int:
    return len([p for p in path.glob("*.json") if not p.name.startswith(".")])


def test_killed_run_resumes_in_new_process_with_identical_outputs(tmp_path: Path) -> None:
    baseline = _run("run", "file", str(tmp_path / "baseline"))
    assert baseline["outputs"], baseline
    killed_dir = tmp_path / "killed"
    proc = _spawn("run", "file", str(killed_dir), delay=0.15)
    try:
        deadline = time.monotonic() + 30
        while _count_files(killed_dir) < 5 if killed_dir.exists() else True:
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    resumed = _run("resume", "file", str(killed_dir))
    assert 4 <= resumed["resumed_from_step"] < baseline["steps"]
    assert resumed["outputs"] == baseline["outputs"]
    # The killed run's checkpoints are still there, and the resumed run continued their chain.
    history = CheckpointHistory(FileCheckpointStorage(killed_dir))
    timeline = asyncio.run(history.timeline(run_id=resumed["run_id"]))
    assert [c.step for c in timeline] == list(range(baseline["steps"] + 1))
    assert len({c.run_id for c in timeline}) == 2


def test_request_info_answered_after_restart(tmp_path: Path) -> None:
    where = str(tmp_path / "cp")
    asked = _run("ask", "file", where)
    assert asked["state"] == "idle_with_pending_requests"
    answered = _run("answer", "file", where, asked["checkpoint_id"], asked["request_id"], "yes")
    assert answered["outputs"] == ["approve deploy? -> yes"]
    assert answered["state"] == "idle"
    # The same paused checkpoint can be answered differently again: history is never consumed.
    again = _run("answer", "file", where, asked["checkpoint_id"], asked["request_id"], "no")
    assert again["outputs"] == ["approve deploy? -> no"]


def test_request_info_across_restart_with_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    asked = _run("ask", "sqlite", db)
    answered = _run("answer", "sqlite", db, asked["checkpoint_id"], asked["request_id"], "yes")
    assert answered["outputs"] == ["approve deploy? -> yes"]


def test_two_processes_share_the_sqlite_store(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    RunStore(db).close()  # create the schema once so both writers start on an existing database
    procs = [_spawn("run", "sqlite", db, f"proc{i}", delay=0.01) for i in range(2)]
    reads = 0
    try:
        store = RunStore(db)
        # Read while both processes write.
        while any(p.poll() is None for p in procs):
            rows = store.list_checkpoints()
            for row in rows[-3:]:
                assert store.get_checkpoint(row["checkpoint_id"]) is not None
            reads += 1
            time.sleep(0.01)
        outs = [p.communicate(timeout=30) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    assert all(p.returncode == 0 for p in procs), outs
    results = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert results[0]["outputs"] == results[1]["outputs"] != []
    assert reads > 0
    storage = SQLiteCheckpointStorage(RunStore(db))
    history = CheckpointHistory(storage)
    for i, result in enumerate(results):
        timeline = asyncio.run(history.timeline(run_id=result["run_id"]))
        assert [c.step for c in timeline] == list(range(result["steps"] + 1))
        assert {c.workflow_name for c in timeline} == {f"proc{i}"}


def test_a_run_killed_on_one_machine_resumes_on_another_through_postgres(pg_url: str, tmp_path: Path) -> None:
    # Processes stand in for machines: they share nothing but the PostgreSQL URL.
    baseline = _run("run", "file", str(tmp_path / "baseline"))
    store = open_store(pg_url)
    proc = _spawn("run", "store", pg_url, delay=0.15)
    try:
        deadline = time.monotonic() + 30
        while len(store.list_checkpoints(workflow_name="loop")) < 5:
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    resumed = _run("resume", "store", pg_url)
    assert 4 <= resumed["resumed_from_step"] < baseline["steps"]
    assert resumed["outputs"] == baseline["outputs"]
    timeline = asyncio.run(CheckpointHistory(RunStoreCheckpointStorage(store)).timeline(run_id=resumed["run_id"]))
    assert [c.step for c in timeline] == list(range(baseline["steps"] + 1))
    assert len({c.run_id for c in timeline}) == 2
    store.close()
