"""Magentic orchestration: a manager agent plans, delegates step by step, re-plans on stalls, and answers.

The ``magentic_orchestrator`` executor (the start of a star graph) drives a manager (a
:class:`MagenticManagerBase`; :class:`StandardMagenticManager` asks an agent, with structured outputs):

1. **plan** — a :class:`MagenticTaskLedger` (known facts and a step-by-step plan) for the task; with plan
   review on, the caller approves or revises it through ``request_info`` (:class:`MagenticPlanReviewRequest`);
2. **progress** — each round, a :class:`MagenticProgressLedger`: is the task done, is the team looping or
   stuck, who speaks next and with what instruction; the orchestrator sends the conversation plus the
   instruction to that participant and adds its answer to the conversation;
3. **re-plan** — when the ledger reports no progress (or a loop) more than ``max_stall_count`` times in a
   row, the manager rewrites facts and plan (at most ``max_reset_count`` times);
4. **answer** — when the ledger says the task is done, the manager writes the final answer.

The output is the conversation: the task, every instruction and answer, and the final answer (or, when a
limit stops the run, a closing message saying which limit; its ``additional_properties["stop_reason"]``
names it). Ledgers are published as ``magentic_plan`` and ``magentic_progress`` events, and plans and
progress ledgers also as the reference's ``magentic_orchestrator`` events (:class:`MagenticOrchestratorEvent`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import Unpack

from ..._agents import SupportsAgentRun
from ..._types import Message
from ...exceptions import WorkflowRunError
from .._agent_executor import AgentExecutor, AgentExecutorResponse
from .._context import WorkflowContext
from .._events import WorkflowEvent
from .._handlers import handler, response_handler
from ._base import ConversationStart, OrchestrationBuilder, OrchestrationOptions
from ._magentic_manager import (
    MAGENTIC_MANAGER_NAME,
    MagenticContext,
    MagenticManagerBase,
    MagenticProgressLedger,
    MagenticProgressLedgerItem,
    MagenticTaskLedger,
    StandardMagenticManager,
)

if TYPE_CHECKING:
    from .._workflow import Workflow

__all__ = [
    "MAGENTIC_MANAGER_NAME",
    "ORCH_MSG_KIND_INSTRUCTION",
    "ORCH_MSG_KIND_NOTICE",
    "ORCH_MSG_KIND_TASK_LEDGER",
    "ORCH_MSG_KIND_USER_TASK",
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
    "StandardMagenticManager",
]

ORCHESTRATOR_ID = "magentic_orchestrator"

# The reference's labels for the kinds of message a Magentic orchestrator produces (it exports them for callback
# consumers; here they name the same kinds): the user's task, the task ledger, an instruction, a notice.
ORCH_MSG_KIND_USER_TASK = "user_task"
ORCH_MSG_KIND_TASK_LEDGER = "task_ledger"
ORCH_MSG_KIND_INSTRUCTION = "instruction"
ORCH_MSG_KIND_NOTICE = "notice"

REJECTED = "The plan was rejected; propose a different one."


@dataclass
class MagenticPlanReviewResponse:
    """A person's answer to a :class:`MagenticPlanReviewRequest`: no review messages approve the plan.

    ``review`` holds the feedback (user messages) the manager re-plans with, as in Agent Framework; agentnb
    adds ``plan``, an edited list of steps the team follows instead of the manager's (with an approval).

    Example:
        >>> MagenticPlanReviewResponse.revise("Ask the critic first.").approved
        False
    """

    review: list[Message] = field(default_factory=lambda: list[Message]())
    plan: list[str] | None = None

    @property
    def approved(self) -> bool:
        """True when there is no feedback: the team goes on with the plan."""
        return not self.review

    @property
    def feedback(self) -> str | None:
        """The feedback's text (``None`` for an approval)."""
        return "\n".join(m.text for m in self.review) or None

    @classmethod
    def approve(cls, plan: list[str] | None = None) -> MagenticPlanReviewResponse:
        """Accept the plan (or replace its steps with ``plan``)."""
        return cls(plan=list(plan) if plan is not None else None)

    @classmethod
    def revise(cls, feedback: str | Message | Sequence[str | Message]) -> MagenticPlanReviewResponse:
        """Ask the manager for a new plan that takes ``feedback`` (text or user messages) into account."""
        items: Sequence[str | Message] = [feedback] if isinstance(feedback, (str, Message)) else feedback
        review = [item if isinstance(item, Message) else Message("user", [item]) for item in items]
        if not review:
            raise ValueError("revise() needs feedback; use approve() to accept the plan.")
        return cls(review=review)


