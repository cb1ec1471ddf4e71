"""The run store on PostgreSQL next to SQLite: checkpoints, a checkpointed workflow, and 100,000 spans.

Run: ``python benchmarks/store_postgres.py [--spans N] [--checkpoints N] [--url postgresql://...]``.
Without ``--url`` it starts a throwaway PostgreSQL server on loopback (Debian's ``postgresql`` package, as
the tests do) with default settings, and removes it afterwards; it measures the store on that server as is
(every commit waits for the disk flush, which on slow disks dominates) and with ``synchronous_commit=off``
set through the URL (what SQLite's ``synchronous=NORMAL`` trades: commits survive the client crashing, the
last fraction of a second may not survive the server crashing). Prints three tables:

1. one checkpoint of the 100-step chain saved and loaded back through ``RunStoreCheckpointStorage``
   (p50 / p95 per checkpoint, milliseconds), and on PostgreSQL the floor under it: the same JSON text
   written by a bare ``INSERT`` (autocommit, one round trip, one commit) and read back by primary key
   with psycopg on the same server, so the framework's overhead over the server and disk shows;
2. the 100-step chain checkpointing after every step (workload 7 of ``benchmarks/peers``), ms per run;
3. N realistic spans (agent turns: agent, chat, tool, chat) encoded and written in the span store's batches
   of 512, then read back with ``agentnb.traces(store=...)`` as a DataFrame.

Times are wall-clock (the database server is another process, so this process's CPU time would leave
the server's work out); on a shared machine, run it twice and trust the lower numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from observability import make_spans  # noqa: E402

from agentnb.observability import SpanStore, traces  # noqa: E402
from agentnb.observability._frames import _SOURCE as SOURCE  # noqa: E402  # pyright: ignore[reportPrivateUsage]
from agentnb.observability._frames import records_frame  # noqa: E402
from agentnb.store import Store, open_store  # noqa: E402
from agentnb.workflows import (  # noqa: E402
    Executor,
    InMemoryCheckpointStorage,
    RunStoreCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowCheckpoint,
    WorkflowContext,
    handler,
)

WIDTH = 100
Row = dict[str, Any]


class Step(Executor):
    @handler
    async def step(self, n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)


class Last(Executor):
    @handler
    async def last(self, n: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(n + 1)


def chain(storage: Any) -> Workflow:
    nodes: list[Executor] = [Step(f"s{i}") for i in range(WIDTH - 1)]
    nodes.append(Last("last"))
    builder = WorkflowBuilder(start_executor=nodes[0], checkpoint_storage=storage, max_iterations=WIDTH + 5)
    return builder.add_chain(nodes).build()


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[list[tuple[str, str]]]:
    """Yield (label, URL) pairs: the server as configured, and the same without waiting for the disk flush."""
    if url:
        yield [("PostgreSQL", url)]
        return
    from tests.store.pg_server import running_postgres

    with running_postgres() as server:
        SERVER["pid"] = int((server.data / "postmaster.pid").read_text().split()[0])
        durable = server.url(schema=server.fresh_schema())
        # libpq's options parameter: the session's commits return before the WAL reaches the disk.
        relaxed = server.url(schema=server.fresh_schema()) + "%20-csynchronous_commit%3Doff"
        yield [("PostgreSQL", durable), ("PG, sync_commit=off", relaxed)]


SERVER: dict[str, int] = {}
"""``pid``: the throwaway server's postmaster (absent with ``--url``): its processes' CPU time is the server's work."""


def server_cpu() -> float:
    """CPU seconds used so far by the throwaway server: the postmaster, its live children (backends, WAL
    writer, checkpointer, ...) and the children it reaped (parallel workers); 0 without a server of our own.

    On a shared machine wall time also counts the time the server waited for a core; this does not.
    """
    postmaster = SERVER.get("pid")
    if postmaster is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        elif ppid == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def sample_checkpoints() -> list[WorkflowCheckpoint]:
    memory = InMemoryCheckpointStorage()
    await chain(memory).run(0)
    return list(await memory.list_checkpoints())


