"""Live approval cards for any displayed response or session that waits for approval.

``r = await agent.run("...", session=s)`` followed by ``r`` is the most common cell. When ``r`` ends with
approval requests, the extension displays it as an :class:`~agentnb.notebook.AgentView` holding the same
Approve / Deny cards as ``%%agent``; a click resumes the run on the agent and session that produced it
(:mod:`agentnb._origin` keeps both, weakly) and the continuation streams into the same output. Where no
live kernel can answer (a terminal, a saved or exported notebook, an agent that no longer exists) the
display stays the static HTML of :mod:`._display`.
"""

from __future__ import annotations

import weakref
from typing import Any, cast

from .._origin import origin_of, session_origin
from ._widgets import ipy_display

__all__ = ["live_display", "live_view"]

# One view per displayed object: displaying ``r`` twice shows the same cards, never a second set.
_VIEWS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _live_kernel() -> bool:
    from ._views import in_kernel

    return in_kernel()


def _pending(messages: list[Any]) -> list[Any]:
    from .._conversation import pending_requests

    return pending_requests(messages)


def live_view(obj: Any) -> Any:
    """Return the live view of a response or session that waits for approval, or ``None``.

    ``None`` means the static HTML is the right display: nothing is pending, the object's agent is unknown
    or gone, or there is no kernel to handle clicks.

    Args:
        obj: An :class:`agentnb.AgentResponse` or :class:`agentnb.AgentSession`.
    """
    from .._sessions import AgentSession
    from .._types import AgentResponse

    try:
        cached = _VIEWS.get(obj)
    except TypeError:
        return None
    # A response never changes, so its view is for good; a session moves on, so its view only while live.
    if cached is not None and (isinstance(obj, AgentResponse) or cached.status in ("waiting", "running")):
        return cached
    if isinstance(obj, AgentResponse):
        if not obj.user_input_requests:
            return None
        origin = origin_of(obj)
        response = cast("AgentResponse[Any]", obj)  # whatever its value type: only its messages are shown
        session = origin.session if origin is not None else None
    elif isinstance(obj, AgentSession):
        messages = obj.messages
        if not _pending(messages):
            return None
        origin = session_origin(obj)
        response, session = AgentResponse(messages=messages), obj
    else:
        return None
    if origin is None or not origin.alive or not _live_kernel():
        return None
    from ._harness import view_class_for
    from ._run import waiting_run

    agent = origin.agent
    view_class = view_class_for(agent)
    # A run already waiting on these requests (a %%agent cell, another view) is joined, not duplicated.
    shared = waiting_run(session) if session is not None else None
    if shared is not None and _same_requests(shared.pending, response):
        view = view_class(agent, controller=shared)
    else:
        view = view_class.from_response(response, agent=agent, session=session, history=origin.messages)
    _VIEWS[obj] = view
    from ._magics import remember_view

    remember_view(view)
    return view


def _same_requests(pending: list[Any], response: Any) -> bool:
    return {r.id for r in pending} == {r.id for r in response.user_input_requests}


def live_display(obj: Any) -> None:
    """IPython's display hook for responses and sessions: the live view when one applies.

    Raises:
        NotImplementedError: No live view applies; IPython then shows the object's HTML and text as usual.
    """
    view = live_view(obj)
    if view is None:
        raise NotImplementedError  # IPython's signal for "not handled here": the usual formatters run
    if view._display_handle is None:  # pyright: ignore[reportPrivateUsage]
        view.display()
    else:
        ipy_display(view)  # shown again elsewhere: the same widget, no second owner of the output
