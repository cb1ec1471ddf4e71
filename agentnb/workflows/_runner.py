"""The superstep runner: delivers messages in bulk-synchronous steps and writes checkpoints between them.

One :class:`RunContext` drives one call of ``Workflow.run``. Each superstep:

1. routes the messages sent in the previous step (plus answers to ``request_info``) through the edge
   groups, in a deterministic order (the order executors were invoked, then the order they sent);
2. invokes every executor that received something, concurrently; each executor handles its own
   messages one after another, in delivery order;
3. commits what the step produced — outgoing messages, shared-state writes (in executor order) and new
   requests — only if no executor failed, so a failed step never leaks half its effects;
4. writes a checkpoint (every ``checkpoint_every`` steps and always when the run goes idle).

The run ends when no messages are left (``idle``), when only unanswered requests remain
(``idle_with_pending_requests``), when an executor fails (``failed``, raising ``WorkflowRunError``), or when
``max_iterations`` supersteps ran (a guard against cycles that never exit). Events go to a *sink*: a
list for ``await workflow.run(...)``, a queue for ``stream=True``; both paths share this one implementation.

:class:`Runner` runs the same supersteps over explicit parts (edge groups, executors, a shared-state dict)
with a :class:`~agentnb.workflows.RunnerContext` holding the waiting messages and the events between them,
the reference's way of driving a workflow runner.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from types import CoroutineType
from typing import TYPE_CHECKING, Any

from .._provenance import run_metadata
from ..exceptions import CheckpointMismatchError, SerializationError, WorkflowRunError
from ._checkpoints import CheckpointStorage, PendingMessage, PendingRequest, WorkflowCheckpoint, new_id, utc_now
from ._context import DELETED, WorkflowContext
from ._eager import gather_eagerly
from ._events import WorkflowErrorDetails, WorkflowEvent, WorkflowRunState, step_event
from ._failure import run_failure
from ._tracing import traced_executor_call, traced_superstep, traced_workflow_run, tracing_on
from ._typing_utils import describe, matches

if TYPE_CHECKING:
    from ..store import Store
    from ._edge_runner import EdgeRunner
    from ._edges import EdgeGroup, WorkflowMessage
    from ._executor import Executor
    from ._functional import FunctionalWorkflow
    from ._handlers import HandlerSpec
    from ._runner_context import RunnerContext
    from ._workflow import Workflow

__all__ = ["Delivery", "Invocation", "RunContext", "Runner", "StoreRecorder"]

logger = logging.getLogger("agentnb.workflows")

# How RunContext._supersteps ended: no message left, one superstep run (``once``), or stopped by the gate.
IDLE, STEPPED, STOPPED = 0, 1, 2

DeliveryCall = Callable[["RunContext", "Executor", "Invocation", "Delivery"], "Awaitable[object] | None"]
"""How a superstep handles one delivery: :meth:`RunContext._call`, or the telemetry layer's wrapping of it."""


class Delivery:
    """One message (or one answer to a request) to hand to one executor in a superstep."""

    __slots__ = ("payload", "request", "source_id", "target_id")

    def __init__(self, target_id: str, source_id: str | None, payload: Any, request: PendingRequest | None = None):
        self.target_id = target_id
        self.source_id = source_id
        self.payload = payload
        self.request = request


class Invocation:
    """One executor's work in one superstep: what it sent, wrote and requested (committed at step end)."""

    __slots__ = ("error", "executor", "executor_id", "outbox", "requests", "run", "state_writes")

    def __init__(self, run: RunContext, executor: Executor) -> None:
        self.run = run
        self.executor = executor
        self.executor_id = executor.id
        self.outbox: list[tuple[Any, str | None]] = []
        self.state_writes: dict[str, Any] = {}
        self.requests: list[PendingRequest] = []
        self.error: BaseException | None = None

    def yield_output(self, value: Any) -> None:
        kind = self.run.workflow.output_kind(self.executor_id)
        if kind is not None:
            self.run.emit(step_event(kind, value, self.executor_id, self.run.step))

    def request_info(self, request_data: Any, response_type: Any, request_id: str | None) -> str:
        if self.executor.response_handler_for_types(request_data, response_type) is None:
            raise TypeError(
                f"Executor {self.executor_id!r} requested info with data of type {type(request_data).__qualname__} "
                f"and response type {describe(response_type)}, but has no @response_handler taking "
                f"(original_request: {type(request_data).__qualname__}, response: {describe(response_type)}, ctx)."
            )
        rid = request_id or new_id()
        if rid in self.run.pending_requests or any(r.request_id == rid for r in self.requests):
            raise ValueError(f"Request id {rid!r} is already pending; use a unique request_id.")
        request = PendingRequest(rid, self.executor_id, request_data, response_type, self.run.step)
        self.requests.append(request)
        self.run.emit(
            WorkflowEvent(
                "request_info",
                request_data,
                executor_id=self.executor_id,
                step=self.run.step,
                request_id=rid,
                response_type=response_type,
            )
        )
        return rid


