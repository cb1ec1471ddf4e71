"""The workflow view: the graph with live executor states, an input form, the event log, outputs and requests.

Runs go through the ordinary API: ``workflow.run(message, stream=True, checkpoint_storage=..., run_store=...)``
for a fresh run and ``workflow.run(responses={request_id: value}, ...)`` to answer ``request_info``. Every run
is checkpointed into the run store, so the time-travel view can list, inspect and fork it.

A streamed agent yields one ``output`` event per ``AgentResponseUpdate``; the view grows one card per agent
as its text arrives and shows the whole reply in it once the agent's executor completes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import panel as pn

from agentnb import AgentResponse, AgentResponseUpdate
from agentnb._html import badge, escape, json_html, kv_table
from agentnb._json import is_json_object
from agentnb.serving._responses import event_summary
from agentnb.views import WorkflowViewModel
from agentnb.workflows import WorkflowErrorDetails, WorkflowEvent, merge_streamed_outputs

from ._discovery import Entity
from ._forms import TypeForm, hints_of, type_label
from ._graph import GraphPane
from ._runs import event_table, events_frame
from ._steps import StepTimelinePane
from ._widgets import error_card, html_pane, jsonable, readable, set_html, watch

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["WorkflowRunner", "WorkflowView", "event_summary"]

_FLUSH_SECONDS = 0.15


def fields_html(value: Any) -> str:
    """Show a value as readable fields: a table of its top-level fields, or the value itself."""
    plain = readable(value)
    if is_json_object(plain) and plain:
        return kv_table(
            (str(k), escape(v) if isinstance(v, (str, int, float, bool)) or v is None else json_html(v))
            for k, v in plain.items()
        )
    return json_html(plain)


def _output_card(eid: str | None, value: Any) -> str:
    return f"<div class='anb-card anb-output'>{badge(eid or 'output', 'ok')}{json_html(jsonable(value))}</div>"


def _failure_html(title: str, details: WorkflowErrorDetails | Any) -> str:
    """A folded failure: type and message in the summary, the traceback inside."""
    if not isinstance(details, WorkflowErrorDetails):  # a failure stored by an older version: just its text
        summary = f"<summary class='anb-error'>{escape(title)}: {escape(details)}</summary>"
        return f"<details class='anb-card'>{summary}</details>"
    return (
        f"<details class='anb-card'><summary class='anb-error'>{escape(title)}: {escape(details.error_type)}: "
        f"{escape(details.message)}</summary><pre>{escape(details.traceback or '')}</pre></details>"
    )


def event_row(event: WorkflowEvent[Any], seq: int) -> dict[str, Any]:
    """A log row for one event: readable data for the table, the stored record under ``raw``."""
    record = event.to_dict()
    summary = event_summary(event)
    stamp = record.get("timestamp")
    seconds = float(stamp) if isinstance(stamp, (int, float)) else time.time()
    return {
        "seq": seq,
        "type": record.get("type"),
        "executor_id": record.get("executor_id"),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int((seconds % 1) * 1000):03d}",
        "data": summary["data"],
        "raw": record,
    }


class WorkflowRunner:
    """Run a workflow with checkpoints in the run store and report each event to a callback.

    Example:
        >>> from agentnb.store import RunStore
        >>> from agentnb.devui.demos.workflows import text_pipeline_workflow
        >>> runner = WorkflowRunner(text_pipeline_workflow(), RunStore(":memory:"))
        >>> events = [e async for e in runner.stream(message=None)]  # doctest: +SKIP
    """

    def __init__(self, workflow: Any, store: Store | None) -> None:
        self.workflow = workflow
        self.store = store

    def storage(self) -> Any:
        """The checkpoint storage in the run store."""
        from agentnb.workflows import RunStoreCheckpointStorage

        return RunStoreCheckpointStorage(self.store)

    def stream(
        self, *, message: Any = None, responses: dict[str, Any] | None = None, checkpoint_id: str | None = None
    ) -> Any:
        """Start (or continue) a run and return its event stream."""
        return self.workflow.run(
            message,
            stream=True,
            responses=responses,
            checkpoint_id=checkpoint_id,
            checkpoint_storage=self.storage(),
            run_store=self.store,
        )


class WorkflowView:
    """Run one workflow and watch it: graph, input form, event log, outputs and human-input requests.

    Example:
        >>> from agentnb.devui.demos import demo_catalog
        >>> view = WorkflowView(demo_catalog().workflows[0], store=None)  # doctest: +SKIP
    """

    def __init__(
        self, entity: Entity, *, store: Store | None = None, on_checkpoint: Callable[[str], None] | None = None
    ) -> None:
        self.entity = entity
        self.workflow = entity.obj
        self.store = store
        self.on_checkpoint = on_checkpoint
        self.runner = WorkflowRunner(self.workflow, store)
        # A functional workflow has no graph: its step timeline stands in its place, driven the same way.
        self.steps = StepTimelinePane(self.workflow) if hasattr(self.workflow, "steps") else None
        self.graph: GraphPane | StepTimelinePane = self.steps if self.steps is not None else GraphPane(self.workflow)
        types_ = self.workflow.input_types or [str]
        flat: list[Any] = []
        for t in types_:
            flat.extend(hints_of(t))
        self.form = TypeForm(flat, submit_label="Run")
        self.form.submit.css_classes = ["anb-form-submit", "anb-run-workflow"]
        self.form.submit.on_click(self._on_run)
        self.status = html_pane("<span class='anb-muted'>idle</span>", css_classes=["anb-wf-status"])
        self.outputs = pn.Column(sizing_mode="stretch_width", css_classes=["anb-wf-outputs"])
        self.requests = pn.Column(sizing_mode="stretch_width", css_classes=["anb-wf-requests"])
        self.errors = pn.Column(sizing_mode="stretch_width")
        self.log = event_table(css_classes=["anb-event-log"], selectable=1)
        watch(self.log, self._on_pick_event, "selection")
        self.log_info = html_pane("", css_classes=["anb-log-info"])
        self.raw_event = html_pane("<span class='anb-muted'>select an event in the log</span>")
        self.raw_card = pn.Card(
            self.raw_event, title="Raw event", collapsed=True, sizing_mode="stretch_width", css_classes=["anb-raw"]
        )
        self.banner = html_pane("", visible=False, css_classes=["anb-hitl-banner"])
        # What the runs did (states, each executor's last input, outputs and error): the model the notebook's
        # view renders too.
        self.model = WorkflowViewModel(self.workflow)
        # Each streaming agent's updates so far and the output card that grows with them.
        self._streams: dict[str | None, tuple[list[AgentResponseUpdate], pn.pane.HTML]] = {}
        self.node_select = pn.widgets.Select(
            label="Executor", options=list(self.graph.executor_ids), sizing_mode="stretch_width",
            css_classes=["anb-node-select"],
        )  # fmt: skip
        self.node_info = html_pane("<span class='anb-muted'>not run yet</span>", css_classes=["anb-node-info"])
        watch(self.node_select, lambda _e: self._show_node(), "value")
        self._rows: list[dict[str, Any]] = []
        self._frame: Any = None
        self._pending_rows: list[dict[str, Any]] = []
        self._last_flush = 0.0
        self._busy = False
        self._layout: pn.viewable.Viewable | None = None

    # ----------------------------------------------------------------------------------------------- layout
    def panel(self) -> pn.viewable.Viewable:
        """Return the view's layout (built once: a widget must not sit in two layouts)."""
        if self._layout is None:
            self._layout = self._build()
        return self._layout

    def _build(self) -> pn.viewable.Viewable:
        wf = self.workflow
        inputs = ", ".join(type_label(t) for t in (wf.input_types or [str]))
        header = html_pane(
            f"<div class='anb-head'><span class='anb-title'>⇶ {escape(self.entity.name)}</span>"
            f"<span class='anb-muted'>{escape(self.entity.description)}</span></div>"
            f"<div class='anb-muted'>{len(wf.executors)} {'steps' if self.steps else 'executors'} · start: "
            f"{escape(wf.start_executor_id)} · input: {escape(inputs)}</div>"
        )
        side = pn.Column(
            html_pane("<div class='anb-role'>Input</div>"),
            self.form.panel(),
            self.status,
            html_pane("<div class='anb-role'>Requests</div>"),
            self.requests,
            html_pane("<div class='anb-role'>Outputs</div>"),
            self.outputs,
            self.errors,
            pn.Card(
                self.node_select,
                self.node_info,
                title="Executor details",
                collapsed=True,
                sizing_mode="stretch_width",
                css_classes=["anb-node-card"],
            ),
            width=380,
        )
        graph: pn.viewable.Viewable = self.graph.panel()
        if self.entity.definition is not None:
            # A declarative workflow: its YAML beside the graph it became.
            definition = pn.Card(
                html_pane(f"<pre class='anb-yaml'>{escape(self.entity.definition)}</pre>"),
                title=f"Definition ({escape(Path(self.entity.path or 'workflow.yaml').name)})",
                collapsed=False,
                sizing_mode="stretch_width",
                css_classes=["anb-definition"],
            )
            graph = pn.Column(graph, definition, sizing_mode="stretch_width")
        return pn.Column(
            header,
            self.banner,
            pn.Row(graph, side, sizing_mode="stretch_width"),
            html_pane("<div class='anb-role'>Event log</div>"),
            self.log_info,
            self.log,
            self.raw_card,
            sizing_mode="stretch_width",
            css_classes=["anb-workflow-view"],
        )

    # ------------------------------------------------------------------------------------------------- runs
    async def _on_run(self, _event: Any = None) -> None:
        try:
            value = self.form.value()
        except ValueError as exc:
            self.form.show_error(str(exc))
            return
        self.form.show_error("")
        await self.run(message=value)

    async def run(
        self, *, message: Any = None, responses: dict[str, Any] | None = None, checkpoint_id: str | None = None
    ) -> None:
        """Start a run (or continue one with answers) and show its events as they arrive."""
        if self._busy:
            set_html(self.status, "<span class='anb-error'>a run is in progress</span>")
            return
        self._busy = True
        self.form.submit.disabled = True
        fresh = responses is None
        # A fresh run starts over; answering a request continues the run shown.
        self.model.new_run(clear_states=fresh, clear_outputs=fresh)
        if fresh:
            self.graph.reset()
            self.outputs.objects = []
            self._streams = {}
            self.requests.objects = []
            self._rows, self._pending_rows, self._frame = [], [], None
            self.log.value = events_frame([])
        self.errors.objects = []
        set_html(self.status, f"{badge('running', 'warn')}")
        started = time.perf_counter()
        try:
            async for event in self.runner.stream(message=message, responses=responses, checkpoint_id=checkpoint_id):
                self._on_event(event)
        except Exception as exc:  # the run failed: show it and keep serving
            self.errors.append(error_card(exc, title=f"{self.entity.name} failed"))
            set_html(self.status, badge("failed", "err"))
        else:
            pending = len(self.requests)
            state = "waiting for your input" if pending else "completed"
            set_html(
                self.status,
                f"{badge(state, 'info' if pending else 'ok')} "
                f"<span class='anb-muted anb-run-done'>{time.perf_counter() - started:.2f} s · run "
                f"{escape((self.run_id or '')[:8])}</span>",
            )
        finally:
            for eid in list(self._streams):  # a failed or paused turn still shows what it streamed
                self._end_stream(eid)
            self._flush(force=True)
            self._show_banner()
            self._busy = False
            self.form.submit.disabled = False
        if self.on_checkpoint is not None and self.run_id:
            self.on_checkpoint(self.run_id)

    @property
    def run_id(self) -> str | None:
        """The current run's id."""
        return self.model.run_id

    def _on_event(self, event: Any) -> None:
        kind = event.type
        eid = event.executor_id
        if self.steps is not None:
            self.steps.add_event(event)
        model = self.model
        model.apply(event)
        state = model.states.get(eid) if eid else None
        if state is not None:
            self.graph.set_state(eid, state)
        if kind == "executor_completed":
            self._end_stream(eid)
        elif kind == "executor_failed":
            self.errors.append(html_pane(_failure_html(f"{eid} failed", event.data)))
        elif kind == "output":
            if isinstance(event.data, AgentResponseUpdate):
                self._stream_output(eid, event.data)
            else:
                self.outputs.append(html_pane(_output_card(eid, event.data)))
        elif kind == "request_info":
            self.requests.append(self._request_form(event))
        elif kind == "failed":
            self.errors.append(html_pane(_failure_html("run failed", event.data)))
        if eid and eid == self.node_select.value:
            self._show_node()
        self._pending_rows.append(event_row(event, len(self._rows) + len(self._pending_rows)))
        self._flush()

    def _stream_output(self, eid: str | None, update: AgentResponseUpdate) -> None:
        """Grow the agent's output card by one streamed update (its text so far, escaped)."""
        stream = self._streams.get(eid)
        if stream is None:
            fresh: list[AgentResponseUpdate] = []
            stream = (fresh, html_pane(""))
            self._streams[eid] = stream
            self.outputs.append(stream[1])
        updates, pane = stream
        updates.append(update)
        text = "".join(u.text for u in updates)
        set_html(
            pane,
            f"<div class='anb-card anb-output anb-streaming'>{badge(eid or 'output', 'info')}"
            f"<div class='anb-stream-text'>{escape(text)}</div></div>",
        )

    def _end_stream(self, eid: str | None) -> None:
        """The agent's turn is over: show its whole reply like any other output."""
        stream = self._streams.pop(eid, None)
        if stream is not None:
            updates, pane = stream
            set_html(pane, _output_card(eid, AgentResponse.from_updates(updates)))

    def _flush(self, *, force: bool = False) -> None:
        """Show buffered events at most every ~150 ms (a 10,000-event run must not flood the page)."""
        if force:
            self.graph.flush()
        import pandas as pd

        now = time.perf_counter()
        if not self._pending_rows or (not force and now - self._last_flush < _FLUSH_SECONDS):
            return
        self._last_flush = now
        new = events_frame(self._pending_rows)
        self._rows.extend(self._pending_rows)
        self._pending_rows = []
        # Only the new rows are converted; the table pages remotely, so only the visible page travels to the
        # browser however long the log grows.
        self._frame = new if self._frame is None else pd.concat([self._frame, new], ignore_index=True)
        self.log.value = self._frame
        set_html(self.log_info, f"<span class='anb-muted'>{len(self._rows)} events</span>")

    def _show_node(self) -> None:
        eid = self.node_select.value
        last = self.model.last.get(eid) if eid else None
        if not last:
            set_html(self.node_info, "<span class='anb-muted'>not run yet</span>")
            return
        state = self.model.states.get(eid, "idle")
        parts = [badge(state), "<div class='anb-role'>Last input</div>", fields_html(last.get("input"))]
        for output in merge_streamed_outputs(last.get("outputs", [])):
            parts += ["<div class='anb-role'>Output</div>", fields_html(output)]
        if "request" in last:
            parts += ["<div class='anb-role'>Asked for input</div>", fields_html(last["request"])]
        if "error" in last:
            parts.append(_failure_html("Error", last["error"]))
        set_html(self.node_info, "".join(parts))

    def _on_pick_event(self, event: Any) -> None:
        rows = self._rows
        picked: list[dict[str, Any]] = [rows[i] for i in event.new if 0 <= i < len(rows)]
        if picked:
            set_html(self.raw_event, json_html(jsonable(picked[0]["raw"])))
            self.raw_card.collapsed = False

    def _show_banner(self) -> None:
        """Say at the top of the view when the run waits for a person, and how many answers it needs."""
        waiting = len(self.requests)
        self.banner.visible = bool(waiting)
        if waiting:
            set_html(
                self.banner,
                f"<div class='anb-card anb-waiting'>{badge('waiting for your input', 'info')} "
                f"{escape(self.entity.name)} paused: answer the "
                f"{'request' if waiting == 1 else f'{waiting} requests'} on the right to continue.</div>",
            )

    # --------------------------------------------------------------------------------------------- requests
    def _request_form(self, event: Any) -> pn.viewable.Viewable:
        request_id = str(event.request_id)
        response_type = event.response_type if event.response_type is not None else str
        form = TypeForm(hints_of(response_type), submit_label="Send answer")
        form.submit.css_classes = ["anb-form-submit", "anb-answer-request"]
        info = html_pane(
            f"<div class='anb-card anb-request'>{badge('needs input', 'info')} from <b>{escape(event.executor_id)}</b>"
            f"{fields_html(event.data)}<div class='anb-muted'>request {escape(request_id[:8])} · answer "
            f"as {escape(type_label(response_type))}</div></div>"
        )
        box = pn.Column(info, form.panel(), sizing_mode="stretch_width")

        async def answer(_e: Any) -> None:
            try:
                value = form.value()
            except ValueError as exc:
                form.show_error(str(exc))
                return
            form.submit.disabled = True
            if box in self.requests:
                self.requests.remove(box)
            self._show_banner()
            await self.run(responses={request_id: value})

        form.submit.on_click(answer)
        return box
