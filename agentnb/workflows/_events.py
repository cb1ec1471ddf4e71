"""Workflow events, run states and the non-streaming run result.

A run is fully described by its event stream: the DevUI, the run store and ``WorkflowRunResult`` are
all views over the same ``WorkflowEvent`` objects, told apart by ``event.type``:

=======================  ===========================================================================
``started``              the run began (``data`` is the run id)
``status``               the run state changed (``state`` holds a :class:`WorkflowRunState`)
``superstep_started``    a superstep began (``step``; ``data`` lists the executors it will invoke)
``executor_invoked``     an executor received a message (``executor_id``; ``data`` is the message)
``executor_completed``   an executor's handler returned
``executor_failed``      an executor's handler raised (``data`` is a :class:`WorkflowErrorDetails`)
``intermediate``         an executor yielded a value that is progress, not a workflow output
``output``               an executor yielded a workflow output (``data``)
``request_info``         an executor asked for outside input (``request_id``, ``data``, ``response_type``)
``superstep_completed``  a superstep ended (``data`` holds the checkpoint id when one was written)
``warning``              something was dropped or looks wrong, the run goes on (``data`` is text)
``error``                an error inside the run that an executor reported without failing
``failed``               the run failed (``data`` is a :class:`WorkflowErrorDetails`)
=======================  ===========================================================================

Custom executors may emit their own events with ``ctx.add_event(WorkflowEvent("my_type", data))``.

Agents in a workflow publish their answers through ``yield_output`` like any executor, as the reference
does: a streamed run gives one ``output`` (or ``intermediate``) event per ``AgentResponseUpdate``, each with
``executor_id`` and the update's ``author_name`` set; a run that is not streamed gives one event with the
``AgentResponse``. :func:`merge_streamed_outputs` joins the updates back into one reply per agent for views.
(Runs stored by versions before this carried the updates as ``agent_update`` events; views show those as any
custom event.)
"""

from __future__ import annotations

import enum
import time
import traceback
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, cast

from typing_extensions import TypeVar

from .._json import is_json_object
from .._serialization import encode, register_type, resolve_type, type_id
from .._types import AgentResponse, AgentResponseUpdate

__all__ = [
    "WorkflowErrorDetails",
    "WorkflowEvent",
    "WorkflowEventSource",
    "WorkflowEventType",
    "WorkflowRunResult",
    "WorkflowRunState",
    "merge_streamed_outputs",
]

WorkflowEventType = Literal[
    "started",
    "status",
    "failed",
    "output",
    "intermediate",
    "request_info",
    "superstep_started",
    "superstep_completed",
    "executor_invoked",
    "executor_completed",
    "executor_failed",
    "warning",
    "error",
]


class WorkflowRunState(str, enum.Enum):
    """Where a run stands; compares equal to its lower-case string value and prints as the reference's enum.

    Example:
        >>> WorkflowRunState.IDLE == "idle"
        True
        >>> print(WorkflowRunState.IDLE)
        WorkflowRunState.IDLE
    """

    STARTED = "started"
    IN_PROGRESS = "in_progress"
    IN_PROGRESS_PENDING_REQUESTS = "in_progress_pending_requests"
    IDLE = "idle"
    IDLE_WITH_PENDING_REQUESTS = "idle_with_pending_requests"
    FAILED = "failed"
    CANCELLED = "cancelled"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, format_spec: str) -> str:
        return format(str(self), format_spec)


@dataclass(frozen=True)
class WorkflowErrorDetails:
    """What went wrong in a failed executor or run: the exception type, message and traceback text.

    Example:
        >>> WorkflowErrorDetails.from_exception(ValueError("bad"), executor_id="a").message
        'bad'
    """

    error_type: str
    message: str
    traceback: str | None = None
    executor_id: str | None = None

    @classmethod
    def from_exception(cls, exc: BaseException, *, executor_id: str | None = None) -> WorkflowErrorDetails:
        """Describe ``exc`` (with its formatted traceback)."""
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(error_type=type(exc).__name__, message=str(exc), traceback=tb, executor_id=executor_id)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "error_type": self.error_type,
            "message": self.message,
            "traceback": self.traceback,
            "executor_id": self.executor_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkflowErrorDetails:
        """Rebuild from :meth:`to_dict` output."""
        return cls(**data)


