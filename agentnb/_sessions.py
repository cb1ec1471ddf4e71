"""Sessions and context providers: the state that makes single turns into a conversation.

An :class:`AgentSession` is plain data (an id and a ``state`` dict) that serializes to JSON, so a
conversation — including a tool call waiting for approval — survives a kernel restart. Context providers
add to each run (history, memories, instructions, tools) before it starts and see its result after.
"""

from __future__ import annotations

import copy
import uuid
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Collection, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, cast

from ._middleware import split_middleware
from ._serialization import decode, encode
from ._types import Message
from .exceptions import MiddlewareError, SessionError

if TYPE_CHECKING:
    from ._types import AgentResponse

__all__ = [
    "AgentSession",
    "ContextProvider",
    "HistoryProvider",
    "InMemoryHistoryProvider",
    "SessionContext",
]


class AgentSession:
    """One conversation's identity and state; pass it to ``agent.run`` to continue the conversation.

    Args:
        session_id: A stable id (a UUID by default).
        service_session_id: The provider's own conversation handle, when the service keeps history.
        state: Per-provider state; values must be JSON-serializable with agentnb's tagged JSON.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient

        agent = Agent(ScriptedChatClient(["Hi Ada!", "Your name is Ada."]))
        session = agent.create_session()
        await agent.run("I'm Ada.", session=session)
        (await agent.run("What's my name?", session=session)).text  # 'Your name is Ada.'
        ```
    """

    def __init__(
        self,
        *,
        session_id: str | None = None,
        service_session_id: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id or str(uuid.uuid4())
        self.service_session_id = service_session_id
        self.state: dict[str, Any] = state if state is not None else {}

    def to_dict(self) -> dict[str, Any]:
        """A snapshot of the session (history and pending approvals included) in agentnb's tagged JSON.

        What agentnb cannot restore follows the reference's rules instead of raising (see ``encode(...,
        lenient=True)``): an object with ``to_dict()`` but no ``from_dict()`` is written as its mapping, a
        non-finite float stays a float, and another unsupported value is left as it is with a ``RuntimeWarning``;
        :class:`~agentnb.FileSessionStore` refuses the last two.
        """
        return {
            "type": "session",
            "session_id": self.session_id,
            "service_session_id": self.service_session_id,
            "state": encode(self.state, lenient=True),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentSession:
        """Restore a session saved with :meth:`to_dict` (a missing ``type`` is accepted, as in the reference).

        Raises:
            SessionError: ``data`` is not a dict with a ``session_id``, or its ``type`` names something else.
        """
        if (
            not isinstance(cast(object, data), dict)
            or data.get("type", "session") not in _SESSION_TYPES
            or "session_id" not in data
        ):
            raise SessionError("Not a saved AgentSession: expected a dict with type 'session' and a session_id.")
        return cls(
            session_id=data["session_id"],
            service_session_id=data.get("service_session_id"),
            state=decode(data.get("state") or {}),
        )

    @property
    def messages(self) -> list[Message]:
        """The conversation as an in-memory history provider keeps it in :attr:`state` (a copy).

        The default provider's history when there is one, else the first other slice an
        :class:`InMemoryHistoryProvider` wrote; empty when the history lives elsewhere (a file, a service):
        ask that provider's ``get_messages``.
        """
        state = self.state
        default = InMemoryHistoryProvider.stored_messages(state.get(InMemoryHistoryProvider.DEFAULT_SOURCE_ID))
        if default is not None:
            return list(default)
        for value in state.values():
            stored = InMemoryHistoryProvider.stored_messages(value)
            if stored is not None:
                return list(stored)
        return []

    def __repr__(self) -> str:
        return f"AgentSession(session_id={self.session_id!r}, messages={len(self.messages)})"


# ``to_dict``'s type tag, and the one agentnb wrote before it used the reference's.
_SESSION_TYPES = ("session", "agent_session")


class PersistenceGate:
    """Holds a run's history writes until a verdict on the run's content releases them, or drops them.

    A content guard (the agent-hooks middleware) sets one on the run's ``AgentContext.persistence_gate``; the
    run's context providers then save (``after_run``) on :meth:`flush`, after the guard has passed the output,
    so denied content is never stored and transformed content is stored as transformed. A nested run (an
    agent used as a tool, or run by a middleware) has a context of its own and saves at once.
    """

    def __init__(self) -> None:
        self._writes: list[Callable[[], Awaitable[None]]] = []
        self._dropped = False

    def hold(self, write: Callable[[], Awaitable[None]]) -> None:
        """Keep ``write`` for :meth:`flush` (nothing, once the gate has dropped what it held)."""
        if not self._dropped:
            self._writes.append(write)

    async def flush(self) -> None:
        """The verdict passed: run the writes held so far, in order."""
        writes, self._writes = self._writes, []
        for write in writes:
            await write()

    def drop(self) -> None:
        """The verdict denied (or the run failed): forget the writes, and any held later."""
        self._writes.clear()
        self._dropped = True


class SessionContext:
    """What context providers read and extend for one run."""

    def __init__(
        self,
        *,
        session_id: str | None = None,
        input_messages: list[Message],
        service_session_id: str | None = None,
        context_messages: dict[str, list[Message]] | None = None,
        instructions: list[str] | None = None,
        tools: list[Any] | None = None,
        middleware: dict[str, list[Any]] | None = None,
        options: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.service_session_id = service_session_id
        self.input_messages = input_messages
        self.context_messages: dict[str, list[Message]] = context_messages if context_messages is not None else {}
        self.instructions: list[str] = instructions if instructions is not None else []
        self.tools: list[Any] = tools if tools is not None else []
        for source_id, items in (middleware or {}).items():
            self.extend_middleware(source_id, items)
        self.options: dict[str, Any] = options if options is not None else {}
        self._response: AgentResponse | None = None
        self.metadata: dict[str, Any] = metadata if metadata is not None else {}

    _middleware: dict[str, list[Any]] | None = None  # made on first use: most runs have none

    @property
    def middleware(self) -> dict[str, list[Any]]:
        """Chat and function middleware providers added for this run, by source id (see extend_middleware)."""
        if self._middleware is None:
            self._middleware = {}
        return self._middleware

    @property
    def has_middleware(self) -> bool:
        """Whether a provider added middleware to this run."""
        return bool(self._middleware)

    @property
    def response(self) -> AgentResponse | None:
        """The run's response, set once the agent has answered (``None`` in ``before_run``).

        Kept in ``_response``, where the reference keeps it, so code written for the reference that sets it
        there works.
        """
        return self._response

    @response.setter
    def response(self, value: AgentResponse | None) -> None:
        self._response = value

    def extend_messages(
        self, source: str | Any, messages: Sequence[Message], *, origin_session_ids: Sequence[str] | None = None
    ) -> None:
        """Add messages (history, retrieved documents, memories) ahead of the input.

        ``source`` is a source id or a provider (its ``source_id`` is used), as in the reference. Each message
        is stored as a copy marked ``additional_properties["_attribution"] = {"source_id": ...}`` (plus
        ``source_type``, the provider's class name, when a provider was passed), so an observer can tell
        added context from the caller's input; the caller's messages are left as they are. A message that
        already carries an attribution keeps it. ``origin_session_ids`` names the other sessions the messages
        came from (memory kept across sessions); they are added to the attribution's ``origin_session_ids``
        (merged with any already there), and the key is absent when none are given.
        """
        source_id = source if isinstance(source, str) else source.source_id
        added: dict[str, Any] = {"source_id": source_id}
        if not isinstance(source, str):
            added["source_type"] = type(source).__name__
        origins = list(dict.fromkeys(origin_session_ids)) if origin_session_ids else None
        stored = self.context_messages.setdefault(source_id, [])
        for message in messages:
            copied = copy.copy(message)
            properties = dict(message.additional_properties)
            existing = properties.get("_attribution")
            if isinstance(existing, dict):
                attribution = dict(cast("dict[str, Any]", existing))
                for key, value in added.items():
                    attribution.setdefault(key, value)
            else:
                attribution = dict(added)
            if origins is not None:
                earlier = attribution.get("origin_session_ids")
                earlier_ids = (
                    [o for o in cast("list[Any]", earlier) if isinstance(o, str)] if isinstance(earlier, list) else []
                )
                attribution["origin_session_ids"] = list(dict.fromkeys([*earlier_ids, *origins]))
            properties["_attribution"] = attribution
            copied.additional_properties = properties
            stored.append(copied)

    def extend_instructions(self, source_id: str, instructions: str | Sequence[str]) -> None:
        """Add instructions for this run."""
        self.instructions.extend([instructions] if isinstance(instructions, str) else instructions)

    def extend_tools(self, source_id: str, tools: Sequence[Any]) -> None:
        """Offer more tools for this run."""
        self.tools.extend(tools)

    def extend_middleware(self, source_id: str, middleware: Any) -> None:
        """Wrap this run's model and tool calls in more middleware (one or a list; chat or function).

        They run inside the agent's and the run's own middleware. Agent middleware cannot be added here: the
        run it would wrap has already started (``MiddlewareError``).
        """
        agent, chat, function = split_middleware(middleware)
        if agent:
            raise MiddlewareError(
                f"Context providers may only add chat or function middleware; {source_id!r} added agent "
                f"middleware {agent[0]!r}, which must be given to the agent or the run instead."
            )
        self.middleware.setdefault(source_id, []).extend([*chat, *function])

    def get_middleware(self) -> list[Any]:
        """The middleware providers added, in the order the providers ran."""
        return list(chain.from_iterable(self.middleware.values()))

    def get_messages(
        self,
        *,
        sources: Collection[str] | None = None,
        exclude_sources: Collection[str] | None = None,
        include_input: bool = False,
        include_response: bool = False,
    ) -> list[Message]:
        """Context messages in provider order (optionally only some sources), then the input and the response.

        Args:
            sources: Only the messages these source ids added.
            exclude_sources: Leave out the messages these source ids added.
            include_input: Append the run's input messages.
            include_response: Append the response's messages (set once the run has answered).
        """
        if sources is None and not exclude_sources:
            out = list(chain.from_iterable(self.context_messages.values()))  # in C: histories can be long
        else:
            out = [
                message
                for source_id, messages in self.context_messages.items()
                if (sources is None or source_id in sources) and not (exclude_sources and source_id in exclude_sources)
                for message in messages
            ]
        if include_input:
            out.extend(self.input_messages)
        if include_response and self.response is not None:
            out.extend(self.response.messages)
        return out


class ContextProvider:
    """Adds context to runs: override ``before_run`` and/or ``after_run``.

    ``state`` is this provider's slice of ``session.state`` (a dict keyed by ``source_id``), so what a
    provider remembers travels with the session.

    Example:
        ```python
        from agentnb import ContextProvider

        class UserFacts(ContextProvider):
            async def before_run(self, *, agent, session, context, state):
                context.extend_instructions(self.source_id, "The user's name is Ada.")
        ```
    """

    def __init__(self, source_id: str | None = None) -> None:
        self.source_id = source_id or type(self).__name__

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        """Called before the model sees the input."""

    async def after_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        """Called after the run with ``context.response`` set."""


class HistoryProvider(ContextProvider):
    """A context provider that loads earlier messages before a run and saves the new ones after it.

    Subclasses implement :meth:`get_messages` and :meth:`save_messages`; the flags choose what is kept, so
    one class serves as the conversation memory (the defaults) or as an audit log (``load_messages=False``).

    Args:
        source_id: The key of this provider's state in the session.
        load_messages: Add stored history to each run.
        store_inputs: Save the caller's input messages.
        store_context_messages: Also save what other context providers added to the run.
        store_context_from: With ``store_context_messages``, only what these source ids added.
        store_outputs: Save the response's messages.
    """

    def __init__(
        self,
        source_id: str | None = None,
        *,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_context_messages: bool = False,
        store_context_from: Collection[str] | None = None,
        store_outputs: bool = True,
    ) -> None:
        super().__init__(source_id)
        self.load_messages = load_messages
        self.store_inputs = store_inputs
        self.store_context_messages = store_context_messages
        self.store_context_from = set(store_context_from) if store_context_from is not None else None
        self.store_outputs = store_outputs

    @abstractmethod
    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        """Return the stored conversation, oldest first."""

    @abstractmethod
    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """Append ``messages`` to the stored conversation."""

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        if self.load_messages:
            # The stored messages themselves, not attributed copies (unlike ``extend_messages``): the history is
            # the conversation, and compaction keeps its marks on these objects from turn to turn.
            history = await self.get_messages(context.session_id, state=state)
            context.context_messages.setdefault(self.source_id, []).extend(history)

    async def after_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        new: list[Message] = []
        if self.store_context_messages:
            if self.store_context_from is not None:
                new.extend(context.get_messages(sources=self.store_context_from))
            else:
                new.extend(context.get_messages(exclude_sources={self.source_id}))
        if self.store_inputs:
            new.extend(context.input_messages)
        if self.store_outputs and context.response is not None:
            new.extend(context.response.messages)
        if new:
            await self.save_messages(context.session_id, new, state=state)


class InMemoryHistoryProvider(HistoryProvider):
    """Keeps the conversation in ``session.state``; the default when a session has no history provider.

    Args:
        source_id: The key of its state in the session (``"in_memory"`` by default).
        skip_excluded: Leave out of each run the messages compaction marked excluded (``_excluded``);
            they stay stored either way.
        **kwargs: The :class:`HistoryProvider` flags.
    """

    DEFAULT_SOURCE_ID = "in_memory"

    def __init__(self, source_id: str | None = None, *, skip_excluded: bool = False, **kwargs: Any) -> None:
        super().__init__(source_id or self.DEFAULT_SOURCE_ID, **kwargs)
        self.skip_excluded = skip_excluded

    @staticmethod
    def stored_messages(state: object) -> list[Message] | None:
        """The messages this provider keeps in ``state`` (its slice of a session's state), ``None`` if not its slice.

        The layout is this provider's own: ``{"messages": [Message, ...]}``.
        """
        if not isinstance(state, dict):
            return None
        messages = cast("dict[str, object]", state).get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, Message) for m in cast("list[object]", messages)):
            return None
        return cast("list[Message]", messages)

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        if state is None:
            return []
        if self.skip_excluded:
            return [m for m in state.get("messages", ()) if not m.additional_properties.get("_excluded", False)]
        return list(state.get("messages", ()))

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if state is not None:
            state.setdefault("messages", []).extend(messages)
