"""Checkpoints: the complete state of a run between supersteps, and where they are stored.

A :class:`WorkflowCheckpoint` holds everything needed to continue a run exactly: the messages waiting
for the next superstep, every executor's saved state, the shared state, fan-in buffers, unanswered
``request_info`` requests, the step number, the graph signature (a checkpoint is refused by any other
graph), the run id, the parent checkpoint id (checkpoints form a tree; history is never overwritten)
and a timestamp. It is stored as JSON with type tags (``agentnb._serialization``), never pickle, so
custom message types (pydantic models, dataclasses, enums) come back as their own classes.

Storage implementations share one async interface, :class:`CheckpointStorage`:

- :class:`InMemoryCheckpointStorage` — a dict of JSON strings (tests, notebooks, benchmarks);
- :class:`FileCheckpointStorage` — one JSON file per checkpoint, written atomically (temp file + rename);
- :class:`RunStoreCheckpointStorage` — the run store (``agentnb.store``): SQLite by default, or PostgreSQL
  when ``AGENTNB_STORE_URL`` says so, safe for several processes (and, on PostgreSQL, several machines);
- :class:`SQLiteCheckpointStorage` — the same on a SQLite run store, kept for code written before stores
  had URLs.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib
import json
import logging
import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from .._files import private_dir
from .._json import is_json_object
from .._serialization import TAG, decode, encode, parse_json, register_type
from ..exceptions import (
    CheckpointCorruptError,
    CheckpointNotFoundError,
    SerializationError,
    WorkflowCheckpointException,
)
from ._edges import INTERNAL_SOURCE_ID, WorkflowMessage
from ._events import WorkflowEvent, decode_hint, encode_hint

if TYPE_CHECKING:
    from ..store import CheckpointRow, Store

__all__ = [
    "CheckpointID",
    "CheckpointInfo",
    "CheckpointStorage",
    "FileCheckpointStorage",
    "InMemoryCheckpointStorage",
    "PendingMessage",
    "PendingRequest",
    "RunStoreCheckpointStorage",
    "SQLiteCheckpointStorage",
    "WorkflowCheckpoint",
]

logger = logging.getLogger("agentnb.workflows")

CHECKPOINT_FORMAT_VERSION = "1.0"
#: A checkpoint's id (the reference's name for the type; ids are strings).
CheckpointID: TypeAlias = str
_ID_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")


_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
"""Writes checkpoints: one encoder made once (``json.dumps`` with options makes one per call, per superstep)."""


def new_id() -> str:
    """A fresh random id (128 bits, hex) for runs, checkpoints and requests."""
    # os.urandom directly: uuid.uuid4() costs several times more and checkpoints take one per superstep.
    return os.urandom(16).hex()


def utc_now() -> str:
    """The current UTC time as ISO 8601 (sorts correctly as text)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


@dataclass
class PendingMessage:
    """A message waiting for the next superstep.

    ``source_id`` is the executor that sent it (``None`` for the workflow input); with ``target_id`` set it
    goes only to that executor (injected messages with no source are delivered to it directly).

    Example:
        >>> PendingMessage(source_id=None, data="hello", target_id="start").data
        'hello'
    """

    source_id: str | None
    data: Any
    target_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form with type tags."""
        return {"source_id": self.source_id, "target_id": self.target_id, "data": encode(self.data)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PendingMessage:
        """Rebuild from :meth:`to_dict` output."""
        return cls(data["source_id"], decode(data["data"]), data.get("target_id"))


@dataclass
class PendingRequest:
    """An outstanding ``ctx.request_info`` call waiting for the caller's answer.

    Example:
        >>> PendingRequest("r1", "reviewer", "draft", bool, step=2).response_type
        <class 'bool'>
    """

    request_id: str
    executor_id: str
    request_data: Any
    response_type: Any
    step: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form with type tags."""
        return {
            "request_id": self.request_id,
            "executor_id": self.executor_id,
            "request_data": encode(self.request_data),
            "response_type": encode_hint(self.response_type),
            "step": self.step,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PendingRequest:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            request_id=data["request_id"],
            executor_id=data["executor_id"],
            request_data=decode(data["request_data"]),
            response_type=decode_hint(data["response_type"]),
            step=data.get("step", 0),
        )


