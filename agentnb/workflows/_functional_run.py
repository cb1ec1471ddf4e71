"""One functional run: its state, its checkpoints, and the RunContext the workflow function sees.

:class:`FunctionalRun` is to a functional workflow what the graph's runner is to a graph: it holds the step
results, the key/value state, the answered and pending requests and the input, writes them as a
:class:`WorkflowCheckpoint` after every step call, mirrors events into the run store, and runs the workflow
function to its end, its first unanswered request or its failure. :class:`RunContext` is the part of it the
workflow's own code may use (see ``agentnb.workflows._functional`` for the decorators and the built workflow).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import typing
from collections.abc import Callable, Coroutine, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._listeners import listening
from .._types import AgentResponse, AgentResponseUpdate
from ..exceptions import CheckpointMismatchError, SerializationError, WorkflowRunError
from ._checkpoints import CheckpointStorage, PendingMessage, PendingRequest, WorkflowCheckpoint, new_id
from ._events import WorkflowErrorDetails, WorkflowEvent, WorkflowRunState, safe_encode
from ._failure import run_failure
from ._runner import StoreRecorder
from ._tracing import traced_workflow_run
from ._typing_utils import describe, matches

if TYPE_CHECKING:
    from ..store import Store
    from ._functional import FunctionalWorkflow
    from ._functional_rerun import Rehearsal

__all__ = [
    "ACTIVE_RUN",
    "CURRENT_CALL",
    "AgentEvents",
    "FunctionalRun",
    "Interrupted",
    "RunContext",
    "StepCall",
    "fingerprint",
    "get_run_context",
]

logger = logging.getLogger("agentnb.workflows")

# Where a checkpoint keeps the answers given to requests (state keys starting with "_" are the framework's).
_ANSWERS = "_answers"
# ... and the fingerprint of each step call's input, so a call whose input changed (a fork edited what came
# before it) runs again instead of returning a result computed from other input.
_INPUTS = "_inputs"

ACTIVE_RUN: ContextVar[RunContext | None] = ContextVar("agentnb_functional_run", default=None)
CURRENT_CALL: ContextVar[StepCall | None] = ContextVar("agentnb_functional_step", default=None)


def get_run_context() -> RunContext | None:
    """The :class:`RunContext` of the functional run this code is part of, or ``None`` outside one.

    Example:
        >>> get_run_context() is None
        True
    """
    return ACTIVE_RUN.get()


class Interrupted(BaseException):
    """Unwinds the workflow function when it waits for a human (a BaseException: ``except Exception`` in user
    code must not swallow it)."""

    def __init__(self, request_id: str) -> None:
        super().__init__(f"the run waits for the answer to request {request_id!r}")
        self.request_id = request_id


@dataclass
class StepCall:
    """One running call of a step (what ``request_info`` inside it is attributed to)."""

    name: str
    index: int
    requests: int = 0


class FunctionalRun:
    """The state of one ``FunctionalWorkflow.run`` call: what a checkpoint captures and restores."""

    def __init__(self, workflow: FunctionalWorkflow, storage: CheckpointStorage | None, store: Store | None) -> None:
        self.workflow = workflow
        self.run_id = new_id()
        self.storage = storage
        self.message: Any = None
        self.cache: dict[str, dict[int, Any]] = {}
        self.inputs: dict[str, str] = {}  # "name#index" -> fingerprint of the arguments the result came from
        self.counters: dict[str, int] = {}
        self.body_requests = 0
        self.state: dict[str, Any] = {}
        self.pending: dict[str, PendingRequest] = {}
        self.completed = 0
        self.last_checkpoint_id: str | None = None
        self.metadata: dict[str, Any] = {}
        self.streaming = False
        self.kwargs: dict[str, Any] = {}
        self.final = WorkflowRunState.STARTED
        self.recorder = StoreRecorder(store, self.run_id) if store is not None else None
        self.failed_in: dict[int, str] = {}  # id(exception) -> the step it came from
        self.in_flight: dict[asyncio.Task[Any], int] = {}  # tasks running step calls (nested calls count)
        self.answers: dict[str, Any] = {}  # answered requests, kept for every later run of this one
        self._lock = asyncio.Lock()
        self._sink: Callable[[WorkflowEvent], Any] = _drop
        self.rehearsal: Rehearsal | None = None  # set while one step call is re-run with its neighbours frozen
        self.ctx = RunContext(self)

    # -- setup --------------------------------------------------------------------------------------------
    def restore(self, checkpoint: WorkflowCheckpoint) -> None:
        """Take over a checkpoint's state (the caller checked its signature)."""
        self.cache = {}
        for name, calls in checkpoint.executor_states.items():
            if not isinstance(calls, Mapping):
                raise CheckpointMismatchError(
                    f"Checkpoint {checkpoint.checkpoint_id!r} holds {type(calls).__name__} for step {name!r}; a "
                    "functional checkpoint keeps each step's results by call index. It was not written by a "
                    "functional workflow."
                )
            self.cache[name] = {int(index): value for index, value in typing.cast("Mapping[str, Any]", calls).items()}
        self.state = dict(checkpoint.shared_state)
        inputs = self.state.pop(_INPUTS, {})
        self.inputs = (
            {str(k): str(v) for k, v in typing.cast("Mapping[str, Any]", inputs).items()}
            if isinstance(inputs, Mapping)
            else {}
        )
        answers = self.state.pop(_ANSWERS, {})
        self.answers = dict(typing.cast("Mapping[str, Any]", answers)) if isinstance(answers, Mapping) else {}
        self.pending = dict(checkpoint.pending_requests)
        self.message = checkpoint.pending_messages[0].data if checkpoint.pending_messages else None
        self.completed = checkpoint.step
        self.last_checkpoint_id = checkpoint.checkpoint_id
        self.metadata = {"resumed_from": checkpoint.checkpoint_id}

    def continue_from(self, previous: FunctionalRun) -> None:
        """Carry over a paused run of this process (``run(responses=...)`` without a checkpoint)."""
        self.cache = {name: dict(calls) for name, calls in previous.cache.items()}
        self.inputs = dict(previous.inputs)
        self.state = dict(previous.state)
        self.answers = dict(previous.answers)
        self.pending = dict(previous.pending)
        self.message = previous.message
        self.completed = previous.completed
        self.last_checkpoint_id = previous.last_checkpoint_id
        self.metadata = {"continued_from_run": previous.run_id}

    def apply_responses(self, responses: Mapping[str, Any]) -> None:
        """Check every answer against its request (so a bad one changes nothing), then keep them for the run."""
        for request_id, value in responses.items():
            request = self.pending.get(request_id)
            if request is None:
                pending = ", ".join(repr(r) for r in self.pending) or "none"
                raise ValueError(f"No pending request {request_id!r}; pending requests: {pending}.")
            if not matches(value, request.response_type):
                raise TypeError(
                    f"The response to request {request_id!r} must be {describe(request.response_type)}, "
                    f"got {type(value).__qualname__}."
                )
        self.answers.update(responses)

    # -- events ---------------------------------------------------------------------------------------
    def set_sink(self, sink: Callable[[WorkflowEvent], Any]) -> None:
        """Where events go (the run's caller; a rehearsal's list)."""
        self._sink = sink

    def emit(self, event: WorkflowEvent) -> None:
        self._sink(event)
        if self.recorder is not None:
            self.recorder.add(event)

    # -- steps ------------------------------------------------------------------------------------------
    def next_index(self, name: str) -> int:
        index = self.counters.get(name, 0)
        self.counters[name] = index + 1
        return index

    def cached(self, name: str, index: int, digest: str) -> tuple[bool, Any]:
        """The saved result of a step call, if it ran before on the same input."""
        calls = self.cache.get(name)
        if calls is None or index not in calls:
            return False, None
        if self.inputs.get(f"{name}#{index}", digest) != digest:
            return False, None
        return True, calls[index]

    async def step_done(self, name: str, index: int, digest: str, result: Any) -> None:
        self.cache.setdefault(name, {})[index] = result
        self.inputs[f"{name}#{index}"] = digest
        self.completed += 1
        self.emit(WorkflowEvent("executor_completed", result, executor_id=name, step=index))
        if self.storage is not None:
            await self.checkpoint()
        if self.recorder is not None:
            await self._record(self.recorder.flush())

    # -- checkpoints --------------------------------------------------------------------------------------
    def snapshot(self, state_name: str) -> WorkflowCheckpoint:
        return WorkflowCheckpoint(
            checkpoint_id=new_id(),
            workflow_name=self.workflow.name,
            graph_signature=self.workflow.graph_signature,
            run_id=self.run_id,
            parent_id=self.last_checkpoint_id,
            step=self.completed,
            pending_messages=[PendingMessage(None, self.message, self.workflow.name)],
            executor_states={name: {str(i): v for i, v in sorted(calls.items())} for name, calls in self.cache.items()},
            shared_state=self._state_to_save(),
            pending_requests=dict(self.pending),
            run_state=state_name,
            metadata=dict(self.metadata) if self.last_checkpoint_id is None or self.metadata else {},
        )

    def _state_to_save(self) -> dict[str, Any]:
        state = dict(self.state)
        if self.answers:
            state[_ANSWERS] = dict(self.answers)
        if self.inputs:
            state[_INPUTS] = dict(self.inputs)
        return state

    async def checkpoint(self, state_name: str = WorkflowRunState.IN_PROGRESS.value) -> str:
        assert self.storage is not None
        async with self._lock:  # steps finishing together still write one chain, each checkpoint on the last
            checkpoint = self.snapshot(state_name)
            try:
                await self.storage.save(checkpoint)
            except SerializationError as e:
                raise WorkflowRunError(
                    f"Cannot write the checkpoint after {self.completed} step calls of workflow "
                    f"{self.workflow.name!r}: {e} Step results, state and the input must be serializable "
                    "(see agentnb._serialization)."
                ) from e
            self.last_checkpoint_id = checkpoint.checkpoint_id
            self.metadata = {}
            return checkpoint.checkpoint_id

    async def _record(self, operation: Coroutine[Any, Any, None]) -> None:
        # The run store is a mirror for viewers: if it fails, say so with an "error" event and run on.
        try:
            await operation
        except Exception as e:
            self.recorder = None
            self.emit(WorkflowEvent("error", WorkflowErrorDetails.from_exception(e)))

    # -- the run --------------------------------------------------------------------------------------------
    @traced_workflow_run(steps=lambda run: run.completed)
    async def execute(self, sink: Callable[[WorkflowEvent], Any]) -> None:
        """Run the workflow function to its end, its first unanswered request, or its failure."""
        self._sink = sink
        workflow = self.workflow
        error: BaseException | None = None
        status = "completed"
        try:
            if self.recorder is not None:
                await self._record(self.recorder.start(workflow, self.metadata))
            self.emit(WorkflowEvent("started", self.run_id))
            self.final = WorkflowRunState.IN_PROGRESS
            self.emit(WorkflowEvent("status", state=WorkflowRunState.IN_PROGRESS))
            if self.storage is not None and self.last_checkpoint_id is None:
                await self.checkpoint()  # the input alone: a resume from here runs everything
            waiting = False
            try:
                result = await self.call_function()
            except Interrupted:
                waiting = True
                result = None
            await self._settle()
            if self.pending:
                waiting = True
            if not waiting and result is not None:
                self.emit(WorkflowEvent("output", result, executor_id=workflow.name))
            final = WorkflowRunState.IDLE_WITH_PENDING_REQUESTS if waiting else WorkflowRunState.IDLE
            if self.storage is not None:
                await self.checkpoint(final.value)
            status = "paused" if waiting else "completed"
            self.final = final
            self.emit(WorkflowEvent("status", state=final))
        except asyncio.CancelledError as e:
            error, status = e, "cancelled"
            self.final = WorkflowRunState.CANCELLED
            raise
        except Exception as e:
            error, status = e, "failed"
            await self._settle()
            failed_step = self._failed_step(e)
            self.emit(WorkflowEvent("failed", WorkflowErrorDetails.from_exception(e, executor_id=failed_step)))
            self.final = WorkflowRunState.FAILED
            self.emit(WorkflowEvent("status", state=WorkflowRunState.FAILED))
            if isinstance(e, WorkflowRunError):
                raise
            where = f"in step {failed_step!r}" if failed_step is not None else "in its own code"
            raise run_failure(e, f"Workflow {workflow.name!r} failed {where}: {type(e).__name__}: {e}") from e
        finally:
            if self.recorder is not None:
                await self.recorder.close(status, error)

    async def call_function(self) -> Any:
        definition = self.workflow.definition
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for name, takes_ctx, keyword in definition.parameters:
            value = self.ctx if takes_ctx else self.message
            if keyword:
                kwargs[name] = value
            else:
                args.append(value)
        token = ACTIVE_RUN.set(self.ctx)
        listener = AgentEvents(self, None) if definition.listen_to_agents else None
        try:
            with listening(listener):
                return await definition.func(*args, **kwargs)
        finally:
            ACTIVE_RUN.reset(token)

    async def _settle(self) -> None:
        """Let step calls the function left running (a gather branch that outlived an error) finish."""
        current = asyncio.current_task()
        while True:
            others = {t for t in self.in_flight if t is not current and not t.done()}
            if not others:
                return
            await asyncio.wait(others)

    def _failed_step(self, error: BaseException) -> str | None:
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            name = self.failed_in.get(id(current))
            if name is not None:
                return name
            current = current.__cause__ or current.__context__
        return None


