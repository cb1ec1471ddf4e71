"""Pydantic AI: ``FunctionModel`` (its documented way to plug a local function in as the model); ``Agent``.

Pydantic AI has no workflow engine in ``pydantic-ai-slim`` comparable to the others (``pydantic-graph`` is a
state machine without fan-in), so workloads 5-7 are not run for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from . import CHUNKS

CALLS = [0]


async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One tool call when tools are offered and none has run yet, else ``Done.``."""
    last = messages[-1]
    returned = isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts)
    if info.function_tools and not returned:
        return ModelResponse(parts=[ToolCallPart("lookup", {"key": "k"}, tool_call_id="c1")])
    return ModelResponse(parts=[TextPart("Done.")])


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for _ in range(CHUNKS):
        yield "x "


def lookup(key: str) -> str:
    """Look a key up."""
    CALLS[0] += 1
    return "value"


class Bench:
    def __init__(self) -> None:
        model = FunctionModel(respond, stream_function=stream)
        self.plain: Agent[None, str] = Agent(model)
        self.with_tool: Agent[None, str] = Agent(model, tools=[lookup])

    async def turn(self) -> str:
        return (await self.plain.run("hi")).output

    async def tool_turn(self) -> str:
        return (await self.with_tool.run("hi")).output

    async def stream_turn(self) -> int:
        n = 0
        async with self.plain.run_stream("hi") as result:
            # debounce_by=None: every delta, not 100 ms batches (the default would hide per-chunk cost).
            async for _ in result.stream_text(delta=True, debounce_by=None):
                n += 1
        return n

    def new_session(self) -> Callable[[], Awaitable[str]]:
        history: list[Any] = []

        async def turn() -> str:
            result = await self.plain.run("hi", message_history=history)
            history[:] = result.all_messages()
            return result.output

        return turn
