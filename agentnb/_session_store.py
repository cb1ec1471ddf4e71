"""Sessions on disk: an append-only JSONL history per session, and JSON snapshots of whole sessions.

Both are plain files a person can read. Writes never leave a half-written file where a good one was: a
snapshot is written to a temporary file and renamed over the old one; history lines are appended with
one write per turn. Unreadable data is reported with its path (and line) and left untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import tempfile
import uuid
import warnings
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

from ._files import FILE_MODE, private_dir
from ._json import is_json_object
from ._serialization import parse_json
from ._sessions import AgentSession, HistoryProvider
from ._types import Message
from .exceptions import SerializationError, SessionCorruptError, SessionError

__all__ = [
    "FileHistoryProvider",
    "FileSessionStore",
    "ServiceSessionId",
    "SessionStore",
    "session_filename",
    "session_id_from_filename",
]

ServiceSessionId = str
"""The provider's own handle on a conversation (``AgentSession.service_session_id``): a response or thread id."""

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"com{i}" for i in range(1, 10)] + [f"lpt{i}" for i in range(1, 10)]
)
_MAX_STEM = 120
SNAPSHOT_FORMAT = "agentnb.session"
SNAPSHOT_VERSION = "1.0"


def session_filename(session_id: str, suffix: str) -> str:
    """A portable file name for an opaque session id (reversible unless the id is very long).

    Lower-case letters, digits, ``-`` and ``_`` are kept; every other byte (upper case too, so names
    never collide on case-insensitive file systems) becomes ``~XX``. Over-long ids are cut and suffixed
    with a hash of the whole id.
    """
    if not isinstance(cast(object, session_id), str) or not session_id:
        raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")
    stem = "".join(c if c in _SAFE else "".join(f"~{b:02x}" for b in c.encode("utf-8")) for c in session_id)
    if stem in _WINDOWS_RESERVED:
        stem = f"~{ord(stem[0]):02x}{stem[1:]}"
    if len(stem) > _MAX_STEM:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        stem = f"{stem[: _MAX_STEM - 34].rstrip('~')}~~{digest}"
    return stem + suffix


def _decode_stem(stem: str) -> str | None:
    """The session id a file name stands for, or ``None`` when it was hashed (read the file instead)."""
    if "~~" in stem:
        return None
    out = bytearray()
    i = 0
    while i < len(stem):
        if stem[i] == "~":
            try:
                out.append(int(stem[i + 1 : i + 3], 16))
            except ValueError:
                return None
            i += 3
        else:
            out.extend(stem[i].encode("ascii"))
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def session_id_from_filename(name: str, suffix: str) -> str | None:
    """The session id :func:`session_filename` wrote ``name`` for, or ``None`` (a hashed long id, another file)."""
    if not name.endswith(suffix):
        return None
    session_id = _decode_stem(name.removesuffix(suffix))
    return session_id if session_id and session_filename(session_id, suffix) == name else None


