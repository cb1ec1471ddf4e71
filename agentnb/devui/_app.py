"""The DevUI application: a sidebar of entities and a main area of views (chat, workflow, runs, time travel, traces).

One :class:`DevUI` is built per browser session; the catalog (the agent and workflow objects) is shared by all
sessions of a server, the per-session state (chat sessions, selections, polling) is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import panel as pn

from agentnb._html import badge, escape

from ._discovery import Catalog, Entity
from ._widgets import error_card, html_pane, tabs_stylesheets, watch

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["DevUI", "create_app", "enable_tracing"]

_PAGE_CSS = """
body{background:#f6f8fa}
.anb-sidebar{border-right:1px solid #d0d7de;background:#fff}
"""

# The entity list reads as a navigation list: left-aligned entries, the selected one filled.
_NAV_CSS = """
:host .bk-btn{justify-content:flex-start;text-align:left;border:0;box-shadow:none;font-weight:500;
 background:transparent;color:inherit;padding:5px 10px;border-radius:6px}
:host .bk-btn:hover{background:rgba(127,127,127,.16)}
:host .bk-btn.bk-btn-primary{background:var(--primary-bg-color,#0072b5);color:#fff}
"""

_TAB_ENTITY, _TAB_RUNS, _TAB_TIMETRAVEL, _TAB_TRACES = 0, 1, 2, 3


class DevUI:
    """The whole DevUI for one browser session.

    Args:
        catalog: The agents and workflows to show, plus modules that failed to import.
        store: The run store to read runs, events, spans and checkpoints from (default: the shared store).
        poll_ms: How often the runs view checks the store for changes.
        tracing: Switch on OpenTelemetry tracing in this process (spans go to the run store) so runs made
            here appear in the traces view. The app and the launcher do; ``serve()`` from a notebook leaves
            the notebook's own tracing setup alone unless asked.
        mode: ``"developer"`` (everything) or ``"user"``: only the chat and workflow views, without the
            runs, time-travel and traces panels (for people who use the agents rather than debug them).
        serving_url: Where the same entities are served over the Responses API, A2A and MCP
            (``serve(protocols=True)``); the header links to it.

    Example:
        >>> from agentnb.devui import DevUI
        >>> from agentnb.devui.demos import demo_catalog
        >>> app = DevUI(demo_catalog())
        >>> app.servable()  # doctest: +SKIP
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        store: Store | None = None,
        poll_ms: int = 1000,
        tracing: bool = False,
        mode: Literal["developer", "user"] = "developer",
        serving_url: str | None = None,
    ) -> None:
        if mode not in {"developer", "user"}:
            raise ValueError(f"mode must be 'developer' or 'user', got {mode!r}")
        self.mode = mode
        self.catalog = catalog
        self.serving_url = serving_url
        if store is None:
            from agentnb.store import default_store

            store = default_store()
        self.store = store
        if tracing:
            enable_tracing(store)
        self.poll_ms = poll_ms
        self._views: dict[str, Any] = {}
        self._selected: str | None = None
        self._entity_buttons: dict[str, pn.widgets.Button] = {}
        self.entity_area = pn.Column(sizing_mode="stretch_width", css_classes=["anb-entity-area"])
        self._runs: Any = None
        self._timetravel: Any = None
        self._traces: Any = None
        self._experiments: Any = None
        self.tabs = pn.Tabs(
            dynamic=True,
            sizing_mode="stretch_width",
            css_classes=["anb-tabs"],
            stylesheets=tabs_stylesheets(),
        )
        self._layout: pn.viewable.Viewable | None = None
        self._built_from: dict[str, int] = {}  # entity id -> the mtime of the YAML file its open view shows

    # ------------------------------------------------------------------------------------------------ build
    def panel(self) -> pn.viewable.Viewable:
        """Build (once) and return the page layout."""
        if self._layout is None:
            # Views made later (a workflow's event table, the runs table) use Tabulator; its script must be in
            # the page from the start, since a page's resources are fixed when it first renders.
            pn.extension("tabulator")
            self._layout = self._build()
            self._follow_system_theme()
        return self._layout

    def servable(self, title: str = "agentnb DevUI") -> pn.viewable.Viewable:
        """Mark the layout as the page of a ``panel serve`` app."""
        return self.panel().servable(title=title)

    def _build(self) -> pn.viewable.Viewable:
        from ._experiments import ExperimentsView
        from ._runs import RunsView
        from ._timetravel import TimeTravelView
        from ._traces import TracesView

        self.tabs[:] = [("Playground", self.entity_area)]
        if self.mode == "developer":
            self._runs = RunsView(self.store, on_open=self.open_run)
            self._timetravel = TimeTravelView(self.store, self.catalog)
            self._traces = TracesView(self.store)
            self._experiments = ExperimentsView(self.store)
            self.tabs.extend(
                [
                    ("Runs", self._runs.panel()),
                    ("Time travel", self._timetravel.panel()),
                    ("Traces", self._traces.panel()),
                    ("Experiments", self._experiments.panel()),
                ]
            )
        header = html_pane(self._header_html(), css_classes=["anb-header"])
        sidebar = pn.Column(
            *self._sidebar_items(), width=260, css_classes=["anb-sidebar"], styles={"padding-right": "8px"}
        )
        first = (self.catalog.agents or self.catalog.workflows or [None])[0]
        if first is not None:
            self.select(first.id)
        else:
            self.entity_area.objects = [html_pane("<p class='anb-muted'>No agents or workflows to show.</p>")]
        if self._runs is not None and self._timetravel is not None:
            if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
                self._runs.start_polling(self.poll_ms)
                self._timetravel.start_polling(self.poll_ms)
                self._experiments.start_polling(self.poll_ms)
            else:
                self._runs.refresh()
        served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
        if served and any(e.path is not None for e in self.catalog.entities):  # YAML entities: follow their files
            pn.state.add_periodic_callback(self._poll_definitions, period=self.poll_ms)
        return pn.Column(
            header,
            pn.Row(sidebar, self.tabs, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            stylesheets=[_PAGE_CSS],
            css_classes=["anb-devui"],
        )

    def _follow_system_theme(self) -> None:
        """Switch to the dark theme when the browser prefers it (unless the URL picks a theme, ``?theme=``).

        The browser tells its preference only once the page is up, and a Panel page's theme is fixed when it
        renders, so a browser that prefers dark reloads once with ``?theme=dark``.
        """
        if pn.state.curdoc is None or pn.state.curdoc.session_context is None:
            return
        if "theme" in (pn.state.session_args or {}):
            return
        info, location = pn.state.browser_info, pn.state.location
        if info is None or location is None:
            return

        def follow(*_: Any) -> None:
            if info.dark_mode and pn.config.theme != "dark":
                location.reload = True
                location.search = "?theme=dark"

        watch(info, follow, "dark_mode")
        follow()

    def _header_html(self) -> str:
        mode = ""
        if self.catalog.offline:
            mode = (
                "<div class='anb-card anb-offline' style='background:#fff8c5'>"
                f"{badge('offline', 'warn')} {escape(self.catalog.note)}</div>"
            )
        elif self.catalog.note:
            mode = f"<div class='anb-card'>{badge('live', 'ok')} {escape(self.catalog.note)}</div>"
        served = ""
        if self.serving_url:
            url = escape(self.serving_url.rstrip("/"))
            served = (
                f"<span class='anb-muted anb-served'>served at <a href='{url}/' target='_blank' rel='noopener'>"
                f"{url}</a> (Responses <code>{url}/v1</code> · A2A <code>/a2a/&lt;id&gt;/</code> · "
                "MCP <code>/mcp/&lt;id&gt;</code>)</span>"
            )
        return (
            "<div class='anb-head'><span class='anb-title' style='font-size:20px'>agentnb DevUI</span>"
            f"<span class='anb-muted'>{len(self.catalog.agents)} agent(s) · "
            f"{len(self.catalog.workflows)} workflow(s)</span>{served}</div>{mode}"
        )

    def _sidebar_items(self) -> list[Any]:
        items: list[Any] = []
        for title, entities in (("Agents", self.catalog.agents), ("Workflows", self.catalog.workflows)):
            items.append(html_pane(f"<div class='anb-role'>{escape(title)}</div>"))
            if not entities:
                items.append(html_pane("<span class='anb-muted'>none</span>"))
            for entity in entities:
                icon = "▸" if entity.kind == "agent" else "⇶"
                button = pn.widgets.Button(
                    label=f"{icon} {entity.name}",
                    color="light",
                    sizing_mode="stretch_width",
                    css_classes=["anb-entity", f"anb-entity-{entity.id}"],
                    stylesheets=[_NAV_CSS],
                    description=entity.description or None,
                )
                button.on_click(lambda _e, eid=entity.id: self.select(eid))
                self._entity_buttons[entity.id] = button
                items.append(button)
        if self.catalog.errors:
            items.append(html_pane("<div class='anb-role anb-error'>Could not load</div>"))
            for error in self.catalog.errors:
                body = html_pane(
                    f"<div class='anb-error'>{escape(error.message)}</div>"
                    + (f"<pre>{escape(error.traceback)}</pre>" if error.traceback else "")
                )
                items.append(
                    pn.Card(
                        body,
                        title=f"<span class='anb-error'>⚠ {escape(_short_source(error.source))}</span>",
                        collapsed=True,
                        sizing_mode="stretch_width",
                        css_classes=["anb-load-error"],
                    )
                )
        return items

    # ----------------------------------------------------------------------------------------------- routing
    def select(self, entity_id: str) -> None:
        """Show the view of one agent (chat) or workflow (graph and run controls)."""
        self.catalog.reload(entity_id)  # a YAML file saved since it was loaded is built again
        entity = self.catalog.get(entity_id)
        if self._built_from.get(entity_id, entity.mtime_ns) != entity.mtime_ns:
            # The view shows an older file (reloaded here or by another browser session): build it anew.
            self._views.pop(entity_id, None)
            self._selected = None
        if self._selected == entity_id:
            return
        self._selected = entity_id
        for eid, button in self._entity_buttons.items():
            button.color = "primary" if eid == entity_id else "light"
        try:
            view = self._views.get(entity_id) or self._make_view(entity)
        except Exception as exc:  # a broken entity shows its error; the rest of the app keeps working
            self.entity_area.objects = [error_card(exc, title=f"Cannot open {entity.name}")]
        else:
            self._views[entity_id] = view
            self._built_from[entity_id] = entity.mtime_ns
            self.entity_area.objects = [view.panel()]
        self.tabs.active = _TAB_ENTITY

    def reload_if_saved(self) -> bool:
        """Rebuild the open entity's view when its YAML file was saved since; ``True`` when it was.

        The page calls this every ``poll_ms``, so an edit saved in an editor shows (YAML pane and graph)
        without reopening the entity. The tab the user is on stays active.
        """
        entity_id = self._selected
        if entity_id is None:
            return False
        try:
            entity = self.catalog.get(entity_id)
        except KeyError:
            return False
        if entity.path is None:
            return False
        self.catalog.reload(entity_id)
        if self._built_from.get(entity_id, entity.mtime_ns) == entity.mtime_ns:
            return False
        active = self.tabs.active
        self.select(entity_id)
        self.tabs.active = active
        return True

    def _poll_definitions(self) -> None:
        self.reload_if_saved()

    def _make_view(self, entity: Entity) -> Any:
        if entity.kind == "agent":
            from ._chat import ChatView

            return ChatView(entity, store=self.store, on_open=self.open_run)
        from ._workflow import WorkflowView

        return WorkflowView(entity, store=self.store, on_checkpoint=self._on_workflow_run)

    def _on_workflow_run(self, run_id: str) -> None:
        # A run started on this page is the one its user wants to travel through next, even when the
        # time-travel view still shows a run of another workflow.
        if self._timetravel is not None:
            self._timetravel.refresh_runs()
            self._timetravel.open_run(run_id)

    def open_run(self, where: str, run_id: str) -> None:
        """Open a run in the time-travel (``"timetravel"``) or traces (``"traces"``) view."""
        if where == "timetravel" and self._timetravel is not None:
            self._timetravel.open_run(run_id)
            self.tabs.active = _TAB_TIMETRAVEL
        elif where == "traces" and self._traces is not None:
            self._traces.open_run(run_id)
            self.tabs.active = _TAB_TRACES


_tracing_stores: set[int] = set()


def enable_tracing(store: Store) -> bool:
    """Record this process's spans into ``store`` (once per process); ``False`` when the SDK is missing."""
    if id(store) in _tracing_stores:
        return True
    try:
        from agentnb.observability import configure_otel_providers

        configure_otel_providers(store=store)
    except (ImportError, RuntimeError):  # no SDK, or a foreign tracer provider: the traces view stays empty
        return False
    _tracing_stores.add(id(store))
    return True


def create_app(
    catalog: Catalog | None = None, *, store: Store | None = None, poll_ms: int = 1000, tracing: bool = False
) -> pn.viewable.Viewable:
    """Build the DevUI page for the current browser session.

    Args:
        catalog: What to show; ``None`` shows the demos that ship with agentnb.
        store: The run store (default: the shared store at ``$AGENTNB_HOME``).
        poll_ms: How often the runs view checks the store for changes.
        tracing: Record spans of runs made in this process into the store (see :class:`DevUI`).

    Returns:
        The page layout (call ``.servable()`` on it in a ``panel serve`` app).
    """
    from ._admission import refusal_for_session, refusal_page

    reason = refusal_for_session()  # before any agent code: a refused client gets nothing else
    if reason is not None:
        return refusal_page(reason)
    if catalog is None:
        from .demos import demo_catalog

        catalog = demo_catalog()
    return DevUI(catalog, store=store, poll_ms=poll_ms, tracing=tracing).panel()


def _short_source(source: str) -> str:
    return source.rsplit("/", 1)[-1] if "/" in source else source
