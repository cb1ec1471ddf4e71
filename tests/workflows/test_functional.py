"""Functional workflows: definitions and builds, steps (events, caching, checkpoints, resume, failures),
RunContext (human input, events, state), agents inside steps, the agent adapter, time travel and the run store."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, AgentResponse, AgentResponseUpdate
from agentnb.exceptions import CheckpointMismatchError, WorkflowError, WorkflowRunError
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore
from agentnb.workflows import (
    CheckpointHistory,
    FunctionalWorkflow,
    FunctionalWorkflowAgent,
    FunctionalWorkflowDefinition,
    InMemoryCheckpointStorage,
    RunContext,
    RunStoreCheckpointStorage,
    StepWrapper,
    WorkflowEvent,
    WorkflowRunResult,
    WorkflowRunState,
    get_run_context,
    step,
    step_timeline,
    workflow,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _types(events: list[WorkflowEvent]) -> list[str]:
    return [e.type for e in events]


class Calls:
    """Counts how often each step body really ran (a cached call does not run)."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def __call__(self, name: str) -> None:
        self.log.append(name)


# -- definition and build ---------------------------------------------------------------------------------


async def test_a_definition_is_stateless_and_each_build_is_its_own_caller() -> None:
    @workflow(description="Upper-cases.")
    async def shout(text: str) -> str:
        return text.upper()

    assert isinstance(shout, FunctionalWorkflowDefinition)
    assert shout.input_types == [str] and shout.description == "Upper-cases."
    with pytest.raises(AttributeError, match=r"build one workflow per caller first"):
        shout.run("x")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match=r"as_agent"):
        shout.as_agent()  # type: ignore[attr-defined]
    first, second = shout.build(), shout.build()
    assert isinstance(first, FunctionalWorkflow) and first is not second
    result = await first.run("hi")
    assert isinstance(result, WorkflowRunResult) and result.get_outputs() == ["HI"]
    assert first.state is WorkflowRunState.IDLE and second.state is None  # nothing shared between builds


def test_workflow_and_step_refuse_what_cannot_work() -> None:
    with pytest.raises(TypeError, match=r"Pass it to build\(\)"):
        workflow(checkpoint_storage=InMemoryCheckpointStorage())  # type: ignore[call-overload]
    with pytest.raises(ValueError, match=r"multiple non-RunContext parameters"):

        @workflow
        async def two(a: int, b: int) -> int:
            return a + b

    with pytest.raises(TypeError, match=r"async"):

        @step
        def sync(x: int) -> int:  # type: ignore[arg-type]
            return x

    with pytest.raises(TypeError, match=r"a Ray worker has no run"):

        @step(ray=True)
        async def asks(x: int, ctx: RunContext) -> int:
            return x


async def test_run_and_stream_give_the_same_event_and_result_types() -> None:
    @step
    async def fetch(url: str) -> dict[str, Any]:
        return {"url": url, "status": 200}

    @step(name="summarise")
    async def summary(data: dict[str, Any]) -> str:
        return f"[{data['status']}] {data['url']}"

    @workflow
    async def pipeline(url: str) -> str:
        return await summary(await fetch(url))

    wf = pipeline.build()
    result = await wf.run("https://x")
    stream = wf.run("https://x", stream=True)
    streamed = [event async for event in stream]
    final = await stream.get_final_response()
    assert isinstance(final, WorkflowRunResult) and final.get_outputs() == result.get_outputs() == ["[200] https://x"]
    expected = [
        "started", "status",
        "executor_invoked", "executor_completed",
        "executor_invoked", "executor_completed",
        "output", "status",
    ]  # fmt: skip
    assert _types(result) == _types(streamed) == _types(final) == expected
    assert [e.executor_id for e in result if e.type == "executor_invoked"] == ["fetch", "summarise"]
    assert result.get_final_state() is WorkflowRunState.IDLE and final.run_id != result.run_id
    assert wf.steps == ["fetch", "summarise"]


