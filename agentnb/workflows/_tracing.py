"""Telemetry as layers around the workflow runners: a span per run, per superstep and per executor call.

As :mod:`agentnb._telemetry_layers` does for agents, model calls and tools, each decorator here wraps one seam
of a runner from outside, so the runners hold no telemetry of their own:

- :func:`traced_workflow_run` on ``RunContext.execute`` and ``FunctionalRun.execute``: a ``workflow.run``
  span around the whole run (recording it in the store included), current while the run's events are made;
- :func:`traced_superstep` on ``RunContext._invoke_all`` (a plain call returning what to await): a
  ``workflow.superstep`` span around one step's executor invocations, and the per-delivery call they use;
- :func:`traced_executor_call` picks that per-delivery call (``RunContext._call``, a plain call returning the
  handler's awaitable): itself, or wrapped in an ``executor.process`` span per delivered message;
- :func:`traced_step_call` on a functional workflow step's call: an ``executor.process`` span per call.

With instrumentation off, the superstep and executor layers cost one check per superstep and a direct call
(they hand back the runner's own coroutine), so the 100-executor chain pays nothing for them.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from .. import _telemetry as tel

if TYPE_CHECKING:
    from ._executor import Executor

__all__ = ["traced_executor_call", "traced_step_call", "traced_superstep", "traced_workflow_run"]

_F = TypeVar("_F", bound=Callable[..., Any])
_C = TypeVar("_C", bound=Callable[..., "Awaitable[object] | None"])


class _Named(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def id(self) -> str: ...


class TracedRun(Protocol):
    """What the run layer reads of a run: its workflow and its id."""

    @property
    def workflow(self) -> _Named: ...
    @property
    def run_id(self) -> str: ...


class TracedSteps(TracedRun, Protocol):
    """What the superstep and executor layers read of a run, also the superstep it is at."""

    @property
    def step(self) -> int: ...


def traced_workflow_run(steps: Callable[[Any], int]) -> Callable[[_F], _F]:
    """Wrap a runner's ``execute`` in a ``workflow.run`` span; ``steps(run)`` is recorded when it ends."""

    def decorate(execute: _F) -> _F:
        @functools.wraps(execute)
        async def execute_traced(self: TracedRun, sink: Any, **kwargs: Any) -> None:
            workflow = self.workflow
            span = tel.start_span(
                "workflow.run",
                {"workflow.name": workflow.name, "workflow.run_id": self.run_id, "workflow.id": workflow.id},
            )
            try:
                with tel.use_span(span):
                    await execute(self, sink, **kwargs)
            except BaseException as e:
                tel.end_span(span, error=e, attributes={"workflow.steps": steps(self)})
                raise
            tel.end_span(span, attributes={"workflow.steps": steps(self)})

        return cast(_F, execute_traced)  # the wrapper keeps the wrapped method's signature

    return decorate


async def _superstep(
    invoke_all: Callable[..., Awaitable[Any]], run: TracedSteps, batches: Any, call: Callable[..., Any]
) -> Any:
    span = tel.start_span("workflow.superstep", {"workflow.step": run.step, "workflow.run_id": run.run_id})
    try:
        with tel.use_span(span):
            return await invoke_all(run, batches, functools.partial(_executor_call, call))
    finally:
        tel.end_span(span)


def traced_superstep(invoke_all: _F) -> _F:
    """Wrap one superstep's invocations (``batches`` of deliveries by executor) in a ``workflow.superstep`` span.

    ``invoke_all(run, batches, call)`` handles each delivery with ``call``; traced, that call is wrapped in an
    ``executor.process`` span (see :func:`traced_executor_call`), chosen once for the whole superstep.
    """

    @functools.wraps(invoke_all)
    def invoke_all_traced(self: TracedSteps, batches: Any, call: Callable[..., Any]) -> Awaitable[Any]:
        if not tel.is_enabled():
            return invoke_all(self, batches, call)
        return _superstep(invoke_all, self, batches, call)

    return cast(_F, invoke_all_traced)  # the wrapper keeps the wrapped method's signature


async def _executor_call(
    call: Callable[..., Awaitable[object] | None], run: TracedSteps, executor: Executor, invocation: Any, delivery: Any
) -> None:
    span = tel.start_span(
        "executor.process",
        {"executor.id": executor.id, "executor.type": type(executor).__qualname__, "workflow.step": run.step},
    )
    try:
        with tel.use_span(span):
            pending = call(run, executor, invocation, delivery)
            if pending is not None:
                await pending
    except BaseException as e:
        tel.end_span(span, error=e)
        raise
    tel.end_span(span)


def traced_executor_call(call: _C) -> _C:
    """The per-delivery ``call(run, executor, invocation, delivery)`` as it runs now: itself, or traced.

    ``call`` is a plain function returning ``None`` when the delivery is handled or an awaitable that finishes
    it; untraced it is used as it is, so a delivery costs the runner no extra coroutine. Traced, each call runs
    in an ``executor.process`` span. For invocations outside a superstep (:func:`traced_superstep` chooses for
    its own).
    """
    if not tel.is_enabled():
        return call
    return cast(_C, functools.partial(_executor_call, call))


class _Step(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def ray_options(self) -> Any: ...


async def _step_call(
    call: Callable[..., Awaitable[Any]], step: _Step, ctx: Any, run: Any, index: int, args: Any, kwargs: Any
) -> Any:
    where = "ray" if step.ray_options is not None else "local"
    span = tel.start_span("executor.process", {"executor.id": step.name, "step.call": index, "step.where": where})
    try:
        with tel.use_span(span):
            result = await call(step, ctx, run, index, args, kwargs)
    except BaseException as e:
        tel.end_span(span, error=e)
        raise
    tel.end_span(span)
    return result


def traced_step_call(call: _F) -> _F:
    """Wrap one call of a functional workflow's step (``index``: its call number) in an ``executor.process`` span."""

    @functools.wraps(call)
    def call_traced(self: _Step, ctx: Any, run: Any, index: int, args: Any, kwargs: Any) -> Awaitable[Any]:
        if not tel.is_enabled():
            return call(self, ctx, run, index, args, kwargs)
        return _step_call(call, self, ctx, run, index, args, kwargs)

    return cast(_F, call_traced)  # the wrapper keeps the wrapped method's signature
