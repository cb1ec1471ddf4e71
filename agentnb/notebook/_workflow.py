"""Workflows in the notebook: static displays and the live :class:`WorkflowView` with time-travel.

The graph is the SVG that :class:`agentnb.workflows.WorkflowViz` draws; the view recolours its nodes as
executors run, complete, fail or wait for input, keeps an event log, answers ``request_info`` requests,
and has a checkpoint slider: moving it shows the run as it stood after that superstep (the executors due
to run next, their state, the shared state), and "Resume from here" starts a new branch from it.
"Re-run executor", beside the slider, runs one executor of the graph again on what it received there
(optionally edited as JSON) with its neighbours frozen, and shows what it would do next to what it did
(``CheckpointHistory.rerun_executor``); "Continue with this output" forks from that result and resumes.

A functional workflow (``@workflow``, built) has no graph: the view shows its step timeline instead (each step
call running, cached, done, failed or waiting for input, and where it ran), the slider shows which step calls
a checkpoint had finished, and "Re-run executor" re-runs one step with the others frozen
(``FunctionalWorkflow.rerun_step``).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from typing_extensions import TypeIs

from .. import _html as h
from .._plain import value_text
from ..views import WorkflowViewModel, rerun_html
from ._widgets import current_cell, ipy_display, on_click, settled_display, widget_bundle

if TYPE_CHECKING:
    from ..store import Store
    from ..workflows import (
        CheckpointHistory,
        CheckpointInfo,
        CheckpointStorage,
        FunctionalWorkflow,
        RerunResult,
        Workflow,
        WorkflowCheckpoint,
        WorkflowEvent,
        WorkflowRunResult,
    )

__all__ = [
    "STATE_COLOURS",
    "WorkflowView",
    "checkpoint_html",
    "checkpoint_text",
    "colour_svg",
    "run_result_html",
    "run_result_text",
    "workflow_html",
    "workflow_text",
]

#: Node fill and stroke per executor state.
STATE_COLOURS: dict[str, tuple[str, str]] = {
    "running": ("#fff8c5", "#9a6700"),
    "completed": ("#dafbe1", "#1a7f37"),
    "failed": ("#ffebe9", "#cf222e"),
    "waiting": ("#ddf4ff", "#0969da"),
    "next": ("#fbefff", "#8250df"),
}

_EVENT_LIMIT = 200  # event-log rows kept in the view; the run store keeps every event


def colour_svg(svg: str, states: dict[str, str]) -> str:
    """Recolour the nodes of a ``WorkflowViz`` SVG by executor state (see :data:`STATE_COLOURS`).

    Args:
        svg: The SVG from ``WorkflowViz.to_svg()``.
        states: Executor id to state (``running``, ``completed``, ``failed``, ``waiting``, ``next``).

    Returns:
        The SVG with those nodes' ``fill``/``stroke`` replaced.
    """
    for executor_id, state in states.items():
        colours = STATE_COLOURS.get(state)
        if colours is None:
            continue
        fill, stroke = colours
        node = re.escape(f'data-id="{h.escape(executor_id)}">')
        pattern = re.compile(
            rf'({node}(?:<title>.*?</title>)?<rect [^>]*?)fill="[^"]*" stroke="[^"]*" stroke-width="[^"]*"', re.S
        )
        svg = pattern.sub(rf'\1fill="{fill}" stroke="{stroke}" stroke-width="2.5"', svg, count=1)
    return svg


def _svg(workflow: Any, states: dict[str, str] | None = None) -> str:
    from ..workflows import WorkflowViz

    svg = WorkflowViz(workflow).to_svg()
    return colour_svg(svg, states or {})


def _legend() -> str:
    items = "".join(
        f"<span style='display:inline-block;width:10px;height:10px;background:{fill};border:1px solid {stroke};"
        f"margin:0 3px 0 8px'></span>{h.escape(state)}"
        for state, (fill, stroke) in STATE_COLOURS.items()
    )
    return f"<div class='anb-muted'>{items}</div>"


#: How much of a value one line of a workflow view shows.
_SHORT = 120


# -- static displays -------------------------------------------------------------------------------------


def workflow_html(workflow: Workflow) -> str:
    """A workflow: its name, description, graph (SVG) and executors."""
    from ..workflows._typing_utils import describe

    head = f"<span class='anb-title'>{h.escape(workflow.name or 'workflow')}</span>"
    head += " " + h.badge(f"{len(workflow.executors)} executors")
    desc = f"<div class='anb-muted'>{h.escape(workflow.description)}</div>" if workflow.description else ""
    rows = [
        (eid, h.escape(", ".join(describe(t) for t in ex.input_types)) or "—") for eid, ex in workflow.executors.items()
    ]
    body = h.details("executors and the types they accept", h.kv_table(rows))
    return f"<div class='anb-card'><div class='anb-head'>{head}</div>{desc}{_svg(workflow)}{body}</div>"


def workflow_text(workflow: Workflow) -> str:
    """A workflow as text: name, start executor and edges."""
    lines = [f"Workflow {workflow.name} · {len(workflow.executors)} executors · start: {workflow.start_executor_id}"]
    for group in workflow.edge_groups:
        arrow = " => " if group.kind == "fan_in" else " -> "
        lines.append(f"  {', '.join(group.sources)}{arrow}{', '.join(group.targets)}")
    return "\n".join(lines)


def _events_table(events: Sequence[WorkflowEvent[Any]]) -> str:
    rows: list[tuple[object, ...]] = []
    for event in events[-_EVENT_LIMIT:]:
        detail = event.state.value if event.type == "status" and event.state is not None else ""
        if not detail and event.data is not None:
            detail = value_text(event.data, 100)
        rows.append(("" if event.step is None else event.step, event.type, event.executor_id or "", detail))
    return h.table(["step", "event", "executor", "data"], rows)


def run_result_html(result: WorkflowRunResult) -> str:
    """A workflow run result: final state, outputs, pending requests, the events, and its checkpoint."""
    from ..workflows import WorkflowErrorDetails

    state = result.get_final_state().value
    kind = {"idle": "ok", "failed": "err", "idle_with_pending_requests": "warn"}.get(state, "info")
    head = f"<span class='anb-title'>WorkflowRunResult</span> {h.badge(state, kind)} {h.badge(f'{len(result)} events')}"
    if result.run_id:
        head += f" <span class='anb-muted'>run <code>{h.escape(result.run_id)}</code></span>"
    outputs = _readable_outputs(result.get_outputs())
    body = ""
    if outputs:
        items = "".join(f"<li>{_output_html(o)}</li>" for o in outputs)
        body += f"<div><b>outputs</b><ul>{items}</ul></div>"
    requests = result.get_request_info_events()
    if requests:
        items = "".join(
            f"<li><code>{h.escape(r.request_id)}</code> from {h.escape(r.executor_id)}: "
            f"{h.escape(value_text(r.data, _SHORT))}</li>"
            for r in requests
        )
        body += f"<div><b>waiting for input</b><ul>{items}</ul></div>"
    failed = [e for e in result if e.type in {"failed", "executor_failed"}]
    for event in failed[:3]:
        data = event.data
        message = data.message if isinstance(data, WorkflowErrorDetails) else value_text(data, _SHORT)
        body += f"<div class='anb-error'>⚠ {h.escape(event.executor_id or 'workflow')}: {h.escape(message)}</div>"
    if any(e.type == "executor_bypassed" or _is_step_call(e) for e in result):
        from ..workflows._functional_view import timeline_html

        body += h.details("steps", timeline_html(result), open=True)
    body += h.details(f"events ({len(result)})", _events_table(result))
    if result.checkpoint_id:
        body += f"<div class='anb-muted'>last checkpoint <code>{h.escape(result.checkpoint_id)}</code></div>"
    return f"<div class='anb-card'><div class='anb-head'>{head}</div>{body}</div>"


def _is_step_call(event: WorkflowEvent[Any]) -> bool:
    """A functional step call (its invocation says where it runs); graph executors' invocations carry messages."""
    data: Any = event.data
    return event.type == "executor_invoked" and isinstance(data, dict) and "where" in data


