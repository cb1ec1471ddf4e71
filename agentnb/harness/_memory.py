"""Consolidating memory: durable facts an agent keeps per owner across sessions, as topic files with an index.

:class:`MemoryContextProvider` is a history provider with a memory. After each run it keeps the transcript
(one JSON-lines file per session) and asks the agent's own model to extract durable facts from the new turn
(``{"memories": [{"topic", "memory"}]}``), merging each into a topic file (``topics/<slug>.md``); an index
(``MEMORY.md``) points at every topic. Before each run the model sees the index and the topic files whose
words match the input, and gets tools to list, read, write and delete topics and search transcripts. Every
few sessions the model consolidates each topic (dedupes, drops stale items). A bad reply from the model is
logged and skipped: memory never fails a run.

Storage is per *owner* (``session.state[owner_state_key]``, a user id say), so one user's sessions share
memory and another user's never see it. :class:`MemoryFileStore` keeps it on disk; the owner and source id
are encoded into single path segments, so neither can steer a path outside ``base_path``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from abc import ABC, abstractmethod
from base64 import urlsafe_b64encode
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePath
from typing import Any, cast

from .._session_store import session_filename, session_id_from_filename
from .._sessions import AgentSession, HistoryProvider, SessionContext
from .._tools import FunctionTool, tool
from .._types import Message
from ..exceptions import AgentnbError, SessionError, SessionOwnerError

__all__ = [
    "DEFAULT_MEMORY_CONSOLIDATION_PROMPT",
    "DEFAULT_MEMORY_EXTRACTION_PROMPT",
    "DEFAULT_MEMORY_SOURCE_ID",
    "MemoryContextProvider",
    "MemoryFileStore",
    "MemoryIndexEntry",
    "MemoryStore",
    "MemoryTopicRecord",
]

logger = logging.getLogger("agentnb.harness")

DEFAULT_MEMORY_SOURCE_ID = "memory"
DEFAULT_MEMORY_CONTEXT_PROMPT = "## Memory\nUse MEMORY.md and the loaded topic files when they are relevant."
DEFAULT_MEMORY_INDEX_FILE_NAME = "MEMORY.md"
DEFAULT_MEMORY_TOPICS_DIRECTORY_NAME = "topics"
DEFAULT_MEMORY_TRANSCRIPTS_DIRECTORY_NAME = "transcripts"
DEFAULT_MEMORY_STATE_FILE_NAME = "state.json"
DEFAULT_MEMORY_INDEX_LINE_LIMIT = 200
DEFAULT_MEMORY_INDEX_LINE_LENGTH = 150
DEFAULT_MEMORY_SELECTION_LIMIT = 3
DEFAULT_MEMORY_CONSOLIDATION_MIN_SESSIONS = 5
DEFAULT_MEMORY_MAX_EXTRACTIONS = 5
DEFAULT_MEMORY_CONSOLIDATION_INTERVAL = timedelta(hours=24)
DEFAULT_MEMORY_INDEX_HEADER = "# MEMORY"
DEFAULT_MEMORY_NO_TOPICS_TEXT = "- none yet"
DEFAULT_MEMORY_EXTRACTION_PROMPT = """You extract durable memory candidates from an agent transcript delta.

Return only JSON with this exact shape:
{"memories":[{"topic":"short topic name","memory":"durable fact"}]}

Rules:
- include only durable facts, preferences, decisions, or patterns worth remembering later
- do not include transient tasks, temporary reminders, one-off outputs, or tool chatter
- keep topic names short and stable
- keep each memory item to one sentence
- return at most 5 memory items
- return {"memories": []} when nothing should be remembered
"""
DEFAULT_MEMORY_CONSOLIDATION_PROMPT = """You consolidate one topic memory file into a tighter durable form.

Return only JSON with this exact shape:
{"summary":"short summary","memories":["memory 1","memory 2"]}

