"""``workflow.as_agent()``: a workflow behind the agent interface.

The agent's input messages become the workflow input (``list[Message]``, a ``Message`` or their text,
whichever the start executor accepts); the workflow's ``output`` events become the agent's answer, as in
the reference: an ``AgentResponse`` output contributes its messages, an ``AgentResponseUpdate`` (a streamed
agent in the workflow) itself, a ``Message`` or ``list[Message]`` themselves, anything else its text. So an
orchestration whose output is its last agent's reply answers with that reply only. ``intermediate`` events
(and the deprecated ``data`` ones) are forwarded the same way, as the release does; other events (status,
orchestration bookkeeping) stay inside. Not streamed, the messages of what was yielded are kept as they are
(``additional_properties`` included). Each message names its author (the agent, else the executor). An
inner agent's tool approval arrives as that agent's own ``function_approval_request`` (the tool's name and
arguments in ``function_call``); any other ``request_info`` request becomes a ``function_approval_request``
content whose ``id`` is the request id. Answer either on the next run with
``request.to_function_approval_response(True)`` (the response is ``True``/``False``, or the approval content
itself when the request expects a content), or with ``Content.from_function_result(call_id=request_id,
result=value)`` for any other value.

``run(..., session=session)`` keeps the conversation across turns as an agent does: without a history
provider that loads messages, the first such run adds an ``InMemoryHistoryProvider`` to ``context_providers``
(as the reference does), and each turn's workflow input is the earlier turns followed by the new messages.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, cast

from .._agents import BaseAgent
from .._json import is_json_array
from .._sessions import ContextProvider, HistoryProvider, InMemoryHistoryProvider, SessionContext
from .._types import (
    AgentResponse,
    AgentResponseUpdate,
    Content,
    Message,
    ResponseStream,
    add_usage_details,
    normalize_messages,
)
from ._events import WorkflowEvent, WorkflowRunResult, safe_encode
from ._typing_utils import describe, is_compatible, matches

if TYPE_CHECKING:
    from .._sessions import AgentSession
    from ._checkpoints import CheckpointStorage
    from ._invocation_kwargs import WorkflowInvocationKwargs
    from ._workflow import Workflow

__all__ = ["WorkflowAgent"]


class _RunOptions(NamedTuple):
    """What one ``WorkflowAgent.run`` passes on to ``Workflow.run`` besides the input."""

    checkpoint_id: str | None
    checkpoint_storage: CheckpointStorage | None
    function_invocation_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None
    client_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None

    def invocation_kwargs(self) -> dict[str, Any]:
        """The kwargs for the workflow's agents that were given (a functional workflow keeps any it is passed)."""
        given = {"function_invocation_kwargs": self.function_invocation_kwargs, "client_kwargs": self.client_kwargs}
        return {name: value for name, value in given.items() if value is not None}


#: The workflow events an agent's caller sees: outputs, progress (``data`` is its deprecated name) and requests.
_FORWARDED = frozenset({"output", "intermediate", "data", "request_info"})


@dataclass
class _Turn:
    """One run of the agent: its context providers, the session and the workflow input."""

    providers: list[ContextProvider]
    session: AgentSession | None
    context: SessionContext
    responses: dict[str, Any]
    message: Any = None

    def state(self, provider: ContextProvider) -> dict[str, Any]:
        """The provider's state in the session (a throwaway dict without a session)."""
        return self.session.state.setdefault(provider.source_id, {}) if self.session is not None else {}


#: What a workflow's start executor must accept to run as an agent (one is enough).
_AGENT_INPUTS: tuple[Any, ...] = (list[Message], Message, str)


