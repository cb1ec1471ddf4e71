"""Handoff: the agent that owns the conversation answers the user or hands it to another agent.

Each participant runs in a :class:`HandoffAgentExecutor`, which offers its agent one generated tool per agent
it may hand off to, named ``handoff_to_<name>`` (declaration-only: the agent's turn ends when it calls one).
The ``handoff_coordinator`` executor (the start of a star graph) owns the conversation and the *current
owner*: it runs the owner on the conversation; when the owner calls a handoff tool, the coordinator records
the handoff (a tool result in the conversation and a ``handoff_sent`` event carrying a
:class:`HandoffSentEvent`) and runs the target at once; when the owner answers without a handoff, the
coordinator asks the workflow's caller for the user's next message through ``request_info`` with a
:class:`HandoffUserInputRequest`. The reply goes to the same owner (to the start agent after
``enable_return_to_previous(False)``). The conversation and the owner live in the coordinator's checkpoint
state, so a paused conversation resumes in another process.

The conversation ends (and is yielded as the workflow output) when the termination condition holds, or
when the caller replies with an empty list (``HandoffUserInputRequest.terminate()``). In autonomous mode
(``with_autonomous_mode``) an owner that answers without a handoff is run again with a "continue" prompt
instead of waiting for the user, up to its turn limit (each agent may have its own limit and prompt).

``HandoffAgentExecutor`` s wired to each other by hand (without the builder's coordinator) route by
themselves, as the reference's handoff graphs do: see the class.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

from typing_extensions import Unpack

from ..._agents import SupportsAgentRun
from ..._serialization import type_id
from ..._tools import FunctionTool
from ..._types import AgentResponse, AgentResponseUpdate, Content, Message
from .._agent_executor import AgentExecutor, AgentExecutorRequest, AgentExecutorResponse
from .._context import WorkflowContext
from .._events import WorkflowEvent
from .._handlers import handler, response_handler
from ._base import (
    Condition,
    ConversationStart,
    OrchestrationBuilder,
    OrchestrationOptions,
    ParticipantExecutor,
    ParticipantReviewRequest,
    ReviewReply,
    clean_conversation_for_handoff,
    maybe_await,
    new_conversation,
    participant_name,
    to_conversation,
    tool_safe,
)

if TYPE_CHECKING:
    from .._workflow import Workflow

__all__ = [
    "HandoffAgentExecutor",
    "HandoffAgentUserRequest",
    "HandoffBuilder",
    "HandoffConfiguration",
    "HandoffSentEvent",
    "HandoffUserInputRequest",
]

COORDINATOR_ID = "handoff_coordinator"
AUTONOMOUS_PROMPT = "The user did not respond. Continue on your own, or hand off if another agent should take over."
HANDOFF_PREFIX = "handoff_to_"
MAX_TOOL_NAME_LENGTH = 64  # the longest tool name model providers accept

CoordinatorCtx = WorkflowContext[list[Message], list[Message]]
UserReply = str | Message | list[Message]


@dataclass
class HandoffUserInputRequest:
    """The ``request_info`` payload when the agent that owns the conversation waits for the user.

    Answer with ``workflow.run(responses={request_id: "next user message"})`` (a ``str``, a ``Message`` or a
    ``list[Message]``), or end the conversation with ``HandoffUserInputRequest.terminate()``.

    Attributes:
        agent_name: The agent that answered last; it receives the reply (unless the workflow sends every reply
            to its start agent: ``HandoffBuilder.enable_return_to_previous(False)``).
        agent_response: What it said.
        conversation: The whole conversation so far.

    Example:
        >>> from agentnb import AgentResponse
        >>> request = HandoffUserInputRequest("triage", AgentResponse(text="How can I help?"))
        >>> request.agent_response.text
        'How can I help?'
    """

    agent_name: str
    agent_response: AgentResponse
    conversation: list[Message] = field(default_factory=new_conversation)

    @staticmethod
    def create_response(response: str | Message | Sequence[str | Message]) -> list[Message]:
        """The user's reply as messages (text becomes a user message), ready for ``responses={id: ...}``."""
        items = [response] if isinstance(response, (str, Message)) else list(response)
        messages: list[Message] = []
        for item in cast("list[object]", items):  # untyped callers may pass anything
            if isinstance(item, str):
                messages.append(Message("user", [item]))
            elif isinstance(item, Message):
                messages.append(item)
            else:
                raise TypeError(f"A reply is text or a Message (or a list of them), got {type(item).__name__}.")
        return messages

    @staticmethod
    def terminate() -> list[Message]:
        """The reply that ends the conversation (the workflow then outputs it)."""
        return []


HandoffAgentUserRequest = HandoffUserInputRequest
"""The reference's name for :class:`HandoffUserInputRequest`."""


