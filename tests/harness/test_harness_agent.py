"""create_harness_agent: the reference's defaults, its experimental warnings, and the pieces working together."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, AgentSession, Message, ToolApprovalMiddleware
from agentnb.exceptions import FeatureNotAvailableError
from agentnb.harness import (
    AgentLoopMiddleware,
    AgentModeProvider,
    BackgroundAgentsProvider,
    ExperimentalWarning,
    FileAccessProvider,
    FileMemoryProvider,
    FileSystemAgentFileStore,
    InMemoryAgentFileStore,
    MessageInjectionMiddleware,
    TodoProvider,
    create_harness_agent,
    todos_remaining,
    todos_remaining_message,
)
from agentnb.harness import _agent as harness_agent
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_agent, "_warned", set())


def _kinds(agent: Agent[Any]) -> list[type]:
    return [type(p) for p in agent.context_providers]


def test_defaults_todo_mode_and_file_memory_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    agent = create_harness_agent(ScriptedChatClient([]))
    assert _kinds(agent)[1:] == [TodoProvider, AgentModeProvider, FileMemoryProvider]
    memory = agent.context_providers[3]
    assert isinstance(memory, FileMemoryProvider) and isinstance(memory.store, FileSystemAgentFileStore)
    assert memory.store.root_path == tmp_path / "agent-file-memory"
    assert not (tmp_path / "agent-file-memory").exists()  # nothing is written until a memory is
    assert [type(m) for m in agent.middleware] == [ToolApprovalMiddleware, MessageInjectionMiddleware]
    assert agent.instructions is not None and agent.instructions.startswith("You are a helpful AI assistant")
    assert agent.require_per_service_call_history_persistence


def test_optional_parts_and_their_single_warning_naming_the_parameter() -> None:
    helper = Agent(ScriptedChatClient([]), name="helper")
    with pytest.warns(ExperimentalWarning, match="'background_agents', 'file_access_store', 'loop_should_continue'"):
        agent = create_harness_agent(
            ScriptedChatClient([]),
            file_memory_store=InMemoryAgentFileStore(),
            file_access_store=InMemoryAgentFileStore(),
            background_agents=[helper],
            loop_should_continue=todos_remaining(),
            loop_next_message=todos_remaining_message,
            loop_max_iterations=4,
            agent_instructions="Focus on sales.",
            harness_instructions="",
        )
    assert FileAccessProvider in _kinds(agent) and BackgroundAgentsProvider in _kinds(agent)
    loop = agent.middleware[0]
    assert isinstance(loop, AgentLoopMiddleware) and loop.max_iterations == 4  # outermost, around approval
    assert isinstance(agent.middleware[1], ToolApprovalMiddleware)
    assert agent.instructions == "Focus on sales."
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_harness_agent(
            ScriptedChatClient([]), file_memory_store=InMemoryAgentFileStore(), background_agents=[helper]
        )


def test_disable_switches_and_extras() -> None:
    extra = TodoProvider(source_id="extra")
    agent = create_harness_agent(
        ScriptedChatClient([]),
        disable_todo=True,
        disable_mode=True,
        disable_file_memory=True,
        disable_tool_auto_approval=True,
        context_providers=[extra],
        default_options={"temperature": 0},
        max_output_tokens=500,
    )
    assert agent.context_providers[1:] == [extra]
    assert [type(m) for m in agent.middleware] == [MessageInjectionMiddleware]
    assert agent.default_options == {"temperature": 0, "max_tokens": 500}


def test_budgets_are_checked() -> None:
    client = ScriptedChatClient([])
    with pytest.raises(ValueError, match="max_output_tokens"):
        create_harness_agent(client, max_context_window_tokens=100, max_output_tokens=100)
    with pytest.raises(ValueError, match="positive"):
        create_harness_agent(client, max_context_window_tokens=0)
    create_harness_agent(client, max_context_window_tokens=1000, max_output_tokens=100, disable_compaction=True)


def test_context_budgets_wire_compaction_or_name_it_missing() -> None:
    """Where compaction exists the budgets build it (a provider after history); else a typed error says so."""
    client = ScriptedChatClient([])
    if importlib.util.find_spec("agentnb.compaction") is None:
        with pytest.raises(FeatureNotAvailableError, match="compaction") as info:
            create_harness_agent(client, max_context_window_tokens=1000, max_output_tokens=100)
        assert isinstance(info.value, NotImplementedError) and info.value.feature == "context compaction"
        return
    from agentnb.compaction import CompactionProvider, ContextWindowCompactionStrategy

    agent = create_harness_agent(
        client, max_context_window_tokens=1000, max_output_tokens=100, file_memory_store=InMemoryAgentFileStore()
    )
    assert isinstance(agent.context_providers[1], CompactionProvider)
    assert isinstance(agent.compaction_strategy, ContextWindowCompactionStrategy)  # type: ignore[attr-defined]
    assert agent.default_options["max_tokens"] == 100


def test_skills_wire_the_skills_provider_or_name_it_missing(tmp_path: Path) -> None:
    client = ScriptedChatClient([])
    if importlib.util.find_spec("agentnb.skills") is None:
        with pytest.raises(FeatureNotAvailableError, match="skills") as info:
            create_harness_agent(client, skills_paths=[tmp_path], disable_file_memory=True)
        assert info.value.feature == "agent skills"
        return
    from agentnb.skills import SkillsProvider

    agent = create_harness_agent(client, skills_paths=[tmp_path], disable_file_memory=True)
    assert any(isinstance(p, SkillsProvider) for p in agent.context_providers)


async def test_a_harness_agent_plans_remembers_and_reads_files_under_approval(tmp_path: Path) -> None:
    files = FileSystemAgentFileStore(tmp_path / "work")
    await files.write("sales.csv", "month,total\njan,10\nfeb,12\n")
    client = ScriptedChatClient(
        [
            call("todos_add", todos=[{"title": "Read the sales"}, {"title": "Write the summary"}]),
            call("file_access_read", file_name="sales.csv"),
            [
                call("todos_complete", items=[{"id": 1, "reason": "read"}]),
                call("file_memory_write", file_name="summary.md", content="22 in total", description="Sales summary"),
            ],
            call("todos_complete", items=[{"id": 2, "reason": "written"}]),
            "Sales total 22.",
        ]
    )
    with pytest.warns(ExperimentalWarning):
        agent = create_harness_agent(
            client,
            file_memory_store=InMemoryAgentFileStore(),
            file_access_store=files,
            loop_should_continue=todos_remaining(),
            loop_next_message=todos_remaining_message,
        )
    session = agent.create_session()
    first = await agent.run("Summarize sales.csv", session=session)
    request = first.user_input_requests[0]
    assert request.function_call.name == "file_access_read"
    done = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
    assert done.text.endswith("Sales total 22.")
    todos = next(p for p in agent.context_providers if isinstance(p, TodoProvider))
    assert all(i.is_complete for i in await todos.get_items(session))
    memory = next(p for p in agent.context_providers if isinstance(p, FileMemoryProvider))
    assert await memory.read_memory(session, "summary.md") == "22 in total"
    restored = AgentSession.from_dict(session.to_dict())
    assert [i.title for i in await todos.get_items(restored)] == ["Read the sales", "Write the summary"]
    client.assert_all_used()
