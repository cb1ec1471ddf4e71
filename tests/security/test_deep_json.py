"""Deeply nested or huge JSON gives each loader's typed error, never a raw RecursionError or ValueError.

One bad checkpoint file never stops ``list_checkpoints`` from listing the others, and a session snapshot
that cannot be read can be replaced with ``save(overwrite_corrupt=True)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentnb import AgentSession, FileHistoryProvider, FileSessionStore
from agentnb._serialization import decode, encode, loads
from agentnb.exceptions import CassetteError, CheckpointCorruptError, SerializationError, SessionCorruptError
from agentnb.local import ReplayChatClient
from agentnb.workflows import FileCheckpointStorage, WorkflowCheckpoint

DEEP = "[" * 200_000 + "]" * 200_000
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000
HUGE_INT = "9" * 100_000  # past Python's int-string limit: json raises ValueError, not JSONDecodeError
HOSTILE = [DEEP, DEEP_OBJECT, HUGE_INT]


@pytest.mark.parametrize("text", HOSTILE, ids=["deep-list", "deep-object", "huge-int"])
def test_tagged_json_loader(text: str) -> None:
    with pytest.raises(SerializationError):
        loads(text)


def test_decoding_and_encoding_deep_values() -> None:
    nested: list = []
    for _ in range(5_000):
        nested = [nested]
    with pytest.raises(SerializationError, match="nested"):
        decode(nested)
    with pytest.raises(SerializationError, match="nested"):
        encode(nested)
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(SerializationError):
        encode(cyclic)


@pytest.mark.parametrize("text", HOSTILE, ids=["deep-list", "deep-object", "huge-int"])
def test_session_snapshots(tmp_path: Path, text: str) -> None:
    store = FileSessionStore(tmp_path)
    store.path_for("s").write_text(text)
    with pytest.raises(SessionCorruptError):
        store.load("s")
    with pytest.raises(SessionCorruptError):
        store.save(AgentSession(session_id="s"))
    store.save(AgentSession(session_id="s", state={"fresh": True}), overwrite_corrupt=True)
    assert store.load("s").state == {"fresh": True}  # type: ignore[union-attr]
    assert [p.read_text() for p in tmp_path.glob("*.corrupt-*")] == [text]  # the bad file was kept aside


@pytest.mark.parametrize("text", HOSTILE, ids=["deep-list", "deep-object", "huge-int"])
async def test_history_lines(tmp_path: Path, text: str) -> None:
    history = FileHistoryProvider(tmp_path)
    history.path_for("s").write_text(json.dumps({"role": "user", "contents": []}) + "\n" + text + "\n")
    with pytest.raises(SessionCorruptError, match="line 2"):
        await history.get_messages("s")


async def test_checkpoints_and_their_listing(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    good = WorkflowCheckpoint(checkpoint_id="good", workflow_name="w", graph_signature="s", run_id="r")
    await storage.save(good)
    bad = {
        "deep": DEEP,
        "deepobj": DEEP_OBJECT,
        "huge": HUGE_INT,
        "list": "[1, 2]",
        "oddtypes": json.dumps({"checkpoint_id": "oddtypes", "workflow_name": "w", "run_id": "r", "created_at": 5}),
        "oddstep": json.dumps({"checkpoint_id": "oddstep", "workflow_name": "w", "run_id": "r", "step": "x"}),
    }
    for name, text in bad.items():
        (tmp_path / f"{name}.json").write_text(text)
    assert [i.checkpoint_id for i in await storage.list_checkpoints()] == ["good"]
    for name in ("deep", "deepobj", "huge"):
        with pytest.raises(CheckpointCorruptError):
            await storage.load(name)
    assert (await storage.load("good")).checkpoint_id == "good"


@pytest.mark.parametrize("text", HOSTILE, ids=["deep-list", "deep-object", "huge-int"])
def test_cassettes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"format": "agentnb-cassette", "version": 1}) + "\n" + text + "\n")
    with pytest.raises(CassetteError, match="line 2"):
        ReplayChatClient(path)