async def test_a_streamed_run_yields_each_event_as_it_happens() -> None:
    gate = asyncio.Event()

    @step
    async def first() -> str:
        return "one"

    @step
    async def second() -> str:
        await gate.wait()
        return "two"

    @workflow
    async def two_steps(_: str) -> str:
        return await first() + await second()

    stream = two_steps.build().run("go", stream=True)
    seen: list[str] = []
    async for event in stream:
        seen.append(event.type)
        if event.type == "executor_invoked" and event.executor_id == "second":
            # The first step's completion arrived while the second still waits: events are not buffered.
            assert "executor_completed" in seen
            gate.set()
    assert (await stream.get_final_response()).get_outputs() == ["onetwo"]


async def test_one_run_at_a_time_per_build() -> None:
    release = asyncio.Event()

    @workflow
    async def slow(x: int) -> int:
        await release.wait()
        return x

    wf = slow.build()
    running = asyncio.ensure_future(wf.run(1))
    await asyncio.sleep(0)
    with pytest.raises(WorkflowError, match=r"already running"):
        await wf.run(2)
    release.set()
    assert (await running).get_outputs() == [1]
    assert (await slow.build().run(3)).get_outputs() == [3]


async def test_bad_input_is_refused_before_anything_runs() -> None:
    @workflow
    async def typed(n: int) -> int:
        return n

    wf = typed.build()
    with pytest.raises(TypeError, match=r"takes int as its input; got a str"):
        await wf.run("seven")
    with pytest.raises(ValueError, match=r"Nothing to run"):
        await wf.run()
    with pytest.raises(ValueError, match=r"no pending requests"):
        await wf.run(responses={"x": 1})


# -- steps: caching, checkpoints, resume, failures -------------------------------------------------------


async def test_a_step_called_again_on_the_same_input_returns_its_cached_result() -> None:
    ran = Calls()

    @step
    async def draft(topic: str) -> str:
        ran("draft")
        return f"draft about {topic}"

    @workflow
    async def review(topic: str, ctx: RunContext) -> str:
        text = await draft(topic)
        verdict = await ctx.request_info({"draft": text}, response_type=str, request_id="verdict")
        return f"{text}: {verdict}"

    wf = review.build()
    paused = await wf.run("owls")
    assert paused.get_final_state() is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = paused.get_request_info_events()
    assert (request.request_id, request.data) == ("verdict", {"draft": "draft about owls"})
    assert [e.request_id for e in wf.pending_requests] == ["verdict"]
    done = await wf.run(responses={"verdict": "good"})
    assert done.get_outputs() == ["draft about owls: good"]
    assert ran.log == ["draft"]  # the replay took the cached result
    bypassed = done.get_events("executor_bypassed")
    assert [(e.executor_id, e.step, e.data) for e in bypassed] == [("draft", 0, "draft about owls")]
    again = review.build()
    await again.run("bats")
    with pytest.raises(TypeError, match=r"must be str, got int"):
        await again.run(responses={"verdict": 3})
    with pytest.raises(ValueError, match=r"No pending request 'other'"):
        await again.run(responses={"other": "x"})
    assert (await again.run(responses={"verdict": "fine"})).get_outputs() == ["draft about bats: fine"]


async def test_calls_are_numbered_per_step_in_call_order_also_under_gather() -> None:
    done = [asyncio.Event() for _ in range(6)]
    done[5].set()

    @step
    async def square(x: int) -> int:
        await done[x + 1].wait()  # finish in reverse order: each call waits for the one after it
        done[x].set()
        return x * x

    @workflow
    async def squares(n: int) -> list[int]:
        return list(await asyncio.gather(*(square(i) for i in range(n))))

    storage = InMemoryCheckpointStorage()
    wf = squares.build(checkpoint_storage=storage)
    result = await wf.run(5)
    assert result.get_outputs() == [[0, 1, 4, 9, 16]]
    assert wf.steps == ["square"]  # found inside the generator expression too
    assert [e.step for e in result.get_events("executor_invoked")] == [0, 1, 2, 3, 4]
    assert [e.step for e in result.get_events("executor_completed")] == [4, 3, 2, 1, 0]
    last = await storage.load(result.checkpoint_id or "")
    assert last.executor_states == {"square": {"0": 0, "1": 1, "2": 4, "3": 9, "4": 16}}
    # One checkpoint for the input, one per step call, one at the end, in one chain.
    timeline = await CheckpointHistory(storage).timeline(run_id=result.run_id)
    assert [c.step for c in timeline] == [0, 1, 2, 3, 4, 5, 5]


