"""Where a response came from: the agent and session that produced it, and the run's input.

A response waiting for approval is only half a conversation. Front ends (the notebook's live display, the
DevUI) need the agent and the session to send the answers and resume the run, but a response must not keep
an agent alive or carry it into anything it is saved to. So the agent is held through a weak reference, in a
private attribute of the response (never in ``to_dict``), and a session remembers the agent that last ran on
it the same way. The session is held weakly too, except by a response that waits for approval: that
response is the only handle on a session made inline (``session=agent.create_session()``), and without the
session the answers could not be sent. Without a session, the run's own input is kept so the conversation
can be resumed on a fresh one.

Every turn attaches an origin, so it costs one attribute write; objects that take no attributes are
remembered in weak dictionaries instead.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from ._conversation import HAS_CONTROL, tool_kinds

__all__ = ["ResponseOrigin", "attach_origin", "origin_of", "session_origin"]

_ATTRIBUTE = "_agentnb_origin"

# For objects without attributes of their own: keyed weakly by the response / session object itself, so
# nothing here outlives what it describes.
_BY_RESPONSE: weakref.WeakKeyDictionary[Any, ResponseOrigin] = weakref.WeakKeyDictionary()
_BY_SESSION: weakref.WeakKeyDictionary[Any, ResponseOrigin] = weakref.WeakKeyDictionary()


class ResponseOrigin:
    """The agent and session of one run (weakly) and the messages the run was given.

    Args:
        agent: The agent that ran.
        session: The session it ran on (``None``: a run without a session).
        messages: The run's input messages.
    """

    __slots__ = ("_agent", "_held", "_session", "had_session", "messages")

    def __init__(self, agent: Any, session: Any, messages: Sequence[Any], *, hold_session: bool = False) -> None:
        self._agent = weakref.ref(agent)
        self._session = weakref.ref(session) if session is not None else None
        self._held = session if hold_session else None  # a strong reference, for a response that waits
        self.had_session = session is not None
        self.messages: list[Any] = list(messages)

    @property
    def agent(self) -> Any:
        """The agent, or ``None`` once it has been garbage-collected."""
        return self._agent()

    @property
    def session(self) -> Any:
        """The session, or ``None`` for a run without one (or once it has been garbage-collected)."""
        return self._session() if self._session is not None else None

    @property
    def alive(self) -> bool:
        """Whether the run can still be resumed: its agent (and session, if it had one) still exist."""
        return self.agent is not None and (not self.had_session or self.session is not None)


def attach_origin(response: Any, agent: Any, session: Any, messages: Sequence[Any]) -> None:
    """Remember that ``agent`` produced ``response`` on ``session`` from ``messages``."""
    try:
        origin = ResponseOrigin(agent, session, messages)
    except TypeError:  # an agent or session that cannot be weakly referenced: nothing to remember
        return
    if session is not None and _waits(response):
        # The response keeps its session (never the other way round: no cycle, nothing kept once it goes).
        _remember(response, ResponseOrigin(agent, session, messages, hold_session=True), _BY_RESPONSE)
    else:
        _remember(response, origin, _BY_RESPONSE)
    if session is not None:
        _remember(session, origin, _BY_SESSION)


def _waits(response: Any) -> bool:
    """Whether ``response`` holds approval bookkeeping (a request it may wait on); cached per message."""
    messages: Sequence[Any] = getattr(response, "messages", None) or ()
    return any(tool_kinds(m) & HAS_CONTROL for m in messages)


def _remember(obj: Any, origin: ResponseOrigin, fallback: weakref.WeakKeyDictionary[Any, ResponseOrigin]) -> None:
    try:
        setattr(obj, _ATTRIBUTE, origin)
        return
    except (AttributeError, TypeError):  # __slots__, or a built-in type
        pass
    try:
        fallback[obj] = origin
    except TypeError:  # an object that cannot be weakly referenced either: nothing to remember
        return


def _recall(obj: Any, fallback: weakref.WeakKeyDictionary[Any, ResponseOrigin]) -> ResponseOrigin | None:
    found = getattr(obj, _ATTRIBUTE, None)
    if isinstance(found, ResponseOrigin):
        return found
    try:
        return fallback.get(obj)
    except TypeError:
        return None


def origin_of(response: Any) -> ResponseOrigin | None:
    """Return where ``response`` came from, or ``None`` when unknown (e.g. a response loaded from disk)."""
    return _recall(response, _BY_RESPONSE)


def session_origin(session: Any) -> ResponseOrigin | None:
    """Return the origin of the last response produced on ``session`` (it names the agent that ran there)."""
    return _recall(session, _BY_SESSION)