Rules:
- preserve durable facts, preferences, and decisions
- remove duplicates and overlaps
- drop stale or obviously transient items
- keep the summary concise
- keep the memory list short and high-signal
"""
_WORD = re.compile(r"[^\W_][\w-]+")  # letters or digits in any script, so non-English input selects topics too


def _normalize(text: str, what: str) -> str:
    normalized = " ".join(text.strip().split())
    if not normalized:
        raise ValueError(f"{what} must not be empty.")
    return normalized


def _slug(topic: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", _normalize(topic, "topic").lower()).strip("-") or "memory-topic"


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def _stamp(value: datetime | None = None) -> str:
    return (value or _now()).replace(microsecond=0).isoformat()


def _dedupe(values: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        item = value.strip()
        if item and item.casefold() not in seen:
            seen.add(item.casefold())
            out.append(item)
    return out


def _summary(summary: str, memories: Sequence[str]) -> str:
    text = " ".join(summary.strip().split())
    if text:
        return text
    return " ".join(memories[:2]) if memories else "No summary yet."


def _escape_line(line: str) -> str:
    # A memory that looks like a heading would be read back as a section delimiter.
    return f"\\{line}" if line.lstrip().startswith(("#", "\\#")) else line


def _unescape_line(line: str) -> str:
    body = line.lstrip()
    return line[: len(line) - len(body)] + body[1:] if body.startswith("\\#") else line


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)  # a crash leaves the old file, never half a new one
    finally:
        temp.unlink(missing_ok=True)


def _json_text(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        lines = stripped.splitlines()
        if len(lines) >= 3:
            return "\n".join(lines[1:-1]).strip()
    return stripped


def _encode_segment(value: str) -> str:
    return urlsafe_b64encode(value.encode("utf-8")).decode("ascii").rstrip("=") or "_"


class MemoryIndexEntry:
    """One pointer line of ``MEMORY.md``: a topic, its file's slug, a short summary, when it changed."""

    __slots__ = ("slug", "summary", "topic", "updated_at")

    def __init__(self, topic: str, slug: str, summary: str, updated_at: str) -> None:
        self.topic = _normalize(topic, "topic")
        self.slug = _slug(slug)
        self.summary = _summary(summary, [])
        self.updated_at = updated_at

    @classmethod
    def from_topic_record(cls, record: MemoryTopicRecord) -> MemoryIndexEntry:
        """The index entry pointing at ``record``."""
        return cls(record.topic, record.slug, record.summary, record.updated_at)

    def to_dict(self) -> dict[str, str]:
        """The entry as JSON data."""
        return {"topic": self.topic, "slug": self.slug, "summary": self.summary, "updated_at": self.updated_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryIndexEntry:
        """Rebuild an entry from :meth:`to_dict` output."""
        values = [data.get(k) for k in ("topic", "slug", "summary", "updated_at")]
        if not all(isinstance(v, str) for v in values):
            raise ValueError(f"A memory index entry needs string topic, slug, summary and updated_at: {dict(data)!r}")
        return cls(*cast("list[str]", values))

    def to_pointer_line(self, *, max_length: int = DEFAULT_MEMORY_INDEX_LINE_LENGTH) -> str:
        """``- [topic](topics/slug.md): summary``, cut to ``max_length``."""
        line = f"- [{self.topic}](topics/{self.slug}.md): {self.summary}"
        if len(line) <= max_length:
            return line
        return line[:max_length] if max_length <= 3 else f"{line[: max_length - 3].rstrip()}..."

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryIndexEntry) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.slug)

    def __repr__(self) -> str:
        return f"MemoryIndexEntry(topic={self.topic!r}, slug={self.slug!r}, summary={self.summary!r})"


class MemoryTopicRecord:
    """One topic file: its durable memories, a summary, when it changed and which sessions contributed.

    Example:
        ```python
        from agentnb.harness import MemoryTopicRecord

        record = MemoryTopicRecord(topic="Diet", summary="", memories=["Vegetarian."], updated_at="2026-01-01")
        MemoryTopicRecord.from_markdown(record.to_markdown()) == record  # True
        ```
    """

    __slots__ = ("memories", "session_ids", "slug", "summary", "topic", "updated_at")

    def __init__(
        self,
        *,
        topic: str,
        slug: str | None = None,
        summary: str,
        memories: Sequence[str],
        updated_at: str,
        session_ids: Sequence[str] | None = None,
    ) -> None:
        self.topic = _normalize(topic, "topic")
        self.slug = _slug(slug or self.topic)
        self.memories = _dedupe(memories)
        self.summary = _summary(summary, self.memories)
        self.updated_at = updated_at
        self.session_ids = _dedupe(session_ids or [])

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON data (what the tools return)."""
        return {
            "topic": self.topic,
            "slug": self.slug,
            "summary": self.summary,
            "memories": list(self.memories),
            "updated_at": self.updated_at,
            "session_ids": list(self.session_ids),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryTopicRecord:
        """Rebuild a record from :meth:`to_dict` output."""
        memories, sessions = data.get("memories", []), data.get("session_ids", [])
        if not isinstance(memories, list) or not isinstance(sessions, list):
            raise ValueError("A memory topic record needs lists of memories and session_ids.")
        return cls(
            topic=str(data.get("topic", "")),
            slug=cast("str | None", data.get("slug")),
            summary=str(data.get("summary", "")),
            memories=[str(m) for m in cast("list[object]", memories)],
            updated_at=str(data.get("updated_at", "")),
            session_ids=[str(s) for s in cast("list[object]", sessions)],
        )

    def to_markdown(self) -> str:
        """The topic file's text."""
        memories = [f"- {_escape_line(m)}" for m in self.memories] or [DEFAULT_MEMORY_NO_TOPICS_TEXT]
        return "\n".join(
            [
                f"# {self.topic}",
                "",
                f"Updated: {self.updated_at}",
                f"Sessions: {', '.join(self.session_ids) if self.session_ids else '-'}",
                "",
                "## Summary",
                "\n".join(_escape_line(line) for line in self.summary.splitlines()),
                "",
                "## Memories",
                *memories,
            ]
        ).rstrip()

    @classmethod
    def from_markdown(cls, markdown: str, *, fallback_topic: str | None = None) -> MemoryTopicRecord:
        """Parse a topic file written by :meth:`to_markdown` (and tolerate light hand edits)."""
        topic, updated_at, sessions = fallback_topic, _stamp(), cast("list[str]", [])
        summary: list[str] = []
        memories: list[str] = []
        section: str | None = None
        for raw in markdown.splitlines():
            line = raw.strip()
            if line.startswith("# "):
                topic, section = line[2:].strip(), None
            elif line.startswith("Updated: "):
                updated_at = line.removeprefix("Updated: ").strip()
            elif line.startswith("Sessions: "):
                listed = line.removeprefix("Sessions: ").strip()
                sessions = [] if listed in ("", "-") else [s.strip() for s in listed.split(",") if s.strip()]
            elif line in ("## Summary", "## Memories"):
                section = line[3:].lower()
            elif section == "summary" and line:
                summary.append(_unescape_line(line))
            elif section == "memories" and line.startswith("- "):
                item = _unescape_line(line[2:].strip())
                if item and item != DEFAULT_MEMORY_NO_TOPICS_TEXT[2:]:
                    memories.append(item)
        if topic is None:
            raise ValueError("A memory topic file needs a '# <topic>' heading.")
        return cls(
            topic=topic, summary="\n".join(summary), memories=memories, updated_at=updated_at, session_ids=sessions
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryTopicRecord) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.slug)

    def __repr__(self) -> str:
        return f"MemoryTopicRecord(topic={self.topic!r}, memories={len(self.memories)}, updated_at={self.updated_at!r})"


