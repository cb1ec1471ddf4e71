"""Consolidating memory: per-owner topic files behind an index, extracted and consolidated by the model."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, AgentSession
from agentnb.exceptions import SessionError
from agentnb.harness import (
    MemoryContextProvider,
    MemoryFileStore,
    MemoryIndexEntry,
    MemoryTopicRecord,
)
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call


def _extracted(*items: tuple[str, str]) -> str:
    return json.dumps({"memories": [{"topic": t, "memory": m} for t, m in items]})


def _provider(tmp_path: Path, **kwargs: Any) -> MemoryContextProvider:
    return MemoryContextProvider(store=MemoryFileStore(tmp_path, owner_state_key="user_id"), **kwargs)


async def test_facts_are_extracted_per_owner_and_shown_to_later_sessions(tmp_path: Path) -> None:
    memory = _provider(tmp_path)
    client = ScriptedChatClient(
        [
            "Noted, tea it is.",
            _extracted(("Drinks", "The user prefers green tea."), ("Diet", "The user is vegetarian.")),
            "Green tea, of course.",
            _extracted(),
            "I don't know you yet.",
            _extracted(),
        ]
    )
    agent = Agent(client, context_providers=[memory])
    first = AgentSession(state={"user_id": "ada"})
    await agent.run("I love green tea and I'm vegetarian.", session=first)
    second = AgentSession(state={"user_id": "ada"})
    await agent.run("What drinks do I like?", session=second)
    seen = "\n".join(m.text for m in client.calls[2])
    assert "- [Drinks](topics/drinks.md): The user prefers green tea." in seen  # the index
    assert "### topics/drinks.md" in seen and "### topics/diet.md" not in seen  # only the topic the input names
    stranger = AgentSession(state={"user_id": "bob"})
    await agent.run("What drinks do I like?", session=stranger)
    assert "green tea" not in "\n".join(m.text for m in client.calls[4])
    topics = memory.store.list_topics(first, source_id="memory")
    assert [(t.topic, t.memories, t.session_ids) for t in topics] == [
        ("Diet", ["The user is vegetarian."], [first.session_id]),
        ("Drinks", ["The user prefers green tea."], [first.session_id]),
    ]
    client.assert_all_used()


async def test_transcripts_are_kept_searchable_and_recent_turns_come_back(tmp_path: Path) -> None:
    memory = _provider(tmp_path, recent_turns=1, max_extractions=0)
    client = ScriptedChatClient(["Paris is lovely.", "You asked about Paris."])
    agent = Agent(client, context_providers=[memory])
    session = AgentSession(state={"user_id": "ada"})
    await agent.run("Tell me about Paris.", session=session)
    await agent.run("What did I ask?", session=session)
    assert [m.text for m in client.calls[1][1:3]] == ["Tell me about Paris.", "Paris is lovely."]  # after the system
    search = {t.name: t for t in memory.tools(session)}["search_memory_transcripts"]
    found = json.loads(await search.invoke(arguments={"query": "PARIS"}, skip_parsing=True))
    assert [(f["role"], f["text"]) for f in found][:2] == [
        ("user", "Tell me about Paris."),
        ("assistant", "Paris is lovely."),
    ]
    assert found[0]["session_id"] == session.session_id


async def test_the_tools_write_read_list_delete_and_consolidate(tmp_path: Path) -> None:
    memory = _provider(tmp_path)
    session = AgentSession(state={"user_id": "ada"})
    tools = {t.name: t for t in memory.tools(session)}
    await tools["write_memory"].invoke(
        arguments={"topic": "Travel  plans", "memory": "Going to Oslo in May."}, skip_parsing=True
    )
    await tools["write_memory"].invoke(
        arguments={"topic": "travel plans", "memory": "going to oslo in may."}, skip_parsing=True
    )
    await tools["write_memory"].invoke(
        arguments={"topic": "Travel plans", "memory": "# Not a heading"}, skip_parsing=True
    )
    text = await tools["read_memory_topic"].invoke(arguments={"topic": "travel-plans"}, skip_parsing=True)
    memories = text.split("## Memories\n")[1]
    assert memories.lower().count("oslo") == 1  # duplicates (by case) are merged
    assert "- \\# Not a heading" in text  # a memory cannot pose as a section
    assert MemoryTopicRecord.from_markdown(text).memories == ["Going to Oslo in May.", "# Not a heading"]
    listed = json.loads(await tools["list_memory_topics"].invoke(arguments={}, skip_parsing=True))
    assert [e["slug"] for e in listed] == ["travel-plans"]
    judge = ScriptedChatClient([json.dumps({"summary": "Oslo trip.", "memories": ["Oslo, May."]})])
    assert await memory.consolidate(session, client=judge) == 1
    assert memory.store.get_topic(session, source_id="memory", topic="travel plans").memories == ["Oslo, May."]
    index = (memory.store._root_for(session, "memory") / "MEMORY.md").read_text()  # type: ignore[attr-defined]
    assert "- [Travel plans](topics/travel-plans.md): Oslo trip." in index
    await tools["delete_memory_topic"].invoke(arguments={"topic": "Travel plans"}, skip_parsing=True)
    assert memory.store.list_topics(session, source_id="memory") == []


async def test_bad_model_replies_are_skipped_and_never_fail_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    memory = _provider(tmp_path)
    client = ScriptedChatClient(["Sure.", "not json at all", "Again.", json.dumps({"memories": "nope"})])
    agent = Agent(client, context_providers=[memory])
    session = AgentSession(state={"user_id": "ada"})
    with caplog.at_level(logging.WARNING, logger="agentnb.harness"):
        assert (await agent.run("Hi", session=session)).text == "Sure."
        assert (await agent.run("Hi again", session=session)).text == "Again."
    assert "not JSON" in caplog.text
    assert memory.store.list_topics(session, source_id="memory") == []


async def test_consolidation_runs_after_enough_sessions(tmp_path: Path) -> None:
    memory = _provider(tmp_path, consolidation_min_sessions=2, consolidation_interval=timedelta(0))
    client = ScriptedChatClient(
        [
            "a",
            _extracted(("Pets", "Has a dog.")),
            "b",
            _extracted(("Pets", "Has a dog named Rex.")),
            json.dumps({"summary": "A dog, Rex.", "memories": ["Has a dog named Rex."]}),
        ]
    )
    agent = Agent(client, context_providers=[memory])
    for _ in range(2):
        await agent.run("About my pet", session=AgentSession(state={"user_id": "ada"}))
    record = memory.store.get_topic(AgentSession(state={"user_id": "ada"}), source_id="memory", topic="pets")
    assert record.memories == ["Has a dog named Rex."] and record.summary == "A dog, Rex."
    state = memory.store.read_state(AgentSession(state={"user_id": "ada"}), source_id="memory")
    assert state["sessions_since_consolidation"] == [] and state["last_consolidated_at"] is not None
    client.assert_all_used()


async def test_owners_are_required_and_cannot_steer_paths(tmp_path: Path) -> None:
    memory = _provider(tmp_path / "mem")
    agent = Agent(ScriptedChatClient(["x"]), context_providers=[memory])
    with pytest.raises(SessionError, match="user_id"):
        await agent.run("Hi", session=AgentSession())
    evil = AgentSession(state={"user_id": "../../etc"})
    with pytest.raises(ValueError, match="path traversal"):
        await {t.name: t for t in memory.tools(evil)}["write_memory"].invoke(
            arguments={"topic": "x", "memory": "y"}, skip_parsing=True
        )
    assert not list(tmp_path.rglob("*.md"))
    slashed = AgentSession(state={"user_id": "team/alice"})  # a separator alone is encoded, not followed
    await {t.name: t for t in memory.tools(slashed)}["write_memory"].invoke(
        arguments={"topic": "x", "memory": "y"}, skip_parsing=True
    )
    written = list(tmp_path.rglob("*.md"))
    assert written and all(p.resolve().is_relative_to((tmp_path / "mem").resolve()) for p in written)
    with pytest.raises(ValueError, match="plain path segment"):
        MemoryFileStore(tmp_path, owner_state_key="u", kind="../x")


def test_records_and_entries_round_trip() -> None:
    record = MemoryTopicRecord(topic=" Food ", summary="", memories=["Likes soup.", "likes soup."], updated_at="t")
    assert record.slug == "food" and record.memories == ["Likes soup."] and record.summary == "Likes soup."
    assert MemoryTopicRecord.from_dict(record.to_dict()) == record
    entry = MemoryIndexEntry.from_topic_record(record)
    assert MemoryIndexEntry.from_dict(entry.to_dict()) == entry
    assert entry.to_pointer_line(max_length=20) == "- [Food](topics/f..."


async def test_the_snapshot_shows_an_owners_topics_escaped(tmp_path: Path) -> None:
    from agentnb.harness import harness_snapshot

    memory = _provider(tmp_path)
    agent = Agent(ScriptedChatClient([]), context_providers=[memory])
    session = AgentSession(state={"user_id": "ada"})
    await memory.merge_memory(session, "Food <b>", "Likes <script>soup</script>.")
    snap = await harness_snapshot(agent, session)
    assert snap.topics is not None and snap.topics[0].memories == ["Likes <script>soup</script>."]
    html = snap.to_html()
    assert "Durable memory" in html and "&lt;script&gt;soup" in html and "<script>" not in html
    assert (await harness_snapshot(agent, AgentSession())).topics == []  # no owner yet: nothing, no error


def _memory_message(messages: list[Any]) -> Any:
    return next(m for m in messages if "### MEMORY.md" in m.text)


async def test_memories_from_other_sessions_name_the_sessions_they_came_from(tmp_path: Path) -> None:
    memory = _provider(tmp_path)
    client = ScriptedChatClient(
        [
            "Noted.",
            _extracted(("Drinks", "The user prefers green tea.")),
            "Green tea.",
            _extracted(("Drinks", "The user also likes mint tea.")),
            "Green or mint tea.",
            _extracted(),
        ]
    )
    agent = Agent(client, context_providers=[memory])
    first, second = AgentSession(state={"user_id": "ada"}), AgentSession(state={"user_id": "ada"})
    await agent.run("I love green tea.", session=first)
    # Nothing remembered yet: the memory message is attributed to its provider, with no other session as origin.
    assert _memory_message(client.calls[0]).additional_properties["_attribution"] == {"source_id": "memory"}
    await agent.run("Which drinks do I like?", session=second)
    attribution = _memory_message(client.calls[2]).additional_properties["_attribution"]
    assert attribution == {"source_id": "memory", "origin_session_ids": [first.session_id]}
    await agent.run("Which drinks do I like?", session=first)
    # Back in the first session the topic carries both sessions' memories: only the other one is an origin.
    assert _memory_message(client.calls[4]).additional_properties["_attribution"]["origin_session_ids"] == [
        second.session_id
    ]
    client.assert_all_used()


async def test_transcripts_use_the_given_line_format(tmp_path: Path) -> None:
    memory = _provider(
        tmp_path,
        recent_turns=1,
        max_extractions=0,
        history_dumps=lambda data: "v1 " + json.dumps(data),
        history_loads=lambda line: json.loads(line.removeprefix("v1 ")),
    )
    client = ScriptedChatClient(["Paris is lovely.", "You asked about Paris."])
    agent = Agent(client, context_providers=[memory])
    session = AgentSession(state={"user_id": "ada"})
    await agent.run("Tell me about Paris.", session=session)
    (transcript,) = memory.store.get_transcripts_directory(session, source_id="memory").glob("*.jsonl")
    lines = transcript.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(line.startswith("v1 {") for line in lines)
    await agent.run("What did I ask?", session=session)
    assert [m.text for m in client.calls[1][1:3]] == ["Tell me about Paris.", "Paris is lovely."]  # read back
    search = {t.name: t for t in memory.tools(session)}["search_memory_transcripts"]
    assert (
        json.loads(await search.invoke(arguments={"query": "lovely"}, skip_parsing=True))[0]["text"]
        == "Paris is lovely."
    )

    broken = _provider(tmp_path, max_extractions=0, history_dumps=lambda data: json.dumps(data, indent=1))
    with pytest.raises(ValueError, match="one line"):
        await Agent(ScriptedChatClient(["Hi."]), context_providers=[broken]).run(
            "Hello", session=AgentSession(state={"user_id": "bob"})
        )


async def test_transcripts_are_file_history_files_and_state_uses_the_stores_json(tmp_path: Path) -> None:
    from agentnb import FileHistoryProvider, Message

    dumped: list[object] = []

    def dumps(value: object) -> str:
        dumped.append(value)
        return json.dumps(value, sort_keys=True)

    store = MemoryFileStore(tmp_path, owner_state_key="user_id", dumps=dumps, loads=json.loads)
    session = AgentSession(session_id="Session-1", state={"user_id": "ada"})
    store.write_state(session, {"last_consolidated_at": None, "sessions_since_consolidation": ["s"]}, source_id="m")
    assert dumped and store.read_state(session, source_id="m")["sessions_since_consolidation"] == ["s"]
    # A FileHistoryProvider over the transcripts folder writes the files the store searches.
    history = FileHistoryProvider(store.get_transcripts_directory(session, source_id="m"))
    await history.save_messages("Session-1", [Message("user", ["I prefer aisle seats."])])
    assert store.transcript_path(session, source_id="m", session_id="Session-1") == history.path_for("Session-1")
    hit = {"session_id": "Session-1", "line_number": 1, "role": "user", "text": "I prefer aisle seats."}
    assert store.search_transcripts(session, source_id="m", query="AISLE") == [hit]
    assert store.search_transcripts(session, source_id="m", query="aisle", session_id="other") == []
