"""MCPTaskOptions: the reference's name for MCP long-running task options, kept so imports resolve.

The MCP task lifecycle (a task-augmented ``tools/call``, polled ``tasks/get``, ``tasks/result``) left the core
protocol with MCP 2.x: the ``mcp`` SDK's method tables leave ``tasks/*`` out and it ships no runtime for the
tasks extension. The reference's own release keeps this class as a deprecated shim that does nothing and
ignores ``task_options=`` with a warning; agentnb does the same, so code written for it still runs and a
long-running tool is called like any other (bounded by the tool's ``request_timeout``).
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["MCPTaskOptions", "warn_task_options_ignored"]

_REMOVED = (
    "MCP tasks are not available: MCP 2.x moved them out of the core protocol and the mcp SDK has no runtime for them"
)


class MCPTaskOptions:
    """Deprecated: accepted for source compatibility and ignored; MCP tools are called without tasks.

    Any arguments are accepted (the reference's ``default_ttl``, ``max_task_wait``, ...) and dropped.

    Warns:
        DeprecationWarning: On every construction.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        del args, kwargs
        warnings.warn(f"MCPTaskOptions is deprecated and does nothing: {_REMOVED}.", DeprecationWarning, stacklevel=2)

    def __repr__(self) -> str:
        return "MCPTaskOptions()"


def warn_task_options_ignored(task_options: object) -> None:
    """Warn that a tool's ``task_options=`` is ignored (nothing happens for ``None``)."""
    if task_options is not None:
        warnings.warn(
            f"`task_options` is deprecated and ignored: {_REMOVED}; the tool is called without tasks.",
            DeprecationWarning,
            stacklevel=3,
        )
