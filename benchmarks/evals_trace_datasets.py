"""Trace-reading scorers and datasets from stored runs: what they cost at scale.

Run from the repository root::

    python benchmarks/evals_trace_datasets.py            # 10,000 stored cases, 100,000 stored runs
    python benchmarks/evals_trace_datasets.py --quick    # 1,000 and 10,000 (a smoke test)

Sections:

1. **Trace-reading scorers per case.** 10,000 stored cases (each a tool-calling conversation: the question,
   a tool call, its result, the answer) are read back from a SQLite run store and scored by ``tool_path``,
   ``max_model_calls``, ``tokens_under`` and ``cost_under``, which rebuild each case's trace from its stored
   conversation. The per-case time is the scoring loop (rebuilding the result from its stored record, the
   trace, four scorers) divided by the cases; reading the rows from the store is reported apart. Goal: under
   100 µs a case.
2. **A dataset from 100,000 stored runs.** 100,000 batch runs (input and output events) in a SQLite run
   store; ``dataset_from_runs(agent=...)`` selects them all and reads each run's input and answer. Goal:
   under 2 s.

Each timing is the median of three rounds, wall clock (``time.perf_counter``), on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentnb import Content, Message
from agentnb.evals import CaseResult, EvalCase, dataset_from_runs, scorers
from agentnb.evals._run import case_row, score_case
from agentnb.store import RunStore


def _conversation(i: int) -> list[dict[str, Any]]:
    city = f"City{i % 97}"
    return [
        Message("user", [f"Weather in {city}?"]).to_dict(),
        Message("assistant", [Content.from_function_call(f"c{i}", "get_weather", f'{{"city": "{city}"}}')]).to_dict(),
        Message("tool", [Content.from_function_result(f"c{i}", f"sunny in {city}")]).to_dict(),
        Message("assistant", [f"It is sunny in {city}."]).to_dict(),
    ]


def _stored_cases(store: RunStore, n: int) -> None:
    store.put_experiment("bench", status="completed", metadata={"scorers": []})
    rows = []
    for i in range(n):
        case = EvalCase(str(i), f"Weather in City{i % 97}?", position=i)
        result = CaseResult(
            str(i),
            output=f"It is sunny in City{i % 97}.",
            input_tokens=40 + i % 7,
            output_tokens=12,
            latency_ms=3.0,
            tool_calls=[{"name": "get_weather", "arguments": {"city": f"City{i % 97}"}}],
            messages=_conversation(i),
        )
        rows.append(case_row(case, result))
    store.add_experiment_cases("bench", rows)


def _median(times: list[float]) -> float:
    return statistics.median(times)


async def _score_all(rows: list[dict[str, Any]], checks: list[Any]) -> None:
    columns: dict[str, list[str]] = {}
    for row in rows:
        data = row["data"]
        case = EvalCase(row["case_id"], data["input"], position=row["position"])
        await score_case(checks, case, CaseResult.from_record(data["result"]), columns)


def trace_scorers(n: int) -> tuple[float, float, float]:
    """(µs per case scoring with the trace scorers, µs per case without scorers, ms to read the rows)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "bench.db")
        _stored_cases(store, n)
        reads: list[float] = []
        for _ in range(3):
            started = time.perf_counter()
            rows = store.list_experiment_cases("bench")
            reads.append(time.perf_counter() - started)
        checks = [
            scorers.tool_path([("get_weather", {"city": "City1"})], "any_order"),
            scorers.max_model_calls(2),
            scorers.tokens_under(100),
            scorers.cost_under(0.01, {"gpt-4o-mini": (0.15, 0.60)}),
        ]
        with_scorers: list[float] = []
        without: list[float] = []
        for _ in range(3):
            started = time.perf_counter()
            asyncio.run(_score_all(rows, checks))
            with_scorers.append(time.perf_counter() - started)
            started = time.perf_counter()
            asyncio.run(_score_all(rows, []))
            without.append(time.perf_counter() - started)
        store.close()
    return _median(with_scorers) / n * 1e6, _median(without) / n * 1e6, _median(reads) * 1e3


def dataset_build(n: int) -> float:
    """Seconds ``dataset_from_runs`` takes over ``n`` stored batch runs."""
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.db")
        now = time.time()
        batch = [
            {
                "run_id": f"run-{i:08d}",
                "kind": "agent",
                "name": "geo",
                "status": "completed",
                "started_at": now - n + i,
                "ended_at": now - n + i + 0.5,
                "metadata": {"via": "evals", "case_id": str(i)},
                "events": [
                    {"type": "input", "data": {"input": f"Capital of country {i}?"}, "timestamp": now},
                    {"type": "output", "data": {"output": f"City {i}", "status": "ok"}},
                ],
            }
            for i in range(n)
        ]
        for start in range(0, n, 10_000):
            store.add_runs(batch[start : start + 10_000])
        times: list[float] = []
        for _ in range(3):
            started = time.perf_counter()
            data = dataset_from_runs(agent="geo", store=store)
            times.append(time.perf_counter() - started)
            assert len(data) == n and data.rows[0]["expected"].startswith("City")
        store.close()
    return _median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    cases, runs = (1_000, 10_000) if args.quick else (10_000, 100_000)
    per_case, baseline, read_ms = trace_scorers(cases)
    build_s = dataset_build(runs)
    print("| measurement | size | result | goal |\n|---|---:|---:|---:|")
    print(f"| scoring with 4 trace scorers, per case | {cases:,} cases | {per_case:.1f} µs | < 100 µs |")
    print(
        f"| of which the trace scorers (minus scoring with none) | {cases:,} cases | {per_case - baseline:.1f} µs | |"
    )
    print(f"| reading the stored cases (apart) | {cases:,} cases | {read_ms:.0f} ms | |")
    print(f"| dataset_from_runs | {runs:,} runs | {build_s:.2f} s | < 2 s |")


if __name__ == "__main__":
    main()