class MemoryStore(ABC):
    """Where an owner's topics, index, maintenance state and transcripts live."""

    def get_owner_id(self, session: AgentSession) -> str | None:
        """The owner whose memory ``session`` uses (``None``: not owner-scoped)."""
        return None

    def export_provider_state(self, session: AgentSession) -> dict[str, Any]:
        """What the provider must keep in its state slice to find this owner's memory again."""
        return {}

    def import_provider_state(self, session: AgentSession, *, state: Mapping[str, Any]) -> None:  # noqa: B027
        """Put back into ``session`` what :meth:`export_provider_state` kept (an optional hook)."""

    @abstractmethod
    def list_topics(self, session: AgentSession, *, source_id: str) -> list[MemoryTopicRecord]:
        """Every topic of the owner."""

    @abstractmethod
    def get_topic(self, session: AgentSession, *, source_id: str, topic: str) -> MemoryTopicRecord:
        """One topic by name or slug; ``FileNotFoundError`` if there is none."""

    @abstractmethod
    def write_topic(self, session: AgentSession, record: MemoryTopicRecord, *, source_id: str) -> None:
        """Create or replace a topic."""

    @abstractmethod
    def delete_topic(self, session: AgentSession, *, source_id: str, topic: str) -> None:
        """Delete a topic; ``FileNotFoundError`` if there is none."""

    @abstractmethod
    def rebuild_index(
        self, session: AgentSession, *, source_id: str, line_limit: int, line_length: int
    ) -> list[MemoryIndexEntry]:
        """Rewrite ``MEMORY.md`` from the topics; the entries it lists."""

    @abstractmethod
    def get_index_text(
        self,
        session: AgentSession,
        *,
        source_id: str,
        line_limit: int,
        line_length: int,
        index_entries: Sequence[MemoryIndexEntry] | None = None,
    ) -> str:
        """The index as the model sees it."""

    @abstractmethod
    def read_state(self, session: AgentSession, *, source_id: str) -> dict[str, Any]:
        """The maintenance state (when memory was last consolidated, sessions since)."""

    @abstractmethod
    def write_state(self, session: AgentSession, state: Mapping[str, Any], *, source_id: str) -> None:
        """Keep the maintenance state."""

    @abstractmethod
    def get_transcripts_directory(self, session: AgentSession, *, source_id: str) -> Path:
        """Where the owner's transcripts are kept."""

    @abstractmethod
    def search_transcripts(
        self,
        session: AgentSession,
        *,
        source_id: str,
        query: str,
        session_id: str | None = None,
        limit: int = 20,
        loads: Callable[[str], Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Transcript messages whose text contains ``query`` (case-insensitive); ``loads`` reads a line."""


def _index_text(entries: Sequence[MemoryIndexEntry], line_length: int) -> str:
    lines = [e.to_pointer_line(max_length=line_length) for e in entries] or [DEFAULT_MEMORY_NO_TOPICS_TEXT]
    return "\n".join([DEFAULT_MEMORY_INDEX_HEADER, "", *lines]).rstrip()


def _default_state() -> dict[str, Any]:
    return {"last_consolidated_at": None, "sessions_since_consolidation": []}


class MemoryFileStore(MemoryStore):
    """Memory on disk: ``base_path/<source>/<owner>/<kind>/{MEMORY.md, topics/, transcripts/, state.json}``.

    Args:
        base_path: The folder everything goes under.
        owner_state_key: The ``session.state`` key holding the owner id (required: memory is per owner).
        kind: The folder name under each owner.
        owner_prefix: Put before the owner id (to keep tenants apart, say).

    Example:
        ```python
        import tempfile
        from agentnb.harness import MemoryContextProvider, MemoryFileStore

        memory = MemoryContextProvider(store=MemoryFileStore(tempfile.mkdtemp(), owner_state_key="user_id"))
        ```
    """

    def __init__(
        self,
        base_path: str | os.PathLike[str],
        *,
        owner_state_key: str,
        kind: str = "memory",
        owner_prefix: str = "",
        index_file_name: str = DEFAULT_MEMORY_INDEX_FILE_NAME,
        topics_directory_name: str = DEFAULT_MEMORY_TOPICS_DIRECTORY_NAME,
        transcripts_directory_name: str = DEFAULT_MEMORY_TRANSCRIPTS_DIRECTORY_NAME,
        state_file_name: str = DEFAULT_MEMORY_STATE_FILE_NAME,
        dumps: Callable[[Any], str] | None = None,
        loads: Callable[[str], Any] | None = None,
    ) -> None:
        for label, name in (
            ("kind", kind),
            ("index_file_name", index_file_name),
            ("topics_directory_name", topics_directory_name),
            ("transcripts_directory_name", transcripts_directory_name),
            ("state_file_name", state_file_name),
        ):
            if not name or "/" in name or "\\" in name or name in (".", ".."):
                raise ValueError(f"{label} must be one plain path segment, got {name!r}")
        self.base_path = Path(base_path)
        self._root = self.base_path.resolve()
        self.owner_state_key = owner_state_key
        self.kind = kind
        self.owner_prefix = owner_prefix
        self.index_file_name = index_file_name
        self.topics_directory_name = topics_directory_name
        self.transcripts_directory_name = transcripts_directory_name
        self.state_file_name = state_file_name
        self.dumps: Callable[[Any], str] = dumps or json.dumps
        self.loads: Callable[[str], Any] = loads or json.loads

    def get_owner_id(self, session: AgentSession) -> str:
        owner = session.state.get(self.owner_state_key)
        if owner is None or not str(owner).strip():
            raise SessionOwnerError(
                f"MemoryFileStore keeps memory per owner: set session.state[{self.owner_state_key!r}] (a user id, "
                "say) before running."
            )
        owner_id = str(owner)
        as_path = PurePath(owner_id)
        if as_path.is_absolute() or ".." in as_path.parts:
            # Encoded, it could not escape base_path; refused all the same, as the reference does.
            raise ValueError(f"Memory owner ID must not contain path traversal segments, got {owner_id!r}.")
        return owner_id

    def export_provider_state(self, session: AgentSession) -> dict[str, Any]:
        return {self.owner_state_key: self.get_owner_id(session)}

    def import_provider_state(self, session: AgentSession, *, state: Mapping[str, Any]) -> None:
        owner = state.get(self.owner_state_key)
        if owner is not None:
            session.state[self.owner_state_key] = owner

    def _root_for(self, session: AgentSession, source_id: str) -> Path:
        owner = _encode_segment(f"{self.owner_prefix}{self.get_owner_id(session)}")
        return self._root / _encode_segment(source_id) / owner / self.kind

    def _topic_path(self, session: AgentSession, source_id: str, topic: str) -> Path:
        return self._root_for(session, source_id) / self.topics_directory_name / f"{_slug(topic)}.md"

    def list_topics(self, session: AgentSession, *, source_id: str) -> list[MemoryTopicRecord]:
        folder = self._root_for(session, source_id) / self.topics_directory_name
        if not folder.is_dir():
            return []
        records: list[MemoryTopicRecord] = []
        for path in sorted(folder.glob("*.md")):
            if path.is_file() and not path.is_symlink():
                try:
                    records.append(
                        MemoryTopicRecord.from_markdown(path.read_text(encoding="utf-8"), fallback_topic=path.stem)
                    )
                except (ValueError, OSError) as e:
                    logger.warning("Skipping an unreadable memory topic file %s: %s", path.name, e)
        return sorted(records, key=lambda r: (r.topic.lower(), r.updated_at))

    def get_topic(self, session: AgentSession, *, source_id: str, topic: str) -> MemoryTopicRecord:
        path = self._topic_path(session, source_id, topic)
        if not path.is_file():
            raise FileNotFoundError(f"No memory topic named {topic!r} for this owner.")
        return MemoryTopicRecord.from_markdown(path.read_text(encoding="utf-8"), fallback_topic=topic)

    def write_topic(self, session: AgentSession, record: MemoryTopicRecord, *, source_id: str) -> None:
        _atomic_write(self._topic_path(session, source_id, record.slug), record.to_markdown() + "\n")

    def delete_topic(self, session: AgentSession, *, source_id: str, topic: str) -> None:
        path = self._topic_path(session, source_id, topic)
        if not path.is_file():
            raise FileNotFoundError(f"No memory topic named {topic!r} for this owner.")
        path.unlink()

    def _write_index(self, session: AgentSession, source_id: str, text: str) -> None:
        path = self._root_for(session, source_id) / self.index_file_name
        if not path.is_file() or path.read_text(encoding="utf-8") != text + "\n":
            _atomic_write(path, text + "\n")

    def rebuild_index(
        self, session: AgentSession, *, source_id: str, line_limit: int, line_length: int
    ) -> list[MemoryIndexEntry]:
        entries = [MemoryIndexEntry.from_topic_record(r) for r in self.list_topics(session, source_id=source_id)]
        entries = entries[:line_limit]
        self._write_index(session, source_id, _index_text(entries, line_length))
        return entries

    def get_index_text(
        self,
        session: AgentSession,
        *,
        source_id: str,
        line_limit: int,
        line_length: int,
        index_entries: Sequence[MemoryIndexEntry] | None = None,
    ) -> str:
        if index_entries is None:
            index_entries = self.rebuild_index(
                session, source_id=source_id, line_limit=line_limit, line_length=line_length
            )
        text = _index_text(index_entries[:line_limit], line_length)
        self._write_index(session, source_id, text)
        return text

    def read_state(self, session: AgentSession, *, source_id: str) -> dict[str, Any]:
        path = self._root_for(session, source_id) / self.state_file_name
        if not path.is_file():
            return _default_state()
        raw = self.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError(f"The memory state file {path} must hold a JSON object.")
        state = {**_default_state(), **cast("dict[str, Any]", raw)}
        if not isinstance(state["sessions_since_consolidation"], list):
            state["sessions_since_consolidation"] = []
        if not isinstance(state["last_consolidated_at"], (str, type(None))):
            state["last_consolidated_at"] = None
        return state

    def write_state(self, session: AgentSession, state: Mapping[str, Any], *, source_id: str) -> None:
        _atomic_write(self._root_for(session, source_id) / self.state_file_name, self.dumps(dict(state)) + "\n")

    def get_transcripts_directory(self, session: AgentSession, *, source_id: str) -> Path:
        return self._root_for(session, source_id) / self.transcripts_directory_name

    def transcript_path(self, session: AgentSession, *, source_id: str, session_id: str) -> Path:
        """The JSON-lines file holding one session's transcript."""
        return self.get_transcripts_directory(session, source_id=source_id) / session_filename(session_id, ".jsonl")

    def search_transcripts(
        self,
        session: AgentSession,
        *,
        source_id: str,
        query: str,
        session_id: str | None = None,
        limit: int = 20,
        loads: Callable[[str], Any] | None = None,
    ) -> list[dict[str, Any]]:
        read = loads or self.loads
        needle = query.strip().casefold()
        if not needle:
            raise ValueError("query must not be empty.")
        folder = self.get_transcripts_directory(session, source_id=source_id)
        if not folder.is_dir():
            return []
        results: list[dict[str, Any]] = []
        wanted = None if session_id is None else session_filename(session_id, ".jsonl")
        for path in sorted(folder.glob("*.jsonl")):
            if wanted is not None and path.name != wanted:
                continue
            # A hashed long id cannot be read back from its file name: report the one asked for, or None.
            owner_session = session_id if wanted is not None else session_id_from_filename(path.name, ".jsonl")
            with path.open(encoding="utf-8") as lines:
                for number, line in enumerate(lines, start=1):
                    if not line.strip():
                        continue
                    message = Message.from_dict(read(line))
                    text = message.text.strip()
                    if text and needle in text.casefold():
                        results.append(
                            {"session_id": owner_session, "line_number": number, "role": message.role, "text": text}
                        )
                        if len(results) >= limit:
                            return results
        return results


def _dumps_line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)


def _turn_messages(messages: Sequence[Message], turns: int, load_tool_turns: bool) -> list[Message]:
    """The last ``turns`` turns (a turn starts at a user message); without tool chatter unless asked."""
    if turns <= 0 or not messages:
        return []
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    start = starts[max(0, len(starts) - turns)] if starts else 0
    picked = list(messages[start:])
    if not load_tool_turns:
        picked = [
            m
            for m in picked
            if m.role != "tool" and not any(c.type in ("function_call", "function_result") for c in m.contents)
        ]
    return picked


def _for_memory_model(messages: Sequence[Message]) -> str:
    return "\n\n".join(f"{m.role.upper()}: {m.text.strip()}" for m in messages if m.text.strip())


class MemoryContextProvider(HistoryProvider):
    """A history provider that also remembers durable facts per owner, in topic files the model can read.

    Args:
        recent_turns: Recent transcript turns to put before the input (0: none, the default).
        load_tool_turns: Keep tool calls and results in those turns.
        store: Where memory lives (for example a :class:`MemoryFileStore`).
        source_id: The provider's key in the session state.
        context_prompt: The heading put before the index and loaded topics.
        index_line_limit: Topics listed in ``MEMORY.md``.
        index_line_length: Longest pointer line.
        selection_limit: Topic files loaded per run (those sharing most words with the input).
        max_extractions: Memories extracted per run (0: no extraction).
        consolidation_interval: Least time between consolidations.
        consolidation_min_sessions: Sessions needed before consolidating.
        extraction_prompt: Replaces :data:`DEFAULT_MEMORY_EXTRACTION_PROMPT`.
        consolidation_prompt: Replaces :data:`DEFAULT_MEMORY_CONSOLIDATION_PROMPT`.
        consolidation_client: A (cheaper) model for consolidation; the agent's own model otherwise.
        history_message_filter: Rewrites (or drops, returning ``None``) each message before it is kept.
        history_dumps: Turns a message's dict into one transcript line (default: ``json.dumps``); its output
            must not contain a newline.
        history_loads: Reads a transcript line back into a message's dict (default: ``json.loads``).

    Example:
        ```python
        import tempfile
        from agentnb import Agent, AgentSession
        from agentnb.harness import MemoryContextProvider, MemoryFileStore
        from agentnb.local import ScriptedChatClient

        store = MemoryFileStore(tempfile.mkdtemp(), owner_state_key="user_id")
        agent = Agent(ScriptedChatClient(["Noted.", '{"memories": []}']),
                      context_providers=[MemoryContextProvider(store=store)])
        session = AgentSession(state={"user_id": "ada"})
        await agent.run("I prefer tea.", session=session)
        ```
    """

    def __init__(
        self,
        recent_turns: int = 0,
        load_tool_turns: bool = True,
        *,
        store: MemoryStore,
        source_id: str = DEFAULT_MEMORY_SOURCE_ID,
        context_prompt: str | None = None,
        index_line_limit: int = DEFAULT_MEMORY_INDEX_LINE_LIMIT,
        index_line_length: int = DEFAULT_MEMORY_INDEX_LINE_LENGTH,
        selection_limit: int = DEFAULT_MEMORY_SELECTION_LIMIT,
        max_extractions: int = DEFAULT_MEMORY_MAX_EXTRACTIONS,
        consolidation_interval: timedelta = DEFAULT_MEMORY_CONSOLIDATION_INTERVAL,
        consolidation_min_sessions: int = DEFAULT_MEMORY_CONSOLIDATION_MIN_SESSIONS,
        extraction_prompt: str = DEFAULT_MEMORY_EXTRACTION_PROMPT,
        consolidation_prompt: str = DEFAULT_MEMORY_CONSOLIDATION_PROMPT,
        consolidation_client: Any = None,
        history_message_filter: Any = None,
        history_dumps: Callable[[dict[str, Any]], str] | None = None,
        history_loads: Callable[[str], Any] | None = None,
    ) -> None:
        super().__init__(source_id, load_messages=True, store_inputs=True, store_outputs=True)
        for label, value, least in (
            ("index_line_limit", index_line_limit, 1),
            ("index_line_length", index_line_length, 1),
            ("selection_limit", selection_limit, 0),
            ("recent_turns", recent_turns, 0),
            ("max_extractions", max_extractions, 0),
            ("consolidation_min_sessions", consolidation_min_sessions, 1),
        ):
            if value < least:
                raise ValueError(f"{label} must be >= {least}, got {value}")
        if not isinstance(store, MemoryStore):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"store must be a MemoryStore, got {type(store).__name__}")
        self.store = store
        self.recent_turns = recent_turns
        self.load_tool_turns = load_tool_turns
        self.context_prompt = context_prompt or DEFAULT_MEMORY_CONTEXT_PROMPT
        self.index_line_limit = index_line_limit
        self.index_line_length = index_line_length
        self.selection_limit = selection_limit
        self.max_extractions = max_extractions
        self.consolidation_interval = consolidation_interval
        self.consolidation_min_sessions = consolidation_min_sessions
        self.extraction_prompt = extraction_prompt
        self.consolidation_prompt = consolidation_prompt
        self.consolidation_client = consolidation_client
        self.history_message_filter = history_message_filter
        self.history_dumps: Callable[[dict[str, Any]], str] = history_dumps or _dumps_line
        self.history_loads: Callable[[str], Any] = history_loads or json.loads
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, session: AgentSession, key: str) -> asyncio.Lock:
        name = f"{self.store.get_owner_id(session) or ''}:{key}"
        return self._locks.setdefault(name, asyncio.Lock())

    def _index(self, session: AgentSession) -> list[MemoryIndexEntry]:
        return self.store.rebuild_index(
            session, source_id=self.source_id, line_limit=self.index_line_limit, line_length=self.index_line_length
        )

    # -- history -------------------------------------------------------------------------------------------
    def _line(self, message: Message) -> str:
        line = self.history_dumps(message.to_dict())
        if not isinstance(line, str) or "\n" in line or "\r" in line:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError("history_dumps must return one line of text (no newlines): transcripts are line-based.")
        return line

    def _transcript(self, session: AgentSession, session_id: str) -> Path | None:
        store = self.store
        if isinstance(store, MemoryFileStore):
            return store.transcript_path(session, source_id=self.source_id, session_id=session_id)
        return store.get_transcripts_directory(session, source_id=self.source_id) / session_filename(
            session_id, ".jsonl"
        )

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        if state is None:
            return []
        session = AgentSession(session_id=session_id or "default")
        self.store.import_provider_state(session, state=state)
        path = self._transcript(session, session.session_id)
        if path is None or not path.is_file():
            return []
        text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        return [Message.from_dict(self.history_loads(line)) for line in text.splitlines() if line.strip()]

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if state is None or not messages:
            return
        session = AgentSession(session_id=session_id or "default")
        self.store.import_provider_state(session, state=state)
        kept: list[Message] = []
        for message in messages:
            filtered = self.history_message_filter(message) if self.history_message_filter else message
            if filtered is not None:
                kept.append(cast("Message", filtered))
        path = self._transcript(session, session.session_id)
        if not kept or path is None:
            return
        lines = "".join(self._line(m) + "\n" for m in kept)

        def append() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(lines)

        await asyncio.to_thread(append)

    # -- the run -------------------------------------------------------------------------------------------
    def _select(self, entries: Sequence[MemoryIndexEntry], inputs: Sequence[Message]) -> list[MemoryIndexEntry]:
        if self.selection_limit == 0 or not entries:
            return []
        words = {w.group(0).lower() for m in inputs for w in _WORD.finditer(m.text)}
        if not words:
            return []

        def score(entry: MemoryIndexEntry) -> int:
            return len({w.group(0).lower() for w in _WORD.finditer(f"{entry.topic} {entry.summary}")} & words)

        ranked = sorted(entries, key=lambda e: (-score(e), e.topic.lower()))
        return [e for e in ranked[: self.selection_limit] if score(e) > 0]

    def tools(self, session: AgentSession, agent: Any = None) -> list[FunctionTool]:
        """The six memory tools working on ``session``'s owner."""
        source = self.source_id

        @tool(name="list_memory_topics")
        def list_memory_topics() -> str:
            """List the topic pointers in MEMORY.md."""
            return json.dumps([e.to_dict() for e in self._index(session)], ensure_ascii=False)

        @tool(name="read_memory_topic")
        def read_memory_topic(topic: str) -> str:
            """Read one topic memory file by topic name or slug."""
            return self.store.get_topic(session, source_id=source, topic=_normalize(topic, "topic")).to_markdown()

        @tool(name="write_memory")
        async def write_memory(topic: str, memory: str) -> str:
            """Add one durable memory line to a topic file."""
            record = await self.merge_memory(session, topic, memory)
            self._index(session)
            return json.dumps(record.to_dict(), ensure_ascii=False)

        @tool(name="delete_memory_topic")
        async def delete_memory_topic(topic: str) -> str:
            """Delete one topic memory file by topic name or slug."""
            name = _normalize(topic, "topic")
            async with self._lock(session, f"topic:{_slug(name)}"):
                self.store.delete_topic(session, source_id=source, topic=name)
                self._index(session)
            return f"Deleted memory topic '{name}'."

        @tool(name="search_memory_transcripts")
        def search_memory_transcripts(query: str, session_id: str | None = None, limit: int = 20) -> str:
            """Search the raw transcript archive for messages containing the query."""
            found = self.store.search_transcripts(
                session,
                source_id=source,
                query=query,
                session_id=session_id,
                limit=max(1, min(limit, 100)),
                loads=self.history_loads,
            )
            return json.dumps(found, ensure_ascii=False)

        @tool(name="consolidate_memories")
        async def consolidate_memories() -> str:
            """Consolidate every topic file now (only when the user asks to clean up memory)."""
            count = await self.consolidate(session, client=self.consolidation_client or getattr(agent, "client", None))
            return json.dumps({"consolidated_topics": count})

        return [
            list_memory_topics,
            read_memory_topic,
            write_memory,
            delete_memory_topic,
            search_memory_transcripts,
            consolidate_memories,
        ]

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        if session is None:
            raise SessionError("MemoryContextProvider keeps memory per owner and needs a session: pass session=...")
        state.clear()
        state.update(self.store.export_provider_state(session))
        entries = self._index(session)
        index_text = self.store.get_index_text(
            session,
            source_id=self.source_id,
            line_limit=self.index_line_limit,
            line_length=self.index_line_length,
            index_entries=entries,
        )
        recent = _turn_messages(
            await self.get_messages(context.session_id, state=state), self.recent_turns, self.load_tool_turns
        )
        loaded: list[str] = []
        origins: list[str] = []
        for entry in self._select(entries, context.input_messages):
            try:
                record = self.store.get_topic(session, source_id=self.source_id, topic=entry.slug)
            except FileNotFoundError:
                continue
            loaded.append(f"### topics/{record.slug}.md\n{record.to_markdown()}")
            origins.extend(record.session_ids)
        context.extend_tools(self.source_id, self.tools(session, agent))
        context.extend_instructions(
            self.source_id,
            [
                "Use MEMORY.md as the always-loaded table of contents for durable memory.",
                "Use the loaded topic files when they are relevant, but do not assume every topic file was loaded.",
                "Use write_memory to save durable facts, decisions, or preferences into a topic file.",
                "Use read_memory_topic to inspect or correct a specific topic file before editing it.",
                "Use search_memory_transcripts only when raw historical detail is necessary.",
                "Use consolidate_memories only when the user explicitly asks to rebuild or clean up memory.",
            ],
        )
        if recent:
            context.extend_messages(self.source_id, recent)
        body = "\n\n".join(loaded) or "- none auto-loaded for this turn"
        context.extend_messages(
            self.source_id,
            [
                Message(
                    "user",
                    [f"{self.context_prompt}\n\n### MEMORY.md\n{index_text}\n\n### Auto-loaded topic files\n{body}"],
                )
            ],
            # The sessions (other than this one) whose memories the loaded topics carry.
            origin_session_ids=[s for s in origins if s and s != context.session_id],
        )

    async def after_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        if session is None:
            return
        state.clear()
        state.update(self.store.export_provider_state(session))
        kept = [*context.input_messages, *(context.response.messages if context.response is not None else [])]
        await self.save_messages(session.session_id, kept, state=state)
        async with self._lock(session, "state"):
            maintenance = self.store.read_state(session, source_id=self.source_id)
            seen = cast("list[str]", maintenance["sessions_since_consolidation"])
            if session.session_id not in seen:
                seen.append(session.session_id)
            self.store.write_state(session, maintenance, source_id=self.source_id)
        if await self.extract_memories(session, context, client=getattr(agent, "client", None)):
            self._index(session)
        if self._due(self.store.read_state(session, source_id=self.source_id)):
            await self.consolidate(session, client=self.consolidation_client or getattr(agent, "client", None))

    # -- memory work ---------------------------------------------------------------------------------------
    async def merge_memory(self, session: AgentSession, topic: str, memory: str) -> MemoryTopicRecord:
        """Add ``memory`` to ``topic`` (made if new); the updated record."""
        name, text = _normalize(topic, "topic"), _normalize(memory, "memory")
        async with self._lock(session, f"topic:{_slug(name)}"):
            try:
                old = self.store.get_topic(session, source_id=self.source_id, topic=name)
            except FileNotFoundError:
                record = MemoryTopicRecord(
                    topic=name, summary=text, memories=[text], updated_at=_stamp(), session_ids=[session.session_id]
                )
            else:
                record = MemoryTopicRecord(
                    topic=old.topic,
                    slug=old.slug,
                    summary=old.summary,
                    memories=[*old.memories, text],
                    updated_at=_stamp(),
                    session_ids=[*old.session_ids, session.session_id],
                )
            self.store.write_topic(session, record, source_id=self.source_id)
            return record

    async def _ask(self, client: Any, system: str, user: str) -> Any:
        """The model's JSON answer, or ``None`` (logged) when it fails or is not JSON: memory never fails a run."""
        try:
            response = await client.get_response([Message("system", [system]), Message("user", [user])])
        except (AgentnbError, OSError, TimeoutError) as e:
            logger.warning("Memory model call failed; skipped: %s", e)
            return None
        text = str(response.text or "").strip()
        try:
            return json.loads(_json_text(text)) if text else None
        except ValueError as e:
            logger.warning("Memory model reply is not JSON; skipped: %s", e)
            return None

    async def extract_memories(
        self, session: AgentSession, context: SessionContext, *, client: Any
    ) -> list[MemoryTopicRecord]:
        """Ask ``client`` for durable facts in this run's turn and merge them into topics."""
        if client is None or self.max_extractions == 0 or context.response is None or not context.response.messages:
            return []
        delta = _for_memory_model([*context.input_messages, *context.response.messages])
        if not delta:
            return []
        payload = await self._ask(client, self.extraction_prompt, delta)
        items: object = (
            cast("Mapping[str, object]", payload).get("memories") if isinstance(payload, Mapping) else payload
        )
        if not isinstance(items, list):
            return []
        updated: list[MemoryTopicRecord] = []
        for item in cast("list[object]", items)[: self.max_extractions]:
            if not isinstance(item, Mapping):
                continue
            pair = cast("Mapping[str, object]", item)
            topic, memory = pair.get("topic"), pair.get("memory")
            if isinstance(topic, str) and isinstance(memory, str):
                try:
                    updated.append(await self.merge_memory(session, topic, memory))
                except ValueError:
                    continue
        return updated

    def _due(self, state: Mapping[str, Any]) -> bool:
        sessions = state.get("sessions_since_consolidation")
        if not isinstance(sessions, list) or len(cast("list[object]", sessions)) < self.consolidation_min_sessions:
            return False
        last = state.get("last_consolidated_at")
        if last is None:
            return True
        try:
            when = datetime.fromisoformat(str(last))
        except ValueError:
            return True
        when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
        return _now() - when >= self.consolidation_interval

    async def consolidate(self, session: AgentSession, *, client: Any) -> int:
        """Tighten every topic with ``client`` (or just dedupe, without one); how many topics changed."""
        done = 0
        for record in self.store.list_topics(session, source_id=self.source_id):
            async with self._lock(session, f"topic:{record.slug}"):
                merged = MemoryTopicRecord(
                    topic=record.topic,
                    slug=record.slug,
                    summary=record.summary,
                    memories=record.memories,
                    updated_at=_stamp(),
                    session_ids=record.session_ids,
                )
                if client is not None:
                    payload = await self._ask(client, self.consolidation_prompt, json.dumps(record.to_dict()))
                    if not isinstance(payload, Mapping):
                        continue
                    data = cast("Mapping[str, object]", payload)
                    summary, memories = data.get("summary"), data.get("memories")
                    if not isinstance(summary, str) or not isinstance(memories, list):
                        continue
                    merged.summary = _summary(summary, [])
                    merged.memories = _dedupe([m for m in cast("list[object]", memories) if isinstance(m, str)])
                self.store.write_topic(session, merged, source_id=self.source_id)
                done += 1
        if done:
            async with self._lock(session, "state"):
                state = self.store.read_state(session, source_id=self.source_id)
                state.update(last_consolidated_at=_stamp(), sessions_since_consolidation=[])
                self.store.write_state(session, state, source_id=self.source_id)
            self._index(session)
        return done

    def __repr__(self) -> str:
        return f"MemoryContextProvider(store={type(self.store).__name__}, source_id={self.source_id!r})"
