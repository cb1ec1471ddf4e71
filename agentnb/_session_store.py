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
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, cast

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
SNAPSHOT_VERSION = 1


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


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` with one write (O_APPEND), starting on a fresh line."""
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        size = os.fstat(fd).st_size
        if size:
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


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a mix (mode 0600)."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class FileHistoryProvider(HistoryProvider):
    """Keeps each session's conversation in its own append-only JSON Lines file.

    One line is one message (``Message.to_dict()``), so the file can be read, grepped and diffed. Each
    turn's messages are appended with a single write; a line that cannot be read raises
    :class:`~agentnb.exceptions.SessionCorruptError` naming the file and line, unless ``skip_corrupt_lines``
    is set (then it is skipped with a warning). Runs without a session keep no history.

    Args:
        directory: Where the ``<session>.jsonl`` files go (created on first write).
        source_id: The provider's key in the session state.
        skip_corrupt_lines: Skip unreadable lines (with a warning) instead of raising.
        load_messages: Add stored history to each run.
        store_inputs: Save the caller's input messages.
        store_outputs: Save the response's messages.
        skip_excluded: Leave out of each run the messages compaction marked excluded (``_excluded``); the
            file keeps every message either way.

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

    def __init__(
        self,
        directory: str | os.PathLike[str],
        source_id: str | None = None,
        *,
        skip_corrupt_lines: bool = False,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_outputs: bool = True,
        skip_excluded: bool = False,
    ) -> None:
        super().__init__(
            source_id or "file_history",
            load_messages=load_messages,
            store_inputs=store_inputs,
            store_outputs=store_outputs,
        )
        self.directory = Path(directory)
        self.skip_corrupt_lines = skip_corrupt_lines
        self.skip_excluded = skip_excluded

    def path_for(self, session_id: str) -> Path:
        """The JSONL file that holds ``session_id``'s conversation."""
        return self.directory / session_filename(session_id, ".jsonl")

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
        """Append ``messages`` to the session's file in one write."""
        if session_id is None or not messages:
            return
        lines = "".join(json.dumps(m.to_dict(), ensure_ascii=False, allow_nan=False) + "\n" for m in messages)
        await asyncio.to_thread(_append, self.path_for(session_id), lines.encode("utf-8"))

    def _read(self, path: Path) -> list[Message]:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return []
        messages: list[Message] = []
        last_line = data.count(b"\n") + 1
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                messages.append(Message.from_dict(parse_json(raw)))
            except Exception as e:
                problem = f"{path}: line {number} is not a stored message ({type(e).__name__}: {e})"
                if number == last_line:
                    problem += "; the last write was cut short"
                if not self.skip_corrupt_lines:
                    raise SessionCorruptError(
                        f"{problem}. The file is left as it is; fix or remove the line, or pass "
                        "skip_corrupt_lines=True to read the rest.",
                        path=str(path),
                    ) from e
                warnings.warn(f"{problem}; skipped.", stacklevel=2)
        return messages

    async def clear(self, session_id: str) -> None:
        """Delete the session's stored conversation."""
        with contextlib.suppress(FileNotFoundError):
            self.path_for(session_id).unlink()

    def __repr__(self) -> str:
        return f"FileHistoryProvider(directory={str(self.directory)!r})"


class FileSessionStore:
    """Saves whole :class:`~agentnb.AgentSession` snapshots as JSON files, one per session.

    ``save`` writes a temporary file and renames it over the old snapshot, so a crash leaves the old or
    the new snapshot, never half of one. A snapshot that cannot be read raises
    :class:`~agentnb.exceptions.SessionCorruptError` and stays where it is; ``save`` refuses to replace it
    unless told to (``overwrite_corrupt=True`` moves it aside to ``<name>.corrupt-<time>`` first).
    Session ids are opaque: any string works, encoded to a portable file name. The reference's keyed
    interface is here too: ``await store.set(key, session)`` / ``await store.get(key)`` store a session under
    a key of the caller's choosing (at most :attr:`MAX_SESSION_ID_LENGTH` characters).

    Args:
        directory: Where the ``<session>.json`` files go (created on first save).

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

    # The longest key ``get``/``set`` (the reference's interface) accept, as in the reference; ``save``/``load``
    # take ids of any length (a long one is hashed into its file name).
    MAX_SESSION_ID_LENGTH: ClassVar[int] = 128

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path_for(self, session_id: str) -> Path:
        """The snapshot file of ``session_id``."""
        return self.directory / session_filename(session_id, ".json")

    def save(self, session: AgentSession, *, overwrite_corrupt: bool = False) -> Path:
        """Write ``session``'s snapshot atomically and return its path."""
        if not isinstance(cast(object, session), AgentSession):
            raise TypeError(f"FileSessionStore.save expects an AgentSession, got {type(session).__name__}")
        path = self.path_for(session.session_id)
        self._write(path, session, overwrite_corrupt=overwrite_corrupt)
        return path

    def _write(self, path: Path, session: AgentSession, *, overwrite_corrupt: bool) -> None:
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
        snapshot = {
            "format": SNAPSHOT_FORMAT,
            "version": SNAPSHOT_VERSION,
            "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "session": session.to_dict(),
        }
        _atomic_write(path, json.dumps(snapshot, ensure_ascii=False, allow_nan=False, indent=1) + "\n")

    @classmethod
    def validate_session_id(cls, session_id: str) -> None:
        """Raise ``ValueError`` unless ``session_id`` is a key the keyed methods take (non-empty, not too long)."""
        SessionStore.validate_session_id(session_id)
        if len(session_id) > cls.MAX_SESSION_ID_LENGTH:
            raise ValueError(f"session_id must be at most {cls.MAX_SESSION_ID_LENGTH} characters")

    async def get(self, session_id: str) -> AgentSession | None:
        """The session stored under the key ``session_id`` (the reference's interface), or ``None``.

        Raises:
            ValueError: The key is empty or longer than :attr:`MAX_SESSION_ID_LENGTH`.
            SessionCorruptError: The stored snapshot cannot be read (the file is left as it is).
        """
        self.validate_session_id(session_id)
        return await asyncio.to_thread(self.load, session_id)

    async def set(self, session_id: str, session: AgentSession) -> None:
        """Store a snapshot of ``session`` under the key ``session_id``, replacing any earlier one atomically.

        The key names the file; the session keeps its own ``session_id`` inside the snapshot.

        Raises:
            ValueError: The key is empty or too long.
            TypeError: ``session`` is not a plain :class:`~agentnb.AgentSession` (a subclass would come back as
                the base class).
        """
        self.validate_session_id(session_id)
        if type(session) is not AgentSession:
            raise TypeError(
                "FileSessionStore supports AgentSession instances only; a subclass needs a store of its own."
            )
        await asyncio.to_thread(self._write, self.path_for(session_id), session, overwrite_corrupt=True)

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
        for path in self.directory.glob("*.json"):
            if path.name.startswith("."):
                continue
            session_id = _decode_stem(path.stem)
            if session_id is not None and session_filename(session_id, ".json") != path.name:
                continue  # not a name this store writes
            if session_id is None:  # a hashed long id: the snapshot holds the real one
                try:
                    session_id = json.loads(path.read_text(encoding="utf-8"))["session"]["session_id"]
                except Exception:
                    continue
            ids.append(session_id)
        return sorted(ids)

    def delete(self, session_id: str) -> bool:
        """Remove a saved session; returns whether there was one.

        Unlike the reference's ``await store.delete(key)``, this is a plain call (agentnb's file store is
        synchronous apart from ``get``/``set``).
        """
        SessionStore.validate_session_id(session_id)
        try:
            self.path_for(session_id).unlink()
        except FileNotFoundError:
            return False
        return True

    def __contains__(self, session_id: object) -> bool:
        return isinstance(session_id, str) and bool(session_id) and self.path_for(session_id).exists()

    def _read(self, path: Path) -> AgentSession:
        try:
            data = parse_json(path.read_bytes())
        except SerializationError as e:
            raise SessionCorruptError(
                f"Saved session {path} is not valid JSON ({e}); the file is left as it is.", path=str(path)
            ) from e
        if not is_json_object(data) or data.get("format") != SNAPSHOT_FORMAT or "session" not in data:
            raise SessionCorruptError(
                f"{path} is not an agentnb session snapshot; the file is left as it is.", path=str(path)
            )
        version = data.get("version")
        if not isinstance(version, int) or version > SNAPSHOT_VERSION:
            raise SessionError(
                f"{path} was written by a newer agentnb (snapshot version {version!r}, this one reads "
                f"{SNAPSHOT_VERSION}); upgrade agentnb to load it."
            )
        try:
            return AgentSession.from_dict(data["session"])
        except SessionError as e:
            raise SessionCorruptError(f"{path}: {e} The file is left as it is.", path=str(path)) from e
        except Exception as e:
            raise SessionCorruptError(
                f"{path}: the session state cannot be restored ({type(e).__name__}: {e}); the file is left as it is.",
                path=str(path),
            ) from e

    def __repr__(self) -> str:
        return f"FileSessionStore(directory={str(self.directory)!r})"


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
