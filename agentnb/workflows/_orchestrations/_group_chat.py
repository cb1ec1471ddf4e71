"""Group chat: a manager picks who speaks next, round after round, until a condition or the round limit.

The graph is a star: the ``group_chat_manager`` executor (the start) holds the conversation and sends it
to the participant it selects; the participant answers back to the manager. The manager is either a
*selection function* ``selection_func(state: GroupChatState) -> str`` (sync or async, returning a
participant name, or ``None`` to end) or an *orchestrator agent* that answers with a structured
:class:`GroupChatDecision` each round. The chat ends when the termination condition holds, when the
round limit is reached, or when the manager says so; the output is the whole conversation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, Field
from typing_extensions import Unpack

from ..._agents import SupportsAgentRun
from ..._types import AgentResponse, Message
from ...exceptions import WorkflowRunError
from .._agent_executor import AgentExecutorResponse
from .._events import WorkflowEvent
from .._handlers import handler
from ._base import (
    STRUCTURED_OUTPUT_CONFIG,
    Condition,
    ConversationCtx,
    ConversationStart,
    OrchestrationBuilder,
    OrchestrationOptions,
    maybe_await,
    new_conversation,
    participant_name,
)

if TYPE_CHECKING:
    from .._workflow import Workflow

__all__ = [
    "GroupChatBuilder",
    "GroupChatDecision",
    "GroupChatOrchestrator",
    "GroupChatRequestMessage",
    "GroupChatRequestSentEvent",
    "GroupChatResponseReceivedEvent",
    "GroupChatSelectionFunction",
    "GroupChatState",
]

MANAGER_ID = "group_chat_manager"

ORCHESTRATOR_PROMPT = """You are moderating a group chat. The participants are:
{participants}

Round {round} of at most {max_rounds}. Decide what happens next:
- set "terminate" to true when the task in the conversation is complete, with a "final_message" for the user;
- otherwise set "next_speaker" to exactly one participant name from the list above.
Give a short "reason" either way."""


@dataclass
class GroupChatState:
    """What a selection function sees when it picks the next speaker.

    Attributes:
        current_round: How many participant turns have happened (0 before the first).
        participants: Participant names mapped to their descriptions, in the order given to the builder.
        conversation: The conversation so far (input and every answer).
        last_speaker: The participant who spoke last (``None`` before the first turn).

    Example:
        >>> state = GroupChatState(0, {"writer": "", "critic": ""}, [])
        >>> list(state.participants)[state.current_round % 2]
        'writer'
    """

    current_round: int
    participants: dict[str, str]
    conversation: list[Message] = field(default_factory=new_conversation)
    last_speaker: str | None = None


class GroupChatDecision(BaseModel):
    """The structured answer an orchestrator agent gives each round.

    Example:
        >>> GroupChatDecision(next_speaker="critic", reason="needs review").terminate
        False
    """

    model_config = STRUCTURED_OUTPUT_CONFIG

    terminate: bool = Field(default=False, description="True when the conversation should end now.")
    next_speaker: str | None = Field(default=None, description="The participant who speaks next.")
    reason: str = Field(default="", description="Why, in one sentence.")
    final_message: str | None = Field(default=None, description="The closing message when terminating.")


SelectionFunc = Callable[[GroupChatState], str | Awaitable[str | None] | None]


@dataclass
class GroupChatRequestMessage:
    """The reference's request envelope from a group-chat orchestrator to a participant.

    agentnb's group-chat manager sends the selected participant the conversation itself (a ``list[Message]``);
    this envelope is for custom orchestrators written the reference's way: an optional instruction for the
    participant's turn and free-form metadata.

    Example:
        >>> GroupChatRequestMessage(additional_instruction="Be brief.").metadata is None
        True
    """

    additional_instruction: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass
class GroupChatRequestSentEvent:
    """The data of a ``"group_chat"`` event: the manager asked ``participant_name`` to speak (as in the reference).

    ``round_index`` counts the turns before this one (0 for the first speaker).

    Example:
        >>> GroupChatRequestSentEvent(round_index=0, participant_name="writer").participant_name
        'writer'
    """

    round_index: int
    participant_name: str


@dataclass
class GroupChatResponseReceivedEvent:
    """The data of a ``"group_chat"`` event: ``participant_name`` answered the request of ``round_index``."""

    round_index: int
    participant_name: str


GroupChatSelectionFunction = SelectionFunc
"""The reference's name for a selection function: ``(GroupChatState) -> str`` (sync or async)."""