@dataclass
class MagenticPlanReviewRequest:
    """The ``request_info`` payload asking a person to review the manager's plan.

    Answer with ``request.approve()`` (or ``True``), ``request.approve(plan=[...])`` to replace the steps,
    or ``request.revise("feedback")`` to have the manager re-plan.

    Attributes:
        plan: The plan as the manager's message (task, team, facts and steps as text).
        current_progress: The latest progress ledger; ``None`` for the first plan, set when a stall
            caused this re-plan.
        is_stalled: True when the team stalled and this is the re-plan.
        task: The task's text.
        facts: The ledger's facts.
        steps: The ledger's plan steps.
        revision: 1 for the first plan, counting up with every re-plan.

    Example:
        >>> request = MagenticPlanReviewRequest(Message("assistant", ["1. agent: book"]), steps=["agent: book"])
        >>> request.revise("Book a train instead.").approved
        False
    """

    plan: Message
    current_progress: MagenticProgressLedger | None = None
    is_stalled: bool = False
    task: str = ""
    facts: str = ""
    steps: list[str] = field(default_factory=lambda: list[str]())
    revision: int = 0

    def approve(self, plan: list[str] | None = None) -> MagenticPlanReviewResponse:
        """Accept the plan (or replace its steps with ``plan``)."""
        return MagenticPlanReviewResponse.approve(plan)

    def revise(self, feedback: str | Message | Sequence[str | Message]) -> MagenticPlanReviewResponse:
        """Ask the manager for a new plan that takes ``feedback`` into account."""
        return MagenticPlanReviewResponse.revise(feedback)


class MagenticResetSignal:
    """Tells a :class:`MagenticAgentExecutor` to forget its conversation (the reference's reset after a replan).

    agentnb's Magentic orchestrator gives each participant the whole conversation every round, so its own
    participants need no reset; a hand-built graph sends this to agent executors that keep a conversation.
    """


class MagenticAgentExecutor(AgentExecutor):
    """An agent executor that starts over on a :class:`MagenticResetSignal` (the reference's Magentic participant).

    Example:
        >>> from agentnb import Agent
        >>> from agentnb.local import ScriptedChatClient
        >>> MagenticAgentExecutor(Agent(ScriptedChatClient([]), name="researcher")).id
        'researcher'
    """

    def __init__(self, agent: SupportsAgentRun) -> None:
        super().__init__(agent)

    @handler
    async def handle_magentic_reset(self, signal: MagenticResetSignal, ctx: WorkflowContext) -> None:
        """Forget the conversation and any pending approvals, as after a replan."""
        self.reset()


class MagenticOrchestratorEventType(str, enum.Enum):
    """What a ``magentic_orchestrator`` event reports (the reference's event kinds)."""

    PLAN_CREATED = "plan_created"
    REPLANNED = "replanned"
    PROGRESS_LEDGER_UPDATED = "progress_ledger_updated"


@dataclass
class MagenticOrchestratorEvent:
    """The payload of a ``magentic_orchestrator`` event: a plan (the manager's message) or a progress ledger.

    Published beside agentnb's own ``magentic_plan`` / ``magentic_progress`` events, so code written for the
    reference's event stream reads the same events.
    """

    event_type: MagenticOrchestratorEventType
    content: Message | MagenticProgressLedger


OrchestratorCtx = WorkflowContext[list[Message], list[Message]]
ReviewReply = MagenticPlanReviewResponse | bool


