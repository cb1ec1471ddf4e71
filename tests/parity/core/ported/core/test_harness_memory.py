# Copyright (c) Microsoft. All rights reserved.

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from agentnb import DEFAULT_MEMORY_SOURCE_ID, Agent, AgentSession, ChatOptions, ChatResponse, Content, ExperimentalFeature, FileHistoryProvider, MemoryContextProvider, MemoryFileStore, MemoryIndexEntry, MemoryStore, MemoryTopicRecord, Message


def _no_store_options() -> ChatOptions:
    return {"store": False}


def _tool_by_name(tools: list[object], name: str) -> object:
    """Return the tool with the requested name from a prepared tool list."""
    for tool in tools:
        if getattr(tool, "name", None) == name:
            return tool
    raise AssertionError(f"Tool {name!r} was not found.")


class _MemoryHarnessClient:
    """Deterministic chat client used by the memory harness tests."""

    additional_properties: dict[str, Any]

    def __init__(
        self,
        *,
        extraction_payload: dict[str, Any] | None = None,
        consolidation_payload: dict[str, Any] | None = None,
        default_text: str = "Assistant reply.",
    ) -> None:
        self.additional_properties = {}
        self.extraction_payload = extraction_payload or {
            "memories": [
                {
                    "topic": "preferences",
                    "memory": "Prefers concise answers.",
                }
            ]
        }
        self.consolidation_payload = consolidation_payload or {
            "summary": "Prefers concise answers.",
            "memories": ["Prefers concise answers."],
        }
        self.default_text = default_text
        self.calls: list[str] = []

    async def get_response(
        self,
        messages: Sequence[Message],
        *,
        stream: bool = False,
        options: Mapping[str, Any] | None = None,
        compaction_strategy: object | None = None,
        tokenizer: object | None = None,
        function_invocation_kwargs: Mapping[str, Any] | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
    ) -> ChatResponse[Any]:
        del options, compaction_strategy, tokenizer, function_invocation_kwargs, client_kwargs
        assert not stream
        system_text = messages[0].text if messages and messages[0].role == "system" else ""
        if "extract durable memory candidates" in system_text.lower():
            self.calls.append("extract")
            return ChatResponse(messages=[Message(role="assistant", contents=[json.dumps(self.extraction_payload)])])
        if "consolidate one topic memory file" in system_text.lower():
            self.calls.append("consolidate")
            return ChatResponse(messages=[Message(role="assistant", contents=[json.dumps(self.consolidation_payload)])])
        self.calls.append("agent")
        return ChatResponse(messages=[Message(role="assistant", contents=[self.default_text])])


def test_memory_index_entry_round_trips_and_trims_pointer_lines() -> None:
    """Memory index entries should preserve value equality and trim pointer lines."""
    raw_entry = {
        "topic": "Architecture Decisions",
        "slug": "architecture-decisions",
        "summary": (
            "PostgreSQL was chosen because it keeps the relational model while supporting flexible JSONB fields."
        ),
        "updated_at": "2026-04-21T10:00:00+00:00",
    }

    entry = MemoryIndexEntry.from_dict(raw_entry)

    assert entry == MemoryIndexEntry(**raw_entry)
    assert entry.to_dict() == raw_entry
    assert len(entry.to_pointer_line(max_length=80)) <= 80
    assert "MemoryIndexEntry(" in repr(entry)


def test_memory_topic_record_round_trips_through_dict_and_markdown() -> None:
    """Topic memory records should preserve their structured content and markdown form."""
    raw_record = {
        "topic": "preferences",
        "slug": "preferences",
        "summary": "Prefers concise answers.",
        "memories": ["Prefers concise answers.", "Prefers aisle seats."],
        "updated_at": "2026-04-21T10:05:00+00:00",
        "session_ids": ["session-1", "session-2"],
    }

    record = MemoryTopicRecord.from_dict(raw_record)
    reparsed_record = MemoryTopicRecord.from_markdown(record.to_markdown())

    assert record == MemoryTopicRecord(**raw_record)  # type: ignore[arg-type]
    assert record.to_dict() == raw_record
    assert reparsed_record == record
    assert "MemoryTopicRecord(" in repr(record)


