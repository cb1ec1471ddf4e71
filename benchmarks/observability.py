"""Observability costs, each next to its goal: tracing per agent turn, the span store, and spans as DataFrames.

Run: ``python benchmarks/observability.py [--spans N] [--store-spans M] [--quick]``. Three tables:

1. microseconds per agent turn (one model call, one tool call, a second model call) on the offline
   ``ScriptedChatClient``: tracing off; on with no SDK provider; on with the SDK and the span store in memory
   (agentnb's light spans, as the span store is the provider's only processor; and SDK spans, as when an
   exporter sits beside it); on with the span store writing to SQLite (its writer thread's CPU included, and
   what the turns queued written before the round's clock stops); and the floor, the OpenTelemetry SDK's own
   cost for the same four spans (same names, kinds, attributes and nesting, copied from a traced turn) on a
   ``TracerProvider`` with ``SimpleSpanProcessor`` + ``InMemorySpanExporter``, measured in the same run. The
   floor is shown twice: alone in a tight loop (the goal's reference), and made right after each untraced
   turn, minus that turn, which is where traced spans are made (the CPU's caches then hold the agent's code,
   not the SDK's);
2. the span store's writer: encoding and writing N spans (default 100,000) to SQLite in batches, beside
   SQLite's own floor (the same rows into a bare table), and a burst of N spans through a live
   ``SpanStore`` (dropped spans counted);
3. ``traces()`` for N spans (memory: cold, and from the default store, which converts each span as it
   ends; SQLite, by columns and by rows), and on a store of M spans (default 1,000,000):
   ``traces(last=10)``, the trace list the DevUI opens (``list_traces(limit=200)``), and the Python memory
   that opening and querying that store costs.

Times are CPU time of this process, background threads included (the fastest of 9 rounds for turns, the rows
taking turns round by round so that a busy spell falls on all of them; best of 3 otherwise), so a busy
shared machine does not inflate them. The tracing modes share one global provider (OpenTelemetry lets a
process set it once) whose span processor is swapped between rows.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, set_span_in_context

from agentnb import Agent, tool
from agentnb import _telemetry as tel
from agentnb.local import ScriptedChatClient
from agentnb.observability import (
    RECORD_COLUMNS,
    SpanStore,
    _setup,
    disable_instrumentation,
    enable_instrumentation,
    traces,
)
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


def row(label: str, value: float, unit: str, goal: str = "", ok: bool | None = None) -> None:
    verdict = "" if ok is None else ("met" if ok else "NOT MET")
    print(f"{label:<58}{value:>12,.3f} {unit:<8}{goal:<30}{verdict}")


def header(title: str) -> None:
    print(f"\n{title}")
    print(f"{'':<58}{'measured':>12} {'':<8}{'goal':<30}")


# --- 1. tracing per turn ----------------------------------------------------------------------------------


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return "value"


def _agent() -> Agent:
    replies = [ScriptedChatClient.call("lookup", key="k"), "Done."]
    return Agent(ScriptedChatClient(replies * 1_000_000), name="bench", tools=[lookup])


class _Swap:
    """The global provider's one span processor; each benchmark row installs its own behind it.

    The row's processor methods are bound onto this object, so the SDK calls them directly (no forwarding
    call per span that the floor, on a provider of its own, would not pay).
    """

    def __init__(self) -> None:
        self.set(None)

    def set(self, target: Any, *, light: bool = True) -> None:
        self.on_start: Callable[..., None] = target.on_start if target is not None else _ignore
        self.on_end: Callable[[ReadableSpan], None] = target.on_end if target is not None else _ignore
        self._on_ending: Callable[[Any], None] = getattr(target, "_on_ending", _ignore)
        # A span store accepts agentnb's light spans (unless the row says otherwise, as when an exporter
        # sits beside it); the floor's SimpleSpanProcessor does not.
        self.accepts_light_spans = light and bool(getattr(target, "accepts_light_spans", False))

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


Mode = tuple[Callable[[], None], Callable[[], Awaitable[Any]], Callable[[], None]]
"""What a row runs: a setup (installs its processor), one turn, and a finish run inside the timing."""


async def per_turn_us(modes: dict[str, Mode], *, turns: int, rounds: int = 9) -> dict[str, float]:
    """The fastest round's CPU µs per turn of each mode, the modes taking turns round by round.

    Interleaving the rows means a busy spell on the machine, or the process heap growing, falls on all of
    them alike instead of on whichever row happened to run then; and as other processes on the machine only
    ever add to a round's CPU time (shared caches and cores), the fastest round is the one they disturbed
    least.
    """
    samples: dict[str, list[float]] = {name: [] for name in modes}
    for round_ in range(rounds + 1):
        for name, (setup, turn, finish) in modes.items():
            setup()
            for _ in range(20):
                await turn()
            finish()
            gc.collect()
            start = clock()
            for _ in range(turns):
                await turn()
            finish()  # e.g. the SQLite row's writer writing what its turns queued: part of their cost
            if round_:  # the first round warms up
                samples[name].append((clock() - start) / turns * 1e6)
    return {name: min(values) for name, values in samples.items()}


def _replay(spans: Sequence[ReadableSpan]) -> Callable[[], None]:
    """A function that makes the same spans (names, kinds, attributes, nesting) on a bare SDK provider."""
    provider = TracerProvider(resource=Resource.create({"service.name": "floor"}), shutdown_on_exit=False)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("floor")
    by_id = {s.context.span_id: s for s in spans}
    root = next(s for s in spans if s.parent is None or s.parent.span_id not in by_id)
    children = [s for s in spans if s is not root]
    children.sort(key=lambda s: s.start_time or 0)
    plan = [(c.name, c.kind, dict(c.attributes or {})) for c in children]
    root_plan = (root.name, root.kind, dict(root.attributes or {}))

    def turn() -> None:
        top = tracer.start_span(root_plan[0], kind=root_plan[1], attributes=root_plan[2])
        context = set_span_in_context(top)
        for name, kind, attributes in plan:
            tracer.start_span(name, context=context, kind=kind, attributes=attributes).end()
        top.end()
        if len(exporter._finished_spans) > 10_000:  # pyright: ignore[reportPrivateUsage] - keep memory flat
            exporter.clear()

    return turn


async def bench_turns(turns: int) -> dict[str, float]:
    agent = _agent()

    async def turn() -> None:
        await agent.run("go")

    swap = _Swap()
    provider = TracerProvider(resource=Resource.create({"service.name": "bench"}), shutdown_on_exit=False)
    provider.add_span_processor(swap)  # pyright: ignore[reportArgumentType]

    # Before the provider is set: instrumentation on with only the API's no-op provider, beside a baseline
    # of its own (the process cannot go back to having no provider afterwards).
    def on() -> None:
        enable_instrumentation(span_store=False, force=True)

    noop = await per_turn_us(
        {"off0": (disable_instrumentation, turn, lambda: None), "noop": (on, turn, lambda: None)}, turns=turns
    )
    disable_instrumentation()
    trace.set_tracer_provider(provider)

    enable_instrumentation(span_store=False, force=True)
    probe = InMemorySpanExporter()
    swap.set(SimpleSpanProcessor(probe))
    await turn()
    recorded = list(probe.get_finished_spans())
    assert sorted(s.name.split()[0] for s in recorded) == ["chat", "chat", "execute_tool", "invoke_agent"], recorded
    replay = _replay(recorded)
    disable_instrumentation()

    async def floor_turn() -> None:
        replay()

    async def turn_then_floor() -> None:
        await agent.run("go")
        replay()

    memory = SpanStore(None, max_spans=100_000)
    tmp = tempfile.TemporaryDirectory()
    store = RunStore(Path(tmp.name) / "turns.db")
    sqlite_spans = SpanStore(store)

    def tracing_to(target: Any, *, light: bool = True) -> Callable[[], None]:
        def setup() -> None:
            swap.set(target, light=light)
            _setup._active["span_store"] = target  # pyright: ignore[reportPrivateUsage]
            if target is None:
                disable_instrumentation()
            else:
                enable_instrumentation(span_store=False, force=True)

        return setup

    untraced = tracing_to(None)
    results = await per_turn_us(
        {
            "off": (untraced, turn, lambda: None),
            "floor": (untraced, floor_turn, lambda: None),
            "off+floor": (untraced, turn_then_floor, lambda: None),
            "memory": (tracing_to(memory), turn, lambda: None),
            "memory-sdk": (tracing_to(memory, light=False), turn, lambda: None),
            "sqlite": (tracing_to(sqlite_spans), turn, lambda: sqlite_spans.force_flush()),
        },
        turns=turns,
    )
    results |= noop
    swap.set(None)
    memory.shutdown()
    sqlite_spans.shutdown()
    written, dropped = sqlite_spans.written, sqlite_spans.dropped
    store.close()
    tmp.cleanup()
    assert written > 0 and dropped == 0, (written, dropped)
    disable_instrumentation()
    return results


def report_turns(r: dict[str, float]) -> None:
    header("1. Tracing overhead per agent turn (model call, tool call, model call; offline model), CPU µs")
    off = r["off"]
    row("tracing off", off, "µs/turn")
    # The no-op row runs first (before the process has an SDK provider), beside a baseline of its own.
    noop = r["noop"] - r["off0"]
    row("on, no SDK provider: overhead", noop, "µs/turn", "<= +5 µs", noop <= 5)
    floor = r["floor"]
    row("SDK floor: same 4 spans, Simple + InMemory exporter", floor, "µs/turn")
    in_turn = r["off+floor"] - off
    row("  ... the same spans made right after an untraced turn", in_turn, "µs/turn")
    mem = r["memory"] - off
    row("on, SDK + span store in memory: overhead", mem, "µs/turn", "<= +80 µs", mem <= 80)
    row("  ... as a multiple of the SDK floor", mem / floor, "x", "<= 1.3x the floor", mem <= 1.3 * floor)
    row("  ... as a multiple of the floor made after a turn", mem / in_turn, "x", "(same spans, same caches)")
    sdk = r["memory-sdk"] - off
    row("  ... with SDK spans (as when an exporter is attached too)", sdk, "µs/turn")
    sql = r["sqlite"] - off
    row("on, SDK + span store writing to SQLite: overhead", sql, "µs/turn", "<= +100 µs", sql <= 100)


# --- 2. the writer ----------------------------------------------------------------------------------------


def make_spans(n: int) -> list[ReadableSpan]:
    """``n`` realistic finished spans: agent turns of one agent span, two chat spans and one tool span."""
    sink = SpanStore(None, max_spans=n, precompute=False)
    provider = TracerProvider(resource=Resource.create({"service.name": "bench"}), shutdown_on_exit=False)
    provider.add_span_processor(sink)  # pyright: ignore[reportArgumentType]
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
            attrs: dict[str, Any] = {tel.GEN_AI_AGENT_NAME: agent, tel.GEN_AI_CONVERSATION_ID: f"s{turn % 100}"}
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
    return sink.spans()


def _bare_insert(records: list[tuple[Any, ...]], path: Path, *, default_none: bool = False) -> float:
    """CPU seconds SQLite itself takes to store ``records`` in a table of the span columns with nothing else:
    no id, key, constraint or index, WAL with synchronous=NORMAL like the run store, batches of 512.

    The run store registers a sqlite3 adapter for ``None`` (one C call instead of a failed adapter lookup);
    ``default_none`` measures without it, as sqlite3 binds ``None`` on its own.
    """
    key = (type(None), sqlite3.PrepareProtocol)
    adapter = sqlite3.adapters.pop(key, None) if default_none else None
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"CREATE TABLE spans ({', '.join(RECORD_COLUMNS)})")
        sql = f"INSERT INTO spans VALUES ({', '.join('?' * len(RECORD_COLUMNS))})"
        gc.collect()
        start = clock()
        for i in range(0, len(records), 512):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(sql, records[i : i + 512])
            conn.execute("COMMIT")
        elapsed = clock() - start
        conn.close()
    finally:
        if adapter is not None:
            sqlite3.adapters[key] = adapter
    return elapsed


def bench_writer(spans: list[ReadableSpan], tmp: Path) -> None:
    header(f"2. The span store's writer ({len(spans):,} spans)")
    n = len(spans)
    start = clock()
    encoded = SpanStore._encode(spans)  # pyright: ignore[reportPrivateUsage]
    encode = clock() - start
    store = RunStore(tmp / "writer.db")
    start = clock()
    for i in range(0, n, 512):
        store.add_span_records(encoded[i : i + 512])
    write = clock() - start
    store.close()
    per_span = (encode + write) / n * 1e6
    bare = _bare_insert(encoded, tmp / "bare.db")
    bare_default = _bare_insert(encoded, tmp / "bare-default.db", default_none=True)
    row("encode spans -> records", encode / n * 1e6, "µs/span")
    row("write records to SQLite, batches of 512, one transaction each", write / n * 1e6, "µs/span")
    row("  (SQLite floor: same rows, bare INSERT, no key or index)", bare / n * 1e6, "µs/span")
    row("  (the same floor binding None the sqlite3 default way)", bare_default / n * 1e6, "µs/span")
    row("writer throughput (encode + write)", 1e6 / per_span, "spans/s", ">= 200,000 spans/s", per_span <= 5)

    # A burst through a live span store: the traced code only appends; the thread writes behind it.
    store = RunStore(tmp / "burst.db")
    span_store = SpanStore(store, max_spans=1000)
    start = clock()
    for span in spans:
        span_store.on_end(span)
    appended = clock() - start
    span_store.shutdown()
    stored = store.watermark()["spans"]
    store.close()
    row("burst: on_end() in the traced code", appended / n * 1e6, "µs/span")
    row("burst: spans dropped", span_store.dropped, "spans", "0", span_store.dropped == 0 and stored == n)


# --- 3. reading -------------------------------------------------------------------------------------------


def bench_frames(spans: list[ReadableSpan], tmp: Path) -> None:
    n = len(spans)
    header(f"3. Reading spans ({n:,} spans)")
    secs, _ = best_of(lambda: [i * 2 for i in range(1_000_000)])
    row("(machine speed reference: a 1M-item list comprehension)", secs, "s")
    start = clock()
    import pandas  # the first traces() call in a process pays for this import once
    import pandas.testing

    row("(import pandas, once per process)", clock() - start, "s")
    # Cold: a store made with precompute=False keeps the SDK's spans only, so the first read converts them.
    lazy = SpanStore(None, max_spans=n, precompute=False)
    for span in spans:
        lazy.on_end(span)
    _setup._active["span_store"] = lazy  # pyright: ignore[reportPrivateUsage] - what store=None sets up
    gc.collect()
    start = clock()
    frame = traces(source="memory")
    cold = clock() - start
    assert len(frame) == n
    row("traces() from memory, cold (every span converted now)", cold, "s", "< 0.3 s", cold < 0.3)
    lazy.shutdown()
    # The default memory store converts each span as it ends (that cost is in the per-turn rows above).
    memory = SpanStore(None, max_spans=n)
    for span in spans:
        memory.on_end(span)
    _setup._active["span_store"] = memory  # pyright: ignore[reportPrivateUsage]
    warm, frame = best_of(lambda: traces(source="memory"))
    assert len(frame) == n
    row("traces() from memory, default store (pre-converted)", warm, "s", "< 0.3 s", warm < 0.3)
    store = RunStore(tmp / "frames.db")
    encoded = SpanStore._encode(spans)  # pyright: ignore[reportPrivateUsage]
    for i in range(0, n, 512):
        store.add_span_records(encoded[i : i + 512])
    secs, frame = best_of(lambda: traces(store=store))
    assert len(frame) == n
    row("traces(store=...) from SQLite", secs, "s", "< 0.4 s", secs < 0.4)
    # The same read by rows: what PostgreSQL does, and SQLite when a stored value cannot travel as text.
    by_rows = _RowStore(tmp / "frames.db")
    secs, rows_frame = best_of(lambda: traces(store=by_rows))
    pandas.testing.assert_frame_equal(frame, rows_frame)
    row("   ... read by rows (PostgreSQL's way, and the fallback)", secs, "s")
    by_rows.close()
    store.close()
    memory.shutdown()


class _RowStore(RunStore):
    """A SQLite store that hands no columns over, so ``traces()`` reads it row by row."""

    def select_span_columns(self, *args: Any, **kwargs: Any) -> None:
        return None


def _grow(encoded: list[tuple[Any, ...]], total: int) -> list[list[tuple[Any, ...]]]:
    """Copies of ``encoded`` with fresh trace ids, in batches, until there are ``total`` spans."""
    batches, made, copy = [], 0, 0
    while made < total:
        prefix = f"{copy:08x}"
        batch = [(prefix + r[0][8:], *r[1:]) for r in encoded[: total - made]]
        batches.append(batch)
        made += len(batch)
        copy += 1
    return batches


def bench_big_store(spans: list[ReadableSpan], total: int, tmp: Path) -> None:
    header(f"   ... on a store of {total:,} spans")
    path = tmp / "big.db"
    store = RunStore(path)
    encoded = SpanStore._encode(spans)  # pyright: ignore[reportPrivateUsage]
    start = time.perf_counter()
    for batch in _grow(encoded, total):
        for i in range(0, len(batch), 5000):
            store.add_span_records(batch[i : i + 5000])
    store.close()
    print(f"  (built in {time.perf_counter() - start:.0f} s wall)")
    gc.collect()
    tracemalloc.start()
    store = RunStore(path)
    frame = traces(store=store, last=10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert frame["trace_id"].nunique() == 10
    row("Python memory: open the store + traces(last=10)", peak / 2**20, "MiB", "~0 (nothing loaded)", peak < 2**24)
    secs, frame = best_of(lambda: traces(store=store, last=10))
    row("traces(store=..., last=10)", secs * 1000, "ms", "< 50 ms", secs < 0.05)
    secs, listed = best_of(lambda: store.list_traces(limit=200))
    assert len(listed) == 200
    row("DevUI trace list: list_traces(limit=200)", secs * 1000, "ms", "< 1 s", secs < 1)
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--store-spans", type=int, default=1_000_000)
    parser.add_argument("--turns", type=int, default=400, help="agent turns per timed round")
    parser.add_argument("--quick", action="store_true", help="10,000 spans, a 100,000-span store, 100 turns")
    args = parser.parse_args()
    if args.quick:
        args.spans, args.store_spans, args.turns = 10_000, 100_000, 100

    print(f"{'':<58}{'':>12} {'':<8}{'':<30}verdict")
    report_turns(asyncio.run(bench_turns(args.turns)))
    spans = make_spans(args.spans)
    with tempfile.TemporaryDirectory() as tmp:
        bench_writer(spans, Path(tmp))
        bench_frames(spans, Path(tmp))
        bench_big_store(spans, args.store_spans, Path(tmp))


if __name__ == "__main__":
    main()