class StoreRecorder:
    """Mirrors a run's events into the run store, batched per superstep (off the hot path)."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.buffer: list[dict[str, Any]] = []

    async def start(self, workflow: Workflow | FunctionalWorkflow, metadata: dict[str, Any]) -> None:
        await self.store.astart_run(
            self.run_id,
            kind="workflow",
            name=workflow.name,
            started_at=utc_now(),
            metadata={**run_metadata(), **metadata, "graph": workflow.to_dict()},
        )

    def add(self, event: WorkflowEvent) -> None:
        record = event.to_dict()
        # The store reads a str as JSON text already; encode so text payloads ("hello") are stored as strings.
        record["data"] = json.dumps(record.get("data"), ensure_ascii=False, default=repr)
        self.buffer.append(record)

    async def flush(self) -> None:
        if self.buffer:
            rows, self.buffer = self.buffer, []
            await self.store.aadd_events(self.run_id, rows)

    async def finish(self, status: str, error: str | None) -> None:
        await self.flush()
        await self.store.afinish_run(self.run_id, status=status, ended_at=utc_now(), error=error)

    def finish_sync(self, status: str, error: str | None) -> None:
        # Synchronous so it also runs while a cancelled task unwinds (an await there could be cancelled again).
        rows, self.buffer = self.buffer, []
        if rows:
            self.store.add_events(self.run_id, rows)
        self.store.finish_run(self.run_id, status=status, ended_at=utc_now(), error=error)

    async def close(self, status: str, error: BaseException | None) -> None:
        """Record how the run ended; a store failure is logged, never raised (the run's outcome matters more).

        A cancelled run is recorded synchronously: the event loop may not run another await for it.
        """
        reason = None if error is None else f"{type(error).__name__}: {error}"
        try:
            if isinstance(error, asyncio.CancelledError):
                self.finish_sync(status, reason)
            else:
                await self.finish(status, reason)
        except Exception as store_error:
            logger.warning("Could not record workflow run %s in the run store: %s", self.run_id, store_error)


class RunContext:
    """The state of one ``Workflow.run`` call; also what a checkpoint captures and restores.

    Extension point: orchestrations read ``shared_state`` and ``pending_requests`` through the workflow's
    events and checkpoints, never by reaching in here.
    """

    def __init__(
        self,
        workflow: Workflow,
        *,
        storage: CheckpointStorage | None,
        store: Store | None,
        streaming: bool,
    ) -> None:
        self.workflow = workflow
        self.run_id = new_id()
        self.storage = storage
        self.streaming = streaming
        self.step = 0
        self.steps_this_run = 0
        self.pending: list[PendingMessage] = []
        self.shared_state: dict[str, Any] = {}
        self.fan_in_buffers: dict[str, dict[str, list[Any]]] = {}
        self.pending_requests: dict[str, PendingRequest] = {}
        self.responses: list[tuple[PendingRequest, Any]] = []
        self.last_checkpoint_id: str | None = None
        self.last_checkpointed_step: int | None = None
        self.metadata: dict[str, Any] = {}
        self.state = WorkflowRunState.STARTED
        self.recorder = StoreRecorder(store, self.run_id) if store is not None else None
        self._sink: Callable[[WorkflowEvent], Any] = _drop
        # Asked between supersteps whether to go on; a streamed run waits here for its reader (False: stop).
        self.gate: Callable[[], Awaitable[bool]] | None = None
        self._out: list[Delivery] = []  # the deliveries of the superstep being routed

    # -- setup --------------------------------------------------------------------------------------------
    def start_fresh(self, message: Any) -> None:
        """Queue the workflow input for the start executor."""
        self.pending = [PendingMessage(None, message, self.workflow.start_executor_id)]

    async def restore(self, checkpoint: WorkflowCheckpoint) -> None:
        """Take over a checkpoint's state (the caller has checked the graph signature)."""
        self.step = checkpoint.step
        self.pending = list(checkpoint.pending_messages)
        self.shared_state = dict(checkpoint.shared_state)
        self.fan_in_buffers = {k: {s: list(v) for s, v in b.items()} for k, b in checkpoint.fan_in_buffers.items()}
        self.pending_requests = dict(checkpoint.pending_requests)
        self.last_checkpoint_id = checkpoint.checkpoint_id
        self.last_checkpointed_step = checkpoint.step
        executors = self.workflow.executors
        for executor_id, state in checkpoint.executor_states.items():
            executor = executors.get(executor_id)
            if executor is not None:
                result = executor.on_checkpoint_restore(state)
                if inspect.isawaitable(result):
                    await result

    def continue_from(self, previous: RunContext) -> None:
        """Carry over the in-memory state of a paused run (``run(responses=...)`` without a checkpoint)."""
        self.step = previous.step
        self.pending = previous.pending
        self.shared_state = previous.shared_state
        self.fan_in_buffers = previous.fan_in_buffers
        self.pending_requests = previous.pending_requests
        self.last_checkpoint_id = previous.last_checkpoint_id
        self.last_checkpointed_step = previous.last_checkpointed_step

    def apply_responses(self, responses: dict[str, Any]) -> None:
        """Check every answer first (so a bad one changes nothing), then queue them for the next step."""
        checked: list[tuple[PendingRequest, Any]] = []
        for request_id, value in responses.items():
            request = self.pending_requests.get(request_id)
            if request is None:
                pending = ", ".join(repr(r) for r in self.pending_requests) or "none"
                raise ValueError(f"No pending request {request_id!r}; pending requests: {pending}.")
            if not matches(value, request.response_type):
                raise TypeError(
                    f"The response to request {request_id!r} must be {describe(request.response_type)}, "
                    f"got {type(value).__qualname__}."
                )
            checked.append((request, value))
        for request, value in checked:
            del self.pending_requests[request.request_id]
            self.responses.append((request, value))

    # -- events -----------------------------------------------------------------------------------------
    def emit(self, event: WorkflowEvent) -> None:
        """Hand an event to the caller (and to the run store, when recording)."""
        self._sink(event)
        if self.recorder is not None:
            self.recorder.add(event)

    def _emitter(self) -> Callable[[WorkflowEvent], Any]:
        """:meth:`emit` as one call, for a superstep's own events: the caller's sink itself while nothing records."""
        return self._sink if self.recorder is None else self.emit

    def _status(self, state: WorkflowRunState) -> None:
        self.state = state
        self.emit(WorkflowEvent("status", step=self.step, state=state))

    # -- the run ------------------------------------------------------------------------------------------
    @traced_workflow_run(steps=lambda run: run.step)
    async def execute(self, sink: Callable[[WorkflowEvent], Any], *, fresh: bool) -> None:
        """Run supersteps until the workflow is idle, paused for input, failed or over its step limit."""
        self._sink = sink
        workflow = self.workflow
        error: BaseException | None = None
        status = "completed"
        try:
            if self.recorder is not None:
                await self._record(self.recorder.start(workflow, self.metadata))
            self.emit(WorkflowEvent("started", self.run_id, step=self.step))
            self._status(WorkflowRunState.IN_PROGRESS)
            for request in self.pending_requests.values():
                # Still-open requests carried over from a checkpoint or paused run are announced again.
                self.emit(
                    WorkflowEvent(
                        "request_info",
                        request.request_data,
                        executor_id=request.executor_id,
                        step=request.step,
                        request_id=request.request_id,
                        response_type=request.response_type,
                    )
                )
            if fresh and self.storage is not None:
                await self._checkpoint()
            stopped = await self._supersteps() == STOPPED
            if self.storage is not None and self.last_checkpointed_step != self.step:
                await self._checkpoint()
            if stopped:  # the reader left: the run ends here and can resume from its last checkpoint
                final, status = WorkflowRunState.CANCELLED, "cancelled"
            elif self.pending_requests:
                final, status = WorkflowRunState.IDLE_WITH_PENDING_REQUESTS, "paused"
            else:
                final, status = WorkflowRunState.IDLE, "completed"
            self._status(final)
        except asyncio.CancelledError as e:
            error, status = e, "cancelled"
            self.state = WorkflowRunState.CANCELLED
            raise
        except Exception as e:
            error, status = e, "failed"
            cause = e.__cause__ if isinstance(e, WorkflowRunError) and e.__cause__ is not None else e
            self.emit(WorkflowEvent("failed", WorkflowErrorDetails.from_exception(cause), step=self.step))
            self._status(WorkflowRunState.FAILED)
            if isinstance(e, WorkflowRunError):
                raise
            raise run_failure(e, f"Workflow {workflow.name!r} failed: {type(e).__name__}: {e}") from e
        finally:
            if self.recorder is not None:
                await self.recorder.close(status, error)

    async def _supersteps(self, once: bool = False) -> int:
        """Run supersteps until no message is left (``IDLE``) or the gate says stop (``STOPPED``).

        With ``once``, run at most one (``STEPPED`` when it ran). One coroutine for the whole run, not one per
        superstep.
        """
        workflow = self.workflow
        # Chosen once: a run store that fails mid-run is dropped, and emit() itself then skips it.
        emit = self._emitter()
        executors = workflow.executors
        while True:
            routed = self._route()
            deliveries = routed if isinstance(routed, list) else await routed
            if not deliveries:
                return IDLE
            if self.steps_this_run >= workflow.max_iterations:
                raise WorkflowRunError(
                    f"Workflow {workflow.name!r} did not finish within max_iterations={workflow.max_iterations} "
                    f"supersteps (messages are still pending for {sorted({d.target_id for d in deliveries})}); a cycle "
                    "probably has no exit. Add a condition that ends it, or raise max_iterations in WorkflowBuilder."
                )
            self.steps_this_run += 1
            self.step += 1
            step = self.step
            invocations: Sequence[Invocation]
            if len(deliveries) == 1 and not tracing_on():
                # A chain's step, untraced: the one delivery is handled in this frame (what _invoke does for a
                # batch, without a coroutine of its own), with the same events in the same order.
                d = deliveries[0]
                eid = d.target_id
                executor = executors[eid]
                emit(step_event("superstep_started", [eid], None, step))
                inv = Invocation(self, executor)
                emit(step_event("executor_invoked", d.payload, eid, step))
                try:
                    pending = self._call(executor, inv, d)
                    if pending is not None:
                        await pending
                except Exception as e:
                    self._failed(inv, e, emit)
                else:
                    emit(step_event("executor_completed", None, eid, step))
                if inv.error is None and not (inv.state_writes or inv.requests):
                    # What it sent is all there is to commit: no commit() call, nothing left to check.
                    pending_messages = self.pending
                    for data, target in inv.outbox:
                        pending_messages.append(PendingMessage(eid, data, target))
                    invocations = ()
                else:
                    invocations = (inv,)
            else:
                batches: dict[str, list[Delivery]] = {}
                for d in deliveries:
                    batch = batches.get(d.target_id)
                    if batch is None:
                        batches[d.target_id] = [d]
                    else:
                        batch.append(d)
                emit(step_event("superstep_started", list(batches), None, step))
                done = await self._invoke_all(batches, RunContext._call)
                invocations = [done] if isinstance(done, Invocation) else done
            for inv in invocations:
                if inv.error is not None:
                    raise run_failure(
                        inv.error,
                        f"Executor {inv.executor_id!r} failed in superstep {step} of workflow {workflow.name!r}: "
                        f"{type(inv.error).__name__}: {inv.error}",
                    ) from inv.error
            if invocations:
                self.commit(invocations)
            checkpoint_id = None
            if self.storage is not None and (step % workflow.checkpoint_every == 0):
                checkpoint_id = await self._checkpoint()
            emit(step_event("superstep_completed", {"checkpoint_id": checkpoint_id}, None, step))
            if self.recorder is not None:
                await self._record(self.recorder.flush())
            if once:
                return STEPPED
            if self.gate is not None and not await self.gate():
                return STOPPED

    def commit(self, invocations: Sequence[Invocation]) -> None:
        """Apply what ``invocations`` produced, in order: their messages, shared-state writes and requests."""
        pending = self.pending
        shared = self.shared_state
        for inv in invocations:
            eid = inv.executor_id
            for data, target in inv.outbox:
                pending.append(PendingMessage(eid, data, target))
            for key, value in inv.state_writes.items():
                if value is DELETED:
                    shared.pop(key, None)
                else:
                    shared[key] = value
            for request in inv.requests:
                self.pending_requests[request.request_id] = request

    async def invoke_alone(
        self, executor: Executor, deliveries: Sequence[Delivery], sink: Callable[[WorkflowEvent], Any]
    ) -> Invocation:
        """Run one executor on ``deliveries`` as the next superstep would, committing nothing.

        What the executor sent, wrote and requested stays in the returned :class:`Invocation` (its ``error``
        holds a failure); events go to ``sink``. Re-running one executor from a checkpoint uses this, so the
        handler dispatch and checks are the runner's own.
        """
        self._sink = sink
        self.step += 1
        return await self._invoke(executor, deliveries, traced_executor_call(RunContext._call))

    async def route_pending(self) -> list[Delivery]:
        """Route the pending messages (as the next superstep would) and return the deliveries."""
        routed = self._route()
        return routed if isinstance(routed, list) else await routed

    async def _record(self, operation: Coroutine[Any, Any, None]) -> None:
        # The run store is a mirror for viewers: if it fails, say so with an "error" event and run on.
        try:
            await operation
        except Exception as e:
            self.recorder = None
            self.emit(WorkflowEvent("error", WorkflowErrorDetails.from_exception(e), step=self.step))

    @traced_superstep
    def _invoke_all(
        self, batches: dict[str, list[Delivery]], call: DeliveryCall
    ) -> Awaitable[Invocation | list[Invocation]]:
        """What to await for the superstep's invocations: with one executor to run, its own ``_invoke``.

        ``call`` handles one delivery (:meth:`_call`, or the telemetry layer's wrapping of it).
        """
        executors = self.workflow.executors
        if len(batches) == 1:
            ((target, items),) = batches.items()
            return self._invoke(executors[target], items, call)
        return gather_eagerly([self._invoke(executors[t], items, call) for t, items in batches.items()])

    async def _invoke(self, executor: Executor, items: Sequence[Delivery], call: DeliveryCall) -> Invocation:
        inv = Invocation(self, executor)
        eid = executor.id
        step = self.step
        emit = self._emitter()
        for d in items:
            emit(step_event("executor_invoked", d.payload, eid, step))
            try:
                pending = call(self, executor, inv, d)
                if pending is not None:
                    await pending
            except Exception as e:
                self._failed(inv, e, emit)
                break
            emit(step_event("executor_completed", None, eid, step))
        return inv

    def _failed(self, inv: Invocation, error: Exception, emit: Callable[[WorkflowEvent], Any]) -> None:
        """Record that ``inv``'s executor raised ``error`` (its ``executor_failed`` event; the step fails)."""
        inv.error = error
        eid = inv.executor_id
        emit(
            WorkflowEvent(
                "executor_failed",
                WorkflowErrorDetails.from_exception(error, executor_id=eid),
                executor_id=eid,
                step=self.step,
            )
        )

    def _call(self, executor: Executor, inv: Invocation, d: Delivery) -> Awaitable[object] | None:
        """Handle ``d``: ``None`` when that is done, else what the caller awaits to finish it.

        A plain call, so a delivery costs no coroutine of the runner's own: an async handler whose return
        value is not a message hands back its own coroutine. A message's handler is called here directly (one
        call per delivery); an answer to a request goes through :meth:`_answer`.
        """
        if d.request is None:
            payload = d.payload
            spec = executor.find_handler(payload)
            if spec is None:
                accepted = ", ".join(describe(t) for t in executor.input_types) or "nothing"
                raise TypeError(
                    f"Executor {executor.id!r} has no handler for a message of type {type(payload).__qualname__}; "
                    f"it accepts {accepted}."
                )
            func = spec.func
            if spec.takes_ctx:
                if spec.undeclared_context:
                    ctx = WorkflowContext(inv, d.source_id, None, None)
                else:
                    ctx = WorkflowContext(inv, d.source_id, spec.output_types, spec.workflow_output_types)
                result = func(payload, ctx) if spec.bound else func(executor, payload, ctx)
            else:
                result = func(payload) if spec.bound else func(executor, payload)
        else:
            spec, result = self._answer(executor, inv, d)
        if result.__class__ is CoroutineType or inspect.isawaitable(result):
            return self._send_returned(executor, inv, spec, result) if spec.returns_message else result
        if spec.returns_message and result is not None:
            self._returned(executor, inv, spec, result)
        return None

    async def _send_returned(
        self, executor: Executor, inv: Invocation, spec: HandlerSpec, pending: Awaitable[Any]
    ) -> None:
        result = await pending
        if result is not None:
            self._returned(executor, inv, spec, result)

    def _answer(self, executor: Executor, inv: Invocation, d: Delivery) -> tuple[HandlerSpec, Any]:
        """Call the ``@response_handler`` for the answer ``d``: its spec and what it returned."""
        request = d.request
        assert request is not None
        spec = executor.find_response_handler(request.request_data, d.payload)
        if spec is None:
            raise TypeError(
                f"Executor {executor.id!r} has no @response_handler for request data of type "
                f"{type(request.request_data).__qualname__} and a response of type "
                f"{type(d.payload).__qualname__}."
            )
        args: tuple[Any, ...] = (request.request_data, d.payload)
        if spec.takes_ctx:
            if spec.undeclared_context:
                args = (*args, WorkflowContext(inv, d.source_id, None, None))
            else:
                args = (*args, WorkflowContext(inv, d.source_id, spec.output_types, spec.workflow_output_types))
        return spec, spec.func(*args) if spec.bound else spec.func(executor, *args)

    def _returned(self, executor: Executor, inv: Invocation, spec: HandlerSpec, result: Any) -> None:
        """Send what a handler that returns its message returned (checked against its return hint)."""
        types = spec.output_types
        if types is not None and not any(matches(result, t) for t in types):
            raise TypeError(
                f"Executor {executor.id!r} returned a {type(result).__qualname__}, but its return hint says "
                f"{' | '.join(describe(t) for t in types) or 'None'}."
            )
        inv.outbox.append((result, None))

    # -- routing ------------------------------------------------------------------------------------------
    # The run is the edge groups' Router (see agentnb.workflows.Router): routing a message costs a lookup of
    # its source's edge runners (precomputed by the workflow) and one call per runner, with nothing allocated
    # but the deliveries.
    def _route(self) -> list[Delivery] | Awaitable[list[Delivery]]:
        """The deliveries of the next superstep; an awaitable only once an edge condition is async.

        Routing a chain's step is plain calls: no coroutine unless a condition needs awaiting, and then the
        rest of the routing continues in :meth:`_route_rest`, in the same order.
        """
        out: list[Delivery] = []
        if self.responses:
            for request, value in self.responses:
                out.append(Delivery(request.executor_id, None, value, request))
            self.responses = []
        pending, self.pending = self.pending, []
        self._out = out
        runners_by_source = self.workflow.edge_runners_by_source
        for index, msg in enumerate(pending):
            source = msg.source_id
            groups = None if source is None else runners_by_source.get(source)
            if source is None or groups is None:
                self._route_unlinked(msg)
                continue
            data, target = msg.data, msg.target_id
            delivered = False
            for at, group in enumerate(groups):
                taken = group.route(data, source, target, self)
                if taken is True:
                    delivered = True
                elif taken is not False:  # an awaitable: an async condition
                    return self._route_rest(pending, index, at, taken, delivered)
            if not delivered:
                self._undelivered(msg)
        return out

    async def _route_rest(
        self, pending: list[PendingMessage], index: int, at: int, taken: Awaitable[bool], delivered: bool
    ) -> list[Delivery]:
        """Finish :meth:`_route` from message ``index``, whose group ``at`` answered with ``taken``."""
        msg = pending[index]
        assert msg.source_id is not None
        groups = self.workflow.edge_runners_by_source[msg.source_id]
        delivered = await taken or delivered
        for group in groups[at + 1 :]:
            routed = group.route(msg.data, msg.source_id, msg.target_id, self)
            if routed is True or (routed is not False and await routed):
                delivered = True
        if not delivered:
            self._undelivered(msg)
        for msg in pending[index + 1 :]:
            source = msg.source_id
            groups = None if source is None else self.workflow.edge_runners_by_source.get(source)
            if source is None or groups is None:
                self._route_unlinked(msg)
                continue
            delivered = False
            for group in groups:
                routed = group.route(msg.data, source, msg.target_id, self)
                if routed is True or (routed is not False and await routed):
                    delivered = True
            if not delivered:
                self._undelivered(msg)
        return self._out

    def _route_unlinked(self, msg: PendingMessage) -> None:
        """Workflow input, or a message injected into a checkpoint: straight to its target."""
        source, target = msg.source_id, msg.target_id
        executors = self.workflow.executors
        if source is None and target is not None and target in executors:
            self._out.append(Delivery(target, None, msg.data))
        elif source is not None and source in executors:
            self.warn(f"Executor {source!r} sent a {type(msg.data).__qualname__} but has no outgoing edges.")
        else:
            self.warn(f"Dropped a message for unknown executor {target!r} (from {source!r}).")

    def _undelivered(self, msg: PendingMessage) -> None:
        where = f" to {msg.target_id!r}" if msg.target_id else ""
        self.warn(
            f"A {type(msg.data).__qualname__} sent by {msg.source_id!r}{where} was not delivered: no outgoing "
            "edge's target accepts it (or every condition was false)."
        )

    def can_handle(self, target: str, data: Any) -> bool:
        """Whether executor ``target`` has a handler for ``data`` (Router)."""
        return self.workflow.executors[target].can_handle(data)

    def deliver(self, target: str, source: str | None, data: Any) -> None:
        """Hand ``data`` to ``target`` in the next superstep (Router)."""
        self._out.append(Delivery(target, source, data))

    def fan_in_buffer(self, group_id: str) -> dict[str, list[Any]]:
        """The buffer of fan-in group ``group_id``, part of the run state (Router)."""
        buffer = self.fan_in_buffers.get(group_id)  # no empty dict made per message, as setdefault would
        if buffer is None:
            buffer = self.fan_in_buffers[group_id] = {}
        return buffer

    def warn(self, text: str) -> None:
        """Report a routing problem as a ``warning`` event (Router)."""
        self.emit(WorkflowEvent("warning", text, step=self.step))

    # -- checkpoints --------------------------------------------------------------------------------------
    async def snapshot(self) -> WorkflowCheckpoint:
        """The current state as a new checkpoint (child of the last one)."""
        states: dict[str, Any] = {}
        for executor in self.workflow.stateful_executors:
            state = executor.on_checkpoint_save()
            if inspect.isawaitable(state):
                state = await state
            states[executor.id] = state
        if self.pending_requests and not self.pending:
            state_name = WorkflowRunState.IDLE_WITH_PENDING_REQUESTS.value
        elif self.pending or self.responses:
            state_name = WorkflowRunState.IN_PROGRESS.value
        else:
            state_name = WorkflowRunState.IDLE.value
        return WorkflowCheckpoint(
            checkpoint_id=new_id(),
            workflow_name=self.workflow.name,
            graph_signature=self.workflow.graph_signature,
            run_id=self.run_id,
            parent_id=self.last_checkpoint_id,
            step=self.step,
            pending_messages=list(self.pending),
            executor_states=states,
            shared_state=dict(self.shared_state),
            pending_requests=dict(self.pending_requests),
            fan_in_buffers={k: {s: list(v) for s, v in b.items()} for k, b in self.fan_in_buffers.items()},
            run_state=state_name,
            metadata=dict(self.metadata) if self.last_checkpointed_step is None else {},
        )

    async def _checkpoint(self) -> str:
        assert self.storage is not None
        checkpoint = await self.snapshot()
        try:
            await self.storage.save(checkpoint)
        except SerializationError as e:
            raise WorkflowRunError(
                f"Cannot write the checkpoint after superstep {self.step} of workflow {self.workflow.name!r}: {e} "
                "Pending messages, shared state and executor states must be serializable (see agentnb._serialization)."
            ) from e
        self.last_checkpoint_id = checkpoint.checkpoint_id
        self.last_checkpointed_step = self.step
        return checkpoint.checkpoint_id


class Runner:
    """The superstep loop over explicit parts: edge groups, executors, shared state and a runner context.

    ``Workflow.run`` runs a built graph; a ``Runner`` runs the same supersteps (the same :class:`RunContext`)
    for code written against the reference's runner. Messages wait in ``ctx`` between supersteps (send the
    first ones with ``await ctx.send_message(WorkflowMessage(data, source_id=..., target_id=...))``; a sender
    that is not one of ``executors`` makes it an input, delivered straight to its target), each superstep's
    events go through ``ctx`` to :meth:`run_until_convergence`'s caller, shared-state writes land in
    ``state``, and a checkpoint is written after every superstep when ``ctx`` has a checkpoint storage.

    Example:
        >>> from agentnb.workflows import InProcRunnerContext
        >>> Runner([], {}, {}, InProcRunnerContext()).context.has_checkpointing()
        False
    """

    def __init__(
        self,
        edge_groups: Sequence[EdgeGroup],
        executors: dict[str, Executor],
        state: dict[str, Any] | None = None,
        ctx: RunnerContext | None = None,
        workflow_name: str = "workflow",
        graph_signature_hash: str | None = None,
        max_iterations: int = 100,
    ) -> None:
        from ._edges import graph_signature
        from ._runner_context import InProcRunnerContext
        from ._workflow import Workflow  # the workflow module imports this one

        start = next(iter(executors), "")
        signature = graph_signature_hash or graph_signature(
            start, {k: type(e).__qualname__ for k, e in executors.items()}, edge_groups
        )
        self.workflow = Workflow(
            executors=dict(executors),
            edge_groups=edge_groups,
            start_executor_id=start,
            name=workflow_name,
            description=None,
            max_iterations=max_iterations,
            checkpoint_storage=None,
            checkpoint_every=1,
            output_from=None,
            intermediate_output_from=None,
            run_store=None,
            graph_signature=signature,
        )
        self._ctx: RunnerContext = ctx if ctx is not None else InProcRunnerContext()
        self._state: dict[str, Any] = state if state is not None else {}
        self._run = RunContext(self.workflow, storage=None, store=None, streaming=self._ctx.is_streaming())
        self._run.shared_state = self._state
        self._run.state = WorkflowRunState.IN_PROGRESS

    @property
    def context(self) -> RunnerContext:
        """The runner context messages, events and checkpoints go through."""
        return self._ctx

    @property
    def state(self) -> dict[str, Any]:
        """The shared state executors read and write (``ctx.get_state`` / ``ctx.set_state``)."""
        return self._state

    @property
    def iteration(self) -> int:
        """How many supersteps ran since the runner was made (or :meth:`reset_iteration_count`)."""
        return self._run.steps_this_run

    @property
    def previous_checkpoint_id(self) -> str | None:
        """The checkpoint the next one will name as its parent (the last written or restored)."""
        return self._run.last_checkpoint_id

    @property
    def pending_requests(self) -> dict[str, PendingRequest]:
        """The ``request_info`` requests waiting for an answer, by request id."""
        return self._run.pending_requests

    def send_request_info_response(self, request_id: str, response: Any) -> None:
        """Answer a pending request; its ``@response_handler`` runs in the next superstep.

        Raises:
            ValueError: No such pending request.
            TypeError: ``response`` is not of the type the request asked for.
        """
        self._run.apply_responses({request_id: response})

    def bind(self, state: dict[str, Any] | None, ctx: RunnerContext | None) -> None:
        """Use ``state`` and ``ctx`` (when given) from now on."""
        if state is not None and state is not self._state:
            self._state = self._run.shared_state = state
        if ctx is not None:
            self._ctx = ctx

    def reset_iteration_count(self) -> None:
        """Count supersteps from zero again (``max_iterations`` applies from here)."""
        self._run.steps_this_run = 0

    async def run_until_convergence(self) -> AsyncIterator[WorkflowEvent]:
        """Run supersteps until no message is left, yielding each superstep's events as it ends.

        Raises:
            WorkflowRunError: An executor failed (after its ``executor_failed`` event was yielded), or messages
                were still waiting after ``max_iterations`` supersteps.
        """
        ctx, run = self._ctx, self._run
        for event in await ctx.drain_events():
            yield event
        await self._take_messages()
        events: list[WorkflowEvent] = []
        run._sink = events.append  # pyright: ignore[reportPrivateUsage]  # same module: the run's own sink
        run.storage = ctx.checkpoint_storage
        try:
            while True:
                try:
                    more = await run._supersteps(once=True) == STEPPED  # pyright: ignore[reportPrivateUsage]
                finally:
                    for event in events:
                        await ctx.add_event(event)
                    events.clear()
                for event in await ctx.drain_events():
                    yield event
                await self._give_messages()
                if not more or not await ctx.has_messages():
                    break
                await self._take_messages()
        except WorkflowRunError:
            for event in await ctx.drain_events():
                yield event
            raise
        finally:
            run._sink = _drop  # pyright: ignore[reportPrivateUsage]

    async def deliver_through(self, edge_runner: EdgeRunner, message: WorkflowMessage) -> bool:
        """Route ``message`` through ``edge_runner`` now and run the executors that receive it (committed).

        What they send goes to the context as messages, their events as events. Returns whether the group
        took the message.

        Raises:
            WorkflowRunError: A receiving executor failed.
        """
        run = self._run
        run._out = []  # pyright: ignore[reportPrivateUsage]
        events: list[WorkflowEvent] = []
        run._sink = events.append  # pyright: ignore[reportPrivateUsage]
        try:
            taken = edge_runner.route(message.data, message.source_id, message.target_id, run)
            if taken is not True and taken is not False:
                taken = await taken
            executors = self.workflow.executors
            for delivery in run._out:  # pyright: ignore[reportPrivateUsage]
                inv = await run.invoke_alone(executors[delivery.target_id], [delivery], events.append)
                if inv.error is not None:
                    raise run_failure(
                        inv.error,
                        f"Executor {inv.executor_id!r} failed: {type(inv.error).__name__}: {inv.error}",
                    ) from inv.error
                run.commit([inv])
                await self._give_messages()
        finally:
            run._sink = _drop  # pyright: ignore[reportPrivateUsage]
            for event in events:
                await self._ctx.add_event(event)
        return bool(taken)

    # -- checkpoints --------------------------------------------------------------------------------------
    async def build_checkpoint(self) -> WorkflowCheckpoint:
        """The current state (queued messages included, left queued) as a checkpoint, written nowhere."""
        await self._take_messages()
        try:
            return await self._run.snapshot()
        finally:
            await self._give_messages()

    async def restore_checkpoint(self, checkpoint: WorkflowCheckpoint) -> None:
        """Take over ``checkpoint``'s state: shared state, executor states, fan-in buffers and its messages.

        Raises:
            CheckpointMismatchError: The checkpoint was written by a different graph.
        """
        if checkpoint.graph_signature != self.workflow.graph_signature:
            raise CheckpointMismatchError(
                f"Checkpoint {checkpoint.checkpoint_id!r} was written by a different graph (signature "
                f"{checkpoint.graph_signature[:12]}…, this runner's {self.workflow.graph_signature[:12]}…)."
            )
        run = self._run
        await self._ctx.drain_messages()
        await run.restore(checkpoint)
        self._state.clear()
        self._state.update(run.shared_state)
        run.shared_state = self._state
        await self._give_messages()

    async def restore_from_checkpoint(
        self, checkpoint_id: str, checkpoint_storage: CheckpointStorage | None = None
    ) -> None:
        """Load ``checkpoint_id`` (from ``checkpoint_storage``, else the context's storage) and restore it.

        Raises:
            ValueError: Neither ``checkpoint_storage`` nor the context has a storage.
            CheckpointNotFoundError: No such checkpoint.
            CheckpointMismatchError: The checkpoint was written by a different graph.
        """
        if checkpoint_storage is not None:
            checkpoint = await checkpoint_storage.load(checkpoint_id)
        else:
            checkpoint = await self._ctx.load_checkpoint(checkpoint_id)
        await self.restore_checkpoint(checkpoint)

    # -- the message queue --------------------------------------------------------------------------------
    async def _take_messages(self) -> None:
        """Move the context's queued messages into the run (a sender that is no executor: an input)."""
        executors = self.workflow.executors
        pending = self._run.pending
        for source, messages in (await self._ctx.drain_messages()).items():
            sender = source if source in executors else None
            for message in messages:
                pending.append(PendingMessage(sender, message.data, message.target_id))

    async def _give_messages(self) -> None:
        """Move the run's waiting messages to the context (an input is listed under its target's input name)."""
        from ._edges import INTERNAL_SOURCE_ID, WorkflowMessage

        pending, self._run.pending = self._run.pending, []
        for msg in pending:
            source = msg.source_id if msg.source_id is not None else INTERNAL_SOURCE_ID(msg.target_id or "")
            await self._ctx.send_message(WorkflowMessage(data=msg.data, source_id=source, target_id=msg.target_id))


def _drop(event: WorkflowEvent) -> None:
    return None