async def test_memory_file_store_writes_topics_index_state_and_transcripts(tmp_path) -> None:
    """The file-backed memory store should manage topics, ``MEMORY.md``, state, and transcript search."""
    store = MemoryFileStore(
        tmp_path,
        kind="memories",
        owner_prefix="user_",
        owner_state_key="owner_id",
        dumps=lambda value: json.dumps(value, separators=(",", ":"), sort_keys=True),
        loads=json.loads,
    )
    session = AgentSession(session_id="session-1")
    session.state["owner_id"] = "alice"
    updated_at = datetime(2026, 4, 21, tzinfo=timezone.utc).replace(microsecond=0).isoformat()

    preferences_record = MemoryTopicRecord(
        topic="preferences",
        summary="Prefers concise answers.",
        memories=["Prefers concise answers.", "Prefers aisle seats."],
        updated_at=updated_at,
        session_ids=["session-1"],
    )
    travel_record = MemoryTopicRecord(
        topic="travel",
        summary="Planning a Norway trip.",
        memories=["Visit Oslo in June."],
        updated_at=updated_at,
        session_ids=["session-1"],
    )

    store.write_topic(session, preferences_record, source_id=DEFAULT_MEMORY_SOURCE_ID)
    store.write_topic(session, travel_record, source_id=DEFAULT_MEMORY_SOURCE_ID)
    entries = store.rebuild_index(
        session,
        source_id=DEFAULT_MEMORY_SOURCE_ID,
        line_limit=200,
        line_length=150,
    )

    assert [entry.topic for entry in entries] == ["preferences", "travel"]
    assert "preferences" in store.get_index_text(
        session,
        source_id=DEFAULT_MEMORY_SOURCE_ID,
        line_limit=200,
        line_length=150,
    )

    assert store.read_state(session, source_id=DEFAULT_MEMORY_SOURCE_ID) == {
        "last_consolidated_at": None,
        "sessions_since_consolidation": [],
    }
    store.write_state(
        session,
        {
            "last_consolidated_at": updated_at,
            "sessions_since_consolidation": ["session-1"],
        },
        source_id=DEFAULT_MEMORY_SOURCE_ID,
    )
    assert store.read_state(
        session,
        source_id=DEFAULT_MEMORY_SOURCE_ID,
    )["sessions_since_consolidation"] == ["session-1"]

    history_provider = FileHistoryProvider(store.get_transcripts_directory(session, source_id=DEFAULT_MEMORY_SOURCE_ID))
    await history_provider.save_messages(
        session.session_id,
        [
            Message(role="user", contents=["I prefer aisle seats."]),
            Message(role="assistant", contents=["Recorded."]),
        ],
    )

    assert store.search_transcripts(session, source_id=DEFAULT_MEMORY_SOURCE_ID, query="aisle") == [
        {
            "session_id": "session-1",
            "line_number": 1,
            "role": "user",
            "text": "I prefer aisle seats.",
        }
    ]


def test_memory_file_store_rejects_owner_path_traversal(tmp_path) -> None:
    """Owner IDs with path traversal segments should not escape ``base_path``."""
    session = AgentSession(session_id="session-1")
    session.state["owner_id"] = "../escape"
    store = MemoryFileStore(tmp_path, owner_state_key="owner_id")
    record = MemoryTopicRecord(
        topic="preferences",
        summary="Prefers concise answers.",
        memories=["Prefers concise answers."],
        updated_at=datetime(2026, 4, 21, tzinfo=timezone.utc).replace(microsecond=0).isoformat(),
    )

    with pytest.raises(ValueError, match="path traversal"):
        store.write_topic(session, record, source_id=DEFAULT_MEMORY_SOURCE_ID)

    assert not (tmp_path.parent / "escape").exists()


async def test_memory_file_store_namespaces_topics_state_and_transcripts_by_source_id(tmp_path) -> None:
    """Providers sharing one file store should not collide when they use different source IDs."""
    session = AgentSession(session_id="session-1")
    session.state["owner_id"] = "alice"
    store = MemoryFileStore(
        tmp_path,
        owner_state_key="owner_id",
        dumps=lambda value: json.dumps(value, separators=(",", ":"), sort_keys=True),
        loads=json.loads,
    )
    updated_at = datetime(2026, 4, 21, tzinfo=timezone.utc).replace(microsecond=0).isoformat()

    store.write_topic(
        session,
        MemoryTopicRecord(
            topic="preferences",
            summary="Source A summary.",
            memories=["Source A memory."],
            updated_at=updated_at,
        ),
        source_id="source-a",
    )
    store.write_topic(
        session,
        MemoryTopicRecord(
            topic="preferences",
            summary="Source B summary.",
            memories=["Source B memory."],
            updated_at=updated_at,
        ),
        source_id="source-b",
    )
    store.write_state(
        session, {"last_consolidated_at": updated_at, "sessions_since_consolidation": ["a"]}, source_id="source-a"
    )
    store.write_state(
        session, {"last_consolidated_at": None, "sessions_since_consolidation": ["b"]}, source_id="source-b"
    )

    await FileHistoryProvider(store.get_transcripts_directory(session, source_id="source-a")).save_messages(
        "session-1", [Message(role="user", contents=["Source A transcript."])]
    )
    await FileHistoryProvider(store.get_transcripts_directory(session, source_id="source-b")).save_messages(
        "session-1", [Message(role="user", contents=["Source B transcript."])]
    )

    assert store.get_topic(session, source_id="source-a", topic="preferences").memories == ["Source A memory."]
    assert store.get_topic(session, source_id="source-b", topic="preferences").memories == ["Source B memory."]
    assert store.read_state(session, source_id="source-a")["sessions_since_consolidation"] == ["a"]
    assert store.read_state(session, source_id="source-b")["sessions_since_consolidation"] == ["b"]
    assert (
        store.search_transcripts(session, source_id="source-a", query="transcript")[0]["text"] == "Source A transcript."
    )
    assert (
        store.search_transcripts(session, source_id="source-b", query="transcript")[0]["text"] == "Source B transcript."
    )


