@dataclass(frozen=True)
class HandoffSentEvent:
    """The payload of a ``handoff_sent`` event: the conversation passed from ``source`` to ``target``."""

    source: str
    target: str


def handoff_tool_name(target: str) -> str:
    """The name of the tool that hands the conversation to ``target`` (cut to the 64 characters providers allow)."""
    return (HANDOFF_PREFIX + tool_safe(target))[:MAX_TOOL_NAME_LENGTH]


class HandoffConfiguration:
    """One handoff target of an agent, with what its handoff tool says about it (the reference's type).

    Args:
        target: The agent (or its name) to hand off to.
        description: What the handoff tool tells the model about the target (default: its description).

    Example:
        >>> HandoffConfiguration(target="billing", description="Refunds and invoices.").target_id
        'billing'
    """

    __slots__ = ("description", "target_id")

    def __init__(self, *, target: str | SupportsAgentRun, description: str | None = None) -> None:
        self.target_id = target if isinstance(target, str) else participant_name(target, role="handoff target")
        self.description = description

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HandoffConfiguration) and other.target_id == self.target_id

    def __hash__(self) -> int:
        return hash(self.target_id)

    def __repr__(self) -> str:
        return f"HandoffConfiguration(target={self.target_id!r}, description={self.description!r})"


HandoffTarget = SupportsAgentRun | str | HandoffConfiguration


def _handoff_tool(target: str, description: str | None) -> FunctionTool:
    text = f"Hand the conversation over to {target}"
    text += f", who handles: {description}" if description else "."
    return FunctionTool(
        None,
        name=handoff_tool_name(target),
        description=text,
        input_model={"type": "object", "properties": {}, "additionalProperties": False},
        additional_properties={"handoff_target": target},
    )


def requested_handoff(
    messages: list[Message], tool_targets: dict[str, str], source: str
) -> tuple[str | None, list[Content]]:
    """The first handoff ``source``'s turn asked for, and tool results closing every call left without one.

    ``tool_targets`` maps handoff tool names to the agents they hand to. Handoff tools are declaration-only,
    so the agent's turn ends at the call; the results written here answer it (and any other open call, which
    is not run because the conversation moved on).
    """
    answered = {c.call_id for m in messages for c in m.contents if c.type == "function_result"}
    open_calls = [c for m in messages for c in m.contents if c.type == "function_call" and c.call_id not in answered]
    target = next((tool_targets[c.name] for c in open_calls if c.name in tool_targets), None)
    if target is None:
        return None, []
    results: list[Content] = []
    chosen = False
    for call in open_calls:
        if not chosen and tool_targets.get(call.name or "") == target:
            chosen = True
            results.append(Content.from_function_result(call.call_id or "", result=f"Handed off to {target}."))
        else:
            results.append(
                Content.from_function_result(
                    call.call_id or "", exception=f"Not run: {source} handed the conversation to {target}."
                )
            )
    return target, results


