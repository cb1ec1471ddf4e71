"""Progressive disclosure: the model is offered a server's loader tools first and loads the tools it needs.

A server with dozens of tools puts every schema into every model request. With
``MCPStdioTool(..., use_progressive_disclosure=True)`` the model sees three small tools instead (their names
prefixed like the server's tools):

- ``list_mcp_tools()`` — the index: every allowed tool's name, remote name, description, JSON schema,
  approval mode and whether it is loaded;
- ``load_tool(tool)`` — one name or a list: the tools join the run's tool list and can be called from the
  model's next iteration on (and in later runs of the same MCP tool object);
- ``unload_tool(tool)`` — takes loaded tools off the list again (``always_load`` tools stay).

The ``always_load`` tools are offered from the start. Names are matched against the remote name or the local
(prefixed) name. Requests for unknown tools are answered with a message naming the available ones, not an
error, so the model can correct itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from agentnb._middleware import FunctionInvocationContext
from agentnb._tools import FunctionTool
from agentnb.exceptions import ToolExecutionError

if TYPE_CHECKING:
    from ._tool import MCPTool

__all__ = ["LIST_TOOL", "LOAD_TOOL", "UNLOAD_TOOL", "ProgressiveDisclosure"]

logger = logging.getLogger("agentnb.mcp")

LIST_TOOL = "list_mcp_tools"
LOAD_TOOL = "load_tool"
UNLOAD_TOOL = "unload_tool"

_NAMES_SCHEMA: dict[str, Any] = {
    "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
}


def _names_argument(verb: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"tool": {**_NAMES_SCHEMA, "description": f"The MCP tool name, or names, to {verb}."}},
        "required": ["tool"],
    }


def _requested(tool: str | Sequence[str]) -> list[str]:
    if isinstance(tool, str):
        return [tool]
    names = list(tool)
    # The model supplies these arguments: each one is checked, whatever the schema asked for.
    if not all(isinstance(name, str) for name in cast("list[object]", names)):
        raise ToolExecutionError("The tool argument must be a tool name or a list of tool names.")
    return names


def _live(ctx: FunctionInvocationContext | None, loader: str) -> FunctionInvocationContext:
    if ctx is None or ctx.tools is None:
        raise ToolExecutionError(f"{loader} can only be used inside an agent's function-calling run.")
    return ctx


def _remote_name(func: FunctionTool) -> str:
    remote = func.additional_properties.get("mcp_tool_name")
    return remote if isinstance(remote, str) else func.name


class ProgressiveDisclosure:
    """Which of one MCP server's tools the model is offered, and the loader tools that change it.

    Args:
        server: The MCP tool object whose functions are disclosed.
        name_for: Maps a loader tool's base name to its local name (the server's tool-name prefix applied).
    """

    def __init__(self, server: MCPTool, name_for: Callable[[str], str]) -> None:
        self._server = server
        self._name_for = name_for
        self._loaded: set[str] = set()
        self._loaders: list[FunctionTool] | None = None
        self._loaders_key: tuple[str, ...] = ()

    # -- what the model is offered ------------------------------------------------------------------------
    def loader_names(self) -> tuple[str, str, str]:
        """The local names of the list, load and unload tools."""
        return (self._name_for(LIST_TOOL), self._name_for(LOAD_TOOL), self._name_for(UNLOAD_TOOL))

    def loaders(self) -> list[FunctionTool]:
        """The three loader tools (built once per naming)."""
        names = self.loader_names()
        if self._loaders is None or self._loaders_key != names:
            list_name, load_name, unload_name = names
            self._loaders = [
                FunctionTool(
                    self.list_tools,
                    name=list_name,
                    description="List the MCP tools that can be loaded from this server.",
                    input_model={"type": "object", "properties": {}},
                ),
                FunctionTool(
                    self.load,
                    name=load_name,
                    description="Load an MCP tool from this server so it can be called on the next iteration.",
                    input_model=_names_argument("load"),
                ),
                FunctionTool(
                    self.unload,
                    name=unload_name,
                    description="Unload an MCP tool from this server when it is no longer relevant.",
                    input_model=_names_argument("unload"),
                ),
            ]
            self._loaders_key = names
        return list(self._loaders)

    def offered(self) -> list[FunctionTool]:
        """The loader tools, then the ``always_load`` tools and the tools loaded so far."""
        return [
            *self.loaders(),
            *(f for f in self._candidates() if self.always_loaded(f) or f.name in self._loaded),
        ]

    def always_loaded(self, func: FunctionTool) -> bool:
        """Whether ``func`` is named in ``always_load`` (by remote or local name)."""
        always = self._server.always_load
        return func.name in always or _remote_name(func) in always

    def check_names(self, functions: Sequence[FunctionTool]) -> None:
        """Log server tools hidden because their local name is a loader tool's name."""
        clashes = sorted(f.name for f in functions if f.name in self.loader_names())
        if clashes:
            logger.warning(
                "MCP server %r: tools %s share a name with the progressive-disclosure loader tools and are not "
                "offered; set tool_name_prefix or exclude them with allowed_tools.",
                self._server.name,
                clashes,
            )

    def _candidates(self) -> list[FunctionTool]:
        reserved = self.loader_names()
        return [f for f in self._server.all_functions if f.name not in reserved]

    def _resolve(self, name: str) -> FunctionTool | str:
        """The tool a requested name means, or the message saying why there is none."""
        candidates = self._candidates()
        matches = [f for f in candidates if name in (f.name, _remote_name(f))]
        if len(matches) == 1:
            return matches[0]
        if matches:
            return f"MCP tool name '{name}' is ambiguous."
        available = ", ".join(f.name for f in candidates) or "none"
        return f"MCP tool '{name}' is not available. Available tools: {available}."

    # -- the loader tools ---------------------------------------------------------------------------------
    def list_tools(self, ctx: FunctionInvocationContext | None = None) -> list[dict[str, Any]]:
        """The index of the server's tools the model can load."""
        live = {t.name for t in ctx.tools or []} if ctx is not None else set[str]()
        return [
            {
                "name": f.name,
                "remote_name": _remote_name(f),
                "description": f.description,
                "parameters": f.parameters(),
                "approval_mode": f.approval_mode,
                "loaded": self.always_loaded(f) or f.name in self._loaded or f.name in live,
                "always_loaded": self.always_loaded(f),
            }
            for f in self._candidates()
        ]

    def load(self, ctx: FunctionInvocationContext | None, tool: str | list[str]) -> str:
        """Add the named tools to the run's tool list, from the model's next iteration on."""
        ctx = _live(ctx, LOAD_TOOL)
        messages: list[str] = []
        to_add: list[FunctionTool] = []
        live = {t.name for t in ctx.tools or []}
        for name in _requested(tool):
            found = self._resolve(name)
            if isinstance(found, str):
                messages.append(found)
            elif found.name in live:
                self._loaded.add(found.name)
                messages.append(f"MCP tool '{found.name}' is already available.")
            elif any(f is found for f in to_add):
                messages.append(f"MCP tool '{found.name}' is already queued to load.")
            else:
                to_add.append(found)
                messages.append(f"Loaded MCP tool '{found.name}'. It is available on the next model iteration.")
        ctx.add_tools(*to_add)
        self._loaded.update(f.name for f in to_add)
        return "\n".join(messages) or "No MCP tools requested."

    def unload(self, ctx: FunctionInvocationContext | None, tool: str | list[str]) -> str:
        """Take the named tools off the run's tool list, from the model's next iteration on."""
        ctx = _live(ctx, UNLOAD_TOOL)
        messages: list[str] = []
        to_remove: list[str] = []
        live = {t.name for t in ctx.tools or []}
        for name in _requested(tool):
            if name in self.loader_names():
                messages.append(f"MCP loader tool '{name}' cannot be unloaded.")
                continue
            found = self._resolve(name)
            if isinstance(found, str):
                messages.append(found)
            elif self.always_loaded(found):
                messages.append(f"MCP tool '{found.name}' is configured in always_load and cannot be unloaded.")
            elif found.name in to_remove:
                messages.append(f"MCP tool '{found.name}' is already queued to unload.")
            elif found.name not in self._loaded and found.name not in live:
                messages.append(f"MCP tool '{found.name}' is not currently loaded.")
            else:
                to_remove.append(found.name)
                messages.append(f"Unloaded MCP tool '{found.name}'. It will be removed on the next model iteration.")
        ctx.remove_tools(*to_remove)
        self._loaded.difference_update(to_remove)
        return "\n".join(messages) or "No MCP tools requested."
