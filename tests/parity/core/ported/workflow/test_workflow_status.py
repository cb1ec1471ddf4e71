# Copyright (c) Microsoft. All rights reserved.

"""Tests for the ``Workflow.status`` property."""

from dataclasses import dataclass

import pytest

from agentnb import Executor, Workflow, WorkflowBuilder, WorkflowContext, WorkflowEvent, WorkflowRunState, handler, response_handler
from agentnb import Executor as _Executor


class PassThroughExecutor(Executor):
    """Executor that yields its input as a workflow output and stops."""

    @handler
    async def passthrough(self, msg: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(msg)


class FailingExecutor(Executor):
    """Executor that raises at runtime to drive the FAILED status."""

    @handler
    async def fail(self, msg: int, ctx: WorkflowContext) -> None:  # pragma: no cover - invoked via workflow
        raise RuntimeError("boom")


@dataclass
class _ApprovalRequest:
    prompt: str
    request_id: str = ""

    def __post_init__(self) -> None:
        if not self.request_id:
            import uuid

            self.request_id = str(uuid.uuid4())




def _build_passthrough_workflow() -> Workflow:
    executor = PassThroughExecutor(id="p")
    return WorkflowBuilder(start_executor=executor, output_from=[executor]).build()


def _build_failing_workflow() -> Workflow:
    # FailingExecutor has no workflow_output_types, so we leave designation
    # implicit; the deprecation warning is filtered at call sites that need it.
    return WorkflowBuilder(start_executor=FailingExecutor(id="f")).build()




async def test_status_default_is_idle_before_first_run():
    wf = _build_passthrough_workflow()
    assert wf.status is WorkflowRunState.IDLE


async def test_status_is_idle_after_successful_run():
    wf = _build_passthrough_workflow()
    await wf.run("hello")
    assert wf.status is WorkflowRunState.IDLE


async def test_status_is_failed_after_failure():
    wf = _build_failing_workflow()
    with pytest.raises(RuntimeError, match="boom"):
        await wf.run(0)
    assert wf.status is WorkflowRunState.FAILED


async def test_status_transitions_during_streaming_run():
    """Workflow.status mirrors the most recent emitted status event."""
    wf = _build_passthrough_workflow()
    observed: list[WorkflowRunState] = []

    async for event in wf.run("hi", stream=True):
        if isinstance(event, WorkflowEvent) and event.type == "status":
            # By the time a status event surfaces to the consumer, the property
            # must already reflect that state (updated in lockstep with emission).
            assert wf.status == event.state
            observed.append(event.state)  # type: ignore

    # IN_PROGRESS must precede IDLE; both must appear.
    assert WorkflowRunState.IN_PROGRESS in observed
    assert observed[-1] is WorkflowRunState.IDLE
    assert wf.status is WorkflowRunState.IDLE