def test_memory_harness_classes_are_marked_experimental() -> None:
    """Memory harness public classes should expose HARNESS experimental metadata."""
    assert MemoryIndexEntry.__feature_id__ == ExperimentalFeature.HARNESS.value  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert MemoryTopicRecord.__feature_id__ == ExperimentalFeature.HARNESS.value  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert MemoryStore.__feature_id__ == ExperimentalFeature.HARNESS.value  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert MemoryFileStore.__feature_id__ == ExperimentalFeature.HARNESS.value  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert MemoryContextProvider.__feature_id__ == ExperimentalFeature.HARNESS.value  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
    assert ".. warning:: Experimental" in MemoryContextProvider.__doc__  # type: ignore[operator]  # pyrefly: ignore[not-iterable]  # ty: ignore[unsupported-operator]


def test_memory_topic_record_round_trips_when_text_contains_section_markers() -> None:
    """Embedded ``## Summary``/``## Memories`` markers must not be re-interpreted as headings."""
    record = MemoryTopicRecord(
        topic="weird",
        summary="Multi line summary.\n## Summary\nstill summary",
        memories=[
            "## Memories pretend",
            "Real memory.",
            "  ## Memories nested",
        ],
        updated_at="2026-04-21T10:00:00+00:00",
        session_ids=["session-1"],
    )

    reparsed = MemoryTopicRecord.from_markdown(record.to_markdown())

    assert reparsed.summary == record.summary
    assert reparsed.memories == record.memories




async def test_memory_file_store_does_not_mkdir_on_pure_read_paths(tmp_path) -> None:
    """List/read calls on a never-written session should not create any directories."""
    store = MemoryFileStore(tmp_path, owner_state_key="owner_id")
    session = AgentSession(session_id="session-1")
    session.state["owner_id"] = "alice"

    assert store.list_topics(session, source_id=DEFAULT_MEMORY_SOURCE_ID) == []
    assert store.read_state(session, source_id=DEFAULT_MEMORY_SOURCE_ID) == {
        "last_consolidated_at": None,
        "sessions_since_consolidation": [],
    }
    assert store.search_transcripts(session, source_id=DEFAULT_MEMORY_SOURCE_ID, query="anything") == []

    # tmp_path itself was passed in by pytest so it exists; assert no children were created.
    assert list(tmp_path.iterdir()) == []


class _RaisingMemoryClient:
    """Chat client that raises a transient error for every consolidation request."""

    additional_properties: dict[str, Any]

    def __init__(self) -> None:
        from agentnb.exceptions import ChatClientException

        self.additional_properties = {}
        self.error_class = ChatClientException
        self.calls: list[str] = []

    async def get_response(
        self,
        messages: Sequence[Message],
        *,
        stream: bool = False,
        options: Mapping[str, Any] | None = None,
        compaction_strategy: object | None = None,
        tokenizer: object | None = None,
        function_invocation_kwargs: Mapping[str, Any] | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
    ) -> ChatResponse[Any]:
        del messages, stream, options, compaction_strategy, tokenizer
        del function_invocation_kwargs, client_kwargs
        self.calls.append("call")
        raise self.error_class("simulated transient failure")


class _ProgrammerErrorMemoryClient:
    """Chat client whose ``get_response`` raises a non-transient programmer error."""

    additional_properties: dict[str, Any]

    def __init__(self) -> None:
        self.additional_properties = {}

    async def get_response(self, *args: object, **kwargs: object) -> ChatResponse[Any]:
        del args, kwargs
        raise AttributeError("misconfigured client")






