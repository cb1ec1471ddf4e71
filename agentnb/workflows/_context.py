"""The ``WorkflowContext`` a handler receives: send messages, yield outputs, share state, ask for input.

``WorkflowContext[OutT, W_OutT]`` is typed by what the handler may *send* (``OutT``) and what it may
*yield* as workflow output (``W_OutT``); both default to ``Never``. The builder reads these hints to
validate edges, and the runner checks every sent or yielded value against them.

Extension points (used by agent executors and orchestrations):

- ``ctx.request_info(request_data=..., response_type=...)`` pauses the run for outside input; the
  answer arrives in the executor's ``@response_handler``.
- ``ctx.set_state`` / ``ctx.get_state`` share JSON-serializable values between executors. Writes are
  visible to the writer at once and to everyone else from the next superstep (applied in the
  deterministic executor order), so executors running concurrently never race.
- ``ctx.add_event(WorkflowEvent(...))`` publishes custom events; ``ctx.is_streaming`` tells an executor
  whether the caller is streaming (agent executors then stream their agent's updates).
- ``ctx.agent_run_kwargs()`` is what the run's caller gave this executor's agent
  (``Workflow.run(function_invocation_kwargs=..., client_kwargs=...)``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, cast

from typing_extensions import Never, TypeVar

from ._events import WorkflowEvent
from ._typing_utils import describe, matches

if TYPE_CHECKING:
    from ._runner import Invocation

__all__ = ["DELETED", "WorkflowContext"]

OutT = TypeVar("OutT", default=Never)
W_OutT = TypeVar("W_OutT", default=Never)

_MISSING: Any = object()


class WorkflowContext(Generic[OutT, W_OutT]):
    """What a handler can do while it runs: send, yield, share state, request outside input.

    Example:
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor
        >>> @executor(id="shout")
        ... async def shout(text: str, ctx: WorkflowContext[Never, str]) -> None:
        ...     await ctx.yield_output(text.upper())
        >>> result = await WorkflowBuilder(start_executor=shout).build().run("hi")  # doctest: +SKIP
        >>> result.get_outputs()  # doctest: +SKIP
        ['HI']
    """

    __slots__ = ("_inv", "_output_types", "_source_id", "_workflow_output_types")

    def __init__(
        self,
        invocation: Invocation,
        source_executor_id: str | None,
        output_types: tuple[Any, ...] | None,
        workflow_output_types: tuple[Any, ...] | None,
    ) -> None:
        self._inv = invocation
        self._source_id = source_executor_id
        self._output_types = output_types
        self._workflow_output_types = workflow_output_types

    # -- identity -------------------------------------------------------------------------------------
    @property
    def executor_id(self) -> str:
        """The id of the executor this context belongs to."""
        return self._inv.executor_id

    @property
    def step(self) -> int:
        """The current superstep number (1-based)."""
        return self._inv.run.step

    @property
    def run_id(self) -> str:
        """The id of the current run."""
        return self._inv.run.run_id

    @property
    def is_streaming(self) -> bool:
        """Whether the caller is streaming events (agent executors then stream their updates)."""
        return self._inv.run.streaming

    @property
    def outgoing_executor_ids(self) -> list[str]:
        """The executors this one has edges to (empty for a terminal executor)."""
        groups = self._inv.run.workflow.groups_by_source.get(self.executor_id, ())
        return list(dict.fromkeys(t for g in groups for t in g.targets))

    def agent_run_kwargs(self) -> dict[str, Any]:
        """The ``function_invocation_kwargs`` / ``client_kwargs`` the run gives this executor's agent.

        An executor that runs an agent itself passes them on: ``await agent.run(messages, **ctx.agent_run_kwargs())``
        (empty when the caller of ``Workflow.run`` gave none for this executor).
        """
        return self._inv.run.workflow.agent_run_kwargs(self._inv.executor_id)

    def get_source_executor_id(self) -> str | None:
        """The executor that sent the message being handled (``None`` for the workflow input or a response)."""
        return self._source_id

    # -- messages and outputs -----------------------------------------------------------------------------
    async def send_message(self, message: OutT, target_id: str | None = None) -> None:
        """Send ``message`` along this executor's outgoing edges; it is delivered in the next superstep.

        Args:
            message: The value to send; it must match the handler's ``WorkflowContext[OutT, ...]``.
            target_id: Deliver only along the edge to this executor.
        """
        types = self._output_types
        # A value of one of the declared classes itself needs no per-hint look (the usual case).
        if types is not None and type(message) not in types and not any(matches(message, t) for t in types):
            raise TypeError(_type_error(self.executor_id, "sent", message, types, "first"))
        self._inv.outbox.append((message, target_id))

    async def yield_output(self, output: W_OutT) -> None:
        """Publish ``output`` from the workflow (an ``output`` or ``intermediate`` event, per the builder)."""
        types = self._workflow_output_types
        if types is not None and type(output) not in types and not any(matches(output, t) for t in types):
            raise TypeError(_type_error(self.executor_id, "yielded", output, types, "second"))
        self._inv.yield_output(output)

    async def add_event(self, event: WorkflowEvent) -> None:
        """Publish a custom event into the run's event stream (it is stamped with this executor and step)."""
        if event.executor_id is None:
            event.executor_id = self.executor_id
        if event.step is None:
            event.step = self.step
        self._inv.run.emit(event)

    # -- shared state ---------------------------------------------------------------------------------------
    def set_state(self, key: str, value: Any) -> None:
        """Set a shared-state value (visible to other executors from the next superstep)."""
        if not isinstance(cast(object, key), str):  # executors written without type hints may pass anything
            raise TypeError(f"State keys must be str, got {type(key).__name__}.")
        self._inv.state_writes[key] = value

    def get_state(self, key: str, default: Any = None) -> Any:
        """Read a shared-state value, seeing this executor's own writes from the current superstep."""
        writes = self._inv.state_writes
        if key in writes:
            value = writes[key]
            return default if value is DELETED else value
        return self._inv.run.shared_state.get(key, default)

    def has_state(self, key: str) -> bool:
        """Whether ``key`` is set in shared state."""
        return self.get_state(key, _MISSING) is not _MISSING

    def delete_state(self, key: str) -> None:
        """Remove ``key`` from shared state (from the next superstep for other executors)."""
        self._inv.state_writes[key] = DELETED

    # -- human in the loop -------------------------------------------------------------------------------
    async def request_info(self, request_data: Any, response_type: Any, *, request_id: str | None = None) -> str:
        """Ask outside the workflow for a value; the run pauses until the caller answers.

        The caller answers with ``workflow.run(responses={request_id: value})`` (also in another process,
        with ``checkpoint_id=...``); the answer is delivered to this executor's ``@response_handler``
        whose hints match ``(type(request_data), response_type)``.

        Returns:
            The request id.
        """
        return self._inv.request_info(request_data, response_type, request_id)


class _Deleted:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<deleted>"


#: What a state write holds when the key was deleted (applied at the end of the superstep).
DELETED: Any = _Deleted()


def _type_error(executor_id: str, verb: str, value: Any, types: tuple[Any, ...], which: str) -> str:
    declared = " | ".join(describe(t) for t in types) if types else "Never"
    return (
        f"Executor {executor_id!r} {verb} a value of type {type(value).__qualname__}, but its handler declares "
        f"{declared}; add {type(value).__qualname__} to the {which} type argument of its WorkflowContext[...] hint."
    )