async def bench_checkpoints(store: Store, samples: list[WorkflowCheckpoint], n: int, floor_url: str | None) -> Row:
    """Save and load checkpoints through the storage; with ``floor_url``, the bare floor interleaved with it.

    Interleaving (one store save+load, then one bare INSERT+SELECT) exposes both to the same moments of
    a shared machine's load, so their difference is the store's overhead rather than the neighbours' noise.
    """
    storage = RunStoreCheckpointStorage(store)
    save_ms, load_ms, both_ms, floor_save_ms, floor_both_ms = [], [], [], [], []
    floor = await _floor_connection(floor_url) if floor_url else None
    try:
        for i in range(n):
            cp = samples[i % len(samples)]
            cp = WorkflowCheckpoint.from_dict({**cp.to_dict(), "checkpoint_id": f"bench-{i}"})
            t0 = time.perf_counter()
            await storage.save(cp)
            t1 = time.perf_counter()
            await storage.load(cp.checkpoint_id)
            t2 = time.perf_counter()
            save_ms.append((t1 - t0) * 1e3)
            load_ms.append((t2 - t1) * 1e3)
            both_ms.append((t2 - t0) * 1e3)
            if floor is not None:
                text = cp.to_json()
                t0 = time.perf_counter()
                await floor.execute("INSERT INTO bench_floor VALUES (%s, %s)", (cp.checkpoint_id, text))
                t1 = time.perf_counter()
                await (
                    await floor.execute("SELECT data FROM bench_floor WHERE id = %s", (cp.checkpoint_id,))
                ).fetchone()
                t2 = time.perf_counter()
                floor_save_ms.append((t1 - t0) * 1e3)
                floor_both_ms.append((t2 - t0) * 1e3)
    finally:
        if floor is not None:
            await floor.execute("DROP TABLE bench_floor")
            await floor.close()
    row: Row = {
        "save p50": pct(save_ms, 0.5),
        "load p50": pct(load_ms, 0.5),
        "save+load p50": pct(both_ms, 0.5),
        "save+load p95": pct(both_ms, 0.95),
    }
    if floor is not None:
        row |= {"floor save p50": pct(floor_save_ms, 0.5), "floor save+load p50": pct(floor_both_ms, 0.5)}
    return row


async def _floor_connection(url: str) -> Any:
    """A bare psycopg connection and table: INSERT (autocommit) and SELECT by key, what no store can beat."""
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    # A regular table: a temporary one skips the write-ahead log, and so the disk flush being measured.
    await conn.execute("DROP TABLE IF EXISTS bench_floor")
    await conn.execute("CREATE TABLE bench_floor (id TEXT PRIMARY KEY, data TEXT NOT NULL)")
    return conn


async def bench_chain(store: Store, runs: int) -> float:
    workflow = chain(RunStoreCheckpointStorage(store))
    assert (await workflow.run(0)).get_outputs() == [WIDTH]
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await workflow.run(0)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


class Clock:
    """Wall time, this process's CPU time and the server's CPU time of one timed block, in seconds."""

    def __enter__(self) -> Clock:
        gc.collect()
        self._start = (time.perf_counter(), time.process_time(), server_cpu())
        return self

    def __exit__(self, *exc: object) -> None:
        end = (time.perf_counter(), time.process_time(), server_cpu())
        self.wall, self.cpu, self.server = (b - a for a, b in zip(self._start, end, strict=True))


