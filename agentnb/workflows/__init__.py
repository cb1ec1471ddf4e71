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

The graph, its runner, checkpoints and events load with the package; orchestrations, agent executors,
time travel, re-runs and drawing load on first use (``agentnb.workflows.SequentialBuilder`` imports them
then), so importing a workflow costs what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._builder import WorkflowBuilder
from ._checkpoints import (
    CheckpointID,
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
    INTERNAL_SOURCE_ID,
    Case,
    Default,
    Edge,
    EdgeCondition,
    EdgeGroup,
    FanInEdgeGroup,
    FanOutEdgeGroup,
    SingleEdgeGroup,
    SwitchCaseEdgeGroup,
    SwitchCaseEdgeGroupCase,
    SwitchCaseEdgeGroupDefault,
    WorkflowMessage,
)
from ._events import (
    WorkflowErrorDetails,
    WorkflowEvent,
    WorkflowEventSource,
    WorkflowEventType,
    WorkflowRunResult,
    WorkflowRunState,
    merge_streamed_outputs,
)
from ._executor import Executor, FunctionExecutor, executor
from ._handlers import handler, response_handler
from ._validation import validate_workflow_graph
from ._workflow import Workflow

if TYPE_CHECKING:
    from ._agent_executor import AgentExecutor, AgentExecutorRequest, AgentExecutorResponse, resolve_agent_id
    from ._edge_runner import EdgeRunner, create_edge_runner
    from ._functional import FunctionalWorkflow, FunctionalWorkflowDefinition, StepWrapper, step, workflow
    from ._functional_agent import FunctionalWorkflowAgent
    from ._functional_run import RunContext, get_run_context
    from ._functional_view import StepCallState, step_timeline
    from ._invocation_kwargs import WorkflowInvocationKwargs
    from ._orchestrations import (
        AgentRequestInfoResponse,
        ConcurrentBuilder,
        GroupChatBuilder,
        GroupChatDecision,
        GroupChatOrchestrator,
        GroupChatRequestMessage,
        GroupChatRequestSentEvent,
        GroupChatResponseReceivedEvent,
        GroupChatSelectionFunction,
        GroupChatState,
        HandoffAgentExecutor,
        HandoffAgentUserRequest,
        HandoffBuilder,
        HandoffConfiguration,
        HandoffSentEvent,
        HandoffUserInputRequest,
        MagenticAgentExecutor,
        MagenticBuilder,
        MagenticContext,
        MagenticManagerBase,
        MagenticOrchestrator,
        MagenticOrchestratorEvent,
        MagenticOrchestratorEventType,
        MagenticPlanReviewRequest,
        MagenticPlanReviewResponse,
        MagenticProgressLedger,
        MagenticProgressLedgerItem,
        MagenticResetSignal,
        MagenticTaskLedger,
        ParticipantReviewRequest,
        ParticipantReviewResponse,
        SequentialBuilder,
        StandardMagenticManager,
        TerminationCondition,
        clean_conversation_for_handoff,
    )
    from ._rerun import EdgeMessage, ExecutorActivity, RerunChange, RerunResult, editable_input, parse_rerun_input
    from ._runner import Runner
    from ._runner_context import InProcRunnerContext, RunnerContext
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
    from ._workflow_agent import WorkflowAgent
    from ._workflow_executor import (
        SubWorkflowRequest,
        SubWorkflowRequestMessage,
        SubWorkflowResponseMessage,
        WorkflowExecutor,
    )

