"""Benchmark worker: one process per framework, running that framework's workloads when ``run.py`` asks.

Each framework gets its own process so no framework pays for another's imports or heap. The driver sends
one JSON command per line on stdin and reads one JSON reply per line on stdout:

- ``{"op": "supports"}`` -> the workloads this framework has, and its version;
- ``{"op": "measure", "workload": W, "seconds": S}`` -> ``{"n", "wall", "cpu"}``: W run back to back for at
  least S seconds (the first request for W warms it up and checks its result first);
- ``{"op": "growth", "turns": N}`` -> per-turn CPU and wall seconds of N turns in one fresh session;
- ``{"op": "checkpoint_bytes"}`` -> average stored size of one checkpoint of workload 7.

``python worker.py --rss NAME WORKLOAD N`` instead runs WORKLOAD N times in a fresh process and prints its
peak resident set size (workload 9).
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import importlib.metadata
import json
import resource
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from adapters import CHAIN_RESULT, CHUNKS, DISTRIBUTIONS, FAN_RESULT

WORKLOADS = (
    "turn",
    "tool_turn",
    "stream_turn",
    "chain",
    "fan",
    "chain_checkpointed",
    "harness_turn",
    "served_turn",
)
EXPECTED: dict[str, Any] = {
    "turn": "Done.",
    "tool_turn": "Done.",
    "stream_turn": CHUNKS,
    "chain": CHAIN_RESULT,
    "fan": FAN_RESULT,
    "chain_checkpointed": CHAIN_RESULT,
    "harness_turn": "Done.",
    "served_turn": "Done.",
}


class Worker:
    def __init__(self, name: str) -> None:
        self.module = importlib.import_module(f"adapters.{name}")
        self.bench = self.module.Bench()
        self.name = name
        self.warm: set[str] = set()
        self.checkpoint_size: float | None = None

    def supports(self) -> list[str]:
        found = [w for w in WORKLOADS if hasattr(self.bench, w)]
        return [*found, "growth"] if hasattr(self.bench, "new_session") else found

    async def check(self, workload: str) -> None:
        """Run once and verify the result (and, for the tool turn, that the tool ran exactly once)."""
        calls = self.module.CALLS[0]
        result = await getattr(self.bench, workload)()
        if result != EXPECTED[workload]:
            raise AssertionError(f"{self.name} {workload}: got {result!r}, expected {EXPECTED[workload]!r}")
        ran = self.module.CALLS[0] - calls
        if ran != (1 if workload == "tool_turn" else 0):
            raise AssertionError(f"{self.name} {workload}: the tool ran {ran} times")

    async def warm_up(self, workload: str) -> None:
        """Check the result, then run for up to 0.3 s so caches and lazy imports are settled before timing."""
        started = time.perf_counter()
        if workload == "chain_checkpointed":
            self.bench.reset()
            await self.check(workload)
            self.checkpoint_size = await self.bench.checkpoint_bytes()
        await self.check(workload)
        fn = getattr(self.bench, workload)
        for _ in range(200):
            if time.perf_counter() - started > 0.3:
                break
            await fn()
        self.warm.add(workload)

    async def measure(self, workload: str, seconds: float) -> dict[str, Any]:
        if workload not in self.warm:
            await self.warm_up(workload)
        if workload == "chain_checkpointed":
            self.bench.reset()  # stored checkpoints would otherwise pile up from sample to sample
        fn: Callable[[], Awaitable[Any]] = getattr(self.bench, workload)
        gc.collect()
        n = 0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        while True:
            await fn()
            n += 1
            if time.perf_counter() - wall0 >= seconds:
                break
        return {"n": n, "wall": time.perf_counter() - wall0, "cpu": time.process_time() - cpu0}

    async def growth(self, turns: int) -> dict[str, Any]:
        if "growth" not in self.warm:
            warm = self.bench.new_session()
            for _ in range(20):
                assert await warm() == "Done."
            self.warm.add("growth")
        turn = self.bench.new_session()
        gc.collect()
        cpu: list[float] = []
        wall: list[float] = []
        for _ in range(turns):
            w, c = time.perf_counter(), time.process_time()
            result = await turn()
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
            if result != "Done.":
                raise AssertionError(f"{self.name} session turn: got {result!r}")
        return {"cpu": cpu, "wall": wall}

    async def handle(self, command: dict[str, Any]) -> Any:
        op = command["op"]
        if op == "supports":
            return {"workloads": self.supports(), "version": importlib.metadata.version(DISTRIBUTIONS[self.name])}
        if op == "measure":
            return await self.measure(command["workload"], command["seconds"])
        if op == "growth":
            return await self.growth(command["turns"])
        if op == "checkpoint_bytes":
            return self.checkpoint_size
        raise ValueError(f"unknown op {op!r}")


async def serve(name: str) -> None:
    worker = Worker(name)
    print(json.dumps({"ready": name}), flush=True)
    # Blocking reads are fine: nothing else runs on this loop between commands.
    for line in sys.stdin:
        command = json.loads(line)
        try:
            reply = {"ok": await worker.handle(command)}
        except Exception as exc:  # reported to the driver, which shows it in the table
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


async def peak_rss(name: str, workload: str, iterations: int) -> None:
    worker = Worker(name)
    await worker.check(workload)
    fn = getattr(worker.bench, workload)
    for _ in range(iterations):
        await fn()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    print(json.dumps({"peak_mb": peak_kb / 1024}), flush=True)


def main() -> None:
    warnings.simplefilter("ignore")  # peers' deprecation notices would only clutter the driver's output
    if sys.argv[1] == "--rss":
        asyncio.run(peak_rss(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    else:
        asyncio.run(serve(sys.argv[1]))


if __name__ == "__main__":
    main()
