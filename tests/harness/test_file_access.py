"""File access: the seven tools, run by an agent through the ordinary approval flow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentnb import Agent, Content, Message, ToolApprovalMiddleware
from agentnb.harness import FileAccessProvider, FileSystemAgentFileStore, InMemoryAgentFileStore
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call
ALL = {
    "file_access_write",
    "file_access_read",
    "file_access_delete",
    "file_access_ls",
    "file_access_grep",
    "file_access_replace",
    "file_access_replace_lines",
}


def _results(response_messages: list[Message]) -> list[object]:
    return [c.result for m in response_messages for c in m.contents if c.type == "function_result"]


async def test_every_tool_needs_approval_by_default_and_nothing_runs_without_it(tmp_path: Path) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    provider = FileAccessProvider(store)
    assert {t.name for t in provider.tools()} == ALL
    assert all(t.approval_mode == "always_require" for t in provider.tools())
    client = ScriptedChatClient([call("file_access_write", file_name="out.txt", content="x")])
    agent = Agent(client, context_providers=[provider])
    session = agent.create_session()
    response = await agent.run("Write it.", session=session)
    assert [r.function_call.name for r in response.user_input_requests] == ["file_access_write"]
    assert not (tmp_path / "out.txt").exists()
    client.assert_all_used()


async def test_approved_write_runs_and_denied_delete_does_not(tmp_path: Path) -> None:
    store = FileSystemAgentFileStore(tmp_path)
    client = ScriptedChatClient(
        [
            call("file_access_write", file_name="reports/q1.md", content="# Q1\nrevenue: 10\n"),
            "Written.",
            call("file_access_delete", file_name="reports/q1.md"),
            "Kept it.",
        ]
    )
    agent = Agent(client, context_providers=[FileAccessProvider(store)])
    session = agent.create_session()
    first = await agent.run("Write the report.", session=session)
    approve = first.user_input_requests[0].to_function_approval_response(True)
    done = await agent.run(Message("user", [approve]), session=session)
    assert done.text == "Written."
    assert (tmp_path / "reports" / "q1.md").read_text() == "# Q1\nrevenue: 10\n"
    second = await agent.run("Delete it.", session=session)
    deny = second.user_input_requests[0].to_function_approval_response(False)
    assert (await agent.run(Message("user", [deny]), session=session)).text == "Kept it."
    assert (tmp_path / "reports" / "q1.md").exists()
    assert session.state["file_access"]["touched"] == [{"path": "reports/q1.md", "action": "write"}]


async def test_read_only_rule_approves_reads_and_still_asks_for_writes() -> None:
    store = InMemoryAgentFileStore({"data.csv": "a,b\n1,2"})
    client = ScriptedChatClient(
        [
            call("file_access_read", file_name="data.csv"),
            call("file_access_write", file_name="data.csv", content="gone", overwrite=True),
        ]
    )
    agent = Agent(
        client,
        context_providers=[FileAccessProvider(store)],
        middleware=[
            ToolApprovalMiddleware(auto_approval_rules=[FileAccessProvider.read_only_tools_auto_approval_rule])
        ],
    )
    session = agent.create_session()
    response = await agent.run("Read then rewrite.", session=session)
    assert "a,b\n1,2" in _results(response.messages)
    assert [r.function_call.name for r in response.user_input_requests] == ["file_access_write"]
    assert await store.read("data.csv") == "a,b\n1,2"


def test_auto_approval_rules_never_approve_a_hosted_tool_with_the_same_name() -> None:
    local = Content.from_function_call("c1", "file_access_read", "{}")
    hosted = Content.from_function_call("c2", "file_access_read", "{}", additional_properties={"server_label": "evil"})
    write = Content.from_function_call("c3", "file_access_write", "{}")
    assert FileAccessProvider.read_only_tools_auto_approval_rule(local)
    assert not FileAccessProvider.read_only_tools_auto_approval_rule(hosted)
    assert not FileAccessProvider.read_only_tools_auto_approval_rule(write)
    assert FileAccessProvider.all_tools_auto_approval_rule(write)
    assert not FileAccessProvider.all_tools_auto_approval_rule(hosted)


def test_disable_write_tools_and_approval_switches() -> None:
    store = InMemoryAgentFileStore()
    assert {
        t.name for t in FileAccessProvider(store, disable_write_tools=True).tools()
    } == FileAccessProvider.READ_ONLY_TOOL_NAMES
    relaxed = FileAccessProvider(store, disable_readonly_tool_approval=True).tools()
    modes = {t.name: t.approval_mode for t in relaxed}
    assert modes["file_access_read"] == "never_require" and modes["file_access_write"] == "always_require"
    both = FileAccessProvider(store, disable_write_tool_approval=True).tools()
    assert {t.name: t.approval_mode for t in both}["file_access_delete"] == "never_require"


async def test_the_tools_edit_search_and_refuse_escapes() -> None:
    store = InMemoryAgentFileStore({"notes/a.md": "one\ntwo\nthree\n", "b.txt": "two two"})
    tools = {t.name: t for t in FileAccessProvider(store).tools()}
    grep = await tools["file_access_grep"].invoke(
        arguments={"regex_pattern": "two", "directory": "notes"}, skip_parsing=True
    )
    assert grep == [
        {
            "file_name": "notes/a.md",
            "snippet": "one\ntwo\nthree\n",
            "matching_lines": [{"line_number": 2, "line": "two"}],
        }
    ]
    listing = await tools["file_access_ls"].invoke(arguments={"glob_pattern": "*.txt"}, skip_parsing=True)
    assert listing == [{"name": "b.txt", "type": "file"}]
    many = await tools["file_access_replace"].invoke(
        arguments={"file_name": "b.txt", "old_string": "two", "new_string": "2"}, skip_parsing=True
    )
    assert "occurs 2 times" in many and await store.read("b.txt") == "two two"
    assert "Replaced 2" in await tools["file_access_replace"].invoke(
        arguments={"file_name": "b.txt", "old_string": "two", "new_string": "2", "replace_all": True}, skip_parsing=True
    )
    edits = [{"line_number": 2, "new_line": "TWO\n"}, {"line_number": 3, "new_line": ""}]
    await tools["file_access_replace_lines"].invoke(
        arguments={"file_name": "notes/a.md", "edits": edits}, skip_parsing=True
    )
    assert await store.read("notes/a.md") == "one\nTWO\n"
    bad = await tools["file_access_replace_lines"].invoke(
        arguments={"file_name": "notes/a.md", "edits": [{"line_number": 9, "new_line": "x"}]}, skip_parsing=True
    )
    assert "out of range" in bad
    for path in ("../x", "/etc/passwd", "C:\\x"):
        assert "Invalid path" in await tools["file_access_read"].invoke(
            arguments={"file_name": path}, skip_parsing=True
        )
        assert "Invalid path" in await tools["file_access_write"].invoke(
            arguments={"file_name": path, "content": "x"}, skip_parsing=True
        )
    assert "already exists" in await tools["file_access_write"].invoke(
        arguments={"file_name": "b.txt", "content": "x"}, skip_parsing=True
    )
    assert "invalid pattern" in json.dumps(
        await tools["file_access_grep"].invoke(arguments={"regex_pattern": "(("}, skip_parsing=True)
    )


def test_a_store_is_required() -> None:
    with pytest.raises(TypeError, match="AgentFileStore"):
        FileAccessProvider("/tmp")  # type: ignore[arg-type]
