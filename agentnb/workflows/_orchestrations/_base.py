"""What every orchestration shares: the participant executor, input normalization and the builder base.

A *participant* is an agent placed in an orchestration. :class:`ParticipantExecutor` runs it on the
conversation an orchestrator sends (``list[Message]``) or continues the conversation of the previous
participant (an :class:`AgentExecutorResponse`), and sends back an ``AgentExecutorResponse`` whose
``full_conversation`` is the input plus the participant's new messages (or, in chains, that conversation
itself). It is its own executor rather than an ``AgentExecutor`` because orchestrations own the
conversation: the participant answers what it is sent, with per-orchestration tools (handoffs), and
keeps only the state of an unfinished turn. Tool approvals raised inside the
agent become the workflow's own ``request_info`` events, so the caller of the whole orchestration
answers them with ``workflow.run(responses={request_id: True})`` (also from another process).

With ``builder.with_request_info(agents=[...])`` a person reviews each turn of those agents before it is
passed on: the run pauses with a :class:`ParticipantReviewRequest`; approving passes the turn on, feedback
goes back to the same agent, which answers again (and is reviewed again).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, cast

from pydantic import ConfigDict
from typing_extensions import Unpack

from ..._agents import SupportsAgentRun
from ..._conversation import ApprovalGate, strip_approvals
from ..._types import AgentResponse, AgentResponseUpdate, Content, Message
from .._agent_executor import AgentExecutorResponse, ask_approval, run_agent_turn
from .._builder import WorkflowBuilder
from .._context import WorkflowContext
from .._events import WorkflowEvent
from .._executor import Executor
from .._handlers import handler, response_handler

if TYPE_CHECKING:
    from ...store import Store
    from .._checkpoints import CheckpointStorage
    from .._workflow import Workflow

__all__ = [
    "STRUCTURED_OUTPUT_CONFIG",
    "AgentRequestInfoResponse",
    "ConversationStart",
    "OrchestrationBuilder",
    "OrchestrationOptions",
    "OrchestrationState",
    "ParticipantExecutor",
    "ParticipantReviewRequest",
    "ParticipantReviewResponse",
    "TerminationCondition",
    "clean_conversation_for_handoff",
    "create_completion_message",
    "maybe_await",
    "participant_name",
    "to_conversation",
]

ParticipantCtx = WorkflowContext[AgentExecutorResponse | list[Message], AgentResponse | AgentResponseUpdate]
ConversationCtx = WorkflowContext[list[Message], list[Message]]
#: A termination condition: ``(conversation) -> bool``, sync or async.
Condition = Callable[[list[Message]], bool | Awaitable[bool]]
#: The reference's name for a termination condition.
TerminationCondition = Condition
_B = TypeVar("_B", bound="OrchestrationBuilder")
_NAME_RE = re.compile(r"[^a-zA-Z0-9_-]")


def clean_conversation_for_handoff(conversation: list[Message]) -> list[Message]:
    """The conversation as text only: what to hand to another agent without replaying tool traffic.

    Every message keeps its role, author and properties with its text parts joined into one; messages without
    text (tool calls, tool results, approvals) are left out, so the next model call carries no tool call
    without its result. The reference's helper of the same name.

    Example:
        >>> from agentnb import Content
        >>> call = Message("assistant", [Content.from_function_call("c1", "lookup", {})])
        >>> [m.text for m in clean_conversation_for_handoff([Message("user", ["hi"]), call])]
        ['hi']
    """
    cleaned: list[Message] = []
    for message in conversation:
        texts = [c.text for c in message.contents if c.type == "text" and c.text]
        if texts:
            cleaned.append(
                Message(
                    message.role,
                    [" ".join(texts)],
                    author_name=message.author_name,
                    additional_properties=dict(message.additional_properties),
                )
            )
    return cleaned


def create_completion_message(*, text: str | None = None, author_name: str, reason: str = "completed") -> Message:
    """An orchestrator's closing message: ``text``, or "Conversation <reason>." when there is none.

    The reference's helper of the same name, for orchestrators written by subclassing.

    Example:
        >>> create_completion_message(author_name="manager", reason="ended by the round limit").text
        'Conversation ended by the round limit.'
    """
    return Message("assistant", [text or f"Conversation {reason}."], author_name=author_name)


def new_conversation() -> list[Message]:
    """An empty, typed conversation (a dataclass ``default_factory``)."""
    return []


def _model_facing_schema(schema: dict[str, Any], cls: type) -> None:
    """Make a structured-output schema fit for a model: a one-line description and no defaults.

    Strict JSON-schema modes (OpenAI's) mark every field required and reject ``default``; the Python
    defaults stay, so code building these models by hand can still leave fields out.
    """
    doc = (cls.__doc__ or "").strip().splitlines()
    if doc:
        schema["description"] = doc[0]
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


#: ``model_config`` for the pydantic models orchestrations ask managers to answer with.
STRUCTURED_OUTPUT_CONFIG = ConfigDict(json_schema_extra=_model_facing_schema)


def to_conversation(value: Any) -> list[Message]:
    """Turn an orchestration's input (text, a message or a list of messages) into a fresh list of messages."""
    if isinstance(value, str):
        return [Message("user", [value])]
    if isinstance(value, Message):
        return [value]
    if isinstance(value, list):
        items = cast("list[Any]", value)
        if all(isinstance(m, Message) for m in items):
            return cast("list[Message]", list(items))
    kind = type(cast(object, value)).__name__
    raise TypeError(f"An orchestration takes a str, a Message or a list of Messages as input, got {kind}.")


async def maybe_await(value: Any) -> Any:
    """Await ``value`` when a user callback returned an awaitable (callbacks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


def participant_name(agent: Any, *, role: str = "participant", alternative: str = "") -> str:
    """The name an agent goes by in an orchestration (its executor id, speaker name and handoff target)."""
    if isinstance(agent, Executor) or inspect.isclass(agent) or not isinstance(agent, SupportsAgentRun):
        raise TypeError(
            f"Each {role} must be an agent (an object with run(), such as Agent(client, name=...)){alternative}, "
            f"got {agent!r}."
        )
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            f"Every {role} needs a name: it identifies the agent in the conversation, in handoffs and in "
            f"checkpoints. Pass name=... when creating the agent (got an agent with id {agent.id!r})."
        )
    return name


def tool_safe(name: str) -> str:
    """``name`` as it may appear inside a tool name (letters, digits, ``_`` and ``-``)."""
    return _NAME_RE.sub("_", name).strip("_") or "agent"


class ConversationStart(Executor):
    """An executor that takes the workflow input (text, a message or a conversation) as a conversation.

    Subclasses implement :meth:`start`; the input handlers are shared so every orchestration accepts the
    same inputs.
    """

    @handler
    async def start_text(self, text: str, ctx: ConversationCtx) -> None:
        """The input as text (one user message)."""
        await self.start(to_conversation(text), ctx)

    @handler
    async def start_message(self, message: Message, ctx: ConversationCtx) -> None:
        """The input as one message."""
        await self.start(to_conversation(message), ctx)

    @handler
    async def start_messages(self, messages: list[Message], ctx: ConversationCtx) -> None:
        """The input as a conversation."""
        await self.start(to_conversation(messages), ctx)

    async def start(self, conversation: list[Message], ctx: ConversationCtx) -> None:
        """Begin with ``conversation`` (a fresh list the executor may keep)."""
        raise NotImplementedError


@dataclass
class ParticipantReviewRequest(AgentExecutorResponse):
    """The ``request_info`` payload when a person reviews a participant's turn before it is passed on.

    It is an :class:`AgentExecutorResponse` (``executor_id``, ``agent_response``, ``full_conversation``), as
    Agent Framework sends for this review. Answer with ``True`` (or ``AgentRequestInfoResponse.approve()``)
    to pass the turn on, or with feedback (a ``str``, ``AgentRequestInfoResponse.from_strings([...])`` or
    ``ParticipantReviewResponse.revise(...)``) that the same agent answers again.

    Example:
        >>> request = ParticipantReviewRequest("writer", AgentResponse(text="A draft."))
        >>> request.agent_response.text
        'A draft.'
    """

    #: The whole turn under review (every draft and the feedback so far); ``agent_response`` is the latest answer.
    turn: AgentResponse | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (the executor response's, plus the turn)."""
        data = super().to_dict()
        if self.turn is not None:
            data["turn"] = self.turn.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ParticipantReviewRequest:
        """Rebuild from :meth:`to_dict` output."""
        request = cast(ParticipantReviewRequest, super().from_dict(data))
        if data.get("turn") is not None:
            request.turn = AgentResponse.from_dict(data["turn"])
        return request

    @property
    def participant(self) -> str:
        """The agent whose turn it is (its executor id)."""
        return self.executor_id

    @property
    def conversation(self) -> list[Message]:
        """The conversation including the turn under review."""
        return list(self.full_conversation or [])


@dataclass
class ParticipantReviewResponse:
    """A person's answer to a :class:`ParticipantReviewRequest` (agentnb's shape; see AgentRequestInfoResponse).

    Example:
        >>> ParticipantReviewResponse.revise("Shorter, please.").feedback[0].text
        'Shorter, please.'
    """

    approved: bool = True
    feedback: list[Message] = field(default_factory=new_conversation)

    @classmethod
    def approve(cls) -> ParticipantReviewResponse:
        """Pass the turn on as it is."""
        return cls(True)

    @classmethod
    def revise(cls, feedback: str | Message | list[Message]) -> ParticipantReviewResponse:
        """Send ``feedback`` (user messages) back to the agent, which answers again."""
        return cls(False, to_conversation(feedback))


def _new_metadata() -> dict[str, Any]:
    return {}


@dataclass
class OrchestrationState:
    """The reference's common shape of an orchestrator's checkpoint state: conversation, round, extras.

    agentnb's orchestrators keep their own state in the workflow checkpoint; this container is for custom
    orchestrators (and code ported from the reference) that want the shared shape. ``to_dict`` is JSON-safe.

    Example:
        >>> state = OrchestrationState([Message("user", ["Plan a trip"])], round_index=2, metadata={"stalls": 1})
        >>> OrchestrationState.from_dict(state.to_dict()).round_index
        2
    """

    conversation: list[Message] = field(default_factory=new_conversation)
    round_index: int = 0
    orchestrator_name: str = ""
    metadata: dict[str, Any] = field(default_factory=_new_metadata)
    task: Message | None = None

    def to_dict(self) -> dict[str, Any]:
        """The state as JSON-safe data (``task`` only when there is one, as the reference writes it)."""
        data: dict[str, Any] = {
            "conversation": [m.to_dict() for m in self.conversation],
            "round_index": self.round_index,
            "orchestrator_name": self.orchestrator_name,
            "metadata": dict(self.metadata),
        }
        if self.task is not None:
            data["task"] = self.task.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OrchestrationState:
        """Rebuild from :meth:`to_dict` output (missing fields take their defaults)."""
        task = data.get("task")
        return cls(
            conversation=[_as_message(m) for m in data.get("conversation", [])],
            round_index=int(data.get("round_index", 0)),
            orchestrator_name=str(data.get("orchestrator_name", "")),
            metadata=dict(data.get("metadata", {})),
            task=None if task is None else _as_message(task),
        )


def _as_message(value: Any) -> Message:
    return value if isinstance(value, Message) else Message.from_dict(value)


@dataclass
class AgentRequestInfoResponse:
    """A person's answer to a reviewed turn, as Agent Framework shapes it: no messages approve the turn.

    Example:
        >>> AgentRequestInfoResponse.from_strings(["Shorter, please."]).messages[0].role
        'user'
    """

    messages: list[Message] = field(default_factory=new_conversation)

    @staticmethod
    def from_messages(messages: list[Message]) -> AgentRequestInfoResponse:
        """Feedback messages the agent answers (an empty list approves)."""
        return AgentRequestInfoResponse(list(messages))

    @staticmethod
    def from_strings(texts: list[str]) -> AgentRequestInfoResponse:
        """Feedback as user messages, one per text."""
        return AgentRequestInfoResponse([Message("user", [text]) for text in texts])

    @staticmethod
    def approve() -> AgentRequestInfoResponse:
        """Pass the turn on as it is."""
        return AgentRequestInfoResponse([])


ReviewReply = ParticipantReviewResponse | AgentRequestInfoResponse | bool | str


class ParticipantExecutor(Executor):
    """Runs one participant agent on the conversation it is sent and sends back its new messages.

    Args:
        agent: The participant agent.
        id: The executor id (default: the agent's name).
        tools: Extra tools offered to the agent on every run (the handoff tools, for example).
        send_conversation: Send the updated conversation (``list[Message]``) instead of an
            ``AgentExecutorResponse`` (chains that may include custom executors use this).
        review: Ask the workflow's caller to review each turn before passing it on.

    Example:
        >>> from agentnb import Agent
        >>> from agentnb.local import ScriptedChatClient
        >>> ParticipantExecutor(Agent(ScriptedChatClient(["Hi"]), name="writer")).id
        'writer'
    """

    def __init__(
        self,
        agent: SupportsAgentRun,
        *,
        id: str | None = None,
        tools: Sequence[Any] = (),
        send_conversation: bool = False,
        review: bool = False,
    ) -> None:
        super().__init__(id or participant_name(agent))
        self.agent = agent
        self.tools = list(tools)
        self.send_conversation = send_conversation
        self.review = review
        self._input: list[Message] = []
        self._turn: list[Message] = []
        self._approvals = ApprovalGate()

    @handler
    async def on_conversation(self, conversation: list[Message], ctx: ParticipantCtx) -> None:
        """Answer the conversation an orchestrator sent."""
        self._input = list(conversation)
        self._turn = []
        self._approvals.reset()
        await self._run(ctx)

    @handler
    async def on_previous(self, previous: AgentExecutorResponse, ctx: ParticipantCtx) -> None:
        """Continue the conversation the previous participant passed on."""
        conversation = previous.full_conversation
        if conversation is None:
            conversation = list(previous.agent_response.messages)
        await self.on_conversation(conversation, ctx)

    @response_handler
    async def on_approval(self, request: Content, answer: Content, ctx: ParticipantCtx) -> None:
        """An approval answer (a ``function_approval_response`` content) for a tool call of this agent."""
        await self._take_answer(request, answer, ctx)

    @response_handler
    async def on_approval_bool(self, request: Content, approved: bool, ctx: ParticipantCtx) -> None:
        """A yes/no approval answer for a tool call of this agent."""
        await self._take_answer(request, approved, ctx)

    async def _take_answer(self, request: Content, answer: Content | bool, ctx: ParticipantCtx) -> None:
        taken = ApprovalGate.as_answer(request, answer)
        if taken is None:  # a wrong answer does not cost the pending approval: say why and ask again
            wrong = cast(Content, answer)  # a bool always answers: only a Content can fail to fit
            await ctx.add_event(WorkflowEvent("warning", ApprovalGate.wrong_answer_warning(self.id, request, wrong)))
            await ask_approval(ctx, request)
            return
        self._turn.append(Message("user", [taken]))
        if self._approvals.answered(request):  # several calls may wait at once: continue when all are answered
            await self._run(ctx)

    async def _run(self, ctx: ParticipantCtx) -> None:
        messages = [*self._input, *self._turn]
        options = {"tools": self.tools} if self.tools else None
        response, requests = await run_agent_turn(self, self.agent, messages, ctx, options=options)
        self._turn.extend(response.messages)
        if requests:
            # The agent waits for a person: ask the workflow's caller, continue in on_approval.
            for request in self._approvals.forward(requests):
                await ask_approval(ctx, request)
            return
        new_messages = strip_approvals(self._turn)
        result = AgentResponse(
            messages=new_messages,
            response_id=response.response_id,
            agent_id=response.agent_id,
            model_id=response.model_id,
            finish_reason=response.finish_reason,
            usage_details=response.usage_details,
            additional_properties=response.additional_properties,
        )
        if self.review:
            # The reviewer sees the agent's latest answer (as Agent Framework shows it); approving passes the
            # whole turn on, earlier drafts and the feedback included.
            latest = AgentResponse(
                messages=strip_approvals(response.messages),
                response_id=response.response_id,
                agent_id=response.agent_id,
                model_id=response.model_id,
            )
            request = ParticipantReviewRequest(self.id, latest, [*self._input, *new_messages], turn=result)
            await ctx.request_info(request_data=request, response_type=ReviewReply)
            return
        await self._emit(result, ctx)

    @response_handler
    async def on_review(self, request: ParticipantReviewRequest, reply: ReviewReply, ctx: ParticipantCtx) -> None:
        """A person's review of this agent's turn: pass it on, or have the agent answer the feedback."""
        if isinstance(reply, bool):
            reply = ParticipantReviewResponse(True) if reply else ParticipantReviewResponse.revise("Please revise.")
        elif isinstance(reply, str):
            reply = ParticipantReviewResponse.revise(reply) if reply.strip() else ParticipantReviewResponse(True)
        elif isinstance(reply, AgentRequestInfoResponse):
            reply = ParticipantReviewResponse(not reply.messages, list(reply.messages))
        if reply.approved and not reply.feedback:
            await self._emit(request.turn or request.agent_response, ctx)
            return
        self._turn.extend(reply.feedback or [Message("user", ["Please revise."])])
        await self._run(ctx)

    async def _emit(self, result: AgentResponse, ctx: ParticipantCtx) -> None:
        if not ctx.is_streaming:  # a streamed turn was yielded update by update, as the reference does
            await ctx.yield_output(result)
        conversation = [*self._input, *result.messages]
        if not ctx.outgoing_executor_ids:  # the last of a chain: its turn is the output, nothing goes on
            pass
        elif self.send_conversation:
            await ctx.send_message(conversation)
        else:
            await ctx.send_message(AgentExecutorResponse(self.id, result, conversation))
        self._input, self._turn = [], []

    def reset(self) -> None:
        self._input, self._turn = [], []
        self._approvals.reset()

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"input": list(self._input), "turn": list(self._turn), "awaiting": list(self._approvals.awaiting)}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._input = list(state.get("input", []))
        self._turn = list(state.get("turn", []))
        self._approvals = ApprovalGate(list(state.get("awaiting", [])))


