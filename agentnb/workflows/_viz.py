"""Draw a workflow graph as Mermaid text, Graphviz DOT text, or a self-contained SVG (pure Python, no binaries).

The SVG uses the layered layout of :mod:`._layout` (layers by longest path, edges through dummy nodes,
barycenter ordering, exact row placement), so no edge crosses a node box and loops point back up.
Conditional edges (conditions, switch-case, multi-selection) are dashed and labelled; fan-in edges are
thick, coloured and meet in a join node before the target. All text is escaped.

``WorkflowViz`` accepts a :class:`Workflow` or the ``workflow.to_dict()`` description the run store keeps,
so a process that only has the store (the DevUI) can draw a graph too. Given a :class:`Workflow`, the DOT text
also draws each sub-workflow (a ``WorkflowExecutor``'s workflow) as a dashed cluster, as the reference does.
:func:`checkpoint_tree_svg` draws a
run's checkpoint tree with the same SVG pieces (document, curves, escaped text).
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from ._layout import Box, Layout, Route, layered_layout

if TYPE_CHECKING:
    from pathlib import Path

    from ._checkpoints import CheckpointInfo
    from ._workflow import Workflow

__all__ = ["WorkflowViz", "checkpoint_tree_svg", "route_path"]

_NODE_H = 36
_CHAR_W = 7.2
_MIN_W = 80
_MAX_W = 260
_JOIN_R = 9
_LOOP_W = 16  # how far a self-loop reaches right of its node (the layout keeps that much room free)


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


def route_path(route: Route) -> str:
    """SVG path data for a route: straight runs inside rows, vertical-tangent curves across the gaps.

    Zero-length runs are left out, so the arrow at the end takes the direction of the last curve.
    """
    points = route.points
    (x0, y0) = points[0]
    if route.loop:
        (x1, y1) = points[-1]
        return f"M{x0:.1f},{y0:.1f} C{x0 + _LOOP_W:.1f},{y0 - 4:.1f} {x1 + _LOOP_W:.1f},{y1 + 4:.1f} {x1:.1f},{y1:.1f}"
    parts = [f"M{x0:.1f},{y0:.1f}"]
    for i in range(1, len(points)):
        (xa, ya), (xb, yb) = points[i - 1], points[i]
        if i % 2:  # a straight run inside a row
            if (xa, ya) != (xb, yb):
                parts.append(f"L{xb:.1f},{yb:.1f}")
        else:  # a curve across the gap between two rows
            parts.append(_curve(xa, ya, xb, yb, along="y").partition(" ")[2])
    return " ".join(parts)


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


@dataclass
class _Node:
    id: str
    label: str
    kind: str  # "executor" | "start" | "join"
    tooltip: str = ""


@dataclass
class _Edge:
    source: str
    target: str
    style: str  # "normal" | "conditional" | "fan_in"
    label: str | None = None
    case: bool = False  # the label names a switch-case or selection case (else it names a condition)

    @property
    def text_label(self) -> str:
        """The label Mermaid and DOT show: a case keeps its name, a condition reads ``conditional``."""
        return (self.label or "conditional") if self.case else "conditional"


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
        self._workflow = None if isinstance(workflow, Mapping) else workflow
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
        for group in desc.get("edge_groups", []):
            kind = group.get("kind", "single")
            sources, targets = group.get("sources", []), group.get("targets", [])
            labels = group.get("labels", {})
            if kind == "fan_in":
                join_id = fan_in_node_id(targets[0], sources)
                graph.nodes[join_id] = _Node(join_id, "", "join", f"fan-in into {targets[0]}")
                for s in sources:
                    graph.edges.append(_Edge(s, join_id, "fan_in"))
                graph.edges.append(_Edge(join_id, targets[0], "fan_in"))
                continue
            conditional = bool(group.get("conditional"))
            for s in sources:
                for t in targets:
                    label = labels.get(f"{s}->{t}") if conditional else None
                    style = "conditional" if conditional else "normal"
                    graph.edges.append(_Edge(s, t, style, label, case=kind != "single"))
        return graph

    # -- Mermaid ----------------------------------------------------------------------------------------------
    def to_mermaid(self, include_internal_executors: bool = False) -> str:
        """The graph as a Mermaid ``flowchart``, in the reference's layout.

        Node ids are the executor ids (letters, digits and ``_`` kept, the rest ``_``); the start executor reads
        ``(Start)``; conditional edges are dotted (``-. conditional .->``, a switch-case edge with its case);
        fan-in edges meet in a ``((fan-in))`` node before their target; a sub-workflow is a ``subgraph`` named
        after its executor, its node ids prefixed with that name. ``include_internal_executors`` is accepted for
        the reference's signature: agentnb's graphs have no hidden internal executors.
        """
        lines = ["flowchart TD"]
        ids = self._emit_mermaid(self._graph, self._workflow, lines, indent="  ", prefix="", used=set())
        start_ids = [ids[n] for n, node in self._graph.nodes.items() if node.kind == "start"]
        join_ids = [ids[n] for n, node in self._graph.nodes.items() if node.kind == "join"]
        lines.append("  classDef start fill:#e3f2fd,stroke:#1565c0,stroke-width:2px")
        lines.append("  classDef join fill:#f3e5f5,stroke:#6a1b9a")
        if start_ids:
            lines.append(f"  class {','.join(start_ids)} start")
        if join_ids:
            lines.append(f"  class {','.join(join_ids)} join")
        return "\n".join(lines) + "\n"

    def _emit_mermaid(
        self, graph: _Graph, workflow: Workflow | None, lines: list[str], *, indent: str, prefix: str, used: set[str]
    ) -> dict[str, str]:
        """Write ``graph``'s nodes, edges and sub-workflows; return the Mermaid id of each node."""
        ids: dict[str, str] = {}
        for nid, node in graph.nodes.items():
            if node.kind == "join":
                target = node.tooltip.removeprefix("fan-in into ")
                ids[nid] = _unique_id(f"fan_in__{prefix}{_mermaid_id(target)}__{nid.rsplit('::', 1)[-1]}", used)
            else:
                ids[nid] = _unique_id(prefix + _mermaid_id(nid), used)
        for nid, node in graph.nodes.items():
            if node.kind == "join":
                lines.append(f"{indent}{ids[nid]}((fan-in))")
            else:
                text = _mermaid_text(node.label + (" (Start)" if node.kind == "start" else ""))
                lines.append(f'{indent}{ids[nid]}["{text}"]')
        for edge in graph.edges:
            a, b = ids[edge.source], ids[edge.target]
            if edge.style == "conditional":
                label = edge.text_label
                arrow = "-. conditional .->" if label == "conditional" else f'-. "{_mermaid_text(label)}" .->'
                lines.append(f"{indent}{a} {arrow} {b}")
            else:
                lines.append(f"{indent}{a} --> {b}")
        if workflow is None:
            return ids
        from ._workflow_executor import WorkflowExecutor

        for executor_id, executor in workflow.executors.items():
            if isinstance(executor, WorkflowExecutor):
                lines.append(f"{indent}subgraph {ids[executor_id]}")
                inner = WorkflowViz(executor.workflow)
                inner_prefix = f"{ids[executor_id]}__"
                self._emit_mermaid(
                    inner._graph, executor.workflow, lines, indent=indent + "  ", prefix=inner_prefix, used=used
                )
                lines.append(f"{indent}end")
        return ids

    # -- Graphviz DOT -----------------------------------------------------------------------------------------
    def to_digraph(self, include_internal_executors: bool = False) -> str:
        """The graph as Graphviz DOT text (``digraph Workflow { ... }``), for ``dot`` or any Graphviz viewer.

        The start executor is green and labelled ``(Start)``; conditional edges are dashed and labelled with
        their case (or ``conditional``); fan-in edges meet in an ellipse ``fan-in`` node before their target.
        Sub-workflows are dashed clusters whose node ids are prefixed with the hosting executor's id.
        ``include_internal_executors`` is accepted for the reference's signature (agentnb hides no executors).

        Example:
            >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, WorkflowViz, executor
            >>> @executor(id="only")
            ... async def only(text: str, ctx: WorkflowContext[str, str]) -> None:
            ...     await ctx.yield_output(text)
            >>> WorkflowViz(WorkflowBuilder(start_executor=only).build()).to_digraph().splitlines()[0]
            'digraph Workflow {'
        """
        lines = [
            "digraph Workflow {",
            "  rankdir=TB;",
            "  node [shape=box, style=filled, fillcolor=lightblue];",
            "  edge [color=black, arrowhead=vee];",
            "",
        ]
        self._emit_dot(self._graph, lines, indent="  ", prefix="")
        if self._workflow is not None:
            self._emit_dot_clusters(self._workflow, lines, indent="  ", prefix="")
        lines.append("}")
        return "\n".join(lines) + "\n"

    @staticmethod
    def _emit_dot(graph: _Graph, lines: list[str], *, indent: str, prefix: str) -> None:
        def node_id(nid: str) -> str:
            return _dot_quote(prefix + nid)

        for nid, node in graph.nodes.items():
            if node.kind == "join":
                lines.append(f'{indent}{node_id(nid)} [shape=ellipse, fillcolor=lightgoldenrod, label="fan-in"];')
            elif node.kind == "start":
                label = _dot_quote(node.label + "\n(Start)")
                lines.append(f"{indent}{node_id(nid)} [fillcolor=lightgreen, label={label}];")
            else:
                lines.append(f"{indent}{node_id(nid)} [label={_dot_quote(node.label)}];")
        for edge in graph.edges:
            attrs = f" [style=dashed, label={_dot_quote(edge.text_label)}]" if edge.style == "conditional" else ""
            lines.append(f"{indent}{node_id(edge.source)} -> {node_id(edge.target)}{attrs};")

    @classmethod
    def _emit_dot_clusters(cls, workflow: Workflow, lines: list[str], *, indent: str, prefix: str) -> None:
        from ._workflow_executor import WorkflowExecutor

        for executor_id, executor in workflow.executors.items():
            if not isinstance(executor, WorkflowExecutor):
                continue
            inner_prefix = f"{prefix}{executor_id}/"
            digest = hashlib.sha256(inner_prefix.encode("utf-8")).hexdigest()[:8]
            lines.append(f"{indent}subgraph cluster_{digest} {{")
            lines.append(f"{indent}  label={_dot_quote('sub-workflow: ' + executor_id)};")
            lines.append(f"{indent}  style=dashed;")
            inner = WorkflowViz(executor.workflow)
            cls._emit_dot(inner._graph, lines, indent=indent + "  ", prefix=inner_prefix)
            cls._emit_dot_clusters(executor.workflow, lines, indent=indent + "  ", prefix=inner_prefix)
            lines.append(f"{indent}}}")

    def export(
        self,
        format: Literal["svg", "png", "pdf", "dot"] = "svg",
        filename: str | os.PathLike[str] | None = None,
        include_internal_executors: bool = False,
    ) -> str:
        """Write the graph to ``filename`` (a new temporary file when ``None``) and return the file's path.

        ``"dot"`` writes :meth:`to_digraph`'s text and ``"svg"`` agentnb's own drawing (:meth:`to_svg`); both
        need nothing installed. ``"png"`` and ``"pdf"`` are rendered by Graphviz: they need the ``graphviz``
        package and the Graphviz binaries, and raise ``ImportError`` (as in the reference) without them.

        Raises:
            ValueError: An unknown format, or a filename whose extension names another format.
            ImportError: ``"png"`` / ``"pdf"`` without Graphviz.
        """
        if format not in ("svg", "png", "pdf", "dot"):
            raise ValueError(f"Unsupported format: {format}. Supported formats: svg, png, pdf, dot.")
        import tempfile
        from pathlib import Path

        if filename is not None and Path(filename).suffix and Path(filename).suffix[1:] != format:
            raise ValueError(f"File extension {Path(filename).suffix!r} doesn't match format {format!r}.")
        if format in ("dot", "svg"):
            text = self.to_digraph(include_internal_executors) if format == "dot" else self.to_svg()
            if filename is None:
                fd, name = tempfile.mkstemp(suffix=f".{format}", prefix="workflow-")
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                return name
            _write_atomically(Path(filename), text)
            return str(filename)
        import importlib

        try:
            graphviz: Any = importlib.import_module("graphviz")  # optional: the reference's viz extra
        except ImportError as e:
            raise ImportError(
                f"Exporting {format} needs Graphviz: pip install 'graphviz>=0.20' and the Graphviz binaries "
                "(apt-get install graphviz, brew install graphviz). 'svg' and 'dot' need neither."
            ) from e
        if filename is None:
            fd, name = tempfile.mkstemp(suffix=f".{format}", prefix="workflow-")
            os.close(fd)
            filename = name
        base = str(Path(filename).with_suffix(""))
        missing_binary: type[Exception] = graphviz.ExecutableNotFound
        try:
            graphviz.Source(self.to_digraph(include_internal_executors)).render(base, format=format, cleanup=True)
        except missing_binary as e:
            raise ImportError(
                "The graphviz package is installed but the Graphviz binaries (dot) are not on PATH: "
                "apt-get install graphviz, brew install graphviz, or see https://graphviz.org/download/."
            ) from e
        return f"{base}.{format}"

    def save_png(self, filename: str | os.PathLike[str], include_internal_executors: bool = False) -> str:
        """:meth:`export` as PNG (needs Graphviz)."""
        return self.export("png", filename, include_internal_executors)

    def save_pdf(self, filename: str | os.PathLike[str], include_internal_executors: bool = False) -> str:
        """:meth:`export` as PDF (needs Graphviz)."""
        return self.export("pdf", filename, include_internal_executors)

    # -- layout ---------------------------------------------------------------------------------------------
    def layout(self) -> Layout:
        """The layered layout of the graph: node boxes and edge routes (see :mod:`._layout`)."""
        nodes = self._graph.nodes
        sizes = {
            nid: (2 * _JOIN_R, 2 * _JOIN_R)
            if node.kind == "join"
            else (min(_MAX_W, max(_MIN_W, len(node.label) * _CHAR_W + 24)), _NODE_H)
            for nid, node in nodes.items()
        }
        starts = [nid for nid, node in nodes.items() if node.kind == "start"]
        return layered_layout(sizes, [(e.source, e.target) for e in self._graph.edges], roots=starts)

    # -- SVG ------------------------------------------------------------------------------------------------
    def to_svg(self) -> str:
        """The graph as a standalone SVG document (text escaped, no external references)."""
        layout = self.layout()
        out: list[str] = [
            _svg_open(layout.width, layout.height, css_class="agentnb-workflow", font_size=12),
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
        for edge, route in zip(self._graph.edges, layout.routes, strict=True):
            out.append(self._edge_svg(edge, route))
        for nid, node in self._graph.nodes.items():
            out.append(self._node_svg(node, layout.boxes[nid]))
        out.append("</svg>")
        return "\n".join(out)

    @staticmethod
    def _edge_svg(edge: _Edge, route: Route) -> str:
        d = route_path(route)
        if edge.style == "fan_in":
            attrs = 'stroke="#6a1b9a" stroke-width="2.5" marker-end="url(#arrow-fan-in)" class="edge fan-in"'
        elif edge.style == "conditional":
            attrs = (
                'stroke="#555" stroke-width="1.3" stroke-dasharray="5,4" marker-end="url(#arrow)" '
                'class="edge conditional"'
            )
        else:
            attrs = 'stroke="#555" stroke-width="1.3" marker-end="url(#arrow)" class="edge"'
        back = ' data-back="1"' if route.reversed or route.loop else ""
        parts = [f'<path d="{d}" fill="none" {attrs}{back}/>']
        if edge.label:
            # Beside the first curve, which runs in the gap below the source.
            (x1, y1), (x2, y2) = route.points[0 if route.loop else 1], route.points[-1 if route.loop else 2]
            lx, ly = (x1 + x2) / 2 + 4, (y1 + y2) / 2
            if route.loop:
                lx += _LOOP_W
            parts.append(
                f'<text x="{lx:.1f}" y="{ly:.1f}" fill="#444" font-size="10" class="edge-label">'
                f"{html.escape(edge.label)}</text>"
            )
        return "".join(parts)

    @staticmethod
    def _node_svg(node: _Node, box: Box) -> str:
        tip = f"<title>{html.escape(node.tooltip)}</title>" if node.tooltip else ""
        if node.kind == "join":
            return (
                f'<g class="node join">{tip}<circle cx="{box.x:.1f}" cy="{box.y:.1f}" r="{_JOIN_R}" '
                'fill="#f3e5f5" stroke="#6a1b9a" stroke-width="2"/></g>'
            )
        fill, stroke, sw = ("#e3f2fd", "#1565c0", 2) if node.kind == "start" else ("#fafafa", "#666", 1)
        label = node.label
        max_chars = int((_MAX_W - 24) / _CHAR_W)
        if len(label) > max_chars:
            label = label[: max_chars - 1] + "…"
        return (
            f'<g class="node {node.kind}" data-id="{html.escape(node.id, quote=True)}">{tip}'
            f'<rect x="{box.left:.1f}" y="{box.top:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>'
            f'<text x="{box.x:.1f}" y="{box.y + 4:.1f}" text-anchor="middle">{html.escape(label)}</text></g>'
        )

    def save_svg(self, path: str | os.PathLike[str], include_internal_executors: bool = False) -> str:
        """Write the SVG to ``path`` (atomically) and return the path (``include_internal_executors``: see
        :meth:`to_digraph`)."""
        from pathlib import Path

        _write_atomically(Path(path), self.to_svg())
        return str(path)

    def _repr_svg_(self) -> str:
        return self.to_svg()


def _write_atomically(target: Path, text: str) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=f"{target.suffix}.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _dot_quote(text: str) -> str:
    """A DOT quoted string: backslashes and quotes escaped, newlines as DOT's centred line break."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def fan_in_node_id(target: str, sources: Sequence[str]) -> str:
    """The id of the join node drawn for a fan-in into ``target`` (stable: a digest of the group's ends)."""
    digest = hashlib.sha256((target + "|" + "|".join(sorted(sources))).encode("utf-8")).hexdigest()[:8]
    return f"fan_in::{target}::{digest}"


def _mermaid_id(value: str) -> str:
    """A Mermaid node id for ``value``: letters, digits and ``_`` kept, anything else ``_``; starts with a letter."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", value)
    cleaned = cleaned if cleaned and cleaned[0].isalpha() else f"n_{cleaned}"
    return f"{cleaned}_" if cleaned.lower() in _MERMAID_KEYWORDS else cleaned


# Words Mermaid reads as syntax in a flowchart: a node may not be called this.
_MERMAID_KEYWORDS = frozenset(
    {"end", "subgraph", "graph", "flowchart", "style", "class", "classdef", "click", "linkstyle"}
)


def _unique_id(candidate: str, used: set[str]) -> str:
    """``candidate``, or ``candidate_2``, ``_3``, ... when two nodes clean up to the same id."""
    alias, n = candidate, 2
    while alias in used:
        alias, n = f"{candidate}_{n}", n + 1
    used.add(alias)
    return alias


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
