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
   The same again with the traces read from the cases' stored spans (a chat span per model call with its
   model and tokens, an execute_tool span per tool call), as ``evaluate`` does when it rescores stored cases:
   the first trace asked for reads the spans of all 10,000 cases in one bulk read (``Store.read_runs``), and
   that read is part of the per-case time.
2. **A dataset from 100,000 stored runs.** 100,000 batch runs (input and output events) in a SQLite run
   store; ``dataset_from_runs(agent=...)`` selects them all and reads each run's input and answer. Goal:
   under 2 s.

Each timing is the median of three rounds, wall clock (``time.perf_counter``), on whatever else the machine runs;
the CPU time of this process (``time.process_time``) and the load average are printed beside it, since a shared
machine stretches wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentnb import Content, Message
from agentnb.evals import CaseResult, EvalCase, dataset_from_runs, scorers
from agentnb.evals._run import case_row, score_case
from agentnb.evals._spans import CaseSpans
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
            run_id=f"run-{i}",
            trace_id=f"{i:032x}",
        )
        rows.append(case_row(case, result))
    store.add_experiment_cases("bench", rows)


def _stored_spans(store: RunStore, n: int) -> None:
    """Each case's trace: the agent span, a model call, the tool call, a second model call."""
    records: list[dict[str, Any]] = []
    for i in range(n):
        trace, run, t0 = f"{i:032x}", f"run-{i}", 1_000_000_000 * i
        step = {"trace_id": trace, "run_id": run, "parent_id": "a", "status_code": "OK", "agent_name": "weather"}
        records += [
            {**step, "span_id": "a", "parent_id": None, "name": "invoke_agent weather", "operation": "invoke_agent",
             "start_ns": t0, "end_ns": t0 + 900},
            {**step, "span_id": "m1", "name": "chat gpt-4o-mini", "operation": "chat", "model": "gpt-4o-mini",
             "input_tokens": 30 + i % 7, "output_tokens": 8, "start_ns": t0 + 10, "end_ns": t0 + 300},
            {**step, "span_id": "t1", "name": "execute_tool get_weather", "operation": "execute_tool",
             "tool_name": "get_weather", "start_ns": t0 + 310, "end_ns": t0 + 400},
            {**step, "span_id": "m2", "name": "chat gpt-4o-mini", "operation": "chat", "model": "gpt-4o-mini",
             "input_tokens": 10, "output_tokens": 4, "start_ns": t0 + 410, "end_ns": t0 + 890},
        ]  # fmt: skip
    for start in range(0, len(records), 20_000):
        store.add_spans(records[start : start + 20_000])


def _median(times: list[float]) -> float:
    return statistics.median(times)


async def _score_all(rows: list[dict[str, Any]], checks: list[Any], spans_from: Any = None) -> None:
    columns: dict[str, list[str]] = {}
    loader = None if spans_from is None else CaseSpans(spans_from)
    work: list[tuple[EvalCase, CaseResult]] = []
    for row in rows:
        data = row["data"]
        result = CaseResult.from_record(data["result"])
        if loader is not None:
            loader.expect(result)
        work.append((EvalCase(row["case_id"], data["input"], position=row["position"]), result))
    work.reverse()
    while work:  # as evaluate() rescoring stored cases: each result is let go once scored
        case, result = work.pop()
        await score_case(checks, case, result, columns)
        if loader is not None:
            assert result.trace.source == "spans"
            loader.forget(result)


def trace_scorers(n: int) -> dict[str, float]:
    """µs per case scoring with the trace scorers (from the conversation, and from stored spans), µs per case
    without scorers, ms to read the rows; CPU µs per case beside each."""
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "bench.db")
        _stored_cases(store, n)
        _stored_spans(store, n)
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
        times: dict[str, list[tuple[float, float]]] = {"messages": [], "spans": [], "none": []}
        for _ in range(3):
            for label, scoring, source in (("messages", checks, None), ("spans", checks, store), ("none", [], None)):
                wall, cpu = time.perf_counter(), time.process_time()
                asyncio.run(_score_all(rows, scoring, source))
                times[label].append((time.perf_counter() - wall, time.process_time() - cpu))
        store.close()
    out = {"read_ms": _median(reads) * 1e3}
    for label, rounds in times.items():
        out[label] = _median([w for w, _ in rounds]) / n * 1e6
        out[f"{label}_cpu"] = _median([c for _, c in rounds]) / n * 1e6
    return out


def dataset_build(n: int) -> tuple[float, float]:
    """Seconds (wall, CPU) ``dataset_from_runs`` takes over ``n`` stored batch runs."""
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
        cpu: list[float] = []
        for _ in range(3):
            started, started_cpu = time.perf_counter(), time.process_time()
            data = dataset_from_runs(agent="geo", store=store)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            assert len(data) == n and data.rows[0]["expected"].startswith("City")
        store.close()
    return _median(times), _median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    cases, runs = (1_000, 10_000) if args.quick else (10_000, 100_000)
    scoring = trace_scorers(cases)
    build_s, build_cpu = dataset_build(runs)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print("| measurement | size | wall | CPU | goal |\n|---|---:|---:|---:|---:|")
    for label, what in (("messages", "from the conversation"), ("spans", "from stored spans, bulk read included")):
        print(
            f"| scoring with 4 trace scorers, per case, {what} | {cases:,} cases "
            f"| {scoring[label]:.1f} µs | {scoring[label + '_cpu']:.1f} µs | < 100 µs |"
        )
    print(
        f"| of which the scorers (minus scoring with none), from the conversation | {cases:,} cases "
        f"| {scoring['messages'] - scoring['none']:.1f} µs | {scoring['messages_cpu'] - scoring['none_cpu']:.1f} µs | |"
    )
    print(f"| reading the stored cases (apart) | {cases:,} cases | {scoring['read_ms']:.0f} ms | | |")
    print(f"| dataset_from_runs | {runs:,} runs | {build_s:.2f} s | {build_cpu:.2f} s | < 2 s |")


if __name__ == "__main__":
    main()
