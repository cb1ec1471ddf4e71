"""A layered (Sugiyama-style) layout for directed graphs, in pure Python.

Workflow graphs are drawn top to bottom. The steps, each chosen so that an edge never crosses a node box:

1. **Cycles**: a depth-first search from the roots sets back edges aside; they are laid out reversed and
   drawn pointing back up, so a loop reads as a loop instead of stretching the graph.
2. **Layers** by longest path, so every edge points down to a strictly lower row.
3. **Dummy nodes**: an edge spanning several rows gets a thin dummy node in each row it passes. Every piece
   of an edge then joins two adjacent rows, and rows hold nothing but nodes and dummies.
4. **Order** within rows by barycenter sweeps down and up, keeping the order with the fewest crossings.
5. **Coordinates**: each row is placed as close as possible to the mean position of its neighbours in the
   adjacent row, keeping order and spacing (a weighted isotonic regression, solved exactly by pooling
   adjacent violators); dummies weigh more so long edges run straight.

Routes alternate straight vertical runs inside a row (at a node's port or a dummy's slot, which no other
box overlaps) and curves across the gap between two rows (a cubic whose control points sit at the gap's
ends, so it never leaves the gap). Hence no piece of an edge can enter a box other than its own ends.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Box", "Layout", "Route", "layered_layout"]

_ROW_GAP = 56.0
_NODE_GAP = 28.0
_DUMMY_W = 6.0
_DUMMY_GAP = 8.0
_LOOP_PAD = 18.0
_MARGIN = 24.0
_SWEEPS = 8
_PLACEMENT_ROUNDS = 4
_DUMMY_WEIGHT = 4.0


@dataclass(frozen=True)
class Box:
    """A placed node: centre ``(x, y)``, width ``w`` and height ``h``."""

    id: str
    x: float
    y: float
    w: float
    h: float

    @property
    def left(self) -> float:
        return self.x - self.w / 2

    @property
    def right(self) -> float:
        return self.x + self.w / 2

    @property
    def top(self) -> float:
        return self.y - self.h / 2

    @property
    def bottom(self) -> float:
        return self.y + self.h / 2


@dataclass(frozen=True)
class Route:
    """The drawn course of one edge.

    ``points`` alternate kinds of piece: ``points[0] -> points[1]`` is a straight run, ``points[1] ->
    points[2]`` a curve across a gap between rows (leaving and arriving vertically), then straight, curve,
    ..., straight. A self-loop has ``loop`` set and its points are the start and end on the node's right side.
    """

    source: str
    target: str
    points: tuple[tuple[float, float], ...]
    reversed: bool = False
    loop: bool = False


@dataclass
class Layout:
    """Boxes by node id, one route per input edge (same order), and the drawing's size."""

    boxes: dict[str, Box] = field(default_factory=dict)
    routes: list[Route] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0


@dataclass
class _Item:
    """A node or a dummy in a row."""

    id: str
    w: float
    h: float
    dummy: bool
    layer: int = 0
    x: float = 0.0
    preds: list[int] = field(default_factory=list)
    succs: list[int] = field(default_factory=list)
    loop_pad: float = 0.0


def _back_edges(nodes: Sequence[str], succ: Mapping[str, list[str]], roots: Sequence[str]) -> set[tuple[str, str]]:
    """Edges that close a cycle in a depth-first search from ``roots`` (then from anything not reached)."""
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    for root in [*roots, *nodes]:
        if root in state:
            continue
        state[root] = 1
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, i = stack[-1]
            children = succ[node]
            if i < len(children):
                stack[-1] = (node, i + 1)
                child = children[i]
                mark = state.get(child)
                if mark is None:
                    state[child] = 1
                    stack.append((child, 0))
                elif mark == 1:
                    back.add((node, child))
            else:
                state[node] = 2
                stack.pop()
    return back


def _crossings(upper: list[int], lower_pos: Mapping[int, int], items: list[_Item]) -> int:
    """Crossings between one row and the next: inversions of the edge ends, counted with a Fenwick tree."""
    ends = [lower_pos[s] for u in upper for s in sorted(items[u].succs, key=lower_pos.__getitem__)]
    size = len(lower_pos) + 1
    tree = [0] * (size + 1)
    count = 0
    for seen, end in enumerate(ends):
        # Ends already seen that lie strictly to the right of this one cross it.
        i, not_greater = end + 1, 0
        while i > 0:
            not_greater += tree[i]
            i -= i & -i
        count += seen - not_greater
        i = end + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
    return count


def _total_crossings(rows: list[list[int]], items: list[_Item]) -> int:
    total = 0
    for upper, lower in itertools.pairwise(rows):
        total += _crossings(upper, {n: p for p, n in enumerate(lower)}, items)
    return total