# -- generated by scripts/generate_init.py from the imports above; do not edit --------------------------
# name -> module that defines it; imported on first attribute access so `import agentnb.workflows` stays light.
_LAZY_EXPORTS: dict[str, str] = {
    "AgentExecutor": "agentnb.workflows._agent_executor",
    "AgentExecutorRequest": "agentnb.workflows._agent_executor",
    "AgentExecutorResponse": "agentnb.workflows._agent_executor",
    "AgentRequestInfoResponse": "agentnb.workflows._orchestrations",
    "CheckpointDiff": "agentnb.workflows._timetravel",
    "CheckpointHistory": "agentnb.workflows._timetravel",
    "CheckpointNode": "agentnb.workflows._timetravel",
    "ConcurrentBuilder": "agentnb.workflows._orchestrations",
    "EdgeMessage": "agentnb.workflows._rerun",
    "EdgeRunner": "agentnb.workflows._edge_runner",
    "ExecutorActivity": "agentnb.workflows._rerun",
    "ForkEdits": "agentnb.workflows._timetravel",
    "FunctionalWorkflow": "agentnb.workflows._functional",
    "FunctionalWorkflowAgent": "agentnb.workflows._functional_agent",
    "FunctionalWorkflowDefinition": "agentnb.workflows._functional",
    "GroupChatBuilder": "agentnb.workflows._orchestrations",
    "GroupChatDecision": "agentnb.workflows._orchestrations",
    "GroupChatOrchestrator": "agentnb.workflows._orchestrations",
    "GroupChatRequestMessage": "agentnb.workflows._orchestrations",
    "GroupChatRequestSentEvent": "agentnb.workflows._orchestrations",
    "GroupChatResponseReceivedEvent": "agentnb.workflows._orchestrations",
    "GroupChatSelectionFunction": "agentnb.workflows._orchestrations",
    "GroupChatState": "agentnb.workflows._orchestrations",
    "HandoffAgentExecutor": "agentnb.workflows._orchestrations",
    "HandoffAgentUserRequest": "agentnb.workflows._orchestrations",
    "HandoffBuilder": "agentnb.workflows._orchestrations",
    "HandoffConfiguration": "agentnb.workflows._orchestrations",
    "HandoffSentEvent": "agentnb.workflows._orchestrations",
    "HandoffUserInputRequest": "agentnb.workflows._orchestrations",
    "InProcRunnerContext": "agentnb.workflows._runner_context",
    "MagenticAgentExecutor": "agentnb.workflows._orchestrations",
    "MagenticBuilder": "agentnb.workflows._orchestrations",
    "MagenticContext": "agentnb.workflows._orchestrations",
    "MagenticManagerBase": "agentnb.workflows._orchestrations",
    "MagenticOrchestrator": "agentnb.workflows._orchestrations",
    "MagenticOrchestratorEvent": "agentnb.workflows._orchestrations",
    "MagenticOrchestratorEventType": "agentnb.workflows._orchestrations",
    "MagenticPlanReviewRequest": "agentnb.workflows._orchestrations",
    "MagenticPlanReviewResponse": "agentnb.workflows._orchestrations",
    "MagenticProgressLedger": "agentnb.workflows._orchestrations",
    "MagenticProgressLedgerItem": "agentnb.workflows._orchestrations",
    "MagenticResetSignal": "agentnb.workflows._orchestrations",
    "MagenticTaskLedger": "agentnb.workflows._orchestrations",
    "ParticipantReviewRequest": "agentnb.workflows._orchestrations",
    "ParticipantReviewResponse": "agentnb.workflows._orchestrations",
    "RerunChange": "agentnb.workflows._rerun",
    "RerunResult": "agentnb.workflows._rerun",
    "RunContext": "agentnb.workflows._functional_run",
    "Runner": "agentnb.workflows._runner",
    "RunnerContext": "agentnb.workflows._runner_context",
    "SequentialBuilder": "agentnb.workflows._orchestrations",
    "StandardMagenticManager": "agentnb.workflows._orchestrations",
    "StepCallState": "agentnb.workflows._functional_view",
    "StepWrapper": "agentnb.workflows._functional",
    "SubWorkflowRequest": "agentnb.workflows._workflow_executor",
    "SubWorkflowRequestMessage": "agentnb.workflows._workflow_executor",
    "SubWorkflowResponseMessage": "agentnb.workflows._workflow_executor",
    "TerminationCondition": "agentnb.workflows._orchestrations",
    "WorkflowAgent": "agentnb.workflows._workflow_agent",
    "WorkflowExecutor": "agentnb.workflows._workflow_executor",
    "WorkflowInvocationKwargs": "agentnb.workflows._invocation_kwargs",
    "WorkflowViz": "agentnb.workflows._viz",
    "check_pending_message": "agentnb.workflows._timetravel",
    "checkpoint_tree_svg": "agentnb.workflows._viz",
    "clean_conversation_for_handoff": "agentnb.workflows._orchestrations",
    "create_edge_runner": "agentnb.workflows._edge_runner",
    "editable_input": "agentnb.workflows._rerun",
    "editable_state": "agentnb.workflows._timetravel",
    "get_run_context": "agentnb.workflows._functional_run",
    "parse_fork_edits": "agentnb.workflows._timetravel",
    "parse_rerun_input": "agentnb.workflows._rerun",
    "resolve_agent_id": "agentnb.workflows._agent_executor",
    "step": "agentnb.workflows._functional",
    "step_timeline": "agentnb.workflows._functional_view",
    "workflow": "agentnb.workflows._functional",
}

