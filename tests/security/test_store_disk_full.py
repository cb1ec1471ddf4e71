"""A run-store write that fails for lack of space (or an I/O error) is a StoreError naming the real cause.

Both faults are real SQLite failures: a page limit makes SQLite report SQLITE_FULL exactly as a full disk
does, and a file-size limit (in a child process) makes the OS refuse the write, which SQLite reports as an
I/O error. What was committed before stays readable, and writes work again once space is back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentnb.exceptions import StoreError
from agentnb.store import RunStore

REPO = Path(__file__).resolve().parents[2]
BIG = [{"type": "big", "data": {"v": "x" * 300_000}}]


def test_disk_full_names_the_cause_and_keeps_what_was_committed(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    store.start_run("r1", kind="agent", name="a")
    store.add_events("r1", [{"type": "started", "data": {"input": "hi"}}])
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is now full
    with pytest.raises(StoreError, match="disk is full") as info:
        store.add_events("r1", BIG)
    assert "cannot rollback" not in str(info.value)
    assert [e["type"] for e in store.list_events("r1")] == ["started"]
    store._conn.execute("PRAGMA max_page_count = 1073741823")  # space is back
    store.add_events("r1", BIG)
    assert [e["type"] for e in store.list_events("r1")] == ["started", "big"]
    store.close()


CHILD = """
import json, os, resource, signal, sys
from agentnb.store import RunStore
from agentnb.exceptions import StoreError
path = sys.argv[1]
store = RunStore(path)
store.start_run("r1", kind="agent", name="a")
store.add_events("r1", [{"type": "started", "data": {}}])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
size = max(os.path.getsize(path + suffix) for suffix in ("", "-wal") if os.path.exists(path + suffix))
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 4096, resource.RLIM_INFINITY))
big = [{"type": "big", "data": {"v": "x" * 300000}}]
try:
    store.add_events("r1", big)
    error = None
except StoreError as e:
    error = str(e)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
before = [e["type"] for e in store.list_events("r1")]
store.add_events("r1", big)
print(json.dumps({"error": error, "before": before, "after": [e["type"] for e in store.list_events("r1")]}))
"""


def test_an_io_error_names_the_cause(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "runs.db")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["error"] is not None and "I/O error" in result["error"]
    assert result["before"] == ["started"]
    assert result["after"] == ["started", "big"]
