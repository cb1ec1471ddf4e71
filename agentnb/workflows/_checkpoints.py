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
import json
import logging
import os
import re
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .._files import private_dir
from .._json import is_json_object
from .._serialization import decode, encode, parse_json, resolve_type, type_id
from ..exceptions import CheckpointCorruptError, CheckpointNotFoundError, SerializationError

if TYPE_CHECKING:
    from ..store import CheckpointRow, Store

__all__ = [
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

CHECKPOINT_FORMAT_VERSION = 1
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


def encode_hint(hint: Any) -> Any:
    """Write a type hint (a response type) as JSON: a class id, ``"Any"``, or a readable fallback."""
    if hint is Any or hint is None:
        return "Any"
    if isinstance(hint, type) and not hasattr(hint, "__origin__"):
        return {"type": type_id(hint)}
    return {"repr": repr(hint)}


def decode_hint(data: Any) -> Any:
    """Rebuild a hint written by :func:`encode_hint`; hints that cannot be rebuilt become ``Any``."""
    if is_json_object(data) and "type" in data:
        return resolve_type(data["type"])
    return Any


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


@dataclass(init=False)
class WorkflowCheckpoint:
    """The complete state of a run after a superstep (see the module docstring).

    The constructor also takes the reference's names: ``graph_signature_hash`` (for ``graph_signature``),
    ``previous_checkpoint_id`` (``parent_id``), ``iteration_count`` (``step``) and ``timestamp``
    (``created_at``); ``checkpoint_id`` defaults to a new id, as there.

    Example:
        >>> cp = WorkflowCheckpoint(checkpoint_id="c1", workflow_name="demo", graph_signature="abc", run_id="r1")
        >>> WorkflowCheckpoint.from_json(cp.to_json()).checkpoint_id
        'c1'
        >>> WorkflowCheckpoint(workflow_name="demo", graph_signature_hash="abc").graph_signature
        'abc'
    """

    checkpoint_id: str
    workflow_name: str
    graph_signature: str
    run_id: str
    parent_id: str | None = None
    step: int = 0
    created_at: str = field(default_factory=utc_now)
    pending_messages: list[PendingMessage] = field(default_factory=list)
    executor_states: dict[str, Any] = field(default_factory=dict)
    shared_state: dict[str, Any] = field(default_factory=dict)
    pending_requests: dict[str, PendingRequest] = field(default_factory=dict)
    fan_in_buffers: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    state: str = "in_progress"
    metadata: dict[str, Any] = field(default_factory=dict)
    version: int = CHECKPOINT_FORMAT_VERSION

    def __init__(
        self,
        checkpoint_id: str | None = None,
        workflow_name: str = "",
        graph_signature: str | None = None,
        run_id: str = "",
        parent_id: str | None = None,
        step: int = 0,
        created_at: str | None = None,
        pending_messages: list[PendingMessage] | None = None,
        executor_states: dict[str, Any] | None = None,
        shared_state: dict[str, Any] | None = None,
        pending_requests: dict[str, PendingRequest] | None = None,
        fan_in_buffers: dict[str, dict[str, list[Any]]] | None = None,
        state: str = "in_progress",
        metadata: dict[str, Any] | None = None,
        version: int = CHECKPOINT_FORMAT_VERSION,
        *,
        graph_signature_hash: str | None = None,
        previous_checkpoint_id: str | None = None,
        iteration_count: int | None = None,
        timestamp: str | None = None,
    ) -> None:
        if graph_signature_hash is not None or previous_checkpoint_id is not None or timestamp is not None:
            for ours, theirs, label in (
                (graph_signature, graph_signature_hash, "graph_signature"),
                (parent_id, previous_checkpoint_id, "parent_id"),
                (created_at, timestamp, "created_at"),
            ):
                if ours is not None and theirs is not None and ours != theirs:
                    raise ValueError(f"{label} and its reference name were both given, with different values.")
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
        self.pending_messages = list(pending_messages) if pending_messages is not None else []
        self.executor_states = executor_states if executor_states is not None else {}
        self.shared_state = shared_state if shared_state is not None else {}
        self.pending_requests = pending_requests if pending_requests is not None else {}
        self.fan_in_buffers = fan_in_buffers if fan_in_buffers is not None else {}
        self.state = state
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
    def messages(self) -> dict[str, list[PendingMessage]]:
        """The messages waiting for the next superstep, by sending executor (the reference's shape).

        The workflow's own input has no sender and is listed under ``""``.
        """
        out: dict[str, list[PendingMessage]] = {}
        for message in self.pending_messages:
            out.setdefault(message.source_id or "", []).append(message)
        return out

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
        """A deep copy (through JSON) with ``changes`` applied."""
        return replace(WorkflowCheckpoint.from_json(self.to_json()), **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form with type tags."""
        return {
            "version": self.version,
            "checkpoint_id": self.checkpoint_id,
            "workflow_name": self.workflow_name,
            "graph_signature": self.graph_signature,
            "run_id": self.run_id,
            "parent_id": self.parent_id,
            "step": self.step,
            "created_at": self.created_at,
            "state": self.state,
            "pending_messages": [m.to_dict() for m in self.pending_messages],
            "executor_states": encode(self.executor_states),
            "shared_state": encode(self.shared_state),
            "pending_requests": [r.to_dict() for r in self.pending_requests.values()],
            "fan_in_buffers": encode(self.fan_in_buffers),
            "metadata": encode(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkflowCheckpoint:
        """Rebuild from :meth:`to_dict` output (custom types come back as their own classes)."""
        version = data.get("version", 1)
        if version > CHECKPOINT_FORMAT_VERSION:
            raise SerializationError(
                f"Checkpoint format version {version} is newer than this agentnb understands "
                f"({CHECKPOINT_FORMAT_VERSION}); upgrade agentnb."
            )
        requests = [PendingRequest.from_dict(r) for r in data.get("pending_requests", [])]
        return cls(
            checkpoint_id=data["checkpoint_id"],
            workflow_name=data["workflow_name"],
            graph_signature=data["graph_signature"],
            run_id=data["run_id"],
            parent_id=data.get("parent_id"),
            step=data.get("step", 0),
            created_at=data.get("created_at", ""),
            state=data.get("state", "in_progress"),
            pending_messages=[PendingMessage.from_dict(m) for m in data.get("pending_messages", [])],
            executor_states=decode(data.get("executor_states", {})),
            shared_state=decode(data.get("shared_state", {})),
            pending_requests={r.request_id: r for r in requests},
            fan_in_buffers=decode(data.get("fan_in_buffers", {})),
            metadata=decode(data.get("metadata", {})),
            version=version,
        )

    def to_json(self) -> str:
        """The checkpoint as a JSON string."""
        return _COMPACT.encode(self.to_dict())

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
            return cls.from_dict(cast("dict[str, Any]", data))
        except SerializationError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
            raise SerializationError(f"Checkpoint JSON has an unexpected shape: {e!r}") from e


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

    Args:
        storage_path: The directory (created if missing).
        fsync: Flush each file to disk before renaming (survives power loss, costs a little time).

    Example:
        >>> import tempfile
        >>> from agentnb.workflows import FileCheckpointStorage
        >>> storage = FileCheckpointStorage(tempfile.mkdtemp())
    """

    def __init__(self, storage_path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.storage_path = Path(storage_path)
        private_dir(self.storage_path)  # checkpoints hold conversations and state: 0700, files 0600 (mkstemp)
        self.fsync = fsync

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
