"""Functional workflows: ``@workflow`` and ``@step`` over plain async Python.

The second way to write a workflow (the first is the graph, :class:`WorkflowBuilder`): an ``async`` function
decorated with ``@workflow`` is the workflow, and its ``if``, loops and ``asyncio.gather`` are its control flow.
``@workflow`` gives a stateless :class:`FunctionalWorkflowDefinition`; ``definition.build()`` gives a
:class:`FunctionalWorkflow` for one caller, whose ``run`` has the graph's shape and returns the graph's types
(:class:`WorkflowRunResult`, :class:`WorkflowEvent`, :class:`WorkflowCheckpoint`), so views, the run store,
evals and time travel take either kind.

``@step`` marks an ``async`` function whose calls inside a run are tracked: each call is numbered per step
(``name``, call index) in the order calls start, which is deterministic for deterministic code (also under
``asyncio.gather``). A call announces itself (``executor_invoked``), runs, and is cached and checkpointed
(``executor_completed``); when the function runs again in the same run (after a human answered, or resumed
from a checkpoint) the same call returns its cached result (``executor_bypassed``) instead of running. A
step's error ends the run with the step named. Outside a run a step is the plain function.

:class:`RunContext` (a parameter annotated with it, or named ``ctx``; or :func:`get_run_context`) asks a
human (``request_info``, which pauses the run until ``run(responses=...)`` answers it), emits custom events
and keeps key/value state that checkpoints carry.

How a run maps onto a :class:`WorkflowCheckpoint`: ``executor_states`` holds each step's cached results by
call index (``{"fetch": {"0": ..., "1": ...}}``), ``shared_state`` the run's key/value state,
``pending_messages`` the workflow input (what a resumed run starts from), ``pending_requests`` the
unanswered requests and ``step`` the number of step calls finished. So :class:`CheckpointHistory` lists,
diffs and forks functional runs as it does graph runs: a fork with edited step results resumes with them.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import logging
import types
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from .._listeners import listening
from .._types import ResponseStream
from ..exceptions import CheckpointMismatchError, WorkflowError
from ._checkpoints import CheckpointStorage, PendingMessage
from ._events import WorkflowErrorDetails, WorkflowEvent, WorkflowRunResult, WorkflowRunState
from ._functional_run import (
    ACTIVE_RUN,
    CURRENT_CALL,
    AgentEvents,
    FunctionalRun,
    RunContext,
    StepCall,
    fingerprint,
    get_run_context,
)
from ._tracing import traced_step_call
from ._typing_utils import describe, matches

if TYPE_CHECKING:
    from ..store import Store
    from ._functional_agent import FunctionalWorkflowAgent
    from ._rerun import RerunResult

__all__ = [
    "FunctionalWorkflow",
    "FunctionalWorkflowDefinition",
    "RunContext",
    "StepWrapper",
    "get_run_context",
    "step",
    "workflow",
]  # RunContext and get_run_context live in _functional_run; they are named here with the decorators

logger = logging.getLogger("agentnb.workflows")

R = TypeVar("R")
StepFunc = Callable[..., Awaitable[Any]]


_UNSET: Any = object()


def _takes_ctx(name: str, annotation: Any) -> bool:
    return annotation is RunContext or name == "ctx"


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        return {}


class StepWrapper(Generic[R]):
    """A function marked with ``@step``: tracked, cached and checkpointed when called inside a functional run.

    Outside a run, calling it calls the function. ``ray=True`` (or Ray options such as ``{"num_cpus": 1}``)
    runs each call as a Ray task on the cluster this process is connected to; the function must be
    importable by the workers (defined at the top level of a module), and its arguments and result must be
    serializable (they cross as tagged JSON, never pickles).

    Example:
        >>> @step
        ... async def double(x: int) -> int:
        ...     return 2 * x
        >>> double.name
        'double'
    """

    def __init__(
        self,
        func: Callable[..., Awaitable[R]],
        *,
        name: str | None = None,
        ray: bool | Mapping[str, Any] = False,
    ) -> None:
        if not inspect.iscoroutinefunction(func):
            raise TypeError(f"@step decorates async functions; {getattr(func, '__name__', func)!r} is not one.")
        self._func = func
        self.name: str = name or func.__name__
        self.ray_options: dict[str, Any] | None = dict(ray) if isinstance(ray, Mapping) else ({} if ray else None)
        self._signature = inspect.signature(func)
        hints = _hints(func)
        self._ctx_param: str | None = None
        self._ctx_keyword = False
        for param in self._signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            if _takes_ctx(param.name, hints.get(param.name, param.annotation)):
                self._ctx_param = param.name
                self._ctx_keyword = param.kind == param.KEYWORD_ONLY
                break
        if self.ray_options is not None and self._ctx_param is not None:
            raise TypeError(
                f"Step {self.name!r} runs on Ray and takes a RunContext; a Ray worker has no run to ask. Keep "
                "human input and state in the workflow function (or a local step)."
            )
        functools.update_wrapper(self, func)

    @property
    def func(self) -> Callable[..., Awaitable[R]]:
        """The decorated function."""
        return self._func

    def _with_ctx(self, ctx: RunContext, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        # The context takes its parameter's place; the caller's positional arguments fill the others in order.
        if self._ctx_param is None or self._ctx_param in kwargs:
            return args
        if self._ctx_keyword:
            kwargs[self._ctx_param] = ctx
            return args
        out: list[Any] = []
        rest = list(args)
        for param in self._signature.parameters.values():
            if param.name == self._ctx_param:
                out.append(ctx)
                break
            if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD) and rest:
                out.append(rest.pop(0))
            else:
                break
        return (*out, *rest)

    async def __call__(self, *args: Any, **kwargs: Any) -> R:
        ctx = ACTIVE_RUN.get()
        if ctx is None or ctx._run is None:  # pyright: ignore[reportPrivateUsage]  # outside a workflow
            return await self._func(*args, **kwargs)
        run = ctx._run  # pyright: ignore[reportPrivateUsage]
        name = self.name
        index = run.next_index(name)
        if run.rehearsal is not None:
            return await run.rehearsal.call(self, run, index, args, kwargs)
        digest = fingerprint(args, kwargs)
        hit, cached = run.cached(name, index, digest)
        if hit:
            run.emit(WorkflowEvent("executor_bypassed", cached, executor_id=name, step=index))
            return cached
        task = asyncio.current_task()
        if task is not None:
            run.in_flight[task] = run.in_flight.get(task, 0) + 1
        where = "ray" if self.ray_options is not None else "local"
        invocation = {"args": list(args), "kwargs": dict(kwargs), "where": where} if (args or kwargs) else {}
        if not invocation:
            invocation = {"where": where}
        run.emit(WorkflowEvent("executor_invoked", invocation, executor_id=name, step=index))
        try:
            try:
                result = await self._run_call(ctx, run, index, args, kwargs)
            except Exception as e:
                run.failed_in[id(e)] = name
                run.emit(
                    WorkflowEvent(
                        "executor_failed",
                        WorkflowErrorDetails.from_exception(e, executor_id=name),
                        executor_id=name,
                        step=index,
                    )
                )
                raise
            await run.step_done(name, index, digest, result)
            return result
        finally:
            if task is not None:
                left = run.in_flight.pop(task, 1) - 1
                if left:
                    run.in_flight[task] = left

    @traced_step_call
    async def _run_call(self, ctx: RunContext, run: FunctionalRun, index: int, args: tuple[Any, ...], kwargs: Any) -> R:
        """Run one call of the step: on Ray, or here with the call and its agents' events attributed to it."""
        if self.ray_options is not None:
            from ._functional_ray import run_on_ray

            return await run_on_ray(self, args, kwargs, run, index)
        call_token = CURRENT_CALL.set(StepCall(self.name, index))
        listener = AgentEvents(run, self.name) if run.workflow.definition.listen_to_agents else None
        try:
            with listening(listener):
                return await self._func(*self._with_ctx(ctx, args, kwargs), **kwargs)
        finally:
            CURRENT_CALL.reset(call_token)

    def __repr__(self) -> str:
        where = ", ray=True" if self.ray_options is not None else ""
        return f"StepWrapper(name={self.name!r}{where})"


