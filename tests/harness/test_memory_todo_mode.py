"""File memory, todos and modes: tools a model calls, state the session keeps, context the next run sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentnb import Agent, AgentSession
from agentnb.harness import (
    AgentModeProvider,
    FileMemoryProvider,
    FileSystemAgentFileStore,
    InMemoryAgentFileStore,
    TodoFileStore,
    TodoItem,
    TodoProvider,
    get_agent_mode,
    set_agent_mode,
)
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call


# -- file memory -------------------------------------------------------------------------------------------
async def test_memories_are_per_session_indexed_and_shown_before_the_next_run(tmp_path: Path) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    memory = FileMemoryProvider(store)
    client = ScriptedChatClient(
        [
            call("file_memory_write", file_name="prefs.md", content="likes tea", description="User preferences"),
            "Noted.",
            "You like tea.",
            "Nothing yet.",
        ]
    )
    agent = Agent(client, context_providers=[memory])
    session = agent.create_session()
    await agent.run("I like tea.", session=session)
    folder = tmp_path / memory.working_folder(session.session_id)
    assert (folder / "prefs.md").read_text() == "likes tea"
    assert (folder / "prefs_description.md").read_text() == "User preferences"
    assert "- **prefs.md**: User preferences" in (folder / "memories.md").read_text()
    await agent.run("What do I like?", session=session)
    seen = "\n".join(m.text for m in client.calls[2])
    assert "memory index" in seen and "prefs.md" in seen
    other = agent.create_session()
    await agent.run("What do I like?", session=other)
    assert "prefs.md" not in "\n".join(m.text for m in client.calls[3])
    assert await memory.list_memories(session) == [
        {"name": "prefs.md", "type": "file", "description": "User preferences"}
    ]
    assert await memory.list_memories(other) == []


@pytest.mark.parametrize(
    "name", ["memories.md", "MEMORIES.MD", " Memories.md ", "prefs_description.md", "x_DESCRIPTION.md"]
)
async def test_the_index_and_sidecars_cannot_be_written_replaced_or_deleted(name: str) -> None:
    store = InMemoryAgentFileStore()
    memory = FileMemoryProvider(store, scope="u1")
    tools = {t.name: t for t in memory.tools("u1")}
    await tools["file_memory_write"].invoke(
        arguments={"file_name": "prefs.md", "content": "tea", "description": "d"}, skip_parsing=True
    )
    index_before = await store.read("u1/memories.md")
    for tool_name, args in (
        ("file_memory_write", {"file_name": name, "content": "pwned"}),
        ("file_memory_replace", {"file_name": name, "old_string": "Memory", "new_string": "pwned"}),
        ("file_memory_replace_lines", {"file_name": name, "edits": [{"line_number": 1, "new_line": "pwned"}]}),
        ("file_memory_delete", {"file_name": name}),
    ):
        assert "reserved" in await tools[tool_name].invoke(arguments=args, skip_parsing=True)
    assert await store.read("u1/memories.md") == index_before
    assert await store.read("u1/prefs_description.md") == "d"


async def test_internal_files_are_hidden_and_names_are_flat() -> None:
    store = InMemoryAgentFileStore()
    memory = FileMemoryProvider(store, scope="s")
    tools = {t.name: t for t in memory.tools("s")}
    await tools["file_memory_write"].invoke(
        arguments={"file_name": "plan.md", "content": "step one", "description": "the plan"}, skip_parsing=True
    )
    assert await tools["file_memory_ls"].invoke(arguments={}, skip_parsing=True) == [
        {"name": "plan.md", "type": "file", "description": "the plan"}
    ]
    grep = await tools["file_memory_grep"].invoke(arguments={"regex_pattern": "step|plan|memory"}, skip_parsing=True)
    assert [r["file_name"] for r in grep] == ["plan.md"]
    assert "flat" in await tools["file_memory_write"].invoke(
        arguments={"file_name": "a/b.md", "content": "x"}, skip_parsing=True
    )
    assert "Invalid path" in await tools["file_memory_write"].invoke(
        arguments={"file_name": "../x.md", "content": "x"}, skip_parsing=True
    )
    assert await memory.read_memory("s", "memories.md") is None
    await tools["file_memory_delete"].invoke(arguments={"file_name": "plan.md"}, skip_parsing=True)
    assert await store.read("s/plan_description.md") is None
    assert await store.read("s/memories.md") == "# Memory Index\n\n"


async def test_the_index_is_capped() -> None:
    memory = FileMemoryProvider(InMemoryAgentFileStore(), scope="s")
    write = {t.name: t for t in memory.tools("s")}["file_memory_write"]
    for i in range(55):
        await write.invoke(arguments={"file_name": f"m{i:02}.md", "content": "x"}, skip_parsing=True)
    index = await memory.store.read("s/memories.md")
    assert index is not None and index.count("- **") == 50


def test_a_session_id_cannot_steer_the_working_folder() -> None:
    memory = FileMemoryProvider(InMemoryAgentFileStore())
    assert memory.working_folder("../../etc") == "_.._etc"
    assert "/" not in memory.working_folder("a/b")


# -- todos ---------------------------------------------------------------------------------------------------
async def test_todos_are_added_completed_and_shown_and_survive_a_session_round_trip() -> None:
    todos = TodoProvider()
    client = ScriptedChatClient(
        [
            call("todos_add", todos=[{"title": "Load data"}, {"title": "Chart it", "description": "bar chart"}]),
            call("todos_complete", items=[{"id": 1, "reason": "loaded"}]),
            "Half done.",
            "Still charting.",
        ]
    )
    agent = Agent(client, context_providers=[todos])
    session = agent.create_session()
    await agent.run("Analyse sales.", session=session)
    assert await todos.get_items(session) == [
        TodoItem(1, "Load data", None, True),
        TodoItem(2, "Chart it", "bar chart", False),
    ]
    restored = AgentSession.from_dict(session.to_dict())
    assert [i.is_complete for i in await todos.get_items(restored)] == [True, False]
    await agent.run("Go on.", session=restored)
    shown = "\n".join(m.text for m in client.calls[3])
    assert "- 1 [done] Load data" in shown and "- 2 [open] Chart it: bar chart" in shown


async def test_todo_tools_refuse_empty_input_and_corrupt_state() -> None:
    todos = TodoProvider()
    session = AgentSession()
    tools = {t.name: t for t in todos.tools(session)}
    with pytest.raises(ValueError):
        await tools["todos_complete"].invoke(arguments={"items": [{"id": 1, "reason": " "}]}, skip_parsing=True)
    with pytest.raises(ValueError, match="non-empty title"):
        await todos.add_items(session, [{"title": "  "}])
    session.state["todo"] = {"items": [{"id": "x", "title": "t"}]}
    with pytest.raises(ValueError, match="integer"):
        await todos.get_items(session)


async def test_todo_file_store_keeps_one_file_per_session(tmp_path: Path) -> None:
    todos = TodoProvider(store=TodoFileStore(tmp_path))
    with pytest.raises(ValueError, match="path separators"):
        await todos.add_items(AgentSession(session_id="../escape"), ["one"])
    assert not list(tmp_path.rglob("*"))
    session = AgentSession(session_id="..")  # not a plain segment: encoded, never followed
    await todos.add_items(session, ["one"])
    files = [p.relative_to(tmp_path) for p in tmp_path.rglob("*.json")]
    assert len(files) == 1 and ".." not in files[0].parts
    again = TodoProvider(store=TodoFileStore(tmp_path))
    assert [i.title for i in await again.get_items(AgentSession(session_id=".."))] == ["one"]


async def test_todo_file_store_keeps_lists_per_owner(tmp_path: Path) -> None:
    from agentnb.exceptions import SessionOwnerError

    store = TodoFileStore(tmp_path, owner_prefix="user_", owner_state_key="owner_id")
    session = AgentSession(session_id="s1", state={"owner_id": "alice"})
    await store.save_state(session, [TodoItem(1, "Ship")], next_id=2, source_id="todo")
    assert (tmp_path / "user_alice" / "todos" / "s1" / "todos.todo.json").is_file()
    assert (await store.load_state(session, source_id="todo"))[1] == 2
    with pytest.raises(SessionOwnerError, match="owner_id"):
        await store.load_state(AgentSession(session_id="s2"), source_id="todo")
    assert TodoItem.from_json(TodoItem(1, "Ship").to_json()) == TodoItem(1, "Ship")


# -- modes ---------------------------------------------------------------------------------------------------
async def test_mode_switches_from_code_are_announced_once_and_model_switches_are_not() -> None:
    modes = AgentModeProvider()
    client = ScriptedChatClient(["planning", "executing", call("mode_set", mode="plan"), "back", "quiet"])
    agent = Agent(client, context_providers=[modes])
    session = agent.create_session()
    await agent.run("Hi", session=session)
    assert get_agent_mode(session) == "plan"
    assert "You are currently in the plan mode" in client.calls[0][0].text
    set_agent_mode(session, "EXECUTE")
    await agent.run("Go", session=session)
    assert 'switched from "plan" to "execute"' in "\n".join(m.text for m in client.calls[1])
    await agent.run("Plan again", session=session)
    assert modes.get_mode(session) == "plan"
    await agent.run("And?", session=session)
    assert "Mode changed" not in "\n".join(m.text for m in client.calls[4][-1:])


def test_modes_validate() -> None:
    with pytest.raises(ValueError, match="Invalid mode"):
        set_agent_mode(AgentSession(), "sleep")
    with pytest.raises(ValueError, match="Duplicate"):
        AgentModeProvider(mode_instructions={"a": "x", "A": "y"})
    with pytest.raises(ValueError, match="at least one"):
        AgentModeProvider(mode_instructions={})
    custom = AgentModeProvider(mode_instructions={"draft": "d", "review": "r"}, default_mode="Review")
    assert custom.get_mode(AgentSession()) == "review"