class HandoffCoordinator(ConversationStart):
    """Owns the conversation and the current owner; routes handoffs and asks the caller for user input."""

    def __init__(
        self,
        start_agent: str,
        tool_targets: dict[str, str],
        *,
        termination_condition: Condition | None,
        autonomous: dict[str, int] | None = None,
        autonomous_prompt: str = AUTONOMOUS_PROMPT,
        autonomous_prompts: dict[str, str] | None = None,
        return_to_previous: bool = True,
    ) -> None:
        super().__init__(COORDINATOR_ID)
        self.start_agent = start_agent
        self.tool_targets = tool_targets
        self.termination_condition = termination_condition
        self.autonomous = dict(autonomous or {})
        self.autonomous_prompt = autonomous_prompt
        self.autonomous_prompts = dict(autonomous_prompts or {})  # per owner, instead of autonomous_prompt
        self.return_to_previous = return_to_previous  # False: the start agent answers every user reply
        self._conversation: list[Message] = []
        self._owner = start_agent
        self._auto_turns = 0

    # -- input -------------------------------------------------------------------------------------------
    async def start(self, conversation: list[Message], ctx: CoordinatorCtx) -> None:
        """The first user message(s): the start agent answers."""
        self._conversation = conversation
        self._owner = self.start_agent
        self._auto_turns = 0
        if await self._should_end():
            await self._finish(ctx, "termination_condition")
            return
        await ctx.send_message(list(self._conversation), target_id=self._owner)

    # -- agent turns --------------------------------------------------------------------------------------
    @handler
    async def on_answer(self, answer: AgentExecutorResponse, ctx: CoordinatorCtx) -> None:
        """The owner's turn ended: follow a handoff, or wait for the user."""
        messages = answer.agent_response.messages
        self._conversation.extend(messages)
        target, results = requested_handoff(messages, self.tool_targets, answer.executor_id)
        if target is not None:
            self._conversation.append(Message("tool", results))
            await ctx.add_event(WorkflowEvent("handoff_sent", HandoffSentEvent(answer.executor_id, target)))
            self._owner = target
            self._auto_turns = 0
            if await self._should_end():
                await self._finish(ctx, "termination_condition")
                return
            await ctx.send_message(list(self._conversation), target_id=target)
            return
        if await self._should_end():
            await self._finish(ctx, "termination_condition")
            return
        limit = self.autonomous.get(self._owner)
        if limit is not None and self._auto_turns < limit:
            # Autonomous mode: the owner keeps working instead of waiting for the user, up to its turn limit.
            self._auto_turns += 1
            prompt = self.autonomous_prompts.get(self._owner, self.autonomous_prompt)
            self._conversation.append(Message("user", [prompt]))
            await ctx.send_message(list(self._conversation), target_id=self._owner)
            return
        request = HandoffUserInputRequest(self._owner, answer.agent_response, list(self._conversation))
        await ctx.request_info(request_data=request, response_type=UserReply)

    # -- user turns ---------------------------------------------------------------------------------------
    @response_handler
    async def on_user_input(self, request: HandoffUserInputRequest, reply: UserReply, ctx: CoordinatorCtx) -> None:
        """The user's next message, for the agent that owns the conversation."""
        if isinstance(reply, str) and not reply.strip():
            reply = []
        messages = to_conversation(reply)
        if not messages:
            await self._finish(ctx, "user")
            return
        self._conversation.extend(messages)
        self._auto_turns = 0
        if not self.return_to_previous:
            self._owner = self.start_agent
        if await self._should_end():
            await self._finish(ctx, "termination_condition")
            return
        await ctx.send_message(list(self._conversation), target_id=self._owner)

    # -- ending -------------------------------------------------------------------------------------------
    async def _should_end(self) -> bool:
        if self.termination_condition is None:
            return False
        return bool(await maybe_await(self.termination_condition(list(self._conversation))))

    async def _finish(self, ctx: CoordinatorCtx, reason: str) -> None:
        await ctx.add_event(WorkflowEvent("handoff_completed", {"reason": reason, "owner": self._owner}))
        await ctx.yield_output(list(self._conversation))

    # -- state --------------------------------------------------------------------------------------------
    @property
    def owner(self) -> str:
        """The agent that currently owns the conversation."""
        return self._owner

    def reset(self) -> None:
        self._conversation, self._owner, self._auto_turns = [], self.start_agent, 0

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"conversation": list(self._conversation), "owner": self._owner, "auto_turns": self._auto_turns}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._conversation = list(state.get("conversation", []))
        self._owner = state.get("owner", self.start_agent)
        self._auto_turns = int(state.get("auto_turns", 0))


#: What a handoff agent executor sends (to the coordinator, or to the other participants) and yields. Its
#: handlers declare these in the decorator: their ``ctx`` hints stay open to match ``AgentExecutor``'s.
SENDS = AgentExecutorResponse | AgentExecutorRequest | list[Message]
YIELDS = AgentResponse | AgentResponseUpdate
HandoffCtx = WorkflowContext[Any, Any]
AfterTurn = Callable[[AgentResponse, HandoffCtx], Awaitable[None]]
AUTONOMOUS_TURN_LIMIT = 50


def _agent_tools(agent: SupportsAgentRun) -> list[Any]:
    """The tools an agent offers on every run (its own and its default options'), as far as it says."""
    tools: Any = getattr(agent, "tools", None)
    defaults: Any = getattr(agent, "default_options", None)
    extra: Any = cast("dict[str, Any]", defaults).get("tools") if isinstance(defaults, dict) else None
    listed: list[Any] = []
    for found in (tools, extra):
        if isinstance(found, list):
            listed.extend(cast("list[Any]", found))
    return listed


class HandoffTurns(ParticipantExecutor):
    """A handoff participant's turn mechanics: the agent run with its handoff tools, tool approvals and review.

    Not placed in a graph itself: :class:`HandoffAgentExecutor` forwards its inputs and answers here. Under
    a coordinator a finished turn goes back to it as every orchestration participant's does; otherwise
    ``after_turn`` decides where the conversation goes next.
    """

    def __init__(self, agent: SupportsAgentRun, executor_id: str, tools: Sequence[Any], after_turn: AfterTurn) -> None:
        super().__init__(agent, id=executor_id, tools=tools)
        self.after_turn = after_turn
        self.coordinated = False

    async def _emit(self, result: AgentResponse, ctx: Any) -> None:
        if self.coordinated:
            await super()._emit(result, ctx)
            return
        if not ctx.is_streaming:  # a streamed turn was yielded update by update
            await ctx.yield_output(result)
        self._input, self._turn = [], []
        await self.after_turn(result, ctx)


