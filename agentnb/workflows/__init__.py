"""Workflows: graphs of executors run in supersteps, with checkpoints, resume, time-travel and fork.

Build a graph with :class:`WorkflowBuilder` from :class:`Executor` subclasses (``@handler`` methods),
``@executor`` functions and agents; run it with ``await workflow.run(message)`` or stream its
:class:`WorkflowEvent` s with ``workflow.run(message, stream=True)``. Checkpoints (in memory, in files, or
in the SQLite run store) make runs resumable in another process; :class:`CheckpointHistory` lists, diffs
and forks them; :class:`WorkflowViz` draws the graph as Mermaid or SVG.

Extension points (what orchestrations and custom executors build on):

- ``ctx.request_info(request_data=..., response_type=...)`` + ``@response_handler``: pause for outside input;
  answers arrive through ``workflow.run(responses=...)``, also after a restart from a checkpoint.
- ``ctx.set_state`` / ``ctx.get_state``: shared state, committed per superstep in executor order, checkpointed.
- :class:`AgentExecutor`: subclass and override ``prepare_messages()`` / ``emit_response()`` to change what an
  agent sees or sends on; streaming (one ``output`` event per ``AgentResponseUpdate``, joined back by
  :func:`merge_streamed_outputs`) and tool approvals come with it.
- ``Executor.register_handler`` for handlers whose types depend on constructor arguments,
  ``on_checkpoint_save`` / ``on_checkpoint_restore`` for executor state, ``reset`` for per-run state.
- ``ctx.add_event(WorkflowEvent("my_type", data))`` for custom events; ``ctx.outgoing_executor_ids``.
- ``Workflow.to_dict()`` describes the graph as JSON (kept in the run store, drawn by :class:`WorkflowViz`).

Example:
    ```python
    from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

    @executor(id="upper")
    async def upper(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())

    @executor(id="exclaim")
    async def exclaim(text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(text + "!")

    workflow = WorkflowBuilder(start_executor=upper).add_edge(upper, exclaim).build()
    print((await workflow.run("hello")).get_outputs())  # ['HELLO!']
    ```
"""

from __future__ import annotations

from ._agent_executor import AgentExecutor, AgentExecutorRequest, AgentExecutorResponse
from ._builder import WorkflowBuilder
from ._checkpoints import (
    CheckpointInfo,
    CheckpointStorage,
    FileCheckpointStorage,
    InMemoryCheckpointStorage,
    PendingMessage,
    PendingRequest,
    RunStoreCheckpointStorage,
    SQLiteCheckpointStorage,
    WorkflowCheckpoint,
)
from ._context import WorkflowContext
from ._edges import (
    Case,
    Default,
    EdgeGroup,
    FanInEdgeGroup,
    FanOutEdgeGroup,
    SingleEdgeGroup,
    SwitchCaseEdgeGroup,
)
from ._events import (
    WorkflowErrorDetails,
    WorkflowEvent,
    WorkflowEventType,
    WorkflowRunResult,
    WorkflowRunState,
    merge_streamed_outputs,
)
from ._executor import Executor, FunctionExecutor, executor
from ._handlers import handler, response_handler
from ._orchestrations import (
    AgentRequestInfoResponse,
    ConcurrentBuilder,
    GroupChatBuilder,
    GroupChatDecision,
    GroupChatRequestSentEvent,
    GroupChatResponseReceivedEvent,
    GroupChatSelectionFunction,
    GroupChatState,
    HandoffAgentUserRequest,
    HandoffBuilder,
    HandoffSentEvent,
    HandoffUserInputRequest,
    MagenticBuilder,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
    MagenticTaskLedger,
    ParticipantReviewRequest,
    ParticipantReviewResponse,
    SequentialBuilder,
)
from ._rerun import EdgeMessage, ExecutorActivity, RerunChange, RerunResult, editable_input, parse_rerun_input
from ._timetravel import (
    CheckpointDiff,
    CheckpointHistory,
    CheckpointNode,
    ForkEdits,
    check_pending_message,
    editable_state,
    parse_fork_edits,
)
from ._viz import WorkflowViz, checkpoint_tree_svg
from ._workflow import Workflow
from ._workflow_agent import WorkflowAgent
from ._workflow_executor import (
    SubWorkflowRequest,
    SubWorkflowRequestMessage,
    SubWorkflowResponseMessage,
    WorkflowExecutor,
)

__all__ = [
    "AgentExecutor",
    "AgentExecutorRequest",
    "AgentExecutorResponse",
    "AgentRequestInfoResponse",
    "Case",
    "CheckpointDiff",
    "CheckpointHistory",
    "CheckpointInfo",
    "CheckpointNode",
    "CheckpointStorage",
    "ConcurrentBuilder",
    "Default",
    "EdgeGroup",
    "EdgeMessage",
    "Executor",
    "ExecutorActivity",
    "FanInEdgeGroup",
    "FanOutEdgeGroup",
    "FileCheckpointStorage",
    "ForkEdits",
    "FunctionExecutor",
    "GroupChatBuilder",
    "GroupChatDecision",
    "GroupChatRequestSentEvent",
    "GroupChatResponseReceivedEvent",
    "GroupChatSelectionFunction",
    "GroupChatState",
    "HandoffAgentUserRequest",
    "HandoffBuilder",
    "HandoffSentEvent",
    "HandoffUserInputRequest",
    "InMemoryCheckpointStorage",
    "MagenticBuilder",
    "MagenticPlanReviewRequest",
    "MagenticPlanReviewResponse",
    "MagenticProgressLedger",
    "MagenticTaskLedger",
    "ParticipantReviewRequest",
    "ParticipantReviewResponse",
    "PendingMessage",
    "PendingRequest",
    "RerunChange",
    "RerunResult",
    "RunStoreCheckpointStorage",
    "SQLiteCheckpointStorage",
    "SequentialBuilder",
    "SingleEdgeGroup",
    "SubWorkflowRequest",
    "SubWorkflowRequestMessage",
    "SubWorkflowResponseMessage",
    "SwitchCaseEdgeGroup",
    "Workflow",
    "WorkflowAgent",
    "WorkflowBuilder",
    "WorkflowCheckpoint",
    "WorkflowContext",
    "WorkflowErrorDetails",
    "WorkflowEvent",
    "WorkflowEventType",
    "WorkflowExecutor",
    "WorkflowRunResult",
    "WorkflowRunState",
    "WorkflowViz",
    "check_pending_message",
    "checkpoint_tree_svg",
    "editable_input",
    "editable_state",
    "executor",
    "handler",
    "merge_streamed_outputs",
    "parse_fork_edits",
    "parse_rerun_input",
    "response_handler",
]