async def test_resume_skips_completed_steps_and_reruns_what_had_not_finished(tmp_path: Path) -> None:
    ran = Calls()
    broken = {"load": True}

    @step
    async def extract(doc: str) -> list[str]:
        ran("extract")
        return doc.split()

    @step
    async def load(words: list[str]) -> int:
        ran("load")
        if broken["load"]:
            raise ConnectionError("database unreachable")
        return len(words)

    @workflow
    async def etl(doc: str) -> int:
        return await load(await extract(doc))

    storage = RunStoreCheckpointStorage(str(tmp_path / "runs.db"))
    wf = etl.build(checkpoint_storage=storage)
    stream = wf.run("a b c", stream=True)
    with pytest.raises(WorkflowRunError, match=r"failed in step 'load': ConnectionError: database unreachable"):
        async for _ in stream:
            pass
    failed = [e for e in stream.updates if e.type == "failed"]
    assert failed and failed[0].data.executor_id == "load"
    assert [e.executor_id for e in stream.updates if e.type == "executor_failed"] == ["load"]
    infos = await storage.list_checkpoint_infos(workflow_name="etl")
    latest = infos[-1]
    assert latest.step == 1  # extract finished; load did not

    broken["load"] = False
    resumed = await etl.build(checkpoint_storage=storage).run(checkpoint_id=latest.checkpoint_id)
    assert resumed.get_outputs() == [3]
    assert ran.log == ["extract", "load", "load"]
    assert [e.executor_id for e in resumed.get_events("executor_bypassed")] == ["extract"]


async def test_an_error_in_the_workflow_body_is_not_blamed_on_a_step() -> None:
    @step
    async def ok() -> int:
        return 1

    @workflow
    async def body(_: int) -> int:
        await ok()
        raise RuntimeError("bad body")

    with pytest.raises(WorkflowRunError, match=r"failed in its own code: RuntimeError: bad body"):
        await body.build().run(0)


async def test_user_code_may_catch_a_step_error_and_go_on() -> None:
    @step
    async def flaky(x: int) -> int:
        raise ValueError(f"bad {x}")

    @workflow
    async def tolerant(x: int) -> str:
        try:
            return str(await flaky(x))
        except ValueError as e:
            return f"recovered from {e}"

    result = await tolerant.build().run(2)
    assert result.get_outputs() == ["recovered from bad 2"]
    assert _types(result.get_events("executor_failed")) == ["executor_failed"]
    assert result.get_final_state() is WorkflowRunState.IDLE


async def test_a_checkpoint_of_another_workflow_version_is_refused() -> None:
    storage = InMemoryCheckpointStorage()

    @workflow(name="same")
    async def v1(x: int) -> int:
        return x

    @workflow(name="same")
    async def v2(x: int) -> int:
        return x + 1

    result = await v1.build(checkpoint_storage=storage).run(1)
    with pytest.raises(CheckpointMismatchError, match=r"another shape"):
        await v2.build(checkpoint_storage=storage).run(checkpoint_id=result.checkpoint_id)


# -- RunContext --------------------------------------------------------------------------------------------