def _readable_outputs(outputs: Sequence[Any]) -> list[Any]:
    """Outputs with each agent's streamed updates joined into one reply (a streamed run yields one per token)."""
    from ..workflows import merge_streamed_outputs

    return merge_streamed_outputs(outputs)


def _output_html(value: Any) -> str:
    from ._display import to_html

    if isinstance(value, str):
        return h.render_markdown(value)
    inner = to_html(value)
    return inner if inner is not None else h.escape(value_text(value, 400))


def run_result_text(result: WorkflowRunResult) -> str:
    """A workflow run result as text."""
    lines = [f"WorkflowRunResult · {result.get_final_state().value} · {len(result)} events"]
    for output in _readable_outputs(result.get_outputs()):
        lines.append(f"  output: {value_text(output, 200)}")
    for request in result.get_request_info_events():
        lines.append(f"  waiting for input: {request.executor_id}: {value_text(request.data, _SHORT)}")
    return "\n".join(lines)


def checkpoint_html(checkpoint: WorkflowCheckpoint) -> str:
    """A checkpoint: step, state, pending messages, executor and shared state, pending requests."""
    head = (
        f"<span class='anb-title'>checkpoint</span> <code>{h.escape(checkpoint.checkpoint_id)}</code> "
        f"{h.badge(f'step {checkpoint.step}')} {h.badge(checkpoint.run_state)}"
    )
    rows = [("workflow", h.escape(checkpoint.workflow_name)), ("run", f"<code>{h.escape(checkpoint.run_id)}</code>")]
    if checkpoint.parent_id:
        rows.append(("parent", f"<code>{h.escape(checkpoint.parent_id)}</code>"))
    pending = [
        (m.source_id or "input", m.target_id or "(edges)", value_text(m.data, _SHORT))
        for m in checkpoint.pending_messages
    ]
    if pending:
        rows.append(("next messages", h.table(["from", "to", "message"], pending)))
    if checkpoint.executor_states:
        rows.append(("executor state", h.json_html(_jsonable(checkpoint.executor_states))))
    if checkpoint.shared_state:
        rows.append(("shared state", h.json_html(_jsonable(checkpoint.shared_state))))
    if checkpoint.pending_requests:
        reqs = [
            (r.request_id, r.executor_id, value_text(r.request_data, _SHORT))
            for r in checkpoint.pending_requests.values()
        ]
        rows.append(("pending requests", h.table(["request", "executor", "data"], reqs)))
    return f"<div class='anb-card'><div class='anb-head'>{head}</div>{h.kv_table(rows)}</div>"


