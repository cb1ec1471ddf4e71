"""One module per framework, each exposing ``Bench``: the same workloads written with that framework's own API.

Every adapter plugs an instant, in-process fake model into the framework's documented model seam. The
fake model decides the same way everywhere: when tools are offered and the last message is not a tool
result it asks for ``lookup(key="k")``; otherwise it answers ``"Done."``; streamed, it sends ``CHUNKS``
text deltas of ``"x "``. Chunks are built per call with the framework's own chunk type, as a provider
integration would build them from the wire.
"""

from __future__ import annotations

from typing import Any

CHUNKS = 200
"""Text deltas in a streamed turn (workload 4)."""

WIDTH = 100
"""Executors in the chain (workload 5) and workers in the fan-out (workload 6)."""

CHAIN_RESULT = WIDTH - 1
"""What the chain yields for input 0: 99 steps add one each, the last one yields."""

FAN_RESULT = 2 * WIDTH
"""What the fan-out yields for input 0: the source adds one, each of the 100 workers adds one, the join sums."""

FRAMEWORKS = ("agentnb", "agent_framework", "langgraph", "pydantic_ai", "openai_agents")

LABELS = {
    "agentnb": "agentnb",
    "agent_framework": "Agent Framework",
    "langgraph": "LangGraph",
    "pydantic_ai": "Pydantic AI",
    "openai_agents": "OpenAI Agents",
}

DISTRIBUTIONS = {
    "agentnb": "agentnb",
    "agent_framework": "agent-framework-core",
    "langgraph": "langgraph",
    "pydantic_ai": "pydantic-ai-slim",
    "openai_agents": "openai-agents",
}

IMPORTS = {
    "agentnb": "from agentnb import Agent, tool",
    "agent_framework": "from agent_framework import Agent, tool",
    "langgraph": "from langgraph.graph import StateGraph",
    "pydantic_ai": "from pydantic_ai import Agent",
    "openai_agents": "from agents import Agent, Runner",
}
"""Workload 1: what a user writes first to build an agent (or, for LangGraph, a graph)."""


SERVED_INPUT = {"input": "hi", "stream": False}
"""Workload 11's request body (each adapter adds how its server names the agent): one non-streamed turn."""


def response_text(body: dict[str, Any]) -> str:
    """The ``output_text`` of a Responses API response body (the text parts of its message items)."""
    return "".join(
        part.get("text", "")
        for item in body.get("output", [])
        if item.get("type") == "message"
        for part in item.get("content", [])
        if part.get("type") == "output_text"
    )
