"""One model of what a workflow view shows, built from a run's events; the notebook and the DevUI render it.

The notebook's ``WorkflowView`` (ipywidgets) and the DevUI's (Panel) used to keep their own executor states,
outputs and requests, each with its own rule for which event moves an executor to which state. Both now feed
events to a :class:`WorkflowViewModel` and draw what it holds; the DevUI's run list replays stored events
through it too, and the time-travel views colour a checkpoint with :meth:`WorkflowViewModel.states_at`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .._json import is_json_object

if TYPE_CHECKING:
    from ..workflows import WorkflowCheckpoint

__all__ = ["WorkflowViewModel"]


class WorkflowViewModel:
    """A workflow's nodes and edges, and what its runs did to them: states, outputs, open requests, events.

    Executor states are ``running``, ``completed``, ``failed`` and ``waiting`` (for a person's answer), and
    ``next`` (due after a checkpoint); an executor not in ``states`` is idle.

    Example:
        >>> model = WorkflowViewModel({"executors": [{"id": "a"}, {"id": "b"}], "edge_groups": [
        ...     {"sources": ["a"], "targets": ["b"]}]})
        >>> model.record("executor_invoked", "a")
        >>> model.record("executor_completed", "a")
        >>> model.nodes, model.edges, model.states
        (['a', 'b'], [('a', 'b')], {'a': 'completed'})
    """

    def __init__(self, workflow: Any = None) -> None:
        # A live workflow, the description the run store keeps (``Workflow.to_dict()``), or none (states only).
        source: Mapping[str, Any] = (
            {} if workflow is None else workflow if is_json_object(workflow) else workflow.to_dict()
        )
        executors: list[dict[str, Any]] = source.get("executors", [])
        self.nodes: list[str] = [str(e["id"]) for e in executors]
        self.edges: list[tuple[str, str]] = [
            (str(s), str(t))
            for group in cast("list[dict[str, Any]]", source.get("edge_groups", []))
            for s in group.get("sources", [])
            for t in group.get("targets", [])
        ]
        self.states: dict[str, str] = {}
        self.outputs: list[Any] = []
        self.requests: dict[str, Any] = {}  # request id -> its request_info event
        self.events: list[Any] = []
        self.last: dict[str, dict[str, Any]] = {}  # each executor's last input, outputs, error and request
        self.run_id: str | None = None

    def new_run(self, *, clear_states: bool = True, clear_outputs: bool = False) -> None:
        """A run starts (or continues with answers): open requests start over (the run announces them again)."""
        self.requests = {}
        if clear_states:
            self.states = {}
        if clear_outputs:
            self.outputs = []

    def apply(self, event: Any) -> None:
        """Take one ``WorkflowEvent`` of a run."""
        self.events.append(event)
        self.record(event.type, event.executor_id, event.data, request_id=event.request_id, event=event)

    def record(
        self,
        kind: str | None,
        executor_id: str | None,
        data: Any = None,
        *,
        request_id: str | None = None,
        event: Any = None,
    ) -> None:
        """Take one event given by its parts (a stored event row has no ``WorkflowEvent``)."""
        if kind == "started":
            if isinstance(data, str):
                self.run_id = data
            return
        if kind == "output":
            self.outputs.append(data)
        elif kind == "request_info" and request_id:
            self.requests[request_id] = event
        if not executor_id:
            return
        states = self.states
        last = self.last.setdefault(executor_id, {})
        if kind == "executor_invoked":
            states[executor_id] = "running"
            last.clear()
            last["input"] = data
        elif kind == "executor_completed":
            if states.get(executor_id) != "waiting":
                states[executor_id] = "completed"
        elif kind == "executor_failed":
            states[executor_id] = "failed"
            last["error"] = data
        elif kind == "request_info":
            states[executor_id] = "waiting"
            last["request"] = data
        elif kind == "output":
            last.setdefault("outputs", []).append(data)

    def replay(self, rows: Iterable[Mapping[str, Any]]) -> WorkflowViewModel:
        """Take a run's stored event rows (``type``, ``executor_id``); returns the model."""
        for row in rows:
            self.record(row.get("type"), row.get("executor_id"), request_id=row.get("request_id"))
        return self

    def states_at(self, checkpoint: WorkflowCheckpoint) -> dict[str, str]:
        """Executors due to run after ``checkpoint`` (``next``) and those waiting for input (``waiting``)."""
        states: dict[str, str] = {}
        targets: dict[str, list[str]] = {}
        for source, target in self.edges:
            targets.setdefault(source, []).append(target)
        for message in checkpoint.pending_messages:
            if message.target_id:
                states[message.target_id] = "next"
                continue
            # Routed by edges: every target of the sender's edges may receive it (conditions decide at delivery).
            states.update(dict.fromkeys(targets.get(message.source_id or "", []), "next"))
        for request in checkpoint.pending_requests.values():
            states[request.executor_id] = "waiting"
        return states
