"""Agents and models shared by the notebook tests (offline, deterministic)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentnb import Agent, Message, tool
from agentnb.local import FunctionChatClient, ToolCallingChatClient


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."


def ops_agent() -> Agent:
    """An agent with one tool that needs approval and one that does not."""
    return Agent(ToolCallingChatClient(), "Be brief.", name="ops", tools=[delete_file, get_weather])


def slow_agent(chunks: int = 200, delay: float = 0.01) -> Agent:
    """An agent whose model streams ``chunks`` tokens, ``delay`` seconds apart (for Stop)."""

    async def model(messages: list[Message], options: dict[str, Any]) -> AsyncIterator[str]:
        for i in range(chunks):
            await asyncio.sleep(delay)
            yield f"tok{i} "

    return Agent(FunctionChatClient(model), name="slow")
