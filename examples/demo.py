"""Run an agent with a tool and stream its answer.

Offline by default (a deterministic test model, no key needed); set OPENAI_API_KEY, or OPENAI_BASE_URL
for a local OpenAI-compatible server such as Ollama or vLLM, to talk to a real model instead.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from agentnb import Agent, tool
from agentnb.local import default_chat_client, describe_client


@tool
def get_weather(city: Annotated[str, "The city to look up"]) -> str:
    """Return today's weather for a city."""
    forecasts = {"Paris": "sunny, 24°C", "Oslo": "light snow, -3°C"}
    return f"{city}: {forecasts.get(city, 'cloudy, 15°C')}"


async def main() -> None:
    client = default_chat_client()
    agent = Agent(
        client, "You answer weather questions using the get_weather tool.", name="weather", tools=[get_weather]
    )
    print(f"Model: {describe_client(client)}")
    question = "What's the weather in Paris?"
    print(f"You: {question}")
    print("Agent: ", end="", flush=True)
    stream = agent.run(question, stream=True)
    async for update in stream:
        for content in update.contents:
            if content.type == "function_call":
                print(f"\n  [calling {content.name}({content.arguments})]", end="", flush=True)
            elif content.type == "function_result":
                print(f"\n  [{content.call_id} -> {content.result}]\nAgent: ", end="", flush=True)
        print(update.text, end="", flush=True)
    response = await stream.get_final_response()
    usage = response.usage_details or {}
    print(f"\n\n({usage.get('input_token_count', 0)} input / {usage.get('output_token_count', 0)} output tokens)")


if __name__ == "__main__":
    asyncio.run(main())