class WorkflowAgent(BaseAgent):
    """An agent that runs a workflow for each turn (create it with ``workflow.as_agent()``).

    Example:
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor
        >>> @executor(id="echo")
        ... async def echo(text: str, ctx: WorkflowContext[str, str]) -> None:
        ...     await ctx.yield_output(f"echo: {text}")
        >>> agent = WorkflowBuilder(start_executor=echo).build().as_agent(name="echoer")
        >>> (await agent.run("hi")).text  # doctest: +SKIP
        'echo: hi'
    """

    #: The function name of the ``function_call`` a ``request_info`` request is shown as.
    REQUEST_INFO_FUNCTION_NAME: ClassVar[str] = "request_info"

    def __init__(
        self,
        workflow: Workflow,
        *,
        name: str | None = None,
        description: str | None = None,
        id: str | None = None,
        context_providers: Sequence[ContextProvider] | ContextProvider | None = None,
    ) -> None:
        self._check_input(workflow)
        super().__init__(
            id=id or f"workflow:{workflow.name}",
            name=name or workflow.name,
            description=description if description is not None else workflow.description,
            context_providers=context_providers,
        )
        self.workflow = workflow

    def run(  # type: ignore[override]
        self,
        messages: Any = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        checkpoint_id: str | None = None,
        checkpoint_storage: CheckpointStorage | None = None,
        function_invocation_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
        client_kwargs: WorkflowInvocationKwargs | Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the workflow on ``messages``; ``stream=True`` returns a ``ResponseStream`` of updates.

        ``checkpoint_id`` resumes the workflow from that checkpoint instead (``messages`` may then answer its
        pending requests); ``checkpoint_storage`` is where checkpoints are loaded from and written to for this
        run. ``function_invocation_kwargs`` / ``client_kwargs`` go to the workflow's agents as ``Workflow.run``
        routes them (shared, or by executor id).
        """
        options = _RunOptions(checkpoint_id, checkpoint_storage, function_invocation_kwargs, client_kwargs)
        if not stream:
            return self._respond(messages, session=session, options=options)
        return ResponseStream[AgentResponseUpdate, AgentResponse](
            self._updates(messages, session=session, options=options), self._finalize
        )

    @staticmethod
    def merge_updates(updates: Sequence[AgentResponseUpdate], response_id: str) -> AgentResponse:
        """Join the updates of several agents' streams into one response, each response's messages kept together.

        Updates are grouped by ``response_id`` (a tool result without one joins the response that made its call),
        within a response by ``message_id`` in ``created_at`` order; updates of no response come last. Usage is
        summed, the latest ``created_at`` kept and ``additional_properties`` merged (later groups win).
        """
        call_owner: dict[str, str] = {}
        for update in updates:
            if update.response_id:
                for content in update.contents:
                    if content.type == "function_call" and content.call_id:
                        call_owner[content.call_id] = update.response_id
        groups: dict[str, dict[str | None, list[AgentResponseUpdate]]] = {}
        unowned: list[AgentResponseUpdate] = []
        for update in updates:
            owner = update.response_id or next(
                (
                    call_owner[c.call_id]
                    for c in update.contents
                    if c.type == "function_result" and c.call_id and c.call_id in call_owner
                ),
                None,
            )
            if owner is None:
                unowned.append(update)
            else:
                groups.setdefault(owner, {}).setdefault(update.message_id or None, []).append(update)
        parts: list[AgentResponse] = []
        for by_message in groups.values():
            # Updates without a message id form one message after the others (None sorts as the last key).
            pieces = [AgentResponse.from_updates(u) for k, u in by_message.items() if k is not None]
            if None in by_message:
                pieces.append(AgentResponse.from_updates(by_message[None]))
            pieces.sort(key=lambda r: _timestamp(r.created_at))
            parts.extend(pieces)
        if unowned:
            parts.append(AgentResponse.from_updates(unowned))
        merged = AgentResponse(messages=[m for r in parts for m in r.messages], response_id=response_id)
        properties: dict[str, Any] = {}
        for part in parts:
            merged.usage_details = add_usage_details(merged.usage_details, part.usage_details)
            if part.created_at and (
                not merged.created_at or _timestamp(part.created_at) > _timestamp(merged.created_at)
            ):
                merged.created_at = part.created_at
            properties.update(part.additional_properties)
        if properties:
            merged.additional_properties.update(properties)
        return merged

    def _check_input(self, workflow: Workflow) -> None:
        # Refused when made, as in the reference: the start executor must take what an agent is given.
        start = workflow.get_start_executor()
        if not any(is_compatible(t, accepted) for t in _AGENT_INPUTS for accepted in start.input_types):
            raise ValueError(
                f"Workflow's start executor cannot handle list[Message], Message or str: {start.id!r} of workflow "
                f"{workflow.name!r} accepts {' | '.join(describe(t) for t in start.input_types)}, so the workflow "
                "cannot run as an agent."
            )

    def _finalize(self, updates: list[AgentResponseUpdate]) -> AgentResponse:
        response = AgentResponse.from_updates(updates)
        response.agent_id = self.id
        return response

    def _responses_from(self, messages: list[Message]) -> tuple[dict[str, Any], list[Message]]:
        pending: dict[str | None, WorkflowEvent] = {}
        for event in self.workflow.pending_requests:
            pending[event.request_id] = event
            if isinstance(event.data, Content) and event.data.type == "function_approval_request":
                pending.setdefault(event.data.id, event)  # answered by the approval request's own id
        responses: dict[str, Any] = {}
        rest: list[Message] = []
        for message in messages:
            kept: list[Content] = []
            for content in message.contents:
                if content.type == "function_approval_response" and content.id in pending:
                    request = pending[content.id]
                    answer = content if matches(content, request.response_type) else content.approved
                    responses[request.request_id or ""] = answer
                elif content.type == "function_result" and content.call_id in pending:
                    responses[pending[content.call_id].request_id or ""] = content.result
                else:
                    kept.append(content)
            if kept:
                rest.append(Message(message.role, kept, author_name=message.author_name))
        return responses, rest

    def _input_for(self, messages: list[Message]) -> Any:
        start = self.workflow.get_start_executor()
        candidates: list[Any] = [messages]
        if len(messages) == 1:
            candidates.append(messages[0])
        candidates.append("\n".join(m.text for m in messages))
        for candidate in candidates:
            if start.can_handle(candidate):
                return candidate
        raise TypeError(
            f"The start executor {start.id!r} of workflow {self.workflow.name!r} accepts none of list[Message], "
            "Message or str, so the workflow cannot run as an agent."
        )

    def _providers_for(self, session: AgentSession | None) -> list[ContextProvider]:
        # As the reference does: the first run with a session and no history provider that loads messages adds an
        # in-memory one to the agent, which keeps each session's conversation in that session's state.
        providers = self.context_providers
        if session is not None and not any(isinstance(p, HistoryProvider) and p.load_messages for p in providers):
            providers.append(InMemoryHistoryProvider())
        return providers

    async def _begin(self, messages: Any, session: AgentSession | None, options: _RunOptions) -> _Turn:
        normalized = normalize_messages(messages)
        responses, rest = self._responses_from(normalized)
        turn = _Turn(
            self._providers_for(session),
            session,
            SessionContext(
                session_id=session.session_id if session is not None else None,
                service_session_id=session.service_session_id if session is not None else None,
                input_messages=normalized,
            ),
            responses,
        )
        for provider in turn.providers:
            await provider.before_run(agent=self, session=session, context=turn.context, state=turn.state(provider))
        # Earlier turns (history providers, other context) come ahead of this turn's input, as for an agent.
        if not responses and options.checkpoint_id is None:
            turn.message = self._input_for([*turn.context.get_messages(), *rest])
        return turn

    async def _end(self, turn: _Turn, response: AgentResponse) -> None:
        if turn.providers:
            turn.context.response = response
            for provider in reversed(turn.providers):
                await provider.after_run(
                    agent=self, session=turn.session, context=turn.context, state=turn.state(provider)
                )

    async def _updates(
        self, messages: Any, *, session: AgentSession | None = None, options: _RunOptions
    ) -> AsyncIterator[AgentResponseUpdate]:
        # Streamed, the workflow's agents yield updates that go out as they come (as in the reference).
        turn = await self._begin(messages, session, options)
        produced: list[AgentResponseUpdate] = []
        stream_run = cast("Callable[..., AsyncIterator[WorkflowEvent]]", self.workflow.run)  # kwargs only when given
        events = stream_run(
            turn.message,
            stream=True,
            responses=turn.responses or None,
            checkpoint_id=options.checkpoint_id,
            checkpoint_storage=options.checkpoint_storage,
            **options.invocation_kwargs(),
        )
        async for event in events:
            if event.type in _FORWARDED:
                for update in self._convert(event):
                    produced.append(update)
                    yield update
        await self._end(turn, self._finalize(produced))

    async def _respond(
        self, messages: Any, *, session: AgentSession | None = None, options: _RunOptions
    ) -> AgentResponse:
        # Not streamed, each agent yields its whole response, whose messages are kept as they are.
        turn = await self._begin(messages, session, options)
        run = cast("Callable[..., Awaitable[WorkflowRunResult]]", self.workflow.run)  # kwargs only when given
        result = await run(
            turn.message,
            responses=turn.responses or None,
            checkpoint_id=options.checkpoint_id,
            checkpoint_storage=options.checkpoint_storage,
            **options.invocation_kwargs(),
        )
        response = AgentResponse(response_id=uuid.uuid4().hex, agent_id=self.id)
        for event in result:
            if event.type not in _FORWARDED:
                continue
            data: Any = event.data
            if isinstance(data, AgentResponse):
                response.usage_details = add_usage_details(response.usage_details, data.usage_details)
            for message in self._as_messages(event):
                last = response.messages[-1] if response.messages else None
                if isinstance(data, AgentResponseUpdate) and last is not None and last.message_id == message.message_id:
                    last.contents.extend(message.contents)  # pieces of one streamed message join
                else:
                    response.messages.append(message)
        await self._end(turn, response)
        return response

    def _convert(self, event: WorkflowEvent) -> list[AgentResponseUpdate]:
        """The agent updates one forwarded workflow event contributes (outputs and progress as they are)."""
        if event.type != "request_info":
            return self._as_updates(event.data, event.executor_id)
        return [self._update([self._request_content(event)], "assistant", self.name, None, event)]

    def _as_messages(self, event: WorkflowEvent) -> list[Message]:
        """The messages one forwarded workflow event contributes to a response that is not streamed."""
        if event.type == "request_info":
            return [Message("assistant", [self._request_content(event)], author_name=self.name)]
        data: Any = event.data
        author = event.executor_id or self.name or self.id
        if isinstance(data, AgentResponse):
            messages = list(data.messages)
        elif isinstance(data, Message):
            messages = [data]
        elif is_json_array(data) and data and all(isinstance(m, Message) for m in data):
            messages = list(cast("list[Message]", data))
        else:
            return [
                Message(u.role or "assistant", list(u.contents), author_name=u.author_name, message_id=u.message_id)
                for u in self._as_updates(data, event.executor_id)
            ]
        return [m if m.author_name else _authored(m, author) for m in messages]

    def _request_content(self, event: WorkflowEvent) -> Content:
        if isinstance(event.data, Content) and event.data.type == "function_approval_request":
            # An inner agent's tool approval: shown as itself (tool name and arguments), as the reference does.
            return event.data
        call = Content.from_function_call(
            event.request_id or "",
            self.REQUEST_INFO_FUNCTION_NAME,
            {"executor_id": event.executor_id, "data": safe_encode(event.data)},
        )
        return Content.from_function_approval_request(event.request_id or "", call)

    def _as_updates(self, data: Any, executor_id: str | None) -> list[AgentResponseUpdate]:
        author = executor_id or self.name
        if isinstance(data, AgentResponseUpdate):
            update = self._update(data.contents, data.role, data.author_name or author, None, data)
            update.message_id = data.message_id  # pieces of one streamed message keep joining
            return [update]
        if isinstance(data, AgentResponse):
            messages = data.messages
        elif isinstance(data, Message):
            messages = [data]
        elif is_json_array(data) and data and all(isinstance(m, Message) for m in data):
            messages = cast("list[Message]", data)
        elif isinstance(data, Content):
            return [self._update([data], "assistant", author, None, data)]
        else:
            text = data if isinstance(data, str) else getattr(data, "text", None) or str(data)
            return [self._update([Content.from_text(text)], "assistant", author, None, data)]
        return [self._update(m.contents, m.role, m.author_name or author, m.message_id, m) for m in messages]

    def _update(
        self, contents: list[Content], role: Any, author: str | None, message_id: str | None, raw: Any = None
    ) -> AgentResponseUpdate:
        return AgentResponseUpdate(
            contents=list(contents),
            role=role,
            author_name=author,
            agent_id=self.id,
            message_id=message_id or uuid.uuid4().hex,
            raw_representation=raw,
        )


def _timestamp(value: float | str | None) -> tuple[int, float]:
    """A sort key for ``created_at`` (seconds, or an ISO text): unreadable ones after readable, missing ones last."""
    if value is None or value == "":
        return (2, 0.0)
    if isinstance(value, (int, float)):
        return (0, float(value))
    try:
        return (0, datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return (1, 0.0)


def _authored(message: Message, author: str) -> Message:
    """A copy of ``message`` naming its author (the executor that yielded it); the original stays as it was."""
    named = copy.copy(message)
    named.author_name = author
    return named