async def test_a_step_runs_outside_a_workflow_with_a_context_of_no_run() -> None:
    @step
    async def tag(text: str, ctx: RunContext) -> str:
        await ctx.add_event(WorkflowEvent("seen", text))
        return f"{text}:{ctx.get_state('key', 'default')}"

    ctx = RunContext("standalone", run_kwargs={"user": "ada"})
    assert await tag("a", ctx) == "a:default"
    ctx.set_state("key", "hello")
    assert await tag("b", ctx) == "b:hello"  # outside a run the step is the plain function
    assert [(e.type, e.data, e.executor_id) for e in ctx.events] == [
        ("seen", "a", "standalone"),
        ("seen", "b", "standalone"),
    ]
    assert ctx.workflow_name == "standalone" and ctx.run_kwargs == {"user": "ada"} and not ctx.is_streaming()
    with pytest.raises(RuntimeError, match="request_info needs a running workflow"):
        await ctx.request_info("ok?", response_type=bool)


async def test_run_context_state_events_and_get_run_context() -> None:
    async def helper() -> str:
        ctx = get_run_context()
        assert ctx is not None
        await ctx.add_event(WorkflowEvent("progress", "half way"))
        return ctx.workflow_name

    @step
    async def counted(x: int, ctx: RunContext) -> int:
        ctx.set_state("count", ctx.get_state("count", 0) + x)
        return x

    @workflow
    async def stateful(n: int, ctx: RunContext) -> dict[str, Any]:
        for i in range(n):
            await counted(i)
        name = await helper()
        with pytest.raises(ValueError, match=r"reserved"):
            ctx.set_state("_private", 1)
        return {"name": name, "count": ctx.get_state("count"), "streaming": ctx.is_streaming()}

    storage = InMemoryCheckpointStorage()
    result = await stateful.build(checkpoint_storage=storage).run(4)
    assert result.get_outputs() == [{"name": "stateful", "count": 6, "streaming": False}]
    [progress] = result.get_events("progress")
    assert (progress.data, progress.executor_id) == ("half way", "stateful")
    assert (await storage.load(result.checkpoint_id or "")).shared_state["count"] == 6
    assert get_run_context() is None


async def test_requests_inside_steps_get_ids_from_their_call_and_multi_round_answers_accumulate() -> None:
    @step
    async def ask(question: str, ctx: RunContext) -> str:
        return await ctx.request_info(question, response_type=str)

    @workflow
    async def interview(_: str) -> list[str]:
        return [await ask("name?"), await ask("age?")]

    wf = interview.build()
    first = await wf.run("go")
    assert [e.request_id for e in first.get_request_info_events()] == ["ask#0::0"]
    second = await wf.run(responses={"ask#0::0": "Ada"})
    assert [e.request_id for e in second.get_request_info_events()] == ["ask#1::0"]
    done = await wf.run(responses={"ask#1::0": "36"})
    assert done.get_outputs() == [["Ada", "36"]]
    with pytest.raises(ValueError, match=r"no pending requests"):
        await wf.run(responses={"ask#1::0": "37"})


