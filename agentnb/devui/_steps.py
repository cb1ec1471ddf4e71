"""The step timeline pane: what a functional workflow shows where a graph workflow shows its graph.

A functional workflow has no edges to draw; its run is a sequence of step calls. The pane keeps the run's
events and shows :func:`agentnb.workflows.step_timeline` of them (each call running, cached, done, failed
or waiting for input, and where it ran), redrawn at most every ~150 ms like the graph. It has the graph
pane's interface, so the workflow view drives either the same way.
"""

from __future__ import annotations

import time
from typing import Any

import panel as pn

from agentnb._html import badge
from agentnb.workflows import WorkflowEvent

from ._widgets import html_pane, set_html

__all__ = ["StepTimelinePane"]

_REDRAW_SECONDS = 0.15


class StepTimelinePane:
    """A functional workflow's step calls, live.

    Example:
        >>> from agentnb.workflows import step, workflow
        >>> @step
        ... async def double(x: int) -> int:
        ...     return 2 * x
        >>> @workflow
        ... async def twice(x: int) -> int:
        ...     return await double(x)
        >>> StepTimelinePane(twice.build()).executor_ids
        ['double']
    """

    def __init__(self, workflow: Any) -> None:
        self.workflow = workflow
        self.executor_ids: list[str] = list(workflow.steps)
        self.states: dict[str, str] = {}
        self.events: list[WorkflowEvent[Any]] = []
        self._dirty = False
        self._last_draw = 0.0
        self.pane = html_pane(self._html(), css_classes=["anb-step-timeline-pane"])

    def panel(self) -> pn.viewable.Viewable:
        """The timeline (with the steps the workflow's code names, before any run)."""
        return pn.Column(self.pane, sizing_mode="stretch_width", styles={"border": "1px solid #d0d7de"})

    def reset(self) -> None:
        """A new run starts: forget the last one's calls."""
        self.states = {}
        self.events = []
        self._dirty = True
        self.flush()

    def add_event(self, event: WorkflowEvent[Any]) -> None:
        """Take one event of the running run into the timeline."""
        self.events.append(event)
        self._dirty = True
        self.flush(force=False)

    def set_state(self, executor_id: str | None, state: str) -> None:
        """Track a step's latest state (the timeline itself reads every call from the events)."""
        if executor_id:
            self.states[executor_id] = state

    def set_states(self, states: dict[str, str]) -> None:
        """Replace all states at once."""
        self.states = dict(states)

    def flush(self, *, force: bool = True) -> None:
        """Redraw if something changed (throttled unless ``force``)."""
        now = time.perf_counter()
        if not self._dirty or (not force and now - self._last_draw < _REDRAW_SECONDS):
            return
        self._dirty = False
        self._last_draw = now
        set_html(self.pane, self._html())

    def _html(self) -> str:
        from agentnb.workflows._functional_view import timeline_html

        steps = " ".join(badge(name) for name in self.executor_ids) or "<i>no steps</i>"
        head = f"<div class='anb-muted'>functional workflow · steps: {steps}</div>"
        return f"{head}{timeline_html(self.events)}"
