"""Tools built once per session: a provider's tools close over its session, and building a tool reads its
function's signature, which costs more than the rest of a provider's turn (about 1 ms for the harness's 14)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable

from .._sessions import AgentSession
from .._tools import FunctionTool

__all__ = ["ToolCache"]


class ToolCache:
    """The tools a provider built for a session, kept while the session lives and ``key`` stays the same."""

    def __init__(self) -> None:
        self._entries: weakref.WeakKeyDictionary[AgentSession, tuple[Hashable, list[FunctionTool]]] = (
            weakref.WeakKeyDictionary()
        )

    def get(
        self, session: AgentSession | None, key: Hashable, build: Callable[[], list[FunctionTool]]
    ) -> list[FunctionTool]:
        """The cached tools for ``session`` and ``key``, else ``build()`` (cached when there is a session)."""
        if session is None:
            return build()
        hit = self._entries.get(session)
        if hit is not None and hit[0] == key:
            return hit[1]
        tools = build()
        self._entries[session] = (key, tools)
        return tools
