"""Demo agents the DevUI ships with: a tool-using assistant, one whose tool needs approval, and a harness planner.

Both run on the offline :class:`agentnb.local.ToolCallingChatClient` unless ``OPENAI_API_KEY`` (or
``OPENAI_BASE_URL``) is set, in which case they use :class:`agentnb.openai.OpenAIChatClient`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentnb import Agent, ChatResponseUpdate, Message, ToolApprovalMiddleware, tool
from agentnb.local import ToolCallingChatClient

from . import uses_real_model

__all__ = ["PacedToolCallingChatClient", "approvals_agent", "assistant_agent", "demo_client", "planner_agent"]


class PacedToolCallingChatClient(ToolCallingChatClient):
    """The offline tool-calling model, streaming at reading pace so the demo visibly streams.

    Example:
        >>> from agentnb import Agent
        >>> agent = Agent(PacedToolCallingChatClient(delay=0.0))
        >>> (await agent.run("Hello")).text  # doctest: +SKIP
        'You said: Hello'
    """

    def __init__(self, *, delay: float = 0.04, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        async for update in super()._inner_get_streaming_response(messages=messages, options=options, **kwargs):
            yield update
            await asyncio.sleep(self.delay)


def demo_client() -> Any:
    """Return the chat client the demo agents use: OpenAI when configured, else the offline tool-calling model."""
    if uses_real_model():
        from agentnb.openai import OpenAIChatCompletionClient

        return OpenAIChatCompletionClient()
    return PacedToolCallingChatClient()


@tool
def get_weather(city: str) -> str:
    """Return today's weather for a city."""
    forecasts = {"paris": "sunny, 21 °C", "london": "light rain, 15 °C", "tokyo": "cloudy, 18 °C"}
    return f"The weather in {city} is {forecasts.get(city.strip().lower(), 'mild, 19 °C')}."


@tool
def convert_currency(amount: float, to_currency: str = "EUR") -> str:
    """Convert an amount in US dollars to another currency at a fixed demo rate."""
    rates = {"EUR": 0.92, "GBP": 0.79, "JPY": 151.3}
    rate = rates.get(to_currency.upper(), 1.0)
    return f"{amount:.2f} USD is {amount * rate:.2f} {to_currency.upper()}."


@tool(approval_mode="always_require")
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email (a demo: nothing leaves the machine). Needs the user's approval."""
    return f"Email to {to} with subject {subject!r} was queued ({len(body)} characters)."


def assistant_agent() -> Any:
    """A helpful assistant with a weather tool and a currency tool."""
    return Agent(
        demo_client(),
        instructions="You are a concise travel assistant. Use the tools when they help.",
        name="assistant",
        description="Answers travel questions with a weather and a currency tool.",
        tools=[get_weather, convert_currency],
    )


def approvals_agent() -> Any:
    """An agent whose email tool asks for approval before it runs."""
    return Agent(
        demo_client(),
        instructions="You write and send short emails for the user.",
        name="mailer",
        description="Sends emails, but only after you approve each one.",
        tools=[send_email],
        # Keeps "always allow" answers as standing rules in the session.
        middleware=[ToolApprovalMiddleware()],
    )


def _plan_offline(messages: list[Message], options: dict[str, Any]) -> Any:
    """The offline planner: plan three todos for the request, tick them off with a memory note, then answer."""
    import json

    from agentnb.local import ScriptedChatClient

    asked = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), 0)
    request = messages[asked].text.strip() or "the request"
    results = [c for m in messages[asked + 1 :] for c in m.contents if c.type == "function_result"]
    call = ScriptedChatClient.call
    if not results:
        titles = [f"Understand: {request[:60]}", "Draft the answer", "Save a note to memory"]
        return [call("todos_add", todos=[{"title": t} for t in titles])]
    if len(results) == 1:
        added: list[dict[str, Any]] = json.loads(str(results[0].result))
        ids = [int(item["id"]) for item in added]
        return [
            call("todos_complete", items=[{"id": ids[0], "reason": "understood"}, {"id": ids[1], "reason": "drafted"}]),
            call("file_memory_write", file_name="notes.md", content=f"Asked: {request}", description="The request"),
            call("todos_get_remaining"),
        ]
    # The fourth result is todos_get_remaining's answer: what is left to tick off.
    remaining: list[dict[str, Any]] = json.loads(str(results[-1].result)) if len(results) == 4 else []
    if remaining:
        return [call("todos_complete", items=[{"id": item["id"], "reason": "saved"} for item in remaining])]
    return f"Done: I planned {request!r}, worked through the todo list and saved a note to memory."


def planner_agent() -> Any:
    """A harness agent: plans with todos, works in modes and keeps notes in file memory (held in memory here)."""
    from agentnb.harness import InMemoryAgentFileStore, create_harness_agent
    from agentnb.local import FunctionChatClient

    client = demo_client() if uses_real_model() else FunctionChatClient(_plan_offline, model_id="offline-planner")
    return create_harness_agent(
        client,
        name="planner",
        description="A harness agent: plans with a todo list and keeps notes in its file memory.",
        agent_instructions="Plan the user's request as todos, work through them, and keep a note in memory.",
        file_memory_store=InMemoryAgentFileStore(),
    )
