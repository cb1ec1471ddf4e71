"""The traces view: a trace's spans as a waterfall, details on click, token and latency totals, CSV export."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import panel as pn

from agentnb._html import badge, escape, json_html

from ._widgets import html_pane, set_html, table_theme, watch

if TYPE_CHECKING:
    from agentnb.store import SpanRow, Store

__all__ = ["TracesView", "spans_frame"]

_COLUMNS = ["span", "waterfall", "duration_ms", "status", "model", "tool", "in_tokens", "out_tokens", "span_id"]


def _tree_order(spans: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], int]]:
    """Order spans depth first (children after their parent, by start time) with their depth."""
    ids = {s["span_id"] for s in spans}
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for span in spans:
        parent = span.get("parent_id") if span.get("parent_id") in ids else None
        children.setdefault(parent, []).append(span)
    for kids in children.values():
        kids.sort(key=lambda s: s.get("start_ns") or 0)
    out: list[tuple[Mapping[str, Any], int]] = []
    stack = [(s, 0) for s in reversed(children.get(None, []))]
    while stack:
        span, depth = stack.pop()
        out.append((span, depth))
        stack.extend((k, depth + 1) for k in reversed(children.get(span["span_id"], [])))
    return out


def spans_frame(spans: Sequence[Mapping[str, Any]]) -> Any:
    """Build the waterfall table: one row per span in tree order, with an HTML bar placed on the time axis."""
    import pandas as pd

    if not spans:
        return pd.DataFrame(columns=_COLUMNS)
    start = min(int(s.get("start_ns") or 0) for s in spans)
    end = max(int(s.get("end_ns") or s.get("start_ns") or 0) for s in spans)
    total = max(end - start, 1)
    rows: list[dict[str, Any]] = []
    for span, depth in _tree_order(spans):
        s0 = int(span.get("start_ns") or start)
        s1 = int(span.get("end_ns") or s0)
        left = 100.0 * (s0 - start) / total
        width = max(100.0 * (s1 - s0) / total, 0.4)
        error = span.get("status_code") == "ERROR"
        colour = (
            "#cf222e"
            if error
            else {"chat": "#0969da", "execute_tool": "#8250df"}.get(str(span.get("operation") or ""), "#1a7f37")
        )
        bar = (
            f"<div style='position:relative;height:12px;width:100%;background:#f6f8fa'>"
            f"<div style='position:absolute;left:{left:.2f}%;width:{width:.2f}%;height:12px;"
            f"background:{colour};border-radius:2px'></div></div>"
        )
        rows.append(
            {
                "span": "\u00a0\u00a0" * depth + str(span.get("name") or ""),
                "waterfall": bar,
                "duration_ms": round((s1 - s0) / 1e6, 2),
                "status": str(span.get("status_code") or ""),
                "model": span.get("model") or "",
                "tool": span.get("tool_name") or "",
                "in_tokens": int(span.get("input_tokens") or 0),
                "out_tokens": int(span.get("output_tokens") or 0),
                "span_id": span.get("span_id"),
            }
        )
    return pd.DataFrame.from_records(rows, columns=_COLUMNS)


class TracesView:
    """Pick a trace (or a run's spans) and read it as a waterfall.

    Example:
        >>> from agentnb.store import RunStore
        >>> from agentnb.devui._traces import TracesView
        >>> TracesView(RunStore(":memory:")).refresh_traces()
        0
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._spans: dict[str, SpanRow] = {}
        self._frame: Any = None
        self._mark: Any = None
        self.trace_select = pn.widgets.Select(label="Trace", options={}, width=420, css_classes=["anb-trace-select"])
        self.refresh_button = pn.widgets.Button(label="Refresh", width=90)
        self.totals = html_pane("", css_classes=["anb-trace-totals"])
        self.table = pn.widgets.Tabulator(
            spans_frame([]),
            theme=table_theme(),
            show_index=False,
            disabled=True,
            selectable=1,
            pagination="remote",
            page_size=50,
            sizing_mode="stretch_width",
            formatters={"waterfall": {"type": "html"}, "span": {"type": "plaintext"}},
            widths={"waterfall": 360},
            hidden_columns=["span_id"],
            css_classes=["anb-waterfall"],
        )
        self.details = html_pane("<span class='anb-muted'>Click a span for its details.</span>")
        self.download = pn.widgets.FileDownload(
            callback=self._csv, filename="trace.csv", label="Export CSV", width=130, color="default"
        )
        watch(self.trace_select, lambda e: self.show_trace(e.new), "value")
        self.refresh_button.on_click(lambda _e: self._on_refresh())
        watch(self.table, self._on_select, "selection")

    def panel(self) -> pn.viewable.Viewable:
        """Return the view's layout."""
        self.refresh_traces()
        return pn.Column(
            pn.Row(self.trace_select, pn.Column(pn.Spacer(height=18), self.refresh_button), self.download),
            self.totals,
            self.table,
            self.details,
            sizing_mode="stretch_width",
            css_classes=["anb-traces-view"],
        )

    def _on_refresh(self) -> None:
        self.refresh_traces()

    def refresh_traces(self) -> int:
        """Reload the list of stored traces (newest first); return how many there are."""
        traces = self.store.list_traces(limit=200)
        options = {}
        for t in traces:
            ms = ((t.get("end_ns") or t["start_ns"]) - t["start_ns"]) / 1e6
            label = f"{t.get('root') or '?'} · {t['spans']} spans · {ms:.0f} ms · {t['trace_id'][:8]}"
            options[label] = t["trace_id"]
        current = self.trace_select.value
        self.trace_select.options = options
        if current in options.values():
            self.trace_select.value = current
        return len(traces)

    def open_run(self, run_id: str) -> None:
        """Show the spans recorded for one run."""
        spans = self.store.list_spans(run_id=run_id)
        if not spans:
            set_html(self.totals, f"<span class='anb-muted'>No spans recorded for run {escape(run_id)}.</span>")
            self.table.value = spans_frame([])
            return
        traces = {s["trace_id"] for s in spans}
        if len(traces) == 1:
            self.refresh_traces()
            trace_id = next(iter(traces))
            if trace_id in self.trace_select.options.values():
                if self.trace_select.value == trace_id:
                    self.show_trace(trace_id)
                else:
                    self.trace_select.value = trace_id  # the watcher shows the whole trace
                return
        self._show(spans)

    def show_trace(self, trace_id: str | None) -> None:
        """Show one trace's spans."""
        if not trace_id:
            return
        self._show(self.store.list_spans(trace_id=trace_id))

    def _show(self, spans: list[SpanRow]) -> None:
        self._spans = {s["span_id"]: s for s in spans}
        self._frame = spans_frame(spans)
        self.table.value = self._frame
        start = min(s["start_ns"] for s in spans)
        end = max(int(s.get("end_ns") or s["start_ns"]) for s in spans)
        tokens_in = sum(int(s.get("input_tokens") or 0) for s in spans)
        tokens_out = sum(int(s.get("output_tokens") or 0) for s in spans)
        errors = sum(1 for s in spans if s.get("status_code") == "ERROR")
        chats = [s for s in spans if s.get("operation") == "chat"]
        model_ms = sum(((s.get("end_ns") or s["start_ns"]) - s["start_ns"]) for s in chats) / 1e6
        set_html(
            self.totals,
            f"{badge(f'{len(spans)} spans')} {badge(f'total {(end - start) / 1e6:.1f} ms', 'info')} "
            f"{badge(f'model time {model_ms:.1f} ms', 'info')} {badge(f'in {tokens_in} tokens', 'info')} "
            f"{badge(f'out {tokens_out} tokens', 'info')} "
            f"{badge(f'{errors} errors', 'err' if errors else 'ok')} {self._cell_html(spans)}",
        )

    def _cell_html(self, spans: list[SpanRow]) -> str:
        """The notebook cell the trace ran in: from its run's metadata (with the link), else its spans' tag."""
        from ._cell_link import cell_html

        for run_id in dict.fromkeys(s["run_id"] for s in spans if s["run_id"]):
            shown = cell_html((self.store.get_run(run_id) or {}).get("metadata"))
            if shown:
                return shown
        for span in spans:
            attributes: dict[str, Any] = span.get("attributes") or {}
            label = attributes.get("agentnb.notebook.cell")
            if label:
                return f"<span class='anb-run-cell'>cell <code class='anb-cell-label'>{escape(label)}</code></span>"
        return ""

    def _on_select(self, event: Any) -> None:
        if not event.new or self._frame is None:
            return
        try:
            span_id = self.table.value.iloc[event.new[0]]["span_id"]
        except (IndexError, KeyError):
            return
        span = self._spans.get(span_id)
        if span is None:
            return
        fields = {k: v for k, v in span.items() if k not in {"attributes", "events", "resource"}}
        set_html(
            self.details,
            f"<div class='anb-card anb-span-details'><div class='anb-title'>{escape(span.get('name'))}</div>"
            f"{json_html(fields)}<b>Attributes</b>{json_html(span.get('attributes') or {})}"
            f"<b>Events</b>{json_html(span.get('events') or [])}</div>",
        )

    def _csv(self) -> io.StringIO:
        import pandas as pd

        frame = pd.DataFrame.from_records(list(self._spans.values())) if self._spans else pd.DataFrame()
        buffer = io.StringIO()
        frame.to_csv(buffer, index=False)
        buffer.seek(0)
        return buffer
