"""``%load_ext agentnb``: display formatters, magics, the ``%%agent`` transformer and tracing.

Loading registers everything with the running IPython shell and remembers what it replaced, so
``%unload_ext agentnb`` puts the shell back exactly as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._display import LAZY_TYPES, core_types, to_html, to_text

__all__ = ["cell_tracker", "is_loaded", "load_ipython_extension", "unload_ipython_extension"]

_MIME_FORMATTERS = ("text/html", "text/plain")


@dataclass
class _LoadedState:
    """What loading changed, so unloading can undo exactly that."""

    formatters: dict[tuple[str, type | str], Any] = field(default_factory=dict)
    live: dict[type, Any] = field(default_factory=dict)
    magics: Any = None
    transformer: Callable[[list[str]], list[str]] | None = None
    tracing: Any = None
    cells: Any = None


_state: _LoadedState | None = None


def cell_tracker() -> Any:
    """Return the loaded extension's cell tracker (runs by cell, the meter), or ``None`` when not loaded."""
    return _state.cells if _state is not None else None


def is_loaded() -> bool:
    """Return whether the extension is loaded in this process."""
    return _state is not None


def _html_formatter(obj: Any) -> str | None:
    return to_html(obj)


def _text_printer(obj: Any, p: Any, cycle: bool) -> None:
    text = to_text(obj)
    p.text(text if text is not None and not cycle else repr(obj))


def register_formatters(ip: Any, state: _LoadedState) -> None:
    """Register the HTML and text formatters for every type :mod:`._display` knows (idempotent)."""
    formatters = ip.display_formatter.formatters
    for cls in core_types():
        for mime, func in (("text/html", _html_formatter), ("text/plain", _text_printer)):
            key = (mime, cls)
            if key in state.formatters:
                continue
            # for_type returns what was registered before (or None) so unloading can restore it.
            state.formatters[key] = formatters[mime].for_type(cls, func)
    for module, name in LAZY_TYPES:
        for mime, func in (("text/html", _html_formatter), ("text/plain", _text_printer)):
            key = (mime, f"{module}.{name}")
            if key not in state.formatters:
                # By name: IPython binds it when the type is first displayed, so nothing is imported now.
                state.formatters[key] = formatters[mime].for_type_by_name(module, name, func)


def register_live_display(ip: Any, state: _LoadedState) -> None:
    """Let responses and sessions that wait for approval display as live views with approval cards."""
    from .._sessions import AgentSession
    from .._types import AgentResponse
    from ._live import live_display

    hook = ip.display_formatter.ipython_display_formatter
    for cls in (AgentResponse, AgentSession):
        if cls not in state.live:
            state.live[cls] = hook.for_type(cls, live_display)


def _unregister_live_display(ip: Any, state: _LoadedState) -> None:
    hook = ip.display_formatter.ipython_display_formatter
    for cls, previous in state.live.items():
        with contextlib.suppress(KeyError):
            hook.pop(cls)
        if previous is not None:
            hook.for_type(cls, previous)
    state.live.clear()


def _unregister_formatters(ip: Any, state: _LoadedState) -> None:
    _unregister_live_display(ip, state)
    formatters = ip.display_formatter.formatters
    for (mime, cls), previous in state.formatters.items():
        with contextlib.suppress(KeyError):
            formatters[mime].pop(cls)
        if previous is None:
            continue
        if isinstance(cls, str):
            module, _, name = cls.rpartition(".")
            formatters[mime].for_type_by_name(module, name, previous)
        else:
            formatters[mime].for_type(cls, previous)
    state.formatters.clear()


def load_ipython_extension(ip: Any) -> None:
    """Load agentnb into an IPython shell (``%load_ext agentnb``); loading twice is harmless.

    Args:
        ip: The running ``InteractiveShell``.
    """
    global _state
    if _state is not None:
        register_formatters(ip, _state)  # pick up types that were imported since (e.g. workflows)
        return
    from ._magics import AgentnbMagics, agent_cell_transformer

    state = _LoadedState()
    register_formatters(ip, state)
    register_live_display(ip, state)
    state.magics = AgentnbMagics(ip)
    ip.register_magics(state.magics)
    state.transformer = agent_cell_transformer
    ip.input_transformers_cleanup.append(agent_cell_transformer)
    from ._tracing import enable_tracing

    state.tracing = enable_tracing()
    from ._cells import CellTracker

    state.cells = CellTracker(ip)
    _state = state


def unload_ipython_extension(ip: Any) -> None:
    """Undo :func:`load_ipython_extension`: formatters, magics, the cell transformer and tracing.

    Args:
        ip: The running ``InteractiveShell``.
    """
    global _state
    state = _state
    if state is None:
        return
    _unregister_formatters(ip, state)
    manager = ip.magics_manager
    if state.magics is not None:
        for kind, names in state.magics.magics.items():
            for name in names:
                manager.magics[kind].pop(name, None)
        manager.registry.pop(type(state.magics).__name__, None)
        state.magics.close()
    if state.transformer in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(state.transformer)
    if state.cells is not None:
        state.cells.close()
    if state.tracing is not None:
        state.tracing.close()
    _state = None
