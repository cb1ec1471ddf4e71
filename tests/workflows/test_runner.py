"""Supersteps, delivery order, concurrency, routing, outputs, failures, limits and streaming."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typing_extensions import Never

from agentnb.exceptions import WorkflowError, WorkflowRunError, WorkflowValidationError
from agentnb.workflows import (
    Case,
    Default,
    Executor,
    InMemoryCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowRunState,
    executor,
    handler,
)


class Recorder(Executor):
    """Records (step, message) pairs and forwards what it receives, tagged with its id."""

    def __init__(self, id: str, log: list[tuple[int, str, Any]], *, delay: float = 0.0, output: bool = False) -> None:
        super().__init__(id)
        self.log = log
        self.delay = delay
        self.output = output

    @handler
    async def on_text(self, text: str, ctx: WorkflowContext[str, str]) -> None:
        await asyncio.sleep(self.delay)
        self.log.append((ctx.step, self.id, text))
        if self.output:
            await ctx.yield_output(f"{text}>{self.id}")
        else:
            await ctx.send_message(f"{text}>{self.id}")

    @handler
    async def on_list(self, texts: list[str], ctx: WorkflowContext[str, str]) -> None:
        self.log.append((ctx.step, self.id, texts))
        await ctx.yield_output("|".join(texts))


async def test_messages_sent_in_step_n_arrive_in_step_n_plus_1() -> None:
    log: list[tuple[int, str, Any]] = []
    a, b, c = Recorder("a", log), Recorder("b", log), Recorder("c", log, output=True)
    workflow = WorkflowBuilder(start_executor=a).add_chain([a, b, c]).build()
    result = await workflow.run("x")
    assert log == [(1, "a", "x"), (2, "b", "x>a"), (3, "c", "x>a>b")]
    assert result.get_outputs() == ["x>a>b>c"]
    steps = [e.step for e in result if e.type == "superstep_started"]
    assert steps == [1, 2, 3]
    assert result.get_final_state() == WorkflowRunState.IDLE


async def test_executors_in_one_step_run_concurrently() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    class Waiter(Executor):
        @handler
        async def go(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
            started.append(self.id)
            if len(started) == 2:
                both_started.set()
            # Deadlocks (and times out) if the two executors ran one after the other.
            await asyncio.wait_for(both_started.wait(), timeout=2)
            await ctx.yield_output(self.id)

    @executor(id="split")
    async def split(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    w1, w2 = Waiter("w1"), Waiter("w2")
    workflow = WorkflowBuilder(start_executor=split).add_fan_out_edges(split, [w1, w2]).build()
    result = await workflow.run("go")
    assert sorted(result.get_outputs()) == ["w1", "w2"]


async def test_delivery_order_is_deterministic_regardless_of_timing() -> None:
    orders = []
    for delays in ((0.03, 0.0, 0.01), (0.0, 0.03, 0.02)):
        log: list[tuple[int, str, Any]] = []

        @executor(id="src")
        async def src(text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text)

        workers = [Recorder(f"w{i}", log, delay=d) for i, d in enumerate(delays)]
        join = Recorder("join", log)
        workflow = (
            WorkflowBuilder(start_executor=src).add_fan_out_edges(src, workers).add_fan_in_edges(workers, join).build()
        )
        result = await workflow.run("m")
        orders.append(result.get_outputs())
    assert orders[0] == orders[1] == ["m>w0|m>w1|m>w2"]


async def test_fan_in_waits_for_every_source() -> None:
    log: list[tuple[int, str, Any]] = []

    @executor(id="start")
    async def start(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    fast = Recorder("fast", log)
    slow1 = Recorder("slow1", log)
    slow2 = Recorder("slow2", log)
    join = Recorder("join", log)
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_fan_out_edges(start, [fast, slow1])
        .add_edge(slow1, slow2)
        .add_fan_in_edges([fast, slow2], join)
        .build()
    )
    result = await workflow.run("m")
    # fast sends in step 2 and slow2 in step 3: the join runs once, in step 4, with both.
    assert [entry for entry in log if entry[1] == "join"] == [(4, "join", ["m>fast", "m>slow1>slow2"])]
    assert result.get_outputs() == ["m>fast|m>slow1>slow2"]


async def test_conditional_edges_and_switch_case() -> None:
    @executor(id="router")
    async def router(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor(id="big")
    async def big(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"big {n}")

    @executor(id="small")
    async def small(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"small {n}")

    @executor(id="neg")
    async def neg(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"neg {n}")

    switch = (
        WorkflowBuilder(start_executor=router)
        .add_switch_case_edge_group(router, [Case(lambda n: n > 10, big), Case(lambda n: n >= 0, small), Default(neg)])
        .build()
    )
    assert (await switch.run(50)).get_outputs() == ["big 50"]
    assert (await switch.run(5)).get_outputs() == ["small 5"]
    assert (await switch.run(-1)).get_outputs() == ["neg -1"]

    async def is_big(n: int) -> bool:  # async conditions work too
        return n > 10

    cond = (
        WorkflowBuilder(start_executor=router)
        .add_edge(router, big, condition=is_big)
        .add_edge(router, small, condition=lambda n: n <= 10)
    )
    workflow = cond.build()
    assert (await workflow.run(11)).get_outputs() == ["big 11"]
    assert (await workflow.run(3)).get_outputs() == ["small 3"]


async def test_multi_selection_and_target_id() -> None:
    @executor(id="pick")
    async def pick(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)
        await ctx.send_message(-n, target_id="c")

    outs: list[str] = []

    def make(name: str) -> Any:
        @executor(id=name)
        async def sink(n: int, ctx: WorkflowContext[Never, str]) -> None:
            outs.append(f"{name}:{n}")
            await ctx.yield_output(f"{name}:{n}")

        return sink

    a, b, c = make("a"), make("b"), make("c")
    workflow = (
        WorkflowBuilder(start_executor=pick)
        .add_multi_selection_edge_group(pick, [a, b, c], lambda n, ids: [i for i in ids if n > 0 and i != "b"])
        .build()
    )
    result = await workflow.run(2)
    # 2 goes to the selected a and c; -2 is addressed to c, but the selection function picks nobody for
    # n <= 0, so it is dropped with a warning.
    assert result.get_outputs() == ["a:2", "c:2"]
    warnings = result.get_events("warning")
    assert len(warnings) == 1 and "'pick'" in warnings[0].data


async def test_shared_state_visible_to_others_from_next_step() -> None:
    seen: dict[str, Any] = {}

    @executor(id="writer")
    async def writer(text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("k", text)
        seen["own"] = ctx.get_state("k")  # read-your-writes
        await ctx.send_message(text)

    @executor(id="peer")
    async def peer(text: str, ctx: WorkflowContext[str]) -> None:
        seen["peer_same_step"] = ctx.get_state("k", "unset")
        await ctx.send_message(text)

    @executor(id="reader")
    async def reader(text: str, ctx: WorkflowContext[Never, str]) -> None:
        seen["next_step"] = ctx.get_state("k")
        ctx.delete_state("k")
        seen["deleted"] = ctx.has_state("k")
        await ctx.yield_output(text)

    @executor(id="start")
    async def start(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    workflow = (
        WorkflowBuilder(start_executor=start).add_fan_out_edges(start, [writer, peer]).add_edge(writer, reader).build()
    )
    result = await workflow.run("v")
    assert seen == {"own": "v", "peer_same_step": "unset", "next_step": "v", "deleted": False}
    assert result.get_final_state() == "idle"


async def test_step_limit_stops_a_cycle() -> None:
    @executor(id="ping")
    async def ping(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    @executor(id="pong")
    async def pong(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    workflow = WorkflowBuilder(start_executor=ping, max_iterations=7).add_edge(ping, pong).add_edge(pong, ping).build()
    events: list[WorkflowEvent] = []
    with pytest.raises(WorkflowRunError, match="max_iterations=7"):
        async for event in workflow.run(0, stream=True):
            events.append(event)
    assert max(e.step or 0 for e in events) == 7
    assert [e.type for e in events[-2:]] == ["failed", "status"]
    assert events[-1].state == WorkflowRunState.FAILED
    assert workflow.state == WorkflowRunState.FAILED


async def test_executor_failure_is_reported_and_its_step_not_committed() -> None:
    storage = InMemoryCheckpointStorage()

    @executor(id="ok")
    async def ok(text: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("written", True)
        await ctx.send_message(text)

    @executor(id="boom")
    async def boom(text: str, ctx: WorkflowContext[str]) -> None:
        raise ValueError(f"cannot handle {text}")

    @executor(id="start")
    async def start(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    @executor(id="after")
    async def after(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    workflow = (
        WorkflowBuilder(start_executor=start, checkpoint_storage=storage)
        .add_fan_out_edges(start, [ok, boom])
        .add_edge(ok, after)
        .build()
    )
    events: list[WorkflowEvent] = []
    with pytest.raises(WorkflowRunError, match="'boom' failed in superstep 2") as info:
        async for event in workflow.run("x", stream=True):
            events.append(event)
    assert isinstance(info.value.__cause__, ValueError)
    failed = [e for e in events if e.type == "executor_failed"]
    assert len(failed) == 1 and failed[0].executor_id == "boom"
    assert failed[0].data.error_type == "ValueError" and "cannot handle x" in failed[0].data.message
    assert [e.type for e in events[-2:]] == ["failed", "status"]
    assert not any(e.type == "output" for e in events)
    # The last checkpoint is from step 1; the failed step left no trace in it.
    latest = await storage.get_latest()
    assert latest is not None and latest.step == 1 and latest.shared_state == {}


async def test_non_streaming_failure_raises_with_cause() -> None:
    @executor(id="bad")
    async def bad(text: str, ctx: WorkflowContext[Never, str]) -> None:
        raise KeyError("missing")

    with pytest.raises(WorkflowRunError) as info:
        await WorkflowBuilder(start_executor=bad).build().run("x")
    assert isinstance(info.value.__cause__, KeyError)


async def test_wrong_send_or_yield_type_fails_clearly() -> None:
    @executor(id="liar")
    async def liar(text: str, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(text)

    @executor(id="sink")
    async def sink(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    workflow = WorkflowBuilder(start_executor=liar).add_edge(liar, sink).build()
    with pytest.raises(WorkflowRunError, match=r"'liar' sent a value of type str.*declares int"):
        await workflow.run("x")

    @executor(id="yielder")
    async def yielder(text: str, ctx: WorkflowContext[Never]) -> None:
        await ctx.yield_output(text)

    with pytest.raises(WorkflowRunError, match="second type argument"):
        await WorkflowBuilder(start_executor=yielder).build().run("x")

    # A bare WorkflowContext declares nothing, so nothing is checked (the reference runs such handlers).
    @executor(id="loose")
    async def loose(text: str, ctx: WorkflowContext) -> None:
        await ctx.yield_output(text)

    assert (await WorkflowBuilder(start_executor=loose).build().run("x")).get_outputs() == ["x"]


async def test_unhandled_input_type_fails_with_accepted_types() -> None:
    @executor(id="only_int")
    async def only_int(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    from agentnb.workflows import CheckpointHistory

    storage = InMemoryCheckpointStorage()
    workflow = WorkflowBuilder(start_executor=only_int, checkpoint_storage=storage).build()
    result = await workflow.run(1)
    # A message injected by hand (here: through a fork) can still have a type nobody handles.
    timeline = await CheckpointHistory(storage).timeline(run_id=result.run_id or "")
    fork = await CheckpointHistory(storage).fork(timeline[0].checkpoint_id, pending_messages=[(None, "x", "only_int")])
    with pytest.raises(WorkflowRunError, match="no handler for a message of type str; it accepts int"):
        await workflow.run(checkpoint_id=fork.checkpoint_id)


async def test_output_from_and_intermediate_outputs() -> None:
    log: list[tuple[int, str, Any]] = []

    class Both(Executor):
        @handler
        async def go(self, text: str, ctx: WorkflowContext[str, str]) -> None:
            await ctx.yield_output(f"{self.id}:{text}")
            await ctx.send_message(text)

    @executor(id="last")
    async def last(text: str, ctx: WorkflowContext[Never, str]) -> None:
        log.append((ctx.step, "last", text))
        await ctx.yield_output(f"last:{text}")

    first = Both("first")
    workflow = (
        WorkflowBuilder(start_executor=first, output_from=[last], intermediate_output_from="all_other")
        .add_edge(first, last)
        .build()
    )
    result = await workflow.run("t")
    assert result.get_outputs() == ["last:t"]
    assert result.get_intermediate_outputs() == ["first:t"]
    hidden = WorkflowBuilder(start_executor=Both("first"), output_from=[last]).add_edge("first", last).build()
    assert (await hidden.run("t")).get_intermediate_outputs() == []
    # The reference's rules: naming only intermediates publishes no output; "all_other" alone makes all progress.
    progress = WorkflowBuilder(start_executor=Both("first"), intermediate_output_from=[last]).add_edge("first", last)
    result = await progress.build().run("t")
    assert (result.get_outputs(), result.get_intermediate_outputs()) == ([], ["last:t"])
    result = await (
        WorkflowBuilder(start_executor=Both("first"), intermediate_output_from="all_other")
        .add_edge("first", last)
        .build()
        .run("t")
    )
    assert (result.get_outputs(), result.get_intermediate_outputs()) == ([], ["first:t", "last:t"])
    with pytest.raises(WorkflowValidationError, match="at least one output or intermediate executor"):
        WorkflowBuilder(start_executor=Both("first"), output_from=[]).add_edge("first", last).build()
    with pytest.raises(WorkflowValidationError, match="both output and intermediate designated"):
        WorkflowBuilder(start_executor=first, output_from=[last], intermediate_output_from=[last]).add_edge(
            first, last
        ).build()


async def test_streaming_yields_events_as_they_happen() -> None:
    gate = asyncio.Event()

    @executor(id="slow")
    async def slow(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output("early")
        await gate.wait()
        await ctx.yield_output("late")

    workflow = WorkflowBuilder(start_executor=slow).build()
    stream = workflow.run("x", stream=True)
    types = []
    async for event in stream:
        types.append(event.type)
        if event.type == "output" and event.data == "early":
            # Seen before the executor finished: events are live, not batched at the end.
            assert "executor_completed" not in types
            gate.set()
    assert types == [
        "started",
        "status",
        "superstep_started",
        "executor_invoked",
        "output",
        "output",
        "executor_completed",
        "superstep_completed",
        "status",
    ]


async def test_one_run_at_a_time_and_nothing_to_run() -> None:
    gate = asyncio.Event()

    @executor(id="wait")
    async def wait(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await gate.wait()
        await ctx.yield_output(text)

    workflow = WorkflowBuilder(start_executor=wait).build()
    task = asyncio.ensure_future(workflow.run("a"))
    await asyncio.sleep(0.01)
    with pytest.raises(WorkflowError, match="already running"):
        await workflow.run("b")
    gate.set()
    assert (await task).get_outputs() == ["a"]
    with pytest.raises(ValueError, match="Nothing to run"):
        await workflow.run()


async def test_cancelling_a_run_leaves_the_last_checkpoint_intact() -> None:
    storage = InMemoryCheckpointStorage()
    started = asyncio.Event()
    release = asyncio.Event()

    @executor(id="first")
    async def first(n: int, ctx: WorkflowContext[int]) -> None:
        ctx.set_state("first_done", n)
        await ctx.send_message(n + 1)

    @executor(id="second")
    async def second(n: int, ctx: WorkflowContext[Never, int]) -> None:
        started.set()
        await release.wait()
        await ctx.yield_output(n * 10)

    workflow = WorkflowBuilder(start_executor=first, checkpoint_storage=storage).add_edge(first, second).build()
    task = asyncio.ensure_future(workflow.run(1))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert workflow.state == WorkflowRunState.CANCELLED
    latest = await storage.get_latest()
    assert latest is not None and latest.step == 1 and latest.shared_state == {"first_done": 1}
    release.set()
    resumed = await workflow.run(checkpoint_id=latest.checkpoint_id)
    assert resumed.get_outputs() == [20]


async def test_breaking_out_of_a_stream_stops_the_run() -> None:
    storage = InMemoryCheckpointStorage()
    calls: list[int] = []

    @executor(id="loop")
    async def loop(n: int, ctx: WorkflowContext[int, int]) -> None:
        calls.append(n)
        await asyncio.sleep(0)
        await ctx.send_message(n + 1)

    workflow = WorkflowBuilder(start_executor=loop, checkpoint_storage=storage).add_edge(loop, loop).build()
    stream = workflow.run(0, stream=True)
    async for event in stream:
        if event.type == "superstep_completed" and event.step == 3:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    await asyncio.sleep(0.05)
    count = len(calls)
    await asyncio.sleep(0.05)
    assert len(calls) == count == 3  # the run stopped after the superstep the reader saw complete
    latest = await storage.get_latest()
    assert latest is not None and latest.step == 3
    assert workflow.state == WorkflowRunState.CANCELLED


async def test_a_stream_being_read_refuses_a_second_run_and_a_dropped_one_lets_it_start() -> None:
    @executor(id="count")
    async def count(n: int, ctx: WorkflowContext[int, int]) -> None:
        if n < 3:
            await ctx.send_message(n + 1)
        else:
            await ctx.yield_output(n)

    workflow = WorkflowBuilder(start_executor=count).add_edge(count, count).build()
    stream = workflow.run(0, stream=True)
    async for event in stream:
        if event.type == "superstep_completed":
            break
    # Its reader still holds the stream: a second run is refused at once (no waiting for the first to end).
    with pytest.raises(WorkflowError, match="concurrent runs are not allowed on the same instance"):
        await workflow.run(0)
    del stream  # the reader lets go: Python closes the stream and the first run stops after its superstep
    result = await workflow.run(0)
    assert result.get_outputs() == [3] and result.get_final_state() == WorkflowRunState.IDLE
    final = await workflow.run(0, stream=True).get_final_response()  # streamed, then collected
    assert final.get_outputs() == [3] and [e.state for e in final.status_timeline()][-1] == WorkflowRunState.IDLE


async def test_a_streamed_run_is_driven_by_its_reader() -> None:
    storage = InMemoryCheckpointStorage()
    calls: list[int] = []

    @executor(id="loop")
    async def loop(n: int, ctx: WorkflowContext[int, int]) -> None:
        calls.append(n)  # no await: without a reader-driven run this would finish the whole loop at once
        if n < 50:
            await ctx.send_message(n + 1)
        else:
            await ctx.yield_output(n)

    workflow = WorkflowBuilder(start_executor=loop, checkpoint_storage=storage).add_edge(loop, loop).build()
    seen_at_first_step: list[int] = []
    async for event in workflow.run(0, stream=True):
        if event.type == "superstep_completed":
            seen_at_first_step.append(len(calls))
            if event.step == 2:
                break  # no aclose(): leaving the loop is enough
    assert seen_at_first_step == [1, 2]  # each superstep's events reach the reader before the next one runs
    resumed_from = await storage.get_latest()
    assert resumed_from is not None and resumed_from.step == 2
    # The same workflow can run again straight away; the stopped run resumes from its checkpoint.
    result = await workflow.run(checkpoint_id=resumed_from.checkpoint_id)
    assert result.get_outputs() == [50] and len(calls) == 51


async def test_a_reader_failing_mid_superstep_lets_that_superstep_finish_and_checkpoint() -> None:
    storage = InMemoryCheckpointStorage()
    release = asyncio.Event()
    finished: list[str] = []

    @executor(id="talk")
    async def talk(n: int, ctx: WorkflowContext[int, str]) -> None:
        await ctx.yield_output("first")
        await release.wait()
        finished.append("talk")
        await ctx.send_message(n + 1)

    @executor(id="after")
    async def after(n: int, ctx: WorkflowContext[int, str]) -> None:
        finished.append("after")

    workflow = WorkflowBuilder(start_executor=talk, checkpoint_storage=storage).add_edge(talk, after).build()

    async def read() -> None:
        async for event in workflow.run(1, stream=True):
            if event.type == "output":
                raise RuntimeError("reader failed")

    reader = asyncio.ensure_future(read())
    await asyncio.sleep(0.01)
    release.set()
    with pytest.raises(RuntimeError, match="reader failed"):
        await reader
    for _ in range(50):
        await asyncio.sleep(0.01)
        if workflow.state == WorkflowRunState.CANCELLED:
            break
    assert finished == ["talk"]  # superstep 1 finished; superstep 2 never started
    latest = await storage.get_latest()
    assert latest is not None and latest.step == 1 and latest.pending_messages


async def test_wrong_input_type_is_refused_before_anything_runs() -> None:
    @executor(id="only_str")
    async def only_str(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    workflow = WorkflowBuilder(start_executor=only_str, name="strict").build()
    # A TypeError here, a RuntimeError in the reference: the error is both.
    with pytest.raises(
        TypeError, match="'only_str' of workflow 'strict' cannot handle input of type 'int'; it accepts str"
    ):
        await workflow.run(5)
    with pytest.raises(RuntimeError, match="cannot handle input of type 'int'"):
        await workflow.run(5)
    assert workflow.state is None  # nothing started
    assert (await workflow.run("ok")).get_outputs() == ["ok"]  # and the workflow is not left "running"
    with pytest.raises(TypeError):
        async for _ in workflow.run(5, stream=True):
            pass
    assert (await workflow.run("again")).get_outputs() == ["again"]


async def test_messages_routed_after_an_async_condition_keep_their_order() -> None:
    @executor(id="source")
    async def source(n: int, ctx: WorkflowContext[int]) -> None:
        for value in range(n, n + 4):
            await ctx.send_message(value)

    @executor(id="evens")
    async def evens(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"even {n}")

    @executor(id="every")
    async def every(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"any {n}")

    async def is_even(n: int) -> bool:
        await asyncio.sleep(0)
        return n % 2 == 0

    workflow = (
        WorkflowBuilder(start_executor=source)
        .add_edge(source, evens, condition=is_even)
        .add_edge(source, every, condition=lambda n: n != 2)
        .build()
    )
    result = await workflow.run(1)
    # The first message waits on the async condition; the rest are routed after it, one by one, in order.
    started = [e.data for e in result if e.type == "superstep_started"]
    assert started == [["source"], ["every", "evens"]]
    assert result.get_outputs() == ["any 1", "any 3", "any 4", "even 2", "even 4"]
