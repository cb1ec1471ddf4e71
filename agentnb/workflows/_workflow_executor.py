"""Sub-workflows: ``WorkflowExecutor`` runs a whole workflow as one node of another.

Each message the node receives runs the inner workflow to completion (or until it asks for input). The
inner workflow's outputs are sent along the node's outgoing edges, or yielded as outputs of the outer
workflow when the node has none (``allow_direct_output=True``: always yielded).

A ``request_info`` inside the inner workflow reaches the outer one in one of two ways, as in the reference:

- intercepted: a :class:`SubWorkflowRequestMessage` is sent along the node's edges to an executor of the
  outer workflow, which answers with ``request.create_response(data)`` sent back to the node (a
  :class:`SubWorkflowResponseMessage`), or raises the request itself;
- propagated: it becomes a request of the outer workflow (its data a :class:`SubWorkflowRequest`), answered
  like any other.

``propagate_request=False`` intercepts and ``True`` propagates; by default (``None``) the request is
intercepted when an executor the node has an edge to accepts ``SubWorkflowRequestMessage``, and propagated
otherwise (so a sub-workflow with no interceptor never loses a request). Either way the answer is passed back
in and the inner run continues. The inner run's paused state is part of the node's checkpoint state, so
answering works after a restart too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union, cast

from .._serialization import decode, encode
from ..exceptions import WorkflowRunError
from ._checkpoints import WorkflowCheckpoint
from ._context import WorkflowContext
from ._events import WorkflowEvent, WorkflowRunResult, decode_hint, encode_hint
from ._executor import Executor
from ._handlers import response_handler
from ._typing_utils import describe, is_compatible, matches
from ._workflow import Workflow

if TYPE_CHECKING:
    from ._runner import RunContext

__all__ = ["SubWorkflowRequest", "SubWorkflowRequestMessage", "SubWorkflowResponseMessage", "WorkflowExecutor"]

logger = logging.getLogger(__name__)


@dataclass
class SubWorkflowRequest:
    """A request raised inside a sub-workflow, as the outer workflow sees it.

    Example:
        >>> SubWorkflowRequest("r1", "approve?", "reviewer").request_data
        'approve?'
    """

    request_id: str
    request_data: Any
    executor_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "request_id": self.request_id,
            "request_data": encode(self.request_data),
            "executor_id": self.executor_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubWorkflowRequest:
        """Rebuild from :meth:`to_dict` output."""
        return cls(data["request_id"], decode(data["request_data"]), data.get("executor_id"))


def _event_record(event: WorkflowEvent) -> dict[str, Any]:
    return {
        "request_id": event.request_id,
        "data": encode(event.data),
        "executor_id": event.executor_id,
        "response_type": encode_hint(event.response_type),
    }


def _event_from_record(data: dict[str, Any]) -> WorkflowEvent:
    return WorkflowEvent(
        "request_info",
        decode(data["data"]),
        executor_id=data.get("executor_id"),
        request_id=data.get("request_id"),
        response_type=decode_hint(data.get("response_type")),
    )


@dataclass
class SubWorkflowResponseMessage:
    """The answer to a :class:`SubWorkflowRequestMessage`, sent back to the sub-workflow's node.

    Make it with :meth:`SubWorkflowRequestMessage.create_response` (which checks the answer's type).
    """

    data: Any
    source_event: WorkflowEvent

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (for checkpoints taken while it is in flight)."""
        return {"data": encode(self.data), "source_event": _event_record(self.source_event)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubWorkflowResponseMessage:
        """Rebuild from :meth:`to_dict` output."""
        return cls(decode(data["data"]), _event_from_record(data["source_event"]))


@dataclass
class SubWorkflowRequestMessage:
    """A sub-workflow's request, sent to the outer workflow's executors to intercept (as in the reference).

    Attributes:
        source_event: The inner workflow's ``request_info`` event (``.data`` is the request, ``.request_id``,
            ``.response_type``).
        executor_id: The id of the :class:`WorkflowExecutor` node the answer must be sent back to.

    Example:
        >>> event = WorkflowEvent("request_info", "approve?", request_id="r1", response_type=bool)
        >>> message = SubWorkflowRequestMessage(event, executor_id="sub")
        >>> message.create_response(True).data
        True
    """

    source_event: WorkflowEvent
    executor_id: str

    @property
    def source_executor_id(self) -> str:
        """Alias of ``executor_id``: where to send the answer (``ctx.send_message(..., target_id=...)``)."""
        return self.executor_id

    def create_response(self, data: Any) -> SubWorkflowResponseMessage:
        """Wrap ``data`` as the answer; raises ``TypeError`` when it is not of the request's response type."""
        expected = self.source_event.response_type
        if expected is not None and expected is not Any and not matches(data, expected):
            raise TypeError(
                f"Response data type {type(data).__name__} does not match the expected type {describe(expected)} "
                f"for request {self.source_event.request_id!r}."
            )
        return SubWorkflowResponseMessage(data=data, source_event=self.source_event)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (for checkpoints taken while it is in flight)."""
        return {"source_event": _event_record(self.source_event), "executor_id": self.executor_id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SubWorkflowRequestMessage:
        """Rebuild from :meth:`to_dict` output."""
        return cls(_event_from_record(data["source_event"]), data["executor_id"])


class WorkflowExecutor(Executor):
    """Run ``workflow`` as a single executor of another workflow.

    Args:
        workflow: The inner workflow (its start executor's input types become this node's).
        id: The node id (default: the inner workflow's name).
        allow_direct_output: Yield the inner workflow's outputs as the outer workflow's, even when the node
            has outgoing edges (by default they are sent along them).
        propagate_request: ``True``: the inner workflow's requests become the outer workflow's; ``False``:
            they are sent as :class:`SubWorkflowRequestMessage` along the node's edges; ``None`` (default):
            sent when a target accepts them, else propagated.

    Example:
        >>> from typing_extensions import Never
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, WorkflowExecutor, executor
        >>> @executor(id="inner")
        ... async def inner(text: str, ctx: WorkflowContext[Never, str]) -> None:
        ...     await ctx.yield_output(text.upper())
        >>> node = WorkflowExecutor(WorkflowBuilder(start_executor=inner, name="upper").build())
        >>> outer = WorkflowBuilder(start_executor=node).build()
        >>> (await outer.run("hi")).get_outputs()  # doctest: +SKIP
        ['HI']
    """

    def __init__(
        self,
        workflow: Workflow,
        id: str | None = None,
        *,
        allow_direct_output: bool = False,
        propagate_request: bool | None = None,
    ) -> None:
        super().__init__(id or workflow.name)
        self.workflow = workflow
        self.allow_direct_output = allow_direct_output
        self.propagate_request = propagate_request
        inputs = workflow.input_types
        accepted: Any = inputs[0] if len(inputs) == 1 else Union[tuple(inputs)]  # noqa: UP007
        # Each inner run that waits for answers, by the id of each request it waits on: several inputs may pause
        # runs of the (one) inner workflow at once, and each answer continues the run that asked.
        self._paused: dict[str, RunContext] = {}
        self.register_handler(self._on_input, input=accepted, output=Any, workflow_output=Any)
        self.register_handler(
            self._on_intercepted_answer, input=SubWorkflowResponseMessage, output=Any, workflow_output=Any
        )

    async def _on_input(self, message: Any, ctx: WorkflowContext[Any, Any]) -> None:
        if self._paused:
            logger.warning(
                "WorkflowExecutor %s received a new input while %d request(s) of its sub-workflow %s are pending; "
                "the inner workflow is one instance, so its executors start this run afresh. Keep the sub-workflow's "
                "executors free of per-run state, or answer the pending requests first.",
                self.id,
                len(self._paused),
                self.workflow.name,
            )
        tool_kwargs, client_kwargs = self._child_kwargs(ctx)
        result = await self.workflow.run(message, function_invocation_kwargs=tool_kwargs, client_kwargs=client_kwargs)
        await self._forward(result, ctx)

    @response_handler(request=SubWorkflowRequest, response=object, output=Any, workflow_output=Any)
    async def _on_response(self, request: SubWorkflowRequest, response: Any, ctx: WorkflowContext[Any, Any]) -> None:
        await self._resume({request.request_id: response}, ctx)

    async def _resume(self, responses: dict[str, Any], ctx: WorkflowContext[Any, Any]) -> None:
        for request_id in responses:
            paused = self._paused.pop(request_id, None)
            if paused is not None:
                self.workflow._last = paused  # pyright: ignore[reportPrivateUsage]
        tool_kwargs, client_kwargs = self._child_kwargs(ctx)
        result = await self.workflow.run(
            responses=responses, function_invocation_kwargs=tool_kwargs, client_kwargs=client_kwargs
        )
        await self._forward(result, ctx)

    def _child_kwargs(self, ctx: WorkflowContext[Any, Any]) -> tuple[Any, Any]:
        # The parent run's invocation kwargs reach the child's agents: the shared ones (this node's own over them)
        # and the per-executor entries that named none of the parent's executors.
        parent = ctx._inv.run.workflow.invocation_kwargs  # pyright: ignore[reportPrivateUsage]
        tools = parent.get("function_invocation_kwargs")
        client = parent.get("client_kwargs")
        return (
            None if tools is None else tools.for_subworkflow(self.id),
            None if client is None else client.for_subworkflow(self.id),
        )

    async def _on_intercepted_answer(self, answer: SubWorkflowResponseMessage, ctx: WorkflowContext[Any, Any]) -> None:
        request_id = answer.source_event.request_id or ""
        last = self.workflow._last  # pyright: ignore[reportPrivateUsage]
        if request_id not in self._paused and (last is None or request_id not in last.pending_requests):
            raise WorkflowRunError(
                f"Sub-workflow {self.id!r} got an answer to request {request_id!r}, which it is not waiting for "
                "(unknown, or answered already)."
            )
        await self._resume({request_id: answer.data}, ctx)

    def _intercepts(self, ctx: WorkflowContext[Any, Any]) -> bool:
        if self.propagate_request is not None:
            return not self.propagate_request
        executors = ctx._inv.run.workflow.executors  # pyright: ignore[reportPrivateUsage]
        return any(
            is_compatible(SubWorkflowRequestMessage, accepted)
            for target in ctx.outgoing_executor_ids
            for accepted in executors[target].input_types
        )

    def _track(self) -> None:
        run = self.workflow._last  # pyright: ignore[reportPrivateUsage]
        if run is not None:
            for request_id in run.pending_requests:
                self._paused[request_id] = run

    async def _forward(self, result: WorkflowRunResult, ctx: WorkflowContext[Any, Any]) -> None:
        self._track()
        # The child's progress reaches the parent's stream as intermediate output of this node, whatever the
        # parent's output selection: callers see it without knowing the child's executors.
        for value in result.get_intermediate_outputs():
            await ctx.add_event(WorkflowEvent("intermediate", value))
        terminal = self.allow_direct_output or not ctx.outgoing_executor_ids
        for output in result.get_outputs():
            if terminal:
                await ctx.yield_output(output)
            else:
                await ctx.send_message(output)
        requests = result.get_request_info_events()
        if requests and self._intercepts(ctx):
            for event in requests:
                await ctx.send_message(SubWorkflowRequestMessage(source_event=event, executor_id=self.id))
            return
        for event in requests:
            request = SubWorkflowRequest(event.request_id or "", event.data, event.executor_id)
            await ctx.request_info(request_data=request, response_type=event.response_type or Any, request_id=None)

    def to_dict(self) -> dict[str, Any]:
        """The node and, under ``workflow``, the whole sub-workflow it runs (:meth:`Workflow.to_dict`)."""
        return {**super().to_dict(), "workflow": self.workflow.to_dict()}

    def reset(self) -> None:
        self.workflow._last = None  # pyright: ignore[reportPrivateUsage]
        self._paused = {}

    async def on_checkpoint_save(self) -> dict[str, Any]:
        self._track()
        runs = list({id(run): run for run in self._paused.values() if run.pending_requests}.values())
        if not runs:
            return {}
        return {"paused": [(await run.snapshot()).to_json_dict() for run in runs]}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self.reset()
        paused = state.get("paused")
        if paused is None:
            return
        from ._runner import RunContext

        # One paused inner run per entry (a single dict in checkpoints written before runs were tracked apart).
        snapshots: list[Any] = cast("list[Any]", paused) if isinstance(paused, list) else [paused]
        for snapshot in snapshots:
            run = RunContext(self.workflow, storage=None, store=None, streaming=False)
            await run.restore(WorkflowCheckpoint.from_json_dict(cast("dict[str, Any]", snapshot)))
            self.workflow._last = run  # pyright: ignore[reportPrivateUsage]
            self._track()
