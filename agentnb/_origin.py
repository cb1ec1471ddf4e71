"""Where a response came from: the agent and session that produced it, held weakly, and the run's input.

A response waiting for approval is only half a conversation. Front ends (the notebook's live display, the
DevUI) need the agent and the session to send the answers and resume the run, but a response must not keep
an agent alive or carry it into anything it is saved to. So the agent and session are held through weak
references, kept beside the response (never in ``to_dict``), and a session remembers the agent that last
ran on it the same way. Without a session, the run's own input is kept so the conversation can be resumed
on a fresh one.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

__all__ = ["ResponseOrigin", "attach_origin", "origin_of", "session_origin"]

# Keyed weakly by the response / session object itself, so nothing here outlives what it describes.
_BY_RESPONSE: weakref.WeakKeyDictionary[Any, ResponseOrigin] = weakref.WeakKeyDictionary()
_BY_SESSION: weakref.WeakKeyDictionary[Any, ResponseOrigin] = weakref.WeakKeyDictionary()


class ResponseOrigin:
    """The agent and session of one run (weakly) and the messages the run was given.

    Args:
        agent: The agent that ran.
        session: The session it ran on (``None``: a run without a session).
        messages: The run's input messages.
    """

    __slots__ = ("_agent", "_session", "had_session", "messages")

    def __init__(self, agent: Any, session: Any, messages: Sequence[Any]) -> None:
        self._agent = weakref.ref(agent)
        self._session = weakref.ref(session) if session is not None else None
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
        _BY_RESPONSE[response] = origin
        if session is not None:
            _BY_SESSION[session] = origin
    except TypeError:  # an object that cannot be weakly referenced: nothing to remember
        return


def origin_of(response: Any) -> ResponseOrigin | None:
    """Return where ``response`` came from, or ``None`` when unknown (e.g. a response loaded from disk)."""
    try:
        return _BY_RESPONSE.get(response)
    except TypeError:
        return None


def session_origin(session: Any) -> ResponseOrigin | None:
    """Return the origin of the last response produced on ``session`` (it names the agent that ran there)."""
    try:
        return _BY_SESSION.get(session)
    except TypeError:
        return None
