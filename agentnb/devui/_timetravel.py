"""The time-travel view: a run's checkpoints as a timeline and a tree, inspection, diffs, resume and forks.

"Re-run executor" runs one executor of the graph again from the inspected checkpoint, on what it received
there or an edited input, with every other executor frozen, and shows the comparison with the original run
(``CheckpointHistory.rerun_executor``); "Continue with this output" forks from the result and resumes it.

Everything goes through the workflow engine's own API (:class:`agentnb.workflows.CheckpointHistory` and
``workflow.run(checkpoint_id=...)``); checkpoints live in the run store, so runs made by a notebook in
another process can be inspected here too. Resuming or forking needs the workflow object itself (the
graph must match the checkpoint's signature); a run of a workflow the DevUI does not have is read-only.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import panel as pn

from agentnb import AgentResponse, AgentResponseUpdate
from agentnb._gc import gc_paused
from agentnb._html import badge, escape, json_html
from agentnb.views import rerun_html
from agentnb.workflows import (
    checkpoint_tree_svg,
    editable_input,
    editable_state,
    merge_streamed_outputs,
    parse_fork_edits,
    parse_rerun_input,
)

from ._discovery import Catalog, Entity
from ._forms import type_label
from ._guard import view_callback
from ._widgets import error_card, html_pane, jsonable, set_html, table_theme, watch

if TYPE_CHECKING:
    import pandas as pd

    from agentnb.store import Store
    from agentnb.workflows import (
        CheckpointDiff,
        CheckpointHistory,
        CheckpointInfo,
        RerunResult,
        Workflow,
        WorkflowCheckpoint,
    )

__all__ = ["TimeTravelView", "checkpoint_view"]


def checkpoint_view(checkpoint: WorkflowCheckpoint) -> dict[str, Any]:
    """A checkpoint's state as plain JSON data for the inspector (models shown by their fields)."""
    return {
        "step": checkpoint.step,
        "state": checkpoint.run_state,
        "run_id": checkpoint.run_id,
        "parent_id": checkpoint.parent_id,
        "created_at": checkpoint.created_at,
        "shared_state": {k: jsonable(v) for k, v in checkpoint.shared_state.items()},
        "executor_states": {k: jsonable(v) for k, v in checkpoint.executor_states.items()},
        "pending_messages": [
            {"from": m.source_id, "to": m.target_id, "type": type(m.data).__name__, "data": jsonable(m.data)}
            for m in checkpoint.pending_messages
        ],
        "outstanding_requests": [
            {
                "request_id": r.request_id,
                "executor_id": r.executor_id,
                "data": jsonable(r.request_data),
                "response_type": type_label(r.response_type),
            }
            for r in checkpoint.pending_requests.values()
        ],
        "fan_in_buffers": jsonable(checkpoint.fan_in_buffers),
        "metadata": jsonable(checkpoint.metadata),
    }


