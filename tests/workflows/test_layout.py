"""The layered layout, checked on the drawn SVG: no edge piece enters a box other than its own ends,
no two boxes overlap, every edge points from its source to its target, loops point back up.

Graphs are generated (seeded) in the shapes workflows take: chains, fan-out/fan-in, switch-case, loops
back to the start, self-loops, long edges skipping layers, and 200-executor graphs.
"""

from __future__ import annotations

import itertools
import random
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from agentnb.workflows import WorkflowViz

SVG = "{http://www.w3.org/2000/svg}"
Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # left, top, right, bottom


def description(
    n: int, edges: list[tuple[str, str]], *, fan_ins: list[tuple[list[str], str]] = (), cond: bool = False
) -> dict[str, Any]:
    ids = [f"ex_{i}" for i in range(n)]
    groups: list[dict[str, Any]] = [
        {"kind": "single", "sources": [s], "targets": [t], "conditional": cond} for s, t in edges
    ]
    groups += [{"kind": "fan_in", "sources": sources, "targets": [target]} for sources, target in fan_ins]
    return {"start_executor_id": ids[0], "executors": [{"id": i, "type": "x:Step"} for i in ids], "edge_groups": groups}


def random_graph(seed: int, n: int) -> dict[str, Any]:
    rng = random.Random(seed)
    edges: list[tuple[str, str]] = []
    for i in range(1, n):  # everything reachable from the start
        edges.append((f"ex_{rng.randrange(i)}", f"ex_{i}"))
    for _ in range(n // 2):  # extra forward edges, some skipping many layers
        a, b = sorted(rng.sample(range(n), 2))
        edges.append((f"ex_{a}", f"ex_{b}"))
    for _ in range(max(1, n // 8)):  # loops back up
        a, b = sorted(rng.sample(range(n), 2))
        edges.append((f"ex_{b}", f"ex_{a}"))
    edges.append((f"ex_{rng.randrange(n)}",) * 2)  # a self-loop
    fan_ins = []
    if n >= 6:
        sources = [f"ex_{i}" for i in rng.sample(range(1, n - 1), 3)]
        fan_ins.append((sources, f"ex_{n - 1}"))
    return description(n, edges, fan_ins=fan_ins, cond=seed % 2 == 0)


def fan_out_fan_in(n: int) -> dict[str, Any]:
    middle = [f"ex_{i}" for i in range(1, n - 1)]
    return description(n, [("ex_0", m) for m in middle], fan_ins=[(middle, f"ex_{n - 1}")])


def chain_with_loops(n: int) -> dict[str, Any]:
    edges = [(f"ex_{i}", f"ex_{i + 1}") for i in range(n - 1)]
    edges += [(f"ex_{i}", "ex_0") for i in range(5, n, 7)] + [(f"ex_{n - 1}", f"ex_{n // 2}")]
    return description(n, edges)


def wide_and_deep(n: int) -> dict[str, Any]:
    """Ten branches of a fan-out, each a chain, all joined at the end, with a skip edge around them."""
    edges, tails = [], []
    per = (n - 2) // 10
    for b in range(10):
        chain = [f"ex_{1 + b * per + k}" for k in range(per)]
        edges.append(("ex_0", chain[0]))
        edges += list(itertools.pairwise(chain))
        tails.append(chain[-1])
    edges.append(("ex_0", f"ex_{n - 1}"))
    return description(n, edges, fan_ins=[(tails, f"ex_{n - 1}")])


GRAPHS = {
    **{f"random-{seed}-{n}": random_graph(seed, n) for seed, n in enumerate([4, 7, 12, 20, 30, 45, 60, 90] * 3)},
    "fan-out-fan-in-200": fan_out_fan_in(200),
    "chain-with-loops-200": chain_with_loops(200),
    "wide-and-deep-202": wide_and_deep(202),
    "random-200": random_graph(99, 200),
}


# -- reading the SVG back -------------------------------------------------------------------------------------


def boxes(root: ET.Element) -> list[Rect]:
    found = []
    for g in root.iter(f"{SVG}g"):
        if "node" not in (g.get("class") or "").split():
            continue
        rect, circle = g.find(f"{SVG}rect"), g.find(f"{SVG}circle")
        if rect is not None:
            x, y, w, h = (float(rect.get(k) or 0) for k in ("x", "y", "width", "height"))
            found.append((x, y, x + w, y + h))
        elif circle is not None:
            cx, cy, r = (float(circle.get(k) or 0) for k in ("cx", "cy", "r"))
            found.append((cx - r, cy - r, cx + r, cy + r))
    return found


def polyline(d: str) -> list[Point]:
    """The path's points, with each cubic sampled finely enough to follow it within a fraction of a pixel."""
    tokens = re.findall(r"[MLC]|-?[\d.]+", d)
    points: list[Point] = []
    i = 0
    while i < len(tokens):
        op = tokens[i]
        nums = []
        i += 1
        while i < len(tokens) and tokens[i] not in "MLC":
            nums.append(float(tokens[i]))
            i += 1
        pairs = list(zip(nums[0::2], nums[1::2], strict=True))
        if op in "ML":
            points += pairs
        else:
            p0 = points[-1]
            (p1, p2, p3) = pairs
            for k in range(1, 41):
                t = k / 40
                a, b, c, e = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t**2, t**3
                points.append(
                    (
                        a * p0[0] + b * p1[0] + c * p2[0] + e * p3[0],
                        a * p0[1] + b * p1[1] + c * p2[1] + e * p3[1],
                    )
                )
    return points


def segment_enters(p: Point, q: Point, box: Rect, inset: float = 0.5) -> bool:
    """Whether segment p-q passes through the box's interior (Liang-Barsky clipping on the inset box)."""
    left, top, right, bottom = box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset
    dx, dy = q[0] - p[0], q[1] - p[1]
    t0, t1 = 0.0, 1.0
    for edge_p, edge_q in ((-dx, p[0] - left), (dx, right - p[0]), (-dy, p[1] - top), (dy, bottom - p[1])):
        if edge_p == 0:
            if edge_q < 0:
                return False
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def on_box(point: Point, box: Rect, tol: float = 0.6) -> bool:
    return box[0] - tol <= point[0] <= box[2] + tol and box[1] - tol <= point[1] <= box[3] + tol


def drawn(desc: dict[str, Any]) -> tuple[list[Rect], list[tuple[list[Point], ET.Element]]]:
    root = ET.fromstring(WorkflowViz(desc).to_svg())
    paths = [p for p in root.iter(f"{SVG}path") if "edge" in (p.get("class") or "").split()]
    return boxes(root), [(polyline(p.get("d") or ""), p) for p in paths]


# -- the properties -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(GRAPHS))
def test_no_edge_crosses_a_node_box_and_no_boxes_overlap(name: str) -> None:
    desc = GRAPHS[name]
    rects, edges = drawn(desc)
    executors = len(desc["executors"])
    assert len(rects) == executors + sum(g["kind"] == "fan_in" for g in desc["edge_groups"])
    group_edges = sum(
        len(g["sources"]) + 1 if g["kind"] == "fan_in" else len(g["sources"]) * len(g["targets"])
        for g in desc["edge_groups"]
    )
    assert len(edges) == group_edges
    # Boxes: none overlaps another (sorted sweep keeps this cheap at 200 nodes).
    ordered = sorted(rects)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b[0] >= a[2]:
                break
            assert a[3] <= b[1] or b[3] <= a[1], f"{name}: boxes overlap: {a} {b}"
    # Edges: every piece stays out of every box except the two it connects. Boxes are grouped by row, so a
    # piece is only checked against the rows its height spans.
    rows: dict[tuple[float, float], list[Rect]] = {}
    for r in rects:
        rows.setdefault((r[1], r[3]), []).append(r)
    for points, path in edges:
        ends = [r for r in rects if on_box(points[0], r) or on_box(points[-1], r)]
        assert ends, f"{name}: an edge starts or ends away from every node: {path.get('d')}"
        for p, q in itertools.pairwise(points):
            low, high = min(p[1], q[1]), max(p[1], q[1])
            for (top, bottom), members in rows.items():
                if bottom < low or top > high:
                    continue
                for r in members:
                    if r not in ends:
                        assert not segment_enters(p, q, r), f"{name}: edge {path.get('d')} crosses the box {r}"


def test_edges_run_from_source_to_target_and_loops_point_back_up() -> None:
    desc = description(3, [("ex_0", "ex_1"), ("ex_1", "ex_2"), ("ex_2", "ex_0"), ("ex_1", "ex_1")])
    layout = WorkflowViz(desc).layout()
    a, b, c = (layout.boxes[f"ex_{i}"] for i in range(3))
    assert a.y < b.y < c.y  # the start on top, each step a row lower
    down, _, back, loop = layout.routes
    assert down.points[0][1] == pytest.approx(a.bottom) and down.points[-1][1] == pytest.approx(b.top)
    assert back.reversed and back.points[0][1] == pytest.approx(c.top) and back.points[-1][1] == pytest.approx(a.bottom)
    assert loop.loop and all(x == pytest.approx(b.right) for x, _ in loop.points)
    svg = WorkflowViz(desc).to_svg()
    assert svg.count('data-back="1"') == 2


def test_a_long_edge_bends_around_the_nodes_between_its_ends() -> None:
    # ex_0 -> ex_1 -> ex_2 -> ex_3 and a skip edge ex_0 -> ex_3: the skip edge passes two rows of nodes.
    desc = description(4, [("ex_0", "ex_1"), ("ex_1", "ex_2"), ("ex_2", "ex_3"), ("ex_0", "ex_3")])
    layout = WorkflowViz(desc).layout()
    skip = layout.routes[3]
    assert len(skip.points) == 8  # start, two dummies (in and out of each row), end
    for row_node in ("ex_1", "ex_2"):
        box = layout.boxes[row_node]
        inside = [x for x, y in skip.points if box.top - 0.1 <= y <= box.bottom + 0.1]
        assert inside and all(x < box.left or x > box.right for x in inside)


def test_a_fan_out_of_198_keeps_every_label_readable() -> None:
    layout = WorkflowViz(fan_out_fan_in(200)).layout()
    middle = sorted((layout.boxes[f"ex_{i}"] for i in range(1, 199)), key=lambda b: b.x)
    assert len({b.y for b in middle}) == 1  # one row
    gaps = [b.left - a.right for a, b in itertools.pairwise(middle)]
    assert min(gaps) >= 20  # room between labels at zoom 1
    start, end = layout.boxes["ex_0"], layout.boxes["ex_199"]
    assert abs(start.x - (middle[0].x + middle[-1].x) / 2) < 1  # the fan is centred under its source
    assert start.x == pytest.approx(end.x, abs=1)
