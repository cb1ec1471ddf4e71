"""The trace view: a run's spans as a collapsible tree with a waterfall timeline and a DataFrame button.

The tree is plain HTML (nested ``<details>``), so it opens and closes without any JavaScript and also reads
well in static exports; clicking a span's row shows its attributes. The widget adds a trace picker and a
button that shows the spans as a pandas DataFrame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _html as h
from ._widgets import ipy_display, on_click, widget_bundle

__all__ = ["TraceView", "trace_html", "trace_text"]


def _duration_ms(row: dict[str, Any]) -> float:
    end = row.get("end_ns") or row.get("start_ns") or 0
    return max(0.0, (end - (row.get("start_ns") or 0)) / 1e6)


def _group(rows: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Rows grouped by trace, traces ordered by their first span's start."""
    traces: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: r.get("start_ns") or 0):
        traces.setdefault(row["trace_id"], []).append(row)
    return list(traces.items())


def _children(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    ids = {r["span_id"] for r in rows}
    roots: list[dict[str, Any]] = []
    kids: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        parent = row.get("parent_id")
        if parent and parent in ids:
            kids.setdefault(parent, []).append(row)
        else:
            roots.append(row)
    return roots, kids


def _label(row: dict[str, Any]) -> str:
    return str(row.get("name", "?"))


def _tokens(row: dict[str, Any]) -> str:
    inp, out = row.get("input_tokens"), row.get("output_tokens")
    if inp is None and out is None:
        return ""
    return f"{inp or 0}→{out or 0} tok"


def _span_html(
    row: dict[str, Any], kids: dict[str, list[dict[str, Any]]], t0: int, total: float, *, attributes: bool = True
) -> str:
    start = ((row.get("start_ns") or t0) - t0) / 1e6
    dur = _duration_ms(row)
    left = 0.0 if total <= 0 else min(100.0, 100.0 * start / total)
    width = 100.0 if total <= 0 else max(0.5, min(100.0 - left, 100.0 * dur / total))
    error = row.get("status_code") == "ERROR"
    colour = "#cf222e" if error else "#0969da"
    # Geometry comes from numbers we computed, never from span data, so inline styles are safe here.
    bar = (
        "<span style='display:inline-block;position:relative;width:240px;height:10px;background:#eaeef2;"
        "border-radius:3px;vertical-align:middle'>"
        f"<span style='position:absolute;left:{left:.2f}%;width:{width:.2f}%;top:0;bottom:0;background:{colour};"
        "border-radius:3px'></span></span>"
    )
    tokens = _tokens(row)
    summary = (
        f"{bar} <span>{h.escape(_label(row))}</span> <span class='anb-muted'>{dur:.1f} ms"
        f"{' · ' + h.escape(tokens) if tokens else ''}</span>" + (" " + h.badge("error", "err") if error else "")
    )
    body = ""
    if attributes:
        attrs = dict(row.get("attributes") or {})
        facts = [("span", row.get("span_id")), ("status", row.get("status_code"))]
        if row.get("status_message"):
            facts.append(("message", row.get("status_message")))
        table_rows = [(k, h.escape(v)) for k, v in facts]
        table_rows += [(str(k), h.escape(v)) for k, v in sorted(attrs.items())]
        body = h.kv_table(table_rows)
    elif row.get("status_message"):
        body = f"<div class='anb-error'>{h.escape(row.get('status_message'))}</div>"
    children = "".join(_span_html(c, kids, t0, total, attributes=attributes) for c in kids.get(row["span_id"], []))
    if children:
        body += f"<div style='margin-left:16px'>{children}</div>"
    return h.details(summary, body, open=bool(children))


def trace_html(rows: Sequence[dict[str, Any]], *, attributes: bool = True) -> str:
    """Return safe HTML for span rows: one collapsible tree with a waterfall per trace.

    Args:
        rows: Span rows.
        attributes: Include each span's attributes (shown when its row is opened).
    """
    if not rows:
        return "<div class='anb-muted'>No spans recorded yet. Run an agent with the extension loaded.</div>"
    parts: list[str] = []
    for trace_id, spans in _group(rows):
        t0 = min(r.get("start_ns") or 0 for r in spans)
        t1 = max(r.get("end_ns") or r.get("start_ns") or 0 for r in spans)
        total = (t1 - t0) / 1e6
        roots, kids = _children(spans)
        head = (
            f"<div class='anb-head'><span class='anb-title'>trace</span> <code>{h.escape(trace_id[:16])}</code>"
            f" {h.badge(f'{len(spans)} spans')} <span class='anb-muted'>{total:.1f} ms</span></div>"
        )
        tree = "".join(_span_html(r, kids, t0, total, attributes=attributes) for r in roots)
        parts.append(f"<div class='anb-card'>{head}{tree}</div>")
    return "".join(parts)


def trace_text(rows: Sequence[dict[str, Any]]) -> str:
    """Return span rows as an indented text tree (one block per trace)."""
    if not rows:
        return "No spans recorded yet."
    lines: list[str] = []
    for trace_id, spans in _group(rows):
        roots, kids = _children(spans)
        t0 = min(r.get("start_ns") or 0 for r in spans)
        t1 = max(r.get("end_ns") or r.get("start_ns") or 0 for r in spans)
        lines.append(f"trace {trace_id[:16]} · {len(spans)} spans · {(t1 - t0) / 1e6:.1f} ms")

        for root in roots:
            _walk_text(root, kids, 0, lines)
    return "\n".join(lines)


def _walk_text(row: dict[str, Any], kids: dict[str, list[dict[str, Any]]], depth: int, lines: list[str]) -> None:
    tokens = _tokens(row)
    status = " [error]" if row.get("status_code") == "ERROR" else ""
    extra = f" · {tokens}" if tokens else ""
    lines.append(f"{'  ' * (depth + 1)}{row.get('name')}  {_duration_ms(row):.1f} ms{extra}{status}")
    for child in kids.get(row["span_id"], []):
        _walk_text(child, kids, depth + 1, lines)


class TraceView:
    """Spans of recent runs: a collapsible span tree with a waterfall, attributes on click, and a DataFrame.

    Args:
        rows: Span rows to show (run-store rows, as :func:`agentnb.observability.SpanStore.rows` returns);
            by default the spans this kernel recorded.
        last: With ``rows`` omitted, how many of the most recent traces to show.

    Example:
        ```python
        %load_ext agentnb
        from agentnb.notebook import TraceView

        # ... run an agent ...
        view = TraceView(last=1)
        view  # click a span for its attributes; the DataFrame button shows the table
        df = view.to_dataframe()
        ```
    """

    def __init__(self, rows: Sequence[dict[str, Any]] | None = None, *, last: int | None = 1) -> None:
        import ipywidgets as w

        if rows is None:
            from ._tracing import span_rows

            rows = span_rows(last=last)
        self.rows: list[dict[str, Any]] = list(rows)
        self.frame: Any = None
        traces = _group(self.rows)
        # "" stands for all traces: a Dropdown shows a None value as an empty box.
        options = [("all traces", "")] + [(f"{tid[:16]} ({len(spans)} spans)", tid) for tid, spans in traces]
        # Held as Any: ipywidgets' traits (the picker's value) and Output's methods are untyped.
        self.picker: Any = w.Dropdown(options=options, value="", description="trace", layout=w.Layout(width="340px"))
        self.picker.observe(self._on_pick, names="value")
        self.frame_button = w.Button(description="DataFrame", icon="table", tooltip="Show the spans as a DataFrame")
        on_click(self.frame_button, lambda _b: self.show_dataframe())
        self.tree = w.HTML(h.wrap(trace_html(self.rows)))
        self.output: Any = w.Output()
        self.widget = w.VBox([w.HBox([self.picker, self.frame_button]), self.tree, self.output])

    def selected_rows(self) -> list[dict[str, Any]]:
        """The rows of the picked trace (all rows when none is picked)."""
        tid = self.picker.value
        return [r for r in self.rows if not tid or r["trace_id"] == tid]

    def to_dataframe(self) -> Any:
        """Return the shown spans as a pandas DataFrame (columns of :func:`agentnb.traces`)."""
        from ..observability import spans_frame

        return spans_frame(self.selected_rows())

    def show_dataframe(self) -> Any:
        """Build the DataFrame, keep it as ``frame``, and show it under the tree (what the button does)."""
        self.frame = self.to_dataframe()
        self.output.clear_output()
        with self.output:
            ipy_display(self.frame)
        return self.frame

    def _on_pick(self, _change: Any) -> None:
        self.tree.value = h.wrap(trace_html(self.selected_rows()))

    def to_text(self) -> str:
        """The span tree as text."""
        return trace_text(self.selected_rows())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = widget_bundle(self.widget, **kwargs)
        bundle["text/plain"] = self.to_text()
        # The static copy (what a saved notebook keeps) leaves the attributes out: they are the widget's
        # detail view, and which attributes a span carries changes with instrumentation settings.
        bundle["text/html"] = h.wrap(trace_html(self.selected_rows(), attributes=False))
        return bundle

    def close(self) -> None:
        """Close the view's widgets (releases their comms)."""
        from ._widgets import close_tree

        close_tree(self.widget)