class TimeTravelView:
    """Pick a workflow run and travel through its checkpoints.

    Example:
        >>> from agentnb.store import RunStore
        >>> from agentnb.devui import Catalog
        >>> view = TimeTravelView(RunStore(":memory:"), Catalog())
        >>> view.refresh_runs()
        0
    """

    def __init__(self, store: Store, catalog: Catalog) -> None:
        self.store = store
        self.catalog = catalog
        self._infos: list[CheckpointInfo] = []
        self._chain: list[CheckpointInfo] = []
        self._mark: tuple[Any, Any] | None = None
        self._selected: str | None = None
        self._checkpoint: WorkflowCheckpoint | None = None
        self.run_select = pn.widgets.Select(label="Workflow run", options={}, width=420, css_classes=["anb-tt-run"])
        self.refresh_button = pn.widgets.Button(label="Refresh", width=90)
        self.run_info = html_pane("", css_classes=["anb-tt-info"])
        self.timeline = pn.widgets.Tabulator(
            _timeline_frame([]),
            theme=table_theme(),
            show_index=False,
            disabled=True,
            selectable=1,
            sizing_mode="stretch_width",
            height=230,
            layout="fit_data_stretch",
            css_classes=["anb-timeline"],
        )
        self.tree = html_pane("", css_classes=["anb-tree"])
        self.inspect_info = html_pane("<span class='anb-muted'>Select a checkpoint.</span>")
        self.inspector = pn.pane.JSON({}, depth=2, sizing_mode="stretch_width", css_classes=["anb-inspector"])
        self.resume_button = pn.widgets.Button(
            label="Resume from here", color="primary", width=160, disabled=True, css_classes=["anb-resume"]
        )
        self.fork_editor = pn.widgets.TextAreaInput(
            label="Fork with edits (tagged JSON: shared_state, executor_states, pending_messages)",
            height=240,
            sizing_mode="stretch_width",
            css_classes=["anb-fork-editor"],
        )
        self.fork_label = pn.widgets.TextInput(label="Branch label", placeholder="optional", width=200)
        self.fork_button = pn.widgets.Button(
            label="Fork and resume", color="warning", width=160, disabled=True, css_classes=["anb-fork"]
        )
        self.rerun_executor = pn.widgets.Select(
            label="Executor", options=[], width=200, disabled=True, css_classes=["anb-rerun-executor"]
        )
        self.rerun_input = pn.widgets.TextAreaInput(
            label="Its input here (JSON; edit it to try another)",
            height=90,
            sizing_mode="stretch_width",
            disabled=True,
            css_classes=["anb-rerun-input"],
        )
        self.rerun_button = pn.widgets.Button(
            label="Re-run executor", color="primary", width=160, disabled=True, css_classes=["anb-rerun"]
        )
        self.rerun_out = html_pane("", css_classes=["anb-rerun-out"])
        self.continue_button = pn.widgets.Button(
            label="Continue with this output", width=200, disabled=True, css_classes=["anb-rerun-continue"]
        )
        self.rerun_result: RerunResult | None = None
        self._rerun_inputs: dict[str, list[Any]] = {}
        self._rerun_prefill = ""
        self.action_result = pn.Column(sizing_mode="stretch_width", css_classes=["anb-tt-result"])
        self.diff_a = pn.widgets.Select(label="Diff from", options={}, width=260)
        self.diff_b = pn.widgets.Select(label="to", options={}, width=260)
        self.diff_button = pn.widgets.Button(label="Diff", width=80, css_classes=["anb-diff"])
        self.diff_out = html_pane("", css_classes=["anb-diff-out"])
        self.branch_a = pn.widgets.Select(label="Branch A", options={}, width=300)
        self.branch_b = pn.widgets.Select(label="Branch B", options={}, width=300)
        self.branches_out = pn.Row(sizing_mode="stretch_width", css_classes=["anb-branches"])

        self._syncing = False
        watch(self.run_select, self._on_run_select, "value")
        self.refresh_button.on_click(lambda _e: self._on_refresh())
        watch(self.timeline, self._on_timeline_select, "selection")
        self.resume_button.on_click(self._on_resume)
        self.fork_button.on_click(self._on_fork)
        self.diff_button.on_click(self._on_diff)
        watch(self.rerun_executor, lambda _e: self._fill_rerun_input(), "value")
        self.rerun_button.on_click(self._on_rerun)
        self.continue_button.on_click(self._on_continue)
        watch(self.branch_a, lambda _e: self._show_branches(), "value")
        watch(self.branch_b, lambda _e: self._show_branches(), "value")

    # ----------------------------------------------------------------------------------------------- layout
    def show_error(self, card: Any) -> None:
        """Show a failed callback's error card under the checkpoint inspector."""
        self.action_result.objects = [card]

    def panel(self) -> pn.viewable.Viewable:
        """Return the view's layout."""
        self.refresh_runs()
        inspect = pn.Column(
            html_pane("<div class='anb-role'>Checkpoint state</div>"),
            self.inspect_info,
            self.inspector,
            pn.Row(self.resume_button),
            self.fork_editor,
            pn.Row(self.fork_label, pn.Column(pn.Spacer(height=18), self.fork_button)),
            html_pane("<div class='anb-role'>Re-run one executor (nothing else runs, nothing is written)</div>"),
            pn.Row(self.rerun_executor, pn.Column(pn.Spacer(height=18), self.rerun_button)),
            self.rerun_input,
            self.rerun_out,
            pn.Row(self.continue_button),
            self.action_result,
            sizing_mode="stretch_width",
        )
        history = pn.Column(
            html_pane("<div class='anb-role'>Timeline</div>"),
            self.timeline,
            html_pane("<div class='anb-role'>Checkpoint tree</div>"),
            pn.Column(self.tree, max_height=260, scroll=True, sizing_mode="stretch_width"),
            html_pane("<div class='anb-role'>Diff</div>"),
            # Wraps when the column is narrower than both pickers and the button (the button was drawn
            # under the checkpoint state beside it).
            pn.FlexBox(self.diff_a, self.diff_b, pn.Column(pn.Spacer(height=18), self.diff_button)),
            self.diff_out,
            sizing_mode="stretch_width",
        )
        return pn.Column(
            pn.Row(self.run_select, pn.Column(pn.Spacer(height=18), self.refresh_button)),
            self.run_info,
            pn.Row(history, inspect, sizing_mode="stretch_width"),
            html_pane("<div class='anb-role'>Branches side by side</div>"),
            pn.Row(self.branch_a, self.branch_b),
            self.branches_out,
            sizing_mode="stretch_width",
            css_classes=["anb-timetravel-view"],
        )

    def start_polling(self, period_ms: int = 1000) -> None:
        """Refresh the run list when the store's runs or checkpoints change."""
        pn.state.add_periodic_callback(self._poll, period=period_ms)

    @view_callback("Run store")
    def _poll(self) -> None:
        try:
            mark = self.store.watermark()
        except Exception:  # the runs view reports store problems; here we only skip a tick
            return
        key = (mark.get("runs"), mark.get("checkpoints"))
        if key != self._mark:
            checkpoints_changed = self._mark is not None and key[1] != self._mark[1]
            self._mark = key
            current = self.run_select.value
            self.refresh_runs()
            if checkpoints_changed and current and current == self.run_select.value:
                # New checkpoints (a run going on, a fork elsewhere): redraw, keeping the selection.
                self._reload(current, select=self._selected)

    # ------------------------------------------------------------------------------------------------- runs
    @view_callback("Cannot list runs")
    def _on_refresh(self) -> None:
        self.refresh_runs()

    @view_callback("Cannot open run")
    def _on_run_select(self, event: Any) -> None:
        if event.new and not self._syncing:
            self.open_run(event.new)

    @view_callback("Cannot list runs")
    def refresh_runs(self) -> int:
        """Reload the workflow runs that have checkpoints; return how many there are."""
        runs = self.store.list_runs(kind="workflow", limit=300)
        with_cps: set[str | None] = {r["run_id"] for r in self.store.list_checkpoints()} if runs else set()
        options: dict[str, str] = {}
        for run in runs:
            if run["run_id"] not in with_cps:
                continue
            label = f"{run['name']} · {str(run['started_at'])[11:19]} · {run['status']} · {run['run_id'][:8]}"
            options[label] = run["run_id"]
        current = self.run_select.value
        self.run_select.options = options
        if current in options.values():
            self.run_select.value = current
        elif options:
            newest = next(iter(options.values()))
            if self.run_select.value != newest:
                self.run_select.value = newest
            else:
                self._reload(newest)
        return len(options)

    def _entity_for(self, workflow_name: str | None) -> Entity | None:
        for entity in self.catalog.workflows:
            if entity.obj.name == workflow_name:
                return entity
        return None

    @view_callback("Cannot open run")
    def open_run(self, run_id: str) -> None:
        """Show one run's checkpoints (its lineage as a timeline, its workflow's checkpoints as a tree)."""
        if self.run_select.value != run_id and run_id in self.run_select.options.values():
            self.run_select.value = run_id
            return  # the watcher calls back into open_run
        self._reload(run_id)

    def _reload(self, run_id: str, *, select: str | None = None) -> None:
        from agentnb.workflows import CheckpointInfo

        run = self.store.get_run(run_id) or {}
        if self.run_select.value != run_id and run_id in self.run_select.options.values():
            self._syncing = True  # show the run in the picker without reloading it a second time
            try:
                self.run_select.value = run_id
            finally:
                self._syncing = False
        name = run.get("name")
        rows = self.store.list_checkpoints(workflow_name=name) if name else self.store.list_checkpoints(run_id=run_id)
        self._infos = [CheckpointInfo.from_row(r) for r in rows]
        by_id = {i.checkpoint_id: i for i in self._infos}
        own = [i for i in self._infos if i.run_id == run_id]
        # The timeline is the run's lineage: from the root through the checkpoint it resumed from to its last one.
        chain: list[CheckpointInfo] = []
        if own:
            current: CheckpointInfo | None = own[-1]
            seen: set[str] = set()
            while current is not None and current.checkpoint_id not in seen:
                seen.add(current.checkpoint_id)
                chain.append(current)
                current = by_id.get(current.parent_id) if current.parent_id else None
            chain.reverse()
        self._chain = chain
        self.timeline.value = _timeline_frame(chain)
        entity = self._entity_for(name)
        live = "can resume and fork" if entity is not None else "read-only: this DevUI does not serve the workflow"
        set_html(
            self.run_info,
            f"<span class='anb-title'>{escape(name or '?')}</span> <span class='anb-muted'>run {escape(run_id[:8])} · "
            f"{len(chain)} checkpoints in its timeline · {len(self._infos)} in the tree · {escape(live)}</span>",
        )
        labels = {f"s{i.step} · {i.checkpoint_id[:8]} · run {i.run_id[:6]}": i.checkpoint_id for i in self._infos}
        self.diff_a.options = labels
        self.diff_b.options = labels
        if len(chain) >= 2:
            self.diff_a.value, self.diff_b.value = chain[-2].checkpoint_id, chain[-1].checkpoint_id
        self._refresh_branches()
        target = select or (chain[-1].checkpoint_id if chain else None)
        if target and not (target == self._selected and self._checkpoint is not None):
            self.select_checkpoint(target)
        else:
            self._draw_tree()  # keep the inspected checkpoint and any edits in progress

    def _draw_tree(self) -> None:
        chain_ids = {i.checkpoint_id for i in self._chain}
        set_html(self.tree, checkpoint_tree_svg(self._infos, selected=self._selected, highlight=chain_ids))

    @view_callback("Cannot load checkpoint")
    def _on_timeline_select(self, event: Any) -> None:
        if not event.new:
            return
        try:
            checkpoint_id = str(self.timeline.value.iloc[event.new[0]]["checkpoint_id"])
        except (IndexError, KeyError):
            return
        self.select_checkpoint(checkpoint_id)

    # ------------------------------------------------------------------------------------------- checkpoints
    @view_callback("Cannot load checkpoint")
    def select_checkpoint(self, checkpoint_id: str) -> None:
        """Load a checkpoint for inspection (timed: this must stay well under 200 ms)."""
        with gc_paused():
            self._select_checkpoint(checkpoint_id)

    def _select_checkpoint(self, checkpoint_id: str) -> None:
        from agentnb.workflows import WorkflowCheckpoint

        started = time.perf_counter()
        try:
            text = self.store.get_checkpoint(checkpoint_id)
            if text is None:
                raise KeyError(f"No checkpoint {checkpoint_id!r} in the run store.")
            checkpoint = WorkflowCheckpoint.from_json(text)
            view = checkpoint_view(checkpoint)
        except Exception as exc:
            self.action_result.objects = [error_card(exc, title="Cannot load checkpoint")]
            return
        self._selected = checkpoint_id
        self._checkpoint = checkpoint
        # Clearing first spares param a deep equality check of the old and new state (slow for big ones).
        self.inspector.object = None
        self.inspector.object = view
        elapsed = (time.perf_counter() - started) * 1000
        entity = self._entity_for(checkpoint.workflow_name)
        can_act = entity is not None
        set_html(
            self.inspect_info,
            f"{badge(f'step {checkpoint.step}', 'info')} {badge(checkpoint.run_state)} "
            f"<span class='anb-muted'>{escape(checkpoint_id)} · <span class='anb-load-ms'>loaded in "
            f"{elapsed:.0f} ms</span></span>",
        )
        self.fork_editor.value = ""
        self.fork_editor.value = editable_state(checkpoint)
        self.resume_button.disabled = not can_act
        self.fork_button.disabled = not can_act
        self.rerun_result = None
        self.rerun_out.object = ""
        self.continue_button.disabled = True
        self.rerun_executor.disabled = self.rerun_input.disabled = self.rerun_button.disabled = not can_act
        self._rerun_inputs = {}
        self._draw_tree()
        if can_act:
            pn.state.execute(self.offer_rerun)  # routing the checkpoint's messages is async: after this returns

    # ----------------------------------------------------------------------------------------------- re-run
    def _history(self) -> tuple[CheckpointHistory, Workflow, WorkflowCheckpoint] | None:
        """The inspected checkpoint's history, its workflow and the checkpoint; None for a read-only run."""
        from agentnb.workflows import CheckpointHistory

        from ._workflow import WorkflowRunner

        checkpoint = self._checkpoint
        entity = self._entity_for(checkpoint.workflow_name) if checkpoint is not None else None
        if checkpoint is None or entity is None:
            return None
        workflow: Workflow = entity.obj
        return CheckpointHistory(WorkflowRunner(workflow, self.store).storage(), workflow), workflow, checkpoint

    @view_callback("Cannot offer a re-run")
    async def offer_rerun(self) -> None:
        """List the graph's executors, choose the one due next at the inspected checkpoint, show its input."""
        found = self._history()
        if found is None:
            return
        history, workflow, checkpoint = found
        self._rerun_inputs = await history.inputs_at(checkpoint.checkpoint_id)
        executors = list(workflow.executors)
        due = next(iter(self._rerun_inputs), executors[0] if executors else None)
        if self.rerun_executor.options != executors:
            self.rerun_executor.options = executors
        if self.rerun_executor.value != due:
            self.rerun_executor.value = due  # the watcher fills the input
        else:
            self._fill_rerun_input()

    def _fill_rerun_input(self) -> None:
        inputs = self._rerun_inputs.get(self.rerun_executor.value or "", [])
        # One message is offered for editing; several (rare) are re-run as they were unless replaced.
        self._rerun_prefill = editable_input(inputs[0]) if len(inputs) == 1 else ""
        self.rerun_input.value = self._rerun_prefill
        self.rerun_input.value_input = self._rerun_prefill  # so an edit typed for another checkpoint is not taken

    @view_callback("Re-run failed")
    async def _on_rerun(self, _event: Any = None) -> None:
        found = self._history()
        executor_id = self.rerun_executor.value
        if found is None or not executor_id:
            return
        history, workflow, checkpoint = found
        # The browser updates value_input on every key and value on blur; code sets value: take the edited one.
        typed, value = self.rerun_input.value_input, self.rerun_input.value
        text = typed if typed and typed != self._rerun_prefill else value
        self.rerun_button.disabled = True
        try:
            edited: dict[str, Any] = {}
            if text.strip() and text != self._rerun_prefill:
                edited["input"] = parse_rerun_input(text, workflow, executor_id)
            result = await history.rerun_executor(checkpoint.checkpoint_id, executor_id, **edited)
        except (ValueError, TypeError) as exc:  # bad JSON, an input of the wrong type, nothing to run on
            self.rerun_result = None
            self.continue_button.disabled = True
            set_html(
                self.rerun_out,
                f"<div class='anb-card anb-error anb-rerun-refused'>Not re-run: {escape(type(exc).__name__)}: "
                f"{escape(exc)}</div>",
            )
            return
        finally:
            self.rerun_button.disabled = False
        self.rerun_result = result
        set_html(self.rerun_out, rerun_html(result))
        self.continue_button.disabled = result.error is not None

    @view_callback("Continue not started")
    async def _on_continue(self, _event: Any = None) -> None:
        result = self.rerun_result
        if result is None:
            return
        self.continue_button.disabled = True
        fork = await result.fork()
        await self._resume(fork.checkpoint_id, title=f"Continue from the re-run of {result.executor_id}")

    @view_callback("Resume failed")
    async def _on_resume(self, _event: Any = None) -> None:
        if self._checkpoint is None:
            return
        await self._resume(self._checkpoint.checkpoint_id, title="Resumed")

    @view_callback("Fork not started")
    async def _on_fork(self, _event: Any = None) -> None:
        from agentnb.workflows import CheckpointHistory

        checkpoint = self._checkpoint
        entity = self._entity_for(checkpoint.workflow_name) if checkpoint is not None else None
        if checkpoint is None or entity is None:
            return
        try:
            edits = parse_fork_edits(self.fork_editor.value_input or self.fork_editor.value, entity.obj)
        except ValueError as exc:
            self.action_result.objects = [
                html_pane(f"<div class='anb-card anb-error anb-fork-invalid'>Fork not started: {escape(exc)}</div>")
            ]
            return
        from ._workflow import WorkflowRunner

        history = CheckpointHistory(WorkflowRunner(entity.obj, self.store).storage(), entity.obj)
        try:
            fork = await history.fork(
                checkpoint.checkpoint_id,
                shared_state=edits.get("shared_state"),
                replace_shared_state="shared_state" in edits,
                executor_states=edits.get("executor_states"),
                pending_messages=edits.get("pending_messages"),
                label=self.fork_label.value or None,
            )
        except (ValueError, Exception) as exc:  # the engine's own validation (ids, graph signature)
            self.action_result.objects = [error_card(exc, title="Fork not started")]
            return
        await self._resume(fork.checkpoint_id, title=f"Fork of step {checkpoint.step}")

    async def _resume(self, checkpoint_id: str, *, title: str) -> None:
        from ._workflow import WorkflowRunner

        checkpoint = self._checkpoint
        entity = self._entity_for(checkpoint.workflow_name) if checkpoint is not None else None
        if entity is None:
            return
        self.resume_button.disabled = self.fork_button.disabled = True
        status = html_pane(f"{badge('running', 'warn')} <span class='anb-muted'>{escape(title)}</span>")
        outputs = pn.Column(sizing_mode="stretch_width")
        self.action_result.objects = [status, outputs]
        run_id = None
        # A streamed agent yields update by update: its card shows once its turn is over, as one reply.
        streams: dict[str | None, list[AgentResponseUpdate]] = {}

        def show(executor_id: str | None, value: Any) -> None:
            outputs.append(
                html_pane(
                    f"<div class='anb-card anb-branch-output'>{badge(executor_id or 'output', 'ok')}"
                    f"{json_html(jsonable(value))}</div>"
                )
            )

        def end_stream(executor_id: str | None) -> None:
            updates = streams.pop(executor_id, None)
            if updates:
                show(executor_id, AgentResponse.from_updates(updates))

        try:
            async for event in WorkflowRunner(entity.obj, self.store).stream(checkpoint_id=checkpoint_id):
                if event.type == "started" and isinstance(event.data, str):
                    run_id = event.data
                elif event.type == "output" and isinstance(event.data, AgentResponseUpdate):
                    streams.setdefault(event.executor_id, []).append(event.data)
                elif event.type == "executor_completed":
                    end_stream(event.executor_id)
                elif event.type == "output":
                    show(event.executor_id, event.data)
                elif event.type == "request_info":
                    outputs.append(
                        html_pane(
                            f"<div class='anb-card'>{badge('waiting for input', 'info')} answer it in the "
                            "Playground tab</div>"
                        )
                    )
        except Exception as exc:
            self.action_result.append(error_card(exc, title=f"{title} failed"))
            set_html(status, badge("failed", "err"))
        else:
            set_html(
                status,
                f"{badge('completed', 'ok')} <span class='anb-muted anb-resume-done'>{escape(title)} · new run "
                f"{escape((run_id or '')[:8])}</span>",
            )
        finally:
            for executor_id in list(streams):
                end_stream(executor_id)
            self.resume_button.disabled = self.fork_button.disabled = False
        self.refresh_runs()
        if run_id and self.store.list_checkpoints(run_id=run_id):
            current = self._checkpoint.checkpoint_id if self._checkpoint is not None else None
            self._reload(run_id, select=current)
            self._select_branches(new_run=run_id)

    # ----------------------------------------------------------------------------------------------- diffs
    @view_callback("Cannot diff")
    async def _on_diff(self, _event: Any = None) -> None:
        from agentnb.workflows import CheckpointHistory, RunStoreCheckpointStorage

        a, b = self.diff_a.value, self.diff_b.value
        if not a or not b:
            return
        try:
            diff = await CheckpointHistory(RunStoreCheckpointStorage(self.store)).diff(a, b)
        except Exception as exc:
            self.diff_out.object = ""
            self.action_result.objects = [error_card(exc, title="Cannot diff")]
            return
        set_html(self.diff_out, _diff_html(diff))

    # -------------------------------------------------------------------------------------------- branches
    def _leaves(self) -> list[CheckpointInfo]:
        parents = {i.parent_id for i in self._infos}
        return [i for i in self._infos if i.checkpoint_id not in parents]

    def _refresh_branches(self) -> None:
        leaves = self._leaves()
        options = {f"{(i.created_at or '')[11:19]} · s{i.step} · run {i.run_id[:8]}": i.checkpoint_id for i in leaves}
        self.branch_a.options = options
        self.branch_b.options = options
        values = list(options.values())
        if len(values) >= 2 and (self.branch_a.value not in values or self.branch_b.value not in values):
            self.branch_a.value, self.branch_b.value = values[-2], values[-1]
        self._show_branches()

    def _select_branches(self, *, new_run: str) -> None:
        leaves = self._leaves()
        new = [i.checkpoint_id for i in leaves if i.run_id == new_run]
        chain_leaf = [i.checkpoint_id for i in leaves if i.run_id != new_run]
        if new and chain_leaf:
            self.branch_a.value = chain_leaf[0]
            self.branch_b.value = new[0]
        self._show_branches()

    @view_callback("Cannot show branches")
    def _show_branches(self) -> None:
        by_id = {i.checkpoint_id: i for i in self._infos}
        columns: list[pn.pane.HTML] = []
        for title, leaf_id in (("A", self.branch_a.value), ("B", self.branch_b.value)):
            leaf = by_id.get(leaf_id) if leaf_id else None
            if leaf is None:
                continue
            path: list[CheckpointInfo] = []
            current: CheckpointInfo | None = leaf
            while current is not None and len(path) < 1000:
                path.append(current)
                current = by_id.get(current.parent_id) if current.parent_id else None
            path.reverse()
            # A branch's result is what the run that wrote its last checkpoint yielded.
            stored = [_decoded(e.get("data")) for e in self.store.list_events(leaf.run_id, types=["output"])]
            outputs = [jsonable(o) for o in merge_streamed_outputs(stored)]
            steps = " → ".join(f"s{i.step}" + ("*" if i.run_id != path[0].run_id else "") for i in path)
            body = "".join(json_html(o) for o in outputs) or "<span class='anb-muted'>no outputs</span>"
            columns.append(
                html_pane(
                    f"<div class='anb-card anb-branch anb-branch-{title.lower()}'><div class='anb-head'>"
                    f"<span class='anb-title'>Branch {title}</span><span class='anb-muted'>{escape(steps)}"
                    f"</span></div><b>Outputs</b>{body}</div>",
                    width=480,
                )
            )
        self.branches_out.objects = columns


