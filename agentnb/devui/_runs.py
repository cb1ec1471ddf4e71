"""The runs view: every run in the run store, from any process, updating live; a run's events, paged.

Polling is cheap by design: each tick reads the store's ``watermark()`` (one small query on SQLite; on
PostgreSQL an answer from memory until another machine's write is notified) and only when the runs marker
moved fetches the changed rows with ``summarize_runs(after_rev=...)``, the query behind ``agentnb.runs()``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import panel as pn

from .._json import is_json_object
from .._plain import value_text
from .._provenance import cell_label
from ..store import RunSummaryRow, Store, Watermark
from ..views import WorkflowViewModel
from ._guard import view_callback
from ._widgets import error_card, html_pane, set_html, table_theme, watch

__all__ = ["RunsView", "event_table", "events_frame", "states_from_events"]

# What a person scans first comes first (the run id, for copying, last); the end time is the start plus the
# duration. cell: the notebook cell that started the run.
_RUN_COLUMNS = [
    "name", "kind", "status", "cell", "started_at", "duration_ms", "input_tokens", "output_tokens", "error", "run_id"
]  # fmt: skip
_EVENT_COLUMNS = ["seq", "type", "executor_id", "timestamp", "data"]
_MAX_RUNS = 1000
_DATA_PREVIEW = 160


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.0f}" if isinstance(value, float) else str(value)


def _when(value: Any) -> str:
    """A stored ISO time as the table shows it: ``2026-12-01 20:26:08`` (UTC, to the second)."""
    return str(value or "")[:19].replace("T", " ")


def events_frame(rows: Sequence[Mapping[str, Any]]) -> Any:
    """Turn stored event rows into a DataFrame for the paged event table (data shortened to one line)."""
    import pandas as pd

    records: list[dict[str, Any]] = []
    for row in rows:
        text = value_text(row.get("data"), _DATA_PREVIEW)
        records.append(
            {
                "seq": row.get("seq"),
                "type": row.get("type"),
                "executor_id": row.get("executor_id") or "",
                "timestamp": str(row.get("timestamp") or "")[11:23],
                "data": text,
            }
        )
    return pd.DataFrame.from_records(records, columns=_EVENT_COLUMNS)


def event_table(**params: Any) -> pn.widgets.Tabulator:
    """Return a read-only, remotely paged event table: only the visible page goes to the browser."""
    import pandas as pd

    params.setdefault("page_size", 25)
    return pn.widgets.Tabulator(
        pd.DataFrame(columns=_EVENT_COLUMNS),
        theme=table_theme(),
        pagination="remote",
        show_index=False,
        disabled=True,
        sizing_mode="stretch_width",
        layout="fit_data_stretch",
        formatters={"data": {"type": "plaintext"}},
        **params,
    )


def states_from_events(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each executor's latest state, replayed from a run's stored events through the workflow view model."""
    return WorkflowViewModel().replay(rows).states


