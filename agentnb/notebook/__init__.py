"""The notebook layer: ``%load_ext agentnb``, rich display, magics and live widgets.

``%load_ext agentnb`` (or ``%load_ext agentnb.notebook``) makes agents, tools, messages, responses and
sessions display as HTML, switches tracing on, and adds two magics:

- ``%%agent NAME [--session VAR] [--no-stream] [--approve ask|all|none|TOOL,...]``: the cell body is the
  prompt for the agent in variable ``NAME``; the reply streams live and approvals appear as cards;
- ``%agentnb traces [--last N]``, ``%agentnb runs``, ``%agentnb meter on|off|auto``, ``%agentnb prices ...``,
  ``%agentnb record PATH`` / ``replay PATH``, ``%agentnb devui``.

Every run a cell starts (agent turns, workflow runs, batch cases) is recorded with the cell in the run store
(``agentnb.runs()`` has a ``cell`` column), and a cell that called a model gets a one-line meter: calls,
tokens, model time, and cost once :func:`set_prices` (or ``%agentnb prices``) has a price table.

A displayed response (or session) that waits for approval shows live Approve / Deny cards too; a click
resumes the run on the agent and session that produced it (:func:`live_view`).

The widgets work without the extension too: :class:`AgentView` (streaming + approvals + Stop),
:class:`HarnessView` (the same with a harness agent's todos, mode, loop, background tasks and memory files),
:class:`ChatWidget`, :class:`TraceView` and :class:`WorkflowView`. ``%unload_ext agentnb`` undoes everything.

Example:
    ```python
    %load_ext agentnb
    from agentnb import Agent, tool
    from agentnb.local import ToolCallingChatClient

    @tool
    def get_weather(city: str) -> str:
        \"\"\"Return the weather for a city.\"\"\"
        return f"Sunny in {city}."

    bot = Agent(ToolCallingChatClient(), "You are helpful.", name="bot", tools=[get_weather])
    ```
    and in the next cell ``%%agent bot`` followed by ``What's the weather in Paris?``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._approval import AUTO_APPROVE_ENV, ApprovalCard, AutoApprove
from ._display import message_html, messages_html, register_renderer, to_html, to_text
from ._extension import is_loaded, load_ipython_extension, unload_ipython_extension
from ._meter import get_prices, set_prices
from ._run import ALWAYS_ALLOW_KEY, AgentRun, RunStatus

if TYPE_CHECKING:
    from ._harness import HarnessView
    from ._live import live_view
    from ._magics import last_view
    from ._trace import TraceView
    from ._views import AgentView, ChatWidget, kernel_supports_awaiting_widgets
    from ._workflow import WorkflowView

__all__ = [
    "ALWAYS_ALLOW_KEY",
    "AUTO_APPROVE_ENV",
    "AgentRun",
    "AgentView",
    "ApprovalCard",
    "AutoApprove",
    "ChatWidget",
    "HarnessView",
    "RunStatus",
    "TraceView",
    "WorkflowView",
    "get_prices",
    "is_loaded",
    "kernel_supports_awaiting_widgets",
    "last_view",
    "live_view",
    "load_ipython_extension",
    "message_html",
    "messages_html",
    "register_renderer",
    "set_prices",
    "to_html",
    "to_text",
    "unload_ipython_extension",
]

# Widget classes import ipywidgets (and the magics import IPython); load them on first use.
_LAZY = {
    "AgentView": "._views",
    "ChatWidget": "._views",
    "HarnessView": "._harness",
    "TraceView": "._trace",
    "WorkflowView": "._workflow",
    "kernel_supports_awaiting_widgets": "._views",
    "last_view": "._magics",
    "live_view": "._live",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentnb.notebook' has no attribute {name!r}")
    import importlib

    try:
        value = getattr(importlib.import_module(module, __name__), name)
    except ImportError as e:
        raise ImportError(f'agentnb.notebook.{name} needs ipywidgets: pip install "agentnb[notebook]"') from e
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
