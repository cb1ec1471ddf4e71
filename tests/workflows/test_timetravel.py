"""Time-travel: timelines, the checkpoint tree, diffs, and forks that branch without touching history."""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import Never

from agentnb.exceptions import CheckpointMismatchError, CheckpointNotFoundError
from agentnb.workflows import (
    CheckpointHistory,
    Executor,
    InMemoryCheckpointStorage,
    PendingMessage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
)


class Accumulator(Executor):
    def __init__(self) -> None:
        super().__init__("acc")
        self.total = 0

    @handler
    async def add(self, n: int, ctx: WorkflowContext[int, str]) -> None:
        step_size = ctx.get_state("step_size", 1)
        self.total += n
        if n < 4:
            await ctx.send_message(n + step_size)
        else:
            await ctx.yield_output(f"total={self.total} via step_size={step_size}")

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"total": self.total}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self.total = state["total"]


def build(storage: InMemoryCheckpointStorage) -> Workflow:
    acc = Accumulator()
    return WorkflowBuilder(start_executor=acc, checkpoint_storage=storage, name="acc").add_edge(acc, acc).build()


async def test_timeline_load_and_diff() -> None:
    storage = InMemoryCheckpointStorage()
    result = await build(storage).run(0)
    assert result.get_outputs() == ["total=10 via step_size=1"]
    history = CheckpointHistory(storage)
    timeline = await history.timeline(run_id=result.run_id)
    assert [c.step for c in timeline] == [0, 1, 2, 3, 4, 5]
    cp2 = await history.load(timeline[2].checkpoint_id)
    assert cp2.executor_states == {"acc": {"total": 1}}
    assert cp2.pending_messages == [PendingMessage("acc", 2, None)]
    diff = await history.diff(timeline[2].checkpoint_id, timeline[3].checkpoint_id)
    assert diff.executor_states["changed"] == {"acc.total": (1, 3)}
    assert [m.data for m in diff.pending_before] == [2] and [m.data for m in diff.pending_after] == [3]
    assert not diff.is_empty and "acc.total: 1 -> 3" in diff.summary()
    same = await history.diff(timeline[2].checkpoint_id, timeline[2].checkpoint_id)
    assert same.is_empty
    assert await history.timeline(checkpoint_id=timeline[3].checkpoint_id) == timeline[:4]
    with pytest.raises(CheckpointNotFoundError):
        await history.timeline(run_id="nope")
    with pytest.raises(ValueError, match="exactly one"):
        await history.timeline()


async def test_fork_makes_a_new_branch_and_the_old_one_stays_loadable() -> None:
    storage = InMemoryCheckpointStorage()
    workflow = build(storage)
    original = await workflow.run(0)
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=original.run_id)
    before = {i.checkpoint_id: (await storage.load(i.checkpoint_id)).to_json() for i in timeline}

    fork = await history.fork(timeline[2].checkpoint_id, shared_state={"step_size": 2}, label="bigger steps")
    assert fork.parent_id == timeline[2].checkpoint_id and fork.run_id != original.run_id
    assert fork.metadata == {
        "forked_from": timeline[2].checkpoint_id,
        "label": "bigger steps",
        "edits": ["shared_state"],
    }
    branched = await workflow.run(checkpoint_id=fork.checkpoint_id)
    # From step 2 (total 1, pending 2): 2 -> 4, so total = 1 + 2 + 4.
    assert branched.get_outputs() == ["total=7 via step_size=2"]

    # History is untouched: every old checkpoint loads byte-identical, and the old branch replays the same.
    for checkpoint_id, text in before.items():
        assert (await storage.load(checkpoint_id)).to_json() == text
    replay = await build(storage).run(checkpoint_id=timeline[2].checkpoint_id)
    assert replay.get_outputs() == original.get_outputs()

    # The tree now has one root and three branches diverging at step 2.
    roots = await history.tree()
    assert len(roots) == 1 and roots[0].checkpoint_id == timeline[0].checkpoint_id
    branches = await history.branches()
    assert len(branches) == 3
    assert all(b[2].checkpoint_id == timeline[2].checkpoint_id for b in branches)
    fork_timeline = await history.timeline(run_id=branched.run_id)
    assert [c.checkpoint_id for c in fork_timeline[:4]] == [
        *[c.checkpoint_id for c in timeline[:3]],
        fork.checkpoint_id,
    ]
    depths = [depth for depth, _ in roots[0].walk()]
    assert depths[0] == 0 and max(depths) >= 5


async def test_fork_with_edited_executor_state_and_pending_messages() -> None:
    storage = InMemoryCheckpointStorage()
    workflow = build(storage)
    original = await workflow.run(0)
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=original.run_id)
    fork = await history.fork(
        timeline[1].checkpoint_id,
        executor_states={"acc": {"total": 100}},
        pending_messages=[(None, 4, "acc")],  # inject a message straight into "acc"
    )
    assert (await workflow.run(checkpoint_id=fork.checkpoint_id)).get_outputs() == ["total=104 via step_size=1"]
    with pytest.raises(ValueError, match="Unknown executor 'ghost'"):
        await history.fork(timeline[1].checkpoint_id, executor_states={"ghost": {}})
    with pytest.raises(ValueError, match="needs a target_id"):
        await history.fork(timeline[1].checkpoint_id, pending_messages=[PendingMessage(None, 1)])
    with pytest.raises(TypeError, match="Pending messages must be"):
        await history.fork(timeline[1].checkpoint_id, pending_messages=[42])
    replaced = await history.fork(timeline[1].checkpoint_id, shared_state={"only": 1}, replace_shared_state=True)
    assert replaced.shared_state == {"only": 1}


async def test_fork_refuses_a_message_no_edge_could_deliver() -> None:
    # The same rule as the fork editors' (parse_fork_edits): the graph's edge groups answer, conditions aside.
    storage = InMemoryCheckpointStorage()
    workflow = build(storage)
    original = await workflow.run(0)
    history = CheckpointHistory(storage, workflow)
    first = (await history.timeline(run_id=original.run_id))[1].checkpoint_id
    with pytest.raises(ValueError, match="no receiver accepts"):
        await history.fork(first, pending_messages=[(None, "not a number", "acc")])
    with pytest.raises(ValueError, match="unknown executor 'ghost'"):
        await history.fork(first, pending_messages=[("ghost", 1)])
    assert len(await history.list()) == len(await history.list(run_id=original.run_id))  # nothing was saved


async def test_fork_checks_the_graph() -> None:
    storage = InMemoryCheckpointStorage()
    result = await build(storage).run(0)

    @executor(id="acc")
    async def other(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    other_workflow = WorkflowBuilder(start_executor=other, name="acc").build()
    with pytest.raises(CheckpointMismatchError):
        await CheckpointHistory(storage, other_workflow).fork(result.checkpoint_id or "")
