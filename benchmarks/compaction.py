"""Compaction cost, agentnb beside the reference (Agent Framework 1.23) on the same conversations.

Run: ``python benchmarks/compaction.py`` (``--quick`` for fewer rounds). The reference's half runs in the
peer environment (``$AGENTNB_PEERS_VENV``, built by ``benchmarks/peers/run.py``) when it exists; both
frameworks export the same compaction names, so one workload code serves both. Times are CPU time
(``time.process_time``) medians.

Rows:
1. grouping, cold: ``annotate_message_groups`` over 10,000 fresh messages (a tool-using conversation:
   per turn a user message, a call, its result and an answer).
1b. the floor under row 1: writing the reference's per-message layout (a message id, a group id, the five-key
   annotation dict, two entries in ``additional_properties``) on the same messages with no grouping logic at
   all. Any grouping that keeps the reference's layout costs at least this.
2. composed strategy, cold: ``apply_compaction`` with a ``TokenBudgetComposedStrategy`` (tool-result
   summaries, then a sliding window) over 1,000 and over 10,000 fresh messages, token counting included.
   The reference's 10,000-message run did not finish within 25 minutes (it recounts the whole history
   after each group it leaves out), so its column has the 1,000-message row only.
3. per turn, incremental: the annotated, compacted 10,000 messages grow by one turn (user + answer) and
   ``apply_compaction`` runs again with a sliding window (annotations of the old messages are reused); the
   same with the composed strategy of row 2 (whose first run inserted tool-result summaries) on 1,000 and on
   10,000 messages (the reference's column has the 1,000-message row only, as in row 2).
4. a 200-turn agent session with ``compaction_strategy=SlidingWindowStrategy(keep_last_groups=20)`` on an
   instant model: CPU time per turn for the first 10 and the last 10 turns, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
N_MESSAGES = 10_000


def load(framework: str) -> Any:
    return importlib.import_module("agentnb" if framework == "agentnb" else "agent_framework")


def conversation(fw: Any, n: int) -> list[Any]:
    """``n`` messages of turns: a user question, a tool call, its result, an answer."""
    messages: list[Any] = [fw.Message(role="system", contents=["You are a careful assistant."])]
    turn = 0
    while len(messages) < n:
        call_id = f"call_{turn}"
        messages.extend(
            [
                fw.Message(role="user", contents=[f"Question {turn}: what is the status of item {turn}?"]),
                fw.Message(
                    role="assistant",
                    contents=[fw.Content.from_function_call(call_id, "lookup", arguments=f'{{"item": {turn}}}')],
                ),
                fw.Message(role="tool", contents=[fw.Content.from_function_result(call_id, result=f"item {turn}: ok")]),
                fw.Message(role="assistant", contents=[f"Item {turn} is fine."]),
            ]
        )
        turn += 1
    return messages[:n]


def median_cpu(run: Callable[[], Any], rounds: int) -> float:
    samples: list[float] = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def composed(fw: Any) -> Any:
    return fw.TokenBudgetComposedStrategy(
        token_budget=20_000,
        tokenizer=fw.CharacterEstimatorTokenizer(),
        strategies=[
            fw.ToolResultCompactionStrategy(keep_last_tool_call_groups=4),
            fw.SlidingWindowStrategy(keep_last_groups=200),
        ],
    )


def composed_cold(fw: Any, size: int, rounds: int) -> float:
    samples: list[float] = []
    for _ in range(rounds):
        messages = conversation(fw, size)
        strategy = composed(fw)
        start = time.process_time()
        asyncio.run(fw.apply_compaction(messages, strategy=strategy))
        samples.append(time.process_time() - start)
    return statistics.median(samples) * 1e3


def layout_floor(fw: Any, rounds: int) -> float:
    """Median CPU ms of writing the reference's per-message annotation layout alone, with no grouping logic.

    What any grouping that keeps the reference's layout must at least spend on 10,000 fresh messages: an id
    per message, a group id, the five-key annotation dict and the two entries in ``additional_properties``
    (with the collector paused, as the grouping pauses it).
    """
    group_key, excluded_key = fw.GROUP_ANNOTATION_KEY, fw.EXCLUDED_KEY
    samples: list[float] = []
    for _ in range(rounds):
        messages = conversation(fw, N_MESSAGES)
        start = time.process_time()
        gc.disable()
        for number, message in enumerate(messages):
            message.message_id = message_id = f"msg_{number}"
            properties = message.additional_properties
            properties[group_key] = {
                "id": f"group_{message_id}",
                "kind": "user",
                "index": number,
                "has_reasoning": False,
                "token_count": None,
            }
            properties[excluded_key] = False
        gc.enable()
        samples.append(time.process_time() - start)
        del messages
    return statistics.median(samples) * 1e3


def measure(framework: str, rounds: int, *, large_composed: bool = True) -> dict[str, float]:
    fw = load(framework)
    results: dict[str, float] = {}

    annotate = fw.annotate_message_groups  # resolved (agentnb imports it lazily) before anything is timed

    def grouping() -> None:
        messages = conversation(fw, N_MESSAGES)
        start = time.process_time()
        annotate(messages)
        samples.append(time.process_time() - start)

    samples: list[float] = []
    for _ in range(rounds):
        grouping()
    results["grouping_cold_ms"] = statistics.median(samples) * 1e3
    results["layout_floor_ms"] = layout_floor(fw, rounds)

    results["composed_1k_cold_ms"] = composed_cold(fw, 1_000, rounds)
    if large_composed:
        results["composed_cold_ms"] = composed_cold(fw, N_MESSAGES, rounds)

    turns = max(rounds * 10, 30)
    results["per_turn_incremental_us"] = per_turn(fw, N_MESSAGES, fw.SlidingWindowStrategy(keep_last_groups=200), turns)
    results["composed_1k_per_turn_us"] = per_turn(fw, 1_000, composed(fw), turns)
    if large_composed:
        results["composed_per_turn_us"] = per_turn(fw, N_MESSAGES, composed(fw), turns)

    first, last = session_growth(framework, fw)
    results["session_first10_us"] = first
    results["session_last10_us"] = last
    results["session_ratio"] = last / first
    return results


def per_turn(fw: Any, size: int, strategy: Any, turns: int) -> float:
    """Median CPU µs of ``apply_compaction`` after each new turn (user + answer) on a compacted conversation."""
    messages = conversation(fw, size)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(fw.apply_compaction(messages, strategy=strategy))
    samples: list[float] = []
    for turn in range(turns):
        messages.append(fw.Message(role="user", contents=[f"Follow-up {turn}?"]))
        messages.append(fw.Message(role="assistant", contents=[f"Answer {turn}."]))
        start = time.process_time()
        loop.run_until_complete(fw.apply_compaction(messages, strategy=strategy))
        samples.append(time.process_time() - start)
    loop.close()
    return statistics.median(samples) * 1e6


def session_growth(framework: str, fw: Any, turns: int = 200) -> tuple[float, float]:
    """Median CPU µs per turn of the first and last 10 turns of a 200-turn session with a sliding window."""
    sys.path.insert(0, str(HERE / "peers"))
    adapter = importlib.import_module(f"adapters.{framework}")
    client = adapter.InstantModel() if framework == "agentnb" else adapter.InstantClient()
    agent = fw.Agent(client=client, compaction_strategy=fw.SlidingWindowStrategy(keep_last_groups=20))
    session = agent.create_session()
    loop = asyncio.new_event_loop()
    times: list[float] = []
    for _ in range(turns):
        start = time.process_time()
        loop.run_until_complete(agent.run("hi", session=session))
        times.append(time.process_time() - start)
    loop.close()
    return statistics.median(times[:10]) * 1e6, statistics.median(times[-10:]) * 1e6


def reference_results(rounds: int) -> dict[str, float] | None:
    venv = Path(os.environ.get("AGENTNB_PEERS_VENV", HERE / "peers" / ".venv"))
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    out = subprocess.run(
        [str(python), __file__, "--worker", "agent_framework", "--rounds", str(rounds), "--no-large-composed"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


ROWS = (
    ("grouping_cold_ms", "1. grouping, 10,000 messages, cold", "ms"),
    ("layout_floor_ms", "1b. the reference's annotation layout alone (no grouping), 10,000 messages", "ms"),
    ("composed_1k_cold_ms", "2. composed strategy, 1,000 messages, cold", "ms"),
    ("composed_cold_ms", "2. composed strategy, 10,000 messages, cold", "ms"),
    ("per_turn_incremental_us", "3. per turn, incremental (10,000 messages annotated)", "µs"),
    ("composed_1k_per_turn_us", "3. composed strategy per turn, incremental, 1,000 messages", "µs"),
    ("composed_per_turn_us", "3. composed strategy per turn, incremental, 10,000 messages", "µs"),
    ("session_first10_us", "4. 200-turn session, sliding window: first 10 turns", "µs/turn"),
    ("session_last10_us", "4. 200-turn session, sliding window: last 10 turns", "µs/turn"),
    ("session_ratio", "4. last 10 / first 10", "ratio"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=["agentnb", "agent_framework"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-large-composed", action="store_true", help="skip the 10,000-message composed row")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    if args.worker:
        print(json.dumps(measure(args.worker, rounds, large_composed=not args.no_large_composed)))
        return
    ours = measure("agentnb", rounds)
    theirs = reference_results(rounds)
    print("| workload | unit | agentnb | Agent Framework 1.23 | agentnb / reference |")
    print("| --- | --- | ---: | ---: | ---: |")
    for key, title, unit in ROWS:
        mine = ours[key]
        if theirs is None:
            print(f"| {title} | {unit} | {mine:,.2f} | (no peer environment) | |")
        elif key not in theirs:
            print(f"| {title} | {unit} | {mine:,.2f} | (its cold run did not finish within 25 min) | |")
        else:
            print(f"| {title} | {unit} | {mine:,.2f} | {theirs[key]:,.2f} | {mine / theirs[key]:.2f} |")


if __name__ == "__main__":
    main()