@overload
def step(func: Callable[..., Awaitable[R]], /) -> StepWrapper[R]: ...
@overload
def step(
    *, name: str | None = None, ray: bool | Mapping[str, Any] = False
) -> Callable[[Callable[..., Awaitable[R]]], StepWrapper[R]]: ...
def step(
    func: Callable[..., Awaitable[Any]] | None = None,
    /,
    *,
    name: str | None = None,
    ray: bool | Mapping[str, Any] = False,
) -> StepWrapper[Any] | Callable[[Callable[..., Awaitable[Any]]], StepWrapper[Any]]:
    """Mark an async function as a workflow step: ``@step``, ``@step(name=...)`` or ``@step(ray=True)``.

    Inside a functional run each call is announced, cached by (step, call index) and checkpointed; a
    ``RunContext`` parameter is injected. Outside a run the function behaves as it is.

    Example:
        >>> @step(name="shout")
        ... async def upper(text: str) -> str:
        ...     return text.upper()
        >>> upper.name
        'shout'
    """
    if func is not None:
        return StepWrapper(func, name=name, ray=ray)

    def decorate(fn: Callable[..., Awaitable[Any]]) -> StepWrapper[Any]:
        return StepWrapper(fn, name=name, ray=ray)

    return decorate


def _no_steps() -> dict[str, StepWrapper[Any]]:
    return {}


