"""The built, runnable ``Workflow``: run it, stream it, resume it, answer its requests.

``Workflow.run`` is the single entry point:

- ``await workflow.run(message)`` starts a fresh run and returns a :class:`WorkflowRunResult`;
- ``workflow.run(message, stream=True)`` returns an async iterator of :class:`WorkflowEvent`;
- ``workflow.run(responses={request_id: value})`` answers ``request_info`` requests of the paused run;
- ``workflow.run(checkpoint_id=..., checkpoint_storage=...)`` resumes from a checkpoint (in any process),
  optionally with ``responses=...``. Resuming never changes the old checkpoints: the resumed run writes
  new ones whose parent is the checkpoint it started from.

Every call is one *run* with its own ``run_id``; ``run_store=`` (or the builder's ``run_store``) mirrors the
run and its events into the SQLite run store so the DevUI can follow it from another process.

``run(..., function_invocation_kwargs=..., client_kwargs=...)`` hands keyword arguments to the agents of the
run (their tools' ``**kwargs`` and their chat client calls), as the reference does: a mapping whose keys name
executors of the workflow (``{"writer": {...}, "critic": {...}}``) goes to those executors only, any other
mapping to every agent, and :class:`WorkflowInvocationKwargs` combines shared values with per-executor
overrides. They reach agents inside sub-workflows too. A fresh run forgets the previous run's kwargs;
``run(responses=...)`` and a resume keep them unless new ones are given. They are never written into
checkpoints (they often hold secrets or live objects): pass them again when resuming in another process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from .._serialization import type_id
from .._types import ResponseStream
from ..exceptions import CheckpointMismatchError, ExecutorInputError, WorkflowError
from ._checkpoints import CheckpointStorage
from ._edge_runner import EdgeRunner, create_edge_runner
from ._edges import EdgeGroup, WorkflowMessage
from ._events import WorkflowEvent, WorkflowRunResult, WorkflowRunState
from ._executor import Executor, FunctionExecutor
from ._runner import RunContext
from ._typing_utils import describe

if TYPE_CHECKING:
    from .._sessions import ContextProvider
    from ..store import Store
    from ._invocation_kwargs import RoutedKwargs, WorkflowInvocationKwargs
    from ._workflow_agent import WorkflowAgent

__all__ = ["Workflow"]

logger = logging.getLogger(__name__)


class Workflow:
    """A validated graph of executors, ready to run (build it with :class:`WorkflowBuilder`).

    Example:
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor
        >>> @executor(id="upper")
        ... async def upper(text: str, ctx: WorkflowContext[str]) -> None:
        ...     await ctx.send_message(text.upper())
        >>> @executor(id="exclaim")
        ... async def exclaim(text: str, ctx: WorkflowContext[str, str]) -> None:
        ...     await ctx.yield_output(text + "!")
        >>> workflow = WorkflowBuilder(start_executor=upper).add_edge(upper, exclaim).build()
        >>> (await workflow.run("hi")).get_outputs()  # doctest: +SKIP
        ['HI!']
    """

    def __init__(
        self,
        *,
        executors: dict[str, Executor],
        edge_groups: Sequence[EdgeGroup],
        start_executor_id: str,
        name: str,
        description: str | None,
        max_iterations: int,
        checkpoint_storage: CheckpointStorage | None,
        checkpoint_every: int,
        output_from: set[str] | None,
        intermediate_output_from: set[str] | None,
        run_store: Store | None,
        graph_signature: str,
    ) -> None:
        self.executors = executors
        self.edge_groups = list(edge_groups)
        self.start_executor_id = start_executor_id
        self.name = name
        self.id = name
        self.description = description
        self.max_iterations = max_iterations
        self.checkpoint_storage = checkpoint_storage
        self.checkpoint_every = checkpoint_every
        self.run_store = run_store
        self.graph_signature = graph_signature
        self.groups_by_source: dict[str, list[EdgeGroup]] = {}
        # What a run routes each source's messages through: its groups, bound to the executors.
        self.edge_runners_by_source: dict[str, list[EdgeRunner]] = {}
        for group in self.edge_groups:
            edge_runner = create_edge_runner(group, executors)
            for source in group.sources:
                self.groups_by_source.setdefault(source, []).append(group)
                self.edge_runners_by_source.setdefault(source, []).append(edge_runner)
        self.stateful_executors = [e for e in executors.values() if e.has_checkpoint_state]
        # A fresh run resets only executors with a reset of their own (the base class's does nothing).
        self._resettable = [e for e in executors.values() if _resets(e)]
        self._all_output = output_from is None and intermediate_output_from is None
        self._output_kinds: dict[str, str | None] = {}
        for executor_id in executors:
            if output_from is None or executor_id in output_from:
                kind: str | None = "output"
            elif intermediate_output_from is not None and executor_id in intermediate_output_from:
                kind = "intermediate"
            else:
                kind = None
            self._output_kinds[executor_id] = kind
        #: The current (or last) run's ``function_invocation_kwargs`` / ``client_kwargs``, by parameter name.
        self.invocation_kwargs: dict[str, RoutedKwargs] = {}
        self._last: RunContext | None = None
        self._running = False
        self._streaming = False
        # The stream of the streamed run going on (weakly: when its reader drops it, Python closes the run).
        self._reader: Callable[[], object | None] = _nobody

    # -- structure ----------------------------------------------------------------------------------------
    def output_kind(self, executor_id: str) -> str | None:
        """The event type an executor's ``yield_output`` becomes: ``"output"``, ``"intermediate"`` or hidden."""
        return self._output_kinds.get(executor_id, "output")

    def get_start_executor(self) -> Executor:
        """The executor that receives the workflow input."""
        return self.executors[self.start_executor_id]

    def get_executors_list(self) -> list[Executor]:
        """All executors, the start executor first."""
        return list(self.executors.values())

    def get_output_executors(self) -> list[Executor]:
        """The executors whose ``yield_output`` values are workflow outputs (all, unless ``output_from`` chose)."""
        return [e for k, e in self.executors.items() if self._output_kinds[k] == "output"]

    def is_terminal_executor(self, executor_id: str) -> bool:
        """Whether ``executor_id``'s yields are ``output`` events (any id, when no output selection was made)."""
        if self._all_output:
            return True
        return self._output_kinds.get(executor_id) == "output"

    def is_intermediate_executor(self, executor_id: str) -> bool:
        """Whether ``executor_id``'s yields are ``intermediate`` events."""
        return self._output_kinds.get(executor_id) == "intermediate"

    def get_intermediate_executors(self) -> list[Executor]:
        """The executors whose yields are ``intermediate`` events (chosen by ``intermediate_output_from``)."""
        return [e for k, e in self.executors.items() if self._output_kinds[k] == "intermediate"]

    @property
    def input_types(self) -> list[Any]:
        """The message types the workflow accepts as input (those of its start executor)."""
        return self.get_start_executor().input_types

    @property
    def output_types(self) -> list[Any]:
        """The types the workflow may yield as outputs."""
        out: list[Any] = []
        for executor_id, executor in self.executors.items():
            if self._output_kinds[executor_id] == "output":
                for t in executor.workflow_output_types:
                    if t not in out:
                        out.append(t)
        return out

    @property
    def pending_requests(self) -> list[WorkflowEvent]:
        """The unanswered ``request_info`` requests of the last run in this process."""
        if self._last is None:
            return []
        return [
            WorkflowEvent(
                "request_info",
                r.request_data,
                executor_id=r.executor_id,
                step=r.step,
                request_id=r.request_id,
                response_type=r.response_type,
            )
            for r in self._last.pending_requests.values()
        ]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the graph (what the run store keeps so another process can draw it)."""
        executors: list[dict[str, Any]] = []
        for executor_id, executor in self.executors.items():
            entry: dict[str, Any] = {
                "id": executor_id,
                "type": type_id(type(executor)),
                "input_types": [describe(t) for t in executor.input_types],
                "output_types": [describe(t) for t in executor.output_types],
                "workflow_output_types": [describe(t) for t in executor.workflow_output_types],
            }
            if isinstance(executor, FunctionExecutor):
                entry["function"] = getattr(executor.func, "__qualname__", None)
            executors.append(entry)
        groups: list[dict[str, Any]] = []
        for group in self.edge_groups:
            desc = group.describe()
            desc["id"] = group.id
            desc["labels"] = {f"{s}->{t}": group.edge_label(s, t) for s, t in group.pairs() if group.edge_label(s, t)}
            desc["conditional"] = group.conditional
            groups.append(desc)
        kinds = self._output_kinds
        data: dict[str, Any] = {
            "name": self.name,
            "start_executor_id": self.start_executor_id,
            "graph_signature": self.graph_signature,
            "max_iterations": self.max_iterations,
            "executors": executors,
            "edge_groups": groups,
            # The reference's wire keys for output_from / intermediate_output_from (None: every executor outputs).
            "output_executors": None if self._all_output else sorted(e for e, k in kinds.items() if k == "output"),
            "intermediate_executors": (
                None if self._all_output else sorted(e for e, k in kinds.items() if k == "intermediate")
            ),
        }
        if self.description is not None:
            data["description"] = self.description
        return data

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict())

    def __repr__(self) -> str:
        return f"Workflow(name={self.name!r}, executors={list(self.executors)!r})"

    def _repr_svg_(self) -> str:
        from ._viz import WorkflowViz

        return WorkflowViz(self).to_svg()

    def as_agent(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        context_providers: Sequence[ContextProvider] | ContextProvider | None = None,
    ) -> WorkflowAgent:
        """Wrap this workflow as an agent (``await agent.run("...")`` runs the workflow).

        Example:
            >>> agent = workflow.as_agent(name="pipeline")  # doctest: +SKIP
            >>> (await agent.run("hello")).text  # doctest: +SKIP
        """
        from ._workflow_agent import WorkflowAgent

        return WorkflowAgent(self, name=name, description=description, context_providers=context_providers)

    # -- running ------------------------------------------------------------------------------------------
    @overload
    def run(
        self,
        message: Any = None,
        *,
        stream: Literal[False] = False,
        responses: dict[str, Any] | None = None,
        checkpoint_id: str | None = None,
        checkpoint_storage: CheckpointStorage | None = None,
        run_store: Store | None = None,
        include_status_events: bool = False,
        function_invocation_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
        client_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
    ) -> Coroutine[Any, Any, WorkflowRunResult]: ...
    @overload
    def run(
        self,
        message: Any = None,
        *,
        stream: Literal[True],
        responses: dict[str, Any] | None = None,
        checkpoint_id: str | None = None,
        checkpoint_storage: CheckpointStorage | None = None,
        run_store: Store | None = None,
        include_status_events: bool = False,
        function_invocation_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
        client_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
    ) -> ResponseStream[WorkflowEvent, WorkflowRunResult]: ...
    def run(
        self,
        message: Any = None,
        *,
        stream: bool = False,
        responses: dict[str, Any] | None = None,
        checkpoint_id: str | None = None,
        checkpoint_storage: CheckpointStorage | None = None,
        run_store: Store | None = None,
        include_status_events: bool = False,
        function_invocation_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
        client_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
    ) -> Any:
        """Run the workflow: fresh with ``message``, or continued with ``responses`` and/or ``checkpoint_id``.

        Args:
            message: The input for the start executor (starts a fresh run).
            stream: Return an async iterator of events instead of an awaitable result.
            responses: Answers to pending ``request_info`` requests, by request id.
            checkpoint_id: Resume from this checkpoint (from ``checkpoint_storage`` or the builder's).
            checkpoint_storage: Where to load the checkpoint from and write new checkpoints to.
            run_store: Mirror this run and its events into a run store (overrides the builder's).
            include_status_events: Keep the ``status`` events in the awaited result's list too (they are always
                in its ``status_timeline()``; the ``started`` event is only streamed). A stream has them all.
            function_invocation_kwargs: Values for the tools of the run's agents (their ``**kwargs``): shared by
                all agents, or by executor id when keys name executors (see :class:`WorkflowInvocationKwargs`).
            client_kwargs: Keywords for the chat client calls of the run's agents, routed the same way.

        Returns:
            A :class:`WorkflowRunResult` when awaited; with ``stream=True`` a ``ResponseStream`` of
            :class:`WorkflowEvent` (iterate it; ``await stream.get_final_response()`` gives the result).

        Raises:
            WorkflowRunError: An executor failed or the step limit was reached (after a ``failed`` event).
            CheckpointMismatchError: The checkpoint was written by a different graph.
            CheckpointNotFoundError: No such checkpoint.
        """
        if isinstance(message, WorkflowMessage):
            message = message.data
        kwargs = {"function_invocation_kwargs": function_invocation_kwargs, "client_kwargs": client_kwargs}
        args = (message, responses, checkpoint_id, checkpoint_storage, run_store, kwargs)
        if stream:
            reader: list[Callable[[], object | None]] = []
            response = ResponseStream(self._stream(*args, reader=reader), self._result_of)
            reader.append(weakref.ref(response))
            return response
        return self._collect(*args, include_status_events=include_status_events)

    def _result_of(self, events: list[WorkflowEvent]) -> WorkflowRunResult:
        """A streamed run's events as the result an awaited run returns (``stream.get_final_response()``)."""
        last = self._last
        result = WorkflowRunResult(
            events,
            run_id=None if last is None else last.run_id,
            checkpoint_id=None if last is None else last.last_checkpoint_id,
        )
        result.separate_status_events()
        return result

    async def _prepare(
        self,
        message: Any,
        responses: dict[str, Any] | None,
        checkpoint_id: str | None,
        checkpoint_storage: CheckpointStorage | None,
        run_store: Store | None,
        kwargs: dict[str, Any],
        streaming: bool,
    ) -> tuple[RunContext, bool]:
        routed: dict[str, RoutedKwargs] = {}
        for name, value in kwargs.items():
            if value is not None:
                from ._invocation_kwargs import resolve_invocation_kwargs  # loaded by the first run that has some

                routed[name] = resolve_invocation_kwargs(self.executors, value, name)
        storage = checkpoint_storage if checkpoint_storage is not None else self.checkpoint_storage
        run = RunContext(
            self,
            storage=storage,
            store=run_store if run_store is not None else self.run_store,
            streaming=streaming,
        )
        fresh = False
        if checkpoint_id is not None:
            if message is not None:
                raise ValueError(
                    "Cannot provide both 'message' and 'checkpoint_id'. Use one or the other: a message starts a "
                    "fresh run, checkpoint_id resumes (not both)."
                )
            if storage is None:
                raise ValueError(
                    "Cannot restore from checkpoint: either provide checkpoint_storage parameter to run() or build "
                    "the workflow with WorkflowBuilder(checkpoint_storage=...)."
                )
            checkpoint = await storage.load(checkpoint_id)
            if checkpoint.graph_signature != self.graph_signature:
                raise CheckpointMismatchError(
                    f"Workflow graph has changed since the checkpoint was created: checkpoint {checkpoint_id!r} was "
                    f"written by workflow {checkpoint.workflow_name!r} with a different graph (signature "
                    f"{checkpoint.graph_signature[:12]}…, this workflow {self.name!r} has "
                    f"{self.graph_signature[:12]}…); it cannot be resumed here. Rebuild the original graph (same "
                    "executor ids, executor classes and edges) to resume it."
                )
            await run.restore(checkpoint)
            run.metadata = {"resumed_from": checkpoint_id}
        elif responses is not None and message is None:
            previous = self._last
            if previous is None or not previous.pending_requests:
                raise ValueError(
                    f"Workflow {self.name!r} has no pending requests in this process to answer; to answer "
                    "requests of an earlier process pass checkpoint_id=... with checkpoint_storage=...."
                )
            run.continue_from(previous)
            run.metadata = {"continued_from_run": previous.run_id}
        elif message is not None:
            fresh = True
            if responses is not None:
                raise ValueError("responses answer a paused run; do not pass a new message with them.")
            start = self.get_start_executor()
            if not start.can_handle(message):
                accepted = [describe(t) for t in start.input_types]
                raise ExecutorInputError(
                    f"Start executor {start.id!r} of workflow {self.name!r} cannot handle input of type "
                    f"{type(message).__qualname__!r}; it accepts {' | '.join(accepted)}.",
                    executor_id=start.id,
                    accepted=accepted,
                    got=type(message).__qualname__,
                )
            for executor in self._resettable:
                executor.reset()
            run.start_fresh(message)
        else:
            raise ValueError(
                "Must provide at least one of: 'message' (new run), 'responses' (send responses), or "
                "'checkpoint_id' (resume from checkpoint). Nothing to run."
            )
        if responses:
            run.apply_responses(responses)
        # A fresh run starts without the previous run's kwargs; a continued one keeps them unless given new ones.
        if routed or fresh:
            self.invocation_kwargs = routed
        return run, fresh

    def agent_run_kwargs(self, executor_id: str) -> dict[str, Any]:
        """The ``function_invocation_kwargs`` / ``client_kwargs`` this run gives ``executor_id``'s agent."""
        out: dict[str, Any] = {}
        for name, routed in self.invocation_kwargs.items():
            value = routed.for_executor(executor_id)
            if value is not None:
                out[name] = value
        return out

    async def _collect(
        self,
        message: Any,
        responses: dict[str, Any] | None,
        checkpoint_id: str | None,
        checkpoint_storage: CheckpointStorage | None,
        run_store: Store | None,
        kwargs: dict[str, Any],
        *,
        include_status_events: bool = False,
    ) -> WorkflowRunResult:
        await self._claim()
        try:
            run, fresh = await self._prepare(
                message, responses, checkpoint_id, checkpoint_storage, run_store, kwargs, False
            )
            result = WorkflowRunResult(run_id=run.run_id)
            self._last = run
            await run.execute(result.append, fresh=fresh)
        finally:
            self._running = False
        result.separate_status_events(include_status_events=include_status_events)
        result.checkpoint_id = run.last_checkpoint_id
        return result

    async def _claim(self) -> None:
        if self._running and self._streaming and self._reader() is None:
            # A streamed run whose reader dropped its stream finishes its superstep when the stream is closed,
            # which Python schedules right after the stream is let go: give it that moment before refusing.
            for _ in range(200):
                await asyncio.sleep(0.005)
                if not self._running:
                    break
        if self._running:
            raise WorkflowError(
                f"Workflow is already running; concurrent runs are not allowed on the same instance (workflow "
                f"{self.name!r}: wait for the current run to finish; its executors hold that run's state)."
            )
        self._running = True

    async def _stream(
        self,
        message: Any,
        responses: dict[str, Any] | None,
        checkpoint_id: str | None,
        checkpoint_storage: CheckpointStorage | None,
        run_store: Store | None,
        kwargs: dict[str, Any],
        *,
        reader: Sequence[Callable[[], object | None]] = (),
    ) -> AsyncIterator[WorkflowEvent]:
        # The reader drives the run: between supersteps the run waits until every event so far has been read
        # and the reader asks for more. Leaving the loop (break, an exception, cancellation) lets the current
        # superstep finish and checkpoint, then the run stops there and can be resumed from that checkpoint.
        await self._claim()
        self._streaming = True
        self._reader = reader[0] if reader else _nobody
        task: asyncio.Future[None] | None = None
        reader_left = False
        reader_waiting = False  # the reader has read every event so far and waits for the next one
        wants_more = asyncio.Event()
        try:
            run, fresh = await self._prepare(
                message, responses, checkpoint_id, checkpoint_storage, run_store, kwargs, True
            )
            queue: asyncio.Queue[Any] = asyncio.Queue()
            end = object()
            self._last = run

            async def next_superstep() -> bool:
                if not (reader_waiting and queue.empty()):
                    wants_more.clear()
                    await wants_more.wait()
                return not reader_left

            async def produce() -> None:
                try:
                    await run.execute(queue.put_nowait, fresh=fresh)
                finally:
                    queue.put_nowait(end)

            run.gate = next_superstep
            task = asyncio.ensure_future(produce())
            while True:
                if queue.empty():
                    reader_waiting = True
                    wants_more.set()
                item = await queue.get()
                reader_waiting = False
                if item is end:
                    break
                yield item
            await task
        finally:
            reader_left = True
            wants_more.set()
            if task is not None and not task.done():
                try:
                    await asyncio.shield(task)
                except asyncio.CancelledError:
                    task.cancel()  # cancelled again while the superstep finished: stop now
                except Exception as e:  # nobody reads this run any more; its failure is in its events
                    logger.info("Workflow %r failed after its reader left: %s", self.name, e)
            elif task is not None and not task.cancelled():
                task.exception()  # a failure the consumer stopped listening for is still "retrieved"
            self._running = self._streaming = False
            self._reader = _nobody

    @property
    def graph_signature_hash(self) -> str:
        """The reference's name for ``graph_signature`` (what a checkpoint must carry to resume here)."""
        return self.graph_signature

    @property
    def is_running(self) -> bool:
        """Whether a run of this workflow is going on in this process (its executors hold that run's state)."""
        return self._running

    @property
    def status(self) -> WorkflowRunState:
        """The state of the current or last run in this process, as its latest ``status`` event (``IDLE`` before
        the first run)."""
        return WorkflowRunState.IDLE if self._last is None else self._last.state

    @property
    def state(self) -> WorkflowRunState | None:
        """The state of the last run in this process (``None`` before the first run)."""
        return None if self._last is None else self._last.state


def _resets(executor: Executor) -> bool:
    """Whether ``executor.reset`` is more than the base class's no-op (overridden, or set on the instance).

    Asked through the bound method, not ``vars(executor)``: reading an object's ``__dict__`` makes CPython keep
    its attributes in a dict from then on, which slows every attribute read of that executor in a run.
    """
    return getattr(executor.reset, "__func__", None) is not Executor.reset


def _nobody() -> None:
    """The reader of no stream (a dead weak reference's answer)."""
    return None