class MagenticOrchestrator(ConversationStart):
    """Runs the manager's plan/progress loop and delegates rounds to the participants."""

    def __init__(
        self,
        manager: MagenticManagerBase,
        participants: dict[str, str],
        *,
        max_round_count: int,
        max_stall_count: int,
        max_reset_count: int | None,
        plan_review: bool,
    ) -> None:
        super().__init__(ORCHESTRATOR_ID)
        self.manager = manager
        self.manager_name = manager.name
        self.participants = participants
        self.max_round_count = max_round_count
        self.max_stall_count = max_stall_count
        self.max_reset_count = max_reset_count
        self.plan_review = plan_review
        self.reset()

    # -- input -------------------------------------------------------------------------------------------
    async def start(self, conversation: list[Message], ctx: OrchestratorCtx) -> None:
        """The task: plan it."""
        self.reset()
        self._task = conversation
        await self._plan(ctx)

    def context(self, feedback: str | None = None) -> MagenticContext:
        """What the manager is told: the task, the conversation (the same list), the team and the counters."""
        return MagenticContext(
            task="\n".join(m.text for m in self._task),
            chat_history=self._conversation,
            participant_descriptions=dict(self.participants),
            round_count=self._rounds,
            stall_count=self._stalls,
            reset_count=self._resets,
            task_messages=list(self._task),
            plan_feedback=feedback,
        )

    # -- planning -----------------------------------------------------------------------------------------
    async def _plan(self, ctx: OrchestratorCtx, feedback: str | None = None, *, stalled: bool = False) -> None:
        context = self.context(feedback)
        plan = await (self.manager.replan(context) if stalled else self.manager.plan(context))
        self._revision += 1
        ledger = self.manager.task_ledger
        await ctx.add_event(WorkflowEvent("magentic_plan", ledger if ledger is not None else plan))
        kind = (
            MagenticOrchestratorEventType.PLAN_CREATED
            if self._revision == 1
            else MagenticOrchestratorEventType.REPLANNED
        )
        await ctx.add_event(WorkflowEvent("magentic_orchestrator", MagenticOrchestratorEvent(kind, plan)))
        if self.plan_review:
            request = MagenticPlanReviewRequest(
                plan,
                current_progress=self._progress if stalled else None,
                is_stalled=stalled,
                task=context.task,
                facts=ledger.facts if ledger is not None else "",
                steps=list(ledger.plan) if ledger is not None else [],
                revision=self._revision,
            )
            await ctx.request_info(request_data=request, response_type=ReviewReply)
            return
        await self._round(ctx)

    @response_handler
    async def on_review(self, request: MagenticPlanReviewRequest, reply: ReviewReply, ctx: OrchestratorCtx) -> None:
        """A person's review of the plan: go on, go on with their edited plan, or re-plan with their feedback."""
        if isinstance(reply, bool):
            reply = MagenticPlanReviewResponse.approve() if reply else MagenticPlanReviewResponse.revise(REJECTED)
        if not reply.approved:
            await self._plan(ctx, feedback=reply.feedback or REJECTED, stalled=request.is_stalled)
            return
        ledger = self.manager.task_ledger
        if reply.plan is not None and ledger is not None:
            self.manager.task_ledger = MagenticTaskLedger(facts=ledger.facts, plan=list(reply.plan))
            await ctx.add_event(WorkflowEvent("magentic_plan", self.manager.task_ledger))
        await self._round(ctx)

    # -- rounds -------------------------------------------------------------------------------------------
    async def _round(self, ctx: OrchestratorCtx) -> None:
        if self._rounds >= self.max_round_count:
            await self._stop(ctx, "max_round_count", f"the team used all {self.max_round_count} rounds")
            return
        progress = await self.manager.create_progress_ledger(self.context())
        if not isinstance(cast(object, progress), MagenticProgressLedger):
            raise WorkflowRunError(
                f"The manager {self.manager_name!r} returned {type(progress).__name__} from create_progress_ledger; "
                "it must return a MagenticProgressLedger."
            )
        self._progress = progress
        await ctx.add_event(WorkflowEvent("magentic_progress", progress))
        await ctx.add_event(
            WorkflowEvent(
                "magentic_orchestrator",
                MagenticOrchestratorEvent(MagenticOrchestratorEventType.PROGRESS_LEDGER_UPDATED, progress),
            )
        )
        if progress.is_request_satisfied:
            final = await self.manager.prepare_final_answer(self.context())
            self._conversation.append(
                Message(
                    final.role,
                    list(final.contents) or ["(the manager gave no final answer)"],
                    author_name=final.author_name or self.manager_name,
                    additional_properties={**final.additional_properties, "stop_reason": "done"},
                )
            )
            await self._output(ctx, "done")
            return
        if progress.is_in_loop or not progress.is_progress_being_made:
            self._stalls += 1
        else:
            self._stalls = max(0, self._stalls - 1)
        if self._stalls > self.max_stall_count:
            self._resets += 1
            if self.max_reset_count is not None and self._resets > self.max_reset_count:
                await self._stop(
                    ctx, "max_reset_count", f"the plan was reset {self.max_reset_count} times without progress"
                )
                return
            self._stalls = 0
            await ctx.add_event(WorkflowEvent("magentic_replan", {"resets": self._resets, "round": self._rounds}))
            await self._plan(ctx, stalled=True)
            return
        speaker = progress.next_speaker
        if speaker not in self.participants:
            raise WorkflowRunError(
                f"The manager {self.manager_name!r} chose {speaker!r} to act next, which is not a participant; "
                f"participants: {list(self.participants)}."
            )
        instruction = progress.instruction or "Continue with your part of the plan."
        self._conversation.append(Message("user", [instruction], author_name=self.manager_name))
        await ctx.send_message([*self._task, *self._conversation], target_id=speaker)

    @handler
    async def on_answer(self, answer: AgentExecutorResponse, ctx: OrchestratorCtx) -> None:
        """A participant finished its round."""
        self._conversation.extend(answer.agent_response.messages)
        self._rounds += 1
        await self._round(ctx)

    async def _stop(self, ctx: OrchestratorCtx, reason: str, why: str) -> None:
        text = f"Stopped before the task was complete: {why}."
        self._conversation.append(
            Message("assistant", [text], author_name=self.manager_name, additional_properties={"stop_reason": reason})
        )
        await self._output(ctx, reason)

    async def _output(self, ctx: OrchestratorCtx, reason: str) -> None:
        await ctx.add_event(
            WorkflowEvent("magentic_completed", {"reason": reason, "rounds": self._rounds, "resets": self._resets})
        )
        await ctx.yield_output([*self._task, *self._conversation])

    # -- state --------------------------------------------------------------------------------------------
    def reset(self) -> None:
        self._task: list[Message] = []
        self._conversation: list[Message] = []
        self._progress: MagenticProgressLedger | None = None
        self._rounds = 0
        self._stalls = 0
        self._resets = 0
        self._revision = 0
        self.manager.reset()

    @property
    def ledger(self) -> MagenticTaskLedger | None:
        """The current facts and plan (when the manager keeps a task ledger)."""
        return self.manager.task_ledger

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {
            "task": list(self._task),
            "conversation": list(self._conversation),
            "manager": self.manager.on_checkpoint_save(),
            "progress": self._progress,
            "rounds": self._rounds,
            "stalls": self._stalls,
            "resets": self._resets,
            "revision": self._revision,
        }

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._task = list(state.get("task", []))
        self._conversation = list(state.get("conversation", []))
        manager_state = state.get("manager")
        if manager_state is None:  # a checkpoint from before the manager had its own state
            manager_state = {"task_ledger": state.get("ledger")}
        self.manager.on_checkpoint_restore(dict(manager_state))
        self._progress = state.get("progress")
        self._rounds = int(state.get("rounds", 0))
        self._stalls = int(state.get("stalls", 0))
        self._resets = int(state.get("resets", 0))
        self._revision = int(state.get("revision", 0))