def _sweep(row: list[int], items: list[_Item], position: Mapping[int, int], downward: bool) -> None:
    keyed: list[tuple[float, int, int]] = []
    for pos, n in enumerate(row):
        neighbours = items[n].preds if downward else items[n].succs
        if neighbours:
            keyed.append((sum(position[m] for m in neighbours) / len(neighbours), pos, n))
        else:
            keyed.append((float(pos), pos, n))
    keyed.sort()
    row[:] = [n for _, _, n in keyed]


def _order(rows: list[list[int]], items: list[_Item]) -> list[list[int]]:
    best = [list(r) for r in rows]
    best_count = _total_crossings(best, items)
    for sweep in range(_SWEEPS):
        if best_count == 0:
            break
        downward = sweep % 2 == 0
        indices = range(1, len(rows)) if downward else range(len(rows) - 2, -1, -1)
        for li in indices:
            position = {n: p for p, n in enumerate(rows[li - 1 if downward else li + 1])}
            _sweep(rows[li], items, position, downward)
        count = _total_crossings(rows, items)
        if count < best_count:
            best, best_count = [list(r) for r in rows], count
    return best


def _gap(a: _Item, b: _Item) -> float:
    """The minimal distance between the centres of neighbours ``a`` (left) and ``b`` in a row."""
    gap = _DUMMY_GAP if a.dummy or b.dummy else _NODE_GAP
    return a.w / 2 + a.loop_pad + gap + b.w / 2


def _place_row(row: list[int], items: list[_Item], targets: list[float | None]) -> None:
    """Move a row's items as close to ``targets`` as order and spacing allow (weighted least squares).

    With ``offset_i`` the least distance of item ``i`` from item 0, ``p_i = x_i - offset_i`` must be
    non-decreasing: an isotonic regression of ``target_i - offset_i``, solved by pooling adjacent violators.
    """
    offsets = [0.0]
    for a, b in itertools.pairwise(row):
        offsets.append(offsets[-1] + _gap(items[a], items[b]))
    blocks: list[list[float]] = []  # [weight, weighted sum, count]
    for i, n in enumerate(row):
        item = items[n]
        target = targets[i]
        weight = (_DUMMY_WEIGHT if item.dummy else 1.0) if target is not None else 1e-3
        value = (target if target is not None else item.x) - offsets[i]
        blocks.append([weight, weight * value, 1])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] > blocks[-1][1] / blocks[-1][0]:
            w, s, c = blocks.pop()
            blocks[-1][0] += w
            blocks[-1][1] += s
            blocks[-1][2] += c
    i = 0
    for weight, total, count in blocks:
        mean = total / weight
        for _ in range(int(count)):
            items[row[i]].x = mean + offsets[i]
            i += 1


def _coordinates(rows: list[list[int]], items: list[_Item]) -> None:
    for row in rows:
        x = 0.0
        for i, n in enumerate(row):
            if i:
                x += _gap(items[row[i - 1]], items[n])
            items[n].x = x

    def mean_x(ns: list[int]) -> float | None:
        return sum(items[m].x for m in ns) / len(ns) if ns else None

    for _ in range(_PLACEMENT_ROUNDS):
        for row in rows[1:]:
            _place_row(row, items, [mean_x(items[n].preds) for n in row])
        for row in reversed(rows[:-1]):
            _place_row(row, items, [mean_x(items[n].succs) for n in row])
    for row in rows:
        _place_row(row, items, [mean_x(items[n].preds + items[n].succs) for n in row])


