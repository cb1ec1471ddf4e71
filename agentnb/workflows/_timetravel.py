"""Time-travel over checkpoints: timelines, the checkpoint tree, inspection, diffs and forks.

Checkpoints never change once written. Every run writes a chain of checkpoints, each pointing at its
parent; a resumed run continues the chain from the checkpoint it started at, so resuming from an old
checkpoint, or from a *fork* (an edited copy), starts a new branch and the tree grows. Nothing is ever
overwritten, so every branch stays loadable.

Example:
    ```python
    history = CheckpointHistory(storage)
    timeline = await history.timeline(run_id=result.run_id)        # root ... latest
    diff = await history.diff(timeline[1].checkpoint_id, timeline[2].checkpoint_id)
    fork = await history.fork(timeline[1].checkpoint_id, shared_state={"budget": 10})
    await workflow.run(checkpoint_id=fork.checkpoint_id, checkpoint_storage=storage)
    ```

The rules for an edited fork live here too, so every view (DevUI, notebook) applies the same ones:
:func:`editable_state` writes the editable part of a checkpoint as tagged JSON, :func:`parse_fork_edits`
reads it back and checks it, and :func:`check_pending_message` asks the graph's own edge groups whether a
message could be delivered at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

from typing_extensions import TypeIs

from .._json import is_json_array, is_json_object
from .._serialization import decode, encode
from ..exceptions import CheckpointMismatchError, CheckpointNotFoundError, SerializationError
from ._checkpoints import (
    CheckpointInfo,
    CheckpointStorage,
    PendingMessage,
    PendingRequest,
    WorkflowCheckpoint,
    new_id,
    utc_now,
)

if TYPE_CHECKING:
    from ..store import Store
    from ._functional import FunctionalWorkflow
    from ._rerun import RerunResult
    from ._workflow import Workflow

__all__ = [
    "CheckpointDiff",
    "CheckpointHistory",
    "CheckpointNode",
    "ForkEdits",
    "check_pending_message",
    "editable_state",
    "parse_fork_edits",
]

_MISSING: Any = object()


def _is_functional(workflow: Workflow | FunctionalWorkflow) -> TypeIs[FunctionalWorkflow]:
    return hasattr(workflow, "definition")  # not imported: a graph-only program never loads the functional API


@dataclass
class CheckpointNode:
    """A checkpoint in the tree, with the checkpoints that continue from it.

    Example:
        >>> from agentnb.workflows import CheckpointInfo
        >>> node = CheckpointNode(CheckpointInfo("c1", "demo", "r1", None, 0, ""))
        >>> node.checkpoint_id, node.children
        ('c1', [])
    """

    info: CheckpointInfo
    children: list[CheckpointNode] = field(default_factory=list)

    @property
    def checkpoint_id(self) -> str:
        """The checkpoint's id."""
        return self.info.checkpoint_id

    def walk(self) -> Iterable[tuple[int, CheckpointNode]]:
        """Every node below (and including) this one with its depth, depth first."""
        stack: list[tuple[int, CheckpointNode]] = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, c) for c in reversed(node.children))


def _plain(value: Any) -> Any:
    """A comparable JSON form of a value (so models and dataclasses compare by content)."""
    try:
        return encode(value)
    except Exception:
        return repr(value)


def _dict_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    added = {k: after[k] for k in after if k not in before}
    removed = {k: before[k] for k in before if k not in after}
    changed = {k: (before[k], after[k]) for k in before if k in after and _plain(before[k]) != _plain(after[k])}
    return {"added": added, "removed": removed, "changed": changed}


