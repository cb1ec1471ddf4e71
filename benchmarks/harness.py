"""What the harness costs per agent turn, on an instant in-process model.

Run: ``python benchmarks/harness.py``. The model answers at once (one text reply, or one tool call then text),
so the numbers are the harness's own work per turn: its providers' ``before_run`` (instructions, tools, the todo
list, the memory index), the approval and injection middleware, and its tools. Compared with a plain agent on
the same model. Prints microseconds per turn (median of several rounds) and the ratio.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

from agentnb import Agent, BaseChatClient, ChatResponse, Content, Message
from agentnb.harness import (
    ExperimentalWarning,
    FileSystemAgentFileStore,
    InMemoryAgentFileStore,
    create_harness_agent,
)

TURNS = 200
ROUNDS = 5


class InstantModel(BaseChatClient):
    """Answers at once; with ``tool`` set, calls it once per turn first (a todo or a memory write)."""

    def __init__(self, tool: str | None = None, arguments: str = "{}") -> None:
        super().__init__(model_id="instant")
        self.tool, self.arguments = tool, arguments

    async def _inner_get_response(self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any):
        if self.tool and messages[-1].role != "tool":
            call = Content.from_function_call("c1", self.tool, self.arguments)
            return ChatResponse(messages=[Message("assistant", [call])], finish_reason="tool_calls")
        return ChatResponse(messages=[Message("assistant", ["Done."])], finish_reason="stop")


async def per_turn(make: Callable[[], Agent[Any]]) -> float:
    """Median microseconds per turn over ``ROUNDS`` rounds of ``TURNS`` turns on one fresh session each."""
    samples: list[float] = []
    for _ in range(ROUNDS):
        agent = make()
        session = agent.create_session()
        gc.collect()
        start = time.perf_counter()
        for i in range(TURNS):
            await agent.run(f"turn {i}", session=session)
        samples.append((time.perf_counter() - start) / TURNS * 1e6)
    return statistics.median(samples)


def main() -> None:
    warnings.simplefilter("ignore", ExperimentalWarning)
    disk = tempfile.mkdtemp(prefix="agentnb-bench-")
    cases: list[tuple[str, Callable[[], Agent[Any]]]] = [
        ("plain Agent, text reply", lambda: Agent(InstantModel())),
        (
            "harness (todo, mode, memory in RAM), text reply",
            lambda: create_harness_agent(InstantModel(), file_memory_store=InMemoryAgentFileStore()),
        ),
        (
            "harness, memory on disk, text reply",
            lambda: create_harness_agent(InstantModel(), file_memory_store=FileSystemAgentFileStore(disk)),
        ),
        ("plain Agent, one tool call", lambda: Agent(InstantModel("noop"), tools=[lambda: "ok"])),
        (
            "harness, one todos_add per turn",
            lambda: create_harness_agent(
                InstantModel("todos_add", '{"todos": [{"title": "t"}]}'), file_memory_store=InMemoryAgentFileStore()
            ),
        ),
        (
            "harness, one file_memory_write per turn (disk)",
            lambda: create_harness_agent(
                InstantModel("file_memory_write", '{"file_name": "n.md", "content": "x"}'),
                file_memory_store=FileSystemAgentFileStore(disk),
            ),
        ),
    ]
    results = [(name, asyncio.run(per_turn(make))) for name, make in cases]
    base = {"text": results[0][1], "tool": results[3][1]}
    print(f"{'case':<50} {'µs/turn':>10} {'vs plain':>9}")
    for name, micros in results:
        ref = base["tool"] if ("tool" in name or "per turn" in name) else base["text"]
        print(f"{name:<50} {micros:>10.0f} {micros / ref:>8.1f}x")


if __name__ == "__main__":
    main()