class GroupChatManager(ConversationStart):
    """Holds the group conversation, asks the selection function or agent who is next, and ends the chat."""

    def __init__(
        self,
        participants: dict[str, str],
        *,
        selection_func: SelectionFunc | None,
        orchestrator_agent: SupportsAgentRun | None,
        max_rounds: int | None,
        termination_condition: Condition | None,
    ) -> None:
        super().__init__(MANAGER_ID)
        self.participants = participants
        self.selection_func = selection_func
        self.orchestrator_agent = orchestrator_agent
        self.max_rounds = max_rounds
        self.termination_condition = termination_condition
        self._conversation: list[Message] = []
        self._round = 0
        self._last_speaker: str | None = None

    # -- turns --------------------------------------------------------------------------------------------
    async def start(self, conversation: list[Message], ctx: ConversationCtx) -> None:
        """The task: pick the first speaker."""
        self._conversation = conversation
        self._round = 0
        self._last_speaker = None
        await self._next(ctx)

    @handler
    async def on_answer(self, answer: AgentExecutorResponse, ctx: ConversationCtx) -> None:
        """A participant's turn: add its messages and pick again."""
        await ctx.add_event(
            WorkflowEvent("group_chat", GroupChatResponseReceivedEvent(self._round, answer.executor_id))
        )
        self._conversation.extend(answer.agent_response.messages)
        self._round += 1
        self._last_speaker = answer.executor_id
        await self._next(ctx)

    # -- selection ----------------------------------------------------------------------------------------
    async def _next(self, ctx: ConversationCtx) -> None:
        if self.termination_condition is not None and await maybe_await(
            self.termination_condition(list(self._conversation))
        ):
            await self._finish(ctx, "termination_condition")
            return
        if self.max_rounds is not None and self._round >= self.max_rounds:
            await self._finish(ctx, "max_rounds")
            return
        speaker = await self._select(ctx)
        if speaker is None:
            await self._finish(ctx, "manager")
            return
        await ctx.add_event(WorkflowEvent("group_chat_speaker", {"round": self._round + 1, "speaker": speaker}))
        await ctx.send_message(list(self._conversation), target_id=speaker)
        await ctx.add_event(WorkflowEvent("group_chat", GroupChatRequestSentEvent(self._round, speaker)))

    async def _select(self, ctx: ConversationCtx) -> str | None:
        if self.selection_func is not None:
            state = GroupChatState(self._round, dict(self.participants), list(self._conversation), self._last_speaker)
            chosen = await maybe_await(self.selection_func(state))
            if chosen is not None and not isinstance(chosen, str):
                chosen = participant_name(chosen)
            return self._check(chosen, "The selection function")
        agent = self.orchestrator_agent
        assert agent is not None
        prompt = ORCHESTRATOR_PROMPT.format(
            participants="\n".join(f"- {n}: {d or '(no description)'}" for n, d in self.participants.items()),
            round=self._round + 1,
            max_rounds=self.max_rounds if self.max_rounds is not None else "unlimited",
        )
        response: AgentResponse = await agent.run(  # type: ignore[misc]  # pyright: ignore[reportGeneralTypeIssues]
            [*self._conversation, Message("user", [prompt])], options={"response_format": GroupChatDecision}
        )
        decision = response.value
        if not isinstance(decision, GroupChatDecision):
            raise WorkflowRunError(
                f"The orchestrator agent {agent.name!r} did not answer with a GroupChatDecision "
                f"(got {response.text[:200]!r})."
            )
        if decision.terminate:
            if decision.final_message:
                self._conversation.append(Message("assistant", [decision.final_message], author_name=agent.name))
            return None
        if decision.next_speaker is None:
            raise WorkflowRunError(
                f"The orchestrator agent {agent.name!r} neither ended the chat nor named a next speaker "
                f"(reason: {decision.reason!r}); it must set terminate=true or next_speaker."
            )
        return self._check(decision.next_speaker, f"The orchestrator agent {agent.name!r}")

    def _check(self, chosen: str | None, who: str) -> str | None:
        if chosen is not None and chosen not in self.participants:
            raise WorkflowRunError(
                f"{who} chose {chosen!r}, which is not a participant; participants: {list(self.participants)}."
            )
        return chosen

    async def _finish(self, ctx: ConversationCtx, reason: str) -> None:
        await ctx.add_event(WorkflowEvent("group_chat_completed", {"reason": reason, "rounds": self._round}))
        await ctx.yield_output(list(self._conversation))

    # -- state --------------------------------------------------------------------------------------------
    def reset(self) -> None:
        self._conversation, self._round, self._last_speaker = [], 0, None

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"conversation": list(self._conversation), "round": self._round, "last_speaker": self._last_speaker}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._conversation = list(state.get("conversation", []))
        self._round = int(state.get("round", 0))
        self._last_speaker = state.get("last_speaker")