class HandoffAgentExecutor(AgentExecutor):
    """The agent executor of a handoff conversation: it answers, hands off through its tools, or asks the user.

    The agent gets one declaration-only tool per handoff target (``handoff_to_<target>``); calling one ends
    its turn and passes the conversation on. :class:`HandoffBuilder` places one of these per participant
    behind its coordinator, which then owns the conversation, the termination condition and autonomous mode
    (this executor only runs the turns, with tool approvals and review). Wired by hand with edges to the
    other participants (as the reference's graphs are) it routes by itself: the start agent takes the
    workflow input, every answer is shared with the other executors as an :class:`AgentExecutorRequest`
    without tool traffic, a handoff sends ``AgentExecutorRequest(should_respond=True)`` to the target and a
    ``handoff_sent`` event, and an answer without a handoff asks the caller for the user's next message
    with a :class:`HandoffUserInputRequest` (an empty reply ends the conversation). Each turn is a
    workflow output (an ``AgentResponse``, or its updates when the run streams).

    Args:
        agent: The participant agent.
        handoffs: The agents it may hand off to, with what its tools say about them.
        agent_session: Accepted for the reference's signature; the executor holds the conversation (it is
            checkpointed with the workflow), so the agent runs without a session.
        is_start_agent: Whether this agent takes the workflow input (and shares it with the others).
        user_response_target_id: The executor that answers the user's replies (default: this one).
        termination_condition: ``(conversation) -> bool`` (sync or async), checked before and after each turn.
        autonomous_mode: Instead of asking the user, run the agent again with ``autonomous_mode_prompt``.
        autonomous_mode_prompt: The user message added before each autonomous turn.
        autonomous_mode_turn_limit: Autonomous turns in a row before asking the user after all (default 50).

    Example:
        >>> from agentnb import Agent
        >>> from agentnb.local import ScriptedChatClient
        >>> triage = Agent(ScriptedChatClient(["Hi"]), name="triage")
        >>> executor = HandoffAgentExecutor(triage, [HandoffConfiguration(target="billing")], is_start_agent=True)
        >>> executor.id, [t.name for t in executor.tools]
        ('triage', ['handoff_to_billing'])
    """

    #: Checkpoints name this executor as the participant class handoff workflows used before it: its saved
    #: state has the same keys, so a conversation paused by that version resumes here.
    signature_kind: ClassVar[str] = type_id(ParticipantExecutor)

    def __init__(
        self,
        agent: SupportsAgentRun,
        handoffs: Sequence[HandoffConfiguration],
        *,
        agent_session: Any = None,
        is_start_agent: bool = False,
        user_response_target_id: str | None = None,
        termination_condition: Condition | None = None,
        autonomous_mode: bool = False,
        autonomous_mode_prompt: str | None = None,
        autonomous_mode_turn_limit: int | None = None,
    ) -> None:
        super().__init__(agent)
        if termination_condition is not None and not callable(termination_condition):
            raise TypeError(
                f"termination_condition must be a function of the conversation, got {termination_condition!r}."
            )
        limit = AUTONOMOUS_TURN_LIMIT if autonomous_mode_turn_limit is None else autonomous_mode_turn_limit
        if not isinstance(cast(object, limit), int) or limit < 0:
            raise ValueError(f"autonomous_mode_turn_limit must be an int >= 0, got {autonomous_mode_turn_limit!r}.")
        self.handoffs = list(handoffs)
        tools = [_handoff_tool(h.target_id, h.description) for h in self.handoffs]
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id!r} has two handoffs with the same tool name: {names}.")
        own = [getattr(t, "name", None) or getattr(t, "__name__", None) for t in _agent_tools(agent)]
        clash = sorted({n for n in own if isinstance(n, str)}.intersection(names))
        if clash:
            raise ValueError(
                f"Agent {self.id!r} already has a tool named {clash[0]!r}, the name of its handoff tool; rename "
                "that tool (or the handoff target)."
            )
        self.agent_session = agent_session
        self.is_start_agent = is_start_agent
        self.user_response_target_id = user_response_target_id
        self.termination_condition = termination_condition
        self.autonomous_mode = autonomous_mode
        self.autonomous_mode_prompt = autonomous_mode_prompt or AUTONOMOUS_PROMPT
        self.autonomous_mode_turn_limit = limit
        self._turns = HandoffTurns(agent, self.id, tools, self._after_turn)
        self._tool_targets = {t.name: h.target_id for t, h in zip(tools, self.handoffs, strict=True)}
        self._history: list[Message] = []  # what this agent is run on: its own tool traffic kept
        self._autonomous_turns = 0

    @property
    def tools(self) -> list[Any]:
        """The handoff tools offered to the agent on every run (one per target)."""
        return list(self._turns.tools)

    # -- how it is placed ---------------------------------------------------------------------------------
    @property
    def coordinated(self) -> bool:
        """Whether a :class:`HandoffBuilder` coordinator owns the conversation (set by the builder)."""
        return self._turns.coordinated

    @coordinated.setter
    def coordinated(self, value: bool) -> None:
        self._turns.coordinated = value

    @property
    def review(self) -> bool:
        """Whether a person reviews each turn before it is passed on (``with_request_info``)."""
        return self._turns.review

    @review.setter
    def review(self, value: bool) -> None:
        self._turns.review = value

    # -- inputs -------------------------------------------------------------------------------------------
    @handler(input=str, output=SENDS, workflow_output=YIELDS)
    async def from_str(self, text: str, ctx: HandoffCtx) -> None:
        """The workflow input as text (one user message)."""
        await self.from_messages(to_conversation(text), ctx)

    @handler(input=Message, output=SENDS, workflow_output=YIELDS)
    async def from_message(self, message: Message, ctx: HandoffCtx) -> None:
        """The workflow input as one message."""
        await self.from_messages([message], ctx)

    @handler(input=list[Message], output=SENDS, workflow_output=YIELDS)
    async def from_messages(self, messages: list[Message], ctx: HandoffCtx) -> None:
        """The coordinator's conversation to answer; wired by hand, the workflow input (shared with the others)."""
        if self.coordinated:
            await self._turns.on_conversation(messages, ctx)
            return
        if self.is_start_agent and not self._conversation:
            await ctx.send_message(AgentExecutorRequest(list(messages), should_respond=False))
        await self._hear(list(messages), respond=True, ctx=ctx)

    @handler(input=AgentExecutorRequest, output=SENDS, workflow_output=YIELDS)
    async def from_request(self, request: AgentExecutorRequest, ctx: HandoffCtx) -> None:
        """Messages another participant shared, and whether this agent now holds the conversation."""
        await self._hear(list(request.messages), respond=request.should_respond, ctx=ctx)

    @handler(input=AgentExecutorResponse, output=SENDS, workflow_output=YIELDS)
    async def from_response(self, response: AgentExecutorResponse, ctx: HandoffCtx) -> None:
        """Another agent executor's answer: continue its conversation."""
        conversation = response.full_conversation
        if conversation is None:
            conversation = list(response.agent_response.messages)
        await self.from_messages(list(conversation), ctx)

    @handler(input=list[AgentExecutorResponse], output=SENDS, workflow_output=YIELDS)
    async def from_responses(self, responses: list[AgentExecutorResponse], ctx: HandoffCtx) -> None:
        """Several agents' answers (a fan-in): their new messages, in order."""
        await self.from_messages([m for r in responses for m in r.agent_response.messages], ctx)

    # -- answers to requests --------------------------------------------------------------------------------
    @response_handler(request=Content, response=Content, output=SENDS, workflow_output=YIELDS)
    async def on_approval(self, request: Content, answer: Content, ctx: HandoffCtx) -> None:
        """An approval answer (a ``function_approval_response`` content) for a tool call of this agent."""
        await self._turns.on_approval(request, answer, ctx)

    @response_handler(request=Content, response=bool, output=SENDS, workflow_output=YIELDS)
    async def on_approval_bool(self, request: Content, approved: bool, ctx: HandoffCtx) -> None:
        """A yes/no approval answer for a tool call of this agent."""
        await self._turns.on_approval_bool(request, approved, ctx)

    @response_handler(request=ParticipantReviewRequest, response=ReviewReply, output=SENDS, workflow_output=YIELDS)
    async def on_review(self, request: ParticipantReviewRequest, reply: ReviewReply, ctx: HandoffCtx) -> None:
        """A person's review of this agent's turn (see ``HandoffBuilder.with_request_info``)."""
        await self._turns.on_review(request, reply, ctx)

    @response_handler(request=HandoffUserInputRequest, response=UserReply, output=SENDS, workflow_output=YIELDS)
    async def handle_response(self, request: HandoffUserInputRequest, reply: UserReply, ctx: HandoffCtx) -> None:
        """The user's next message after this agent answered without a handoff (an empty reply ends it)."""
        if isinstance(reply, str) and not reply.strip():
            reply = []
        messages = to_conversation(reply)
        if not messages:
            await ctx.add_event(WorkflowEvent("handoff_completed", {"reason": "user", "owner": self.id}))
            return
        await ctx.send_message(AgentExecutorRequest(messages, should_respond=False))
        target = self.user_response_target_id
        if target is not None and target != self.id:
            self._history.extend(messages)
            self._conversation.extend(messages)
            await ctx.send_message(AgentExecutorRequest([], should_respond=True), target_id=target)
            return
        self._autonomous_turns = 0
        await self._hear(messages, respond=True, ctx=ctx)

    # -- routing by itself --------------------------------------------------------------------------------
    async def _hear(self, messages: list[Message], *, respond: bool, ctx: HandoffCtx) -> None:
        self._history.extend(messages)
        self._conversation.extend(messages)
        if respond:
            await self._take_turn(ctx)

    async def _take_turn(self, ctx: HandoffCtx) -> None:
        if await self._should_terminate():
            await ctx.add_event(
                WorkflowEvent("handoff_completed", {"reason": "termination_condition", "owner": self.id})
            )
            return
        await self._turns.on_conversation(list(self._history), ctx)

    async def _after_turn(self, result: AgentResponse, ctx: HandoffCtx) -> None:
        """Where the conversation goes after this agent's turn: the handoff target, the agent again, or the user."""
        self._history.extend(result.messages)
        shared = clean_conversation_for_handoff(result.messages)
        self._conversation.extend(shared)
        if shared:
            await ctx.send_message(AgentExecutorRequest(shared, should_respond=False))
        target, results = requested_handoff(result.messages, self._tool_targets, self.id)
        if target is not None:
            self._history.append(Message("tool", results))
            await ctx.send_message(AgentExecutorRequest([], should_respond=True), target_id=target)
            await ctx.add_event(WorkflowEvent("handoff_sent", HandoffSentEvent(self.id, target)))
            self._autonomous_turns = 0
            return
        if await self._should_terminate():
            await ctx.add_event(
                WorkflowEvent("handoff_completed", {"reason": "termination_condition", "owner": self.id})
            )
            return
        if self.autonomous_mode and self._autonomous_turns < self.autonomous_mode_turn_limit:
            self._autonomous_turns += 1
            await self._hear([Message("user", [self.autonomous_mode_prompt])], respond=True, ctx=ctx)
            return
        self._autonomous_turns = 0
        request = HandoffUserInputRequest(self.id, result, list(self._conversation))
        await ctx.request_info(request_data=request, response_type=UserReply)

    async def _should_terminate(self) -> bool:
        if self.termination_condition is None:
            return False
        return bool(await maybe_await(self.termination_condition(list(self._conversation))))

    # -- state --------------------------------------------------------------------------------------------
    def reset(self) -> None:
        super().reset()
        self._turns.reset()
        self._history, self._autonomous_turns = [], 0

    def on_checkpoint_save(self) -> dict[str, Any]:
        state = self._turns.on_checkpoint_save()
        if not self.coordinated:  # under a coordinator the turn is all there is, as participants save it
            state.update(
                conversation=list(self._conversation),
                history=list(self._history),
                autonomous_mode_turns=self._autonomous_turns,
            )
        return state

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._turns.on_checkpoint_restore(state)
        self._conversation = list(state.get("conversation", []))
        self._history = list(state.get("history", []))
        self._autonomous_turns = int(state.get("autonomous_mode_turns", 0))