def _append(path: Path, data: bytes, *, lines: bool = True) -> None:
    """Append ``data`` with one write (O_APPEND); with ``lines``, starting on a fresh line."""
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        size = os.fstat(fd).st_size
        if size and lines:
            os.lseek(fd, size - 1, os.SEEK_SET)
            if os.read(fd, 1) != b"\n":
                # A torn earlier write stays its own (reported) line instead of swallowing this one.
                data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a mix (mode 0600)."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class FileHistoryProvider(HistoryProvider):
    """Keeps each session's conversation in its own append-only file: JSON Lines by default.

    One line is one message (``Message.to_dict()``), so the file can be read, grepped and diffed. Each
    turn's messages are appended with a single write; a line that cannot be read raises
    :class:`~agentnb.exceptions.SessionCorruptError` naming the file and line, unless ``skip_corrupt_lines``
    is set (then it is skipped with a warning). Runs without a session keep no history. With
    ``serialization_format="msgpack"`` each message is a length-prefixed MessagePack record in a ``.msgpack``
    file instead (smaller, not readable by eye; needs the ``msgspec`` package).

    Args:
        directory: Where the session files go (created here if missing); also :attr:`storage_path`, the
            reference's name.
        source_id: The provider's key in the session state.
        skip_corrupt_lines: Skip unreadable lines (with a warning) instead of raising. In a MessagePack file
            an unreadable record ends the history (the records after it cannot be found).
        load_messages: Add stored history to each run.
        store_inputs: Save the caller's input messages.
        store_context_messages: Also save what other context providers added to the run.
        store_context_from: With ``store_context_messages``, only what these source ids added.
        store_outputs: Save the response's messages.
        skip_excluded: Leave out of each run the messages compaction marked excluded (``_excluded``); the
            file keeps every message either way.
        serialization_format: ``"json"`` (JSON Lines) or ``"msgpack"``.
        dumps: Deprecated (as in the reference): turns one message's dict into single-line JSON text or bytes.
        loads: Deprecated: parses one line back into a message's dict.

    Example:
        ```python
        import tempfile
        from agentnb import Agent, FileHistoryProvider
        from agentnb.local import ScriptedChatClient

        history = FileHistoryProvider(tempfile.mkdtemp())
        agent = Agent(ScriptedChatClient(["Hi Ada!", "You are Ada."]), context_providers=[history])
        session = agent.create_session()
        await agent.run("I'm Ada.", session=session)
        await agent.run("Who am I?", session=session)
        len(await history.get_messages(session.session_id, state={}))  # 4
        ```
    """

    _RECORD_HEADER_BYTES: ClassVar[int] = 4
    _MAX_RECORD_BYTES: ClassVar[int] = 64 * 1024 * 1024

    def __init__(
        self,
        directory: str | os.PathLike[str],
        source_id: str | None = None,
        *,
        skip_corrupt_lines: bool = False,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_context_messages: bool = False,
        store_context_from: Collection[str] | None = None,
        store_outputs: bool = True,
        skip_excluded: bool = False,
        serialization_format: Literal["json", "msgpack"] = "json",
        dumps: Callable[[Any], str | bytes] | None = None,
        loads: Callable[[str | bytes], Any] | None = None,
    ) -> None:
        if serialization_format not in ("json", "msgpack"):
            raise ValueError("serialization_format must be 'json' or 'msgpack'")
        if serialization_format == "msgpack" and (dumps is not None or loads is not None):
            raise ValueError("Custom dumps and loads are supported only with serialization_format='json'")
        if dumps is not None or loads is not None:
            warnings.warn(
                "The FileHistoryProvider arguments `dumps` and `loads` are deprecated, as in the reference; omit "
                "them to use the built-in codec of `serialization_format`.",
                DeprecationWarning,
                stacklevel=2,
            )
        super().__init__(
            source_id or "file_history",
            load_messages=load_messages,
            store_inputs=store_inputs,
            store_context_messages=store_context_messages,
            store_context_from=store_context_from,
            store_outputs=store_outputs,
        )
        self.directory = Path(directory)
        private_dir(self.directory)
        self.skip_corrupt_lines = skip_corrupt_lines
        self.skip_excluded = skip_excluded
        self.serialization_format: Literal["json", "msgpack"] = serialization_format
        self._suffix = ".jsonl" if serialization_format == "json" else ".msgpack"
        self.dumps: Callable[[Any], str | bytes] = dumps or _json_line
        self.loads: Callable[[str | bytes], Any] = loads or parse_json

    @property
    def storage_path(self) -> Path:
        """The reference's name for :attr:`directory`."""
        return self.directory

    def path_for(self, session_id: str) -> Path:
        """The file that holds ``session_id``'s conversation."""
        return self.directory / session_filename(session_id, self._suffix)

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        """The stored conversation, oldest first (empty for a new session or a run without one)."""
        if session_id is None:
            return []
        messages = await asyncio.to_thread(self._read, self.path_for(session_id))
        if self.skip_excluded:
            return [m for m in messages if not m.additional_properties.get("_excluded", False)]
        return messages

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        """Append ``messages`` to the session's file in one write.

        Raises:
            ValueError: A custom ``dumps`` returned JSON that spans lines.
        """
        if session_id is None or not messages:
            return
        if self.serialization_format == "msgpack":
            encode = _msgspec().msgpack.encode
            data = b""
            for message in messages:
                record = encode(message.to_dict())
                data += len(record).to_bytes(self._RECORD_HEADER_BYTES, "big") + record
            await asyncio.to_thread(_append, self.path_for(session_id), data, lines=False)
            return
        lines = "".join(self._line(m) + "\n" for m in messages)
        await asyncio.to_thread(_append, self.path_for(session_id), lines.encode("utf-8"))

    def _line(self, message: Message) -> str:
        out = self.dumps(message.to_dict())
        if isinstance(out, bytes):
            out = out.decode("utf-8")
        elif not isinstance(cast(object, out), str):
            raise TypeError("FileHistoryProvider.dumps must return str or bytes.")
        if "\n" in out or "\r" in out:
            raise ValueError("FileHistoryProvider.dumps must return single-line JSON for JSON Lines storage.")
        return out

    def _read(self, path: Path) -> list[Message]:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        if self.serialization_format == "msgpack":
            return self._read_records(path, data)
        messages: list[Message] = []
        last_line = data.count(b"\n") + 1
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                messages.append(Message.from_dict(self.loads(raw)))
            except Exception as e:
                problem = f"{path}: line {number} is not a stored message ({type(e).__name__}: {e})"
                if number == last_line:
                    problem += "; the last write was cut short"
                self._corrupt(path, problem, e)
        return messages

    def _read_records(self, path: Path, data: bytes) -> list[Message]:
        msgspec = _msgspec()
        messages: list[Message] = []
        offset, number, header = 0, 0, self._RECORD_HEADER_BYTES
        while offset < len(data):
            number += 1
            size = int.from_bytes(data[offset : offset + header], "big")
            record = data[offset + header : offset + header + size]
            try:
                if offset + header > len(data) or not 0 < size <= self._MAX_RECORD_BYTES:
                    raise ValueError(f"invalid record length {size}")
                if len(record) != size:
                    raise ValueError("the record is cut short")
                stored = msgspec.msgpack.decode(record)
                _check_durable(stored, "message")
                messages.append(Message.from_dict(stored))
            except Exception as e:
                self._corrupt(path, f"{path}: record {number} is not a stored message ({type(e).__name__}: {e})", e)
                if len(record) != size or not 0 < size <= self._MAX_RECORD_BYTES:
                    break  # the next record's start is unknown
            offset += header + size
        return messages

    def _corrupt(self, path: Path, problem: str, error: Exception) -> None:
        if not self.skip_corrupt_lines:
            raise SessionCorruptError(
                f"{problem}. The file is left as it is; fix or remove the record, or pass "
                "skip_corrupt_lines=True to read the rest.",
                path=str(path),
            ) from error
        warnings.warn(f"{problem}; skipped.", stacklevel=3)

    async def clear(self, session_id: str) -> None:
        """Delete the session's stored conversation."""
        with contextlib.suppress(FileNotFoundError):
            self.path_for(session_id).unlink()

    def __repr__(self) -> str:
        return f"FileHistoryProvider(directory={str(self.directory)!r})"