class OrchestrationOptions(TypedDict, total=False):
    """The keyword arguments every orchestration builder takes.

    Attributes:
        checkpoint_storage: Write a checkpoint after every superstep (also ``.with_checkpointing(...)``).
        name: The workflow's name (checkpoints and the run store list runs by it).
        description: A description shown in the DevUI.
        run_store: Mirror every run and its events into this ``agentnb.store.Store``.
        intermediate_outputs: Publish each participant turn (its ``AgentResponse``, or its updates when the run
            streams) as ``intermediate`` events when no selection is given. The default is ``False`` for
            Sequential and Concurrent, whose participants are hidden in the reference too, ``True`` for the others.
        output_from: The reference's selection of workflow outputs: participants (agents, names or executors)
            whose turns are ``output`` events, or ``"all"``. Without it the orchestration's default output is
            published (Sequential: the last participant's reply; Concurrent: the aggregator's value, which is
            published with any selection too).
        intermediate_output_from: Participants whose turns are ``intermediate`` events, ``"all"``, or
            ``"all_other"`` (every participant not in ``output_from``). Given either selection, a participant
            in neither is not published; naming only intermediates leaves the other default outputs in place
            (``"all"`` / ``"all_other"`` alone leave no participant as output), as in the reference.
    """

    checkpoint_storage: CheckpointStorage | None
    name: str | None
    description: str | None
    run_store: Store | None
    intermediate_outputs: bool
    output_from: Sequence[Any] | Literal["all"] | None
    intermediate_output_from: Sequence[Any] | Literal["all", "all_other"] | None