def _drop(event: WorkflowEvent) -> None:
    return None


def fingerprint(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """A short digest of a step call's arguments (their tagged JSON; ``repr`` for values that have none)."""
    if not args and not kwargs:
        return ""
    text = json.dumps(safe_encode([list(args), kwargs]), sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class AgentEvents:
    """Reports the replies of agents run inside a step (or the workflow body) as ``intermediate`` events."""

    def __init__(self, run: FunctionalRun, step_name: str | None) -> None:
        self.run = run
        self.executor_id = step_name or run.workflow.name
        self.wants_updates = run.streaming
        self.author: str | None = None

    def on_update(self, update: AgentResponseUpdate) -> None:
        # Readers group streamed updates by author (merge_streamed_outputs): name every one, as the graph does.
        if update.author_name is None:
            update.author_name = self.author or self.executor_id
        else:
            self.author = update.author_name
        self.run.emit(WorkflowEvent("intermediate", update, executor_id=self.executor_id))

    def on_response(self, response: AgentResponse) -> None:
        self.run.emit(WorkflowEvent("intermediate", response, executor_id=self.executor_id))


class RunContext:
    """What a functional workflow (or a step) can ask of its run: human input, custom events, key/value state.

    Declare a parameter annotated ``RunContext`` (or named ``ctx``) to have it injected, or call
    :func:`get_run_context` anywhere inside a run.

    Example:
        ```python
        from agentnb.workflows import RunContext, workflow

        @workflow
        async def review(draft: str, ctx: RunContext) -> str:
            verdict = await ctx.request_info({"draft": draft}, response_type=str, request_id="review")
            ctx.set_state("verdict", verdict)
            return f"{draft} ({verdict})"

        wf = review.build()
        paused = await wf.run("text")                          # waits: paused.get_request_info_events()
        done = await wf.run(responses={"review": "approved"})  # done.get_outputs() == ['text (approved)']
        ```

    ``RunContext("name")`` makes a context of no run, for calling a step outside a workflow (as the reference
    allows): it keeps state and the events added to it (``events``), and ``request_info`` needs a real run.
    """

    def __init__(
        self, run: FunctionalRun | str, *, streaming: bool = False, run_kwargs: dict[str, Any] | None = None
    ) -> None:
        self._run: FunctionalRun | None = None if isinstance(run, str) else run
        self._name = run if isinstance(run, str) else run.workflow.name
        self._run_id = new_id() if isinstance(run, str) else run.run_id
        self._streaming = streaming
        self._kwargs = dict(run_kwargs or {})
        self._state: dict[str, Any] = {}
        #: Events added to a context of no run (a run's context publishes them into the run instead).
        self.events: list[WorkflowEvent] = []

    @property
    def workflow_name(self) -> str:
        """The name of the running workflow."""
        return self._name

    @property
    def run_id(self) -> str:
        """The id of this run (as in its events, checkpoints and run store record)."""
        return self._run_id

    @property
    def run_kwargs(self) -> dict[str, Any]:
        """The extra keyword arguments ``run(...)`` was called with."""
        return dict(self._run.kwargs if self._run is not None else self._kwargs)

    def is_streaming(self) -> bool:
        """Whether the run was started with ``stream=True``."""
        return self._run.streaming if self._run is not None else self._streaming

    async def request_info(self, request_data: Any, response_type: Any, *, request_id: str | None = None) -> Any:
        """Ask for outside input: the run pauses here until ``run(responses={request_id: value})`` answers.

        The first time, the run ends with a ``request_info`` event (state ``idle_with_pending_requests``);
        when answered, the workflow function runs again from the top (steps return their cached results) and
        this call returns the answer. Without ``request_id`` the id is derived from where the call is (the
        step call and how many requests it made before, or the order in the workflow body: ``auto::0``), so
        the same call gets the same id every time the function runs.
        """
        run = self._run
        if run is None:
            raise RuntimeError(
                f"RunContext({self._name!r}) belongs to no run: request_info needs a running workflow to pause."
            )
        call = CURRENT_CALL.get()
        if request_id is not None:
            rid = request_id
        elif call is not None:
            rid = f"{call.name}#{call.index}::{call.requests}"
            call.requests += 1
        else:
            rid = f"auto::{run.body_requests}"
            run.body_requests += 1
        if rid in run.answers:
            run.pending.pop(rid, None)
            return run.answers[rid]
        executor_id = call.name if call is not None else run.workflow.name
        request = PendingRequest(rid, executor_id, request_data, response_type, run.completed)
        run.pending[rid] = request
        run.emit(
            WorkflowEvent(
                "request_info",
                request_data,
                executor_id=executor_id,
                step=call.index if call is not None else None,
                request_id=rid,
                response_type=response_type,
            )
        )
        raise Interrupted(rid)

    async def add_event(self, event: WorkflowEvent) -> None:
        """Publish a custom event into the run's events (``WorkflowEvent("my_type", data)``)."""
        if event.executor_id is None:
            call = CURRENT_CALL.get()
            event.executor_id = call.name if call is not None else self._name
        if self._run is None:
            self.events.append(event)
        else:
            self._run.emit(event)

    def get_state(self, key: str, default: Any = None) -> Any:
        """A value of the run's key/value state (kept across pauses and in checkpoints)."""
        return (self._run.state if self._run is not None else self._state).get(key, default)

    def set_state(self, key: str, value: Any) -> None:
        """Set a value of the run's key/value state (it must be serializable when checkpoints are written).

        Raises:
            ValueError: ``key`` starts with ``_`` (kept for the framework, as in the reference).
        """
        if key.startswith("_"):
            raise ValueError(f"State key {key!r} starts with '_', which is reserved; use a name without it.")
        (self._run.state if self._run is not None else self._state)[key] = value

    def __repr__(self) -> str:
        return f"RunContext(workflow={self.workflow_name!r}, run_id={self.run_id!r})"
