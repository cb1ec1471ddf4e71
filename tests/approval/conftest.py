"""Shared tools for the approval tests: every tool counts the calls that reached its body."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentnb import AgentResponse, FunctionTool, ResponseStream, tool


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


@pytest.fixture
def tools() -> Tools:
    return Tools()


Run = Callable[..., Awaitable[tuple[list[Any], AgentResponse]]]


@pytest.fixture(params=[False, True], ids=["run", "stream"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def run(stream: bool) -> Run:
    """``await run(agent, messages, session=...)`` -> (updates, final response), streaming or not."""

    async def run_agent(agent: Any, messages: Any = None, **kwargs: Any) -> tuple[list[Any], AgentResponse]:
        if stream:
            result = agent.run(messages, stream=True, **kwargs)
            assert isinstance(result, ResponseStream)
            updates = [u async for u in result]
            return updates, await result.get_final_response()
        return [], await agent.run(messages, **kwargs)

    return run_agent