class OrchestrationBuilder:
    """The parts every orchestration builder shares: participants, checkpointing, naming and outputs.

    Subclasses implement :meth:`build`; they add their executors to :meth:`_workflow_builder`'s result.
    """

    _RESERVED: tuple[str, ...] = ()  # executor ids the orchestration uses itself
    _MIN_PARTICIPANTS = 1
    _ALLOW_EXECUTORS = False  # whether custom executors may stand among the agents
    _INTERMEDIATE_OUTPUTS = True  # whether participant turns are intermediate events when nothing is selected

    def __init__(
        self,
        participants: Sequence[SupportsAgentRun | Executor],
        **options: Unpack[OrchestrationOptions],
    ) -> None:
        unknown = set(options) - set(OrchestrationOptions.__annotations__)
        if unknown:
            raise TypeError(
                f"{type(self).__name__} got unexpected keyword argument(s) {sorted(unknown)}; "
                f"it takes {sorted(OrchestrationOptions.__annotations__)}."
            )
        min_participants = self._MIN_PARTICIPANTS
        allow_executors = self._ALLOW_EXECUTORS
        # Checked at run time too: notebooks pass whatever is at hand.
        given = cast(object, participants)
        if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
            raise TypeError(f"participants must be a list of agents, got {type(participants).__name__}.")
        kind = type(self).__name__
        if len(participants) < min_participants:
            raise ValueError(f"{kind} needs at least {min_participants} participant(s), got {len(participants)}.")
        names = [
            p.id
            if allow_executors and isinstance(p, Executor)
            else participant_name(p, alternative=" or an Executor taking the conversation" if allow_executors else "")
            for p in participants
        ]
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise ValueError(f"Two participants of {kind} are named {n!r}; participant names must be unique.")
            if n in self._RESERVED:
                raise ValueError(
                    f"A participant of {kind} is named {n!r}, which the orchestration uses for its own executor; "
                    "rename the agent."
                )
            seen.add(n)
        self.participants: list[Any] = list(participants)
        self.participant_names = names
        self._checkpoint_storage = options.get("checkpoint_storage")
        self._name = options.get("name")
        self._description = options.get("description")
        self._run_store = options.get("run_store")
        self._intermediate_outputs = options.get("intermediate_outputs", self._INTERMEDIATE_OUTPUTS)
        self._output_from = options.get("output_from")
        self._intermediate_output_from = options.get("intermediate_output_from")
        if isinstance(self._output_from, str) and self._output_from != "all":
            raise ValueError(f"output_from must be 'all' or a list of participants, got {self._output_from!r}.")
        if isinstance(self._intermediate_output_from, str) and self._intermediate_output_from not in (
            "all",
            "all_other",
        ):
            raise ValueError(
                "intermediate_output_from must be 'all', 'all_other' or a list of participants, "
                f"got {self._intermediate_output_from!r}."
            )
        self._review: set[str] = set()

    def with_request_info(self: _B, *, agents: Sequence[Any] | None = None) -> _B:
        """Pause after each turn of ``agents`` (default: every agent) for a person to approve or give feedback.

        The run stops with a :class:`ParticipantReviewRequest`; answer ``True`` to pass the turn on, or
        feedback text that the agent answers again (see :class:`ParticipantReviewResponse`).
        """
        names = (
            [n for n, p in zip(self.participant_names, self.participants, strict=True) if not isinstance(p, Executor)]
            if agents is None
            else [self.participant_by_name(a) for a in agents]
        )
        self._review = set(names)
        return self

    def _participant(self, agent: SupportsAgentRun, **kwargs: Any) -> ParticipantExecutor:
        """The executor for one participant agent, with review switched on when requested."""
        name = participant_name(agent)
        return ParticipantExecutor(agent, review=name in self._review, **kwargs)

    def with_checkpointing(self: _B, checkpoint_storage: CheckpointStorage) -> _B:
        """Write a checkpoint after every superstep into ``checkpoint_storage`` (resumable in any process)."""
        self._checkpoint_storage = checkpoint_storage
        return self

    def participant_descriptions(self) -> dict[str, str]:
        """Participant names mapped to their agents' descriptions (empty when an agent has none)."""
        return {
            n: getattr(p, "description", None) or ""
            for n, p in zip(self.participant_names, self.participants, strict=True)
        }

    def participant_by_name(self, agent_or_name: Any) -> str:
        """The participant name for an agent object or a name, checking it belongs to this orchestration."""
        name = agent_or_name if isinstance(agent_or_name, str) else participant_name(agent_or_name)
        if name not in self.participant_names:
            raise ValueError(f"{name!r} is not a participant of this {type(self).__name__}: {self.participant_names}.")
        if not isinstance(agent_or_name, str):
            index = self.participant_names.index(name)
            if self.participants[index] is not agent_or_name:
                raise ValueError(f"The agent named {name!r} is not the participant object given to the builder.")
        return name

    def _workflow_builder(
        self,
        start: Executor,
        *,
        output_from: Sequence[Executor],
        participants: Sequence[Executor],
        max_iterations: int,
        always_output: Sequence[Executor] = (),
    ) -> WorkflowBuilder:
        outputs, intermediates = self._output_selection(output_from, participants, always_output)
        return WorkflowBuilder(
            start,
            checkpoint_storage=self._checkpoint_storage,
            max_iterations=max_iterations,
            name=self._name,
            description=self._description,
            output_from=outputs,
            intermediate_output_from=intermediates,
            run_store=self._run_store,
        )

    def _output_selection(
        self, default: Sequence[Executor], participants: Sequence[Executor], always: Sequence[Executor] = ()
    ) -> tuple[list[Executor], list[Executor] | None]:
        """Which executors publish outputs and which intermediate outputs (see :class:`OrchestrationOptions`).

        ``default`` is the orchestration's output when nothing is selected; ``always`` (an aggregator) publishes
        whatever is selected. The rules for a selection are the reference's.
        """
        selected_outputs, selected_intermediates = self._output_from, self._intermediate_output_from
        if selected_outputs is None and selected_intermediates is None:
            outputs = [*always, *default]
            if not self._intermediate_outputs:
                return outputs, None
            return outputs, [p for p in participants if p not in outputs]
        if not selected_outputs and not selected_intermediates:
            raise ValueError("output_from and intermediate_output_from cannot both be empty.")
        by_id = {e.id: e for e in participants}

        def pick(selection: Any) -> list[Executor]:
            if selection == "all":
                return list(participants)
            return [
                by_id[item.id if isinstance(item, Executor) else self.participant_by_name(item)] for item in selection
            ]

        if selected_outputs is not None:
            outputs = pick(selected_outputs)
        elif selected_intermediates in ("all", "all_other"):
            outputs = [e for e in default if e.id not in by_id]  # no participant stays an output
        else:
            named = {e.id for e in pick(selected_intermediates)}
            outputs = [e for e in default if e.id not in named]
        chosen = {e.id for e in outputs}
        if selected_intermediates is None:
            intermediates: list[Executor] = []
        elif selected_intermediates == "all_other":
            intermediates = [e for e in participants if e.id not in chosen]
        else:
            intermediates = pick(selected_intermediates)
        overlap = chosen & {e.id for e in intermediates}
        if overlap:
            raise ValueError(f"{sorted(overlap)} cannot be in both output_from and intermediate_output_from.")
        return [*always, *outputs], intermediates

    def build(self) -> Workflow:  # pragma: no cover - every subclass overrides it
        """Build the orchestration as an ordinary :class:`~agentnb.workflows.Workflow`."""
        raise NotImplementedError