class MagenticBuilder(OrchestrationBuilder):
    """Build a Magentic team: a manager agent plans, delegates, tracks progress, re-plans and answers.

    Args:
        participants: The team agents (each needs a unique ``name``; descriptions tell the manager who does what).
        manager_agent: The agent that plans and judges progress (answers with structured outputs); it becomes a
            :class:`StandardMagenticManager`.
        manager: A manager of your own (a :class:`MagenticManagerBase`), instead of ``manager_agent``; its
            ``max_*`` limits are used where it sets them.
        max_round_count: The most rounds (participant turns) before stopping.
        max_stall_count: Rounds without progress tolerated before re-planning.
        max_reset_count: Re-plans allowed before stopping (``None``: no limit).
        enable_plan_review: Ask the caller to review every plan (also ``.with_plan_review()``).
        **options: ``checkpoint_storage``, ``name``, ``description``, ``run_store``,
            ``intermediate_outputs`` (see :class:`OrchestrationOptions`).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.workflows import MagenticBuilder, MagenticProgressLedger, MagenticTaskLedger

        manager = Agent(ScriptedChatClient([
            MagenticTaskLedger(facts="None.", plan=["researcher: look it up"]),
            MagenticProgressLedger(is_request_satisfied=False, next_speaker="researcher", instruction="Look it up."),
            MagenticProgressLedger(is_request_satisfied=True),
            "Paris has about 2.1 million people.",
        ]), name="manager")
        researcher = Agent(ScriptedChatClient(["About 2.1 million."]), name="researcher")
        workflow = MagenticBuilder(participants=[researcher], manager_agent=manager).build()
        conversation = (await workflow.run("How many people live in Paris?")).get_outputs()[0]
        conversation[-1].text  # 'Paris has about 2.1 million people.'
        ```
    """

    _RESERVED = (ORCHESTRATOR_ID,)

    def __init__(
        self,
        participants: Sequence[SupportsAgentRun],
        *,
        manager_agent: SupportsAgentRun | None = None,
        manager: MagenticManagerBase | None = None,
        max_round_count: int = 20,
        max_stall_count: int = 3,
        max_reset_count: int | None = 2,
        enable_plan_review: bool = False,
        **options: Unpack[OrchestrationOptions],
    ) -> None:
        super().__init__(participants, **options)
        if (manager_agent is None) == (manager is None):
            raise ValueError("Pass exactly one of manager_agent (an agent) or manager (a MagenticManagerBase).")
        if manager is not None:
            if not isinstance(cast(object, manager), MagenticManagerBase):
                raise TypeError(f"manager must be a MagenticManagerBase, got {type(manager).__name__}.")
            # A manager's own limits win over the builder's, as in the reference.
            max_round_count = manager.max_round_count if manager.max_round_count is not None else max_round_count
            max_stall_count = manager.max_stall_count
            max_reset_count = manager.max_reset_count
        else:
            assert manager_agent is not None
            manager = StandardMagenticManager(
                manager_agent,
                max_round_count=max_round_count,
                max_stall_count=max_stall_count,
                max_reset_count=max_reset_count,
            )
        if manager.name in self.participant_names:
            raise ValueError(
                f"The manager's name {manager.name!r} is also a participant's; the manager needs its own name."
            )
        for label, value, low in (("max_round_count", max_round_count, 1), ("max_stall_count", max_stall_count, 0)):
            if not isinstance(cast(object, value), int) or value < low:
                raise ValueError(f"{label} must be an int >= {low}, got {value!r}.")
        if max_reset_count is not None and (not isinstance(cast(object, max_reset_count), int) or max_reset_count < 0):
            raise ValueError(f"max_reset_count must be an int >= 0 or None, got {max_reset_count!r}.")
        self._manager = manager
        self._max_round_count = max_round_count
        self._max_stall_count = max_stall_count
        self._max_reset_count = max_reset_count
        self._plan_review = enable_plan_review

    def with_plan_review(self, enabled: bool = True) -> MagenticBuilder:
        """Ask the caller to approve or revise each plan before the team starts on it."""
        self._plan_review = enabled
        return self

    def build(self) -> Workflow:
        """Build the star graph as an ordinary :class:`~agentnb.workflows.Workflow`."""
        descriptions = self.participant_descriptions()
        orchestrator = MagenticOrchestrator(
            self._manager,
            descriptions,
            max_round_count=self._max_round_count,
            max_stall_count=self._max_stall_count,
            max_reset_count=self._max_reset_count,
            plan_review=self._plan_review,
        )
        executors = [self._participant(p) for p in self.participants]
        builder = self._workflow_builder(
            orchestrator,
            output_from=[orchestrator],
            participants=executors,
            max_iterations=2 * self._max_round_count + 6,
        )
        for executor in executors:
            builder.add_edge(orchestrator, executor)
            builder.add_edge(executor, orchestrator)
        return builder.build()
