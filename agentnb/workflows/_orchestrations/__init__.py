"""Multi-agent orchestrations built from ordinary workflow parts: sequential, concurrent, handoff, group chat, magentic.

Each builder returns a plain :class:`~agentnb.workflows.Workflow`, so an orchestration streams events,
writes checkpoints, resumes in another process, answers ``request_info`` requests and shows in the
DevUI like any hand-built graph. Participants are agents with unique names; tool approvals raised
inside any participant surface as the workflow's own ``request_info`` events.
"""

from __future__ import annotations

from ..._serialization import register_type
from ._base import (
    AgentRequestInfoResponse,
    OrchestrationBuilder,
    OrchestrationState,
    ParticipantExecutor,
    ParticipantReviewRequest,
    ParticipantReviewResponse,
    TerminationCondition,
    clean_conversation_for_handoff,
    create_completion_message,
)
from ._concurrent import ConcurrentBuilder
from ._group_chat import (
    GroupChatBuilder,
    GroupChatDecision,
    GroupChatOrchestrator,
    GroupChatRequestMessage,
    GroupChatRequestSentEvent,
    GroupChatResponseReceivedEvent,
    GroupChatSelectionFunction,
    GroupChatState,
)
from ._handoff import (
    HandoffAgentExecutor,
    HandoffAgentUserRequest,
    HandoffBuilder,
    HandoffConfiguration,
    HandoffSentEvent,
    HandoffUserInputRequest,
)
from ._magentic import (
    MAGENTIC_MANAGER_NAME,
    ORCH_MSG_KIND_INSTRUCTION,
    ORCH_MSG_KIND_NOTICE,
    ORCH_MSG_KIND_TASK_LEDGER,
    ORCH_MSG_KIND_USER_TASK,
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
    StandardMagenticManager,
)
from ._sequential import SequentialBuilder

__all__ = [
    "MAGENTIC_MANAGER_NAME",
    "ORCH_MSG_KIND_INSTRUCTION",
    "ORCH_MSG_KIND_NOTICE",
    "ORCH_MSG_KIND_TASK_LEDGER",
    "ORCH_MSG_KIND_USER_TASK",
    "AgentRequestInfoResponse",
    "ConcurrentBuilder",
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
    "OrchestrationBuilder",
    "OrchestrationState",
    "ParticipantExecutor",
    "ParticipantReviewRequest",
    "ParticipantReviewResponse",
    "SequentialBuilder",
    "StandardMagenticManager",
    "TerminationCondition",
    "clean_conversation_for_handoff",
    "create_completion_message",
]


def _register_stable_ids() -> None:
    # Checkpoints name these classes by their public home, so moving a private module never breaks old data
    # (and a reader that has not imported them yet can still find them by importing agentnb.workflows).
    for cls in (
        AgentRequestInfoResponse,
        GroupChatDecision,
        GroupChatState,
        HandoffUserInputRequest,
        MagenticOrchestratorEvent,
        MagenticPlanReviewRequest,
        MagenticPlanReviewResponse,
        MagenticProgressLedger,
        MagenticTaskLedger,
        ParticipantReviewRequest,
        ParticipantReviewResponse,
    ):
        register_type(cls, f"agentnb.workflows:{cls.__name__}")


_register_stable_ids()