@dataclass
class CheckpointDiff:
    """What differs between two checkpoints (``before`` -> ``after``).

    ``shared_state`` and ``executor_states`` map to ``{"added": {...}, "removed": {...}, "changed": {key: (old,
    new)}}``; messages and requests are listed as they are in each checkpoint.

    Example:
        >>> diff = CheckpointDiff("a", "b", 1, 2, _dict_changes({"n": 1}, {"n": 2}), _dict_changes({}, {}), [], [],
        ...                       [], [])
        >>> diff.shared_state["changed"]
        {'n': (1, 2)}
    """

    before_id: str
    after_id: str
    before_step: int
    after_step: int
    shared_state: dict[str, dict[str, Any]]
    executor_states: dict[str, dict[str, Any]]
    pending_before: list[PendingMessage]
    pending_after: list[PendingMessage]
    requests_added: list[str]
    requests_removed: list[str]

    @property
    def is_empty(self) -> bool:
        """Whether the two checkpoints hold the same state (apart from ids, step and time)."""
        no_state = not any(self.shared_state.values()) and not any(self.executor_states.values())
        same_pending = [m.to_dict() for m in self.pending_before] == [m.to_dict() for m in self.pending_after]
        return no_state and same_pending and not self.requests_added and not self.requests_removed

    def summary(self) -> str:
        """A few readable lines describing the difference."""
        lines = [f"{self.before_id} (step {self.before_step}) -> {self.after_id} (step {self.after_step})"]
        for title, changes in (("shared state", self.shared_state), ("executor state", self.executor_states)):
            for key in changes["added"]:
                lines.append(f"  {title}: + {key}")
            for key in changes["removed"]:
                lines.append(f"  {title}: - {key}")
            for key, (old, new) in changes["changed"].items():
                lines.append(f"  {title}: ~ {key}: {old!r} -> {new!r}")
        lines.append(f"  pending messages: {len(self.pending_before)} -> {len(self.pending_after)}")
        for rid in self.requests_added:
            lines.append(f"  request + {rid}")
        for rid in self.requests_removed:
            lines.append(f"  request - {rid}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _to_pending(item: Any) -> PendingMessage:
    if isinstance(item, PendingMessage):
        return item
    if is_json_object(item) and "data" in item:
        return PendingMessage(item.get("source_id"), item["data"], item.get("target_id"))
    if isinstance(item, tuple) and len(fields := cast("tuple[Any, ...]", item)) in (2, 3):
        return PendingMessage(*fields)
    raise TypeError(f"Pending messages must be PendingMessage, (source_id, data[, target_id]) or a dict, got {item!r}.")


class ForkEdits(TypedDict, total=False):
    """Checked edits for :meth:`CheckpointHistory.fork` (pass them as keyword arguments)."""

    shared_state: dict[str, Any]
    executor_states: dict[str, Any]
    pending_messages: list[PendingMessage]


def _type_names(types: Iterable[Any]) -> str:
    return " | ".join(getattr(t, "__name__", str(t)) for t in types)


def check_pending_message(
    workflow: Workflow | FunctionalWorkflow, message: PendingMessage, *, where: str = "A pending message"
) -> None:
    """Raise ``ValueError`` unless ``message`` could be delivered in ``workflow``'s next superstep.

    The message must name known executors, have a source or a target, and some edge group of its source
    (or its target, when it has no source) must be able to take it; conditions are not evaluated, since
    they may depend on the run. The edge groups answer for themselves (:meth:`EdgeGroup.may_take`). A
    functional workflow's one pending message is its input (:meth:`FunctionalWorkflow.check_input`).
    """
    if _is_functional(workflow):
        workflow.check_input(message, where=where)
        return
    executors = workflow.executors
    for eid in (message.source_id, message.target_id):
        if eid is not None and eid not in executors:
            raise ValueError(f"{where} names unknown executor {eid!r}; known: {sorted(executors)}.")

    def can_handle(target: str, data: Any) -> bool:
        return executors[target].can_handle(data)

    data, source, target = message.data, message.source_id, message.target_id
    if source is None:
        if target is None:
            raise ValueError(
                f"{where} has neither source_id nor target_id: a message without a source needs a target_id."
            )
        receivers = [target]
        accepted = can_handle(target, data)
    else:
        groups = workflow.groups_by_source.get(source, [])
        receivers = [t for g in groups for t in g.targets if target is None or t == target]
        accepted = not groups or any(g.may_take(data, target, can_handle) for g in groups)
    if not accepted:
        wanted = ", ".join(f"{t} takes {_type_names(executors[t].input_types)}" for t in receivers)
        raise ValueError(
            f"{where} carries a value of type {type(data).__name__} that no receiver accepts ({wanted or 'none'})."
        )


def editable_state(checkpoint: WorkflowCheckpoint) -> str:
    """The parts of a checkpoint a fork may change, as tagged JSON text (what :func:`parse_fork_edits` reads)."""
    data = {
        "shared_state": encode(checkpoint.shared_state),
        "executor_states": encode(checkpoint.executor_states),
        "pending_messages": [m.to_dict() for m in checkpoint.pending_messages],
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


_EDITABLE = ("shared_state", "executor_states", "pending_messages")


def parse_fork_edits(text: str, workflow: Workflow | FunctionalWorkflow) -> ForkEdits:
    """Read and check edited checkpoint state (see :func:`editable_state`) before anything runs.

    Checks: valid JSON; only ``shared_state``, ``executor_states`` and ``pending_messages``; tagged values
    decode; executor states name known executors; every pending message passes
    :func:`check_pending_message`.

    Raises:
        ValueError: What is wrong, and where.
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"Not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}.") from e
    except RecursionError as e:  # hostile input: nesting deeper than the parser's stack
        raise ValueError("Not valid JSON: nested too deeply.") from e
    if not is_json_object(raw):
        raise ValueError("The edits must be a JSON object with shared_state, executor_states and pending_messages.")
    fields = raw
    unknown = set(fields) - set(_EDITABLE)
    if unknown:
        raise ValueError(f"Unknown keys {sorted(unknown)}; only shared_state, executor_states and pending_messages.")
    edits: ForkEdits = {}
    try:
        if "shared_state" in fields:
            state = decode(fields["shared_state"])
            if not isinstance(state, dict):
                raise ValueError("shared_state must be an object.")
            edits["shared_state"] = state
        if "executor_states" in fields:
            decoded = decode(fields["executor_states"])
            if not isinstance(decoded, dict):
                raise ValueError("executor_states must be an object keyed by executor id.")
            states = cast("dict[str, Any]", decoded)  # decoded from a JSON object: its keys are strings
            unknown_ids = sorted(set(states) - set(workflow.executors))
            if unknown_ids:
                raise ValueError(f"executor_states names unknown executors {unknown_ids}.")
            edits["executor_states"] = states
        if "pending_messages" in fields:
            items = fields["pending_messages"]
            if not is_json_array(items):
                raise ValueError("pending_messages must be a list.")
            messages: list[PendingMessage] = []
            for i, item in enumerate(items):
                if not is_json_object(item) or "data" not in item:
                    raise ValueError(f"pending_messages[{i}] must be an object with source_id, target_id and data.")
                message = PendingMessage.from_dict({"source_id": item.get("source_id"), **item})
                check_pending_message(workflow, message, where=f"pending_messages[{i}]")
                messages.append(message)
            edits["pending_messages"] = messages
    except (SerializationError, KeyError, TypeError) as e:  # the decoder's message says what it could not read
        raise ValueError(f"Cannot read the edited values: {e}") from e
    return edits


class CheckpointHistory:
    """Browse, compare and branch the checkpoints in a storage.

    Args:
        storage: Where the checkpoints are.
        workflow: When given, forks are checked against it (executor ids, graph signature).

    Example:
        >>> from agentnb.workflows import CheckpointHistory, InMemoryCheckpointStorage
        >>> history = CheckpointHistory(InMemoryCheckpointStorage())
        >>> await history.tree()  # doctest: +SKIP
        []
    """

    def __init__(
        self,
        storage: CheckpointStorage,
        workflow: Workflow | FunctionalWorkflow | None = None,
        *,
        run_store: Store | None = None,
    ) -> None:
        self.storage = storage
        self.workflow = workflow
        self._run_store = run_store

    @property
    def run_store(self) -> Store | None:
        """Where the runs' events are (for comparing a re-run with the original): the one given, the storage's
        own run store, or the workflow's."""
        if self._run_store is not None:
            return self._run_store
        store = getattr(self.storage, "store", None)
        if store is not None:
            return store
        return self.workflow.run_store if self.workflow is not None else None

    async def rerun_executor(self, checkpoint_id: str, executor_id: str, *, input: Any = _MISSING) -> RerunResult:
        """Run one executor again on what it received after a checkpoint, with every other executor frozen.

        Nothing before or after it runs and nothing is written to the run or this storage; the result tells
        what the executor would send (per edge) and yield, next to what it did in the original run.
        ``await result.fork()`` continues from there in a new branch.

        Args:
            checkpoint_id: The checkpoint before the superstep to replay.
            executor_id: The executor to run again.
            input: Run it on this message instead of what it received (checked against its handlers).

        Raises:
            ValueError: No workflow was given to this history, the executor is unknown, or it receives
                nothing at that checkpoint and no ``input`` was given.
            ExecutorInputError: ``input`` fits none of the executor's handlers.
            CheckpointMismatchError: The checkpoint belongs to another graph.
            WorkflowError: The workflow is running in this process.

        An error the executor raises is not raised here: it is the result's ``error`` (and ``exception``).
        """
        from ._rerun import rerun_executor

        edited = {} if input is _MISSING else {"input": input}
        if self.workflow is not None and _is_functional(self.workflow):  # a step, with the other steps frozen
            return await self.workflow.rerun_step(checkpoint_id, executor_id, checkpoint_storage=self.storage, **edited)
        return await rerun_executor(self, checkpoint_id, executor_id, **edited)

    async def inputs_at(self, checkpoint_id: str) -> dict[str, list[Any]]:
        """What each executor receives in the superstep after a checkpoint (the executors due to run next)."""
        from ._rerun import checkpoint_inputs

        if self.workflow is None:
            raise ValueError(
                "Routing a checkpoint's messages needs the workflow: CheckpointHistory(storage, workflow)."
            )
        if _is_functional(self.workflow):
            return {}  # a step's input comes from replaying the workflow function (rerun_executor shows it)
        return await checkpoint_inputs(self.workflow, await self.storage.load(checkpoint_id))

    async def list(self, *, workflow_name: str | None = None, run_id: str | None = None) -> list[CheckpointInfo]:
        """Checkpoint metadata, oldest first."""
        if workflow_name is None and self.workflow is not None and run_id is None:
            workflow_name = self.workflow.name
        return await self.storage.list_checkpoint_infos(workflow_name=workflow_name, run_id=run_id)

    async def load(self, checkpoint_id: str) -> WorkflowCheckpoint:
        """Load one checkpoint for inspection (pending messages, states, requests)."""
        return await self.storage.load(checkpoint_id)

    async def timeline(self, run_id: str | None = None, *, checkpoint_id: str | None = None) -> list[CheckpointInfo]:
        """The chain of checkpoints from the root to the end of a run (or to ``checkpoint_id``).

        The chain crosses run boundaries: a run resumed from a checkpoint shows the steps before it too.
        """
        if (run_id is None) == (checkpoint_id is None):
            raise ValueError("Pass exactly one of run_id or checkpoint_id.")
        infos = await self.storage.list_checkpoint_infos()
        by_id = {i.checkpoint_id: i for i in infos}
        if run_id is not None:
            own = [i for i in infos if i.run_id == run_id]
            if not own:
                raise CheckpointNotFoundError(f"Run {run_id!r} has no checkpoints in this storage.")
            children = {i.parent_id for i in own}
            leaves = [i for i in own if i.checkpoint_id not in children]
            current: CheckpointInfo | None = leaves[-1] if leaves else own[-1]
        else:
            assert checkpoint_id is not None
            current = by_id.get(checkpoint_id)
            if current is None:
                raise CheckpointNotFoundError(f"No checkpoint found with ID {checkpoint_id} in this storage.")
        chain: list[CheckpointInfo] = []
        seen: set[str] = set()
        while current is not None and current.checkpoint_id not in seen:
            seen.add(current.checkpoint_id)
            chain.append(current)
            current = by_id.get(current.parent_id) if current.parent_id else None
        chain.reverse()
        return chain

    async def tree(self, *, workflow_name: str | None = None) -> list[CheckpointNode]:
        """The checkpoint tree: root nodes (checkpoints without a stored parent) with their descendants."""
        infos = await self.list(workflow_name=workflow_name)
        nodes = {i.checkpoint_id: CheckpointNode(i) for i in infos}
        roots: list[CheckpointNode] = []
        for info in infos:
            parent = nodes.get(info.parent_id) if info.parent_id else None
            (parent.children if parent is not None else roots).append(nodes[info.checkpoint_id])
        return roots

    async def branches(self, *, workflow_name: str | None = None) -> list[list[CheckpointInfo]]:
        """Every root-to-leaf path of the tree (one per branch)."""
        paths: list[list[CheckpointInfo]] = []

        def visit(node: CheckpointNode, path: Sequence[CheckpointInfo]) -> None:
            here = [*path, node.info]
            if not node.children:
                paths.append(here)
            for child in node.children:
                visit(child, here)

        for root in await self.tree(workflow_name=workflow_name):
            visit(root, [])
        return paths

    async def diff(self, before_id: str, after_id: str) -> CheckpointDiff:
        """Compare two checkpoints' state."""
        before = await self.storage.load(before_id)
        after = await self.storage.load(after_id)
        executors: dict[str, dict[str, Any]] = {}
        for executor_id in dict.fromkeys([*before.executor_states, *after.executor_states]):
            old = before.executor_states.get(executor_id, {})
            new = after.executor_states.get(executor_id, {})
            if is_json_object(old) and is_json_object(new):
                changes = _dict_changes(old, new)
            else:
                same = _plain(old) == _plain(new)
                changes = {"added": {}, "removed": {}, "changed": {} if same else {"": (old, new)}}
            if any(changes.values()):
                executors[executor_id] = changes
        flat_exec: dict[str, dict[str, Any]] = {"added": {}, "removed": {}, "changed": {}}
        for executor_id, changes in executors.items():
            for kind in ("added", "removed", "changed"):
                for key, value in changes[kind].items():
                    flat_exec[kind][f"{executor_id}.{key}" if key else executor_id] = value
        return CheckpointDiff(
            before_id=before_id,
            after_id=after_id,
            before_step=before.step,
            after_step=after.step,
            shared_state=_dict_changes(before.shared_state, after.shared_state),
            executor_states=flat_exec,
            pending_before=before.pending_messages,
            pending_after=after.pending_messages,
            requests_added=[r for r in after.pending_requests if r not in before.pending_requests],
            requests_removed=[r for r in before.pending_requests if r not in after.pending_requests],
        )

    async def fork(
        self,
        checkpoint_id: str,
        *,
        shared_state: Mapping[str, Any] | None = None,
        replace_shared_state: bool = False,
        executor_states: Mapping[str, Any] | None = None,
        pending_messages: Sequence[Any] | None = None,
        pending_requests: Sequence[PendingRequest] | None = None,
        fan_in_buffers: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
        label: str | None = None,
    ) -> WorkflowCheckpoint:
        """Copy a checkpoint with edits into a new branch; resume it with ``workflow.run(checkpoint_id=...)``.

        The original checkpoint and everything after it stay as they were.

        Args:
            checkpoint_id: The checkpoint to branch from (it becomes the fork's parent).
            shared_state: Keys to set in the shared state (or the whole new state with ``replace_shared_state``).
            replace_shared_state: Replace the shared state instead of updating it.
            executor_states: New saved state per executor id (replaces that executor's state).
            pending_messages: The messages for the next superstep, replacing the checkpoint's:
                ``PendingMessage``, ``(source_id, data[, target_id])`` or dicts. A message with no source goes
                straight to its ``target_id``.
            pending_requests: The outstanding ``request_info`` requests, replacing the checkpoint's.
            fan_in_buffers: The fan-in buffers (messages held until every source sent), replacing the checkpoint's.
            label: A name for the branch, kept in the fork's metadata.

        Returns:
            The saved fork (a new checkpoint with a new run id).
        """
        source = await self.storage.load(checkpoint_id)
        executors = self.workflow.executors if self.workflow is not None else None
        if self.workflow is not None and source.graph_signature != self.workflow.graph_signature:
            raise CheckpointMismatchError(
                f"Checkpoint {checkpoint_id!r} belongs to another graph than workflow {self.workflow.name!r}."
            )
        state = dict(source.shared_state)
        if shared_state is not None:
            state = dict(shared_state) if replace_shared_state else {**state, **shared_state}
        states = dict(source.executor_states)
        if executor_states is not None:
            for executor_id, value in executor_states.items():
                if executors is not None and executor_id not in executors:
                    raise ValueError(f"Unknown executor {executor_id!r}; executors: {sorted(executors)}.")
                states[executor_id] = value
        pending = list(source.pending_messages)
        if pending_messages is not None:
            pending = [_to_pending(m) for m in pending_messages]
            if self.workflow is not None:
                for m in pending:
                    check_pending_message(self.workflow, m)
        requests = dict(source.pending_requests)
        if pending_requests is not None:
            for request in pending_requests:
                if executors is not None and request.executor_id not in executors:
                    raise ValueError(f"Request {request.request_id!r} names unknown executor {request.executor_id!r}.")
            requests = {r.request_id: r for r in pending_requests}
        buffers = source.fan_in_buffers
        if fan_in_buffers is not None:
            buffers = {group: {s: list(v) for s, v in b.items()} for group, b in fan_in_buffers.items()}
        edits = [
            name
            for name, given in (
                ("shared_state", shared_state),
                ("executor_states", executor_states),
                ("pending_messages", pending_messages),
                ("pending_requests", pending_requests),
                ("fan_in_buffers", fan_in_buffers),
            )
            if given is not None
        ]
        fork = source.copy(
            checkpoint_id=new_id(),
            run_id=new_id(),
            parent_id=source.checkpoint_id,
            created_at=utc_now(),
            shared_state=state,
            executor_states=states,
            pending_messages=pending,
            pending_requests=requests,
            fan_in_buffers=buffers,
            metadata={"forked_from": source.checkpoint_id, "label": label, "edits": edits},
        )
        await self.storage.save(fork)
        return fork
