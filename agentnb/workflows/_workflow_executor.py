"""Sub-workflows: ``WorkflowExecutor`` runs a whole workflow as one node of another.

Each message the node receives runs the inner workflow to completion (or until it asks for input). The
inner workflow's outputs are sent along the node's outgoing edges, or yielded as outputs of the outer
workflow when the node has none. A ``request_info`` inside the inner workflow surfaces as a request of
the outer one (its data is a :class:`SubWorkflowRequest`); the answer is passed back in, and the inner
run continues. The inner run's paused state is part of the node's checkpoint state, so answering works
after a restart too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from .._serialization import decode, encode
from ._checkpoints import WorkflowCheckpoint
from ._context import WorkflowContext
from ._events import WorkflowEvent, WorkflowRunResult
from ._executor import Executor
from ._handlers import response_handler
from ._workflow import Workflow

__all__ = ["SubWorkflowRequest", "WorkflowExecutor"]


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


class WorkflowExecutor(Executor):
    """Run ``workflow`` as a single executor of another workflow.

    Args:
        workflow: The inner workflow (its start executor's input types become this node's).
        id: The node id (default: the inner workflow's name).

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

    def __init__(self, workflow: Workflow, *, id: str | None = None) -> None:
        super().__init__(id or workflow.name)
        self.workflow = workflow
        inputs = workflow.input_types
        accepted: Any = inputs[0] if len(inputs) == 1 else Union[tuple(inputs)]  # noqa: UP007
        self.register_handler(self._on_input, input=accepted, output=Any, workflow_output=Any)

    async def _on_input(self, message: Any, ctx: WorkflowContext[Any, Any]) -> None:
        await self._forward(await self.workflow.run(message), ctx)

    @response_handler(request=SubWorkflowRequest, response=object, output=Any, workflow_output=Any)
    async def _on_response(self, request: SubWorkflowRequest, response: Any, ctx: WorkflowContext[Any, Any]) -> None:
        await self._forward(await self.workflow.run(responses={request.request_id: response}), ctx)

    async def _forward(self, result: WorkflowRunResult, ctx: WorkflowContext[Any, Any]) -> None:
        # The child's progress reaches the parent's stream as intermediate output of this node, whatever the
        # parent's output selection: callers see it without knowing the child's executors.
        for value in result.get_intermediate_outputs():
            await ctx.add_event(WorkflowEvent("intermediate", value))
        terminal = not ctx.outgoing_executor_ids
        for output in result.get_outputs():
            if terminal:
                await ctx.yield_output(output)
            else:
                await ctx.send_message(output)
        for event in result.get_request_info_events():
            request = SubWorkflowRequest(event.request_id or "", event.data, event.executor_id)
            await ctx.request_info(request_data=request, response_type=event.response_type or Any, request_id=None)

    def reset(self) -> None:
        self.workflow._last = None  # pyright: ignore[reportPrivateUsage]

    async def on_checkpoint_save(self) -> dict[str, Any]:
        last = self.workflow._last  # pyright: ignore[reportPrivateUsage]
        if last is None or not last.pending_requests:
            return {}
        return {"paused": (await last.snapshot()).to_dict()}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        paused = state.get("paused")
        if paused is None:
            self.workflow._last = None  # pyright: ignore[reportPrivateUsage]
            return
        from ._runner import RunContext

        run = RunContext(self.workflow, storage=None, store=None, streaming=False)
        await run.restore(WorkflowCheckpoint.from_dict(paused))
        self.workflow._last = run  # pyright: ignore[reportPrivateUsage]