@dataclass(frozen=True, eq=False)
class FunctionalWorkflowDefinition:
    """What ``@workflow`` returns: the workflow function and its shape, holding no run state.

    Build a :class:`FunctionalWorkflow` for each caller (or session) with :meth:`build`; the definition itself
    cannot run, so one defined at module level never carries one caller's state into another's run.

    Example:
        >>> @workflow
        ... async def greet(name: str) -> str:
        ...     return f"hello {name}"
        >>> greet.name, greet.input_types
        ('greet', [<class 'str'>])
    """

    func: Callable[..., Awaitable[Any]]
    name: str
    description: str | None
    parameters: tuple[tuple[str, bool, bool], ...]  # (name, is the RunContext, keyword-only)
    input_type: Any
    steps: tuple[str, ...]
    graph_signature: str
    listen_to_agents: bool = True
    step_wrappers: dict[str, StepWrapper[Any]] = field(default_factory=lambda: _no_steps(), repr=False)

    @property
    def input_types(self) -> list[Any]:
        """The type of the input (the first parameter's annotation; ``Any`` when it has none)."""
        return [self.input_type]

    def build(
        self,
        *,
        checkpoint_storage: CheckpointStorage | None = None,
        run_store: Store | None = None,
    ) -> FunctionalWorkflow:
        """A runnable workflow for one caller: its own pending requests, last run and storage.

        Args:
            checkpoint_storage: Where its runs write a checkpoint after every step call (scope it to the caller).
            run_store: Mirror its runs and events into a run store (the DevUI follows them from there).
        """
        return FunctionalWorkflow(self, checkpoint_storage=checkpoint_storage, run_store=run_store)

    def __getattr__(self, name: str) -> Any:
        if name in ("run", "as_agent"):
            raise AttributeError(
                f"Workflow definition {self.name!r} has no {name}(): build one workflow per caller first, "
                f"e.g. wf = {self.func.__name__}.build(); await wf.{name}(...)."
            )
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description (what the run store keeps): the steps as the graph's executors, no edges."""
        executors: list[dict[str, Any]] = []
        for name in self.steps:
            wrapper = self.step_wrappers.get(name)
            where = "ray" if wrapper is not None and wrapper.ray_options is not None else "local"
            executors.append(
                {"id": name, "type": "step", "where": where, "input_types": list[str](), "output_types": list[str]()}
                | {"workflow_output_types": list[str]()}
            )
        return {
            "name": self.name,
            "kind": "functional",
            "description": self.description,
            "start_executor_id": self.name,
            "input_type": describe(self.input_type),
            "graph_signature": self.graph_signature,
            "executors": [
                {
                    "id": self.name,
                    "type": "workflow",
                    "input_types": [describe(self.input_type)],
                    "output_types": [],
                    "workflow_output_types": [],
                    "function": getattr(self.func, "__qualname__", None),
                },
                *executors,
            ],
            "edge_groups": [],
        }

    def _repr_html_(self) -> str:
        from ._functional_view import definition_html

        return definition_html(self)