def _check_one_value(keyword: str, value: object, mapping_keyword: str, example: dict[str, object]) -> None:
    """Refuse a mapping passed to the one-value keyword of ``with_autonomous_mode`` (it has a per-agent twin)."""
    if isinstance(value, Mapping):
        raise TypeError(
            f"{keyword} is one value for every agent, got a mapping; per-agent values go in {mapping_keyword}= "
            f"(for example {mapping_keyword}={example!r})."
        )


class HandoffBuilder(OrchestrationBuilder):
    """Build a handoff conversation: agents pass the conversation to each other through generated tools.

    Without :meth:`add_handoff` every agent may hand off to every other; once a rule is added, only the
    declared handoffs exist (an agent without rules answers the user itself).

    Args:
        participants: The agents (each needs a unique ``name``; descriptions go into the handoff tools).
        termination_condition: ``(conversation) -> bool`` (sync or async), checked after every turn.
        **options: ``checkpoint_storage``, ``name``, ``description``, ``run_store``,
            ``intermediate_outputs`` (see :class:`OrchestrationOptions`).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.workflows import HandoffBuilder

        triage = Agent(ScriptedChatClient([ScriptedChatClient.call("handoff_to_billing")]), name="triage")
        billing = Agent(ScriptedChatClient(["Your refund is on its way."]), name="billing")
        workflow = HandoffBuilder(participants=[triage, billing]).with_start_agent(triage).build()
        result = await workflow.run("I want a refund")
        request = result.get_request_info_events()[0]
        request.data.agent_name  # 'billing'
        ```
    """

    _RESERVED = (COORDINATOR_ID,)
    _MIN_PARTICIPANTS = 2

    def __init__(
        self,
        participants: Sequence[SupportsAgentRun],
        *,
        termination_condition: Condition | None = None,
        **options: Unpack[OrchestrationOptions],
    ) -> None:
        super().__init__(participants, **options)
        if termination_condition is not None and not callable(termination_condition):
            raise TypeError(
                f"termination_condition must be a function of the conversation, got {termination_condition!r}."
            )
        self._termination_condition = termination_condition
        self._autonomous: dict[str, int] = {}
        self._autonomous_prompt = AUTONOMOUS_PROMPT  # for the autonomous agents _autonomous_prompts leaves out
        self._autonomous_prompts: dict[str, str] = {}
        self._start: str | None = None
        self._return_to_previous = True
        self._rules: dict[str, list[str]] = {}
        self._descriptions: dict[tuple[str, str], str] = {}  # (source, target) -> what the tool says of target
        tool_names = [handoff_tool_name(n) for n in self.participant_names]
        if len(set(tool_names)) != len(tool_names):
            raise ValueError(
                f"Participant names {self.participant_names} give clashing handoff tool names {tool_names}; "
                "use names that differ in letters, digits, '_' or '-'."
            )

    def with_start_agent(self, agent: SupportsAgentRun | str) -> HandoffBuilder:
        """The agent that receives the first user message (by default the first participant)."""
        self._start = self.participant_by_name(agent)
        return self

    def add_handoff(
        self,
        source: SupportsAgentRun | str,
        targets: Sequence[SupportsAgentRun | str | HandoffConfiguration]
        | SupportsAgentRun
        | str
        | HandoffConfiguration,
        *,
        description: str | None = None,
    ) -> HandoffBuilder:
        """Allow ``source`` to hand the conversation to each of ``targets`` (call again to add more).

        Args:
            source: The agent that may hand off.
            targets: The agents it may hand off to (agents, names or :class:`HandoffConfiguration` s).
            description: What the handoff tools tell ``source`` about the targets, instead of their
                descriptions (a :class:`HandoffConfiguration`'s own description wins).
        """
        src = self.participant_by_name(source)
        if isinstance(targets, (str, SupportsAgentRun, HandoffConfiguration)):
            targets = [targets]
        # An agent object is checked to be the participant itself, not just one with its name.
        names = [self.participant_by_name(t.target_id if isinstance(t, HandoffConfiguration) else t) for t in targets]
        configs = [
            t if isinstance(t, HandoffConfiguration) else HandoffConfiguration(target=n, description=description)
            for t, n in zip(targets, names, strict=True)
        ]
        if not names:
            raise ValueError(f"add_handoff({src!r}, ...) needs at least one target.")
        if src in names:
            raise ValueError(f"{src!r} cannot hand off to itself.")
        rule = self._rules.setdefault(src, [])
        rule.extend(n for n in names if n not in rule)
        for name, config in zip(names, configs, strict=True):
            if config.description is not None or description is not None:
                self._descriptions[src, name] = config.description or description or ""
        return self

    def enable_return_to_previous(self, enabled: bool = True) -> HandoffBuilder:
        """Send each user reply to the agent that asked for it (the default), or with ``False`` to the start agent.

        The start agent then decides again who should handle the conversation, handing it off if needed.
        """
        self._return_to_previous = bool(enabled)
        return self

    def with_termination_condition(self, condition: Condition) -> HandoffBuilder:
        """End the conversation when ``condition(conversation)`` is true (checked after every turn)."""
        if not callable(condition):
            raise TypeError(f"The termination condition must be a function of the conversation, got {condition!r}.")
        self._termination_condition = condition
        return self

    def with_autonomous_mode(
        self,
        *,
        agents: Sequence[SupportsAgentRun | str] | None = None,
        prompts: Mapping[str, str] | None = None,
        turn_limits: Mapping[str, int] | None = None,
        turn_limit: int | None = None,
        prompt: str | None = None,
    ) -> HandoffBuilder:
        """Let agents keep working without the user: instead of asking for input, re-run the owner.

        Takes the reference's per-agent shape (``prompts`` / ``turn_limits`` keyed by agent name) and the
        one-value shape (``prompt`` / ``turn_limit`` for every agent); given both, the one value is the default
        and the mapping overrides it for the agents it names.

        Args:
            agents: The agents that work autonomously (agents or names; default: all).
            prompts: Agent name -> the user message added before each of its autonomous turns.
            turn_limits: Agent name -> autonomous turns in a row before asking the user after all; ``0``
                asks the user as soon as that agent answers without a handoff.
            turn_limit: The limit (at least 1) for every agent ``turn_limits`` does not name (default 50).
            prompt: The prompt for every agent ``prompts`` does not name.

        Raises:
            TypeError: A mapping given where one value belongs, or the other way round.
            ValueError: A name that is not a participant, or one ``agents`` leaves out (its entry would
                do nothing), or a limit out of range.

        Example:
            >>> from agentnb import Agent
            >>> from agentnb.local import ScriptedChatClient
            >>> a, b = (Agent(ScriptedChatClient([]), name=n) for n in ("a", "b"))
            >>> builder = HandoffBuilder(participants=[a, b]).with_autonomous_mode(turn_limits={"a": 5, "b": 0})
            >>> builder.autonomous_turn_limits()
            {'a': 5, 'b': 0}
        """
        _check_one_value("turn_limit", turn_limit, "turn_limits", {"agent": 3})
        _check_one_value("prompt", prompt, "prompts", {"agent": "Keep going."})
        if turn_limit is not None and (not isinstance(cast(object, turn_limit), int) or turn_limit < 1):
            raise ValueError(
                f"turn_limit must be an int >= 1, got {turn_limit!r} (to stop one agent from continuing on its own, "
                "give it 0 in turn_limits=)."
            )
        names = self.participant_names if agents is None else [self.participant_by_name(a) for a in agents]
        limits = self._per_agent("turn_limits", turn_limits, names, "a limit")
        for name, limit in limits.items():
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                raise ValueError(f"turn_limits[{name!r}] must be an int >= 0, got {limit!r}.")
        texts = self._per_agent("prompts", prompts, names, "a prompt")
        for name, text in texts.items():
            if not isinstance(text, str):
                raise TypeError(f"prompts[{name!r}] must be text, got {type(text).__name__}.")
        default_limit = AUTONOMOUS_TURN_LIMIT if turn_limit is None else turn_limit
        self._autonomous = {n: cast(int, limits.get(n, default_limit)) for n in names}
        self._autonomous_prompts = cast(dict[str, str], texts)
        if prompt is not None:
            self._autonomous_prompt = prompt
        return self

    def _per_agent(self, keyword: str, given: object, enabled: Sequence[str], what: str) -> dict[str, object]:
        """A per-agent mapping of ``with_autonomous_mode`` keyed by participant name (agents may stand as keys)."""
        if given is None:
            return {}
        if not isinstance(given, Mapping):
            one = keyword.removesuffix("s")
            raise TypeError(
                f"{keyword} maps agent names to values, got {type(given).__name__}; to give every agent the same "
                f"value pass {one}= instead."
            )
        resolved: dict[str, object] = {}
        for key, value in cast("Mapping[object, object]", given).items():
            name = self.participant_by_name(key)
            if name in resolved:
                raise ValueError(f"{keyword} names {name!r} twice.")
            if name not in enabled:
                raise ValueError(
                    f"{keyword} gives {what} to {name!r}, which agents={list(enabled)} leaves out of autonomous "
                    "mode; add it to agents= or drop the entry."
                )
            resolved[name] = value
        return resolved

    def autonomous_turn_limits(self) -> dict[str, int]:
        """The agents in autonomous mode and their turn limits, as the built workflow will have them."""
        return dict(self._autonomous)

    def handoff_targets(self) -> dict[str, list[str]]:
        """Who may hand off to whom, as the built workflow will have it."""
        if not self._rules:
            return {n: [t for t in self.participant_names if t != n] for n in self.participant_names}
        return {n: list(self._rules.get(n, [])) for n in self.participant_names}

    def build(self) -> Workflow:
        """Build the star graph as an ordinary :class:`~agentnb.workflows.Workflow`."""
        start = self._start or self.participant_names[0]
        descriptions = self.participant_descriptions()
        rules = self.handoff_targets()
        executors: list[HandoffAgentExecutor] = []
        for name, agent in zip(self.participant_names, self.participants, strict=True):
            handoffs = [
                HandoffConfiguration(target=t, description=self._descriptions.get((name, t), descriptions[t]))
                for t in rules[name]
            ]
            executor = HandoffAgentExecutor(agent, handoffs, is_start_agent=name == start)
            executor.coordinated = True  # the coordinator owns the conversation, termination and autonomy
            executor.review = name in self._review
            executors.append(executor)
        coordinator = HandoffCoordinator(
            start,
            {handoff_tool_name(n): n for n in self.participant_names},
            termination_condition=self._termination_condition,
            autonomous=self._autonomous,
            autonomous_prompt=self._autonomous_prompt,
            autonomous_prompts=self._autonomous_prompts,
            return_to_previous=self._return_to_previous,
        )
        builder = self._workflow_builder(
            coordinator, output_from=[coordinator], participants=executors, max_iterations=200
        )
        for executor in executors:
            builder.add_edge(coordinator, executor)
            builder.add_edge(executor, coordinator)
        return builder.build()
