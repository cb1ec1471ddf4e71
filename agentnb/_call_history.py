"""Saving an agent's history after each model call (``require_per_service_call_history_persistence``).

A service that keeps the conversation holds each request and each reply, and nothing the model was never
sent. An agent that keeps history itself stores exactly that when it saves after every model call instead of
once per run: a tool result the run ended on before any model read it is left out.

When the chat client keeps the conversation too (``store=True``, or its ``STORES_BY_DEFAULT``), the history
providers only write (the service holds what the model reads), and each model call's conversation id is
written to the session at once, so a run that fails later still resumes from what the service kept.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._middleware import ChatContext, ChatMiddleware
from ._sessions import AgentSession, HistoryProvider, SessionContext
from ._types import AgentResponse, ChatResponse, ChatResponseUpdate, Message, ResponseStream
from .exceptions import ServiceResponseError

if TYPE_CHECKING:
    from ._agents import Agent

__all__ = ["PerServiceCallHistory", "service_stores_history"]

logger = logging.getLogger(__name__)

FLAG = "require_per_service_call_history_persistence"


def service_stores_history(client: object, options: dict[str, Any]) -> bool:
    """Whether the service keeps this run's conversation: ``store`` when set, else the client's default."""
    store = options.get("store")
    if store is not None:
        return bool(store)
    return getattr(client, "STORES_BY_DEFAULT", False) is True


class PerServiceCallHistory(ChatMiddleware):
    """The innermost chat middleware of a run: saves each model call's share of the history providers.

    A call's share is what was first sent with it (the input, tool results, injected messages) and its reply.
    Saving runs one call behind: a call's share is saved as the next call starts (before the model is asked
    again) or when the run ends, so what the tool loop adds to a reply after it arrives (approval requests)
    is saved with it, and tool results the run ended on, which no model was sent, are never saved.

    Args:
        agent: The agent whose providers save.
        session: The run's session.
        providers: The history providers that save per call.
        context: The run's session context once the providers have loaded (its messages are not new input).
        service_stores_history: The service keeps the conversation (see the module docstring).
    """

    def __init__(
        self,
        *,
        agent: Agent[Any],
        session: AgentSession,
        providers: Sequence[HistoryProvider],
        context: SessionContext,
        service_stores_history: bool,
    ) -> None:
        self._agent = agent
        self._session = session
        self._providers = list(providers)
        self.service_stores_history = service_stores_history
        self._context = context
        # Messages (and their content lists, which compaction's copies share) that are not new input.
        self._known: set[int] = set()
        self._kept: list[Message] = []  # holds what ``_known`` names, so no id is reused during the run
        self._originals = {id(m.contents): m for m in context.input_messages}
        for message in context.get_messages():
            self._know(message)
        self._pending: tuple[list[Message], ChatResponse] | None = None
        self._saved_once = False

    def _know(self, message: Message) -> None:
        self._known.add(id(message))
        self._known.add(id(message.contents))
        self._kept.append(message)

    def _new_input(self, messages: Sequence[Message]) -> list[Message]:
        """What this call sends for the first time; the run's own input messages as the caller gave them."""
        out: list[Message] = []
        for message in messages:
            if id(message) in self._known or id(message.contents) in self._known:
                continue
            original = self._originals.get(id(message.contents))
            if original is None and (message.role == "system" or "_summary_of_group_ids" in _group(message)):
                continue  # the agent's instructions and compaction's summaries are not history
            out.append(original or message)
        return out

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await self.flush()
        sent = self._new_input(context.messages)
        for message in sent:
            self._know(message)
        await call_next()
        result: object = context.result
        if isinstance(result, ResponseStream):
            stream: ResponseStream[ChatResponseUpdate, ChatResponse] = result  # pyright: ignore[reportUnknownVariableType]

            def settled(response: ChatResponse) -> None:
                self._settle(sent, response)

            if not self.service_stores_history:
                stream = stream.with_transform_hook(_without_response_id)
            context.result = stream.with_result_hook(settled)
        elif isinstance(result, ChatResponse):
            self._settle(sent, result)  # pyright: ignore[reportUnknownArgumentType]

    def _settle(self, sent: list[Message], response: ChatResponse[Any]) -> None:
        """Check the reply's conversation id and keep the call's share for the next save."""
        conversation_id = response.conversation_id
        if not self.service_stores_history:
            if conversation_id:
                raise ServiceResponseError(
                    f"{FLAG} cannot be used when the chat client returns a real conversation_id "
                    f"({conversation_id!r}) while it is not storing history (store=False); set store=True to "
                    "let the service keep the conversation."
                )
        elif conversation_id:
            self._session.service_session_id = conversation_id
        else:
            logger.warning(
                "%s is enabled with a chat client that stores history server-side, but the client returned no "
                "conversation_id; cross-turn history may not resume. Set store=False to load and resume from "
                "the HistoryProvider instead.",
                FLAG,
            )
        for message in response.messages:
            self._know(message)
        self._pending = (sent, response)

    async def flush(self) -> None:
        """Save the last model call's share (called before the next call and when the run ends)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        sent, chat = pending
        first, self._saved_once = not self._saved_once, True
        context = SessionContext(
            session_id=self._session.session_id,
            input_messages=sent,
            # What other providers added belongs to the run's first request only.
            context_messages=dict(self._context.context_messages) if first else None,
            options=self._context.options,
        )
        agent = self._agent
        response = AgentResponse.from_chat_response(chat, agent_id=agent.id, author_name=agent.name)
        response.response_id = None  # a model call's id is no conversation handle to resume from
        context.response = response
        for provider in reversed(self._providers):
            state = self._session.state.setdefault(provider.source_id, {})
            await provider.after_run(agent=agent, session=self._session, context=context, state=state)


def _group(message: Message) -> dict[str, Any]:
    group: object = message.additional_properties.get("_group")
    return group if isinstance(group, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _without_response_id(update: ChatResponseUpdate) -> ChatResponseUpdate:
    """A streamed update without the model call's response id (history kept locally resumes from none)."""
    update.response_id = None
    return update
