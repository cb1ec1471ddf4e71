"""Workflow graph layout: time to lay out and draw 200-executor graphs as SVG.

Four shapes: a 1 -> 198 -> 1 fan-out/fan-in, ten parallel chains, a 200-step chain with loops back to
the start, and a random graph with skip edges, loops and a fan-in. Prints the median of several runs for
the layout alone and for the whole SVG, plus the drawing's size and how many dummy points the edges bend
through.

    python benchmarks/graph_layout.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from agentnb.workflows import WorkflowViz

N = 200


def _describe(edges: list[tuple[int, int]], fan_ins: list[tuple[list[int], int]] = ()) -> dict[str, Any]:
    groups: list[dict[str, Any]] = [{"kind": "single", "sources": [f"e{s}"], "targets": [f"e{t}"]} for s, t in edges]
    groups += [{"kind": "fan_in", "sources": [f"e{s}" for s in ss], "targets": [f"e{t}"]} for ss, t in fan_ins]
    return {"start_executor_id": "e0", "executors": [{"id": f"e{i}"} for i in range(N)], "edge_groups": groups}


def fan_out_fan_in() -> dict[str, Any]:
    middle = list(range(1, N - 1))
    return _describe([(0, m) for m in middle], [(middle, N - 1)])


def parallel_chains() -> dict[str, Any]:
    edges: list[tuple[int, int]] = []
    tails = []
    per = (N - 2) // 10
    for b in range(10):
        chain = [1 + b * per + k for k in range(per)]
        edges.append((0, chain[0]))
        edges += list(itertools.pairwise(chain))
        tails.append(chain[-1])
    return _describe(edges, [(tails, N - 1)])


def chain_with_loops() -> dict[str, Any]:
    edges = [(i, i + 1) for i in range(N - 1)] + [(i, 0) for i in range(5, N, 7)]
    return _describe(edges)


def random_graph() -> dict[str, Any]:
    rng = random.Random(7)
    edges = [(rng.randrange(i), i) for i in range(1, N)]
    edges += [tuple(sorted(rng.sample(range(N), 2))) for _ in range(N // 2)]  # type: ignore[misc]
    edges += [tuple(sorted(rng.sample(range(N), 2), reverse=True)) for _ in range(N // 8)]  # type: ignore[misc]
    return _describe(edges, [(rng.sample(range(1, N - 1), 3), N - 1)])


def median_ms(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(repeat: int) -> None:
    shapes = {
        "fan-out/fan-in 1->198->1": fan_out_fan_in(),
        "10 parallel chains": parallel_chains(),
        "chain, loops to start": chain_with_loops(),
        "random, skips and loops": random_graph(),
    }
    print(f"{'graph (200 executors)':<26} {'layout ms':>10} {'SVG ms':>8} {'size px':>14} {'bends':>6}")
    for name, desc in shapes.items():
        viz = WorkflowViz(desc)
        layout = viz.layout()
        bends = sum(max(0, len(r.points) - 4) // 2 for r in layout.routes)
        layout_ms = median_ms(viz.layout, repeat)
        svg_ms = median_ms(lambda d=desc: WorkflowViz(d).to_svg(), repeat)
        size = f"{layout.width:.0f}x{layout.height:.0f}"
        print(f"{name:<26} {layout_ms:>10.1f} {svg_ms:>8.1f} {size:>14} {bends:>6}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    main(parser.parse_args().repeat)
