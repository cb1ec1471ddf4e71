"""The experiments view: every stored evaluation, one experiment's cases with failing ones first, and two
experiments compared case by case.

It reads what ``agentnb.evals.evaluate`` wrote to the run store, from any process; polling costs one small
query (the experiments' highest revision) until something changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import panel as pn

from agentnb._html import badge, escape

from ._guard import view_callback
from ._widgets import html_pane, set_html, table_theme, tabs_stylesheets, watch

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["ExperimentsView"]

_LIST_COLUMNS = ["name", "status", "target", "cases", "updated_at"]
_COMPARE_COLUMNS = ["case_id", "change", "worse", "status_a", "status_b", "tools_a", "tools_b", "output_a", "output_b"]
_MAX_EXPERIMENTS = 500


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in cast("list[Any]", value))
    if isinstance(value, float):
        return "" if value != value else f"{value:.3g}"
    return str(value)


class ExperimentsView:
    """Stored experiments: the list, one experiment (summary, score chart, cases failing first), a comparison.

    Args:
        store: The run store the experiments are in.

    Example:
        >>> from agentnb.store import RunStore
        >>> from agentnb.devui._experiments import ExperimentsView
        >>> ExperimentsView(RunStore(":memory:")).refresh()
        0
    """

    def __init__(self, store: Store) -> None:
        import pandas as pd

        self.store = store
        self._rev: int | None = None
        self._names: list[str] = []
        self.selected: str | None = None
        self.info = html_pane("", css_classes=["anb-experiments-info"])
        self.table = pn.widgets.Tabulator(
            pd.DataFrame(columns=_LIST_COLUMNS),
            pagination="remote",
            page_size=10,
            show_index=False,
            disabled=True,
            selectable=1,
            sizing_mode="stretch_width",
            layout="fit_data_stretch",
            theme=table_theme(),
            css_classes=["anb-experiments-table"],
        )
        self.detail = html_pane("", css_classes=["anb-experiment-detail"])
        self.compare_a = pn.widgets.Select(label="Baseline", options=[], width=220, css_classes=["anb-compare-a"])
        self.compare_b = pn.widgets.Select(label="Candidate", options=[], width=220, css_classes=["anb-compare-b"])
        self.compare_button = pn.widgets.Button(label="Compare", width=110, css_classes=["anb-compare-button"])
        self.compare_info = html_pane("", css_classes=["anb-compare-info"])
        self.compare_table = pn.widgets.Tabulator(
            pd.DataFrame(columns=_COMPARE_COLUMNS),
            pagination="remote",
            page_size=15,
            show_index=False,
            disabled=True,
            selectable=1,
            sizing_mode="stretch_width",
            layout="fit_data_stretch",
            formatters={c: {"type": "plaintext"} for c in ("output_a", "output_b", "tools_a", "tools_b")},
            theme=table_theme(),
            css_classes=["anb-compare-table"],
        )
        self.compare_case = html_pane("", css_classes=["anb-compare-case"])
        self._diff: Any = None
        self._pair: tuple[str, str] = ("", "")
        self.errors = pn.Column(sizing_mode="stretch_width")
        watch(self.table, self._on_select, "selection")
        watch(self.compare_table, self._on_compare_select, "selection")
        self.compare_button.on_click(lambda _e: self.compare())

    def show_error(self, card: Any) -> None:
        """Show a failed callback's error card in this view."""
        self.errors.objects = [card]

    def panel(self) -> pn.viewable.Viewable:
        """Return the view's layout."""
        return pn.Column(
            self.info,
            self.table,
            self.errors,
            pn.Tabs(
                ("Experiment", self.detail),
                (
                    "Compare",
                    pn.Column(
                        pn.Row(self.compare_a, self.compare_b, self.compare_button),
                        self.compare_info,
                        self.compare_table,
                        self.compare_case,
                        sizing_mode="stretch_width",
                    ),
                ),
                sizing_mode="stretch_width",
                stylesheets=tabs_stylesheets(),
                css_classes=["anb-experiment-tabs"],
            ),
            sizing_mode="stretch_width",
            css_classes=["anb-experiments-view"],
        )

    def start_polling(self, period_ms: int = 1000) -> None:
        """Poll the store while this browser session lives."""
        self.refresh()
        pn.state.add_periodic_callback(self.poll, period=period_ms)

    @view_callback("Run store")
    def poll(self) -> None:
        """Refresh when an experiment was created or changed (one small query otherwise)."""
        latest = self.store.list_experiments(limit=1)
        rev = latest[0]["rev"] if latest else 0
        if rev != self._rev:
            self.refresh()
            if self.selected is not None:
                self.select(self.selected)

    @view_callback("Cannot list experiments")
    def refresh(self) -> int:
        """Reload the list of experiments; return how many there are."""
        from agentnb.evals import experiments

        frame = experiments(store=self.store, limit=_MAX_EXPERIMENTS)
        listed = self.store.list_experiments(limit=1)
        self._rev = listed[0]["rev"] if listed else 0
        shown = frame.copy()
        shown["updated_at"] = [str(t)[:19] for t in shown["updated_at"]]
        for column in shown.columns[len(_LIST_COLUMNS) + 1 :]:
            shown[column] = [_text(v) for v in shown[column]]
        shown = shown.drop(columns=["created_at"])
        self.table.value = shown
        self._names = list(frame["name"])
        if self.selected in self._names:
            self.table.selection = [self._names.index(self.selected)]
        options = list(self._names)
        for select in (self.compare_a, self.compare_b):
            keep = select.value
            select.options = options
            if keep in options:
                select.value = keep
        if len(options) >= 2 and self.compare_a.value == self.compare_b.value:
            self.compare_a.value, self.compare_b.value = options[1], options[0]
        running = int((frame["status"] == "running").sum()) if len(frame) else 0
        set_html(
            self.info,
            f"<span class='anb-title'>Experiments</span> <span class='anb-muted'>{len(frame)} in the store"
            f"{f', {running} running' if running else ''} · live</span>",
        )
        return len(frame)

    @view_callback("Cannot open experiment")
    def _on_select(self, event: Any) -> None:
        if not event.new or event.new == event.old:
            return
        try:
            name = self._names[int(event.new[0])]
        except IndexError:
            return
        self.select(name)

    @view_callback("Cannot open experiment")
    def select(self, name: str) -> None:
        """Show one experiment: summary, score chart and its cases, failing first."""
        from agentnb.evals import load_experiment
        from agentnb.views import experiment_html

        self.selected = name
        experiment = load_experiment(name, store=self.store)
        set_html(self.detail, experiment_html(experiment))

    @view_callback("Cannot compare")
    def compare(self, a: str | None = None, b: str | None = None) -> None:
        """Compare two experiments case by case, regressions first."""
        import pandas as pd

        from agentnb.evals import compare
        from agentnb.views import worse_html

        first, second = a or self.compare_a.value, b or self.compare_b.value
        if not first or not second:
            set_html(self.compare_info, "<span class='anb-muted'>Choose two experiments.</span>")
            return
        diff = compare(first, second, store=self.store)
        deltas = [c for c in diff.columns if c.endswith("_delta")]
        columns = [*_COMPARE_COLUMNS, *deltas]
        shown = pd.DataFrame({c: [_text(v) for v in diff[c]] for c in columns}, columns=columns)
        self._diff, self._pair = diff, (first, second)
        self.compare_table.value = shown
        counts = diff["change"].value_counts().to_dict()
        kinds = {"regression": "err", "improvement": "ok", "same": "", "only_a": "warn", "only_b": "warn"}
        badges = " ".join(badge(f"{n} {change}", kinds.get(str(change), "")) for change, n in counts.items())
        set_html(
            self.compare_info,
            f"<span class='anb-title'>{escape(first)} → {escape(second)}</span> {badges}"
            + worse_html(diff.attrs.get("worse") or {}),
        )
        self.show_case(0)  # regressions come first: the worst case is shown side by side at once

    def show_case(self, index: int) -> None:
        """Show one compared case side by side: both answers and tool paths, and the diff of the answers."""
        from agentnb.views import compare_case_html

        diff = self._diff
        if diff is None or not 0 <= index < len(diff):
            set_html(self.compare_case, "")
            return
        set_html(self.compare_case, compare_case_html(diff.iloc[index], *self._pair))

    @view_callback("Cannot show the case")
    def _on_compare_select(self, event: Any) -> None:
        if event.new:
            self.show_case(int(event.new[0]))
