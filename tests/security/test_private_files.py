"""Files are private: the run store (and its WAL files), histories, checkpoints, cassettes and sessions.

Each is created 0600 in 0700 directories agentnb makes, even under a permissive umask.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb import Agent, FileHistoryProvider, FileSessionStore
from agentnb.local import RecordingChatClient, ScriptedChatClient
from agentnb.store import RunStore
from agentnb.workflows import FileCheckpointStorage, WorkflowCheckpoint


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_run_store_and_its_wal_files_are_private(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "home" / "agentnb.db")
    store.start_run("r1", kind="agent", name="a")
    files = sorted(p.name for p in (tmp_path / "home").iterdir())
    assert files == ["agentnb.db", "agentnb.db-shm", "agentnb.db-wal"]
    assert {p.name: mode(p) for p in (tmp_path / "home").iterdir()} == dict.fromkeys(files, 0o600)
    assert mode(tmp_path / "home") == 0o700
    store.close()


async def test_history_jsonl_is_private(tmp_path: Path) -> None:
    history = FileHistoryProvider(tmp_path / "a" / "history")
    agent = Agent(ScriptedChatClient(["Hi"]), context_providers=[history])
    session = agent.create_session()
    await agent.run("Hello", session=session)
    path = history.path_for(session.session_id)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700 and mode(path.parent.parent) == 0o700


async def test_checkpoints_are_private(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path / "cps")
    await storage.save(WorkflowCheckpoint(checkpoint_id="c1", workflow_name="w", graph_signature="s", run_id="r"))
    assert mode(storage.path_of("c1")) == 0o600 and mode(tmp_path / "cps") == 0o700


async def test_cassettes_are_private(tmp_path: Path) -> None:
    path = tmp_path / "cassettes" / "c.jsonl"
    await Agent(RecordingChatClient(ScriptedChatClient(["Hi"]), path)).run("Hello")
    assert mode(path) == 0o600 and mode(path.parent) == 0o700


async def test_session_snapshots_are_private(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    agent = Agent(ScriptedChatClient(["Hi"]))
    session = agent.create_session()
    await agent.run("Hello", session=session)
    path = store.save(session)
    assert mode(path) == 0o600 and mode(path.parent) == 0o700


def test_existing_directories_are_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    RunStore(shared / "runs.db").close()
    assert mode(shared) == 0o755 and mode(shared / "runs.db") == 0o600
