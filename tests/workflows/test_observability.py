"""Runs mirrored into the run store (for the DevUI in another process) and OpenTelemetry spans."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typing_extensions import Never

from agentnb.exceptions import WorkflowRunError
from agentnb.store import RunStore
from agentnb.workflows import (
    SQLiteCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowViz,
    executor,
)


@executor(id="upper")
async def upper(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.upper())


@executor(id="emit")
async def emit(text: str, ctx: WorkflowContext[Never, str]) -> None:
    if text == "BOOM":
        raise RuntimeError("exploded")
    await ctx.yield_output(text + "!")


async def test_runs_and_events_are_recorded_in_the_run_store(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    workflow = WorkflowBuilder(start_executor=upper, name="shouty", run_store=store).add_edge(upper, emit).build()
    result = await workflow.run("hi", include_status_events=True)
    run = store.get_run(result.run_id or "")
    assert run is not None and run["kind"] == "workflow" and run["name"] == "shouty" and run["status"] == "completed"
    events = store.list_events(result.run_id or "")
    # The store keeps every event; the awaited result leaves out only the stream's "started" event.
    assert [e["type"] for e in events] == ["started", *(e.type for e in result)]
    output = next(e for e in events if e["type"] == "output")
    assert output["executor_id"] == "emit" and json.loads(output["data"]) == "HI!"
    # The stored graph description is enough for another process to draw the workflow.
    graph = run["metadata"]["graph"]
    assert graph["graph_signature"] == workflow.graph_signature
    assert "upper" in WorkflowViz(graph).to_mermaid()

    with pytest.raises(WorkflowRunError):
        await workflow.run("boom", run_store=store)
    failed = store.list_runs(status="failed")
    assert len(failed) == 1 and "exploded" in (failed[0]["error"] or "")
    failed_events = store.list_events(failed[0]["run_id"])
    assert {"executor_failed", "failed"} <= {e["type"] for e in failed_events}
    store.close()


async def test_paused_runs_and_checkpoints_share_one_store(tmp_path: Path) -> None:
    from agentnb.workflows import Executor, handler, response_handler

    class Ask(Executor):
        @handler
        async def start(self, text: str, ctx: WorkflowContext) -> None:
            await ctx.request_info(request_data=text, response_type=str)

        @response_handler
        async def got(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(answer)

    store = RunStore(tmp_path / "one.db")
    workflow = WorkflowBuilder(
        start_executor=Ask("ask"), name="asker", run_store=store, checkpoint_storage=SQLiteCheckpointStorage(store)
    ).build()
    paused = await workflow.run("name?")
    assert store.get_run(paused.run_id or "")["status"] == "paused"  # type: ignore[index]
    assert [c["run_id"] for c in store.list_checkpoints(workflow_name="asker")] == [paused.run_id] * 2
    (request,) = paused.get_request_info_events()
    done = await workflow.run(responses={request.request_id: "Ada"})
    assert done.get_outputs() == ["Ada"]
    assert store.get_run(done.run_id or "")["metadata"]["continued_from_run"] == paused.run_id  # type: ignore[index]
    store.close()


async def test_a_failing_run_store_does_not_fail_the_run(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "gone.db")
    store.close()  # every write now raises StoreError
    workflow = WorkflowBuilder(start_executor=upper, run_store=store).add_edge(upper, emit).build()
    result = await workflow.run("still works")
    assert result.get_outputs() == ["STILL WORKS!"]
    (error,) = result.get_events("error")
    assert error.data.error_type == "StoreError"


SPAN_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from typing_extensions import Never
    from agentnb import _telemetry
    from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _telemetry.enable()

    @executor(id="a")
    async def a(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    @executor(id="b")
    async def b(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    asyncio.run(WorkflowBuilder(start_executor=a, name="traced").add_edge(a, b).build().run("x"))
    spans = [
        {"name": s.name, "id": s.context.span_id, "parent": s.parent.span_id if s.parent else None,
         "attrs": dict(s.attributes or {})}
        for s in exporter.get_finished_spans()
    ]
    print(json.dumps(spans))
    """
)


def test_spans_for_run_supersteps_and_executors() -> None:
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", SPAN_SCRIPT], capture_output=True, text=True, timeout=60, cwd=root, check=True
    )
    spans = json.loads(out.stdout.strip().splitlines()[-1])
    by_name: dict[str, list[dict]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    (run,) = by_name["workflow.run"]
    assert run["attrs"]["workflow.name"] == "traced" and run["attrs"]["workflow.steps"] == 2
    steps = by_name["workflow.superstep"]
    assert [s["attrs"]["workflow.step"] for s in steps] == [1, 2]
    assert all(s["parent"] == run["id"] for s in steps)
    executors = by_name["executor.process"]
    assert [e["attrs"]["executor.id"] for e in executors] == ["a", "b"]
    assert [e["parent"] for e in executors] == [s["id"] for s in steps]


CANCEL_SCRIPT = SPAN_SCRIPT.replace("    await ctx.yield_output(text)\n", "    await asyncio.sleep(30)\n").replace(
    'asyncio.run(WorkflowBuilder(start_executor=a, name="traced").add_edge(a, b).build().run("x"))',
    textwrap.dedent(
        """
        async def cancel_soon():
            run = WorkflowBuilder(start_executor=a, name="traced").add_edge(a, b).build().run("x")
            task = asyncio.ensure_future(run)
            await asyncio.sleep(0.2)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

        asyncio.run(cancel_soon())
        """
    ),
)


def test_a_cancelled_run_ends_its_executor_superstep_and_run_spans() -> None:
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", CANCEL_SCRIPT], capture_output=True, text=True, timeout=60, cwd=root, check=True
    )
    spans = {span["name"] + ":" + str(span["attrs"].get("executor.id", "")): span for span in json.loads(out.stdout)}
    waiting = spans["executor.process:b"]
    assert waiting["attrs"]["error.type"] == "CancelledError"
    assert spans["workflow.run:"]["attrs"]["error.type"] == "CancelledError"
    assert spans["workflow.run:"]["attrs"]["workflow.steps"] == 2


RERUN_SCRIPT = SPAN_SCRIPT.replace(
    'asyncio.run(WorkflowBuilder(start_executor=a, name="traced").add_edge(a, b).build().run("x"))',
    textwrap.dedent(
        """
        async def run_then_rerun():
            from agentnb.workflows import CheckpointHistory, InMemoryCheckpointStorage

            storage = InMemoryCheckpointStorage()
            workflow = WorkflowBuilder(start_executor=a, name="traced", checkpoint_storage=storage)
            workflow = workflow.add_edge(a, b).build()
            result = await workflow.run("x")
            history = CheckpointHistory(storage, workflow)
            timeline = await history.timeline(run_id=result.run_id)
            exporter.clear()
            await history.rerun_executor(timeline[1].checkpoint_id, "b")

        asyncio.run(run_then_rerun())
        """
    ),
)


def test_re_running_an_executor_traces_its_call_inside_the_rerun_span() -> None:
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", RERUN_SCRIPT], capture_output=True, text=True, timeout=60, cwd=root, check=True
    )
    spans = json.loads(out.stdout.strip().splitlines()[-1])
    (rerun,) = [s for s in spans if s["name"] == "workflow.rerun_executor"]
    (call,) = [s for s in spans if s["name"] == "executor.process"]
    assert call["attrs"]["executor.id"] == "b" and call["parent"] == rerun["id"]


def test_no_spans_without_instrumentation() -> None:
    script = SPAN_SCRIPT.replace("_telemetry.enable()", "")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=root, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