def bench_spans(store: Store, encoded: list[tuple[Any, ...]]) -> Row:
    with Clock() as write:
        for i in range(0, len(encoded), 512):
            store.add_span_records(encoded[i : i + 512])
    row: Row = {"write": write}
    # The whole read (traces()), then its two halves: the store's query and the DataFrame built from its rows.
    for key, read in (("read", lambda: traces(store=store)), ("query", lambda: store.select_spans(SOURCE))):
        runs: list[Clock] = []
        for _ in range(3):
            with Clock() as clock:
                result = read()
            assert len(result) == len(encoded), (len(result), len(encoded))
            runs.append(clock)
        row[key] = min(runs, key=lambda c: c.wall)
    records = store.select_spans(SOURCE)
    frames: list[Clock] = []
    for _ in range(3):
        with Clock() as clock:
            records_frame(records)
        frames.append(clock)
    row["frame"] = min(frames, key=lambda c: c.wall)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=100_000)
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--url", help="an existing PostgreSQL store URL (else a throwaway server is started)")
    parser.add_argument(
        "--parts", default="checkpoints,chain,spans", help="comma-separated: checkpoints, chain, spans (default: all)"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))

    samples = asyncio.run(sample_checkpoints())
    size = statistics.median(len(cp.to_json()) for cp in samples)
    spans = make_spans(args.spans)
    encoded = SpanStore._encode(spans)  # pyright: ignore[reportPrivateUsage]
    import pandas  # noqa: F401  - imported once, outside the timings

    results: dict[str, Row] = {}
    with postgres(args.url) as servers, tempfile.TemporaryDirectory() as tmp:
        for label, target in [("SQLite (file, WAL)", f"sqlite://{Path(tmp).as_posix()}/bench.db"), *servers]:
            store = open_store(target)
            row: Row = {}
            try:
                if "checkpoints" in parts:
                    floor_url = target if store.backend == "postgresql" else None
                    row |= asyncio.run(bench_checkpoints(store, samples, args.checkpoints, floor_url))
                if "chain" in parts:
                    row["chain ms/run"] = asyncio.run(bench_chain(store, args.runs))
                if "spans" in parts:
                    row |= bench_spans(store, encoded)
            finally:
                store.close()
            results[label] = row

    if "checkpoints" in parts:
        print_checkpoints(results, args.checkpoints, size)
    if "chain" in parts:
        print(f"\nWorkload 7: {WIDTH}-step chain, checkpoint after every step (median of {args.runs} runs)")
        for label, row in results.items():
            print(f"{label:<22}{row['chain ms/run']:>10.1f} ms/run  ({row['chain ms/run'] / WIDTH:.3f} ms per step)")
    if "spans" in parts:
        print_spans(results, len(encoded))


def print_spans(results: dict[str, Row], n: int) -> None:
    print(f"\nSpans: {n:,} written in batches of 512, then read back as a DataFrame, s")
    print("(wall time; CPU time of this process + of the server beside it; reads: best of 3)")
    print("  read = traces(store=...); query = store.select_spans() alone; frame = records_frame() on its rows")
    for label, row in results.items():
        cells = []
        for key in ("write", "read", "query", "frame"):
            c: Clock = row[key]
            cells.append(f"{key} {c.wall:5.2f} ({c.cpu:.2f} + {c.server:.2f} cpu)")
        print(f"{label:<22}" + "   ".join(cells))


def print_checkpoints(results: dict[str, Row], n: int, size: float) -> None:
    print(f"\nCheckpoints: {n} of the {WIDTH}-step chain (median {size / 1024:.1f} KiB of JSON), ms")
    keys = ["save p50", "load p50", "save+load p50", "save+load p95"]
    print(f"{'backend':<22}" + "".join(f"{k:>16}" for k in keys))
    for label, row in results.items():
        print(f"{label:<22}" + "".join(f"{row[k]:>16.3f}" for k in keys))
    print("Floor: a bare INSERT (autocommit) and SELECT by key of the same JSON with psycopg, same server, ms")
    for label, row in results.items():
        if "floor save p50" in row:
            over = row["save+load p50"] - row["floor save+load p50"]
            print(
                f"{label:<22}{row['floor save p50']:>10.3f} save{row['floor save+load p50']:>10.3f} save+load"
                f"   store overhead over the floor: {over:+.3f} ms"
            )


if __name__ == "__main__":
    main()