@dataclass(init=False, eq=False)
class WorkflowCheckpoint:
    """The complete state of a run after a superstep (see the module docstring).

    The fields carry the reference's shapes: ``messages`` lists the waiting messages by sender (the workflow's
    input under :func:`INTERNAL_SOURCE_ID` of its target), ``state`` is the shared state and
    ``pending_request_info_events`` the unanswered requests by id. agentnb's own views of the same data are
    ``pending_messages`` (a list of :class:`PendingMessage`), ``shared_state`` and ``pending_requests`` (of
    :class:`PendingRequest`); executor states and fan-in buffers have fields of their own (the reference keeps
    them under reserved keys of ``state``), and ``run_state`` says whether the run was going, idle or waiting.

    The constructor also takes the reference's names ``graph_signature_hash`` (for ``graph_signature``),
    ``previous_checkpoint_id`` (``parent_id``), ``iteration_count`` (``step``) and ``timestamp``
    (``created_at``); ``checkpoint_id`` defaults to a new id, as there.

    Example:
        >>> cp = WorkflowCheckpoint(checkpoint_id="c1", workflow_name="demo", graph_signature="abc", run_id="r1")
        >>> WorkflowCheckpoint.from_json(cp.to_json()).checkpoint_id
        'c1'
        >>> WorkflowCheckpoint(workflow_name="demo", graph_signature_hash="abc", state={"n": 1}).shared_state
        {'n': 1}
    """

    checkpoint_id: str
    workflow_name: str
    graph_signature: str
    run_id: str
    parent_id: str | None = None
    step: int = 0
    created_at: str = field(default_factory=utc_now)
    executor_states: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    pending_request_info_events: dict[str, Any] = field(default_factory=dict)
    fan_in_buffers: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    run_state: str = "in_progress"
    metadata: dict[str, Any] = field(default_factory=dict)
    version: str = CHECKPOINT_FORMAT_VERSION
    # ``messages`` is kept as the runner's flat list until someone reads it by sender (grouping costs a pass).
    _messages: dict[str, list[Any]] | None = field(default=None, repr=False)
    _pending: list[PendingMessage] | None = field(default=None, repr=False)

    def __init__(
        self,
        checkpoint_id: str | None = None,
        workflow_name: str = "",
        graph_signature: str | None = None,
        run_id: str = "",
        parent_id: str | None = None,
        step: int = 0,
        created_at: str | None = None,
        messages: Mapping[str, list[Any]] | None = None,
        executor_states: dict[str, Any] | None = None,
        state: dict[str, Any] | None = None,
        pending_request_info_events: Mapping[str, Any] | None = None,
        fan_in_buffers: dict[str, dict[str, list[Any]]] | None = None,
        run_state: str = "in_progress",
        metadata: dict[str, Any] | None = None,
        version: str = CHECKPOINT_FORMAT_VERSION,
        *,
        graph_signature_hash: str | None = None,
        previous_checkpoint_id: str | None = None,
        iteration_count: int | None = None,
        timestamp: str | None = None,
        pending_messages: Iterable[PendingMessage] | None = None,
        shared_state: dict[str, Any] | None = None,
        pending_requests: Mapping[str, PendingRequest] | Iterable[PendingRequest] | None = None,
    ) -> None:
        if (
            (graph_signature is not None and graph_signature_hash is not None)
            or (parent_id is not None and previous_checkpoint_id is not None)
            or (created_at is not None and timestamp is not None)
            or (messages is not None and pending_messages is not None)
            or (state is not None and shared_state is not None)
            or (pending_request_info_events is not None and pending_requests is not None)
        ):  # checked only when both names of a field came (the runner passes one of each)
            for ours, theirs, label in (
                (graph_signature, graph_signature_hash, "graph_signature"),
                (parent_id, previous_checkpoint_id, "parent_id"),
                (created_at, timestamp, "created_at"),
                (messages, pending_messages, "messages"),
                (state, shared_state, "state"),
                (pending_request_info_events, pending_requests, "pending_request_info_events"),
            ):
                if ours is not None and theirs is not None and ours is not theirs and ours != theirs:
                    raise ValueError(f"{label} and its other name were both given, with different values.")
        signature = graph_signature if graph_signature is not None else graph_signature_hash
        if signature is None:
            raise TypeError("WorkflowCheckpoint needs graph_signature (or graph_signature_hash).")
        self.checkpoint_id = checkpoint_id if checkpoint_id is not None else new_id()
        self.workflow_name = workflow_name
        self.graph_signature = signature
        self.run_id = run_id
        self.parent_id = parent_id if parent_id is not None else previous_checkpoint_id
        self.step = step if iteration_count is None else iteration_count
        self.created_at = created_at or timestamp or utc_now()
        if messages is not None:
            self._messages, self._pending = {key: list(items) for key, items in messages.items()}, None
        else:
            self._messages, self._pending = None, list(pending_messages or ())
        self.executor_states = executor_states if executor_states is not None else {}
        chosen_state = state if state is not None else shared_state
        self.state = chosen_state if chosen_state is not None else {}
        if pending_request_info_events is not None:
            self.pending_request_info_events = dict(pending_request_info_events)
        elif pending_requests.__class__ is dict or isinstance(pending_requests, Mapping):
            self.pending_request_info_events = dict(cast("Mapping[str, PendingRequest]", pending_requests))
        else:
            self.pending_request_info_events = {r.request_id: r for r in pending_requests or ()}
        self.fan_in_buffers = fan_in_buffers if fan_in_buffers is not None else {}
        self.run_state = run_state
        self.metadata = metadata if metadata is not None else {}
        self.version = version

    @property
    def previous_checkpoint_id(self) -> str | None:
        """Alias of ``parent_id``."""
        return self.parent_id

    @property
    def iteration_count(self) -> int:
        """The reference's name for ``step``: supersteps completed when the checkpoint was taken."""
        return self.step

    @property
    def timestamp(self) -> str:
        """The reference's name for ``created_at`` (ISO 8601, UTC)."""
        return self.created_at

    @property
    def graph_signature_hash(self) -> str:
        """The reference's name for ``graph_signature``."""
        return self.graph_signature

    @property
    def shared_state(self) -> dict[str, Any]:
        """The shared state (``ctx.set_state``); the same dict as ``state``."""
        return self.state

    @shared_state.setter
    def shared_state(self, value: dict[str, Any]) -> None:
        self.state = value

    @property
    def messages(self) -> dict[str, list[Any]]:
        """The messages waiting for the next superstep, by sender (the workflow's input under
        ``INTERNAL_SOURCE_ID(target)``); the lists may be changed in place."""
        if self._messages is None:
            self._messages, self._pending = by_sender(self._pending or ()), None
        return self._messages

    @messages.setter
    def messages(self, value: Mapping[str, list[Any]]) -> None:
        self._messages, self._pending = {key: list(items) for key, items in value.items()}, None

    @property
    def pending_messages(self) -> list[PendingMessage]:
        """The messages waiting for the next superstep, in order, as :class:`PendingMessage` s.

        A :class:`WorkflowMessage` becomes the pending message it describes; any other value listed under a
        sender is data that sender sent (along its edges).
        """
        if self._pending is not None:
            return list(self._pending)
        out: list[PendingMessage] = []
        for key, items in self.messages.items():
            for item in items:
                if isinstance(item, PendingMessage):
                    out.append(item)
                elif isinstance(item, WorkflowMessage):
                    source, target = _sender(item.source_id)
                    out.append(PendingMessage(source, item.data, item.target_id or target))
                else:
                    source, target = _sender(key)
                    out.append(PendingMessage(source, item, target))
        return out

    @pending_messages.setter
    def pending_messages(self, value: Iterable[PendingMessage]) -> None:
        self._messages, self._pending = None, list(value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WorkflowCheckpoint):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    @property
    def pending_requests(self) -> dict[str, PendingRequest]:
        """The unanswered ``request_info`` requests by id, as :class:`PendingRequest` s.

        ``request_info`` events (the reference's form) are read as the requests they announce; other values
        are not requests and are left out.
        """
        out: dict[str, PendingRequest] = {}
        for key, item in self.pending_request_info_events.items():
            if isinstance(item, PendingRequest):
                out[key] = item
            elif isinstance(item, WorkflowEvent) and item.type == "request_info":
                response_type = item.response_type if item.response_type is not None else Any
                out[key] = PendingRequest(item.request_id or key, item.executor_id or "", item.data, response_type)
        return out

    @pending_requests.setter
    def pending_requests(self, value: Mapping[str, PendingRequest]) -> None:
        self.pending_request_info_events = dict(value)

    @property
    def info(self) -> CheckpointInfo:
        """The checkpoint's metadata row."""
        return CheckpointInfo(
            checkpoint_id=self.checkpoint_id,
            workflow_name=self.workflow_name,
            run_id=self.run_id,
            parent_id=self.parent_id,
            step=self.step,
            created_at=self.created_at,
        )

    def copy(self, **changes: Any) -> WorkflowCheckpoint:
        """A deep copy (through JSON) with ``changes`` applied (agentnb's or the reference's field names)."""
        fields = WorkflowCheckpoint.from_json(self.to_json()).to_dict()
        for ours, theirs in _OTHER_NAMES.items():
            if theirs in changes:
                fields.pop(ours, None)
            elif ours in changes:
                fields.pop(theirs, None)
        fields.update(changes)
        return WorkflowCheckpoint(**fields)

    def to_dict(self) -> dict[str, Any]:
        """The fields by name, values as they are (shallow, as the reference's); :meth:`to_json_dict` is JSON.

        ``WorkflowCheckpoint(**cp.to_dict())`` (or :meth:`from_dict`) makes an equal checkpoint.
        """
        return {
            "checkpoint_id": self.checkpoint_id,
            "workflow_name": self.workflow_name,
            "graph_signature_hash": self.graph_signature,
            "previous_checkpoint_id": self.parent_id,
            "timestamp": self.created_at,
            "messages": self.messages,
            "state": self.state,
            "pending_request_info_events": self.pending_request_info_events,
            "iteration_count": self.step,
            "metadata": self.metadata,
            "version": self.version,
            "run_id": self.run_id,
            "executor_states": self.executor_states,
            "fan_in_buffers": self.fan_in_buffers,
            "run_state": self.run_state,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkflowCheckpoint:
        """A checkpoint from :meth:`to_dict` output (or from :meth:`to_json_dict` output, which it recognises).

        Raises:
            WorkflowCheckpointException: ``data`` does not describe a checkpoint.
        """
        if "graph_signature" in data:  # the JSON form (it names agentnb's fields)
            return cls.from_json_dict(dict(data))
        try:
            return cls(**data)
        except Exception as e:
            raise WorkflowCheckpointException(f"Failed to create WorkflowCheckpoint from dict: {e}") from e

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-safe form with type tags (what storages write).

        The runner's own records are written in their compact lists (``pending_messages``, ``pending_requests``);
        ``messages`` / ``pending_request_info_events`` given other values, or under other keys, are written as
        mappings instead.
        """
        data: dict[str, Any] = {
            "version": self.version,
            "checkpoint_id": self.checkpoint_id,
            "workflow_name": self.workflow_name,
            "graph_signature": self.graph_signature,
            "run_id": self.run_id,
            "parent_id": self.parent_id,
            "step": self.step,
            "created_at": self.created_at,
            "run_state": self.run_state,
            "executor_states": encode(self.executor_states),
            "state": encode(self.state),
            "fan_in_buffers": encode(self.fan_in_buffers),
            "metadata": encode(self.metadata),
        }
        pending = [m.to_dict() for m in self._pending] if self._pending is not None else _runner_messages(self.messages)
        if pending is not None:
            data["pending_messages"] = pending
        else:
            data["messages"] = {key: [_message_to_json(m) for m in items] for key, items in self.messages.items()}
        events = self.pending_request_info_events
        if not events:
            data["pending_requests"] = []
        elif all(r.__class__ is PendingRequest and r.request_id == key for key, r in events.items()):
            data["pending_requests"] = [r.to_dict() for r in events.values()]
        else:
            data["pending_request_info_events"] = {key: _request_to_json(r) for key, r in events.items()}
        return data

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> WorkflowCheckpoint:
        """Rebuild from :meth:`to_json_dict` output (custom types come back as their own classes).

        Checkpoints written before ``messages``, ``state`` and ``pending_request_info_events`` took the
        reference's shapes load too.
        """
        version = data.get("version", 1)
        if format_major(version) > format_major(CHECKPOINT_FORMAT_VERSION):
            raise SerializationError(
                f"Checkpoint format version {version} is newer than this agentnb understands "
                f"({CHECKPOINT_FORMAT_VERSION}); upgrade agentnb."
            )
        state = data.get("state")
        if isinstance(state, dict):
            run_state, shared = data.get("run_state", "in_progress"), cast("dict[str, Any]", state)
        else:  # the older form: "state" was the run state (a string), "shared_state" the state
            run_state = state if isinstance(state, str) else data.get("run_state", "in_progress")
            shared = data.get("shared_state", {})
        messages: dict[str, list[Any]] | None = None
        pending: list[PendingMessage] | None = None
        if "messages" in data:
            messages = {key: [_message_from_json(m) for m in items] for key, items in data["messages"].items()}
        else:  # the runner's flat list
            pending = [PendingMessage.from_dict(m) for m in data.get("pending_messages", [])]
        if "pending_request_info_events" in data:
            requests = {key: _request_from_json(r) for key, r in data["pending_request_info_events"].items()}
        else:  # the older form: a list of pending requests
            requests = {r["request_id"]: PendingRequest.from_dict(r) for r in data.get("pending_requests", [])}
        return cls(
            checkpoint_id=data["checkpoint_id"],
            workflow_name=data["workflow_name"],
            graph_signature=data["graph_signature"],
            run_id=data["run_id"],
            parent_id=data.get("parent_id"),
            step=data.get("step", 0),
            created_at=data.get("created_at", ""),
            run_state=run_state,
            messages=messages,
            pending_messages=pending,
            executor_states=decode(data.get("executor_states", {})),
            state=decode(shared),
            pending_request_info_events=requests,
            fan_in_buffers=decode(data.get("fan_in_buffers", {})),
            metadata=decode(data.get("metadata", {})),
            version=version if isinstance(version, str) else f"{version}.0",
        )

    def to_json(self) -> str:
        """The checkpoint as a JSON string."""
        return _COMPACT.encode(self.to_json_dict())

    @classmethod
    def from_json(cls, text: str | bytes) -> WorkflowCheckpoint:
        """Parse :meth:`to_json` output; unreadable data raises :class:`SerializationError`."""
        try:
            data = parse_json(text)
        except SerializationError as e:
            raise SerializationError(f"Malformed checkpoint JSON: {e}") from e
        if not isinstance(data, dict) or "checkpoint_id" not in data or "graph_signature" not in data:
            raise SerializationError("Checkpoint JSON lacks checkpoint_id/graph_signature; it is not a checkpoint.")
        try:
            return cls.from_json_dict(cast("dict[str, Any]", data))
        except SerializationError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
            raise SerializationError(f"Checkpoint JSON has an unexpected shape: {e!r}") from e


_OTHER_NAMES = {
    "graph_signature": "graph_signature_hash",
    "parent_id": "previous_checkpoint_id",
    "step": "iteration_count",
    "created_at": "timestamp",
    "messages": "pending_messages",
    "state": "shared_state",
    "pending_request_info_events": "pending_requests",
}
"""Field names of :class:`WorkflowCheckpoint` and the other name its constructor takes for each."""


def format_major(version: object) -> int:
    """The major number of a checkpoint format version (``1``, ``"1.0"``); unreadable versions count as 0."""
    try:
        return int(str(version).split(".", 1)[0])
    except ValueError:
        return 0


def by_sender(messages: Iterable[PendingMessage]) -> dict[str, list[Any]]:
    """Pending messages grouped by sender, in order (the workflow's input under ``INTERNAL_SOURCE_ID(target)``)."""
    out: dict[str, list[Any]] = {}
    for message in messages:
        source = message.source_id
        if source is None:
            source = INTERNAL_SOURCE_ID(message.target_id) if message.target_id is not None else ""
        bucket = out.get(source)
        if bucket is None:
            out[source] = [message]
        else:
            bucket.append(message)
    return out


_INTERNAL = INTERNAL_SOURCE_ID("")


def _sender(key: str) -> tuple[str | None, str | None]:
    """The (source, target) a ``messages`` key stands for: internal keys name a target and no source."""
    if key.startswith(_INTERNAL):
        return None, key[len(_INTERNAL) :] or None
    return (key or None), None


# The runner's own records are written compactly, marked with a tag the encoder never gives a plain dict (a
# dict holding the tag key is written as a tagged item list), so any other value listed beside them stays apart.
_PENDING_MESSAGE = "pending_message"
_PENDING_REQUEST = "pending_request"


def _runner_messages(messages: Mapping[str, list[Any]]) -> list[dict[str, Any]] | None:
    """``messages`` as the runner's flat list (:meth:`PendingMessage.to_dict`), if that is all they are.

    ``None`` when an item is not a :class:`PendingMessage` or sits under another key than its sender's.
    """
    out: list[dict[str, Any]] = []
    for key, items in messages.items():
        for m in items:
            if m.__class__ is not PendingMessage:
                return None
            source = m.source_id
            if source is None:
                source = INTERNAL_SOURCE_ID(m.target_id) if m.target_id is not None else ""
            if source != key:
                return None
            out.append(m.to_dict())
    return out


def _message_to_json(item: Any) -> Any:
    if item.__class__ is PendingMessage:
        return {
            TAG: _PENDING_MESSAGE,
            "source_id": item.source_id,
            "target_id": item.target_id,
            "data": encode(item.data),
        }
    return encode(item)


def _message_from_json(data: Any) -> Any:
    if is_json_object(data) and data.get(TAG) == _PENDING_MESSAGE:
        return PendingMessage(data["source_id"], decode(data["data"]), data.get("target_id"))
    return decode(data)


def _request_to_json(item: Any) -> Any:
    if item.__class__ is PendingRequest:
        return {TAG: _PENDING_REQUEST, **item.to_dict()}
    return encode(item)


def _request_from_json(data: Any) -> Any:
    if is_json_object(data) and data.get(TAG) == _PENDING_REQUEST:
        return PendingRequest.from_dict(dict(data))
    return decode(data)


def _message_fields(message: PendingMessage) -> dict[str, Any]:
    return {"source_id": message.source_id, "target_id": message.target_id, "data": message.data}


def _message_from_fields(fields: Mapping[str, Any]) -> PendingMessage:
    return PendingMessage(fields["source_id"], fields["data"], fields.get("target_id"))


def _request_fields(request: PendingRequest) -> dict[str, Any]:
    return {
        "request_id": request.request_id,
        "executor_id": request.executor_id,
        "request_data": request.request_data,
        "response_type": encode_hint(request.response_type),
        "step": request.step,
    }


def _request_from_fields(fields: Mapping[str, Any]) -> PendingRequest:
    return PendingRequest(
        fields["request_id"],
        fields["executor_id"],
        fields["request_data"],
        decode_hint(fields["response_type"]),
        step=fields.get("step", 0),
    )


# Stable ids and compact forms for the runner's own records inside checkpoints.
register_type(PendingMessage, "agentnb.PendingMessage", encoder=_message_fields, decoder=_message_from_fields)
register_type(PendingRequest, "agentnb.PendingRequest", encoder=_request_fields, decoder=_request_from_fields)


@dataclass(frozen=True)
class CheckpointInfo:
    """A checkpoint's metadata without its state (what listings return).

    Example:
        >>> CheckpointInfo("c1", "demo", "r1", None, 0, "2026-01-01T00:00:00+00:00").step
        0
    """

    checkpoint_id: str
    workflow_name: str
    run_id: str
    parent_id: str | None
    step: int
    created_at: str

    @classmethod
    def from_row(cls, row: CheckpointRow) -> CheckpointInfo:
        """The metadata of a checkpoint the run store lists (what the DevUI and run-store storage show)."""
        return cls(
            checkpoint_id=row["checkpoint_id"],
            workflow_name=row["workflow_name"] or "",
            run_id=row["run_id"] or "",
            parent_id=row["parent_id"],
            step=int(row["step"] or 0),
            created_at=str(row["created_at"] or ""),
        )


def _parse(text: str | bytes, where: str) -> WorkflowCheckpoint:
    try:
        return WorkflowCheckpoint.from_json(text)
    except SerializationError as e:
        raise CheckpointCorruptError(f"Checkpoint {where} is unreadable ({e}); it was left in place.") from e


def _listed_info(data: Any) -> CheckpointInfo:
    """A checkpoint file's metadata, checked field by field so one odd file cannot break a listing's sort."""
    if not is_json_object(data):
        raise TypeError(f"a checkpoint is a JSON object, not {type(data).__name__}")
    # Check the JSON values before they become typed fields.
    checkpoint_id, workflow_name, run_id = data["checkpoint_id"], data["workflow_name"], data["run_id"]
    parent_id, step, created_at = data.get("parent_id"), data.get("step", 0), data.get("created_at", "")
    texts = (checkpoint_id, workflow_name, run_id, created_at)
    if not all(isinstance(v, str) for v in texts) or not isinstance(parent_id, (str, type(None))):
        raise TypeError("checkpoint_id, workflow_name, run_id, created_at and parent_id must be strings")
    if not isinstance(step, int) or isinstance(step, bool):
        raise TypeError(f"step must be an integer, got {step!r}")
    return CheckpointInfo(
        checkpoint_id=checkpoint_id,
        workflow_name=workflow_name,
        run_id=run_id,
        parent_id=parent_id,
        step=step,
        created_at=created_at,
    )


def _filter(infos: list[CheckpointInfo], workflow_name: str | None, run_id: str | None) -> list[CheckpointInfo]:
    out = [
        i
        for i in infos
        if (workflow_name is None or i.workflow_name == workflow_name) and (run_id is None or i.run_id == run_id)
    ]
    out.sort(key=lambda i: (i.created_at, i.step))
    return out


class CheckpointStorage(ABC):
    """Where checkpoints live, keyed by checkpoint id.

    Every checkpoint gets a fresh random id (forks too), so saving never replaces history; ``save`` with an
    existing id replaces that one checkpoint (used only by tools that repair a store).

    Example:
        >>> from agentnb.workflows import InMemoryCheckpointStorage
        >>> storage = InMemoryCheckpointStorage()
        >>> infos = await storage.list_checkpoint_infos(workflow_name="demo")  # doctest: +SKIP
    """

    @abstractmethod
    async def save(self, checkpoint: WorkflowCheckpoint) -> str:
        """Store ``checkpoint`` and return its id."""

    @abstractmethod
    async def load(self, checkpoint_id: str) -> WorkflowCheckpoint:
        """Load a checkpoint; raises ``CheckpointNotFoundError`` or ``CheckpointCorruptError``."""

    @abstractmethod
    async def list_checkpoint_infos(
        self, *, workflow_name: str | None = None, run_id: str | None = None
    ) -> list[CheckpointInfo]:
        """Metadata of the stored checkpoints, oldest first, without loading their state (cheap: for listings)."""

    @abstractmethod
    async def delete(self, checkpoint_id: str) -> bool:
        """Remove a checkpoint; returns whether it existed."""

    async def list_checkpoints(
        self, *, workflow_name: str | None = None, run_id: str | None = None
    ) -> list[WorkflowCheckpoint]:
        """The stored checkpoints themselves, oldest first (as in the reference; each one is loaded).

        To list many checkpoints, prefer :meth:`list_checkpoint_infos`, which reads no state.
        """
        infos = await self.list_checkpoint_infos(workflow_name=workflow_name, run_id=run_id)
        return [await self.load(i.checkpoint_id) for i in infos]

    async def list_checkpoint_ids(self, *, workflow_name: str | None = None, run_id: str | None = None) -> list[str]:
        """The ids of the stored checkpoints, oldest first."""
        return [i.checkpoint_id for i in await self.list_checkpoint_infos(workflow_name=workflow_name, run_id=run_id)]

    async def get_latest(
        self, *, workflow_name: str | None = None, run_id: str | None = None
    ) -> WorkflowCheckpoint | None:
        """The newest checkpoint (of a workflow or run), or ``None``."""
        infos = await self.list_checkpoint_infos(workflow_name=workflow_name, run_id=run_id)
        return await self.load(infos[-1].checkpoint_id) if infos else None


class InMemoryCheckpointStorage(CheckpointStorage):
    """Checkpoints kept in this process as JSON strings (so they are true copies, like on disk).

    Example:
        >>> from agentnb.workflows import InMemoryCheckpointStorage, WorkflowBuilder
        >>> storage = InMemoryCheckpointStorage()
        >>> # WorkflowBuilder(start_executor=..., checkpoint_storage=storage)
    """

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._info: dict[str, CheckpointInfo] = {}

    async def save(self, checkpoint: WorkflowCheckpoint) -> str:
        self._data[checkpoint.checkpoint_id] = checkpoint.to_json()
        self._info[checkpoint.checkpoint_id] = checkpoint.info
        return checkpoint.checkpoint_id

    async def load(self, checkpoint_id: str) -> WorkflowCheckpoint:
        text = self._data.get(checkpoint_id)
        if text is None:
            raise CheckpointNotFoundError(
                f"No checkpoint found with ID {checkpoint_id} in this InMemoryCheckpointStorage."
            )
        return _parse(text, repr(checkpoint_id))

    async def list_checkpoint_infos(
        self, *, workflow_name: str | None = None, run_id: str | None = None
    ) -> list[CheckpointInfo]:
        return _filter(list(self._info.values()), workflow_name, run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        self._info.pop(checkpoint_id, None)
        return self._data.pop(checkpoint_id, None) is not None

    def size_of(self, checkpoint_id: str) -> int:
        """The stored size of a checkpoint in bytes (UTF-8 JSON)."""
        return len(self._data[checkpoint_id].encode())

    def __len__(self) -> int:
        return len(self._data)


def _check_id(checkpoint_id: object) -> str:
    """``checkpoint_id`` if it is safe as a file name (it may come from a URL, a widget or a stored row)."""
    if not isinstance(checkpoint_id, str) or not _ID_RE.match(checkpoint_id) or checkpoint_id.startswith("."):
        raise ValueError(f"Invalid checkpoint id {checkpoint_id!r}: use letters, digits, '.', '_' and '-'.")
    return checkpoint_id


class FileCheckpointStorage(CheckpointStorage):
    """One JSON file per checkpoint in a directory, written atomically (temp file, fsync, rename).

    A crash or a kill never leaves a half-written checkpoint: readers see the old set or the new file
    whole. A file that is unreadable anyway (edited by hand, disk trouble) raises
    :class:`~agentnb.exceptions.CheckpointCorruptError` naming the path, and is left in place.

    Loading restores custom classes only from modules the program has already imported (it never imports on
    its own, so a crafted file cannot run import-time code); ``allowed_checkpoint_types`` names classes whose
    modules this storage may import when it loads, for processes that have not imported them yet.

    Args:
        storage_path: The directory (created if missing).
        fsync: Flush each file to disk before renaming (survives power loss, costs a little time).
        allowed_checkpoint_types: Trusted classes as ``"module:QualName"``; their modules are imported before
            a load (a module that cannot be found is skipped: values of its classes then fail to load).

    Example:
        >>> import tempfile
        >>> from agentnb.workflows import FileCheckpointStorage
        >>> storage = FileCheckpointStorage(tempfile.mkdtemp())
    """

    def __init__(
        self,
        storage_path: str | os.PathLike[str],
        *,
        fsync: bool = True,
        allowed_checkpoint_types: Iterable[str] | None = None,
    ) -> None:
        self.storage_path = Path(storage_path)
        private_dir(self.storage_path)  # checkpoints hold conversations and state: 0700, files 0600 (mkstemp)
        self.fsync = fsync
        self.allowed_checkpoint_types = tuple(allowed_checkpoint_types or ())
        for name in self.allowed_checkpoint_types:
            module, _, qualname = name.partition(":")
            if not module or not qualname:
                raise ValueError(f"Allowed checkpoint type {name!r} must be written 'module:QualName'.")
        self._imported = not self.allowed_checkpoint_types

    def _import_allowed(self) -> None:
        """Import the modules of ``allowed_checkpoint_types`` once, so their classes can be restored."""
        if self._imported:
            return
        self._imported = True
        for name in self.allowed_checkpoint_types:
            module = name.partition(":")[0]
            try:
                importlib.import_module(module)
            except ImportError as e:
                logger.warning("Allowed checkpoint type %s: cannot import %s (%s)", name, module, e)

    def path_of(self, checkpoint_id: str) -> Path:
        """The file a checkpoint is stored in."""
        return self.storage_path / f"{_check_id(checkpoint_id)}.json"

    async def save(self, checkpoint: WorkflowCheckpoint) -> str:
        target = self.path_of(checkpoint.checkpoint_id)
        data = checkpoint.to_json().encode()
        fd, tmp = tempfile.mkstemp(dir=self.storage_path, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        return checkpoint.checkpoint_id

    async def load(self, checkpoint_id: str) -> WorkflowCheckpoint:
        path = self.path_of(checkpoint_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise CheckpointNotFoundError(
                f"No checkpoint found with ID {checkpoint_id} in {self.storage_path}."
            ) from None
        self._import_allowed()
        return _parse(data, f"file {path}")

    async def list_checkpoint_infos(
        self, *, workflow_name: str | None = None, run_id: str | None = None
    ) -> list[CheckpointInfo]:
        infos: list[CheckpointInfo] = []
        for path in self.storage_path.glob("*.json"):
            if path.name.startswith("."):
                continue
            try:
                infos.append(_listed_info(parse_json(path.read_bytes())))
            except (OSError, SerializationError, ValueError, KeyError, TypeError) as e:
                # Listing must not fail because of one bad file; loading it raises CheckpointCorruptError.
                logger.warning("Skipping unreadable checkpoint file %s: %s", path, e)
        return _filter(infos, workflow_name, run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        path = self.path_of(checkpoint_id)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True


class RunStoreCheckpointStorage(CheckpointStorage):
    """Checkpoints in the run store, so a run checkpointed on one machine can resume on another.

    With ``AGENTNB_STORE_URL=postgresql://...`` every process (notebooks, workers, the DevUI) reads and writes
    the same checkpoints; with the SQLite default, every process of this machine does.

    Args:
        store: An ``agentnb.store.Store``, a store URL or database path; ``None`` means the process's default
            store (``agentnb.store.default_store()``, which follows ``AGENTNB_STORE_URL``).

    Example:
        ```python
        from agentnb.workflows import RunStoreCheckpointStorage

        storage = RunStoreCheckpointStorage("sqlite:///:memory:")
        # workflow = WorkflowBuilder(start_executor=...).with_checkpointing(storage).build()
        ```
    """

    def __init__(self, store: Store | str | os.PathLike[str] | None = None) -> None:
        from ..store import default_store, open_store

        if store is None:
            store = default_store()
        elif isinstance(store, (str, os.PathLike)):
            store = open_store(store)
        self.store = store

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.store.url!r})"

    async def save(self, checkpoint: WorkflowCheckpoint) -> str:
        text = checkpoint.to_json()
        await self.store.aput_checkpoint(
            checkpoint.checkpoint_id,
            run_id=checkpoint.run_id,
            workflow_name=checkpoint.workflow_name,
            parent_id=checkpoint.parent_id,
            step=checkpoint.step,
            created_at=checkpoint.created_at,
            data=text,
        )
        return checkpoint.checkpoint_id

    async def load(self, checkpoint_id: str) -> WorkflowCheckpoint:
        text = await self.store.aget_checkpoint(checkpoint_id)
        if text is None:
            raise CheckpointNotFoundError(f"No checkpoint found with ID {checkpoint_id} in the run store.")
        return _parse(text, f"{checkpoint_id!r} in the run store")

    async def list_checkpoint_infos(
        self, *, workflow_name: str | None = None, run_id: str | None = None
    ) -> list[CheckpointInfo]:
        rows = await self.store.alist_checkpoints(run_id=run_id, workflow_name=workflow_name)
        infos = [CheckpointInfo.from_row(r) for r in rows]
        return _filter(infos, workflow_name, run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        return await self.store.adelete_checkpoint(checkpoint_id)


class SQLiteCheckpointStorage(RunStoreCheckpointStorage):
    """Checkpoints in a SQLite run store; :class:`RunStoreCheckpointStorage` is the same for any backend.

    Args:
        store: An ``agentnb.store.RunStore`` (or any store), or a database path (``None`` = the default SQLite
            location, ``$AGENTNB_HOME/agentnb.db``, whatever ``AGENTNB_STORE_URL`` says).

    Example:
        >>> from agentnb.workflows import SQLiteCheckpointStorage
        >>> storage = SQLiteCheckpointStorage(":memory:")  # doctest: +SKIP
    """

    def __init__(self, store: Store | str | os.PathLike[str] | None = None) -> None:
        if store is None or isinstance(store, (str, os.PathLike)):
            from ..store import RunStore

            store = RunStore(store)
        super().__init__(store)
