"""The Magentic manager: the part of a Magentic team that plans, judges progress and writes the answer.

:class:`MagenticManagerBase` is the seam users subclass (as in the reference): four calls, each given the
run's :class:`MagenticContext` (the task, the conversation so far, the team and the counters):

- ``plan`` and ``replan`` return the plan as a message (what a plan review shows);
- ``create_progress_ledger`` returns a :class:`MagenticProgressLedger`: done, looping, progressing, who acts
  next and with what instruction;
- ``prepare_final_answer`` returns the answer message.

:class:`StandardMagenticManager` asks an agent for each, with structured outputs (a :class:`MagenticTaskLedger`
of facts and steps for plans, a progress ledger each round). ``MagenticBuilder(manager_agent=...)`` builds one;
``MagenticBuilder(manager=...)`` takes any manager.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, Field, model_validator

from ..._agents import SupportsAgentRun
from ..._types import AgentResponse, Message
from ...exceptions import WorkflowRunError
from ._base import STRUCTURED_OUTPUT_CONFIG, participant_name

__all__ = [
    "MAGENTIC_MANAGER_NAME",
    "MagenticContext",
    "MagenticManagerBase",
    "MagenticProgressLedger",
    "MagenticProgressLedgerItem",
    "MagenticTaskLedger",
    "StandardMagenticManager",
]

#: The author name of a manager that is not an agent (the reference's constant).
MAGENTIC_MANAGER_NAME = "magentic_manager"

PLAN_PROMPT = """You lead a team working on the task above. The team:
{team}

Write a task ledger: the facts given or known (and what still has to be looked up), then a short
step-by-step plan that says which team member does each step.{feedback}"""

REPLAN_PROMPT = """The team is not making progress on the task above. The previous ledger was:
Facts: {facts}
Plan:
{plan}

Rewrite the task ledger: update the facts with what was learned, and write a new plan that avoids what
went wrong. The team:
{team}{feedback}"""

PROGRESS_PROMPT = """Task ledger.
Facts: {facts}
Plan:
{plan}

Team: {names}

Fill in the progress ledger for the conversation so far: is the task fully done, is the team repeating
itself, is it making progress, who should act next (one of: {names}) and the instruction or question for
them."""

PLAN_REVIEW_TEXT = """The task:
{task}

The team:
{team}

Facts:
{facts}