def layered_layout(
    sizes: Mapping[str, tuple[float, float]],
    edges: Sequence[tuple[str, str]],
    *,
    roots: Sequence[str] = (),
) -> Layout:
    """Lay out a directed graph top to bottom.

    Args:
        sizes: ``(width, height)`` of every node, in drawing order.
        edges: ``(source, target)`` pairs; cycles, self-loops and repeated edges are allowed.
        roots: Nodes to start the cycle search from (the workflow's start), so loops point back to them.

    Returns:
        The boxes, one :class:`Route` per edge in input order, and the drawing's width and height.

    Example:
        >>> layout = layered_layout({"a": (80, 36), "b": (80, 36)}, [("a", "b"), ("b", "a")], roots=["a"])
        >>> layout.boxes["a"].y < layout.boxes["b"].y, layout.routes[1].reversed
        (True, True)
    """
    names = list(sizes)
    for s, t in edges:
        if s not in sizes or t not in sizes:
            raise KeyError(f"edge {s!r} -> {t!r} names a node without a size")
    succ: dict[str, list[str]] = {n: [] for n in names}
    for s, t in edges:
        if s != t:
            succ[s].append(t)
    back = _back_edges(names, succ, roots)
    # Each edge as laid out: (upper, lower), after turning back edges around.
    oriented = [((t, s) if (s, t) in back else (s, t)) for s, t in edges]

    # Layers by longest path over the acyclic graph (Kahn's order).
    layer = dict.fromkeys(names, 0)
    forward: dict[str, list[str]] = {n: [] for n in names}
    indegree = dict.fromkeys(names, 0)
    for (u, v), (s, t) in zip(oriented, edges, strict=True):
        if s != t:
            forward[u].append(v)
            indegree[v] += 1
    ready = [n for n in dict.fromkeys([*roots, *names]) if indegree[n] == 0]
    head = 0
    while head < len(ready):
        n = ready[head]
        head += 1
        for v in forward[n]:
            layer[v] = max(layer[v], layer[n] + 1)
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)

    items: list[_Item] = []
    index: dict[str, int] = {}
    for n in names:
        w, h = sizes[n]
        index[n] = len(items)
        items.append(_Item(n, float(w), float(h), dummy=False, layer=layer[n]))
    chains: list[list[int]] = []  # per edge: the items it passes, upper end first
    for (u, v), (s, t) in zip(oriented, edges, strict=True):
        if s == t:
            items[index[s]].loop_pad = _LOOP_PAD
            chains.append([index[s]])
            continue
        chain = [index[u]]
        for li in range(layer[u] + 1, layer[v]):
            chain.append(len(items))
            items.append(_Item(f"{u}->{v}#{li}", _DUMMY_W, 0.0, dummy=True, layer=li))
        chain.append(index[v])
        for a, b in itertools.pairwise(chain):
            items[a].succs.append(b)
            items[b].preds.append(a)
        chains.append(chain)

    # Initial order: depth first from the roots, so siblings start next to each other.
    depth = max((it.layer for it in items), default=0)
    rows: list[list[int]] = [[] for _ in range(depth + 1)]
    placed: set[int] = set()
    for start in [index[r] for r in roots if r in index] + list(range(len(items))):
        stack = [start]
        while stack:
            n = stack.pop()
            if n in placed:
                continue
            placed.add(n)
            rows[items[n].layer].append(n)
            stack.extend(reversed(items[n].succs))
    rows = _order(rows, items)
    _coordinates(rows, items)

    left = min((items[n].x - items[n].w / 2 for row in rows for n in row), default=0.0)
    right = max((items[n].x + items[n].w / 2 + items[n].loop_pad for row in rows for n in row), default=0.0)
    row_h = [max((items[n].h for n in row), default=0.0) for row in rows]
    row_top: list[float] = []
    y = _MARGIN
    for h in row_h:
        row_top.append(y)
        y += h + _ROW_GAP
    layout = Layout(width=right - left + 2 * _MARGIN, height=y - _ROW_GAP + _MARGIN)
    shift = _MARGIN - left
    for it in items:
        it.x += shift
    for n in names:
        it = items[index[n]]
        layout.boxes[n] = Box(n, it.x, row_top[it.layer] + row_h[it.layer] / 2, it.w, it.h)

    # Ports: a node's edges leave its bottom and enter its top spread out, ordered by where they go.
    out_ports: dict[int, list[tuple[float, int]]] = {}
    in_ports: dict[int, list[tuple[float, int]]] = {}
    for e, chain in enumerate(chains):
        if len(chain) > 1:
            out_ports.setdefault(chain[0], []).append((items[chain[1]].x, e))
            in_ports.setdefault(chain[-1], []).append((items[chain[-2]].x, e))

    def spread(ports: dict[int, list[tuple[float, int]]]) -> dict[tuple[int, int], float]:
        where: dict[tuple[int, int], float] = {}
        for n, ends in ports.items():
            it = items[n]
            ends.sort()
            span = it.w * 0.7 if it.w > _NODE_GAP else 0.0  # small round nodes take every edge at the centre
            for k, (_, e) in enumerate(ends):
                where[(n, e)] = it.x - span / 2 + span * (k + 1) / (len(ends) + 1)
        return where

    out_x, in_x = spread(out_ports), spread(in_ports)
    for e, chain in enumerate(chains):
        s, t = edges[e]
        if len(chain) == 1:
            box = layout.boxes[s]
            dy = min(8.0, box.h / 4)
            layout.routes.append(Route(s, t, ((box.right, box.y - dy), (box.right, box.y + dy)), loop=True))
            continue
        points: list[tuple[float, float]] = []
        for k, n in enumerate(chain):
            it = items[n]
            top, bottom = row_top[it.layer], row_top[it.layer] + row_h[it.layer]
            cy = top + row_h[it.layer] / 2
            if k == 0:
                x = out_x[(n, e)]
                points += [(x, cy + it.h / 2), (x, bottom)]
            elif k == len(chain) - 1:
                x = in_x[(n, e)]
                points += [(x, top), (x, cy - it.h / 2)]
            else:
                points += [(it.x, top), (it.x, bottom)]
        is_back = (s, t) in back
        layout.routes.append(Route(s, t, tuple(reversed(points)) if is_back else tuple(points), reversed=is_back))
    return layout
