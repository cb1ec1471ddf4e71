"""The orchestration builders under the reference's module name: ``from agentnb.orchestrations import ...``.

An alias of the orchestration names in :mod:`agentnb.workflows` (the same objects), so code written as
``from agent_framework.orchestrations import SequentialBuilder`` needs only its package name changed.
"""

from __future__ import annotations

from ..workflows import (
    AgentRequestInfoResponse,
    ConcurrentBuilder,
    GroupChatBuilder,
    GroupChatDecision,
    GroupChatOrchestrator,
    GroupChatRequestSentEvent,
    GroupChatResponseReceivedEvent,
    GroupChatSelectionFunction,
    GroupChatState,
    HandoffAgentUserRequest,
    HandoffBuilder,
    HandoffConfiguration,
    HandoffSentEvent,
    HandoffUserInputRequest,
    MagenticBuilder,
    MagenticContext,
    MagenticManagerBase,
    MagenticOrchestrator,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
    MagenticTaskLedger,
    ParticipantReviewRequest,
    ParticipantReviewResponse,
    SequentialBuilder,
    StandardMagenticManager,
    TerminationCondition,
    clean_conversation_for_handoff,
)

__all__ = [
    "AgentRequestInfoResponse",
    "ConcurrentBuilder",
    "GroupChatBuilder",
    "GroupChatDecision",
    "GroupChatOrchestrator",
    "GroupChatRequestSentEvent",
    "GroupChatResponseReceivedEvent",
    "GroupChatSelectionFunction",
    "GroupChatState",
    "HandoffAgentUserRequest",
    "HandoffBuilder",
    "HandoffConfiguration",
    "HandoffSentEvent",
    "HandoffUserInputRequest",
    "MagenticBuilder",
    "MagenticContext",
    "MagenticManagerBase",
    "MagenticOrchestrator",
    "MagenticPlanReviewRequest",
    "MagenticPlanReviewResponse",
    "MagenticProgressLedger",
    "MagenticTaskLedger",
    "ParticipantReviewRequest",
    "ParticipantReviewResponse",
    "SequentialBuilder",
    "StandardMagenticManager",
    "TerminationCondition",
    "clean_conversation_for_handoff",
]