def checkpoint_text(checkpoint: WorkflowCheckpoint) -> str:
    """A checkpoint as text."""
    targets = ", ".join(m.target_id or f"from {m.source_id}" for m in checkpoint.pending_messages) or "none"
    return (
        f"WorkflowCheckpoint {checkpoint.checkpoint_id} · {checkpoint.workflow_name} · step {checkpoint.step} · "
        f"{checkpoint.run_state} · next: {targets}"
    )


def _jsonable(value: Any) -> Any:
    from ..workflows._events import safe_encode

    return safe_encode(value)


def _is_functional(workflow: Workflow | FunctionalWorkflow) -> TypeIs[FunctionalWorkflow]:
    from ..workflows import Workflow

    return not isinstance(workflow, Workflow)


def _parse_json_input(text: str) -> Any:
    """An edited step input: JSON, tagged JSON for typed values."""
    from .._serialization import decode

    try:
        return decode(json.loads(text))
    except (ValueError, RecursionError) as e:
        raise ValueError(f"The input is not valid JSON: {e}") from e


# -- the live view ---------------------------------------------------------------------------------------


class WorkflowView:
    """Run a workflow live: the graph coloured by executor state, the event log, requests and time-travel.

    Args:
        workflow: The :class:`agentnb.workflows.Workflow` to run.
        checkpoint_storage: Where runs write checkpoints (default: the workflow's own, else a new in-memory
            storage, so the checkpoint slider always works).

    Example:
        ```python
        from agentnb.notebook import WorkflowView
        from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

        @executor(id="upper")
        async def upper(text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text.upper())

        @executor(id="exclaim")
        async def exclaim(text: str, ctx: WorkflowContext[str, str]) -> None:
            await ctx.yield_output(text + "!")

        view = WorkflowView(WorkflowBuilder(start_executor=upper).add_edge(upper, exclaim).build())
        view.run("hello")  # shows the view; then move the checkpoint slider to travel back in time
        ```
    """

    def __init__(
        self,
        workflow: Workflow | FunctionalWorkflow,
        *,
        checkpoint_storage: CheckpointStorage | None = None,
        run_store: Store | None = None,
    ) -> None:
        import ipywidgets as w

        from ..workflows import InMemoryCheckpointStorage

        self.workflow = workflow
        self.functional = _is_functional(workflow)
        # Not `or`: an empty storage is falsy (it has a length), and it is still the one to use.
        if checkpoint_storage is None:
            checkpoint_storage = workflow.checkpoint_storage
        self.storage = checkpoint_storage if checkpoint_storage is not None else InMemoryCheckpointStorage()
        # The runs' events are kept in a run store so a re-run executor can be compared with what it yielded.
        store = run_store if run_store is not None else workflow.run_store
        self._own_store = store is None
        if store is None:
            from ..store import RunStore

            store = RunStore(":memory:")
        self.run_store: Store = store
        self.rerun_result: RerunResult | None = None
        self._rerun_inputs: dict[str, list[Any]] = {}
        self._rerun_prefill = ""
        #: What the view shows (states, outputs, open requests, events), the model the DevUI renders too.
        self.model = WorkflowViewModel(workflow)
        self.checkpoints: list[CheckpointInfo] = []
        self.selected: WorkflowCheckpoint | None = None
        self.error: BaseException | None = None
        self.status = "idle"
        self._task: asyncio.Task[None] | None = None
        self._aux: set[asyncio.Task[Any]] = set()
        self._display_handle: Any = None
        self._display_cell: str | None = None
        self._request_forms: dict[str, Any] = {}

        self.header = w.HTML()
        self.graph = w.HTML()
        self.outputs_html = w.HTML()
        # Widgets whose traits are read back are held as Any: ipywidgets' traits are untyped.
        self.requests_box: Any = w.VBox()
        self.event_log = w.HTML()
        self.slider: Any = w.IntSlider(
            value=0, min=0, max=0, description="checkpoint", disabled=True, continuous_update=False,
            layout=w.Layout(width="420px"),
        )  # fmt: skip
        self.slider.observe(self._on_slide, names="value")
        self.resume_button = w.Button(
            description="Resume from here", icon="play", disabled=True, layout=w.Layout(width="auto")
        )
        on_click(self.resume_button, lambda _b: self.resume())
        self.rerun_button = w.Button(
            description="Re-run executor", icon="redo", disabled=True, layout=w.Layout(width="auto"),
            tooltip="Run the chosen executor again from this checkpoint, nothing else; nothing is written",
        )  # fmt: skip
        on_click(self.rerun_button, lambda _b: self._in_background(self.rerun()))
        self.rerun_executor: Any = w.Dropdown(
            options=list(workflow.executors), description="executor", layout=w.Layout(width="260px")
        )
        self.rerun_executor.observe(self._on_rerun_executor, names="value")
        self.rerun_input: Any = w.Textarea(
            placeholder="Its input at this checkpoint, as JSON (edit to try another)",
            layout=w.Layout(width="420px", height="80px"),
        )
        self.continue_button = w.Button(
            description="Continue with this output", icon="code-branch", disabled=True, layout=w.Layout(width="auto")
        )
        on_click(self.continue_button, lambda _b: self._in_background(self.continue_from_rerun()))
        self.rerun_html = w.HTML()
        self.checkpoint_html = w.HTML()
        rerun_box = w.VBox(
            [w.HBox([self.rerun_executor, self.rerun_input]), self.rerun_html, self.continue_button],
            layout=w.Layout(border="1px solid #d0d7de", padding="4px"),
        )
        travel = w.VBox([w.HBox([self.slider, self.resume_button, self.rerun_button]), rerun_box, self.checkpoint_html])
        log = w.Accordion(children=[self.event_log], titles=("event log",))
        self.widget = w.VBox([self.header, self.graph, self.outputs_html, self.requests_box, travel, log])
        self._render()

    # -- what the run did (held by the model) ---------------------------------------------------------------
    @property
    def states(self) -> dict[str, str]:
        """Each executor's state in the current run (``running``, ``completed``, ``failed``, ``waiting``)."""
        return self.model.states

    @property
    def events(self) -> list[WorkflowEvent[Any]]:
        """Every event the view's runs produced."""
        return self.model.events

    @property
    def outputs(self) -> list[Any]:
        """The runs' outputs."""
        return self.model.outputs

    @property
    def requests(self) -> dict[str, WorkflowEvent[Any]]:
        """Open ``request_info`` requests by id."""
        return self.model.requests

    @property
    def run_id(self) -> str | None:
        """The current run's id."""
        return self.model.run_id

    # -- running -------------------------------------------------------------------------------------------
    def run(self, message: Any, *, display: bool = True) -> WorkflowView:
        """Show the view (unless ``display=False``) and start a run with ``message`` in the background."""
        if display:
            self.display()
        self._start(message=message)
        return self

    def resume(self, checkpoint_id: str | None = None) -> None:
        """Resume from a checkpoint (default: the one the slider shows): a new branch, history kept."""
        target = checkpoint_id
        if target is None and self.checkpoints:
            target = self.checkpoints[int(self.slider.value)].checkpoint_id
        if target is None:
            raise ValueError("No checkpoint selected; run the workflow first or pass checkpoint_id=....")
        self._start(checkpoint_id=target)

    def respond(self, request_id: str, value: Any) -> None:
        """Answer a ``request_info`` request and continue the run (what a request form's Send does)."""
        if request_id not in self.requests:
            from ..exceptions import WorkflowError

            raise WorkflowError(f"No pending request {request_id!r}; pending: {sorted(self.requests)}.")
        self._start(responses={request_id: value})

    def display(self) -> None:
        """Display the view in the current output (once)."""
        if self._display_handle is None:
            self._display_handle = ipy_display(self, display_id=True)
            self._display_cell = current_cell()

    async def wait(self) -> None:
        """Wait until the run (and any checkpoint loading) has finished; the view then shows the result."""
        while True:
            pending = [t for t in (self._task, *self._aux) if t is not None and not t.done()]
            if not pending:
                break
            await asyncio.wait(pending)
        self._display_handle = settled_display(self, self._display_handle, self._display_cell)

    def _start(self, **kwargs: Any) -> None:
        if self._task is not None and not self._task.done():
            raise RuntimeError("The workflow is already running; wait for it first.")
        self._task = asyncio.get_running_loop().create_task(self._drive(**kwargs))

    async def _drive(self, **kwargs: Any) -> None:
        self.status = "running"
        self.error = None
        self.selected = None
        self.rerun_button.disabled = self.continue_button.disabled = True
        self.model.new_run()
        self._render()
        try:
            runs = self.workflow.run(stream=True, checkpoint_storage=self.storage, run_store=self.run_store, **kwargs)
            async for event in runs:
                self._on_event(event)
        except Exception as exc:  # the failure is shown in the view (and kept in .error)
            self.error = exc
            self.status = "failed"
        else:
            self.status = "waiting for input" if self.requests else "completed"
        await self._load_checkpoints()
        self._render()
        if self._display_handle is not None:
            self._display_handle.update(self)

    def _on_event(self, event: WorkflowEvent[Any]) -> None:
        self.model.apply(event)
        self._render()

    async def _load_checkpoints(self) -> None:
        if self.run_id is None:
            return
        from ..exceptions import CheckpointNotFoundError
        from ..workflows import CheckpointHistory

        try:
            # This run's timeline: root to latest, across the checkpoint it was resumed from.
            self.checkpoints = await CheckpointHistory(self.storage).timeline(run_id=self.run_id)
        except CheckpointNotFoundError:
            self.checkpoints = []
        if not self.checkpoints:
            return
        # Park the slider at the latest checkpoint without travelling: the graph keeps the run's own colours
        # until the person moves the slider.
        self.slider.unobserve(self._on_slide, names="value")
        try:
            self.slider.max = len(self.checkpoints) - 1
            self.slider.value = len(self.checkpoints) - 1
            self.slider.disabled = False
        finally:
            self.slider.observe(self._on_slide, names="value")
        self.resume_button.disabled = self.rerun_button.disabled = False

    # -- time travel ---------------------------------------------------------------------------------------
    async def select(self, index: int) -> WorkflowCheckpoint:
        """Show the checkpoint at ``index`` (oldest first): the state after that superstep."""
        info = self.checkpoints[index]
        if self.slider.value != index:
            # Keep the slider in step when travelling from code (without loading the checkpoint twice).
            self.slider.unobserve(self._on_slide, names="value")
            try:
                self.slider.value = index
            finally:
                self.slider.observe(self._on_slide, names="value")
        selected = self.selected = await self.storage.load(info.checkpoint_id)
        self.resume_button.disabled = False
        await self._offer_rerun(selected)
        self._render()
        return selected

    def _on_slide(self, change: Any) -> None:
        self._in_background(self.select(int(change["new"])))

    def _in_background(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._aux.add(task)
        task.add_done_callback(self._aux.discard)

    # -- re-running one executor -----------------------------------------------------------------------
    def _history(self) -> CheckpointHistory:
        from ..workflows import CheckpointHistory

        graph = None if _is_functional(self.workflow) else self.workflow
        return CheckpointHistory(self.storage, graph, run_store=self.run_store)

    async def _offer_rerun(self, checkpoint: WorkflowCheckpoint) -> None:
        """Pick the executor due next at the selected checkpoint and show its input for editing."""
        if _is_functional(self.workflow):
            self._rerun_inputs = {}  # a step's input comes from replaying the function: shown after the re-run
        else:
            self._rerun_inputs = await self._history().inputs_at(checkpoint.checkpoint_id)
        self.rerun_result = None
        self.rerun_html.value = ""
        self.continue_button.disabled = True
        self.rerun_button.disabled = False
        due = next(iter(self._rerun_inputs), None)
        if due is not None and self.rerun_executor.value != due:
            self.rerun_executor.value = due  # the observer fills the input
        else:
            self._fill_rerun_input()

    def _on_rerun_executor(self, _change: Any) -> None:
        self._fill_rerun_input()

    def _fill_rerun_input(self) -> None:
        from ..workflows import editable_input

        inputs = self._rerun_inputs.get(self.rerun_executor.value, [])
        # One message is offered for editing; several (rare) are re-run as they were unless replaced.
        self._rerun_prefill = editable_input(inputs[0]) if len(inputs) == 1 else ""
        self.rerun_input.value = self._rerun_prefill

    async def rerun(self, executor_id: str | None = None, input_json: str | None = None) -> RerunResult | None:
        """Re-run one executor from the selected checkpoint and show how it compares with the original run.

        Args:
            executor_id: The executor (default: the one chosen in the view).
            input_json: Its input as JSON (default: the view's input box; unedited means what it received).

        Returns:
            The :class:`agentnb.workflows.RerunResult`, or ``None`` when the input was refused (the reason is
            shown in the view).
        """
        from ..workflows import parse_rerun_input

        selected = self.selected
        if selected is None:
            if not self.checkpoints:
                raise ValueError("No checkpoint to re-run from; run the workflow first.")
            selected = await self.select(self.slider.value)
        chosen: str = executor_id or self.rerun_executor.value
        text = self.rerun_input.value if input_json is None else input_json
        self.rerun_button.disabled = True
        try:
            edited: dict[str, Any] = {}
            workflow = self.workflow
            if _is_functional(workflow):
                if text.strip() and text != self._rerun_prefill:
                    edited["input"] = _parse_json_input(text)
                result = await workflow.rerun_step(
                    selected.checkpoint_id, chosen, checkpoint_storage=self.storage, **edited
                )
            else:
                if text.strip() and text != self._rerun_prefill:
                    edited["input"] = parse_rerun_input(text, workflow, chosen)
                result = await self._history().rerun_executor(selected.checkpoint_id, chosen, **edited)
        except (ValueError, TypeError) as exc:  # bad JSON, an input of the wrong type, nothing to run on
            self.rerun_result = None
            self.continue_button.disabled = True
            self.rerun_html.value = h.wrap(
                f"<div class='anb-error anb-rerun-refused'>Not re-run: {h.escape(type(exc).__name__)}: "
                f"{h.escape(exc)}</div>"
            )
            return None
        finally:
            self.rerun_button.disabled = False
        self.rerun_result = result
        self.rerun_html.value = h.wrap(rerun_html(result))
        self.continue_button.disabled = result.error is not None
        return result

    async def continue_from_rerun(self) -> None:
        """Fork from the shown re-run's result and resume the workflow from the fork (a new branch)."""
        if self.rerun_result is None:
            raise ValueError("Nothing re-run yet; click 'Re-run executor' first.")
        fork = await self.rerun_result.fork()
        self.continue_button.disabled = True
        self._start(checkpoint_id=fork.checkpoint_id)

    # -- rendering -----------------------------------------------------------------------------------------
    def _render(self) -> None:
        kind = {"completed": "ok", "failed": "err", "waiting for input": "warn", "running": "info"}.get(self.status, "")
        name = h.escape(self.workflow.name or "workflow")
        head = f"<span class='anb-title'>{name}</span> {h.badge(self.status, kind)}"
        if self.error is not None:
            head += f" <span class='anb-error'>{h.escape(type(self.error).__name__)}: {h.escape(self.error)}</span>"
        self.header.value = h.wrap(f"<div class='anb-head'>{head}</div>")
        workflow = self.workflow
        if _is_functional(workflow):
            from ..workflows._functional_view import saved_calls_html, timeline_html

            shown = saved_calls_html(self.selected) if self.selected is not None else timeline_html(self.events)
            self.graph.value = h.wrap(shown)
        else:
            states = self.model.states_at(self.selected) if self.selected is not None else self.model.states
            self.graph.value = h.wrap(_svg(workflow, states) + _legend())
        if self.outputs:
            items = "".join(f"<li>{_output_html(o)}</li>" for o in _readable_outputs(self.outputs))
            self.outputs_html.value = h.wrap(f"<div><b>outputs</b><ul>{items}</ul></div>")
        self.event_log.value = h.wrap(_events_table(self.events))
        if self.selected is not None:
            cp = self.selected
            unit = "step calls done" if self.functional else "superstep"
            title = f"{unit} {cp.step} of {len(self.checkpoints)} checkpoint(s)"
            self.checkpoint_html.value = h.wrap(f"<div class='anb-muted'>{h.escape(title)}</div>" + checkpoint_html(cp))
        self._sync_requests()

    def _sync_requests(self) -> None:
        import ipywidgets as w

        from ._widgets import close_tree

        for request_id in [rid for rid in self._request_forms if rid not in self.requests]:
            close_tree(self._request_forms.pop(request_id))
        for request_id, event in self.requests.items():
            if request_id in self._request_forms:
                continue
            asks = f"{h.escape(event.executor_id)} asks: {h.escape(value_text(event.data, _SHORT))}"
            prompt = w.HTML(h.wrap(f"<div>{h.badge('input needed', 'warn')} {asks}</div>"))
            answer = w.Text(placeholder="Your answer")
            send = w.Button(description="Send", button_style="primary")
            on_click(send, lambda _b, rid=request_id, box=answer: self.respond(rid, box.value))
            self._request_forms[request_id] = w.VBox([prompt, w.HBox([answer, send])])
        children = tuple(self._request_forms.values())
        if children != self.requests_box.children:
            self.requests_box.children = children

    def to_text(self) -> str:
        """A text summary of the run (what notebooks store as ``text/plain``)."""
        lines = [f"WorkflowView {self.workflow.name} · {self.status} · {len(self.events)} events"]
        lines += [f"  output: {value_text(o, 200)}" for o in _readable_outputs(self.outputs)]
        lines += [f"  waiting for input: {e.executor_id}: {value_text(e.data, _SHORT)}" for e in self.requests.values()]
        if self.checkpoints:
            lines.append(f"  checkpoints: {len(self.checkpoints)}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = widget_bundle(self.widget, **kwargs)
        # Before the first run there is nothing to show without widgets.
        bundle["text/plain"] = self.to_text() if self.events else ""
        return bundle

    def close(self) -> None:
        """Cancel a running run and close every widget (releases their comms)."""
        from ._widgets import close_tree

        for task in (self._task, *self._aux):
            if task is not None and not task.done():
                task.cancel()
        close_tree(self.widget)
        if self._own_store:
            self.run_store.close()


def register_renderers() -> None:
    """Teach :func:`agentnb.notebook.to_html` the workflow types (once ``agentnb.workflows`` is imported)."""
    from ..workflows import RerunResult, Workflow, WorkflowCheckpoint, WorkflowRunResult
    from ._display import register_renderer

    register_renderer(Workflow, workflow_html, workflow_text)
    register_renderer(WorkflowRunResult, run_result_html, run_result_text)
    register_renderer(WorkflowCheckpoint, checkpoint_html, checkpoint_text)
    register_renderer(RerunResult, rerun_html, str)
