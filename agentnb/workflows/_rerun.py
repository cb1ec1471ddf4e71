"""Re-run one executor from a checkpoint with its neighbours frozen, and compare it with the original run.

A checkpoint holds the messages waiting for the next superstep. Re-running executor ``X`` from checkpoint
``C`` routes those messages exactly as the runner would, hands ``X`` what it received (or an edited input)
and runs only ``X``: nothing before or after it runs, nothing is committed, and nothing is written to the
original run or its checkpoint storage. ``X``'s saved state is put back as it was at ``C`` for the re-run,
and the live executor gets its own state back afterwards.

What the re-run *would* do is kept as an :class:`ExecutorActivity`: the messages it sends, per edge (the
graph's own edge groups decide where each goes; fan-in edges hold a message until their other sources
send), the outputs it yields, the requests it raises, its custom events, its new state and shared-state
writes, or the error it raised. The same is gathered for the original run from the record it left: the
checkpoint after that superstep (messages, state, requests) and the run store's events (outputs, events,
errors). :class:`RerunResult` compares the two; a part the original run left no record of is "unknown".

``await result.fork()`` continues from there: a new branch from ``C`` where ``X``'s messages are the
re-run's, so resuming it delivers them (see :meth:`RerunResult.fork` for the one difference to a real run).
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _html as h
from .. import _telemetry as tel
from .._extensions import OBJECT_HTML
from .._json import is_json_array, is_json_object
from .._serialization import TAG, decode, encode
from .._types import AgentResponse, ChatResponse, Message
from ..exceptions import CheckpointMismatchError, ExecutorInputError, SerializationError, WorkflowError
from ._agent_executor import AgentExecutorResponse
from ._checkpoints import PendingMessage, PendingRequest, WorkflowCheckpoint
from ._context import DELETED
from ._events import WorkflowErrorDetails, WorkflowEvent, safe_encode
from ._runner import Delivery, RunContext
from ._typing_utils import describe

if TYPE_CHECKING:
    from ..store import EventRow, Store
    from ._executor import Executor
    from ._timetravel import CheckpointHistory
    from ._workflow import Workflow

__all__ = [
    "EdgeMessage",
    "ExecutorActivity",
    "RerunChange",
    "RerunResult",
    "checkpoint_inputs",
    "editable_input",
    "parse_rerun_input",
    "rerun_executor",
]

_MISSING: Any = object()

# Event types the comparison leaves out: the runner's bookkeeping, values compared on their own (outputs,
# requests, errors), and streamed tokens (the original may have been streamed; a re-run never is).
_NOT_COMPARED = frozenset(
    {
        "started",
        "status",
        "superstep_started",
        "superstep_completed",
        "executor_invoked",
        "executor_completed",
        "executor_failed",
        "agent_update",
        "output",
        "intermediate",
        "request_info",
        "failed",
    }
)


@dataclass(frozen=True)
class EdgeMessage:
    """One message an executor sent, on the edge that carries it.

    ``target_id`` is ``None`` when no outgoing edge takes the message (it would be dropped with a warning);
    ``held`` marks a message a fan-in edge buffers until its other sources have sent.

    Example:
        >>> EdgeMessage("upper", "exclaim", "HI").edge
        'upper → exclaim'
    """

    source_id: str
    target_id: str | None
    data: Any
    held: bool = False

    @property
    def edge(self) -> str:
        """The edge as text: ``"source → target"`` (``"source → (no edge)"`` when nothing takes it)."""
        return f"{self.source_id} → {self.target_id if self.target_id is not None else '(no edge)'}"


@dataclass
class ExecutorActivity:
    """What an executor did with its input in one superstep.

    A field that is ``None`` is not known: the original run left no record of it (``sent``, ``state`` and
    ``requests`` come from the checkpoint after the superstep; ``outputs``, ``events`` and ``error`` from the
    run store's events).

    Example:
        >>> ExecutorActivity(sent=[EdgeMessage("a", "b", 1)], outputs=[]).sent[0].edge
        'a → b'
    """

    sent: list[EdgeMessage] | None = None
    outputs: list[Any] | None = None
    requests: list[Any] | None = None
    events: list[WorkflowEvent] | None = None
    state: Any = None
    shared_state_writes: dict[str, Any] | None = None
    error: WorkflowErrorDetails | None = None
    error_known: bool = False

    def sent_by_edge(self) -> dict[str, list[Any]]:
        """The messages sent, grouped by edge (``{"a → b": [...]}``); empty when not known."""
        out: dict[str, list[Any]] = {}
        for message in self.sent or ():
            out.setdefault(message.edge, []).append(message.data)
        return out


@dataclass(frozen=True)
class RerunChange:
    """One line of the comparison: a part of what the executor did, in the original run and in the re-run.

    ``status`` is ``"same"``, ``"changed"``, ``"added"`` (only the re-run has it), ``"removed"`` (only the
    original had it) or ``"unknown"`` (the original run left no record of it). Values are readable text.

    Example:
        >>> RerunChange("sent", "a → b", '"HI"', '"HO"', "changed").status
        'changed'
    """

    section: str
    key: str
    original: str | None
    rerun: str | None
    status: str


def readable(value: Any) -> str:
    """A short, stable text for a value, for diffs: responses by their text, other values as JSON."""
    if value is DELETED:
        return "(deleted)"
    if isinstance(value, AgentExecutorResponse):
        return f"{value.executor_id}: {value.agent_response.text}"
    if isinstance(value, (AgentResponse, ChatResponse, Message)):
        return value.text
    if isinstance(value, WorkflowErrorDetails):
        return f"{value.error_type}: {value.message}"
    encoded = safe_encode(value)
    if is_json_object(encoded) and TAG in encoded and "type" in encoded:
        name = str(encoded["type"]).rsplit(":", 1)[-1].rsplit(".", 1)[-1]
        body = encoded.get("fields", encoded.get("data", encoded.get("value")))
        return f"{name} {json.dumps(_untagged(body), ensure_ascii=False, sort_keys=True, default=repr)}"
    return json.dumps(_untagged(encoded), ensure_ascii=False, sort_keys=True, default=repr)


def _untagged(value: Any) -> Any:
    """Tagged JSON without its type tags (what a person reading a diff wants to see)."""
    if is_json_object(value):
        if TAG in value:
            inner = value.get("fields", value.get("data", value.get("value", value.get("items"))))
            return _untagged(inner)
        return {k: _untagged(v) for k, v in value.items()}
    if is_json_array(value):
        return [_untagged(v) for v in value]
    return value


def _event_text(event: WorkflowEvent) -> str:
    return f"{event.type}: {readable(event.data)}" if event.data is not None else event.type


def _compare(section: str, key: str, original: list[str] | None, rerun: list[str]) -> RerunChange:
    after = "\n".join(rerun) if rerun else None
    if original is None:
        return RerunChange(section, key, None, after, "unknown")
    before = "\n".join(original) if original else None
    if before == after:
        status = "same"
    elif before is None:
        status = "added"
    elif after is None:
        status = "removed"
    else:
        status = "changed"
    return RerunChange(section, key, before, after, status)


@dataclass
class RerunResult:
    """What an executor would do when re-run from a checkpoint, next to what it did in the original run.

    Nothing of it was committed: the re-run is a rehearsal. Display it in a notebook for the comparison,
    ``print(result.diff_text())`` for a unified diff, and ``await result.fork()`` to continue from it.

    Example:
        ```python
        history = CheckpointHistory(storage, workflow)
        timeline = await history.timeline(run_id=run.run_id)
        result = await history.rerun_executor(timeline[1].checkpoint_id, "exclaim", input="hello")
        result.sent_by_edge()   # {'exclaim → shout': ['hello!']}
        result                  # the comparison with the original run
        fork = await result.fork()
        await workflow.run(checkpoint_id=fork.checkpoint_id, checkpoint_storage=storage)
        ```
    """

    checkpoint_id: str
    executor_id: str
    step: int
    inputs: list[Any]
    edited: bool
    original: ExecutorActivity
    rerun: ExecutorActivity
    exception: BaseException | None = None
    original_checkpoint_id: str | None = None
    _history: CheckpointHistory | None = field(default=None, repr=False, compare=False)
    _fork_base: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- what the re-run would do ---------------------------------------------------------------------
    @property
    def sent(self) -> list[EdgeMessage]:
        """The messages the executor would send, each on its edge."""
        return list(self.rerun.sent or ())

    def sent_by_edge(self) -> dict[str, list[Any]]:
        """The messages the executor would send, grouped by edge (``{"a → b": [...]}``)."""
        return self.rerun.sent_by_edge()

    @property
    def outputs(self) -> list[Any]:
        """The values the executor would yield as outputs (workflow or intermediate)."""
        return list(self.rerun.outputs or ())

    @property
    def requests(self) -> list[Any]:
        """The data of the ``request_info`` requests the executor would raise."""
        return list(self.rerun.requests or ())

    @property
    def events(self) -> list[WorkflowEvent]:
        """The custom events (and warnings) the executor would publish."""
        return list(self.rerun.events or ())

    @property
    def error(self) -> WorkflowErrorDetails | None:
        """What the executor raised in the re-run (the exception itself is :attr:`exception`)."""
        return self.rerun.error

    # -- the comparison -----------------------------------------------------------------------------
    def changes(self) -> list[RerunChange]:
        """Every compared part, in a fixed order: sent (per edge), outputs, requests, events, state, error."""
        original, rerun = self.original, self.rerun
        rows: list[RerunChange] = []
        before_edges = original.sent_by_edge() if original.sent is not None else {}
        after_edges = rerun.sent_by_edge()
        for edge in dict.fromkeys([*before_edges, *after_edges]):
            before = None if original.sent is None else [readable(v) for v in before_edges.get(edge, [])]
            rows.append(_compare("sent", edge, before, [readable(v) for v in after_edges.get(edge, [])]))
        if original.sent is not None and not before_edges and not after_edges:
            rows.append(RerunChange("sent", "", None, None, "same"))
        elif original.sent is None and not after_edges:
            rows.append(RerunChange("sent", "", None, None, "unknown"))

        def values(items: list[Any] | None) -> list[str] | None:
            return None if items is None else [readable(v) for v in items]

        rows.append(_compare("outputs", "", values(original.outputs), values(rerun.outputs) or []))
        rows.append(_compare("requests", "", values(original.requests), values(rerun.requests) or []))
        rows.append(
            _compare(
                "events",
                "",
                None if original.events is None else [_event_text(e) for e in original.events],
                [_event_text(e) for e in rerun.events or ()],
            )
        )
        if rerun.state is not None or original.state is not None:
            before_state = None if original.state is None else [readable(original.state)]
            rows.append(_compare("state", self.executor_id, before_state, [readable(rerun.state)]))
        writes = rerun.shared_state_writes or {}
        before_writes = original.shared_state_writes
        keys: list[str] = [*(before_writes or {}), *writes]
        for key in dict.fromkeys(keys):
            before = None if before_writes is None else [readable(before_writes[key])] if key in before_writes else []
            rows.append(_compare("shared state", key, before, [readable(writes[key])] if key in writes else []))
        before_error = None
        if original.error_known:
            before_error = [readable(original.error)] if original.error is not None else []
        rows.append(_compare("error", "", before_error, [readable(rerun.error)] if rerun.error is not None else []))
        return rows

    @property
    def input_texts(self) -> list[str]:
        """The inputs the executor was re-run on, as readable text."""
        return [readable(v) for v in self.inputs]

    @property
    def is_unchanged(self) -> bool:
        """Whether every known part is the same as in the original run (unknown parts are not counted)."""
        return all(c.status in ("same", "unknown") for c in self.changes())

    def shown_changes(self) -> list[RerunChange]:
        """The changes worth showing: not an unrecorded part the re-run has nothing for either."""
        return [c for c in self.changes() if not (c.status == "unknown" and c.rerun is None)]

    def _lines(self, side: str) -> list[str]:
        lines: list[str] = []
        for change in self.shown_changes():
            value = change.original if side == "original" else change.rerun
            if change.status == "unknown" and side == "original":
                value = "(not recorded)"
            if value is None:
                continue
            label = f"{change.section} {change.key}".strip()
            lines.extend(f"{label}: {line}" for line in value.splitlines() or [""])
        return lines

    def diff_text(self) -> str:
        """A unified diff of the original run's record against the re-run (empty when nothing differs)."""
        return "\n".join(
            difflib.unified_diff(
                self._lines("original"),
                self._lines("rerun"),
                fromfile=f"original run (step {self.step})",
                tofile=f"re-run of {self.executor_id}",
                lineterm="",
            )
        )

    def summary(self) -> str:
        """A few readable lines: what was re-run, on what, and what changed."""
        state = "failed" if self.error is not None else "unchanged" if self.is_unchanged else "changed"
        source = "edited input" if self.edited else "its input at the checkpoint"
        lines = [
            f"Re-run of {self.executor_id} at step {self.step} (checkpoint {self.checkpoint_id}) on {source}: {state}"
        ]
        for change in self.shown_changes():
            if change.status == "same":
                continue
            label = f"{change.section} {change.key}".strip()
            before = "(not recorded)" if change.status == "unknown" else change.original or "—"
            lines.append(f"  {change.status:8} {label}: {before} -> {change.rerun or '—'}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        state = "failed" if self.error is not None else "unchanged" if self.is_unchanged else "changed"
        return f"RerunResult(executor_id={self.executor_id!r}, step={self.step}, edited={self.edited}, {state})"

    def to_html(self) -> str:
        """The comparison as a safe HTML fragment (every value escaped): a table, then the unified diff."""
        return OBJECT_HTML.get()(self)

    def _repr_html_(self) -> str:
        return h.wrap(self.to_html())

    # -- continuing ---------------------------------------------------------------------------------
    async def fork(self, *, label: str | None = None) -> WorkflowCheckpoint:
        """Continue from here with this output: a new branch (child of the checkpoint) holding the re-run's result.

        The fork is the checkpoint with the executor's input taken out and its messages, requests, state and
        shared-state writes put in; the other executors of that superstep keep their inputs. Resume it with
        ``workflow.run(checkpoint_id=fork.checkpoint_id, checkpoint_storage=...)``. Unlike the original
        run, the executor's successors then run in the same superstep as its siblings (one superstep early).
        Nothing of the original run changes.

        Raises:
            WorkflowError: The re-run failed, so there is no output to continue with.
        """
        if self.error is not None:
            raise WorkflowError(
                f"The re-run of {self.executor_id!r} failed ({self.error.error_type}: {self.error.message}); "
                "there is no output to continue with. Re-run it with another input first."
            )
        if self._history is None:
            raise WorkflowError("This re-run result was not made by CheckpointHistory.rerun_executor; cannot fork it.")
        base = self._fork_base
        return await self._history.fork(
            self.checkpoint_id,
            shared_state=base["shared_state"],
            replace_shared_state=True,
            executor_states=base["executor_states"],
            pending_messages=base["pending_messages"],
            pending_requests=base["pending_requests"],
            fan_in_buffers=base["fan_in_buffers"],
            label=label or f"re-run of {self.executor_id} at step {self.step}",
        )


# -- inputs ---------------------------------------------------------------------------------------------------


def _check_input(executor: Executor, value: Any) -> None:
    if not executor.can_handle(value):
        accepted = [describe(t) for t in executor.input_types]
        raise ExecutorInputError(
            f"Executor {executor.id!r} has no handler for a {type(value).__qualname__}; it takes "
            f"{' | '.join(accepted) or 'nothing'}. Give it a value of one of those types.",
            executor_id=executor.id,
            accepted=accepted,
            got=type(value).__qualname__,
        )


def editable_input(value: Any) -> str:
    """An executor's input as tagged JSON text, for editing (what :func:`parse_rerun_input` reads back)."""
    return json.dumps(safe_encode(value), indent=2, ensure_ascii=False)


def parse_rerun_input(text: str, workflow: Workflow, executor_id: str) -> Any:
    """Read an edited input (JSON; tagged JSON for typed values) and check the executor takes it.

    Raises:
        ValueError: Not valid JSON, a tagged value that cannot be read, or an unknown executor.
        ExecutorInputError: The value is valid but none of the executor's handlers takes its type.
    """
    executor = workflow.executors.get(executor_id)
    if executor is None:
        raise ValueError(f"Unknown executor {executor_id!r}; executors: {sorted(workflow.executors)}.")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"The input is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}.") from e
    except RecursionError as e:
        raise ValueError("The input is not valid JSON: nested too deeply.") from e
    try:
        value = decode(raw)
    except (SerializationError, KeyError, TypeError) as e:
        raise ValueError(f"Cannot read the input: {e}") from e
    if hasattr(workflow, "definition"):  # a functional workflow's step: its own signature checks it when it runs
        return value
    _check_input(executor, value)
    return value


async def _route_checkpoint(workflow: Workflow, checkpoint: WorkflowCheckpoint) -> tuple[RunContext, list[Delivery]]:
    """A scratch run standing at ``checkpoint``, and the deliveries its next superstep would make."""
    scratch = RunContext(workflow, storage=None, store=None, streaming=False)
    scratch.step = checkpoint.step
    scratch.pending = list(checkpoint.pending_messages)
    scratch.shared_state = dict(checkpoint.shared_state)
    scratch.fan_in_buffers = {k: {s: list(v) for s, v in b.items()} for k, b in checkpoint.fan_in_buffers.items()}
    scratch.pending_requests = dict(checkpoint.pending_requests)
    return scratch, await scratch.route_pending()


async def checkpoint_inputs(workflow: Workflow, checkpoint: WorkflowCheckpoint) -> dict[str, list[Any]]:
    """What each executor receives in the superstep after ``checkpoint``, by executor id (routed by the graph)."""
    _check_graph(workflow, checkpoint)
    _scratch, deliveries = await _route_checkpoint(workflow, checkpoint)
    out: dict[str, list[Any]] = {}
    for delivery in deliveries:
        out.setdefault(delivery.target_id, []).append(delivery.payload)
    return out


def _check_graph(workflow: Workflow, checkpoint: WorkflowCheckpoint) -> None:
    if checkpoint.graph_signature != workflow.graph_signature:
        raise CheckpointMismatchError(
            f"Checkpoint {checkpoint.checkpoint_id!r} belongs to another graph than workflow {workflow.name!r}; "
            "re-run executors with the workflow that wrote it."
        )


# -- routing a sent message without running anyone --------------------------------------------------------


class _EdgeRecorder:
    """A router that notes where a message would go and delivers nothing (the neighbours stay frozen)."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.targets: list[str] = []

    def can_handle(self, target: str, data: Any) -> bool:
        return self.workflow.executors[target].can_handle(data)

    def deliver(self, target: str, source: str | None, data: Any) -> None:
        self.targets.append(target)

    def fan_in_buffer(self, group_id: str) -> dict[str, list[Any]]:
        return {}  # frozen neighbours: no other source of a fan-in has sent in this rehearsal

    def warn(self, text: str) -> None:
        return None


async def _on_edges(
    workflow: Workflow, executor_id: str, outbox: Sequence[tuple[Any, str | None]]
) -> list[EdgeMessage]:
    out: list[EdgeMessage] = []
    groups = workflow.groups_by_source.get(executor_id, [])
    for data, target in outbox:
        taken = False
        for group in groups:
            recorder = _EdgeRecorder(workflow)
            routed = group.route(data, executor_id, target, recorder)
            if inspect.isawaitable(routed):  # only when a condition or selection function is async
                routed = await routed
            if routed:
                taken = True
                if recorder.targets:
                    out.extend(EdgeMessage(executor_id, t, data) for t in recorder.targets)
                else:  # the group took it without delivering: it waits for the group's other sources
                    held = [t for t in group.targets if target is None or t == target]
                    out.extend(EdgeMessage(executor_id, t, data, held=True) for t in held)
        if not taken:
            out.append(EdgeMessage(executor_id, None, data))
    return out


# -- the original run's record ------------------------------------------------------------------------------


async def _next_checkpoint(history: CheckpointHistory, checkpoint: WorkflowCheckpoint) -> WorkflowCheckpoint | None:
    """The checkpoint the original run wrote after the superstep (its own run first, else a resumed run's)."""
    infos = await history.storage.list_checkpoint_infos(workflow_name=checkpoint.workflow_name)
    children = [i for i in infos if i.parent_id == checkpoint.checkpoint_id]
    children.sort(key=lambda i: i.run_id != checkpoint.run_id)  # stable: the same run first, then oldest first
    for info in children:
        child = await history.storage.load(info.checkpoint_id)
        if not child.metadata.get("forked_from"):  # a fork is an edit, not what the run did
            return child
    return None


def _decode_event(row: Mapping[str, Any]) -> WorkflowEvent:
    data = row.get("data")
    try:
        value = json.loads(data) if isinstance(data, str) else data
    except ValueError:
        value = data
    with contextlib.suppress(Exception):  # otherwise kept as its JSON (a type this process cannot rebuild)
        value = decode(value)
    return WorkflowEvent(str(row["type"]), value, executor_id=row.get("executor_id"))


def _superstep_window(rows: list[EventRow], after_checkpoint: str | None) -> list[EventRow] | None:
    """The events of the first superstep after ``after_checkpoint`` (``None``: from the run's start)."""
    start = 0
    if after_checkpoint is not None:
        for index, row in enumerate(rows):
            if row["type"] == "superstep_completed" and _decode_event(row).data == {"checkpoint_id": after_checkpoint}:
                start = index + 1
                break
        else:
            return None
    for index in range(start, len(rows)):
        if rows[index]["type"] == "superstep_started":
            window: list[EventRow] = []
            for row in rows[index + 1 :]:
                if row["type"] in ("superstep_completed", "superstep_started"):
                    break
                window.append(row)
            return window
    return None


def _recorded_events(
    store: Store | None, checkpoint: WorkflowCheckpoint, child: WorkflowCheckpoint | None
) -> list[WorkflowEvent] | None:
    """The run store's events of the superstep after ``checkpoint`` (``None`` when the store has none)."""
    if store is None:
        return None
    candidates: list[tuple[str, str | None]] = [
        (checkpoint.run_id, checkpoint.checkpoint_id if checkpoint.parent_id is not None else None)
    ]
    if child is not None and child.run_id != checkpoint.run_id:
        candidates.append((child.run_id, None))  # the run resumed from the checkpoint
    for run_id, after in candidates:
        try:
            rows = store.list_events(run_id)
        except Exception:  # the store is a mirror; without it the original's outputs are just unknown
            return None
        window = _superstep_window(rows, after) if rows else None
        if window is not None:
            return [_decode_event(r) for r in window]
    return None


async def _original_activity(
    history: CheckpointHistory,
    workflow: Workflow,
    checkpoint: WorkflowCheckpoint,
    executor: Executor,
    alone: bool,
) -> tuple[ExecutorActivity, str | None]:
    executor_id = executor.id
    activity = ExecutorActivity()
    child = await _next_checkpoint(history, checkpoint)
    if child is not None and child.step != checkpoint.step + 1:
        child = None  # checkpoints every few supersteps: the next one mixes several steps
    if child is not None:
        sent = [(m.data, m.target_id) for m in child.pending_messages if m.source_id == executor_id]
        activity.sent = await _on_edges(workflow, executor_id, sent)
        if executor.has_checkpoint_state:
            activity.state = child.executor_states.get(executor_id)
        activity.requests = [
            r.request_data
            for r in child.pending_requests.values()
            if r.executor_id == executor_id and r.request_id not in checkpoint.pending_requests
        ]
        if alone:  # only then are the superstep's shared-state writes this executor's
            before, after = checkpoint.shared_state, child.shared_state
            writes = {k: v for k, v in after.items() if k not in before or readable(before[k]) != readable(v)}
            writes.update({k: DELETED for k in before if k not in after})
            activity.shared_state_writes = writes
    events = _recorded_events(history.run_store, checkpoint, child)
    if events is not None:
        mine = [e for e in events if e.executor_id == executor_id]
        activity.outputs = [e.data for e in mine if e.type in ("output", "intermediate")]
        activity.events = [e for e in mine if e.type not in _NOT_COMPARED]
        if activity.requests is None:
            activity.requests = [e.data for e in mine if e.type == "request_info"]
        failed = [e for e in mine if e.type == "executor_failed"]
        activity.error_known = True
        if failed:
            data = failed[0].data
            if isinstance(data, WorkflowErrorDetails):
                activity.error = data
            elif is_json_object(data):
                activity.error = WorkflowErrorDetails(
                    str(data.get("error_type", "Error")), str(data.get("message", "")), executor_id=executor_id
                )
    return activity, None if child is None else child.checkpoint_id


# -- the re-run -----------------------------------------------------------------------------------------------


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _detached(value: Any) -> Any:
    """A copy that later changes to the live executor cannot reach (through tagged JSON when possible)."""
    try:
        return decode(encode(value))
    except Exception:
        return value


async def rerun_executor(
    history: CheckpointHistory, checkpoint_id: str, executor_id: str, *, input: Any = _MISSING
) -> RerunResult:
    """Re-run one executor from a checkpoint (see :meth:`CheckpointHistory.rerun_executor`)."""
    workflow = history.workflow
    if workflow is None:
        raise ValueError(
            "Re-running an executor needs the workflow itself: CheckpointHistory(storage, workflow=workflow)."
        )
    from ._workflow import Workflow

    if not isinstance(workflow, Workflow):  # CheckpointHistory sends functional workflows to rerun_step
        raise TypeError(f"{type(workflow).__name__} re-runs its steps with rerun_step(), not rerun_executor().")
    executor = workflow.executors.get(executor_id)
    if executor is None:
        raise ValueError(f"Unknown executor {executor_id!r}; executors: {sorted(workflow.executors)}.")
    checkpoint = await history.storage.load(checkpoint_id)
    _check_graph(workflow, checkpoint)
    if workflow.is_running:
        raise WorkflowError(
            f"Workflow {workflow.name!r} is running; its executors hold that run's state. Re-run executors when "
            "it has finished (or paused)."
        )
    scratch, deliveries = await _route_checkpoint(workflow, checkpoint)
    mine = [d for d in deliveries if d.target_id == executor_id]
    others = [d for d in deliveries if d.target_id != executor_id]
    edited = input is not _MISSING
    if edited:
        _check_input(executor, input)
        run_on = [Delivery(executor_id, mine[0].source_id if mine else None, input)]
    elif mine:
        run_on = mine
    else:
        due = sorted({d.target_id for d in deliveries})
        raise ValueError(
            f"Executor {executor_id!r} receives no message after checkpoint {checkpoint_id!r} (step "
            f"{checkpoint.step}); executors that do: {due or 'none'}. Pass input=... to run it on a message of "
            "your own."
        )
    original, original_checkpoint_id = await _original_activity(history, workflow, checkpoint, executor, not others)

    stateful = executor.has_checkpoint_state
    live_state: dict[str, Any] = await _maybe_await(executor.on_checkpoint_save()) if stateful else {}
    events: list[WorkflowEvent] = []
    span = tel.start_span(
        "workflow.rerun_executor",
        {"workflow.name": workflow.name, "executor.id": executor_id, "workflow.step": checkpoint.step + 1},
    )
    try:
        if stateful:
            saved = checkpoint.executor_states.get(executor_id)
            if saved is not None:
                await _maybe_await(executor.on_checkpoint_restore(_detached(saved)))
            else:
                executor.reset()
        with tel.use_span(span):
            invocation = await scratch.invoke_alone(executor, run_on, events.append)
        state_after = _detached(await _maybe_await(executor.on_checkpoint_save())) if stateful else None
    finally:
        if stateful:
            await _maybe_await(executor.on_checkpoint_restore(live_state))
        tel.end_span(span)
    error = invocation.error
    rerun = ExecutorActivity(
        sent=await _on_edges(workflow, executor_id, invocation.outbox),
        outputs=[e.data for e in events if e.type in ("output", "intermediate") and e.executor_id == executor_id],
        requests=[r.request_data for r in invocation.requests],
        events=[e for e in events if e.type not in _NOT_COMPARED],
        state=state_after,
        shared_state_writes=dict(invocation.state_writes),
        error=None if error is None else WorkflowErrorDetails.from_exception(error, executor_id=executor_id),
        error_known=True,
    )
    shared = dict(checkpoint.shared_state)
    for key, value in invocation.state_writes.items():
        if value is DELETED:
            shared.pop(key, None)
        else:
            shared[key] = value
    requests: list[PendingRequest] = [*checkpoint.pending_requests.values(), *invocation.requests]
    fork_base = {
        "pending_messages": [
            *(PendingMessage(d.source_id, d.payload, d.target_id) for d in others),
            *(PendingMessage(executor_id, data, target) for data, target in invocation.outbox),
        ],
        "pending_requests": requests,
        "fan_in_buffers": scratch.fan_in_buffers,
        "shared_state": shared,
        "executor_states": {executor_id: state_after} if stateful else None,
    }
    return RerunResult(
        checkpoint_id=checkpoint_id,
        executor_id=executor_id,
        step=checkpoint.step + 1,
        inputs=[d.payload for d in run_on],
        edited=edited,
        original=original,
        rerun=rerun,
        exception=error,
        original_checkpoint_id=original_checkpoint_id,
        _history=history,
        _fork_base=fork_base,
    )