#: The reference's name for the executor that runs a group chat (the star's centre). Kept as an alias: the
#: class name is part of the graph signature, so renaming it would strand existing checkpoints.
GroupChatOrchestrator = GroupChatManager


class GroupChatBuilder(OrchestrationBuilder):
    """Build a group chat: each round a manager picks the next speaker, until done or out of rounds.

    Args:
        participants: The agents (each needs a unique ``name``; descriptions help an orchestrator agent).
        selection_func: ``(GroupChatState) -> str | None`` picking the next speaker by name (``None`` ends).
        orchestrator_agent: An agent that picks the next speaker with a structured :class:`GroupChatDecision`.
            Pass exactly one of ``selection_func`` and ``orchestrator_agent``.
        max_rounds: The most participant turns (``None``: no limit, rely on the condition or the manager).
        termination_condition: ``(conversation) -> bool`` (sync or async), checked before each round.
        **options: ``checkpoint_storage``, ``name``, ``description``, ``run_store``,
            ``intermediate_outputs`` (see :class:`OrchestrationOptions`).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.workflows import GroupChatBuilder

        writer = Agent(ScriptedChatClient(["Draft 1", "Draft 2"]), name="writer")
        critic = Agent(ScriptedChatClient(["Too short."]), name="critic")
        workflow = GroupChatBuilder(
            participants=[writer, critic],
            selection_func=lambda state: ["writer", "critic"][state.current_round % 2],
            max_rounds=3,
        ).build()
        conversation = (await workflow.run("Write a slogan")).get_outputs()[0]
        [m.text for m in conversation]  # ['Write a slogan', 'Draft 1', 'Too short.', 'Draft 2']
        ```
    """

    _RESERVED = (MANAGER_ID,)

    def __init__(
        self,
        participants: Sequence[SupportsAgentRun],
        *,
        selection_func: SelectionFunc | None = None,
        orchestrator_agent: SupportsAgentRun | None = None,
        max_rounds: int | None = None,
        termination_condition: Condition | None = None,
        **options: Unpack[OrchestrationOptions],
    ) -> None:
        super().__init__(participants, **options)
        if (selection_func is None) == (orchestrator_agent is None):
            raise ValueError("Pass exactly one of selection_func=... and orchestrator_agent=... to GroupChatBuilder.")
        if selection_func is not None and not callable(selection_func):
            raise TypeError(f"selection_func must be a function of GroupChatState, got {selection_func!r}.")
        if orchestrator_agent is not None:
            participant_name(orchestrator_agent, role="orchestrator agent")
            if any(p is orchestrator_agent for p in self.participants):
                raise ValueError("The orchestrator agent cannot also be a participant; give it its own agent.")
        if max_rounds is not None and (not isinstance(cast(object, max_rounds), int) or max_rounds < 1):
            raise ValueError(f"max_rounds must be an int >= 1 or None, got {max_rounds!r}.")
        self._selection_func = selection_func
        self._orchestrator_agent = orchestrator_agent
        self._max_rounds = max_rounds
        self._termination_condition = termination_condition

    def with_termination_condition(self, condition: Condition) -> GroupChatBuilder:
        """End the chat when ``condition(conversation)`` is true (checked before each round)."""
        if not callable(condition):
            raise TypeError(f"The termination condition must be a function of the conversation, got {condition!r}.")
        self._termination_condition = condition
        return self

    def with_max_rounds(self, max_rounds: int) -> GroupChatBuilder:
        """Allow at most ``max_rounds`` participant turns."""
        if not isinstance(cast(object, max_rounds), int) or max_rounds < 1:
            raise ValueError(f"max_rounds must be an int >= 1, got {max_rounds!r}.")
        self._max_rounds = max_rounds
        return self

    def build(self) -> Workflow:
        """Build the star graph as an ordinary :class:`~agentnb.workflows.Workflow`."""
        descriptions = self.participant_descriptions()
        manager = GroupChatManager(
            descriptions,
            selection_func=self._selection_func,
            orchestrator_agent=self._orchestrator_agent,
            max_rounds=self._max_rounds,
            termination_condition=self._termination_condition,
        )
        executors = [self._participant(p) for p in self.participants]
        rounds = self._max_rounds if self._max_rounds is not None else 500
        builder = self._workflow_builder(
            manager, output_from=[manager], participants=executors, max_iterations=2 * rounds + 4
        )
        for executor in executors:
            builder.add_edge(manager, executor)
            builder.add_edge(executor, manager)
        return builder.build()
