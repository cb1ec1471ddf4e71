"""Re-run one step call of a functional run from a checkpoint, with every other step frozen.

The functional counterpart of :meth:`CheckpointHistory.rerun_executor`. The workflow function runs again
from the checkpoint as a rehearsal: every other step call returns its result saved in the checkpoint, a call
with no saved result does not run (its branch stops there), and only the chosen call runs, on the input the
function gives it (or an edited one). Nothing is written to the run, the storage or the run store.

The result is the graph's :class:`RerunResult`: what the call returned (its "output"), the requests and
custom events it raised, or its error, next to the original run's (from the checkpoint that holds the
call's result). ``await result.fork()`` makes a new branch holding the new result; resuming it runs what
depends on that result again (their input changed) and takes the rest from the checkpoint.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from .. import _telemetry as tel
from ..exceptions import CheckpointMismatchError, WorkflowError
from ._events import WorkflowErrorDetails, WorkflowEvent
from ._functional import StepWrapper
from ._functional_run import CURRENT_CALL, FunctionalRun, Interrupted, StepCall, fingerprint
from ._rerun import ExecutorActivity, RerunResult
from ._timetravel import CheckpointHistory

if TYPE_CHECKING:
    from ._checkpoints import CheckpointStorage, WorkflowCheckpoint
    from ._functional import FunctionalWorkflow

__all__ = ["Rehearsal", "rerun_step"]

_MISSING: Any = object()
_BOOKKEEPING = frozenset({"executor_invoked", "executor_completed", "executor_failed", "executor_bypassed"})


class _Frozen(BaseException):
    """A neighbour with no saved result: its branch of the rehearsal stops here."""


class Rehearsal:
    """Runs one step call live and answers every other call from the checkpoint (see the module docstring)."""

    def __init__(self, name: str, index: int, input: Any) -> None:
        self.name = name
        self.index = index
        self.input = input
        self.reached: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.started = False
        self.inputs: list[Any] = []
        self.natural_fingerprint = ""
        self.events: list[WorkflowEvent] = []
        self.result: Any = None
        self.error: BaseException | None = None
        self.requests: list[Any] = []

    async def call(
        self, step: StepWrapper[Any], run: FunctionalRun, index: int, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        name = step.name
        if (name, index) != (self.name, self.index):
            calls = run.cache.get(name)
            if calls is not None and index in calls:
                return calls[index]
            raise _Frozen(f"{name}#{index}")
        self.started = True
        self.natural_fingerprint = fingerprint(args, kwargs)
        if self.input is not _MISSING:
            args, kwargs = _edited(self.input, args, kwargs)
        self.inputs = [*args, *kwargs.values()]
        ctx = run.ctx
        before = set(run.pending)
        token = CURRENT_CALL.set(StepCall(name, index))
        try:
            self.result = await step.func(*step._with_ctx(ctx, args, kwargs), **kwargs)  # pyright: ignore[reportPrivateUsage]
            return self.result
        except Interrupted:
            self.requests = [r.request_data for rid, r in run.pending.items() if rid not in before]
            raise
        except Exception as e:
            self.error = e
            raise
        finally:
            CURRENT_CALL.reset(token)
            if not self.reached.done():
                self.reached.set_result(None)


def _edited(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's arguments with ``value``: the one argument itself, or ``{"args": [...], "kwargs": {...}}``."""
    if len(args) == 1 and not kwargs:
        return (value,), {}
    if not args and len(kwargs) == 1:
        return (), {next(iter(kwargs)): value}
    if isinstance(value, Mapping):
        edited = cast("Mapping[str, Any]", value)
        if not set(edited) <= {"args", "kwargs"}:
            raise ValueError(
                f"An edited input for several arguments has keys args and kwargs only, got {sorted(edited)}."
            )
        return tuple(edited.get("args", ())), dict(edited.get("kwargs", {}))
    raise ValueError(
        f"The step call takes {len(args)} positional and {len(kwargs)} keyword arguments; give input as "
        '{"args": [...], "kwargs": {...}}.'
    )