class WorkflowEventSource(str, enum.Enum):
    """Who emitted an event: the runner itself (``FRAMEWORK``) or an executor's code (``EXECUTOR``)."""

    FRAMEWORK = "FRAMEWORK"
    EXECUTOR = "EXECUTOR"


#: The event types only the runner emits; every other event comes from an executor (its context).
_FRAMEWORK_EVENTS = frozenset(
    {
        "started",
        "status",
        "failed",
        "error",
        "warning",
        "superstep_started",
        "superstep_completed",
        "executor_invoked",
        "executor_completed",
        "executor_failed",
    }
)


# Default Any: an event named only by its type carries whatever its emitter put in it.
DataT = TypeVar("DataT", default=Any)


class WorkflowEvent(Generic[DataT]):
    """One thing that happened during a workflow run (``WorkflowEvent[T]`` names the payload type).

    Args:
        type: What kind of event this is (see the module docstring for the built-in kinds).
        data: The payload: an output value, a message, a request, error details, ...
        executor_id: The executor the event is about, if any.
        step: The superstep number the event happened in, if any.
        request_id: For ``request_info`` events: the id the response must be sent back under.
        response_type: For ``request_info`` events: the type the response must have.
        state: For ``status`` events: the new :class:`WorkflowRunState`.

    Example:
        >>> event = WorkflowEvent("output", "done", executor_id="writer")
        >>> (event.type, event.data)
        ('output', 'done')
    """

    __slots__ = ("data", "executor_id", "request_id", "response_type", "state", "step", "timestamp", "type")

    def __init__(
        self,
        type: str,
        data: Any = None,
        *,
        executor_id: str | None = None,
        step: int | None = None,
        request_id: str | None = None,
        response_type: Any = None,
        state: WorkflowRunState | None = None,
        timestamp: float | None = None,
    ) -> None:
        self.type = type
        self.data = data
        self.executor_id = executor_id
        self.step = step
        self.request_id = request_id
        self.response_type = response_type
        self.state = state
        self.timestamp = time.time() if timestamp is None else timestamp

    @classmethod
    def emit(cls, executor_id: str, data: Any) -> WorkflowEvent:
        """A ``data`` event from ``executor_id`` (deprecated, as in the reference: yield outputs instead).

        Deprecated: use ``ctx.yield_output(...)`` from an executor named in ``intermediate_output_from``.
        """
        warnings.warn(
            "WorkflowEvent.emit() / type='data' are deprecated; use ctx.yield_output() from an "
            "intermediate-designated executor.",
            DeprecationWarning,
            stacklevel=2,
        )
        return cls("data", data, executor_id=executor_id)

    @classmethod
    def request_info(
        cls, request_id: str, source_executor_id: str, request_data: Any, response_type: Any
    ) -> WorkflowEvent:
        """A ``request_info`` event: ``source_executor_id`` asks for a ``response_type`` answer to ``request_data``.

        Example:
            >>> WorkflowEvent.request_info("r1", "review", "ok?", bool).request_id
            'r1'
        """
        return cls(
            "request_info",
            request_data,
            executor_id=source_executor_id,
            request_id=request_id,
            response_type=response_type,
        )

    @property
    def source_executor_id(self) -> str | None:
        """Alias of ``executor_id`` (the executor that raised a request or yielded an output)."""
        return self.executor_id

    @property
    def request_data(self) -> Any:
        """Alias of ``data`` for ``request_info`` events."""
        return self.data

    @property
    def request_type(self) -> type[Any] | None:
        """For ``request_info`` events: the type of the request payload (``None`` for other events)."""
        return cast("type[Any]", type(self.data)) if self.type == "request_info" else None

    @property
    def origin(self) -> WorkflowEventSource:
        """Whether the runner (lifecycle, supersteps, executor bookkeeping) or an executor emitted the event."""
        return WorkflowEventSource.FRAMEWORK if self.type in _FRAMEWORK_EVENTS else WorkflowEventSource.EXECUTOR

    @property
    def iteration(self) -> int | None:
        """The reference's name for ``step`` (the superstep number)."""
        return self.step

    @property
    def details(self) -> WorkflowErrorDetails | None:
        """For ``failed`` / ``executor_failed`` events: the error details (the reference's field)."""
        return self.data if isinstance(self.data, WorkflowErrorDetails) else None

    def __repr__(self) -> str:
        parts = [repr(self.type)]
        if self.executor_id is not None:
            parts.append(f"executor_id={self.executor_id!r}")
        if self.step is not None:
            parts.append(f"step={self.step}")
        if self.state is not None:
            parts.append(f"state={self.state.value!r}")
        if self.request_id is not None:
            parts.append(f"request_id={self.request_id!r}")
        if self.data is not None and self.type != "status":
            text = repr(self.data)
            parts.append(f"data={text[:80] + '…' if len(text) > 80 else text}")
        return f"WorkflowEvent({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe record of the event (values that cannot be tagged are kept as their ``repr``)."""
        record: dict[str, Any] = {
            "type": self.type,
            "executor_id": self.executor_id,
            "step": self.step,
            "timestamp": self.timestamp,
            "data": safe_encode(self.data),
        }
        if self.request_id is not None:
            record["request_id"] = self.request_id
        if self.response_type is not None:
            record["response_type"] = (
                type_id(self.response_type) if isinstance(self.response_type, type) else repr(self.response_type)
            )
        if self.state is not None:
            record["state"] = self.state.value
        return record


