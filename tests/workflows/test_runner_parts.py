"""The runner's public parts: ``Runner`` over explicit parts, the runner context, and edge runners."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from agentnb import InProcRunnerContext, Runner, RunnerContext, WorkflowMessage, create_edge_runner
from agentnb.exceptions import CheckpointMismatchError, CheckpointNotFoundError, WorkflowRunError
from agentnb.workflows import (
    Case,
    Default,
    EdgeRunner,
    Executor,
    FanInEdgeGroup,
    FanOutEdgeGroup,
    InMemoryCheckpointStorage,
    SingleEdgeGroup,
    SwitchCaseEdgeGroup,
    SwitchCaseEdgeGroupCase,
    SwitchCaseEdgeGroupDefault,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowRunState,
    handler,
    response_handler,
)


@dataclass
class Num:
    value: int


class Counter(Executor):
    """Passes ``value + 1`` on until 10, then yields it; records what it received."""

    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self.seen: list[int] = []

    @handler
    async def on_num(self, message: Num, ctx: WorkflowContext[Num, int]) -> None:
        self.seen.append(message.value)
        if message.value < 10:
            await ctx.send_message(Num(message.value + 1))
        else:
            await ctx.yield_output(message.value)


class Failing(Executor):
    """Fails on ``fail_on``, else passes ``value + 1`` on."""

    def __init__(self, id: str, fail_on: int) -> None:
        super().__init__(id=id)
        self.fail_on = fail_on

    @handler
    async def on_num(self, message: Num, ctx: WorkflowContext[Num]) -> None:
        if message.value == self.fail_on:
            raise RuntimeError("Simulated executor failure")
        await ctx.send_message(Num(message.value + 1))


class Stateful(Executor):
    """Adds what it receives to ``total`` (saved in checkpoints) and to the shared state."""

    def __init__(self, id: str) -> None:
        super().__init__(id=id)
        self.total = 0

    @handler
    async def on_num(self, message: Num, ctx: WorkflowContext[Any]) -> None:
        self.total += message.value
        ctx.set_state("last", message.value)

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"total": self.total}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self.total = int(state["total"])


def ping_pong(max_iterations: int = 100, ctx: RunnerContext | None = None) -> tuple[Runner, RunnerContext]:
    a, b = Counter("a"), Counter("b")
    groups = [SingleEdgeGroup("a", "b"), SingleEdgeGroup("b", "a")]
    context = ctx if ctx is not None else InProcRunnerContext()
    return Runner(groups, {"a": a, "b": b}, {}, context, "ping-pong", max_iterations=max_iterations), context


async def start(ctx: RunnerContext, target: str = "a", value: int = 0) -> None:
    await ctx.send_message(WorkflowMessage(data=Num(value), source_id="START", target_id=target))


# -- Runner ---------------------------------------------------------------------------------------------
def test_a_runner_has_an_in_process_context_by_default() -> None:
    runner = Runner([SingleEdgeGroup("a", "b")], {"a": Counter("a"), "b": Counter("b")})
    assert isinstance(runner.context, InProcRunnerContext)
    assert isinstance(runner.context, RunnerContext)
    assert runner.state == {}
    assert runner.iteration == 0


async def test_run_until_convergence_runs_supersteps_until_no_message_is_left() -> None:
    runner, ctx = ping_pong()
    await start(ctx)
    events = [event async for event in runner.run_until_convergence()]
    assert all(isinstance(e, WorkflowEvent) for e in events)
    assert [e.data for e in events if e.type == "output"] == [10]
    assert runner.iteration == 11  # the input's superstep, then ten hops
    assert [e.type for e in events[:4]] == [
        "superstep_started",
        "executor_invoked",
        "executor_completed",
        "superstep_completed",
    ]
    assert not await ctx.has_messages()
    assert not await ctx.has_events()  # everything was handed to the caller


async def test_a_runner_that_does_not_converge_raises_after_max_iterations() -> None:
    runner, ctx = ping_pong(max_iterations=5)
    await start(ctx)
    seen: list[WorkflowEvent] = []
    with pytest.raises(WorkflowRunError, match="max_iterations=5"):
        async for event in runner.run_until_convergence():
            seen.append(event)
    assert sum(e.type == "superstep_completed" for e in seen) == 5
    assert not any(e.type == "status" and e.state == WorkflowRunState.IDLE for e in seen)


async def test_messages_from_one_sender_arrive_in_the_order_they_were_sent() -> None:
    target = Counter("target")
    runner = Runner([SingleEdgeGroup("source", "target")], {"source": Counter("source"), "target": target})
    for value in (11, 12, 13, 14, 15):
        await runner.context.send_message(WorkflowMessage(data=Num(value), source_id="source"))
    outputs = [e.data async for e in runner.run_until_convergence() if e.type == "output"]
    assert target.seen == [11, 12, 13, 14, 15]
    assert outputs == [11, 12, 13, 14, 15]
    assert runner.iteration == 1  # one superstep delivered them all


async def test_a_fan_out_runs_its_targets_concurrently() -> None:
    class Blocking(Executor):
        def __init__(self, id: str) -> None:
            super().__init__(id=id)
            self.started = asyncio.Event()
            self.release = asyncio.Event()

        @handler
        async def on_num(self, message: Num, ctx: WorkflowContext[Any]) -> None:
            self.started.set()
            await self.release.wait()

    class Probe(Executor):
        def __init__(self, id: str) -> None:
            super().__init__(id=id)
            self.done = asyncio.Event()

        @handler
        async def on_num(self, message: Num, ctx: WorkflowContext[Any]) -> None:
            self.done.set()

    blocking, probe = Blocking("blocking"), Probe("probe")
    executors: dict[str, Executor] = {"source": Counter("source"), "blocking": blocking, "probe": probe}
    runner = Runner([FanOutEdgeGroup("source", ["blocking", "probe"])], executors)
    await runner.context.send_message(WorkflowMessage(data=Num(1), source_id="source"))

    async def drain() -> list[WorkflowEvent]:
        return [event async for event in runner.run_until_convergence()]

    task = asyncio.ensure_future(drain())
    await asyncio.wait_for(blocking.started.wait(), 2)
    await asyncio.wait_for(probe.done.wait(), 2)  # while the blocking target still waits
    blocking.release.set()
    events = await task
    assert {e.executor_id for e in events if e.type == "executor_completed"} == {"blocking", "probe"}


async def test_a_runner_runs_again_after_it_converged_and_after_it_failed() -> None:
    runner, ctx = ping_pong(max_iterations=2)
    await start(ctx)
    with pytest.raises(WorkflowRunError):
        async for _ in runner.run_until_convergence():
            pass
    assert [e async for e in runner.run_until_convergence()] == []  # nothing left to do, and no lock left
    runner.reset_iteration_count()
    await start(ctx, value=9)
    outputs = [e.data async for e in runner.run_until_convergence() if e.type == "output"]
    assert outputs == [10]


async def test_a_failing_executor_surfaces_its_events_then_its_error() -> None:
    a, b = Failing("a", fail_on=2), Counter("b")
    runner = Runner([SingleEdgeGroup("a", "b"), SingleEdgeGroup("b", "a")], {"a": a, "b": b})
    await start(runner.context)
    events: list[WorkflowEvent] = []
    with pytest.raises(RuntimeError, match="Simulated executor failure") as raised:
        async for event in runner.run_until_convergence():
            events.append(event)
    assert isinstance(raised.value, WorkflowRunError)
    assert events[-1].type == "executor_failed"
    assert events[-1].executor_id == "a"


async def test_reset_iteration_count_starts_the_count_again() -> None:
    runner, ctx = ping_pong()
    await start(ctx, value=8)
    async for _ in runner.run_until_convergence():
        pass
    assert runner.iteration == 3
    runner.reset_iteration_count()
    assert runner.iteration == 0


async def test_shared_state_writes_land_in_the_runners_state() -> None:
    state: dict[str, Any] = {"kept": True}
    runner = Runner([], {"s": Stateful("s")}, state)
    await runner.context.send_message(WorkflowMessage(data=Num(4), source_id="START", target_id="s"))
    async for _ in runner.run_until_convergence():
        pass
    assert state == {"kept": True, "last": 4}
    assert runner.state is state


async def test_a_context_with_storage_gets_a_checkpoint_after_every_superstep() -> None:
    storage = InMemoryCheckpointStorage()
    runner, ctx = ping_pong(ctx=InProcRunnerContext(storage))
    await start(ctx, value=7)
    async for _ in runner.run_until_convergence():
        pass
    checkpoints = await storage.list_checkpoints(workflow_name="ping-pong")
    assert sorted(c.step for c in checkpoints) == [1, 2, 3, 4]
    assert runner.previous_checkpoint_id == max(checkpoints, key=lambda c: c.step).checkpoint_id


async def test_build_and_restore_checkpoint_round_trip_executor_and_shared_state() -> None:
    executor = Stateful("s")
    state: dict[str, Any] = {}
    runner = Runner([], {"s": executor}, state)
    executor.total = 7
    state["shared"] = "before"
    checkpoint = await runner.build_checkpoint()
    assert checkpoint.graph_signature == runner.workflow.graph_signature

    executor.total = 999
    state["shared"] = "after"
    await runner.restore_checkpoint(checkpoint)
    assert executor.total == 7
    assert state == {"shared": "before"}
    assert runner.state is state
    assert runner.previous_checkpoint_id == checkpoint.checkpoint_id


async def test_build_checkpoint_captures_queued_messages_and_leaves_them_queued() -> None:
    runner = Runner([], {"a": Counter("a")}, {}, graph_signature_hash="hash")
    await runner.context.send_message(WorkflowMessage(data=Num(1), source_id="START", target_id="a"))
    checkpoint = await runner.build_checkpoint()
    assert [m.data for m in checkpoint.pending_messages] == [Num(1)]
    assert await runner.context.has_messages()
    assert checkpoint.previous_checkpoint_id is None
    assert runner.previous_checkpoint_id is None  # building one writes nothing, so it is no parent
    completed = [e.executor_id async for e in runner.run_until_convergence() if e.type == "executor_completed"]
    assert completed == ["a"]  # the queued message still ran


async def test_restoring_a_checkpoint_queues_its_messages_again() -> None:
    storage = InMemoryCheckpointStorage()
    runner, ctx = ping_pong(ctx=InProcRunnerContext(storage))
    await start(ctx, value=5)
    events = [e async for e in runner.run_until_convergence()]
    assert [e.data for e in events if e.type == "output"] == [10]
    first = min(await storage.list_checkpoints(workflow_name="ping-pong"), key=lambda c: c.step)

    again, again_ctx = ping_pong(ctx=InProcRunnerContext(storage))
    await again.restore_from_checkpoint(first.checkpoint_id)
    assert await again_ctx.has_messages()
    outputs = [e.data async for e in again.run_until_convergence() if e.type == "output"]
    assert outputs == [10]


async def test_restore_rejects_another_graphs_checkpoint_and_unknown_ids() -> None:
    runner = Runner([], {}, {}, InProcRunnerContext(InMemoryCheckpointStorage()), graph_signature_hash="hash-a")
    other = Runner([], {}, {}, graph_signature_hash="hash-b")
    with pytest.raises(CheckpointMismatchError):
        await runner.restore_checkpoint(await other.build_checkpoint())
    with pytest.raises(CheckpointNotFoundError):
        await runner.restore_from_checkpoint("missing")
    with pytest.raises(ValueError, match="not enabled"):
        await other.restore_from_checkpoint("missing")


# -- the runner context ---------------------------------------------------------------------------------
async def test_the_in_process_context_groups_messages_by_sender_and_drains_them() -> None:
    ctx = InProcRunnerContext()
    assert not await ctx.has_messages()
    for sender, value in (("a", 1), ("b", 2), ("a", 3)):
        await ctx.send_message(WorkflowMessage(data=value, source_id=sender))
    assert await ctx.has_messages()
    drained = await ctx.drain_messages()
    assert {k: [m.data for m in v] for k, v in drained.items()} == {"a": [1, 3], "b": [2]}
    assert not await ctx.has_messages()


async def test_the_in_process_context_queues_events_and_waits_for_the_next() -> None:
    ctx = InProcRunnerContext()
    waiter = asyncio.ensure_future(ctx.next_event())
    await asyncio.sleep(0)
    assert not waiter.done()
    await ctx.add_event(WorkflowEvent("custom", 1))
    assert (await asyncio.wait_for(waiter, 1)).data == 1
    await ctx.add_event(WorkflowEvent("custom", 2))
    await ctx.add_event(WorkflowEvent("custom", 3))
    assert await ctx.has_events()
    assert [e.data for e in await ctx.drain_events()] == [2, 3]
    assert not await ctx.has_events()


def test_a_runtime_storage_overrides_the_contexts_own_until_cleared() -> None:
    own, runtime = InMemoryCheckpointStorage(), InMemoryCheckpointStorage()
    ctx = InProcRunnerContext()
    assert not ctx.has_checkpointing()
    ctx.set_runtime_checkpoint_storage(runtime)
    assert ctx.has_checkpointing() and ctx.checkpoint_storage is runtime
    ctx.clear_runtime_checkpoint_storage()
    assert ctx.checkpoint_storage is None
    assert InProcRunnerContext(own).checkpoint_storage is own


async def test_reset_for_new_run_forgets_messages_and_events() -> None:
    ctx = InProcRunnerContext()
    await ctx.send_message(WorkflowMessage(data=1, source_id="a"))
    await ctx.add_event(WorkflowEvent("custom", 1))
    ctx.set_streaming(True)
    assert ctx.is_streaming()
    ctx.reset_for_new_run()
    assert not await ctx.has_messages() and not await ctx.has_events() and not ctx.is_streaming()


# -- edge runners ---------------------------------------------------------------------------------------
def pair() -> tuple[Counter, Counter, dict[str, Executor]]:
    source, target = Counter("source"), Counter("target")
    return source, target, {"source": source, "target": target}


async def test_a_single_edge_runner_delivers_and_runs_its_target() -> None:
    _, target, executors = pair()
    edge_runner = create_edge_runner(SingleEdgeGroup("source", "target"), executors)
    ctx = InProcRunnerContext()
    assert await edge_runner.send_message(WorkflowMessage(data=Num(3), source_id="source"), {}, ctx)
    assert target.seen == [3]
    sent = await ctx.drain_messages()
    assert [m.data for m in sent["target"]] == [Num(4)]  # what the target sent waits in the context
    assert [e.type for e in await ctx.drain_events()] == ["executor_invoked", "executor_completed"]


@pytest.mark.parametrize(
    ("message", "taken"),
    [
        (WorkflowMessage(data=Num(1), source_id="source", target_id="target"), True),
        (WorkflowMessage(data=Num(1), source_id="source", target_id="elsewhere"), False),
        (WorkflowMessage(data="not a Num", source_id="source"), False),
    ],
)
async def test_a_single_edge_runner_takes_only_messages_its_target_accepts(
    message: WorkflowMessage, taken: bool
) -> None:
    _, target, executors = pair()
    edge_runner = create_edge_runner(SingleEdgeGroup("source", "target"), executors)
    assert await edge_runner.send_message(message, {}, InProcRunnerContext()) is taken
    assert target.seen == ([1] if taken else [])


@pytest.mark.parametrize(("value", "taken"), [(1, True), (2, False)])
async def test_a_conditional_edge_runner_delivers_only_when_the_condition_holds(value: int, taken: bool) -> None:
    _, target, executors = pair()
    group = SingleEdgeGroup("source", "target", condition=lambda m: m.value == 1)
    edge_runner = create_edge_runner(group, executors)
    assert await edge_runner.send_message(WorkflowMessage(data=Num(value), source_id="source")) is taken
    assert target.seen == ([1] if taken else [])


async def test_an_async_condition_is_awaited() -> None:
    _, target, executors = pair()

    async def holds(message: Num) -> bool:
        await asyncio.sleep(0)
        return message.value > 0

    edge_runner = create_edge_runner(SingleEdgeGroup("source", "target", condition=holds), executors)
    assert await edge_runner.send_message(WorkflowMessage(data=Num(5), source_id="source"))
    assert not await edge_runner.send_message(WorkflowMessage(data=Num(0), source_id="source"))
    assert target.seen == [5]


async def test_a_fan_out_edge_runner_delivers_to_every_target_or_the_one_named() -> None:
    targets = [Counter(f"t{i}") for i in range(3)]
    executors: dict[str, Executor] = {"source": Counter("source"), **{t.id: t for t in targets}}
    edge_runner = create_edge_runner(FanOutEdgeGroup("source", [t.id for t in targets]), executors)
    assert await edge_runner.send_message(WorkflowMessage(data=Num(1), source_id="source"))
    assert [t.seen for t in targets] == [[1], [1], [1]]
    assert await edge_runner.send_message(WorkflowMessage(data=Num(2), source_id="source", target_id="t1"))
    assert [t.seen for t in targets] == [[1], [1, 2], [1]]
    assert not await edge_runner.send_message(WorkflowMessage(data=Num(2), source_id="source", target_id="nope"))


async def test_a_selection_function_picks_the_fan_out_targets() -> None:
    targets = [Counter(f"t{i}") for i in range(3)]
    executors: dict[str, Executor] = {"source": Counter("source"), **{t.id: t for t in targets}}
    group = FanOutEdgeGroup("source", [t.id for t in targets], selection_func=lambda m, ids: ids[m.value :])
    edge_runner = create_edge_runner(group, executors)
    assert await edge_runner.send_message(WorkflowMessage(data=Num(2), source_id="source"))
    assert [t.seen for t in targets] == [[], [], [2]]


async def test_a_fan_in_edge_runner_waits_for_every_source_then_runs_its_target_once() -> None:
    class Join(Executor):
        def __init__(self, id: str) -> None:
            super().__init__(id=id)
            self.received: list[list[Num]] = []

        @handler
        async def on_list(self, messages: list[Num], ctx: WorkflowContext[Any]) -> None:
            self.received.append(messages)

    join = Join("join")
    executors: dict[str, Executor] = {"a": Counter("a"), "b": Counter("b"), "join": join}
    edge_runner = create_edge_runner(FanInEdgeGroup(["a", "b"], "join"), executors)
    ctx = InProcRunnerContext()
    assert await edge_runner.send_message(WorkflowMessage(data=Num(2), source_id="b"), {}, ctx)
    assert join.received == []  # buffered until "a" sent too
    assert await edge_runner.send_message(WorkflowMessage(data=Num(1), source_id="a"), {}, ctx)
    assert join.received == [[Num(1), Num(2)]]  # in source order
    assert [e.type for e in await ctx.drain_events()] == ["executor_invoked", "executor_completed"]


async def test_a_switch_case_edge_runner_delivers_to_the_first_matching_case() -> None:
    low, high = Counter("low"), Counter("high")
    executors: dict[str, Executor] = {"source": Counter("source"), "low": low, "high": high}
    group = SwitchCaseEdgeGroup(
        "source",
        [SwitchCaseEdgeGroupCase(lambda m: m.value < 5, "low"), SwitchCaseEdgeGroupDefault("high")],
    )
    edge_runner = create_edge_runner(group, executors)
    for value in (1, 7):
        assert await edge_runner.send_message(WorkflowMessage(data=Num(value), source_id="source"))
    assert (low.seen, high.seen) == ([1], [7])


async def test_an_edge_runners_failing_target_raises_and_its_events_still_arrive() -> None:
    source, failing = Counter("source"), Failing("target", fail_on=3)
    edge_runner = create_edge_runner(SingleEdgeGroup("source", "target"), {"source": source, "target": failing})
    ctx = InProcRunnerContext()
    with pytest.raises(RuntimeError, match="Simulated"):
        await edge_runner.send_message(WorkflowMessage(data=Num(3), source_id="source"), {}, ctx)
    assert [e.type for e in await ctx.drain_events()] == ["executor_invoked", "executor_failed"]
    assert not await ctx.has_messages()


async def test_a_built_workflow_routes_through_the_edge_runners_of_its_groups() -> None:
    first, second, last = Counter("first"), Counter("second"), Counter("last")
    workflow = (
        WorkflowBuilder(start_executor=first)
        .add_edge(first, second)
        .add_switch_case_edge_group(second, [Case(lambda m: m.value > 100, first), Default(last)])
        .build()
    )
    runners = workflow.edge_runners_by_source
    assert {k: [r.edge_group for r in v] for k, v in runners.items()} == workflow.groups_by_source
    assert all(isinstance(r, EdgeRunner) and r.executors is workflow.executors for v in runners.values() for r in v)
    # The engine calls each runner's route: a runner that refuses everything stops the run after one step.
    runners["first"][0].route = lambda data, source, target, router: False
    result = await workflow.run(Num(0))
    assert first.seen == [0] and second.seen == [] and last.seen == []
    assert any(e.type == "warning" for e in result)


async def test_a_fresh_run_resets_the_executors_that_have_a_reset_of_their_own() -> None:
    class Resetting(Counter):
        def __init__(self, id: str) -> None:
            super().__init__(id)
            self.resets = 0

        def reset(self) -> None:
            self.resets += 1

    first, middle, last = Resetting("first"), Counter("middle"), Counter("last")
    calls: list[str] = []
    middle.reset = lambda: calls.append("middle")  # set on the instance: still called
    workflow = WorkflowBuilder(start_executor=first).add_chain([first, middle, last]).build()
    await workflow.run(Num(8))
    await workflow.run(Num(9))
    assert first.resets == 2
    assert calls == ["middle", "middle"]


async def test_a_runners_request_is_answered_through_the_runner() -> None:
    class Asker(Executor):
        def __init__(self, id: str) -> None:
            super().__init__(id=id)
            self.answers: list[tuple[str, int]] = []

        @handler
        async def on_text(self, question: str, ctx: WorkflowContext[Any]) -> None:
            await ctx.request_info(request_data=question, response_type=int)

        @response_handler
        async def on_answer(self, question: str, answer: int, ctx: WorkflowContext[Any, int]) -> None:
            self.answers.append((question, answer))
            await ctx.yield_output(answer)

    asker = Asker("asker")
    runner = Runner([], {"asker": asker})
    await runner.context.send_message(WorkflowMessage(data="how many?", source_id="START", target_id="asker"))
    events = [e async for e in runner.run_until_convergence()]
    (request,) = [e for e in events if e.type == "request_info"]
    assert list(runner.pending_requests) == [request.request_id]
    with pytest.raises(TypeError):
        runner.send_request_info_response(request.request_id, "not an int")
    runner.send_request_info_response(request.request_id, 3)
    outputs = [e.data async for e in runner.run_until_convergence() if e.type == "output"]
    assert outputs == [3]
    assert asker.answers == [("how many?", 3)]
    assert runner.pending_requests == {}