Plan:
{plan}"""


FINAL_PROMPT = """The task is done. Write the final answer to the task for the user, using the conversation above."""


class MagenticTaskLedger(BaseModel):
    """The manager's facts and plan for the task.

    Example:
        >>> MagenticTaskLedger(facts="Paris is in France.", plan=["researcher: find the population"]).plan[0]
        'researcher: find the population'
    """

    model_config = STRUCTURED_OUTPUT_CONFIG

    facts: str = Field(description="What is known, and what still has to be found out.")
    plan: list[str] = Field(description="The steps, each naming the team member who does it.")


class MagenticProgressLedgerItem(BaseModel):
    """One answer of a progress ledger with its reason, the reference's way of writing a ledger's fields.

    :class:`MagenticProgressLedger` takes these for any of its fields and keeps the answers (their reasons
    become its ``reason``), so a reference manager's ``create_progress_ledger`` runs unchanged.

    Example:
        >>> MagenticProgressLedgerItem(answer=True, reason="All steps are done.").to_dict()
        {'reason': 'All steps are done.', 'answer': True}
    """

    reason: str = ""
    answer: str | bool

    def to_dict(self) -> dict[str, Any]:
        """The item as the reference writes it."""
        return {"reason": self.reason, "answer": self.answer}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MagenticProgressLedgerItem:
        """Rebuild from :meth:`to_dict` output (an answer of another type becomes ``""``, as in the reference)."""
        answer = data.get("answer")
        return cls(reason=str(data.get("reason", "")), answer=answer if isinstance(answer, (str, bool)) else "")


#: The reference's field name for the next speaker's instruction.
_REFERENCE_INSTRUCTION = "instruction_or_question"


class MagenticProgressLedger(BaseModel):
    """The manager's judgement after each round: done, looping, progressing, and who acts next.

    Each field may also be given as a :class:`MagenticProgressLedgerItem` (or its dict), the reference's form
    (whose ``instruction_or_question`` is ``instruction`` here).

    Example:
        >>> MagenticProgressLedger(is_request_satisfied=False, next_speaker="coder", instruction="Run it.").next_speaker
        'coder'
    """

    model_config = STRUCTURED_OUTPUT_CONFIG

    @model_validator(mode="before")
    @classmethod
    def _from_items(cls, data: Any) -> Any:
        # The reference's ledger holds each answer in an item with its reason: keep the answers, join the reasons.
        if not isinstance(data, dict):
            return data
        fields = dict(cast("dict[str, Any]", data))
        if _REFERENCE_INSTRUCTION in fields and "instruction" not in fields:
            fields["instruction"] = fields.pop(_REFERENCE_INSTRUCTION)
        reasons: list[str] = []
        for key, value in list(fields.items()):
            item = value
            if isinstance(value, dict) and "answer" in value:
                item = MagenticProgressLedgerItem.from_dict(cast("dict[str, Any]", value))
            if isinstance(item, MagenticProgressLedgerItem):
                fields[key] = item.answer
                if item.reason and item.reason not in reasons:
                    reasons.append(item.reason)
        if reasons and not fields.get("reason"):
            fields["reason"] = " ".join(reasons)
        return fields

    is_request_satisfied: bool = Field(description="True when the task is fully done.")
    is_in_loop: bool = Field(default=False, description="True when the team repeats the same actions.")
    is_progress_being_made: bool = Field(default=True, description="False when the last rounds added nothing.")
    next_speaker: str | None = Field(default=None, description="The team member who acts next.")
    instruction: str = Field(default="", description="The instruction or question for the next speaker.")
    reason: str = Field(default="", description="Why, in one or two sentences.")

    def to_dict(self) -> dict[str, Any]:
        """The ledger as a JSON-safe dict (what a review screen shows)."""
        return self.model_dump(mode="json")


def steps_text(plan: list[str]) -> str:
    """A plan's steps as a numbered list (for prompts and the plan review text)."""
    return "\n".join(f"{i}. {step}" for i, step in enumerate(plan, 1)) or "(no steps)"