def merge_streamed_outputs(values: Iterable[Any]) -> list[Any]:
    """Workflow outputs as a reader wants them: each agent's streamed updates joined into one ``AgentResponse``.

    A streamed run publishes an agent's answer as many ``AgentResponseUpdate`` outputs, and agents running in
    the same superstep stream at once, so their updates interleave. Within an unbroken stretch of updates they
    are grouped by ``author_name`` (in order of first appearance); any other value ends the stretch and is kept
    as it is.

    Example:
        >>> from agentnb import AgentResponseUpdate
        >>> parts = [AgentResponseUpdate(contents=[t], role="assistant", author_name="w") for t in ("Hel", "lo")]
        >>> [r.text for r in merge_streamed_outputs([*parts, "done"])]
        ['Hello', 'done']
    """
    merged: list[Any] = []
    stretch: dict[str | None, list[Any]] = {}

    def close() -> None:
        merged.extend(AgentResponse.from_updates(updates) for updates in stretch.values())
        stretch.clear()

    for value in values:
        if isinstance(value, AgentResponseUpdate):
            stretch.setdefault(value.author_name, []).append(value)
            continue
        close()
        merged.append(value)
    close()
    return merged


def safe_encode(value: Any) -> Any:
    """Tagged JSON for ``value``, or ``{"repr": ...}`` when it cannot be serialized (events must never fail)."""
    try:
        return encode(value)
    except Exception:
        return {"repr": repr(value)[:2000]}


def step_event(type: str, data: Any, executor_id: str | None, step: int) -> WorkflowEvent:
    """A superstep's event, made without the keyword constructor (a run makes four per step)."""
    event: WorkflowEvent = object.__new__(WorkflowEvent)
    event.type = type
    event.data = data
    event.executor_id = executor_id
    event.step = step
    event.request_id = None
    event.response_type = None
    event.state = None
    event.timestamp = time.time()
    return event