__all__ = [
    "INTERNAL_SOURCE_ID",
    "AgentExecutor",
    "AgentExecutorRequest",
    "AgentExecutorResponse",
    "AgentRequestInfoResponse",
    "Case",
    "CheckpointDiff",
    "CheckpointHistory",
    "CheckpointID",
    "CheckpointInfo",
    "CheckpointNode",
    "CheckpointStorage",
    "ConcurrentBuilder",
    "Default",
    "Edge",
    "EdgeCondition",
    "EdgeGroup",
    "EdgeMessage",
    "EdgeRunner",
    "Executor",
    "ExecutorActivity",
    "FanInEdgeGroup",
    "FanOutEdgeGroup",
    "FileCheckpointStorage",
    "ForkEdits",
    "FunctionExecutor",
    "FunctionalWorkflow",
    "FunctionalWorkflowAgent",
    "FunctionalWorkflowDefinition",
    "GroupChatBuilder",
    "GroupChatDecision",
    "GroupChatOrchestrator",
    "GroupChatRequestMessage",
    "GroupChatRequestSentEvent",
    "GroupChatResponseReceivedEvent",
    "GroupChatSelectionFunction",
    "GroupChatState",
    "HandoffAgentExecutor",
    "HandoffAgentUserRequest",
    "HandoffBuilder",
    "HandoffConfiguration",
    "HandoffSentEvent",
    "HandoffUserInputRequest",
    "InMemoryCheckpointStorage",
    "InProcRunnerContext",
    "MagenticAgentExecutor",
    "MagenticBuilder",
    "MagenticContext",
    "MagenticManagerBase",
    "MagenticOrchestrator",
    "MagenticOrchestratorEvent",
    "MagenticOrchestratorEventType",
    "MagenticPlanReviewRequest",
    "MagenticPlanReviewResponse",
    "MagenticProgressLedger",
    "MagenticProgressLedgerItem",
    "MagenticResetSignal",
    "MagenticTaskLedger",
    "ParticipantReviewRequest",
    "ParticipantReviewResponse",
    "PendingMessage",
    "PendingRequest",
    "RerunChange",
    "RerunResult",
    "RunContext",
    "RunStoreCheckpointStorage",
    "Runner",
    "RunnerContext",
    "SQLiteCheckpointStorage",
    "SequentialBuilder",
    "SingleEdgeGroup",
    "StandardMagenticManager",
    "StepCallState",
    "StepWrapper",
    "SubWorkflowRequest",
    "SubWorkflowRequestMessage",
    "SubWorkflowResponseMessage",
    "SwitchCaseEdgeGroup",
    "SwitchCaseEdgeGroupCase",
    "SwitchCaseEdgeGroupDefault",
    "TerminationCondition",
    "Workflow",
    "WorkflowAgent",
    "WorkflowBuilder",
    "WorkflowCheckpoint",
    "WorkflowContext",
    "WorkflowErrorDetails",
    "WorkflowEvent",
    "WorkflowEventSource",
    "WorkflowEventType",
    "WorkflowExecutor",
    "WorkflowInvocationKwargs",
    "WorkflowMessage",
    "WorkflowRunResult",
    "WorkflowRunState",
    "WorkflowViz",
    "check_pending_message",
    "checkpoint_tree_svg",
    "clean_conversation_for_handoff",
    "create_edge_runner",
    "editable_input",
    "editable_state",
    "executor",
    "get_run_context",
    "handler",
    "merge_streamed_outputs",
    "parse_fork_edits",
    "parse_rerun_input",
    "resolve_agent_id",
    "response_handler",
    "step",
    "step_timeline",
    "validate_workflow_graph",
    "workflow",
]
# -- end of generated block ---------------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentnb.workflows' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