@dataclass
class MagenticContext:
    """What the manager is told on each call: the task, the conversation so far, the team and the counters.

    The fields are the reference's; agentnb adds ``task_messages`` (the task as given: several messages,
    images) and ``plan_feedback`` (a reviewer's feedback on the last plan, for the next ``plan``/``replan``).

    Example:
        >>> MagenticContext(task="Plan a trip", participant_descriptions={"booker": "Books travel."}).round_count
        0
    """

    task: str
    chat_history: list[Message] = field(default_factory=lambda: list[Message]())
    participant_descriptions: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    round_count: int = 0
    stall_count: int = 0
    reset_count: int = 0
    task_messages: list[Message] = field(default_factory=lambda: list[Message]())
    plan_feedback: str | None = None

    def reset(self) -> None:
        """Start over after a stall, as the reference does: clear the conversation and the stall count."""
        self.chat_history.clear()
        self.stall_count = 0
        self.reset_count += 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (messages as their dicts)."""
        return {
            "task": self.task,
            "chat_history": [m.to_dict() for m in self.chat_history],
            "participant_descriptions": dict(self.participant_descriptions),
            "round_count": self.round_count,
            "stall_count": self.stall_count,
            "reset_count": self.reset_count,
            "task_messages": [m.to_dict() for m in self.task_messages],
            "plan_feedback": self.plan_feedback,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MagenticContext:
        """Rebuild from :meth:`to_dict` output."""
        task = data.get("task")
        if not isinstance(task, str):
            raise ValueError("MagenticContext requires a 'task' string field.")
        return cls(
            task=task,
            chat_history=[Message.from_dict(m) for m in data.get("chat_history", [])],
            participant_descriptions=dict(data.get("participant_descriptions", {})),
            round_count=int(data.get("round_count", 0)),
            stall_count=int(data.get("stall_count", 0)),
            reset_count=int(data.get("reset_count", 0)),
            task_messages=[Message.from_dict(m) for m in data.get("task_messages", [])],
            plan_feedback=data.get("plan_feedback"),
        )

    @property
    def task_as_messages(self) -> list[Message]:
        """The task as messages: those given, else the task text as one user message."""
        return list(self.task_messages) or [Message("user", [self.task])]


class MagenticManagerBase(ABC):
    """The manager of a Magentic team: subclass it to plan and steer the team your own way.

    Args:
        max_stall_count: Rounds without progress tolerated before re-planning.
        max_reset_count: Re-plans allowed before stopping (``None``: no limit).
        max_round_count: The most rounds before stopping (``None``: the builder's limit).

    Attributes:
        task_ledger: The current facts and steps, when the manager keeps them (a plan review shows them);
            ``None`` otherwise.
        name: The author name of the manager's messages.

    Example:
        ```python
        class OneShot(MagenticManagerBase):
            async def plan(self, magentic_context):
                return Message("assistant", ["1. writer: write it"])

            async def replan(self, magentic_context):
                return await self.plan(magentic_context)

            async def create_progress_ledger(self, magentic_context):
                done = magentic_context.round_count > 0
                return MagenticProgressLedger(is_request_satisfied=done, next_speaker="writer", instruction="Write.")

            async def prepare_final_answer(self, magentic_context):
                return Message("assistant", [magentic_context.chat_history[-1].text])

        workflow = MagenticBuilder(participants=[writer], manager=OneShot()).build()
        ```
    """

    name: str = MAGENTIC_MANAGER_NAME

    def __init__(
        self, *, max_stall_count: int = 3, max_reset_count: int | None = None, max_round_count: int | None = None
    ) -> None:
        self.max_stall_count = max_stall_count
        self.max_reset_count = max_reset_count
        self.max_round_count = max_round_count
        self.task_ledger: MagenticTaskLedger | None = None

    @abstractmethod
    async def plan(self, magentic_context: MagenticContext) -> Message:
        """The plan for the task, as a message."""

    @abstractmethod
    async def replan(self, magentic_context: MagenticContext) -> Message:
        """A new plan after the team stalled (or a reviewer asked for one), as a message."""

    @abstractmethod
    async def create_progress_ledger(self, magentic_context: MagenticContext) -> MagenticProgressLedger:
        """The judgement after a round: done, looping, progressing, and who acts next with what instruction."""

    @abstractmethod
    async def prepare_final_answer(self, magentic_context: MagenticContext) -> Message:
        """The answer to the task, once the progress ledger says it is done."""

    def reset(self) -> None:
        """Forget the previous run's plan (called when a new run starts)."""
        self.task_ledger = None

    def on_checkpoint_save(self) -> dict[str, Any]:
        """The manager's own state for a checkpoint (JSON-serializable; the task ledger by default)."""
        return {"task_ledger": self.task_ledger}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`on_checkpoint_save` returned."""
        ledger = state.get("task_ledger")
        self.task_ledger = ledger if isinstance(ledger, MagenticTaskLedger) else None


class StandardMagenticManager(MagenticManagerBase):
    """The manager that asks an agent, with structured outputs, for plans, progress ledgers and the answer.

    Args:
        agent: The manager agent (its name authors the manager's messages).
        task_ledger_plan_prompt: The prompt for the first plan (``{team}`` and ``{feedback}`` are filled in).
        task_ledger_plan_update_prompt: The prompt for a new plan (``{facts}``, ``{plan}``, ``{team}``, ``{feedback}``).
        progress_ledger_prompt: The prompt for each round's ledger (``{facts}``, ``{plan}``, ``{names}``).
        final_answer_prompt: The prompt for the answer.
        max_stall_count, max_reset_count, max_round_count: As for :class:`MagenticManagerBase`.
    """

    def __init__(
        self,
        agent: SupportsAgentRun,
        *,
        task_ledger_plan_prompt: str | None = None,
        task_ledger_plan_update_prompt: str | None = None,
        progress_ledger_prompt: str | None = None,
        final_answer_prompt: str | None = None,
        max_stall_count: int = 3,
        max_reset_count: int | None = None,
        max_round_count: int | None = None,
    ) -> None:
        super().__init__(
            max_stall_count=max_stall_count, max_reset_count=max_reset_count, max_round_count=max_round_count
        )
        self.agent = agent
        self.name = participant_name(agent, role="manager agent")
        self.task_ledger_plan_prompt = task_ledger_plan_prompt or PLAN_PROMPT
        self.task_ledger_plan_update_prompt = task_ledger_plan_update_prompt or REPLAN_PROMPT
        self.progress_ledger_prompt = progress_ledger_prompt or PROGRESS_PROMPT
        self.final_answer_prompt = final_answer_prompt or FINAL_PROMPT

    async def _ask(
        self, context: MagenticContext, prompt: str, response_format: type[BaseModel] | None
    ) -> AgentResponse:
        options = {"response_format": response_format} if response_format is not None else None
        messages = [*context.task_as_messages, *context.chat_history, Message("user", [prompt])]
        response = cast(AgentResponse, await self.agent.run(messages, options=options))  # type: ignore[misc]  # pyright: ignore[reportGeneralTypeIssues]
        if response.user_input_requests:
            raise WorkflowRunError(
                f"The manager agent {self.name!r} asked for tool approval; give the manager no tools that need "
                "approval (participants may have them)."
            )
        return response

    @staticmethod
    def _team(context: MagenticContext) -> str:
        return "\n".join(f"- {n}: {d or '(no description)'}" for n, d in context.participant_descriptions.items())

    async def plan(self, magentic_context: MagenticContext) -> Message:
        if self.task_ledger is not None:  # a reviewer asked for another plan: build on the one they saw
            return await self.replan(magentic_context)
        note = _feedback_note(magentic_context)
        prompt = self.task_ledger_plan_prompt.format(team=self._team(magentic_context), feedback=note)
        return await self._ledger(magentic_context, prompt)

    async def replan(self, magentic_context: MagenticContext) -> Message:
        ledger = self.task_ledger
        if ledger is None:
            return await self.plan(magentic_context)
        prompt = self.task_ledger_plan_update_prompt.format(
            facts=ledger.facts,
            plan=steps_text(ledger.plan),
            team=self._team(magentic_context),
            feedback=_feedback_note(magentic_context),
        )
        return await self._ledger(magentic_context, prompt)

    async def _ledger(self, context: MagenticContext, prompt: str) -> Message:
        ledger = (await self._ask(context, prompt, MagenticTaskLedger)).value
        if not isinstance(ledger, MagenticTaskLedger):
            raise WorkflowRunError(f"The manager agent {self.name!r} did not return a MagenticTaskLedger.")
        self.task_ledger = ledger
        text = PLAN_REVIEW_TEXT.format(
            task="\n".join(m.text for m in context.task_as_messages),
            team=self._team(context),
            facts=ledger.facts,
            plan=steps_text(ledger.plan),
        )
        return Message("assistant", [text], author_name=self.name)

    async def create_progress_ledger(self, magentic_context: MagenticContext) -> MagenticProgressLedger:
        ledger = self.task_ledger or MagenticTaskLedger(facts="", plan=[])
        prompt = self.progress_ledger_prompt.format(
            facts=ledger.facts, plan=steps_text(ledger.plan), names=", ".join(magentic_context.participant_descriptions)
        )
        progress = (await self._ask(magentic_context, prompt, MagenticProgressLedger)).value
        if not isinstance(progress, MagenticProgressLedger):
            raise WorkflowRunError(f"The manager agent {self.name!r} did not return a MagenticProgressLedger.")
        return progress

    async def prepare_final_answer(self, magentic_context: MagenticContext) -> Message:
        final = await self._ask(magentic_context, self.final_answer_prompt, None)
        return Message("assistant", [final.text or "(the manager gave no final answer)"], author_name=self.name)


def _feedback_note(context: MagenticContext) -> str:
    return f"\n\nFeedback on the previous plan: {context.plan_feedback}" if context.plan_feedback else ""
