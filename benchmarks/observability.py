"""Observability costs: spans to DataFrame, span store writes, and tracing overhead per agent turn.

Run: ``python benchmarks/observability.py [--spans N]``. Prints two tables:

1. building the ``traces()`` DataFrame from N spans (default 100,000): from the in-memory buffer, cold
   (every span converted during the call) and warm (spans converted already, as the span store's
   background thread does between calls), and from the SQLite run store; plus writing N spans to SQLite;
2. microseconds per agent turn (one model call, one tool call, a second model call) on the offline
   ``ScriptedChatClient``: tracing off, on with no SDK provider (API no-op spans), on with SDK providers
   and the span store (memory only), and on with the span store writing to SQLite.

Times are CPU time of this process (best of 3; median of 5 for turns), so a busy shared machine does not
inflate them. Tracing "on" modes are measured after "off" in one process, because OpenTelemetry's global
provider can be set only once.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, set_span_in_context

from agentnb import Agent, tool
from agentnb import _telemetry as tel
from agentnb.local import ScriptedChatClient
from agentnb.observability import SpanStore, _setup, records_frame, traces
from agentnb.store import RunStore

# CPU time of this process, not wall time: on a shared machine the wall clock also counts the time other
# processes held the CPU, which says nothing about agentnb. (Background writer threads are included.)
clock = time.process_time


def best_of(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best CPU time of ``repeat`` calls (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = clock()
        result = fn()
        best = min(best, clock() - start)
    return best, result


def make_spans(n: int) -> SpanStore:
    """Record ``n`` realistic spans: agent turns of one agent span, two chat spans and one tool span."""
    spans = SpanStore(None, max_spans=n, precompute=False)  # conversion is measured below, not in passing
    provider = TracerProvider(resource=Resource.create({"service.name": "bench"}), shutdown_on_exit=False)
    provider.add_span_processor(spans)  # pyright: ignore[reportArgumentType]
    tracer = provider.get_tracer("bench")
    t = time.time_ns()
    for turn in range(n // 4):
        agent = f"agent-{turn % 5}"
        root = tracer.start_span(
            f"invoke_agent {agent}",
            start_time=t,
            attributes={tel.GEN_AI_OPERATION_NAME: "invoke_agent", tel.GEN_AI_AGENT_NAME: agent},
        )
        ctx = set_span_in_context(root)
        for i, name in enumerate(("chat gpt-x", "execute_tool lookup", "chat gpt-x")):
            attrs: dict[str, Any] = {tel.GEN_AI_AGENT_NAME: agent, "gen_ai.conversation.id": f"s{turn % 100}"}
            if name.startswith("chat"):
                attrs |= {
                    tel.GEN_AI_OPERATION_NAME: "chat",
                    tel.GEN_AI_PROVIDER_NAME: "openai",
                    tel.GEN_AI_REQUEST_MODEL: "gpt-x",
                    tel.GEN_AI_RESPONSE_MODEL: "gpt-x-2026",
                    tel.GEN_AI_USAGE_INPUT_TOKENS: 100 + i,
                    tel.GEN_AI_USAGE_OUTPUT_TOKENS: 20,
                    tel.GEN_AI_RESPONSE_FINISH_REASONS: ("stop",),
                }
            else:
                attrs |= {tel.GEN_AI_OPERATION_NAME: "execute_tool", tel.GEN_AI_TOOL_NAME: "lookup"}
            kind = SpanKind.CLIENT if name.startswith("chat") else SpanKind.INTERNAL
            child = tracer.start_span(name, context=ctx, kind=kind, start_time=t + i * 1000, attributes=attrs)
            child.end(end_time=t + i * 1000 + 900)
        root.end(end_time=t + 4000)
        t += 5000
    return spans


def bench_frames(n: int) -> list[tuple[str, float]]:
    spans = make_spans(n)
    rows_n = len(spans)
    results: list[tuple[str, float]] = []
    secs, _ = best_of(lambda: [i * 2 for i in range(1_000_000)])
    results.append(("(machine speed reference: a 1M-item list comprehension)", secs))
    _setup._active["span_store"] = spans  # what configure_otel_providers(store=None) would do
    start = clock()
    import pandas  # noqa: F401  - the first traces() call in a process pays for this import once

    results.append(("(import pandas, once per process)", clock() - start))
    gc.collect()
    start = clock()
    frame = traces(source="memory")
    results.append((f"traces(): {rows_n:,} spans in memory -> DataFrame, cold", clock() - start))
    assert len(frame) == rows_n
    secs, frame = best_of(lambda: traces(source="memory"))
    results.append(("traces(): same, spans already converted (warm)", secs))
    secs, records = best_of(spans.frame_records)
    secs, frame = best_of(lambda: records_frame(records, attributes_filtered=True))
    results.append(("  of which: records -> DataFrame", secs))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        store = RunStore(path)
        start = clock()
        encoded = SpanStore._encode(spans.spans())  # pyright: ignore[reportPrivateUsage]
        for i in range(0, len(encoded), 512):
            store.add_span_records(encoded[i : i + 512])
        results.append(("encode + write to SQLite in batches of 512", clock() - start))
        secs, frame = best_of(lambda: traces(store=store))
        assert len(frame) == rows_n
        results.append(("traces(store=...): SQLite run store -> DataFrame", secs))
        secs, frame = best_of(lambda: traces(store=store, last=10))
        results.append(("SQLite, last=10 runs -> DataFrame", secs))
        store.close()
    return results


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return "value"


def _agent() -> Agent:
    replies = [ScriptedChatClient.call("lookup", key="k"), "Done."]
    client = ScriptedChatClient(replies * 1_000_000)
    return Agent(client, name="bench", tools=[lookup])


async def per_turn_us(turn: Callable[[], Awaitable[Any]], *, turns: int = 400, rounds: int = 5) -> float:
    for _ in range(50):
        await turn()
    results = []
    for _ in range(rounds):
        gc.collect()
        start = clock()
        for _ in range(turns):
            await turn()
        results.append((clock() - start) / turns * 1e6)
    return statistics.median(results)


async def bench_turns() -> list[tuple[str, float]]:
    from agentnb.observability import configure_otel_providers, disable_instrumentation, enable_instrumentation

    agent = _agent()

    async def turn() -> None:
        await agent.run("go")

    results = []
    disable_instrumentation()
    results.append(("tracing off", await per_turn_us(turn)))
    enable_instrumentation()  # no SDK provider yet: the API hands out non-recording spans
    results.append(("on, no SDK provider (no-op spans)", await per_turn_us(turn)))
    memory = configure_otel_providers(store=None)
    assert memory is not None
    results.append(("on, SDK + span store in memory", await per_turn_us(turn)))
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "turns.db")
        sqlite_spans = SpanStore(store)
        enable_instrumentation(span_store=sqlite_spans)
        memory.shutdown()  # keep one span store active: this row measures the SQLite one
        results.append(("on, SDK + span store writing to SQLite", await per_turn_us(turn)))
        sqlite_spans.shutdown()
        written = sqlite_spans.written
        store.close()
    assert written > 0
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    args = parser.parse_args()

    print(f"\nSpans -> DataFrame ({args.spans:,} spans)")
    print(f"{'step':<56}{'CPU s':>10}")
    for label, secs in bench_frames(args.spans):
        print(f"{label:<56}{secs:>10.3f}")

    print("\nTracing overhead per agent turn (model call, tool call, model call; offline model)")
    print(f"{'mode':<56}{'CPU µs/turn':>12}")
    rows = asyncio.run(bench_turns())
    base = rows[0][1]
    for label, us in rows:
        print(f"{label:<56}{us:>12.0f}   (+{us - base:.0f} µs)")


if __name__ == "__main__":
    main()