def _decoded(data: Any) -> Any:
    """A stored event's data as the value it was (its tagged JSON decoded), or as stored when that fails."""
    from agentnb._serialization import decode

    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return data
    try:
        return decode(data)
    except Exception:
        return data


def _timeline_frame(chain: list[CheckpointInfo]) -> pd.DataFrame:
    import pandas as pd

    rows: list[dict[str, Any]] = []
    first_run = chain[0].run_id if chain else None
    for info in chain:
        rows.append(
            {
                "step": info.step,
                "checkpoint_id": info.checkpoint_id,
                "run": info.run_id[:8] + (" (resumed)" if info.run_id != first_run else ""),
                "created_at": (info.created_at or "")[11:23],
            }
        )
    return pd.DataFrame.from_records(rows, columns=["step", "checkpoint_id", "run", "created_at"])


def _diff_html(diff: CheckpointDiff) -> str:
    rows: list[tuple[str, str, str, str]] = []
    for title, changes in (("shared state", diff.shared_state), ("executor state", diff.executor_states)):
        for key, value in changes["added"].items():
            rows.append((f"+ {title}", key, "", json.dumps(jsonable(value), default=repr)))
        for key, value in changes["removed"].items():
            rows.append((f"- {title}", key, json.dumps(jsonable(value), default=repr), ""))
        for key, (old, new) in changes["changed"].items():
            rows.append(
                (f"~ {title}", key, json.dumps(jsonable(old), default=repr), json.dumps(jsonable(new), default=repr))
            )
    before = [
        f"{m.source_id}→{m.target_id or '*'}: {json.dumps(jsonable(m.data), default=repr)}" for m in diff.pending_before
    ]
    after = [
        f"{m.source_id}→{m.target_id or '*'}: {json.dumps(jsonable(m.data), default=repr)}" for m in diff.pending_after
    ]
    if before != after:
        rows.append(("pending messages", "", "\n".join(before), "\n".join(after)))
    for rid in diff.requests_added:
        rows.append(("+ request", rid, "", ""))
    for rid in diff.requests_removed:
        rows.append(("- request", rid, "", ""))
    head = (
        f"<div class='anb-muted'>step {diff.before_step} → step {diff.after_step}"
        f"{' · no state change' if diff.is_empty else ''}</div>"
    )
    if not rows:
        return head
    body = "".join(
        f"<tr><td>{escape(a)}</td><td>{escape(b)}</td><td><pre>{escape(c)}</pre></td><td><pre>{escape(d)}</pre></td></tr>"
        for a, b, c, d in rows
    )
    return (
        f"{head}<table class='anb-table'><thead><tr><th>change</th><th>key</th><th>before</th><th>after</th>"
        f"</tr></thead><tbody>{body}</tbody></table>"
    )
