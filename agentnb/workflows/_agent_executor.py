"""Agents as executors: ``AgentExecutor`` runs an agent on the conversation it receives.

An agent placed in a graph directly (``builder.add_edge(writer_agent, reviewer_agent)``) is wrapped in an
``AgentExecutor``. It accepts ``str``, ``Message``, ``list[Message]``, :class:`AgentExecutorRequest`,
:class:`AgentExecutorResponse` (the previous agent's answer, whose full conversation it continues) and a
fan-in ``list[AgentExecutorResponse]``. After its agent answers it sends an
:class:`AgentExecutorResponse` downstream and yields the answer as a workflow output, as the reference does
(every agent in a graph publishes; choose which ones with the builder's ``output_from=`` /
``intermediate_output_from=``, or pass ``output_response=False``).

What it yields follows how the caller runs the workflow: ``workflow.run(...)`` gives one ``AgentResponse``;
``workflow.run(..., stream=True)`` runs the agent streaming and yields every ``AgentResponseUpdate`` instead
(``event.executor_id`` and ``update.author_name`` name the agent), so a reader prints tokens as they come;
:func:`~agentnb.workflows.merge_streamed_outputs` joins them into one reply. The executor sent on downstream
is always the complete response. A tool that needs approval turns into a ``request_info`` event whose
data is the ``function_approval_request`` content; answer it with
``workflow.run(responses={request_id: request.to_function_approval_response(True)})`` (or just ``True``).

Extension point for orchestrations: subclass and override :meth:`AgentExecutor.prepare_messages` (what
the agent sees) or :meth:`AgentExecutor.emit_response` (what is sent on), instead of re-implementing the
agent call, streaming and approval handling.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from .._agents import SupportsAgentRun
from .._approval_driver import ApprovalDriver
from .._conversation import ApprovalGate
from .._types import AgentResponse, AgentResponseUpdate, Content, Message
from ._context import WorkflowContext
from ._events import WorkflowEvent
from ._executor import Executor
from ._handlers import handler, response_handler

__all__ = ["AgentExecutor", "AgentExecutorRequest", "AgentExecutorResponse", "resolve_agent_id"]


def resolve_agent_id(agent: SupportsAgentRun) -> str:
    """The executor id an agent gets in a workflow: its ``name`` when it has one, else its ``id``.

    Example:
        >>> from agentnb import Agent
        >>> from agentnb.local import ScriptedChatClient
        >>> resolve_agent_id(Agent(ScriptedChatClient([]), name="writer"))
        'writer'
    """
    return getattr(agent, "name", None) or agent.id


@dataclass
class AgentExecutorRequest:
    """Messages for an agent executor; with ``should_respond=False`` they are only added to its conversation.

    Example:
        >>> from agentnb import Message
        >>> AgentExecutorRequest([Message("user", ["Draft a haiku"])]).should_respond
        True
    """

    messages: list[Message] = field(default_factory=list)
    should_respond: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"messages": [m.to_dict() for m in self.messages], "should_respond": self.should_respond}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentExecutorRequest:
        """Rebuild from :meth:`to_dict` output."""
        return cls([Message.from_dict(m) for m in data["messages"]], data.get("should_respond", True))


@dataclass
class AgentExecutorResponse:
    """What an agent executor sends on: its agent's response and the whole conversation so far.

    Example:
        >>> from agentnb import AgentResponse
        >>> AgentExecutorResponse("writer", AgentResponse(text="Hi")).agent_response.text
        'Hi'
    """

    executor_id: str
    agent_response: AgentResponse
    full_conversation: list[Message] | None = None

    def with_text(self, text: str) -> AgentExecutorResponse:
        """The same turn with its reply replaced by one assistant message ``text``, keeping the prior conversation.

        A custom executor that rewrites an agent's reply sends this on (rather than a ``str``), so the next agent
        still receives the whole conversation.
        """
        message = Message("assistant", [text])
        turn = len(self.agent_response.messages)
        prior = list(self.full_conversation or [])
        if turn:
            prior = prior[:-turn]
        return AgentExecutorResponse(self.executor_id, AgentResponse(messages=[message]), [*prior, message])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "executor_id": self.executor_id,
            "agent_response": self.agent_response.to_dict(),
            "full_conversation": None
            if self.full_conversation is None
            else [m.to_dict() for m in self.full_conversation],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentExecutorResponse:
        """Rebuild from :meth:`to_dict` output."""
        conversation = data.get("full_conversation")
        return cls(
            data["executor_id"],
            AgentResponse.from_dict(data["agent_response"]),
            None if conversation is None else [Message.from_dict(m) for m in conversation],
        )


AgentCtx = WorkflowContext[AgentExecutorResponse, AgentResponse | AgentResponseUpdate]


class AgentExecutor(Executor):
    """Runs an agent inside a workflow (see the module docstring for what it accepts and emits).

    Args:
        agent: The agent (anything implementing ``SupportsAgentRun``).
        id: The executor id (default: the agent's name, else its id). Give agents a ``name`` (or pass
            ``id``) when checkpoints must resume in another process: ids are part of the graph signature.
        output_response: Yield the agent's answer (its response, or its updates when streaming) as a workflow
            output (the default ``True``, as the reference); ``False`` only sends it on.
        context_mode: What an :class:`AgentExecutorResponse` from the previous agent adds to the conversation:
            ``"full"`` (default: the whole conversation so far), ``"last_agent"`` (that agent's response only)
            or ``"custom"`` (what ``context_filter`` keeps of the whole conversation).
        context_filter: ``(conversation) -> messages``, required with ``context_mode="custom"``.

    Example:
        >>> from agentnb import Agent
        >>> from agentnb.local import ScriptedChatClient
        >>> from agentnb.workflows import WorkflowBuilder
        >>> writer = Agent(ScriptedChatClient(["A draft."]), name="writer")
        >>> workflow = WorkflowBuilder(start_executor=writer).build()
        >>> (await workflow.run("Write something")).get_outputs()[0].text  # doctest: +SKIP
        'A draft.'
    """

    def __init__(
        self,
        agent: SupportsAgentRun,
        *,
        id: str | None = None,
        output_response: bool = True,
        context_mode: Literal["full", "last_agent", "custom"] | None = None,
        context_filter: Callable[[list[Message]], list[Message]] | None = None,
    ) -> None:
        super().__init__(id or resolve_agent_id(agent))
        mode = context_mode or "full"
        if mode not in ("full", "last_agent", "custom"):
            raise ValueError(f"context_mode must be one of 'full', 'last_agent' or 'custom', got {context_mode!r}.")
        if mode == "custom" and context_filter is None:
            raise ValueError("context_filter must be provided when context_mode is 'custom'.")
        self.agent = agent
        self.output_response = output_response
        self.context_mode = mode
        self.context_filter = context_filter
        self._conversation: list[Message] = []
        self._approvals = ApprovalGate()

    # -- inputs -------------------------------------------------------------------------------------------
    @handler
    async def from_str(self, text: str, ctx: AgentCtx) -> None:
        """A user message as plain text."""
        self._conversation.append(Message("user", [text]))
        await self._respond(ctx)

    @handler
    async def from_message(self, message: Message, ctx: AgentCtx) -> None:
        """One message."""
        self._conversation.append(message)
        await self._respond(ctx)

    @handler
    async def from_messages(self, messages: list[Message], ctx: AgentCtx) -> None:
        """Several messages (a replay of this executor's conversation followed by new ones adds only the new)."""
        self._take(messages)
        await self._respond(ctx)

    @handler
    async def from_request(self, request: AgentExecutorRequest, ctx: AgentCtx) -> None:
        """Messages, answered only when ``should_respond`` (a replay of this executor's conversation adds only the
        new ones)."""
        self._take(request.messages)
        if request.should_respond:
            await self._respond(ctx)

    @handler
    async def from_response(self, response: AgentExecutorResponse, ctx: AgentCtx) -> None:
        """The previous agent's answer: continue its conversation as ``context_mode`` says.

        ``"full"`` (default) takes over the whole conversation so far; ``"last_agent"`` adds only that agent's
        response to what this executor holds; ``"custom"`` takes what ``context_filter`` keeps of the whole.
        """
        if response.full_conversation is None or self.context_mode == "last_agent":
            self._conversation.extend(response.agent_response.messages)
        elif self.context_mode == "custom":
            assert self.context_filter is not None  # checked in __init__
            self._conversation = list(self.context_filter(list(response.full_conversation)))
        else:
            self._conversation = list(response.full_conversation)
        await self._respond(ctx)

    @handler
    async def from_responses(self, responses: list[AgentExecutorResponse], ctx: AgentCtx) -> None:
        """Answers of several agents (a fan-in): their new messages are added in order."""
        for response in responses:
            self._conversation.extend(response.agent_response.messages)
        await self._respond(ctx)

    @response_handler
    async def on_approval(self, request: Content, answer: Content, ctx: AgentCtx) -> None:
        """An answer to a tool approval request the agent raised (see :class:`ApprovalGate` for the rule)."""
        await self._take_answer(request, answer, ctx)

    @response_handler
    async def on_approval_bool(self, request: Content, approved: bool, ctx: AgentCtx) -> None:
        """A yes/no answer to a tool approval request."""
        await self._take_answer(request, approved, ctx)

    async def _take_answer(self, request: Content, answer: Content | bool, ctx: AgentCtx) -> None:
        taken = ApprovalGate.as_answer(request, answer)
        if taken is None:  # a wrong answer does not cost the pending approval: say why and ask again
            wrong = cast(Content, answer)  # a bool always answers: only a Content can fail to fit
            await ctx.add_event(WorkflowEvent("warning", ApprovalGate.wrong_answer_warning(self.id, request, wrong)))
            await ask_approval(ctx, request)
            return
        self._conversation.append(Message("user", [taken]))
        if self._approvals.answered(request):
            await self._respond(ctx)

    def _take(self, messages: list[Message]) -> None:
        # A sender that loops back with the whole conversation so far (say, a reviewer adding feedback to
        # response.full_conversation) starts with what this executor holds: keep it once, as the reference does.
        held = self._conversation
        if held and len(messages) >= len(held) and all(a is b or a == b for a, b in zip(held, messages, strict=False)):
            self._conversation = list(messages)
        else:
            held.extend(messages)

    # -- extension points ---------------------------------------------------------------------------------
    def prepare_messages(self) -> list[Message]:
        """The messages the agent is run on (default: the whole conversation this executor holds)."""
        return list(self._conversation)

    async def emit_response(self, response: AgentResponse, ctx: AgentCtx) -> None:
        """Send the complete response on (when this executor has edges).

        In a run that is not streamed the response is also yielded as output (see ``output_response``); a
        streamed run has already yielded it update by update.
        """
        if ctx.outgoing_executor_ids:
            await ctx.send_message(AgentExecutorResponse(self.id, response, list(self._conversation)))
        if self.output_response and not ctx.is_streaming:
            await ctx.yield_output(response)

    # -- the agent call ---------------------------------------------------------------------------------
    async def _respond(self, ctx: AgentCtx) -> None:
        response, requests = await run_agent_turn(
            self, self.agent, self.prepare_messages(), ctx, output=self.output_response
        )
        self._conversation.extend(response.messages)
        if requests:
            # The agent paused for approval: ask outside the workflow, continue in on_approval.
            for request in self._approvals.forward(requests):
                await ask_approval(ctx, request)
            return
        await self.emit_response(response, ctx)

    # -- state --------------------------------------------------------------------------------------------
    def reset(self) -> None:
        self._conversation = []
        self._approvals.reset()

    def on_checkpoint_save(self) -> dict[str, Any]:
        return {"conversation": list(self._conversation), "awaiting": list(self._approvals.awaiting)}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self._conversation = list(state.get("conversation", []))
        self._approvals = ApprovalGate(list(state.get("awaiting", [])))

    @property
    def conversation(self) -> list[Message]:
        """The conversation this executor holds (its input plus its agent's answers)."""
        return list(self._conversation)


async def run_agent_turn(
    executor: Executor,
    agent: SupportsAgentRun,
    messages: list[Message],
    ctx: Any,
    *,
    output: bool = True,
    options: Mapping[str, Any] | None = None,
) -> tuple[AgentResponse, list[Content]]:
    """Run one agent turn for a workflow executor: the response and the approval requests it waits on.

    The turn runs on the core's approval driver, as every front end's does; the executor holds the
    conversation (it is checkpointed with the executor), so the driver runs without a session. A streamed
    workflow yields the agent's updates as they come (see :func:`yield_update`).
    """
    given = ctx.agent_run_kwargs()  # Workflow.run's function_invocation_kwargs / client_kwargs for this executor
    if given:
        options = {**(options or {}), **given}
    driver = ApprovalDriver(agent, options=options)
    async for event in driver.run(messages, stream=bool(ctx.is_streaming)):
        if isinstance(event, AgentResponseUpdate):
            await yield_update(executor, event, ctx, output=output)
    response = driver.response
    assert response is not None  # the driver reports every turn's response
    return response, list(driver.pending)


async def ask_approval(ctx: Any, request: Content) -> None:
    """Ask the workflow's caller to approve a tool call, under the approval request's own id (as the reference).

    The caller's ``function_approval_response`` then answers by the id it carries. When another executor's
    request already holds that id, the request gets a fresh one.
    """
    try:
        await ctx.request_info(request_data=request, response_type=Content | bool, request_id=request.id or None)
    except ValueError:  # the one ValueError request_info raises: that id is pending already
        await ctx.request_info(request_data=request, response_type=Content | bool)


async def yield_update(executor: Executor, update: AgentResponseUpdate, ctx: Any, *, output: bool = True) -> None:
    """Yield one streamed update of an agent executor as workflow output, the way the reference does.

    The update names its author (the agent's name, else the executor id) so readers of interleaved streams can
    tell agents apart. An update asking for approval is not yielded: it becomes a ``request_info`` event once
    the agent's turn ends, and one payload must not arrive as two kinds of event.
    """
    if not output or update.user_input_requests:
        return
    if update.author_name is None:
        update = copy.copy(update)
        update.author_name = getattr(getattr(executor, "agent", None), "name", None) or executor.id
    await ctx.yield_output(update)