def _steps_of(func: Callable[..., Any]) -> dict[str, StepWrapper[Any]]:
    """The steps a workflow function names (globals and closure variables that are ``StepWrapper`` s)."""
    found: dict[str, StepWrapper[Any]] = {}
    code = getattr(func, "__code__", None)
    if code is None:
        return found
    scope: dict[str, Any] = dict(getattr(func, "__globals__", {}))
    closure = getattr(func, "__closure__", None) or ()
    for var, cell in zip(code.co_freevars, closure, strict=False):
        try:
            scope[var] = cell.cell_contents
        except ValueError:  # an empty cell (the variable is assigned later)
            continue
    names: list[str] = []
    pending: list[types.CodeType] = [code]
    while pending:  # the function's own code and the code nested in it (comprehensions, generator expressions)
        current = pending.pop()
        names.extend((*current.co_names, *current.co_freevars))
        pending.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    for var in names:
        obj = scope.get(var)
        if isinstance(obj, StepWrapper):
            wrapper = typing.cast("StepWrapper[Any]", obj)
            found.setdefault(wrapper.name, wrapper)
    return found


def _define(
    func: Callable[..., Awaitable[Any]], name: str | None, description: str | None
) -> FunctionalWorkflowDefinition:
    if not inspect.iscoroutinefunction(func):
        raise TypeError(f"@workflow decorates async functions; {getattr(func, '__name__', func)!r} is not one.")
    hints = _hints(func)
    parameters: list[tuple[str, bool, bool]] = []
    inputs: list[str] = []
    input_type: Any = Any
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, param.annotation)
        takes_ctx = _takes_ctx(param.name, annotation)
        if not takes_ctx:
            inputs.append(param.name)
            if annotation is not inspect.Parameter.empty:
                input_type = annotation
        parameters.append((param.name, takes_ctx, param.kind == param.KEYWORD_ONLY))
    if len(inputs) > 1:
        raise ValueError(
            f"@workflow function {func.__name__!r} has multiple non-RunContext parameters ({inputs}); it takes one "
            "(the message passed to run()) besides its RunContext. Combine the inputs into one object or dict."
        )
    steps = _steps_of(func)
    code = getattr(func, "__code__", None)
    shape = {
        "workflow": name or func.__name__,
        "steps": sorted(steps),
        "code": hashlib.sha256(code.co_code).hexdigest() if code is not None else "",
        "names": sorted(code.co_names) if code is not None else [],
    }
    signature = hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()
    return FunctionalWorkflowDefinition(
        func=func,
        name=name or func.__name__,
        description=description if description is not None else inspect.getdoc(func),
        parameters=tuple(parameters),
        input_type=input_type,
        steps=tuple(steps),
        graph_signature=signature,
        step_wrappers=steps,
    )


@overload
def workflow(func: Callable[..., Awaitable[Any]], /) -> FunctionalWorkflowDefinition: ...
@overload
def workflow(
    *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Awaitable[Any]]], FunctionalWorkflowDefinition]: ...
def workflow(
    func: Callable[..., Awaitable[Any]] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    **unexpected: Any,
) -> FunctionalWorkflowDefinition | Callable[[Callable[..., Awaitable[Any]]], FunctionalWorkflowDefinition]:
    """Make an async function a workflow definition: ``@workflow`` or ``@workflow(name=..., description=...)``.

    The function takes its input as its one parameter (besides an optional :class:`RunContext`) and returns
    the workflow's output. Build it (``.build(checkpoint_storage=...)``) to run it.

    Example:
        >>> @workflow(name="pipeline")
        ... async def pipeline(text: str) -> str:
        ...     return text.upper()
        >>> (await pipeline.build().run("hi")).get_outputs()  # doctest: +SKIP
        ['HI']
    """
    if unexpected:
        if "checkpoint_storage" in unexpected:
            raise TypeError(
                "@workflow takes no checkpoint_storage: a definition holds no caller state. Pass it to build(): "
                "wf = my_workflow.build(checkpoint_storage=storage)."
            )
        raise TypeError(f"@workflow got unexpected arguments {sorted(unexpected)}; it takes name and description.")
    if func is not None:
        return _define(func, name, description)

    def decorate(fn: Callable[..., Awaitable[Any]]) -> FunctionalWorkflowDefinition:
        return _define(fn, name, description)

    return decorate


