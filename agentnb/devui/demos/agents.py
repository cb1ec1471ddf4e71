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
    """The offline planner: todos, a research task for a background agent, a memory note, then the answer.

    Each step is chosen by which tools have answered since the user's message, so a resumed turn picks up.
    """
    import json
    import re

    from agentnb.local import ScriptedChatClient

    asked = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), 0)
    request = messages[asked].text.strip() or "the request"
    names = {c.call_id: c.name for m in messages[asked + 1 :] for c in m.contents if c.type == "function_call"}
    results = {
        names.get(c.call_id, ""): str(c.result)
        for m in messages[asked + 1 :]
        for c in m.contents
        if c.type == "function_result"
    }
    call = ScriptedChatClient.call
    if "todos_add" not in results:
        titles = [f"Understand: {request[:60]}", "Research a fact", "Save a note to memory"]
        return [call("todos_add", todos=[{"title": t} for t in titles])]
    ids = [int(item["id"]) for item in json.loads(results["todos_add"])]
    if "background_agents_start_task" not in results:
        return [
            call("todos_complete", items=[{"id": ids[0], "reason": "understood"}]),
            call(
                "background_agents_start_task",
                agent_name="researcher",
                input=f"One fact about: {request}",
                description=f"Research: {request[:40]}",
            ),
        ]
    if "background_agents_wait_for_first_completion" not in results:
        started = re.search(r"Background task (\d+) started", results["background_agents_start_task"])
        return [call("background_agents_wait_for_first_completion", task_ids=[int(started.group(1)) if started else 1])]
    if "file_memory_write" not in results:
        return [
            call("todos_complete", items=[{"id": ids[1], "reason": "researched"}]),
            call("file_memory_write", file_name="notes.md", content=f"Asked: {request}", description="The request"),
            call("todos_get_remaining"),
        ]
    remaining: list[dict[str, Any]] = json.loads(results.get("todos_get_remaining", "[]"))
    if remaining and list(names.values()).count("todos_complete") < 3:
        return [call("todos_complete", items=[{"id": item["id"], "reason": "saved"} for item in remaining])]
    return f"Done: I planned {request!r}, had a fact researched in the background and saved a note to memory."


def _research_offline(messages: list[Message], options: dict[str, Any]) -> str:
    return f"A fact, found offline, for {messages[-1].text.removeprefix('One fact about: ')!r}."


def planner_agent() -> Any:
    """A harness agent: plans with todos, works in modes and keeps notes in file memory (held in memory here)."""
    import warnings

    from agentnb import Agent
    from agentnb.harness import ExperimentalWarning, InMemoryAgentFileStore, create_harness_agent
    from agentnb.local import FunctionChatClient

    real = uses_real_model()
    client = demo_client() if real else FunctionChatClient(_plan_offline, model_id="offline-planner")
    researcher: Any = Agent(  # Agent's overloaded run() does not match SupportsAgentRun for the checker
        demo_client() if real else FunctionChatClient(_research_offline, model_id="offline-researcher"),
        "Answer with one short fact about what you are asked.",
        name="researcher",
        description="Finds one fact about a topic.",
    )
    with warnings.catch_warnings():  # the demo opts in to background agents knowingly
        warnings.simplefilter("ignore", ExperimentalWarning)
        return create_harness_agent(
            client,
            name="planner",
            description="A harness agent: plans with todos, delegates research to a background agent and keeps "
            "notes in its file memory.",
            agent_instructions="Plan the user's request as todos, delegate research to the researcher, work through "
            "the todos, and keep a note in memory.",
            file_memory_store=InMemoryAgentFileStore(),
            background_agents=[researcher],
        )
