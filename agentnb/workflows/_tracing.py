"""Telemetry as layers around the workflow runners: a span per run, per superstep and per executor call.

As :mod:`agentnb._telemetry_layers` does for agents, model calls and tools, each decorator here wraps one seam
of a runner from outside, so the runners hold no telemetry of their own:

- :func:`traced_build` on ``WorkflowBuilder.build``: a ``workflow.build`` span with the build's events;
- :func:`traced_workflow_run` on ``RunContext.execute`` and ``FunctionalRun.execute``: a ``workflow.run``
  span around the whole run (recording it in the store included), current while the run's events are made,
  with ``workflow.started`` and ``workflow.completed`` (or ``workflow.error``) events;
- :func:`traced_superstep` on ``RunContext._invoke_all`` (a plain call returning what to await): a
  ``workflow.superstep`` span around one step's executor invocations, and the per-delivery call they use;
- :func:`traced_executor_call` picks that per-delivery call (``RunContext._call``, a plain call returning the
  handler's awaitable): itself, or wrapped in an ``executor.process`` span per delivered message, linked to the
  ``message.send`` spans of what it handles, with a ``message.send`` child for each message the handler sent;
- :func:`traced_step_call` on a functional workflow step's call: an ``executor.process`` span per call.

With instrumentation off, the superstep and executor layers cost one check per superstep and a direct call
(they hand back the runner's own coroutine), so the 100-executor chain pays nothing for them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from .. import _telemetry as tel

if TYPE_CHECKING:
    from ._executor import Executor

__all__ = [
    "traced_build",
    "traced_executor_call",
    "traced_step_call",
    "traced_superstep",
    "traced_workflow_run",
    "tracing_on",
]

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
                tel.SPAN_WORKFLOW_RUN,
                {tel.WORKFLOW_NAME: workflow.name, tel.WORKFLOW_RUN_ID: self.run_id, tel.WORKFLOW_ID: workflow.id},
            )
            if span is not None:
                span.add_event(tel.EVENT_WORKFLOW_STARTED)
            try:
                with tel.use_span(span):
                    await execute(self, sink, **kwargs)
            except BaseException as e:
                _sent.pop(self.run_id, None)
                if span is not None and isinstance(e, Exception):
                    span.add_event(tel.EVENT_WORKFLOW_ERROR, _error_attributes(e, "error"))
                tel.end_span(span, error=e, attributes={tel.WORKFLOW_STEPS: steps(self)})
                raise
            _sent.pop(self.run_id, None)
            if span is not None:
                span.add_event(tel.EVENT_WORKFLOW_COMPLETED)
            tel.end_span(span, attributes={tel.WORKFLOW_STEPS: steps(self)})

        return cast(_F, execute_traced)  # the wrapper keeps the wrapped method's signature

    return decorate


def _error_attributes(error: Exception, prefix: str) -> dict[str, Any]:
    """An error event's attributes: its type, and its message only with sensitive-data capture on."""
    attributes: dict[str, Any] = {f"{prefix}.type": type(error).__name__}
    if tel.sensitive_data_enabled():
        attributes[f"{prefix}.message"] = str(error)
    return attributes