class FunctionalWorkflow:
    """A built functional workflow, scoped to one caller: run it, stream it, resume it, answer its requests.

    ``run`` has the graph workflow's shape: ``await wf.run(message)`` gives a :class:`WorkflowRunResult`;
    ``wf.run(message, stream=True)`` a stream of :class:`WorkflowEvent` (also ``await stream.get_final_response()``
    for the result); ``wf.run(responses={...})`` answers the paused run's requests; ``wf.run(checkpoint_id=...)``
    resumes from a checkpoint, in any process, optionally with ``responses=...``.

    Example:
        >>> from agentnb.workflows import step, workflow
        >>> @step
        ... async def upper(text: str) -> str:
        ...     return text.upper()
        >>> @workflow
        ... async def shout(text: str) -> str:
        ...     return await upper(text) + "!"
        >>> wf = shout.build()
        >>> (await wf.run("hi")).get_outputs()  # doctest: +SKIP
        ['HI!']
    """

    def __init__(
        self,
        definition: FunctionalWorkflowDefinition,
        *,
        checkpoint_storage: CheckpointStorage | None = None,
        run_store: Store | None = None,
    ) -> None:
        self.definition = definition
        self.name = definition.name
        self.description = definition.description
        self.checkpoint_storage = checkpoint_storage
        self.run_store = run_store
        self.graph_signature = definition.graph_signature
        self.id = f"{definition.name}:{definition.graph_signature[:12]}"
        self._last: FunctionalRun | None = None
        self._running = False

    # -- structure ------------------------------------------------------------------------------------
    @property
    def graph_signature_hash(self) -> str:
        """The reference's name for ``graph_signature``."""
        return self.graph_signature

    @property
    def start_executor_id(self) -> str:
        """Where a run starts: the workflow function (named like the workflow), as the graph's start executor."""
        return self.name

    @property
    def steps(self) -> list[str]:
        """The names of the steps the workflow function calls (as far as its code names them)."""
        return list(self.definition.steps)

    @property
    def executors(self) -> dict[str, StepWrapper[Any]]:
        """The steps by name (what checkpoint tools check executor ids against)."""
        return dict(self.definition.step_wrappers)

    @property
    def input_types(self) -> list[Any]:
        """The type of the workflow input."""
        return self.definition.input_types

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
                request_id=r.request_id,
                response_type=r.response_type,
            )
            for r in self._last.pending.values()
        ]

    @property
    def is_running(self) -> bool:
        """Whether a run of this workflow is going on."""
        return self._running

    @property
    def state(self) -> WorkflowRunState | None:
        """The state of the last run in this process (``None`` before the first run)."""
        return None if self._last is None else self._last.final

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description of the workflow (what the run store keeps)."""
        return self.definition.to_dict()

    def check_input(self, message: PendingMessage, *, where: str = "The input") -> None:
        """Raise ``ValueError`` unless ``message`` can be a checkpoint's input for this workflow (fork edits)."""
        if message.source_id is not None or message.target_id not in (None, self.name):
            raise ValueError(
                f"{where} must be the workflow's input (no source_id; target_id {self.name!r}): a functional "
                f"workflow has no executors to send messages between, got {message.source_id!r} -> "
                f"{message.target_id!r}."
            )
        input_type = self.definition.input_type
        if input_type is not Any and not matches(message.data, input_type):
            raise ValueError(
                f"{where} carries a {type(message.data).__name__}; workflow {self.name!r} takes {describe(input_type)}."
            )

    def __repr__(self) -> str:
        return f"FunctionalWorkflow(name={self.name!r}, steps={self.steps!r})"

    def _repr_html_(self) -> str:
        from ._functional_view import definition_html

        return definition_html(self.definition)

    async def rerun_step(
        self,
        checkpoint_id: str,
        step: str,
        *,
        index: int = 0,
        input: Any = _UNSET,
        checkpoint_storage: CheckpointStorage | None = None,
    ) -> RerunResult:
        """Run one step call again from a checkpoint with every other step frozen, and compare it with the original.

        The workflow function replays from the checkpoint: other step calls return their saved results (a call
        with none does not run), and only call ``index`` of ``step`` runs, on the input the function gives it
        or on ``input`` (the call's one argument, or ``{"args": [...], "kwargs": {...}}``). Nothing is written.
        ``await result.fork()`` continues from the new result in a new branch of the checkpoint tree.

        Raises:
            ValueError: Unknown step, no storage, or the call is not reached with its neighbours frozen.
            CheckpointMismatchError: The checkpoint belongs to another workflow or version.
        """
        from ._functional_rerun import rerun_step

        edited = {} if input is _UNSET else {"input": input}
        return await rerun_step(self, checkpoint_id, step, index=index, checkpoint_storage=checkpoint_storage, **edited)

    def as_agent(self, name: str | None = None, *, description: str | None = None) -> FunctionalWorkflowAgent:
        """Wrap this workflow as an agent (``await agent.run("...")`` runs the workflow)."""
        from ._functional_agent import FunctionalWorkflowAgent

        return FunctionalWorkflowAgent(self, name=name, description=description)

    # -- running ----------------------------------------------------------------------------------------
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
        **kwargs: Any,
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
        **kwargs: Any,
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
        **kwargs: Any,
    ) -> Coroutine[Any, Any, WorkflowRunResult] | ResponseStream[WorkflowEvent, WorkflowRunResult]:
        """Run the workflow: fresh with ``message``, or continued with ``responses`` and/or ``checkpoint_id``.

        At least one of ``message``, ``responses`` and ``checkpoint_id`` is needed; ``responses`` may come with
        ``checkpoint_id`` (answer the requests of a checkpoint), ``message`` with neither.

        Args:
            message: The workflow function's input (starts a fresh run).
            stream: Return a ``ResponseStream`` of events (``await stream.get_final_response()`` gives the result).
            responses: Answers to pending requests, by request id.
            checkpoint_id: Resume from this checkpoint: completed step calls return their saved results.
            checkpoint_storage: Where to load the checkpoint from and write new ones to (default: the build's).
            run_store: Mirror this run and its events into a run store (default: the build's).
            **kwargs: Kept for the run (``RunContext.run_kwargs``).

        Raises:
            WorkflowRunError: The workflow function or a step failed (after a ``failed`` event naming the step).
            CheckpointMismatchError: The checkpoint was written by another workflow (or another version of it).
            WorkflowError: A run of this workflow is already going on.
        """
        if stream:
            return ResponseStream(
                self._stream(message, responses, checkpoint_id, checkpoint_storage, run_store, kwargs),
                self._result_of,
            )
        return self._collect(message, responses, checkpoint_id, checkpoint_storage, run_store, kwargs)

    def _result_of(self, events: list[WorkflowEvent]) -> WorkflowRunResult:
        last = self._last
        return WorkflowRunResult(
            events,
            run_id=None if last is None else last.run_id,
            checkpoint_id=None if last is None else last.last_checkpoint_id,
        )

    async def _prepare(
        self,
        message: Any,
        responses: dict[str, Any] | None,
        checkpoint_id: str | None,
        checkpoint_storage: CheckpointStorage | None,
        run_store: Store | None,
        streaming: bool,
        kwargs: dict[str, Any],
    ) -> FunctionalRun:
        storage = checkpoint_storage if checkpoint_storage is not None else self.checkpoint_storage
        run = FunctionalRun(self, storage, run_store if run_store is not None else self.run_store)
        run.streaming = streaming
        run.kwargs = kwargs
        if checkpoint_id is not None:
            if message is not None:
                raise ValueError("Pass either a message (fresh run) or checkpoint_id (resume), not both.")
            if storage is None:
                raise ValueError(
                    "Resuming from a checkpoint needs a storage: pass checkpoint_storage=... to run() or build()."
                )
            checkpoint = await storage.load(checkpoint_id)
            if checkpoint.graph_signature != self.graph_signature:
                raise CheckpointMismatchError(
                    f"Checkpoint {checkpoint_id!r} was written by workflow {checkpoint.workflow_name!r} with another "
                    f"shape (signature {checkpoint.graph_signature[:12]}…, this workflow {self.name!r} has "
                    f"{self.graph_signature[:12]}…); its step results may not fit this code. Resume it with the "
                    "workflow version that wrote it."
                )
            run.restore(checkpoint)
        elif message is None and responses is not None:
            previous = self._last
            if previous is None or not previous.pending:
                raise ValueError(
                    f"Workflow {self.name!r} has no pending requests in this process to answer; to answer "
                    "requests of an earlier process pass checkpoint_id=... with checkpoint_storage=...."
                )
            run.continue_from(previous)
        elif message is not None:
            if responses is not None:
                raise ValueError("responses answer a paused run; do not pass a new message with them.")
            if not any(name for name, takes_ctx, _ in self.definition.parameters if not takes_ctx):
                raise ValueError(
                    f"Workflow {self.name!r} takes no input (its function has only a RunContext parameter), but "
                    "run() got a message. Add a parameter for it."
                )
            input_type = self.definition.input_type
            if input_type is not Any and not matches(message, input_type):
                raise TypeError(
                    f"Workflow {self.name!r} takes {describe(input_type)} as its input; got a "
                    f"{type(message).__qualname__}."
                )
            run.message = message
        else:
            raise ValueError(
                "Nothing to run: pass a message to start, responses={request_id: value} to answer requests, "
                "or checkpoint_id=... to resume."
            )
        if responses:
            run.apply_responses(responses)
        return run

    def _claim(self) -> None:
        if self._running:
            raise WorkflowError(
                f"Workflow {self.name!r} is already running; wait for the current run to finish, or build another "
                "workflow from the definition for a concurrent caller."
            )
        self._running = True

    async def _collect(
        self,
        message: Any,
        responses: dict[str, Any] | None,
        checkpoint_id: str | None,
        checkpoint_storage: CheckpointStorage | None,
        run_store: Store | None,
        kwargs: dict[str, Any],
    ) -> WorkflowRunResult:
        self._claim()
        try:
            run = await self._prepare(message, responses, checkpoint_id, checkpoint_storage, run_store, False, kwargs)
            self._last = run
            result = WorkflowRunResult(run_id=run.run_id)
            await run.execute(result.append)
        finally:
            self._running = False
        result.checkpoint_id = run.last_checkpoint_id
        return result

    async def _stream(
        self,
        message: Any,
        responses: dict[str, Any] | None,
        checkpoint_id: str | None,
        checkpoint_storage: CheckpointStorage | None,
        run_store: Store | None,
        kwargs: dict[str, Any],
    ) -> AsyncIterator[WorkflowEvent]:
        # Events go out as they happen (a queue between the run's task and the reader). A reader that leaves
        # early cancels the run; steps finished so far are checkpointed, so it can be resumed.
        self._claim()
        task: asyncio.Task[None] | None = None
        try:
            run = await self._prepare(message, responses, checkpoint_id, checkpoint_storage, run_store, True, kwargs)
            self._last = run
            queue: asyncio.Queue[Any] = asyncio.Queue()
            end = object()

            async def produce() -> None:
                try:
                    await run.execute(queue.put_nowait)
                finally:
                    queue.put_nowait(end)

            task = asyncio.ensure_future(produce())
            while True:
                item = await queue.get()
                if item is end:
                    break
                yield item
            await task
        finally:
            if task is not None and not task.done():
                task.cancel()
                try:
                    await task
                except BaseException as e:  # the reader left: the run stops where it is
                    if not isinstance(e, (asyncio.CancelledError, Exception)):
                        raise
            self._running = False
