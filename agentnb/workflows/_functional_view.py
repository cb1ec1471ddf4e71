"""The step timeline of a functional run, and how a functional workflow shows itself in a notebook.

A functional run has no graph to colour; what a reader wants is each step call and where it stands:
running, cached (returned its saved result), done, failed, or waiting for a human, and where it ran (this
process or a Ray worker). :func:`step_timeline` derives that from the run's events (the same events a graph
run has, so a stored run read back from the run store gives the same timeline), and the views render it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _html as h
from .._json import is_json_object
from ._events import WorkflowEvent, WorkflowRunResult

if TYPE_CHECKING:
    from ._checkpoints import WorkflowCheckpoint
    from ._functional import FunctionalWorkflowDefinition

__all__ = ["StepCallState", "definition_html", "saved_calls_html", "step_timeline", "timeline_html"]

_KINDS = {"running": "info", "cached": "", "done": "ok", "failed": "err", "waiting for input": "warn"}


@dataclass
class StepCallState:
    """One call of one step in a run: where it stands and where it ran.

    Example:
        >>> StepCallState("fetch", 0, "done", "local").label
        'fetch#0'
    """

    step: str
    index: int
    status: str
    where: str
    result: Any = None
    error: str | None = None
    request_id: str | None = None

    @property
    def label(self) -> str:
        """``name#index``: which call of which step."""
        return f"{self.step}#{self.index}"


def step_timeline(events: Iterable[WorkflowEvent]) -> list[StepCallState]:
    """Each step call of a run in the order calls started, with its latest state (from the run's events)."""
    calls: dict[tuple[str, int], StepCallState] = {}
    for event in events:
        name, index = event.executor_id, event.step
        if name is None or index is None:
            continue
        key = (name, index)
        if event.type == "executor_invoked":
            data: Any = event.data
            where = str(data.get("where", "local")) if is_json_object(data) else "local"
            calls[key] = StepCallState(name, index, "running", where)
        elif event.type == "executor_bypassed":
            calls[key] = StepCallState(name, index, "cached", "cache", result=event.data)
        elif key in calls:
            call = calls[key]
            if event.type == "executor_completed":
                call.status, call.result = "done", event.data
            elif event.type == "executor_failed":
                details: Any = event.data
                call.status = "failed"
                call.error = f"{details.error_type}: {details.message}" if hasattr(details, "message") else str(details)
            elif event.type == "request_info":
                call.status, call.request_id = "waiting for input", event.request_id
            elif event.type == "step_worker" and is_json_object(event.data):
                call.where = f"ray node {str(event.data.get('node_id', ''))[:8]} pid {event.data.get('pid')}"
    return list(calls.values())


def timeline_html(events: Iterable[WorkflowEvent]) -> str:
    """The step timeline as a safe HTML table (every value escaped)."""
    rows: list[str] = []
    for call in step_timeline(events):
        value = (
            call.error
            if call.error is not None
            else h.shorten(repr(call.result), 120)
            if call.result is not None
            else ""
        )
        state = h.badge(call.status, _KINDS.get(call.status, ""))
        rows.append(
            f"<tr><td><code>{h.escape(call.label)}</code></td><td>{state}</td>"
            f"<td>{h.escape(call.where)}</td><td>{h.escape(value)}</td></tr>"
        )
    if not rows:
        return "<div class='anb-muted'>no step calls</div>"
    return (
        "<table class='anb-table anb-step-timeline'><thead><tr><th>step</th><th>state</th><th>where</th>"
        f"<th>result</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _on_ray(definition: FunctionalWorkflowDefinition, name: str) -> bool:
    wrapper = definition.step_wrappers.get(name)
    return wrapper is not None and wrapper.ray_options is not None


def definition_html(definition: FunctionalWorkflowDefinition) -> str:
    """A functional workflow as a card: its name, input type and steps (Ray steps marked)."""
    from ._typing_utils import describe

    ray = h.badge("ray", "info")
    items = "".join(
        f"<li><code>{h.escape(name)}</code>{' ' + ray if _on_ray(definition, name) else ''}</li>"
        for name in definition.steps
    )
    description = f"<div class='anb-muted'>{h.escape(definition.description)}</div>" if definition.description else ""
    return h.wrap(
        f"<div class='anb-card'><div class='anb-head'><span class='anb-title'>{h.escape(definition.name)}</span> "
        f"{h.badge('functional workflow')} <span class='anb-muted'>input: {h.escape(describe(definition.input_type))}"
        f"</span></div>{description}<div><b>steps</b><ol>{items or '<li><i>none</i></li>'}</ol></div></div>"
    )


def run_timeline_html(result: WorkflowRunResult) -> str:
    """A run's state and its step timeline, wrapped for a notebook."""
    state = result.get_final_state()
    return h.wrap(
        f"<div class='anb-card'><div class='anb-head'>{h.badge(state.value)}</div>{timeline_html(result)}</div>"
    )


def saved_calls_html(checkpoint: WorkflowCheckpoint) -> str:
    """The step calls a checkpoint had finished (their saved results) and the requests it waits on."""
    rows: list[str] = []
    for name, calls in checkpoint.executor_states.items():
        if not is_json_object(calls):
            continue
        for index, value in calls.items():
            rows.append(
                f"<tr><td><code>{h.escape(f'{name}#{index}')}</code></td><td>{h.badge('done', 'ok')}</td>"
                f"<td>{h.escape(h.shorten(repr(value), 120))}</td></tr>"
            )
    for request in checkpoint.pending_requests.values():
        rows.append(
            f"<tr><td><code>{h.escape(request.executor_id)}</code></td><td>{h.badge('waiting for input', 'warn')}</td>"
            f"<td>{h.escape(h.shorten(repr(request.request_data), 120))}</td></tr>"
        )
    if not rows:
        return "<div class='anb-muted'>no step call had finished at this checkpoint</div>"
    return (
        "<table class='anb-table anb-step-timeline'><thead><tr><th>step</th><th>state</th><th>saved</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