def _json_line(value: Any) -> bytes:
    """One message's dict as one line of JSON (no NaN: agentnb's message dicts tag non-finite floats)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


class FileSessionStore:
    """Saves whole :class:`~agentnb.AgentSession` snapshots as files, one per session (JSON by default).

    ``save`` writes a temporary file and renames it over the old snapshot, so a crash leaves the old or
    the new snapshot, never half of one. A snapshot that cannot be read raises
    :class:`~agentnb.exceptions.SessionCorruptError` and stays where it is; ``save`` refuses to replace it
    unless told to (``overwrite_corrupt=True`` moves it aside to ``<name>.corrupt-<time>`` first).
    Session ids are opaque: any string works, encoded to a portable file name. The reference's keyed
    interface is here too: ``await store.set(key, session)`` / ``await store.get(key)`` /
    ``await store.delete(key)`` store a session under a key of the caller's choosing (at most
    :attr:`MAX_SESSION_ID_LENGTH` characters); there a snapshot that cannot be decoded is moved aside to
    ``.<name>.<random>.corrupt`` so a retry starts a new session, as in the reference.

    A snapshot is the session's :meth:`~agentnb.AgentSession.to_dict` plus ``"version": "1.0"`` (the
    reference's layout); the state must be durable: JSON values, finite floats, and what agentnb's tagged JSON
    restores. Snapshots written by earlier agentnb versions still load.

    Args:
        directory: Where the snapshot files go (created on first save).
        serialization_format: ``"json"`` (readable ``.json`` files) or ``"msgpack"`` (binary ``.msgpack``
            files, the same data; needs the ``msgspec`` package). Neither format can run code when loaded.

    Example:
        ```python
        import tempfile
        from agentnb import Agent, FileSessionStore
        from agentnb.local import ScriptedChatClient

        store = FileSessionStore(tempfile.mkdtemp())
        agent = Agent(ScriptedChatClient(["Hi!"]))
        session = agent.create_session()
        await agent.run("Hello", session=session)
        store.save(session)
        restored = store.load(session.session_id)
        restored.messages[-1].text  # 'Hi!'
        ```
    """

    # The longest key ``get``/``set``/``delete`` (the reference's interface) accept, as in the reference;
    # ``save``/``load`` take ids of any length (a long one is hashed into its file name).
    MAX_SESSION_ID_LENGTH: ClassVar[int] = 128

    def __init__(
        self, directory: str | os.PathLike[str], *, serialization_format: Literal["json", "msgpack"] = "json"
    ) -> None:
        if serialization_format not in ("json", "msgpack"):
            raise ValueError("serialization_format must be 'json' or 'msgpack'")
        self.directory = Path(directory)
        self.serialization_format: Literal["json", "msgpack"] = serialization_format
        self._suffix = ".json" if serialization_format == "json" else ".msgpack"

    @property
    def storage_path(self) -> Path:
        """The reference's name for :attr:`directory`."""
        return self.directory

    def path_for(self, session_id: str) -> Path:
        """The snapshot file of ``session_id``."""
        return self.directory / session_filename(session_id, self._suffix)

    def save(self, session: AgentSession, *, overwrite_corrupt: bool = False) -> Path:
        """Write ``session``'s snapshot atomically and return its path.

        Raises:
            ValueError: The state holds a non-finite float.
            TypeError: The state holds a value agentnb cannot store (see :meth:`AgentSession.to_dict`).
        """
        if not isinstance(cast(object, session), AgentSession):
            raise TypeError(f"FileSessionStore.save expects an AgentSession, got {type(session).__name__}")
        path = self.path_for(session.session_id)
        self._write(path, session, overwrite_corrupt=overwrite_corrupt)
        return path

    def _encode_snapshot(self, session: AgentSession) -> bytes:
        data = session.to_dict()
        _check_durable(data["state"], "state")
        snapshot = {
            **data,
            "version": SNAPSHOT_VERSION,
            "format": SNAPSHOT_FORMAT,
            "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        }
        if self.serialization_format == "msgpack":
            return _msgspec().msgpack.encode(snapshot)
        return (json.dumps(snapshot, ensure_ascii=False, allow_nan=False, indent=1) + "\n").encode("utf-8")

    def _write(self, path: Path, session: AgentSession, *, overwrite_corrupt: bool) -> None:
        data = self._encode_snapshot(session)
        if path.exists():
            try:
                self._read(path)
            except SessionCorruptError:
                if not overwrite_corrupt:
                    raise
                stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
                os.replace(path, path.with_name(f"{path.name}.corrupt-{stamp}"))
            except SessionError:
                pass  # a newer format: this program's snapshot replaces it, as the caller asked
        _atomic_write(path, data)

    @classmethod
    def validate_session_id(cls, session_id: str) -> None:
        """Raise ``ValueError`` unless ``session_id`` is a key the keyed methods take (non-empty, not too long)."""
        SessionStore.validate_session_id(session_id)
        if len(session_id) > cls.MAX_SESSION_ID_LENGTH:
            raise ValueError(f"session_id must be at most {cls.MAX_SESSION_ID_LENGTH} characters")

    def _keyed_path(self, session_id: str) -> Path:
        """The file of a key, refusing one that is a link (it could point anywhere, inside the folder or not)."""
        self.validate_session_id(session_id)
        path = self.directory.resolve() / session_filename(session_id, self._suffix)
        if path.resolve() != path:
            raise ValueError(f"Session path escaped storage directory: {session_id!r}")
        return path

    async def get(self, session_id: str) -> AgentSession | None:
        """The session stored under the key ``session_id`` (the reference's interface), or ``None``.

        Raises:
            ValueError: The key is empty, longer than :attr:`MAX_SESSION_ID_LENGTH`, or its file is a link.
            SessionCorruptError: The stored snapshot cannot be read. One that cannot be decoded at all is moved
                aside (``.<name>.<random>.corrupt``), so the next ``get`` returns ``None``.
        """
        path = self._keyed_path(session_id)
        return await asyncio.to_thread(self._get, path)

    def _get(self, path: Path) -> AgentSession | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            data = self._decode(path, raw)
        except SessionCorruptError as e:
            aside = path.with_name(f".{path.name}.{uuid.uuid4().hex}.corrupt")
            try:
                if path.read_bytes() != raw:  # rewritten meanwhile: that writer's snapshot stays
                    raise SessionCorruptError(
                        f"Saved session {path} could not be read and changed while being read; retry.", path=str(path)
                    ) from e
                os.replace(path, aside)
            except OSError as moving:
                raise SessionCorruptError(
                    f"Saved session {path} cannot be read ({e}), and it could not be moved aside ({moving}).",
                    path=str(path),
                ) from e
            raise SessionCorruptError(
                f"Saved session {path} cannot be read ({e}). The corrupt snapshot was quarantined to {aside}; "
                "retry to create a new session.",
                path=str(aside),
            ) from e
        return self._session(path, data)

    async def set(self, session_id: str, session: AgentSession) -> None:
        """Store a snapshot of ``session`` under the key ``session_id``, replacing any earlier one atomically.

        The key names the file; the session keeps its own ``session_id`` inside the snapshot.

        Raises:
            ValueError: The key is empty or too long, its file is a link, or the state holds a non-finite float.
            TypeError: ``session`` is not a plain :class:`~agentnb.AgentSession` (a subclass would come back as
                the base class), or its state holds a value agentnb cannot store.
        """
        path = self._keyed_path(session_id)
        if type(session) is not AgentSession:
            raise TypeError(
                "FileSessionStore supports AgentSession instances only; a subclass needs a store of its own."
            )
        await asyncio.to_thread(self._write, path, session, overwrite_corrupt=True)

    def load(self, session_id: str) -> AgentSession | None:
        """The saved session, or ``None`` when there is none."""
        path = self.path_for(session_id)
        if not path.exists():
            return None
        return self._read(path)

    def list_sessions(self) -> list[str]:
        """The ids of the saved sessions, sorted."""
        if not self.directory.is_dir():
            return []
        ids: list[str] = []
        for path in self.directory.glob(f"*{self._suffix}"):
            if path.name.startswith("."):
                continue
            session_id = _decode_stem(path.name.removesuffix(self._suffix))
            if session_id is not None and session_filename(session_id, self._suffix) != path.name:
                continue  # not a name this store writes
            if session_id is None:  # a hashed long id: the snapshot holds the real one
                try:
                    session_id = self._read(path).session_id
                except Exception:
                    continue
            ids.append(session_id)
        return sorted(ids)

    async def delete(self, session_id: str) -> bool:
        """Remove the session stored under the key ``session_id``; returns whether there was one.

        Raises:
            ValueError: The key is empty, longer than :attr:`MAX_SESSION_ID_LENGTH`, or its file is a link.
        """
        path = self._keyed_path(session_id)

        def unlink() -> bool:
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            return True

        return await asyncio.to_thread(unlink)

    def __contains__(self, session_id: object) -> bool:
        return isinstance(session_id, str) and bool(session_id) and self.path_for(session_id).exists()

    def _decode(self, path: Path, raw: bytes) -> Any:
        """The snapshot's data; :class:`SessionCorruptError` when the bytes are not JSON (or MessagePack)."""
        if self.serialization_format == "json":
            try:
                return parse_json(raw)
            except SerializationError as e:
                raise SessionCorruptError(
                    f"Saved session {path} is not valid JSON ({e}); the file is left as it is.", path=str(path)
                ) from e
        msgspec = _msgspec()
        try:
            data = msgspec.msgpack.decode(raw)
            _check_durable(data, "snapshot")
        except (msgspec.DecodeError, TypeError, ValueError) as e:
            raise SessionCorruptError(
                f"Saved session {path} is not valid MessagePack ({e}); the file is left as it is.", path=str(path)
            ) from e
        return data

    def _read(self, path: Path) -> AgentSession:
        return self._session(path, self._decode(path, path.read_bytes()))

    def _session(self, path: Path, data: Any) -> AgentSession:
        """The session a decoded snapshot holds, in this version's layout or the one agentnb wrote before."""
        if not is_json_object(data):
            raise SessionCorruptError(
                f"{path} is not an agentnb session snapshot; the file is left as it is.", path=str(path)
            )
        version = data.get("version")
        if version == SNAPSHOT_VERSION and data.get("type") == "session":
            session_data: Any = data
        elif version == 1 and data.get("format") == SNAPSHOT_FORMAT and "session" in data:
            session_data = data["session"]  # agentnb's earlier layout: the session nested in an envelope
        elif data.get("format") == SNAPSHOT_FORMAT or data.get("type") == "session":
            raise SessionError(
                f"{path} was written by a newer agentnb (snapshot version {version!r}, this one reads "
                f"{SNAPSHOT_VERSION!r}); upgrade agentnb to load it."
            )
        else:
            raise SessionCorruptError(
                f"{path} is not an agentnb session snapshot; the file is left as it is.", path=str(path)
            )
        try:
            return AgentSession.from_dict(session_data)
        except SessionError as e:
            raise SessionCorruptError(f"{path}: {e} The file is left as it is.", path=str(path)) from e
        except Exception as e:
            raise SessionCorruptError(
                f"{path}: the session state cannot be restored ({type(e).__name__}: {e}); the file is left as it is.",
                path=str(path),
            ) from e

    def __repr__(self) -> str:
        return f"FileSessionStore(directory={str(self.directory)!r})"


def _check_durable(value: Any, path: str) -> None:
    """Raise unless ``value`` is plain JSON data with finite floats (what a snapshot file can hold)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"Session state value at {path} must be a finite float.")
        return
    if value is None or isinstance(value, (str, int)):
        return
    if isinstance(value, list):
        for index, item in enumerate(cast("list[Any]", value)):
            _check_durable(item, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in cast("dict[Any, Any]", value).items():
            if not isinstance(key, str):
                raise TypeError(f"Session state at {path} has a non-string key {key!r}.")
            _check_durable(item, f"{path}.{key}")
        return
    raise TypeError(
        f"Session state value at {path} has unsupported type {type(value).__name__!r}; register it with "
        "register_state_type() (with an encoder and decoder if it has no to_dict()/from_dict())."
    )


def _msgspec() -> Any:
    """The ``msgspec`` package, which the MessagePack format needs (imported only when that format is used)."""
    try:
        import msgspec
    except ImportError as e:
        raise ImportError(
            'serialization_format="msgpack" needs the msgspec package: pip install "agentnb[msgpack]"'
        ) from e
    return msgspec


class SessionStore:
    """Sessions kept in memory by an id the caller chooses; each read returns an independent copy.

    The reference's in-process store, for servers that keep a conversation between requests: a turn reads
    the session, runs, and writes it back, and no two readers share one object. Copies go through the
    session's JSON form, so what is stored is what :class:`FileSessionStore` would write. No eviction.

    Example:
        ```python
        from agentnb import AgentSession, SessionStore

        store = SessionStore()
        await store.set("user-1", AgentSession())
        session = await store.get("user-1")
        ```
    """

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, Any]] = {}

    @staticmethod
    def validate_session_id(session_id: str) -> None:
        """Raise ``ValueError`` unless ``session_id`` is a non-empty string."""
        if not isinstance(session_id, str) or not session_id:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}")

    async def get(self, session_id: str) -> AgentSession | None:
        """A copy of the session stored under ``session_id``, or ``None``."""
        self.validate_session_id(session_id)
        data = self._sessions.get(session_id)
        return AgentSession.from_dict(json.loads(json.dumps(data))) if data is not None else None

    async def set(self, session_id: str, session: AgentSession) -> None:
        """Store a snapshot of ``session`` (later changes to it are not seen), replacing any earlier one."""
        self.validate_session_id(session_id)
        self._sessions[session_id] = json.loads(json.dumps(session.to_dict()))

    async def delete(self, session_id: str) -> None:
        """Forget ``session_id`` (nothing happens if it is not stored)."""
        self.validate_session_id(session_id)
        self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return len(self._sessions)

    def __repr__(self) -> str:
        return f"SessionStore({len(self._sessions)} sessions)"