class RunsView:
    """All runs in the store, refreshed while the page is open; select one to see its events.

    Example:
        >>> from agentnb.store import RunStore
        >>> from agentnb.devui._runs import RunsView
        >>> RunsView(RunStore(":memory:")).refresh()
        0
    """

    def __init__(self, store: Store, *, on_open: Callable[[str, str], None] | None = None) -> None:
        import pandas as pd

        self.store = store
        self.on_open = on_open
        self._rows: dict[str, RunSummaryRow] = {}
        self._rev = -1
        self._watermark: Watermark | None = None
        self.table = pn.widgets.Tabulator(
            pd.DataFrame(columns=_RUN_COLUMNS),
            theme=table_theme(),
            pagination="remote",
            page_size=15,
            show_index=False,
            disabled=True,
            selectable=True,  # a click picks one run; Ctrl/Shift-click picks several for "Add to dataset"
            sizing_mode="stretch_width",
            layout="fit_data_stretch",
            css_classes=["anb-runs-table"],
        )
        self.info = html_pane("", css_classes=["anb-runs-info"])
        self.events = event_table(css_classes=["anb-run-events"])
        self.run_title = html_pane("")
        self.open_timeline = pn.widgets.Button(label="Open in time travel", width=170, disabled=True)
        self.open_trace = pn.widgets.Button(label="Open trace", width=120, disabled=True)
        self.dataset_name = pn.widgets.TextInput(placeholder="dataset name", value="from-runs", width=160)
        self.add_to_dataset = pn.widgets.Button(label="Add to dataset", width=130, disabled=True)
        self.add_to_dataset.on_click(lambda _e: self.add_selected_to_dataset())
        self.dataset_note = html_pane("", css_classes=["anb-dataset-note"])
        self.errors = pn.Column(sizing_mode="stretch_width")
        watch(self.table, self._on_select, "selection")
        self.open_timeline.on_click(lambda _e: self._open("timetravel"))
        self.open_trace.on_click(lambda _e: self._open("traces"))
        self._selected: str | None = None
        self._chosen: list[str] = []  # every selected run, in table order
        self.graph_area = pn.Column(sizing_mode="stretch_width", css_classes=["anb-run-graph"])
        self._graph: Any = None
        self._graph_run: str | None = None

    def show_error(self, card: Any) -> None:
        """Show a failed callback's error card above the run details."""
        self.errors.objects = [card]

    def panel(self) -> pn.viewable.Viewable:
        """Return the view's layout."""
        return pn.Column(
            self.info,
            self.table,
            self.errors,
            self.run_title,
            pn.Row(self.open_timeline, self.open_trace, self.dataset_name, self.add_to_dataset, self.dataset_note),
            self.graph_area,
            self.events,
            sizing_mode="stretch_width",
            css_classes=["anb-runs-view"],
        )

    def start_polling(self, period_ms: int = 1000) -> None:
        """Poll the store while this browser session lives (Panel removes the callback with the session)."""
        self.refresh()
        pn.state.add_periodic_callback(self.poll, period=period_ms)

    @view_callback("Run store")
    def poll(self) -> None:
        """Refresh only when the store's watermark says something changed."""
        try:
            mark = self.store.watermark()
        except Exception as exc:  # the store may be busy or gone; show it, keep serving
            self.errors.objects = [error_card(exc, title="Run store")]
            return
        if mark == self._watermark:
            return
        runs_changed = self._watermark is None or mark.get("runs") != self._watermark.get("runs")
        events_changed = self._watermark is None or mark.get("events") != self._watermark.get("events")
        self._watermark = mark
        if runs_changed:
            self.refresh()
        if events_changed and self._selected:
            self._load_events(self._selected)

    @view_callback("Cannot list runs")
    def refresh(self) -> int:
        """Fetch runs changed since the last refresh; return how many rows changed."""
        import pandas as pd

        # The query behind agentnb.runs(), restricted to runs changed since the last refresh.
        rows = self.store.summarize_runs(after_rev=self._rev if self._rev >= 0 else None, limit=_MAX_RUNS)
        for row in rows:
            self._rows[row["run_id"]] = row
            self._rev = max(self._rev, int(row.get("rev") or 0))
        if rows or self.table.value is None or len(self.table.value) != len(self._rows):
            ordered = sorted(self._rows.values(), key=lambda r: str(r.get("started_at") or ""), reverse=True)
            frame = pd.DataFrame.from_records(
                [
                    {k: _cell(r.get(k)) for k in _RUN_COLUMNS}
                    | {"cell": _cell(cell_label(r.get("metadata"))), "started_at": _when(r.get("started_at"))}
                    for r in ordered
                ],
                columns=_RUN_COLUMNS,
            )
            self.table.value = frame
            if self._chosen:
                # Keep the user's rows selected while new runs arrive above them.
                ids = list(frame["run_id"])
                self.table.selection = [ids.index(r) for r in self._chosen if r in ids]
        running = sum(1 for r in self._rows.values() if r.get("status") in {"running", "in_progress", "started"})
        set_html(
            self.info,
            f"<span class='anb-title'>Runs</span> <span class='anb-muted'>{len(self._rows)} in the store"
            f"{f', {running} running' if running else ''} · live</span>",
        )
        return len(rows)

    @view_callback("Cannot open run")
    def _on_select(self, event: Any) -> None:
        frame = self.table.value
        new: list[int] = list(event.new or [])
        try:
            self._chosen = [str(frame.iloc[i]["run_id"]) for i in sorted(new)]
        except (IndexError, KeyError):
            return
        self.add_to_dataset.disabled = not self._chosen
        self.add_to_dataset.name = f"Add {len(self._chosen)} to dataset" if len(self._chosen) > 1 else "Add to dataset"
        added = [i for i in new if i not in (event.old or [])]
        if not added:
            return
        self.select(str(frame.iloc[added[-1]]["run_id"]))  # the row just clicked is the one shown

    @view_callback("Cannot open run")
    def select(self, run_id: str) -> None:
        """Show one run's events."""
        self._selected = run_id
        run = self._rows.get(run_id) or self.store.get_run(run_id) or {}
        self.open_timeline.disabled = run.get("kind") != "workflow"
        self.open_trace.disabled = False
        self.add_to_dataset.disabled = False
        from agentnb._html import escape

        from ._cell_link import cell_html

        if "metadata" not in run:  # the summary rows carry it; a run read another way may not
            run = self.store.get_run(run_id) or run
        set_html(
            self.run_title,
            f"<span class='anb-title'>{escape(run.get('name', ''))}</span> "
            f"<span class='anb-muted'>{escape(run_id)} · {escape(run.get('status', ''))}</span> "
            f"{cell_html(run.get('metadata'))}",
        )
        self._load_events(run_id)

    @view_callback("Cannot add the runs to a dataset")
    def add_selected_to_dataset(self) -> None:
        """Append the selected runs (each one's input, and its answer as the expected output) to the named dataset."""
        chosen = self._chosen or ([self._selected] if self._selected is not None else [])
        if not chosen:
            return
        from agentnb._html import escape
        from agentnb.evals import add_runs_to_dataset

        name = self.dataset_name.value.strip() or "from-runs"
        saved = add_runs_to_dataset(name, chosen, store=self.store)
        set_html(
            self.dataset_note, f"<span class='anb-muted'>{escape(name)} v{saved.version}: {len(saved)} rows</span>"
        )

    def _load_events(self, run_id: str) -> None:
        rows = self.store.list_events(run_id)
        self.events.value = events_frame(rows)
        self._show_graph(run_id, rows)

    def _show_graph(self, run_id: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Draw a workflow run's graph from the description the run store keeps, coloured by its events.

        This works for runs made anywhere (a notebook in another process), without the workflow object.
        """
        run = self._rows.get(run_id) or self.store.get_run(run_id) or {}
        metadata: Any = run.get("metadata") or {}
        if isinstance(metadata, str):
            try:
                metadata = json.loads(metadata)
            except ValueError:
                metadata = {}
        graph = metadata.get("graph") if is_json_object(metadata) else None
        if run.get("kind") != "workflow" or not isinstance(graph, dict):
            self.graph_area.objects = []
            self._graph, self._graph_run = None, None
            return
        if self._graph_run != run_id:
            from ._graph import GraphPane

            try:
                self._graph = GraphPane(graph, max_height=360)
            except Exception as exc:  # an unreadable description only hides the drawing
                self.graph_area.objects = [error_card(exc, title="Cannot draw this run's graph")]
                self._graph, self._graph_run = None, run_id
                return
            self._graph_run = run_id
            self.graph_area.objects = [self._graph.panel()]
        if self._graph is not None:
            self._graph.set_states(states_from_events(rows))
            self._graph.flush()

    @view_callback("Cannot open run")
    def _open(self, where: str) -> None:
        if self._selected and self.on_open is not None:
            self.on_open(where, self._selected)