async def _original(
    storage: CheckpointStorage, checkpoint: WorkflowCheckpoint, name: str, index: int
) -> tuple[ExecutorActivity, str | None]:
    """The call's saved result: in the checkpoint itself, else in the first later checkpoint of its run."""
    key = str(index)
    candidates: list[WorkflowCheckpoint] = [checkpoint]
    infos = await storage.list_checkpoint_infos(run_id=checkpoint.run_id)
    for info in sorted(infos, key=lambda i: i.step):
        if info.step > checkpoint.step:
            candidates.append(await storage.load(info.checkpoint_id))
    for candidate in candidates:
        calls: Any = candidate.executor_states.get(name)
        if isinstance(calls, Mapping) and key in calls:
            value: Any = calls[key]  # pyright: ignore[reportUnknownVariableType]
            return ExecutorActivity(sent=[], outputs=[value], error_known=False), candidate.checkpoint_id
    return ExecutorActivity(sent=[]), None


async def rerun_step(
    workflow: FunctionalWorkflow,
    checkpoint_id: str,
    step: str,
    *,
    index: int = 0,
    input: Any = _MISSING,
    checkpoint_storage: CheckpointStorage | None = None,
) -> RerunResult:
    """Re-run call ``index`` of ``step`` from a checkpoint (see :meth:`FunctionalWorkflow.rerun_step`)."""
    storage = checkpoint_storage if checkpoint_storage is not None else workflow.checkpoint_storage
    if storage is None:
        raise ValueError("Re-running a step needs the checkpoint storage: pass checkpoint_storage=... or build() one.")
    if step not in workflow.executors:
        raise ValueError(f"Unknown step {step!r}; steps: {sorted(workflow.executors)}.")
    if workflow.is_running:
        raise WorkflowError(
            f"Workflow {workflow.name!r} is running; re-run its steps when it has finished (or paused)."
        )
    checkpoint = await storage.load(checkpoint_id)
    if checkpoint.graph_signature != workflow.graph_signature:
        raise CheckpointMismatchError(
            f"Checkpoint {checkpoint_id!r} belongs to another workflow than {workflow.name!r} (or another version)."
        )
    original, original_checkpoint_id = await _original(storage, checkpoint, step, index)
    run = FunctionalRun(workflow, None, None)
    run.restore(checkpoint)
    saved_calls = dict(run.cache.get(step, {}))
    run.cache.get(step, {}).pop(index, None)
    rehearsal = Rehearsal(step, index, input)
    run.rehearsal = rehearsal
    run.set_sink(rehearsal.events.append)
    span = tel.start_span("workflow.rerun_step", {"workflow.name": workflow.name, "executor.id": step})

    async def replay() -> None:
        try:
            await run.call_function()
        except (_Frozen, Interrupted, Exception):
            return  # a branch stopped at a frozen neighbour, a request or an error: only the chosen call matters

    try:
        with tel.use_span(span):
            task = asyncio.ensure_future(replay())
            await asyncio.wait({task, rehearsal.reached}, return_when=asyncio.FIRST_COMPLETED)
            if rehearsal.started:  # running in a gather branch that outlives the function's end
                await rehearsal.reached
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    finally:
        tel.end_span(span)
    if not rehearsal.reached.done():
        raise ValueError(
            f"Call {index} of step {step!r} is not reached from checkpoint {checkpoint_id!r} with the other steps "
            "frozen (the function ends, waits for input or needs a step call the checkpoint has no result for "
            "before it). Pick a later checkpoint, or another call."
        )
    error = rehearsal.error
    requested = bool(rehearsal.requests)
    rerun = ExecutorActivity(
        sent=[],
        outputs=[] if error is not None or requested else [rehearsal.result],
        requests=list(rehearsal.requests),
        events=[e for e in rehearsal.events if e.type not in _BOOKKEEPING and e.executor_id == step],
        error=None if error is None else WorkflowErrorDetails.from_exception(error, executor_id=step),
        error_known=True,
    )
    calls = {str(i): v for i, v in sorted(saved_calls.items())}
    calls[str(index)] = rehearsal.result
    inputs = dict(checkpoint.shared_state.get("_inputs", {}))
    inputs[f"{step}#{index}"] = rehearsal.natural_fingerprint
    fork_base = {
        "shared_state": {**checkpoint.shared_state, "_inputs": inputs},
        "executor_states": {step: calls},
        "pending_messages": list(checkpoint.pending_messages),
        "pending_requests": list(checkpoint.pending_requests.values()),
        "fan_in_buffers": {},
    }
    return RerunResult(
        checkpoint_id=checkpoint_id,
        executor_id=step,
        step=index,
        inputs=rehearsal.inputs,
        edited=input is not _MISSING,
        original=original,
        rerun=rerun,
        exception=error,
        original_checkpoint_id=original_checkpoint_id,
        _history=CheckpointHistory(storage),
        _fork_base=fork_base,
    )
