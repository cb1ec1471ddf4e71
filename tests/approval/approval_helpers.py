"""Helpers for the approval tests: tools that count the calls that reached their body."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentnb import AgentResponse, FunctionTool, tool


@dataclass
class Tools:
    """An approval-required ``delete``, a free ``lookup`` and the calls that actually ran."""

    ran: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    delete: FunctionTool = field(init=False)
    lookup: FunctionTool = field(init=False)

    def __post_init__(self) -> None:
        ran = self.ran

        @tool(approval_mode="always_require")
        def delete(path: str) -> str:
            """Delete a file."""
            ran.append(("delete", {"path": path}))
            return f"deleted {path}"

        @tool
        def lookup(key: str) -> str:
            """Look a key up."""
            ran.append(("lookup", {"key": key}))
            return f"value of {key}"

        self.delete = delete
        self.lookup = lookup

    @property
    def counts(self) -> Counter[str]:
        return Counter(name for name, _ in self.ran)

    @property
    def all(self) -> list[FunctionTool]:
        return [self.delete, self.lookup]


Run = Callable[..., Awaitable[tuple[list[Any], AgentResponse]]]
