"""Draw a workflow graph as Mermaid text or as a self-contained SVG (pure Python, no network, no binaries).

The SVG uses a layered layout: back edges of cycles are set aside, nodes are put on layers by their
longest path from the start, ordered within layers by repeated barycenter sweeps to reduce crossings,
and edges are drawn as curves. Conditional edges (conditions, switch-case, multi-selection) are dashed
and labelled; fan-in edges are thick, coloured and meet in a join node before the target. All text is
escaped. A 200-executor graph lays out in a few milliseconds.

``WorkflowViz`` accepts a :class:`Workflow` or the ``workflow.to_dict()`` description the run store keeps,
so a process that only has the store (the DevUI) can draw a graph too. :func:`checkpoint_tree_svg` draws a
run's checkpoint tree with the same SVG pieces (document, curves, escaped text).
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from ._checkpoints import CheckpointInfo
    from ._workflow import Workflow

__all__ = ["WorkflowViz", "checkpoint_tree_svg"]

_NODE_H = 36
_V_GAP = 56
_H_GAP = 28
_CHAR_W = 7.2
_MIN_W = 80
_MAX_W = 260
_JOIN_R = 9


# -- SVG pieces shared by the drawings ------------------------------------------------------------------------


def _svg_open(width: float, height: float, *, css_class: str, font_size: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="{font_size}" class="{css_class}">'
    )


def _curve(x1: float, y1: float, x2: float, y2: float, *, along: Literal["x", "y"]) -> str:
    """A cubic curve from (x1, y1) to (x2, y2) that leaves and arrives along the given axis."""
    if along == "y":
        my = (y1 + y2) / 2
        return f"M{x1:.1f},{y1:.1f} C{x1:.1f},{my:.1f} {x2:.1f},{my:.1f} {x2:.1f},{y2:.1f}"
    mx = (x1 + x2) / 2
    return f"M{x1:.1f},{y1:.1f} C{mx:.1f},{y1:.1f} {mx:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


@dataclass
class _Node:
    id: str
    label: str
    kind: str  # "executor" | "start" | "join"
    tooltip: str = ""
    layer: int = 0
    order: float = 0.0
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0


@dataclass
class _Edge:
    source: str
    target: str
    style: str  # "normal" | "conditional" | "fan_in"
    label: str | None = None
    reversed: bool = False


@dataclass
class _Graph:
    nodes: dict[str, _Node] = field(default_factory=dict)
    edges: list[_Edge] = field(default_factory=list)


def _describe(workflow: Any) -> Mapping[str, Any]:
    if isinstance(workflow, Mapping):
        return cast("Mapping[str, Any]", workflow)
    to_dict = getattr(workflow, "to_dict", None)
    if callable(to_dict):
        return cast("Mapping[str, Any]", to_dict())
    raise TypeError(f"WorkflowViz needs a Workflow or its to_dict() description, got {type(workflow).__name__}.")


def _short_type(type_id: str) -> str:
    return type_id.rpartition(":")[2] or type_id


class WorkflowViz:
    """Render a workflow's graph as Mermaid text or SVG.

    Args:
        workflow: A :class:`Workflow`, or the dict ``workflow.to_dict()`` returns.

    Example:
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, WorkflowViz, executor
        >>> @executor(id="a")
        ... async def a(text: str, ctx: WorkflowContext[str]) -> None:
        ...     await ctx.send_message(text)
        >>> @executor(id="b")
        ... async def b(text: str, ctx: WorkflowContext[str, str]) -> None:
        ...     await ctx.yield_output(text)
        >>> viz = WorkflowViz(WorkflowBuilder(start_executor=a).add_edge(a, b).build())
        >>> viz.to_mermaid().splitlines()[0]
        'flowchart TD'
    """

    def __init__(self, workflow: Workflow | Mapping[str, Any]) -> None:
        self.description = _describe(workflow)
        self._graph = self._build_graph()

    # -- graph --------------------------------------------------------------------------------------------
    def _build_graph(self) -> _Graph:
        desc = self.description
        graph = _Graph()
        start = desc.get("start_executor_id")
        for entry in desc.get("executors", []):
            eid = entry["id"]
            kind = "start" if eid == start else "executor"
            tooltip = f"{eid} ({_short_type(entry.get('type', ''))})"
            ins = entry.get("input_types")
            if ins:
                tooltip += "\naccepts: " + ", ".join(ins)
            graph.nodes[eid] = _Node(eid, eid, kind, tooltip)
        for index, group in enumerate(desc.get("edge_groups", [])):
            kind = group.get("kind", "single")
            sources, targets = group.get("sources", []), group.get("targets", [])
            labels = group.get("labels", {})
            if kind == "fan_in":
                join_id = f"__fan_in_{index}"
                graph.nodes[join_id] = _Node(join_id, "", "join", f"fan-in into {targets[0]}")
                for s in sources:
                    graph.edges.append(_Edge(s, join_id, "fan_in"))
                graph.edges.append(_Edge(join_id, targets[0], "fan_in"))
                continue
            conditional = bool(group.get("conditional"))
            for s in sources:
                for t in targets:
                    label = labels.get(f"{s}->{t}") if conditional else None
                    graph.edges.append(_Edge(s, t, "conditional" if conditional else "normal", label))
        return graph

    # -- Mermaid ----------------------------------------------------------------------------------------------
    def to_mermaid(self) -> str:
        """The graph as a Mermaid ``flowchart`` (conditional edges dotted, fan-in edges thick)."""
        graph = self._graph
        ids = {nid: f"n{i}" for i, nid in enumerate(graph.nodes)}
        lines = ["flowchart TD"]
        for nid, node in graph.nodes.items():
            if node.kind == "join":
                lines.append(f'  {ids[nid]}(("fan-in"))')
            else:
                text = _mermaid_text(node.label + (" (start)" if node.kind == "start" else ""))
                lines.append(f'  {ids[nid]}["{text}"]')
        for edge in graph.edges:
            a, b = ids[edge.source], ids[edge.target]
            if edge.style == "fan_in":
                lines.append(f"  {a} ==> {b}")
            elif edge.style == "conditional":
                if edge.label:
                    lines.append(f'  {a} -. "{_mermaid_text(edge.label)}" .-> {b}')
                else:
                    lines.append(f"  {a} -.-> {b}")
            else:
                lines.append(f"  {a} --> {b}")
        start_ids = [ids[n] for n, node in graph.nodes.items() if node.kind == "start"]
        join_ids = [ids[n] for n, node in graph.nodes.items() if node.kind == "join"]
        lines.append("  classDef start fill:#e3f2fd,stroke:#1565c0,stroke-width:2px")
        lines.append("  classDef join fill:#f3e5f5,stroke:#6a1b9a")
        if start_ids:
            lines.append(f"  class {','.join(start_ids)} start")
        if join_ids:
            lines.append(f"  class {','.join(join_ids)} join")
        return "\n".join(lines) + "\n"

    # -- layout ---------------------------------------------------------------------------------------------
    def _layout(self) -> tuple[float, float]:
        graph = self._graph
        nodes = graph.nodes
        succ: dict[str, list[str]] = {n: [] for n in nodes}
        for edge in graph.edges:
            succ[edge.source].append(edge.target)
        # 1. Set aside back edges (iterative DFS from the start, then from anything left).
        order = [n for n, node in nodes.items() if node.kind == "start"] + list(nodes)
        state: dict[str, int] = {}
        back: set[tuple[str, str]] = set()
        for root in order:
            if root in state:
                continue
            state[root] = 1
            stack: list[tuple[str, int]] = [(root, 0)]
            while stack:
                node_id, i = stack[-1]
                children = succ[node_id]
                if i < len(children):
                    stack[-1] = (node_id, i + 1)
                    child = children[i]
                    mark = state.get(child)
                    if mark is None:
                        state[child] = 1
                        stack.append((child, 0))
                    elif mark == 1:
                        back.add((node_id, child))
                else:
                    state[node_id] = 2
                    stack.pop()
        for edge in graph.edges:
            edge.reversed = (edge.source, edge.target) in back or edge.source == edge.target
        # 2. Longest-path layering over the remaining DAG (Kahn's order).
        forward: dict[str, list[str]] = {n: [] for n in nodes}
        indegree = dict.fromkeys(nodes, 0)
        for edge in graph.edges:
            if not edge.reversed:
                forward[edge.source].append(edge.target)
                indegree[edge.target] += 1
        queue = [n for n in order if indegree[n] == 0]
        seen_q: set[str] = set()
        ready = []
        for n in queue:
            if n not in seen_q:
                seen_q.add(n)
                ready.append(n)
        head = 0
        while head < len(ready):
            n = ready[head]
            head += 1
            for t in forward[n]:
                nodes[t].layer = max(nodes[t].layer, nodes[n].layer + 1)
                indegree[t] -= 1
                if indegree[t] == 0:
                    ready.append(t)
        layers: dict[int, list[str]] = {}
        for n in ready:
            layers.setdefault(nodes[n].layer, []).append(n)
        # 3. Order within layers: barycenter sweeps down and up.
        preds: dict[str, list[str]] = {n: [] for n in nodes}
        for edge in graph.edges:
            if not edge.reversed:
                preds[edge.target].append(edge.source)
        for members in layers.values():
            for pos, n in enumerate(members):
                nodes[n].order = pos
        depth = max(layers) if layers else 0
        for _ in range(4):
            for li in range(1, depth + 1):
                self._sweep(layers.get(li, []), preds)
            for li in range(depth - 1, -1, -1):
                self._sweep(layers.get(li, []), forward)
        # 4. Coordinates.
        width = 0.0
        for n in nodes.values():
            n.w = 2 * _JOIN_R if n.kind == "join" else min(_MAX_W, max(_MIN_W, len(n.label) * _CHAR_W + 24))
        row_widths = {li: sum(nodes[n].w for n in m) + _H_GAP * (len(m) - 1) for li, m in layers.items()}
        width = max(row_widths.values(), default=0.0) + 2 * _H_GAP
        for li, members in layers.items():
            x = (width - row_widths[li]) / 2
            for n in members:
                node = nodes[n]
                node.x = x + node.w / 2
                node.y = _H_GAP + li * (_NODE_H + _V_GAP) + _NODE_H / 2
                x += node.w + _H_GAP
        height = _H_GAP * 2 + (depth + 1) * _NODE_H + depth * _V_GAP
        return width + 40, height  # room for back-edge loops on the right

    def _sweep(self, members: list[str], neighbours: dict[str, list[str]]) -> None:
        if not members:
            return
        # Neighbour positions come from the adjacent layer, already placed in this sweep.
        keyed = []
        graph_nodes = self._graph.nodes
        for pos, n in enumerate(members):
            ns = [graph_nodes[m].order for m in neighbours[n] if m in graph_nodes]
            keyed.append((sum(ns) / len(ns) if ns else graph_nodes[n].order, pos, n))
        keyed.sort()
        members[:] = [n for _, _, n in keyed]
        for pos, n in enumerate(members):
            graph_nodes[n].order = pos

    # -- SVG ------------------------------------------------------------------------------------------------
    def to_svg(self) -> str:
        """The graph as a standalone SVG document (text escaped, no external references)."""
        width, height = self._layout()
        nodes = self._graph.nodes
        out: list[str] = [
            _svg_open(width, height, css_class="agentnb-workflow", font_size=12),
            "<defs>",
            '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>',
            '<marker id="arrow-fan-in" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6a1b9a"/></marker>',
            "</defs>",
        ]
        title = self.description.get("name")
        if title:
            out.append(f"<title>{html.escape(str(title))}</title>")
        for edge in self._graph.edges:
            out.append(self._edge_svg(edge, nodes[edge.source], nodes[edge.target], width))
        for node in nodes.values():
            out.append(self._node_svg(node))
        out.append("</svg>")
        return "\n".join(out)

    @staticmethod
    def _edge_svg(edge: _Edge, a: _Node, b: _Node, width: float) -> str:
        half = _JOIN_R if a.kind == "join" else _NODE_H / 2
        half_b = _JOIN_R if b.kind == "join" else _NODE_H / 2
        if edge.reversed:
            # Loop back on the right side so cycles stay readable.
            x1, y1 = a.x + a.w / 2, a.y
            x2, y2 = b.x + b.w / 2, b.y
            bulge = max(x1, x2) + 30 + abs(a.y - b.y) * 0.05
            d = f"M{x1:.1f},{y1:.1f} C{bulge:.1f},{y1:.1f} {bulge:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        else:
            x1, y1 = a.x, a.y + half
            x2, y2 = b.x, b.y - half_b
            d = _curve(x1, y1, x2, y2, along="y")
        if edge.style == "fan_in":
            attrs = 'stroke="#6a1b9a" stroke-width="2.5" marker-end="url(#arrow-fan-in)" class="edge fan-in"'
        elif edge.style == "conditional":
            attrs = (
                'stroke="#555" stroke-width="1.3" stroke-dasharray="5,4" marker-end="url(#arrow)" '
                'class="edge conditional"'
            )
        else:
            attrs = 'stroke="#555" stroke-width="1.3" marker-end="url(#arrow)" class="edge"'
        parts = [f'<path d="{d}" fill="none" {attrs}/>']
        if edge.label:
            lx, ly = (x1 + x2) / 2 + 4, (y1 + y2) / 2
            parts.append(
                f'<text x="{lx:.1f}" y="{ly:.1f}" fill="#444" font-size="10" class="edge-label">'
                f"{html.escape(edge.label)}</text>"
            )
        return "".join(parts)

    @staticmethod
    def _node_svg(node: _Node) -> str:
        tip = f"<title>{html.escape(node.tooltip)}</title>" if node.tooltip else ""
        if node.kind == "join":
            return (
                f'<g class="node join">{tip}<circle cx="{node.x:.1f}" cy="{node.y:.1f}" r="{_JOIN_R}" '
                'fill="#f3e5f5" stroke="#6a1b9a" stroke-width="2"/></g>'
            )
        fill, stroke, sw = ("#e3f2fd", "#1565c0", 2) if node.kind == "start" else ("#fafafa", "#666", 1)
        label = node.label
        max_chars = int((_MAX_W - 24) / _CHAR_W)
        if len(label) > max_chars:
            label = label[: max_chars - 1] + "…"
        x0, y0 = node.x - node.w / 2, node.y - _NODE_H / 2
        return (
            f'<g class="node {node.kind}" data-id="{html.escape(node.id, quote=True)}">{tip}'
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{node.w:.1f}" height="{_NODE_H}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>'
            f'<text x="{node.x:.1f}" y="{node.y + 4:.1f}" text-anchor="middle">{html.escape(label)}</text></g>'
        )

    def save_svg(self, path: str | os.PathLike[str]) -> str:
        """Write the SVG to ``path`` (atomically) and return the path."""
        import tempfile
        from pathlib import Path

        target = Path(path)
        fd, tmp = tempfile.mkstemp(dir=target.parent or ".", suffix=".svg.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self.to_svg())
        os.replace(tmp, target)
        return str(target)

    def _repr_svg_(self) -> str:
        return self.to_svg()


def _mermaid_text(text: str) -> str:
    # Mermaid reads entity codes inside quoted labels; quotes and angle brackets would end or inject markup.
    return (
        text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;").replace("\n", " ")
    )


# -- the checkpoint tree --------------------------------------------------------------------------------------

_TREE_DX, _TREE_DY, _TREE_R = 78, 46, 11


def checkpoint_tree_svg(
    infos: Sequence[CheckpointInfo], *, selected: str | None = None, highlight: set[str] | None = None
) -> str:
    """Draw checkpoints as a tree: one column per step depth, one lane per branch, forks as new lanes.

    Args:
        infos: The checkpoints (``CheckpointHistory.list()``); a checkpoint whose parent is not among them is
            a root.
        selected: The checkpoint drawn as selected.
        highlight: Checkpoints drawn with a dark outline (for example the branch being compared).

    Example:
        >>> from agentnb.workflows import CheckpointInfo
        >>> svg = checkpoint_tree_svg([CheckpointInfo("a", "w", "r1", None, 0, "")])
        >>> svg.count('class="cp"')
        1
    """
    if not infos:
        return "<p class='anb-muted'>No checkpoints.</p>"
    by_id = {i.checkpoint_id: i for i in infos}
    children: dict[str | None, list[CheckpointInfo]] = {}
    for info in infos:
        children.setdefault(info.parent_id if info.parent_id in by_id else None, []).append(info)
    pos: dict[str, tuple[int, int]] = {}
    lane = 0
    # Depth first without recursion (a long run is a deep chain): the first child stays in its parent's lane.
    stack: list[tuple[CheckpointInfo, int, bool]] = [(root, 0, i > 0) for i, root in enumerate(children.get(None, []))]
    stack.reverse()
    while stack:
        info, depth, new_lane = stack.pop()
        if new_lane:
            lane += 1
        pos[info.checkpoint_id] = (depth, lane)
        kids = children.get(info.checkpoint_id, [])
        stack.extend((child, depth + 1, k > 0) for k, child in reversed(list(enumerate(kids))))
    dx, dy, r = _TREE_DX, _TREE_DY, _TREE_R
    width = (max(d for d, _ in pos.values()) + 1) * dx + 60
    height = (lane + 1) * dy + 30
    parts = [_svg_open(width, height, css_class="agentnb-checkpoints", font_size=10)]
    for info in infos:
        if info.parent_id in pos:
            (d0, l0), (d1, l1) = pos[info.parent_id], pos[info.checkpoint_id]
            path = _curve(30 + d0 * dx, 22 + l0 * dy, 30 + d1 * dx, 22 + l1 * dy, along="x")
            parts.append(f'<path d="{path}" stroke="#8c959f" fill="none"/>')
    for cid, (d, ln) in pos.items():
        info = by_id[cid]
        x, y = 30 + d * dx, 22 + ln * dy
        parent = by_id.get(info.parent_id or "")
        fork = parent is not None and parent.run_id != info.run_id
        fill = "#0969da" if cid == selected else ("#8250df" if fork else "#d0d7de")
        stroke = "#1f2328" if highlight and cid in highlight else "#57606a"
        parts.append(
            f'<g class="cp" data-id="{_escape(cid)}"><title>{_escape(cid)} · step {info.step}'
            f" · run {_escape(info.run_id[:8])}</title>"
            f'<circle cx="{x}" cy="{y}" r="{r}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{x}" y="{y + r + 11}" text-anchor="middle" fill="#57606a">s{info.step}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
