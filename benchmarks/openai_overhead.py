"""How much agentnb adds to one OpenAI call: the bare ``openai`` SDK vs agentnb, against one local server.

The server (``tests/openai_server.py``) runs in a subprocess on loopback and answers every request with
the same short reply, so the difference between the rows is the client-side cost of agentnb: message
mapping, the function-invocation loop, middleware and telemetry plumbing, and response assembly.
Calls are interleaved (SDK, agentnb, SDK, ...) so load drifts on the machine hit every variant alike.

Run from the repository root::

    python benchmarks/openai_overhead.py            # 300 timed turns per variant
    python benchmarks/openai_overhead.py --turns 1000

The goal is a ratio under 1.10 (agentnb adds less than 10% to a bare SDK call).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from agentnb import Agent
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "openai_server.py"
REPLY = "Hello! How can I help you today?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, str(SERVER), "--port", str(port), "--reply", REPLY])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark server did not start")


Turn = Callable[[], Awaitable[str]]


async def measure(variants: Mapping[str, Turn], turns: int, warmup: int) -> dict[str, tuple[list[float], list[float]]]:
    """Wall-clock and client CPU milliseconds per turn, for each variant."""
    for turn in variants.values():
        for _ in range(warmup):
            assert await turn() == REPLY
    timings: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in variants}
    for _ in range(turns):
        for name, turn in variants.items():
            start, cpu = time.perf_counter(), time.process_time()
            text = await turn()
            timings[name][0].append((time.perf_counter() - start) * 1000)
            # The server is another process, so this is the client's own work: SDK plus agentnb.
            timings[name][1].append((time.process_time() - cpu) * 1000)
            assert text == REPLY, text
    return timings


async def main(turns: int, warmup: int) -> None:
    port = free_port()
    process = start_server(port)
    base_url = f"http://127.0.0.1:{port}/v1"
    sdk = AsyncOpenAI(base_url=base_url, api_key="sk-bench")
    chat = OpenAIChatCompletionClient("bench-model", base_url=base_url, api_key="sk-bench")
    responses = OpenAIChatClient("bench-model", base_url=base_url, api_key="sk-bench")
    chat_agent = Agent(chat)
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi"}]

    async def sdk_chat() -> str:
        completion = await sdk.chat.completions.create(model="bench-model", messages=messages)
        return completion.choices[0].message.content or ""

    async def sdk_chat_stream() -> str:
        stream = await sdk.chat.completions.create(
            model="bench-model",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def sdk_responses() -> str:
        return (await sdk.responses.create(model="bench-model", input=[{"role": "user", "content": "Hi"}])).output_text

    async def agentnb_chat() -> str:
        return (await chat.get_response("Hi")).text

    async def agentnb_agent() -> str:
        return (await chat_agent.run("Hi")).text

    async def agentnb_chat_stream() -> str:
        return "".join([u.text async for u in chat.get_response("Hi", stream=True)])

    async def agentnb_responses() -> str:
        return (await responses.get_response("Hi")).text

    groups = {
        "chat completions": (
            {"bare SDK": sdk_chat, "agentnb client": agentnb_chat, "agentnb Agent.run": agentnb_agent}
        ),
        "chat completions, streamed": ({"bare SDK": sdk_chat_stream, "agentnb client": agentnb_chat_stream}),
        "responses": ({"bare SDK": sdk_responses, "agentnb client": agentnb_responses}),
    }
    try:
        print(f"{turns} turns per variant after {warmup} warm-up turns, loopback server in a subprocess\n")
        print(f"{'API':<28}{'variant':<20}{'median ms':>10}{'p90 ms':>9}{'ratio':>8}", end="")
        print(f"{'client CPU ms':>15}{'CPU ratio':>11}")
        for api, variants in groups.items():
            timings = await measure(variants, turns, warmup)
            base = statistics.median(timings["bare SDK"][0])
            base_cpu = statistics.mean(timings["bare SDK"][1])
            for name, (wall, cpu) in timings.items():
                median = statistics.median(wall)
                p90 = statistics.quantiles(wall, n=10)[-1]
                mean_cpu = statistics.mean(cpu)
                print(
                    f"{api:<28}{name:<20}{median:>10.3f}{p90:>9.3f}{median / base:>8.3f}"
                    f"{mean_cpu:>15.3f}{mean_cpu / base_cpu:>11.3f}"
                )
        print("\nratio = median wall time / bare SDK median (goal: under 1.10);")
        print("client CPU = mean CPU time of this process per turn (the server runs in another process).")
    finally:
        await sdk.close()
        await chat.close()
        await responses.close()
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.turns, args.warmup))
