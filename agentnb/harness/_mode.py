"""Modes: how an agent should work right now (plan interactively, or execute on its own), kept in the session.

The model switches with ``mode_set`` when the user allows it; code (a notebook button, a slash command)
switches with :func:`set_agent_mode`, and the next run then tells the model in a user message, because a
system prompt alone does not pull a model away from the mode its own earlier tool call set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .._sessions import AgentSession, ContextProvider, SessionContext
from .._tools import FunctionTool, tool
from .._types import Message
from ._tool_cache import ToolCache

__all__ = [
    "DEFAULT_MODE_INSTRUCTIONS",
    "DEFAULT_MODE_MAP",
    "DEFAULT_MODE_SOURCE_ID",
    "AgentModeProvider",
    "get_agent_mode",
    "set_agent_mode",
]

DEFAULT_MODE_SOURCE_ID = "agent_mode"
DEFAULT_MODE_INSTRUCTIONS = (
    "## Agent Mode\n\n"
    "- You can work in different modes; each mode has its own process to follow.\n\n"
    "Use the mode_get tool to check your current mode and mode_set to switch modes as your work progresses. "
    "Only use mode_set when the user explicitly tells or allows you to change modes.\n\n"
    "You are currently in the {current_mode} mode.\n\n"
    "### Mandatory mode-based workflow\n\n"
    "For every new substantive request, short factual questions included, the mode you are in decides how you "
    "work.\n\n"
    "{available_modes}\n"
)
MODE_CHANGE_NOTIFICATION = (
    '[Mode changed: the operating mode was switched from "{previous_mode}" to "{current_mode}". '
    'Adjust your behaviour to the "{current_mode}" mode now.]'
)
DEFAULT_MODE_MAP: dict[str, str] = {
    "plan": (
        "Use this mode to analyse requirements, break work down and make plans. It is interactive: ask "
        "clarifying questions, discuss options, and get the user's approval before going on.\n\n"
        "Process in plan mode:\n"
        "1. Analyse the request in order to build a plan.\n"
        "2. Create a list of todo items.\n"
        "3. Where useful, explore with the tools you have, to shape the plan and find what to ask the user.\n"
        "4. Ask the user for the clarifications you need, one at a time; when you have options in mind, offer "
        "them so the user can pick one. Do not go on until you have them.\n"
        "5. Write the plan to a memory file so it survives compaction, and update it when the user asks for "
        "changes.\n"
        "6. Present the plan and ask for approval to switch to execute mode.\n"
        "7. Once approved, switch to execute mode (with `mode_set`) and follow the execute-mode process."
    ),
    "execute": (
        "Decide what kind of request this is:\n"
        "1. A simple question that needs no further work: answer it directly.\n"
        "2. Anything else, including complex multi-step work: work autonomously, without asking the user "
        "questions or waiting for feedback:\n"
        "   1. If you have no plan or tasks yet, analyse the request and make them (skip this if you came "
        "from plan mode).\n"
        "   2. Use your best judgement to keep making progress; the goal is a complete, useful result when the "
        "user returns.\n"
        "   3. On ambiguity or surprises, choose the most reasonable option, note the choice, and keep going.\n"
        "   4. Mark tasks complete as you finish them.\n"
        "   5. Keep working and calling tools until you have the result for the user."
    ),
}
_PREVIOUS_MODE_KEY = "previous_mode_for_notification"


def _state(session: AgentSession, source_id: str) -> dict[str, Any]:
    value = session.state.setdefault(source_id, {})
    if not isinstance(value, dict):
        raise TypeError(f"Session state for source_id {source_id!r} must be a dict, got {type(value).__name__}.")
    return cast("dict[str, Any]", value)


def _modes(available_modes: Sequence[str]) -> dict[str, str]:
    """Normalized (lower-case) mode -> display name; duplicates refused."""
    modes: dict[str, str] = {}
    for mode in available_modes:
        display = mode.strip()
        if not display:
            raise ValueError("Mode names must not be empty.")
        if display.lower() in modes:
            raise ValueError(f"Duplicate mode configured: {mode!r}")
        modes[display.lower()] = display
    return modes


def _normalize(mode: str, modes: Mapping[str, str]) -> str:
    key = mode.strip().lower() if isinstance(cast(object, mode), str) else ""
    if key not in modes:
        raise ValueError(f"Invalid mode: {mode!r}. Supported modes are {', '.join(map(repr, modes.values()))}.")
    return key


def get_agent_mode(
    session: AgentSession,
    *,
    source_id: str = DEFAULT_MODE_SOURCE_ID,
    default_mode: str | None = None,
    available_modes: Sequence[str] | None = None,
) -> str:
    """The session's current mode (stored as the default, the first available mode, when none is set yet).

    Example:
        ```python
        from agentnb import AgentSession
        from agentnb.harness import get_agent_mode

        get_agent_mode(AgentSession())  # 'plan'
        ```
    """
    modes = _modes(tuple(available_modes or DEFAULT_MODE_MAP))
    default = _normalize(default_mode, modes) if default_mode is not None else next(iter(modes))
    state = _state(session, source_id)
    current = state.get("current_mode")
    if isinstance(current, str) and current.strip().lower() in modes:
        return current.strip().lower()
    state["current_mode"] = default  # unset, or a mode no longer configured
    return default


def set_agent_mode(
    session: AgentSession,
    mode: str,
    *,
    source_id: str = DEFAULT_MODE_SOURCE_ID,
    available_modes: Sequence[str] | None = None,
) -> str:
    """Switch the session's mode from outside the agent; the next run tells the model. Returns the stored mode.

    Raises:
        ValueError: ``mode`` is not one of the available modes.

    Example:
        ```python
        from agentnb import AgentSession
        from agentnb.harness import get_agent_mode, set_agent_mode

        session = AgentSession()
        set_agent_mode(session, "Execute")  # 'execute'
        ```
    """
    modes = _modes(tuple(available_modes or DEFAULT_MODE_MAP))
    new = _normalize(mode, modes)
    state = _state(session, source_id)
    previous = state.get("current_mode")
    state["current_mode"] = new
    if isinstance(previous, str) and previous != new:
        state[_PREVIOUS_MODE_KEY] = previous
    return new


class AgentModeProvider(ContextProvider):
    """Keep the agent's operating mode in the session, with ``mode_get``/``mode_set`` tools and per-mode guidance.

    Args:
        source_id: The provider's key in the session state.
        default_mode: The mode of a new session (the first of ``mode_instructions`` by default).
        mode_instructions: Mode name -> how to work in it (``plan`` and ``execute`` by default).
        instructions: Replaces :data:`DEFAULT_MODE_INSTRUCTIONS`; may hold ``{available_modes}`` and
            ``{current_mode}``.

    Example:
        ```python
        from agentnb.harness import AgentModeProvider

        modes = AgentModeProvider(mode_instructions={"draft": "Write freely.", "review": "Check every claim."})
        modes.available_modes  # ('draft', 'review')
        ```
    """

    def __init__(
        self,
        source_id: str = DEFAULT_MODE_SOURCE_ID,
        *,
        default_mode: str | None = None,
        mode_instructions: Mapping[str, str] | None = None,
        instructions: str | None = None,
    ) -> None:
        super().__init__(source_id)
        given = dict(DEFAULT_MODE_MAP if mode_instructions is None else mode_instructions)
        self._display = _modes(tuple(given))
        if not self._display:
            raise ValueError("mode_instructions must contain at least one mode.")
        self.mode_instructions = {mode.strip().lower(): text for mode, text in given.items()}
        self.available_modes: tuple[str, ...] = tuple(self._display)
        self.default_mode = (
            _normalize(default_mode, self._display) if default_mode is not None else self.available_modes[0]
        )
        self.instructions = instructions
        self._tools = ToolCache()

    def get_mode(self, session: AgentSession) -> str:
        """The session's current mode under this provider's configuration."""
        return get_agent_mode(
            session, source_id=self.source_id, default_mode=self.default_mode, available_modes=self.available_modes
        )

    def set_mode(self, session: AgentSession, mode: str) -> str:
        """Switch the session's mode from outside the agent (the model is told on its next run)."""
        return set_agent_mode(session, mode, source_id=self.source_id, available_modes=self.available_modes)

    def _instructions(self, current: str) -> str:
        listing = "".join(f"#### {self._display[m]}\n\n{text}\n\n" for m, text in self.mode_instructions.items())
        template = self.instructions or DEFAULT_MODE_INSTRUCTIONS
        return template.replace("{available_modes}", listing).replace("{current_mode}", current)

    def tools(self, session: AgentSession) -> list[FunctionTool]:
        """``mode_set`` and ``mode_get`` working on ``session``."""

        @tool(name="mode_set")
        def mode_set(mode: str) -> str:
            """Switch the agent's operating mode."""
            # The model switched itself: it knows, so no notification is queued.
            new = _normalize(mode, self._display)
            _state(session, self.source_id)["current_mode"] = new
            return json.dumps({"mode": new, "message": f"Mode changed to '{new}'."})

        @tool(name="mode_get")
        def mode_get() -> str:
            """Get the agent's current operating mode."""
            return json.dumps({"mode": self.get_mode(session)})

        return [mode_set, mode_get]

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        session = session if session is not None else AgentSession(session_id=context.session_id)
        current = self.get_mode(session)
        previous = _state(session, self.source_id).pop(_PREVIOUS_MODE_KEY, None)
        context.extend_instructions(self.source_id, self._instructions(current))
        context.extend_tools(self.source_id, self._tools.get(session, self.source_id, lambda: self.tools(session)))
        if isinstance(previous, str) and previous != current:
            note = MODE_CHANGE_NOTIFICATION.format(
                previous_mode=self._display.get(previous, previous), current_mode=self._display.get(current, current)
            )
            context.extend_messages(self.source_id, [Message("user", [note])])

    def __repr__(self) -> str:
        return f"AgentModeProvider(modes={self.available_modes!r}, default_mode={self.default_mode!r})"