async def test_a_paused_run_is_answered_from_another_process_through_the_run_store(tmp_path: Path) -> None:
    store = str(tmp_path / "shared.db")

    def proc(*args: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, str(HERE / "functional_steps.py"), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    started = proc("start", store)
    assert started["state"] == "idle_with_pending_requests"
    answered = proc("answer", store, started["checkpoint_id"])
    assert answered == {
        "outputs": ["reserved 4 x tea for 10.0"],
        "bypassed": ["price", "reserve"],
        "invoked": [],
    }


# -- agents ------------------------------------------------------------------------------------------------


async def test_agents_inside_steps_show_in_the_events_streamed_or_not() -> None:
    writer = Agent(ScriptedChatClient(["A short poem.", "A short poem."]), name="writer")

    @step
    async def write(topic: str) -> str:
        return (await writer.run(f"Write about {topic}")).text

    @workflow
    async def poem(topic: str) -> str:
        return await write(topic)

    wf = poem.build()
    result = await wf.run("cats")
    assert result.get_outputs() == ["A short poem."]
    [reply] = result.get_intermediate_outputs()
    assert isinstance(reply, AgentResponse) and reply.text == "A short poem."
    assert result.get_events("intermediate")[0].executor_id == "write"

    stream = wf.run("cats", stream=True)
    updates = [e for e in [event async for event in stream] if e.type == "intermediate"]
    assert updates and all(isinstance(e.data, AgentResponseUpdate) for e in updates)
    assert "".join(e.data.text for e in updates) == "A short poem."
    assert {e.data.author_name for e in updates} == {"writer"}


async def test_as_agent_runs_the_workflow_and_turns_requests_into_approvals() -> None:
    @workflow
    async def gated(text: str, ctx: RunContext) -> str:
        ok = await ctx.request_info({"publish": text}, response_type=bool, request_id="publish")
        return f"published: {text}" if ok else "withheld"

    agent = gated.build().as_agent(name="publisher")
    assert isinstance(agent, FunctionalWorkflowAgent) and agent.name == "publisher"
    first = await agent.run("hello")
    [request] = [c for m in first.messages for c in m.contents if c.type == "function_approval_request"]
    assert request.id == "publish"
    second = await agent.run(request.to_function_approval_response(True))
    assert second.text == "published: hello"


# -- time travel and the run store ---------------------------------------------------------------------------


async def test_fork_with_an_edited_step_result_reruns_only_what_depends_on_it() -> None:
    ran = Calls()

    @step
    async def research(topic: str) -> str:
        ran("research")
        return f"notes on {topic}"

    @step
    async def write(notes: str) -> str:
        ran("write")
        return f"essay from {notes}"

    @step
    async def title(topic: str) -> str:
        ran("title")
        return topic.title()

    @workflow
    async def essay(topic: str) -> str:
        notes = await research(topic)
        heading = await title(topic)
        return f"{heading}: {await write(notes)}"

    storage = InMemoryCheckpointStorage()
    wf = essay.build(checkpoint_storage=storage)
    original = await wf.run("owls")
    assert original.get_outputs() == ["Owls: essay from notes on owls"]
    history = CheckpointHistory(storage)
    timeline = await history.timeline(run_id=original.run_id)
    after_title = next(c for c in timeline if c.step == 2)
    fork = await history.fork(after_title.checkpoint_id, executor_states={"research": {"0": "better notes"}})
    ran.log.clear()
    forked = await wf.run(checkpoint_id=fork.checkpoint_id)
    assert forked.get_outputs() == ["Owls: essay from better notes"]
    assert ran.log == ["write"]  # research and title came from the fork; only write ran
    # Resuming from the input alone runs everything again; the original branch is untouched.
    ran.log.clear()
    again = await wf.run(checkpoint_id=timeline[0].checkpoint_id)
    assert again.get_outputs() == original.get_outputs() and ran.log == ["research", "title", "write"]
    assert (await history.load(timeline[-1].checkpoint_id)).executor_states["research"] == {"0": "notes on owls"}
    diff = await history.diff(timeline[1].checkpoint_id, timeline[2].checkpoint_id)
    assert diff.executor_states["added"] == {"title.0": "Owls"}


async def test_runs_are_recorded_in_the_run_store_like_graph_runs(tmp_path: Path) -> None:
    @step
    async def inc(x: int) -> int:
        return x + 1

    @workflow
    async def counter(x: int) -> int:
        return await inc(await inc(x))

    store = RunStore(tmp_path / "runs.db")
    result = await counter.build(run_store=store).run(1)
    run = store.get_run(result.run_id or "")
    assert run is not None and run["name"] == "counter" and run["status"] == "completed"
    assert run["metadata"]["graph"]["kind"] == "functional"
    assert [e["type"] for e in store.list_events(result.run_id or "")] == _types(result)


def test_the_step_timeline_reads_states_from_events() -> None:
    events = [
        WorkflowEvent("executor_bypassed", 1, executor_id="a", step=0),
        WorkflowEvent("executor_invoked", {"where": "ray"}, executor_id="b", step=0),
        WorkflowEvent("executor_invoked", {"where": "local"}, executor_id="b", step=1),
        WorkflowEvent("executor_completed", 4, executor_id="b", step=1),
        WorkflowEvent("executor_invoked", {"where": "local"}, executor_id="c", step=0),
        WorkflowEvent("request_info", "?", executor_id="c", step=0, request_id="c#0::0"),
    ]
    states = [(s.label, s.status, s.where) for s in step_timeline(events)]
    assert states == [
        ("a#0", "cached", "cache"),
        ("b#0", "running", "ray"),
        ("b#1", "done", "local"),
        ("c#0", "waiting for input", "local"),
    ]


def test_step_wrapper_is_the_plain_function_outside_a_run() -> None:
    @step
    async def add(a: int, b: int) -> int:
        return a + b

    assert isinstance(add, StepWrapper) and asyncio.run(add(2, 3)) == 5


async def test_rerun_one_step_with_its_neighbours_frozen_then_fork_from_it() -> None:
    ran = Calls()

    @step
    async def research(topic: str) -> str:
        ran("research")
        return f"notes on {topic}"

    @step
    async def write(notes: str) -> str:
        ran("write")
        return f"essay from {notes}"

    @step
    async def polish(text: str) -> str:
        ran("polish")
        return text + "."

    @workflow
    async def essay(topic: str) -> str:
        return await polish(await write(await research(topic)))

    storage = InMemoryCheckpointStorage()
    wf = essay.build(checkpoint_storage=storage)
    original = await wf.run("owls")
    timeline = await CheckpointHistory(storage).timeline(run_id=original.run_id)
    ran.log.clear()
    # From the end of the run: write runs again on research's saved notes; nothing else runs.
    same = await wf.rerun_step(timeline[-1].checkpoint_id, "write")
    assert ran.log == ["write"] and same.inputs == ["notes on owls"] and same.outputs == ["essay from notes on owls"]
    assert same.is_unchanged and same.original.outputs == ["essay from notes on owls"]
    edited = await wf.rerun_step(timeline[1].checkpoint_id, "write", input="better notes")
    assert ran.log == ["write", "write"]  # polish is frozen: it has no result at that checkpoint and does not run
    assert edited.edited and edited.outputs == ["essay from better notes"] and not edited.is_unchanged
    assert edited.original.outputs == ["essay from notes on owls"]  # from the checkpoint after write ran
    assert "changed" in edited.summary()
    fork = await edited.fork()
    ran.log.clear()
    continued = await wf.run(checkpoint_id=fork.checkpoint_id)
    assert continued.get_outputs() == ["essay from better notes."]
    assert ran.log == ["polish"]  # research and write came from the fork
    with pytest.raises(ValueError, match=r"Unknown step 'nope'"):
        await wf.rerun_step(timeline[-1].checkpoint_id, "nope")
    with pytest.raises(ValueError, match=r"is not reached"):
        await wf.rerun_step(timeline[0].checkpoint_id, "polish")
    assert (
        len(await storage.list_checkpoint_infos())
        == len(timeline) + 1 + len(continued.get_events("executor_completed")) + 1
    )


async def test_evals_run_a_functional_workflow_as_a_target(tmp_path: Path) -> None:
    from agentnb.evals import run_batch

    @step
    async def shout(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    @workflow
    async def loud(text: str) -> str:
        return await shout(text)

    store = RunStore(tmp_path / "runs.db")
    # The definition is the target: each concurrent case runs on its own build.
    frame = await run_batch(loud, ["a", "b", "c", "d"], concurrency=4, progress=False, store=store)
    assert frame["output"].tolist() == ["A", "B", "C", "D"] and set(frame["status"]) == {"ok"}
    for run_id in frame["run_id"]:
        run = store.get_run(run_id)
        assert run is not None and run["name"] == "loud"