class WorkflowRunResult(list[WorkflowEvent]):
    """The events of a finished (or paused) run, with accessors for what callers usually want.

    As in the reference, an awaited run lists what executors did (invocations, outputs, requests, supersteps);
    its ``status`` events are kept apart, in :meth:`status_timeline` (``Workflow.run(...,
    include_status_events=True)`` lists them too), and the ``started`` event is only streamed.

    Example:
        >>> result = WorkflowRunResult([WorkflowEvent("output", 42)])
        >>> result.get_outputs()
        [42]
    """

    def __init__(
        self,
        events: Iterable[WorkflowEvent] = (),
        status_events: Iterable[WorkflowEvent] | None = None,
        *,
        run_id: str | None = None,
        checkpoint_id: str | None = None,
    ) -> None:
        super().__init__(events)
        self.status_events: list[WorkflowEvent] = list(status_events) if status_events is not None else []
        self.run_id = run_id
        self.checkpoint_id = checkpoint_id

    def separate_status_events(self, *, include_status_events: bool = False) -> None:
        """Move a finished run's ``status`` events to :meth:`status_timeline` and drop its ``started`` event.

        A run emits them only first (``started``, then ``in_progress``) and last (the state it ended in), so
        only the ends of the list are looked at; ``include_status_events`` keeps the status events listed too.
        """
        head = 0
        while head < len(self) and self[head].type in ("started", "status"):
            head += 1
        tail = len(self)
        while tail > head and self[tail - 1].type == "status":
            tail -= 1
        leading = [e for e in self[:head] if e.type == "status"]
        self.status_events = [*leading, *self[tail:]]
        if not include_status_events:
            del self[tail:]
            leading = []
        self[:head] = leading

    def get_outputs(self) -> list[Any]:
        """The values executors yielded as workflow outputs, in order."""
        return [e.data for e in self if e.type == "output"]

    def get_intermediate_outputs(self) -> list[Any]:
        """The values executors yielded as progress (``intermediate`` events), in order."""
        return [e.data for e in self if e.type == "intermediate"]

    def get_request_info_events(self) -> list[WorkflowEvent]:
        """The outside-input requests raised in this run that are still to be answered by the caller."""
        return [e for e in self if e.type == "request_info"]

    def status_timeline(self) -> list[WorkflowEvent]:
        """The run's ``status`` events, in order (the last is the state it ended in)."""
        return list(self.status_events) or [e for e in self if e.type == "status"]

    def get_events(self, type: str) -> list[WorkflowEvent]:
        """All events of one ``type``."""
        return [e for e in self if e.type == type]

    def get_final_state(self) -> WorkflowRunState:
        """The state the run ended in (the last ``status`` event)."""
        for event in reversed(self.status_timeline()):
            if event.state is not None:
                return event.state
        return WorkflowRunState.IDLE


def encode_hint(hint: Any) -> Any:
    """Write a type hint (a response type) as JSON: a class id, ``"Any"``, or a readable fallback."""
    if hint is Any or hint is None:
        return "Any"
    if isinstance(hint, type) and not hasattr(hint, "__origin__"):
        return {"type": type_id(hint)}
    return {"repr": repr(hint)}


def decode_hint(data: Any) -> Any:
    """Rebuild a hint written by :func:`encode_hint`; hints that cannot be rebuilt become ``Any``."""
    if is_json_object(data) and "type" in data:
        return resolve_type(data["type"])
    return Any


def _event_fields(event: WorkflowEvent) -> dict[str, Any]:
    return {
        "type": event.type,
        "data": event.data,
        "executor_id": event.executor_id,
        "step": event.step,
        "request_id": event.request_id,
        "response_type": None if event.response_type is None else encode_hint(event.response_type),
        "state": None if event.state is None else event.state.value,
        "timestamp": event.timestamp,
    }


def _event_from_fields(fields: Mapping[str, Any]) -> WorkflowEvent:
    hint = fields.get("response_type")
    state = fields.get("state")
    return WorkflowEvent(
        fields["type"],
        fields.get("data"),
        executor_id=fields.get("executor_id"),
        step=fields.get("step"),
        request_id=fields.get("request_id"),
        response_type=None if hint is None else decode_hint(hint),
        state=None if state is None else WorkflowRunState(state),
        timestamp=fields.get("timestamp"),
    )


# Events are saved values too: a checkpoint lists its open requests as ``request_info`` events.
register_type(WorkflowEvent, "agentnb.WorkflowEvent", encoder=_event_fields, decoder=_event_from_fields)
