"""Message injection: say something to an agent while it is working, without starting another run.

:func:`enqueue_messages` puts messages in a session's queue (from a notebook cell, a tool, another task
or thread); :class:`MessageInjectionMiddleware` drains the queue into the next model call of that session.
When a model call ends without tool calls while messages are queued, it calls the model once more with
them, so a message sent during the last tool call still reaches this run's answer. The injected messages
are part of the call's response, so the history keeps them where the model saw them.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from .._middleware import ChatContext, ChatMiddleware
from .._types import (
    INJECTED_INPUT_KEY,
    ChatResponse,
    ChatResponseUpdate,
    Message,
    MessagesLike,
    ResponseStream,
    add_usage_details,
    normalize_messages,
)
from ..exceptions import SessionError

if TYPE_CHECKING:
    from .._sessions import AgentSession

__all__ = ["MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY", "MessageInjectionMiddleware", "enqueue_messages"]

MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY = "message_injection.pending_messages"
_LOCK = threading.Lock()  # enqueue may come from another thread (a widget callback, a worker)


def enqueue_messages(session: AgentSession, messages: MessagesLike) -> None:
    """Queue ``messages`` (a string, Content, Message or a list) for the next model call on ``session``.

    Example:
        ```python
        from agentnb import AgentSession
        from agentnb.harness import enqueue_messages

        session = AgentSession()
        enqueue_messages(session, "Also check the weekend.")
        ```
    """
    pending = normalize_messages(messages)
    if not pending:
        return
    with _LOCK:
        queue = session.state.setdefault(MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY, [])
        cast("list[Message]", queue).extend(pending)


def _drain(session: AgentSession) -> list[Message]:
    with _LOCK:
        queue = cast("list[Message]", session.state.get(MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY) or [])
        drained = list(queue)
        queue.clear()
    for message in drained:  # kept with the response for the history; not part of the answer's text
        message.additional_properties[INJECTED_INPUT_KEY] = True
    return drained


def _has_pending(session: AgentSession) -> bool:
    with _LOCK:
        return bool(session.state.get(MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY))


def _asks_for_tools(response: ChatResponse) -> bool:
    return any(c.type in ("function_call", "function_approval_request") for m in response.messages for c in m.contents)


def _combined(messages: list[Message], responses: list[ChatResponse]) -> ChatResponse:
    last = responses[-1]
    usage = None
    for r in responses:
        usage = add_usage_details(usage, r.usage_details)
    return ChatResponse(
        messages=messages,
        response_id=last.response_id,
        conversation_id=last.conversation_id,
        model_id=last.model_id,
        created_at=last.created_at,
        finish_reason=last.finish_reason,
        usage_details=usage,
        additional_properties=last.additional_properties,
        raw_representation=last.raw_representation,
    )


class MessageInjectionMiddleware(ChatMiddleware):
    """Drain a session's queued messages into its model calls (a no-op when nothing is queued).

    The queue lives in the session, so a model call outside one is refused with a
    :class:`~agentnb.exceptions.SessionError` rather than silently dropping what was queued.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.harness import MessageInjectionMiddleware, enqueue_messages
        from agentnb.local import ScriptedChatClient

        agent = Agent(ScriptedChatClient(["Noted both."]), middleware=[MessageInjectionMiddleware()])
        session = agent.create_session()
        enqueue_messages(session, "And one more thing.")
        await agent.run("First thing.", session=session)
        ```
    """

    def enqueue_messages(self, session: AgentSession, messages: MessagesLike) -> None:
        """Queue ``messages`` for the next model call on ``session``."""
        enqueue_messages(session, messages)

    def get_pending_messages(self, session: AgentSession) -> list[Message]:
        """A copy of what is queued for ``session``."""
        with _LOCK:
            return list(cast("list[Message]", session.state.get(MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY) or []))

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        session = context.session
        if session is None:
            raise SessionError(
                "MessageInjectionMiddleware requires an AgentSession. Pass session=... when running the agent "
                "(e.g. session=agent.create_session())."
            )
        if context.stream:
            base = list(context.messages)
            collected: list[Message] = []
            responses: list[ChatResponse] = []

            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                sent = base
                while True:
                    queued = _drain(session)
                    for message in queued:
                        yield ChatResponseUpdate(contents=list(message.contents), role=message.role)
                    context.messages = [*sent, *queued]
                    context.result = None
                    await call_next()
                    stream = cast("ResponseStream[ChatResponseUpdate, ChatResponse]", context.result)
                    async for update in stream:
                        yield update
                    response = await stream.get_final_response()
                    collected.extend(queued)
                    collected.extend(response.messages)
                    responses.append(response)
                    if _asks_for_tools(response) or not _has_pending(session):
                        return
                    sent = [*context.messages, *response.messages]

            def final(_updates: Any) -> ChatResponse:
                return _combined(collected, responses) if responses else ChatResponse(messages=collected)

            context.result = ResponseStream(updates(), final)
            return
        collected, responses = [], []
        sent = list(context.messages)
        while True:
            queued = _drain(session)
            context.messages = [*sent, *queued]
            context.result = None
            await call_next()
            result: object = context.result
            if not isinstance(result, ChatResponse):
                raise TypeError(f"MessageInjectionMiddleware expected a ChatResponse, got {type(result).__name__}")
            response = cast("ChatResponse[Any]", result)
            collected.extend(queued)
            collected.extend(response.messages)
            responses.append(response)
            if _asks_for_tools(response) or not _has_pending(session):
                break
            sent = [*context.messages, *response.messages]
        if len(responses) > 1 or collected != response.messages:
            context.result = _combined(collected, responses)
