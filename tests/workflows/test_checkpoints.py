"""Checkpoint contents, the three storages, corrupt and foreign checkpoints, custom types, atomic writes."""

from __future__ import annotations

import enum
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import Never

from agentnb.exceptions import CheckpointCorruptError, CheckpointMismatchError, CheckpointNotFoundError
from agentnb.store import RunStore
from agentnb.workflows import (
    CheckpointStorage,
    Executor,
    FileCheckpointStorage,
    InMemoryCheckpointStorage,
    PendingMessage,
    SQLiteCheckpointStorage,
    WorkflowBuilder,
    WorkflowCheckpoint,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Ticket(BaseModel):
    title: str
    priority: Priority
    tags: list[str]


@dataclass
class Triage:
    ticket: Ticket
    score: float
    blob: bytes


class Intake(Executor):
    def __init__(self) -> None:
        super().__init__("intake")
        self.seen: list[str] = []

    @handler
    async def take(self, ticket: Ticket, ctx: WorkflowContext[Triage]) -> None:
        self.seen.append(ticket.title)
        ctx.set_state("last", ticket)
        await ctx.send_message(Triage(ticket, 0.5, b"\x00\xff"))

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"seen": list(self.seen)}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self.seen = list(state["seen"])


class Review(Executor):
    @handler
    async def review(self, triage: Triage, ctx: WorkflowContext) -> None:
        await ctx.request_info(request_data=triage, response_type=Priority)

    @response_handler
    async def decided(self, triage: Triage, decision: Priority, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{triage.ticket.title}: {decision.value} ({triage.blob!r})")


def build(storage: CheckpointStorage | None, name: str = "triage") -> Any:
    intake = Intake()
    return (
        WorkflowBuilder(start_executor=intake, checkpoint_storage=storage, name=name)
        .add_edge(intake, Review("review"))
        .build()
    )


TICKET = Ticket(title="Printer on fire", priority=Priority.HIGH, tags=["hw"])


@pytest.fixture(params=["memory", "file", "sqlite"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CheckpointStorage]:
    if request.param == "memory":
        yield InMemoryCheckpointStorage()
    elif request.param == "file":
        yield FileCheckpointStorage(tmp_path / "cps")
    else:
        store = RunStore(tmp_path / "runs.db")
        yield SQLiteCheckpointStorage(store)
        store.close()


async def test_checkpoint_holds_the_complete_state(storage: CheckpointStorage) -> None:
    workflow = build(storage)
    result = await workflow.run(TICKET)
    assert result.get_final_state() == "idle_with_pending_requests"
    infos = await storage.list_checkpoints(workflow_name="triage")
    assert [i.step for i in infos] == [0, 1, 2]
    assert infos[0].parent_id is None
    assert [i.parent_id for i in infos[1:]] == [i.checkpoint_id for i in infos[:-1]]
    assert {i.run_id for i in infos} == {result.run_id}
    first, second, last = [await storage.load(i.checkpoint_id) for i in infos]
    # Step 0: the input waits for the start executor.
    assert first.pending_messages == [PendingMessage(None, TICKET, "intake")]
    # Step 1: intake ran; its message to review is pending, its state and the shared state are saved.
    assert second.pending_messages == [PendingMessage("intake", Triage(TICKET, 0.5, b"\x00\xff"), None)]
    assert second.executor_states == {"intake": {"seen": ["Printer on fire"]}}
    assert second.shared_state == {"last": TICKET}
    assert isinstance(second.shared_state["last"], Ticket)
    assert isinstance(second.pending_messages[0].data, Triage)
    # Step 2: review asked for input; the request is saved with its response type.
    assert last.pending_messages == []
    ((rid, request),) = last.pending_requests.items()
    assert request.executor_id == "review" and request.response_type is Priority
    assert request.request_data == Triage(TICKET, 0.5, b"\x00\xff")
    assert last.run_state == "idle_with_pending_requests"
    assert last.graph_signature == workflow.graph_signature
    assert last.workflow_name == "triage" and last.created_at >= second.created_at
    assert result.checkpoint_id == last.checkpoint_id
    # Resume with a fresh graph (as another process would) and answer.
    resumed = await build(storage).run(checkpoint_id=last.checkpoint_id, responses={rid: Priority.LOW})
    assert resumed.get_outputs() == ["Printer on fire: low (b'\\x00\\xff')"]
    assert (await storage.get_latest(run_id=resumed.run_id)).parent_id == last.checkpoint_id  # type: ignore[union-attr]


async def test_storage_contract(storage: CheckpointStorage) -> None:
    cp = WorkflowCheckpoint(checkpoint_id="c1", workflow_name="w", graph_signature="sig", run_id="r1", step=3)
    assert await storage.save(cp) == "c1"
    loaded = await storage.load("c1")
    assert loaded.to_dict() == cp.to_dict()
    cp2 = WorkflowCheckpoint(
        checkpoint_id="c2", workflow_name="other", graph_signature="sig", run_id="r2", parent_id="c1"
    )
    await storage.save(cp2)
    assert await storage.list_checkpoint_ids() == ["c1", "c2"]
    assert await storage.list_checkpoint_ids(workflow_name="other") == ["c2"]
    assert await storage.list_checkpoint_ids(run_id="r1") == ["c1"]
    assert (await storage.get_latest(workflow_name="w")).checkpoint_id == "c1"  # type: ignore[union-attr]
    assert await storage.get_latest(workflow_name="none") is None
    assert await storage.delete("c1") is True
    assert await storage.delete("c1") is False
    with pytest.raises(CheckpointNotFoundError, match="c1"):
        await storage.load("c1")


async def test_checkpoint_of_another_graph_is_refused(storage: CheckpointStorage) -> None:
    result = await build(storage).run(TICKET)

    @executor(id="intake")
    async def other(ticket: Ticket, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output("different graph")

    foreign = WorkflowBuilder(start_executor=other, checkpoint_storage=storage, name="triage").build()
    with pytest.raises(CheckpointMismatchError, match="different graph"):
        await foreign.run(checkpoint_id=result.checkpoint_id)


async def test_corrupt_checkpoint_file_gives_a_clear_error_and_is_kept(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    result = await build(storage).run(TICKET)
    assert result.checkpoint_id is not None
    path = storage.path_of(result.checkpoint_id)
    path.write_text('{"checkpoint_id": "x", "graph_sig')  # truncated by hand, say
    with pytest.raises(CheckpointCorruptError, match=re.escape(str(path))):
        await build(storage).run(checkpoint_id=result.checkpoint_id)
    assert path.read_text() == '{"checkpoint_id": "x", "graph_sig'
    # Listing still works and skips the unreadable file.
    assert len(await storage.list_checkpoints()) == 2
    # Valid JSON that is not a checkpoint, and a checkpoint naming an unknown type, are corrupt too.
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(CheckpointCorruptError):
        await storage.load(result.checkpoint_id)
    data = (await storage.load((await storage.list_checkpoints())[1].checkpoint_id)).to_json_dict()
    data["state"] = {"x": {"__agentnb__": "pydantic", "type": "nowhere.module:Gone", "data": {}}}
    path.write_text(json.dumps(data))
    with pytest.raises(CheckpointCorruptError, match=r"nowhere\.module:Gone"):
        await storage.load(result.checkpoint_id)


async def test_corrupt_checkpoint_in_sqlite(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "db.sqlite")
    storage = SQLiteCheckpointStorage(store)
    store.put_checkpoint("bad", run_id="r", workflow_name="w", parent_id=None, step=0, data="not json")
    with pytest.raises(CheckpointCorruptError, match="'bad'"):
        await storage.load("bad")
    store.close()


async def test_file_writes_are_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FileCheckpointStorage(tmp_path, fsync=False)
    cp = WorkflowCheckpoint(checkpoint_id="c1", workflow_name="w", graph_signature="s", run_id="r")
    await storage.save(cp)
    original = storage.path_of("c1").read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        await storage.save(cp.copy(step=99))
    monkeypatch.undo()
    assert storage.path_of("c1").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c1.json"]  # no temp file left behind


def test_invalid_checkpoint_ids_cannot_escape_the_directory(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    for bad in ("../evil", "a/b", "", ".hidden"):
        with pytest.raises(ValueError, match="Invalid checkpoint id"):
            storage.path_of(bad)


async def test_checkpoint_every_and_final_checkpoint() -> None:
    storage = InMemoryCheckpointStorage()

    @executor(id="count")
    async def count(n: int, ctx: WorkflowContext[int, int]) -> None:
        if n < 5:
            await ctx.send_message(n + 1)
        else:
            await ctx.yield_output(n)

    workflow = WorkflowBuilder(start_executor=count, checkpoint_storage=storage, checkpoint_every=2).add_edge(
        count, count
    )
    result = await workflow.build().run(0)
    steps = [i.step for i in await storage.list_checkpoints()]
    assert steps == [0, 2, 4, 6]  # every second step, plus the last one when the run went idle
    assert result.get_outputs() == [5]
    assert all(storage.size_of(i.checkpoint_id) > 0 for i in await storage.list_checkpoints())


async def test_run_level_storage_overrides_and_missing_storage() -> None:
    workflow = build(None)
    with pytest.raises(ValueError, match="Cannot restore from checkpoint"):
        await workflow.run(checkpoint_id="x")
    storage = InMemoryCheckpointStorage()
    result = await workflow.run(TICKET, checkpoint_storage=storage)
    assert len(storage) == 3 and result.checkpoint_id is not None
    with pytest.raises(CheckpointNotFoundError):
        await workflow.run(checkpoint_id="missing", checkpoint_storage=storage)
    with pytest.raises(ValueError, match="not both"):
        await workflow.run(TICKET, checkpoint_id=result.checkpoint_id, checkpoint_storage=storage)


async def test_newer_format_version_is_refused() -> None:
    cp = WorkflowCheckpoint(checkpoint_id="c", workflow_name="w", graph_signature="s", run_id="r")
    data = cp.to_json_dict()
    data["version"] = 99
    storage = InMemoryCheckpointStorage()
    storage._data["c"] = json.dumps(data)  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(CheckpointCorruptError, match="newer"):
        await storage.load("c")


async def test_unserializable_state_fails_with_a_clear_error() -> None:
    class Opaque:
        pass

    @executor(id="leaky")
    async def leaky(text: str, ctx: WorkflowContext[Never, str]) -> None:
        ctx.set_state("handle", Opaque())
        await ctx.yield_output(text)

    storage = InMemoryCheckpointStorage()
    workflow = WorkflowBuilder(start_executor=leaky, checkpoint_storage=storage).build()
    from agentnb.exceptions import WorkflowRunError

    with pytest.raises(WorkflowRunError, match=r"after superstep 1 .*Cannot serialize a value of type .*Opaque"):
        await workflow.run("x")
    assert [i.step for i in await storage.list_checkpoints()] == [0]  # earlier history is intact