class _Built(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    def to_dict(self) -> dict[str, Any]: ...


def _definition(workflow: _Built) -> str:
    """The workflow's definition as JSON (its ``to_json`` when it has one)."""
    to_json = getattr(workflow, "to_json", None)
    if callable(to_json):
        return cast(str, to_json())
    return json.dumps(workflow.to_dict(), default=str)


def traced_build(build: _F) -> _F:
    """Wrap ``WorkflowBuilder.build`` in a ``workflow.build`` span with the build's events.

    The events are the reference's: ``build.started``; then ``build.validation_completed`` and
    ``build.completed`` with the workflow's name, description, id and definition, or ``build.error`` with the
    error's type (and message, with sensitive-data capture on). One check per build while instrumentation is off.
    """

    @functools.wraps(build)
    def build_traced(self: Any) -> Any:
        if not tel.is_enabled():
            return build(self)
        span = tel.start_span(tel.SPAN_WORKFLOW_BUILD)
        if span is None:
            return build(self)
        span.add_event(tel.EVENT_BUILD_STARTED)
        try:
            with tel.use_span(span):
                workflow = cast(_Built, build(self))
        except Exception as e:
            span.add_event(tel.EVENT_BUILD_ERROR, _error_attributes(e, "build.error"))
            tel.end_span(span, error=e)
            raise
        span.add_event(tel.EVENT_BUILD_VALIDATION_COMPLETED)  # build() validates before it makes the workflow
        span.add_event(tel.EVENT_BUILD_COMPLETED)
        tel.end_span(
            span,
            attributes={
                tel.WORKFLOW_BUILDER_NAME: workflow.name,
                tel.WORKFLOW_BUILDER_DESCRIPTION: workflow.description,
                tel.WORKFLOW_ID: workflow.id,
                tel.WORKFLOW_DEFINITION: _definition(workflow),
            },
        )
        return workflow

    return cast(_F, build_traced)  # the wrapper keeps the wrapped method's signature


async def _superstep(
    invoke_all: Callable[..., Awaitable[Any]], run: TracedSteps, batches: Any, call: Callable[..., Any]
) -> Any:
    span = tel.start_span("workflow.superstep", {"workflow.step": run.step, "workflow.run_id": run.run_id})
    try:
        with tel.use_span(span):
            return await invoke_all(run, batches, functools.partial(_executor_call, call))
    finally:
        tel.end_span(span)


#: Whether runs are traced right now (the telemetry switch itself, no call of its own): an untraced superstep
#: with one delivery handles it without going through :func:`traced_superstep`'s layer.
tracing_on: Callable[[], bool] = tel.is_enabled


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


# The ``message.send`` spans of each traced run, by run id and sender: (target or None, span context) of what
# the sender's latest call sent. A processing span links to the spans that sent what it handles; the entry
# goes when the run's span ends.
_sent: dict[str, dict[str, list[tuple[str | None, Any]]]] = {}


def _sources(run: TracedSteps, executor_id: str, delivery: Any) -> list[str]:
    """The executors whose messages ``delivery`` carries: its sender, or (a fan-in's joined list, which names
    no sender) every executor with an edge into ``executor_id``."""
    source: str | None = getattr(delivery, "source_id", None)
    if source is not None:
        return [source]
    groups: Any = getattr(run.workflow, "edge_groups", ())
    return [s for group in groups for s, t in group.pairs() if t == executor_id]


def _link_senders(span: Any, run: TracedSteps, executor_id: str, delivery: Any) -> None:
    """Link ``span`` (not parent it) to the ``message.send`` spans that sent what it handles."""
    sent = _sent.get(run.run_id)
    if not sent or not hasattr(span, "add_link"):
        return
    for source in _sources(run, executor_id, delivery):
        for target, context in sent.get(source, ()):
            if target is None or target == executor_id:
                span.add_link(context)


def _record_sends(run: TracedSteps, executor_id: str, sent: list[tuple[Any, str | None]]) -> None:
    """A ``message.send`` span (child of the current processing span) for each message the call sent.

    They are made when the handler has returned, so they mark what was sent rather than time the sending.
    """
    records: list[tuple[str | None, Any]] = []
    for data, target in sent:
        span = tel.start_span(
            tel.SPAN_MESSAGE_SEND,
            {
                tel.MESSAGE_SOURCE_ID: executor_id,
                tel.MESSAGE_TARGET_ID: target,
                tel.MESSAGE_TYPE: "standard",
                tel.MESSAGE_PAYLOAD_TYPE: type(data).__qualname__,
            },
        )
        if span is None:
            return
        tel.end_span(span)
        records.append((target, span.get_span_context()))
    _sent.setdefault(run.run_id, {})[executor_id] = records


async def _executor_call(
    call: Callable[..., Awaitable[object] | None], run: TracedSteps, executor: Executor, invocation: Any, delivery: Any
) -> None:
    span = tel.start_span(
        tel.SPAN_EXECUTOR,
        {tel.EXECUTOR_ID: executor.id, tel.EXECUTOR_TYPE: type(executor).__qualname__, tel.WORKFLOW_STEP: run.step},
    )
    if span is not None:
        _link_senders(span, run, executor.id, delivery)
    outbox: list[tuple[Any, str | None]] = getattr(invocation, "outbox", [])
    already_sent = len(outbox)
    try:
        with tel.use_span(span):
            pending = call(run, executor, invocation, delivery)
            if pending is not None:
                await pending
            if span is not None and len(outbox) > already_sent:
                _record_sends(run, executor.id, outbox[already_sent:])
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
