"""Extension points: what a lower layer needs from a package above it, filled in by that package.

A lower layer never imports a higher one (``tests/test_layers.py``). When it offers a convenience whose work
lives higher up (``Agent.as_mcp_server`` builds an ``agentnb.mcp`` server, a request with a compaction strategy
is compacted by ``agentnb.compaction``, ``default_chat_client`` switches to OpenAI, an experiment's or a
re-run's ``_repr_html_`` is drawn by ``agentnb.views``), it asks an extension point declared here. The
package that does the work fills the point when it is imported; the package root (``agentnb/__init__.py``,
which names every area anyway) tells each point which package fills it, so asking loads that package on first
use, as an import inside a function did before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .exceptions import AgentnbError

if TYPE_CHECKING:
    from ._clients import BaseChatClient
    from ._compaction_protocols import CompactionStrategy, RequestCompactor, TokenizerProtocol

__all__ = [
    "AGENT_MCP_SERVER",
    "OBJECT_HTML",
    "OPENAI_CHAT_CLIENT",
    "REQUEST_COMPACTION",
    "ExtensionPoint",
]

T = TypeVar("T")


class ExtensionPoint(Generic[T]):
    """One thing a lower layer needs from a package above it."""

    __slots__ = ("_module", "_value", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._value: T | None = None
        self._module: str | None = None

    def fill(self, value: T) -> None:
        """Called by the providing package when it is imported."""
        self._value = value

    def bind(self, module: str) -> None:
        """Name the package that fills this point (the package root does this once)."""
        self._module = module

    def get(self) -> T:
        """The filled-in value, importing the providing package first if it has not been imported yet."""
        if self._value is None and self._module is not None:
            importlib.import_module(self._module)
        if self._value is None:
            raise AgentnbError(f"Nothing provides {self.name}: no package filled this extension point.")
        return self._value


#: Builds the per-request compaction a chat client runs (``agentnb.compaction.RequestCompaction``).
REQUEST_COMPACTION: ExtensionPoint[
    Callable[[CompactionStrategy | None, TokenizerProtocol | None], RequestCompactor]
] = ExtensionPoint("request compaction")

#: Builds an MCP server that serves an agent (``agentnb.mcp.agent_mcp_server``).
AGENT_MCP_SERVER: ExtensionPoint[Callable[..., Any]] = ExtensionPoint("an agent's MCP server")

#: The HTML view of a domain object (an experiment, an executor re-run) for its display (``agentnb.views``).
OBJECT_HTML: ExtensionPoint[Callable[[object], str]] = ExtensionPoint("HTML views of domain objects")

#: The OpenAI-compatible chat client ``default_chat_client`` uses when a key or base URL is set.
OPENAI_CHAT_CLIENT: ExtensionPoint[Callable[..., BaseChatClient]] = ExtensionPoint("the OpenAI chat client")
