"""The workflow graph pane: the SVG from ``WorkflowViz`` with executor states coloured by a stylesheet.

The SVG is drawn once per workflow; states are one CSS rule per executor in a ``<style>`` next to it
(stylesheet rules beat the SVG's fill attributes). While events stream in, state changes are collected
and the pane is redrawn at most every ~150 ms, so a 200-executor graph stays cheap to update.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import panel as pn

from agentnb._html import badge, escape
from agentnb._json import is_json_object

from ._widgets import DEVUI_CSS, html_pane, set_html

__all__ = ["GRAPH_CSS", "STATE_COLOURS", "GraphPane", "state_css"]

#: Fill and stroke per executor state.
STATE_COLOURS: dict[str, tuple[str, str]] = {
    "running": ("#fff8c5", "#bf8700"),
    "completed": ("#dafbe1", "#1a7f37"),
    "failed": ("#ffebe9", "#cf222e"),
    "waiting": ("#ddf4ff", "#0969da"),
}

_REDRAW_SECONDS = 0.15

_BADGE = {"running": "warn", "completed": "ok", "failed": "err", "waiting": "info"}


# Zoom and pan: the factor lives on the pane's host element as a CSS variable, so it survives the redraws
# that recolour executors (they replace the pane's inner HTML, not its host). Panning scrolls the nearest
# scrollable ancestor (the column around the pane), by dragging the graph or with the scroll wheel;
# Ctrl + wheel (a pinch on a touchpad) zooms.
_ZOOM_SCRIPT = (
    "const h=this.getRootNode().host;const z=Math.min(4,Math.max(0.05,"
    "(parseFloat(h.style.getPropertyValue('--anb-zoom'))||1)*{factor}));h.style.setProperty('--anb-zoom',z);"
)
_FIT_SCRIPT = (
    "const h=this.getRootNode().host;const g=this.getRootNode().querySelector('.anb-graph svg');"
    "const w=parseFloat(g.getAttribute('width'))||g.getBBox().width;"
    "h.style.setProperty('--anb-zoom',Math.min(1,(h.clientWidth-24)/w));"
)
_WHEEL_SCRIPT = "if(!event.ctrlKey)return;event.preventDefault();" + _ZOOM_SCRIPT.replace(
    "{factor}", "(event.deltaY<0?1.1:1/1.1)"
)
_PAN_SCRIPT = (
    "if(event.button!==0)return;const g=this;let s=g.getRootNode().host;"
    "const can=e=>{const c=getComputedStyle(e);return /auto|scroll/.test(c.overflowX+c.overflowY)"
    "&&(e.scrollHeight>e.clientHeight+1||e.scrollWidth>e.clientWidth+1);};"
    "while(s&&!can(s))s=s.parentElement||(s.parentNode&&s.parentNode.host);"
    "if(!s)return;event.preventDefault();const x=event.clientX,y=event.clientY,l=s.scrollLeft,t=s.scrollTop;"
    "g.classList.add('anb-panning');"
    "const mv=e=>{s.scrollLeft=l-(e.clientX-x);s.scrollTop=t-(e.clientY-y);};"
    "const up=()=>{removeEventListener('pointermove',mv);removeEventListener('pointerup',up);"
    "g.classList.remove('anb-panning');};"
    "addEventListener('pointermove',mv);addEventListener('pointerup',up);"
)
_ZOOM_TOOLS = (
    "<div class='anb-graph-tools'>"
    f'<button class="anb-zoom-in" title="Zoom in (Ctrl+wheel)" onclick="{_ZOOM_SCRIPT.format(factor=1.25)}">+</button>'
    f'<button class="anb-zoom-out" title="Zoom out" onclick="{_ZOOM_SCRIPT.format(factor=0.8)}">−</button>'
    f'<button class="anb-zoom-fit" title="Fit the width" onclick="{_FIT_SCRIPT}">fit</button>'
    "<span class='anb-muted' style='font-size:11px'>drag to pan</span>"
    "</div>"
)
_GRAPH_OPEN = f'<div class="anb-graph" onpointerdown="{_PAN_SCRIPT}" onwheel="{_WHEEL_SCRIPT}">'
GRAPH_CSS = """
.anb-graph{cursor:grab;touch-action:none}
.anb-graph.anb-panning{cursor:grabbing;user-select:none}
.anb-graph svg{zoom:var(--anb-zoom,1)}
.anb-graph-tools{position:sticky;top:0;left:0;z-index:2;display:flex;gap:4px;padding:2px 0}
.anb-graph-tools button{font-size:12px;min-width:28px;padding:1px 6px;cursor:pointer;border-radius:6px;
 border:1px solid #d0d7de;background:#fff;color:#1f2328}
"""


def _css_string(value: str) -> str:
    return '"' + re.sub(r'(["\\])', r"\\\1", value).replace("\n", " ") + '"'


def state_css(states: dict[str, str]) -> str:
    """One CSS rule per executor, selecting its SVG node by ``data-id`` (stylesheet rules beat SVG attributes)."""
    rules: list[str] = []
    for executor_id, state in states.items():
        colours = STATE_COLOURS.get(state)
        if colours is None:
            continue
        fill, stroke = colours
        rules.append(
            f"g.node[data-id={_css_string(executor_id)}] rect{{fill:{fill};stroke:{stroke};stroke-width:2.5px}}"
        )
    return "\n".join(rules)


class GraphPane:
    """A workflow drawn as SVG, with live executor states.

    Example:
        >>> from agentnb.devui.demos.workflows import text_pipeline_workflow
        >>> pane = GraphPane(text_pipeline_workflow())
        >>> pane.set_state("prepare", "completed")
        >>> pane.flush()
        >>> pane.states
        {'prepare': 'completed'}
    """

    def __init__(self, workflow: Any, *, max_height: int = 520) -> None:
        from agentnb.workflows import WorkflowViz

        self.workflow = workflow
        self.states: dict[str, str] = {}
        source = workflow if is_json_object(workflow) else workflow.to_dict()  # a stored description, or live
        executors: list[Any] = source.get("executors", [])
        self.executor_ids: list[str] = [e["id"] for e in executors]
        self.svg = WorkflowViz(workflow).to_svg()
        self._dirty = False
        self._redraw_pending = False
        self._last_draw = 0.0
        self.pane = pn.pane.HTML(
            self._html(),
            stylesheets=[DEVUI_CSS, GRAPH_CSS],
            sizing_mode="stretch_width",
            css_classes=["anb-graph-pane"],
        )
        match = re.search(r'height="(\d+)', self.svg)
        height = min(max_height, int(match.group(1)) + 24) if match else max_height
        self.container = pn.Column(
            self.pane, height=height, scroll=True, sizing_mode="stretch_width", styles={"border": "1px solid #d0d7de"}
        )
        self.legend = html_pane("", css_classes=["anb-graph-legend"])
        self._render_legend()

    def panel(self) -> pn.viewable.Viewable:
        """Return the graph with its state legend."""
        return pn.Column(self.container, self.legend, sizing_mode="stretch_width")

    def reset(self) -> None:
        """Clear all states (a new run starts)."""
        self.states = {}
        self._apply()

    def set_state(self, executor_id: str | None, state: str) -> None:
        """Colour one executor; unknown ids are ignored."""
        if not executor_id or self.states.get(executor_id) == state:
            return
        self.states[executor_id] = state
        self._apply()

    def set_states(self, states: dict[str, str]) -> None:
        """Replace all states at once."""
        self.states = dict(states)
        self._apply()

    def _html(self) -> str:
        return f"<style>{state_css(self.states)}</style>{_ZOOM_TOOLS}{_GRAPH_OPEN}{self.svg}</div>"

    def _apply(self) -> None:
        self._dirty = True
        self.flush(force=False)
        if self._dirty:
            self._redraw_later()

    def _redraw_later(self) -> None:
        # A throttled change is drawn a moment later even if no further event comes: an executor that runs
        # for minutes must show as running while it runs, not when the next event arrives.
        if self._redraw_pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a plain script): the next flush draws it
            return
        self._redraw_pending = True

        def redraw() -> None:
            self._redraw_pending = False
            self.flush()

        loop.call_later(_REDRAW_SECONDS, redraw)

    def flush(self, *, force: bool = True) -> None:
        """Redraw if states changed (throttled unless ``force``)."""
        now = time.perf_counter()
        if not self._dirty or (not force and now - self._last_draw < _REDRAW_SECONDS):
            return
        self._dirty = False
        self._last_draw = now
        self.pane.object = self._html()
        self._render_legend()

    def _render_legend(self) -> None:
        counts: dict[str, int] = {}
        for state in self.states.values():
            counts[state] = counts.get(state, 0) + 1
        chips = " ".join(badge(f"{state} {n}", _BADGE.get(state, "")) for state, n in sorted(counts.items()))
        per_node = "".join(
            f"<span class='anb-node-state' data-id='{escape(eid)}' data-state='{escape(self.states.get(eid, 'idle'))}'>"
            f"{escape(eid)}: {escape(self.states.get(eid, 'idle'))}</span>; "
            for eid in self.executor_ids[:40]
        )
        more = f" … and {len(self.executor_ids) - 40} more" if len(self.executor_ids) > 40 else ""
        set_html(
            self.legend,
            f"<div>{chips or '<span class=anb-muted>not run yet</span>'}</div>"
            f"<div class='anb-muted' style='font-size:11px'>{per_node}{more}</div>",
        )
