"""Re-running one executor from a checkpoint: neighbours frozen, nothing written, compared with the original."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from typing_extensions import Never

from agentnb import Agent
from agentnb.exceptions import CheckpointMismatchError, ExecutorInputError, WorkflowError
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore
from agentnb.workflows import (
    CheckpointHistory,
    Executor,
    InMemoryCheckpointStorage,
    RerunResult,
    RunStoreCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    editable_input,
    executor,
    handler,
    parse_rerun_input,
    response_handler,
)


@dataclass
class Draft:
    title: str
    words: int


def pipeline(storage: Any, name: str = "pipe") -> Workflow:
    @executor(id="upper")
    async def upper(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())

    @executor(id="exclaim")
    async def exclaim(text: str, ctx: WorkflowContext[Never, str]) -> None:
        if text.startswith("FAIL"):
            raise ValueError(f"cannot exclaim {text!r}")
        ctx.set_state("last", text)
        await ctx.yield_output(text + "!")

    return WorkflowBuilder(start_executor=upper, checkpoint_storage=storage, name=name).add_edge(upper, exclaim).build()


async def _run(workflow: Workflow, message: Any, store: RunStore) -> tuple[CheckpointHistory, list[Any], str]:
    result = await workflow.run(message, run_store=store)
    history = CheckpointHistory(workflow.checkpoint_storage, workflow, run_store=store)
    assert result.run_id is not None
    return history, await history.timeline(run_id=result.run_id), result.run_id


def _snapshot(storage: InMemoryCheckpointStorage, store: RunStore, run_id: str) -> tuple[Any, ...]:
    return (dict(storage._data), len(store.list_events(run_id)), store.get_run(run_id))  # pyright: ignore[reportPrivateUsage]


async def test_rerun_on_the_recorded_input_matches_the_original_and_writes_nothing() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    workflow = pipeline(storage)
    history, timeline, run_id = await _run(workflow, "hi", store)
    before = _snapshot(storage, store, run_id)

    result = await history.rerun_executor(timeline[1].checkpoint_id, "exclaim")

    assert isinstance(result, RerunResult)
    assert result.inputs == ["HI"] and not result.edited and result.step == 2
    assert result.outputs == ["HI!"] and result.original.outputs == ["HI!"]
    assert result.sent == [] and result.original.sent == []
    assert result.rerun.shared_state_writes == {"last": "HI"}
    assert result.original.shared_state_writes == {"last": "HI"}
    assert result.error is None and result.is_unchanged
    assert result.diff_text() == ""
    assert "unchanged" in result.summary()
    assert _snapshot(storage, store, run_id) == before  # nothing written to the run or its checkpoints


async def test_edited_input_shows_a_readable_escaped_diff() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    workflow = pipeline(storage)
    history, timeline, run_id = await _run(workflow, "hi", store)
    before = _snapshot(storage, store, run_id)

    result = await history.rerun_executor(timeline[1].checkpoint_id, "exclaim", input="<script>x</script>")

    assert result.edited and result.outputs == ["<script>x</script>!"]
    assert not result.is_unchanged
    changed = {(c.section, c.status) for c in result.changes()}
    assert ("outputs", "changed") in changed and ("shared state", "changed") in changed
    diff = result.diff_text()
    assert '-outputs: "HI!"' in diff and '+outputs: "<script>x</script>!"' in diff
    html = result._repr_html_()
    assert "<script>x" not in html and "&lt;script&gt;x&lt;/script&gt;!" in html
    assert "anb-rerun-changed" in html
    assert _snapshot(storage, store, run_id) == before


async def test_input_of_the_wrong_type_is_a_typed_error_and_changes_nothing() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    history, timeline, run_id = await _run(pipeline(storage), "hi", store)
    before = _snapshot(storage, store, run_id)
    with pytest.raises(ExecutorInputError) as info:
        await history.rerun_executor(timeline[1].checkpoint_id, "exclaim", input=42)
    assert isinstance(info.value, TypeError) and isinstance(info.value, WorkflowError)
    assert info.value.executor_id == "exclaim" and info.value.accepted == ["str"] and info.value.got == "int"
    assert "takes str" in str(info.value)
    assert _snapshot(storage, store, run_id) == before


async def test_misuse_is_refused_with_clear_errors() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    workflow = pipeline(storage)
    history, timeline, _ = await _run(workflow, "hi", store)
    with pytest.raises(ValueError, match="Unknown executor 'nope'"):
        await history.rerun_executor(timeline[1].checkpoint_id, "nope")
    with pytest.raises(ValueError, match=r"receives no message .* executors that do: \['exclaim'\]"):
        await history.rerun_executor(timeline[1].checkpoint_id, "upper")
    with pytest.raises(ValueError, match="needs the workflow"):
        await CheckpointHistory(storage).rerun_executor(timeline[1].checkpoint_id, "exclaim")
    other = pipeline(storage, name="other")
    other_history = CheckpointHistory(storage, WorkflowBuilder(start_executor=other.executors["exclaim"]).build())
    with pytest.raises(CheckpointMismatchError):
        await other_history.rerun_executor(timeline[1].checkpoint_id, "exclaim")
    # With input=... an executor that receives nothing at that checkpoint runs on it.
    result = await history.rerun_executor(timeline[1].checkpoint_id, "upper", input="yo")
    assert result.sent_by_edge() == {"upper → exclaim": ["YO"]}
    assert result.original.sent == []  # the original did not run upper in that superstep


async def test_a_raising_executor_is_captured_as_the_results_error() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    history, timeline, _ = await _run(pipeline(storage), "hi", store)
    result = await history.rerun_executor(timeline[1].checkpoint_id, "exclaim", input="FAIL now")
    assert result.error is not None and result.error.error_type == "ValueError"
    assert "cannot exclaim 'FAIL now'" in result.error.message
    assert isinstance(result.exception, ValueError)
    assert result.outputs == []
    assert {c.section: c.status for c in result.changes()}["error"] == "added"
    assert "failed" in result.summary() and "anb-err" in result.to_html()
    with pytest.raises(WorkflowError, match="no output to continue with"):
        await result.fork()


async def test_the_original_failure_is_read_from_the_run_store() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    workflow = pipeline(storage)
    with pytest.raises(WorkflowError):
        await workflow.run("fail", run_store=store)
    history = CheckpointHistory(storage, workflow, run_store=store)
    first = (await history.list())[-1]  # the run failed in step 2: its last checkpoint is after step 1
    assert first.step == 1
    result = await history.rerun_executor(first.checkpoint_id, "exclaim", input="fixed")
    assert result.original.error is not None and result.original.error.error_type == "ValueError"
    assert result.original.sent is None  # no checkpoint after a failed superstep
    statuses = {c.section: c.status for c in result.changes()}
    assert statuses["error"] == "removed" and statuses["outputs"] == "added"


class Splitter(Executor):
    """Sends numbers along conditional edges and keeps a running count in its state."""

    def __init__(self) -> None:
        super().__init__("split")
        self.seen = 0

    @handler
    async def take(self, numbers: list[int], ctx: WorkflowContext[int]) -> None:
        self.seen += len(numbers)
        for n in numbers:
            await ctx.send_message(n)

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"seen": self.seen}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self.seen = state["seen"]


def fan_out(storage: Any) -> tuple[Workflow, Splitter]:
    split = Splitter()

    @executor(id="evens")
    async def evens(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"even {n}")

    @executor(id="odds")
    async def odds(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"odd {n}")

    workflow = (
        WorkflowBuilder(start_executor=split, checkpoint_storage=storage, name="split")
        .add_edge(split, evens, condition=lambda n: n % 2 == 0)
        .add_edge(split, odds, condition=lambda n: n % 2 == 1)
        .build()
    )
    return workflow, split


async def test_messages_are_reported_per_edge_and_state_is_restored() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")
    workflow, split = fan_out(storage)
    history, timeline, _ = await _run(workflow, [1, 2, 3], store)
    assert split.seen == 3
    result = await history.rerun_executor(timeline[0].checkpoint_id, "split", input=[4, 5, 6, 8])
    assert result.sent_by_edge() == {"split → evens": [4, 6, 8], "split → odds": [5]}
    assert result.original.sent_by_edge() == {"split → odds": [1, 3], "split → evens": [2]}
    assert result.rerun.state == {"seen": 4} and result.original.state == {"seen": 3}
    statuses = {(c.section, c.key): c.status for c in result.changes()}
    assert statuses[("sent", "split → evens")] == "changed" and statuses[("state", "split")] == "changed"
    assert split.seen == 3  # the live executor got its own state back


class Reviewer(Executor):
    """Asks a person whether to publish the text it gets."""

    def __init__(self) -> None:
        super().__init__("review")

    @handler
    async def review(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(request_data=f"Publish {text}?", response_type=bool)

    @response_handler
    async def answer(self, question: str, ok: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{question} -> {'yes' if ok else 'no'}")


async def test_request_info_is_reported_and_the_fork_waits_for_the_answer() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")

    @executor(id="draft")
    async def draft(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"'{text}'")

    review = Reviewer()
    workflow = (
        WorkflowBuilder(start_executor=draft, checkpoint_storage=storage, name="req").add_edge(draft, review).build()
    )
    history, timeline, _ = await _run(workflow, "v1", store)
    result = await history.rerun_executor(timeline[1].checkpoint_id, "review", input="'v2'")
    assert result.requests == ["Publish 'v2'?"] and result.original.requests == ["Publish 'v1'?"]
    assert {c.section: c.status for c in result.changes()}["requests"] == "changed"

    fork = await result.fork()
    assert [r.request_data for r in fork.pending_requests.values()] == ["Publish 'v2'?"]
    (request_id,) = fork.pending_requests
    resumed = await workflow.run(
        checkpoint_id=fork.checkpoint_id, checkpoint_storage=storage, responses={request_id: True}
    )
    assert resumed.get_outputs() == ["Publish 'v2'? -> yes"]


async def test_fork_continues_from_the_rerun_output_and_keeps_history() -> None:
    storage, store = InMemoryCheckpointStorage(), RunStore(":memory:")

    @executor(id="first")
    async def first(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text + " one")

    @executor(id="second")
    async def second(text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("seen", text)
        await ctx.send_message(text + " two")

    @executor(id="third")
    async def third(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{text} three (seen={ctx.get_state('seen')})")

    workflow = (
        WorkflowBuilder(start_executor=first, checkpoint_storage=storage, name="chain")
        .add_edge(first, second)
        .add_edge(second, third)
        .build()
    )
    history, timeline, run_id = await _run(workflow, "go", store)
    checkpoints_before = sorted(i.checkpoint_id for i in await history.list())
    result = await history.rerun_executor(timeline[1].checkpoint_id, "second", input="edited")
    assert result.sent_by_edge() == {"second → third": ["edited two"]}
    assert result.original.sent_by_edge() == {"second → third": ["go one two"]}
    assert sorted(i.checkpoint_id for i in await history.list()) == checkpoints_before

    fork = await result.fork(label="try edited")
    assert fork.parent_id == timeline[1].checkpoint_id and fork.metadata["label"] == "try edited"
    resumed = await workflow.run(checkpoint_id=fork.checkpoint_id, checkpoint_storage=storage)
    assert resumed.get_outputs() == ["edited two three (seen=edited)"]
    # The original branch is still there as it was.
    assert [c.checkpoint_id for c in await history.timeline(run_id=run_id)] == [c.checkpoint_id for c in timeline]


async def test_agent_executor_reruns_on_its_conversation_with_the_scripted_model() -> None:
    store = RunStore(":memory:")
    storage = RunStoreCheckpointStorage(store)  # the history finds the run store through its storage
    client = ScriptedChatClient(["A first draft.", "A second draft."])
    writer = Agent(client, name="writer")
    workflow = WorkflowBuilder(start_executor=writer, checkpoint_storage=storage, name="agents").build()
    result = await workflow.run("Write a line", run_store=store)
    assert result.get_outputs()[0].text == "A first draft."
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=result.run_id)

    rerun = await history.rerun_executor(timeline[0].checkpoint_id, "writer")
    assert [o.text for o in rerun.outputs] == ["A second draft."]
    assert [o.text for o in rerun.original.outputs or []] == ["A first draft."]
    assert [m.text for m in client.calls[1]] == ["Write a line"]  # the model saw the checkpoint's conversation
    change = {c.section: c for c in rerun.changes()}["outputs"]
    assert (change.original, change.rerun, change.status) == ("A first draft.", "A second draft.", "changed")
    # The executor's live conversation is what the original run left, not the re-run's.
    assert [m.text for m in workflow.executors["writer"].conversation] == ["Write a line", "A first draft."]


async def test_rerun_without_a_run_store_marks_the_original_outputs_unknown() -> None:
    storage = InMemoryCheckpointStorage()
    workflow = pipeline(storage)
    result = await workflow.run("hi")
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=result.run_id)
    rerun = await history.rerun_executor(timeline[1].checkpoint_id, "exclaim")
    statuses = {c.section: c.status for c in rerun.changes()}
    assert statuses["outputs"] == "unknown" and statuses["error"] == "unknown"
    assert "(not recorded)" in rerun.diff_text()


async def test_a_running_workflow_is_not_rerun() -> None:
    storage = InMemoryCheckpointStorage()
    workflow = pipeline(storage)
    result = await workflow.run("hi")
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=result.run_id)
    stream = workflow.run("again", stream=True)
    await anext(stream)  # the run has started
    with pytest.raises(WorkflowError, match="is running"):
        await history.rerun_executor(timeline[1].checkpoint_id, "exclaim")
    async for _ in stream:
        pass


def test_edited_input_round_trips_through_tagged_json() -> None:
    @executor(id="count")
    async def count(draft: Draft, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(draft.words)

    workflow = WorkflowBuilder(start_executor=count).build()
    text = editable_input(Draft("x", 3)).replace("3", "7")
    assert parse_rerun_input(text, workflow, "count") == Draft("x", 7)
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_rerun_input("{oops", workflow, "count")
    with pytest.raises(ExecutorInputError, match="takes Draft"):
        parse_rerun_input('"just text"', workflow, "count")
    with pytest.raises(ValueError, match="Unknown executor"):
        parse_rerun_input('"x"', workflow, "missing")


async def test_inputs_at_lists_what_each_executor_receives_next() -> None:
    storage = InMemoryCheckpointStorage()
    workflow, _ = fan_out(storage)
    result = await workflow.run([1, 2])
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=result.run_id)
    assert await history.inputs_at(timeline[0].checkpoint_id) == {"split": [[1, 2]]}
    assert await history.inputs_at(timeline[1].checkpoint_id) == {"odds": [1], "evens": [2]}


async def test_async_edge_conditions_decide_where_a_rerun_sends() -> None:
    storage = InMemoryCheckpointStorage()

    async def is_big(n: int) -> bool:
        return n > 10

    @executor(id="source")
    async def source(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor(id="big")
    async def big(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    workflow = (
        WorkflowBuilder(start_executor=source, checkpoint_storage=storage, name="async-cond")
        .add_edge(source, big, condition=is_big)
        .build()
    )
    result = await workflow.run(50)
    history = CheckpointHistory(storage, workflow)
    timeline = await history.timeline(run_id=result.run_id)
    assert (await history.rerun_executor(timeline[0].checkpoint_id, "source")).sent_by_edge() == {"source → big": [50]}
    small = await history.rerun_executor(timeline[0].checkpoint_id, "source", input=3)
    assert [(m.target_id, m.data) for m in small.sent] == [(None, 3)]  # no edge takes it
    assert small.sent[0].edge == "source → (no edge)"
