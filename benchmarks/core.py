"""Framework overhead per agent turn on an instant in-process model.

Run: ``python benchmarks/core.py``. The model does no work (it returns prebuilt replies), so the numbers are
what agentnb itself costs: the agent, middleware plumbing, the function-invocation loop, sessions and
response assembly. Prints turns/s and microseconds per turn (median of several rounds).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agentnb import Agent, BaseChatClient, ChatResponse, ChatResponseUpdate, Content, Message, tool

CHUNKS = 200


class InstantModel(BaseChatClient):
    """Answers instantly: a tool call when tools are offered and none has run yet, else a short text."""

    def __init__(self) -> None:
        super().__init__(model_id="instant")

    async def _inner_get_response(self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any):
        if options.get("tools") and messages[-1].role != "tool":
            call = Content.from_function_call("c1", "lookup", '{"key": "k"}')
            return ChatResponse(messages=[Message("assistant", [call])], finish_reason="tool_calls")
        return ChatResponse(messages=[Message("assistant", ["Done."])], finish_reason="stop")

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        for _ in range(CHUNKS):  # built per call, as a provider builds them from the wire
            yield ChatResponseUpdate(contents=[Content.from_text("x ")])


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return "value"


async def rate(turn: Callable[[], Awaitable[Any]], *, seconds: float = 0.6, rounds: int = 5) -> float:
    """Median turns per second over several timed rounds (after a warm-up)."""
    for _ in range(50):
        await turn()
    results = []
    for _ in range(rounds):
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            await turn()
            count += 1
        results.append(count / (time.perf_counter() - start))
    return statistics.median(results)


def building_an_agent(count: int = 1000, rounds: int = 7) -> tuple[float, float]:
    """Microseconds and bytes per ``Agent(model, tools=[lookup])``, with ``count`` agents kept alive at once.

    The shape of Agno's published instantiation benchmark: a new model object and one tool per agent.
    """

    def build() -> list[Agent]:
        return [Agent(InstantModel(), tools=[lookup]) for _ in range(count)]

    build()
    times = []
    for _ in range(rounds):
        start = time.process_time()
        kept = build()
        times.append((time.process_time() - start) / count)
        del kept
    gc.collect()
    tracemalloc.start()
    kept = build()
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return statistics.median(times) * 1e6, size / count


async def main() -> None:
    micros, size = building_an_agent()
    print(f"building an agent with one tool: {micros:.2f} µs, {size / 1024:.2f} KiB (1,000 kept, CPU time)\n")
    plain = Agent(InstantModel())
    with_tool = Agent(InstantModel(), tools=[lookup])
    streaming = Agent(InstantModel())

    async def plain_turn() -> None:
        await plain.run("hi")

    async def tool_turn() -> None:
        await with_tool.run("hi")

    async def streamed_turn() -> None:
        stream = streaming.run("hi", stream=True)
        async for _ in stream:
            pass
        await stream.get_final_response()

    rows = [
        ("plain turn", await rate(plain_turn), 1),
        ("turn with one tool call", await rate(tool_turn), 1),
        (f"streamed turn ({CHUNKS} chunks)", await rate(streamed_turn), CHUNKS),
    ]
    print(f"{'workload':<32} {'turns/s':>10} {'µs/turn':>10} {'µs/chunk':>10}")
    for name, per_second, chunks in rows:
        per_turn = 1e6 / per_second
        per_chunk = f"{per_turn / chunks:10.2f}" if chunks > 1 else f"{'':>10}"
        print(f"{name:<32} {per_second:10.0f} {per_turn:10.1f} {per_chunk}")


if __name__ == "__main__":
    asyncio.run(main())
