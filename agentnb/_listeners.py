"""Who is listening to agent turns run inside something larger (a functional workflow's step).

A functional workflow calls agents as plain ``await agent.run(...)``; to show their replies in the workflow's
events, as the graph engine does for its agent executors, the workflow sets a listener for the duration of a
run. :class:`~agentnb.Agent` asks :func:`current_listener` once per turn: with none set (the usual case) the
turn runs as before. With one set, a turn the caller did not stream is streamed when the listener wants
updates, each update goes to the listener, and the caller still gets the final response; a streamed turn
passes its updates on as they go by. Turns nested in a listened turn (an agent used as a tool) are not
reported again: the outer turn's reply already carries their work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ._types import AgentResponse, AgentResponseUpdate

__all__ = ["AgentListener", "current_listener", "listening"]


class AgentListener(Protocol):
    """Receives the replies of agent turns run while it is set."""

    @property
    def wants_updates(self) -> bool:
        """Whether turns should stream (one call of :meth:`on_update` per update) or report whole responses."""
        ...

    def on_update(self, update: AgentResponseUpdate) -> None:
        """One streamed update of a turn."""
        ...

    def on_response(self, response: AgentResponse) -> None:
        """The whole response of a turn that was not streamed."""
        ...


_LISTENER: ContextVar[AgentListener | None] = ContextVar("agentnb_agent_listener", default=None)


def current_listener() -> AgentListener | None:
    """The listener set for this task, or ``None``."""
    return _LISTENER.get()


@contextlib.contextmanager
def listening(listener: AgentListener | None) -> Generator[None]:
    """Set ``listener`` (``None`` silences an outer one) while the block runs."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
