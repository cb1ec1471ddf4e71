"""MCPSkillsSource against a real MCP server over stdio: on-demand reads, in-memory archives, hostile archives."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from agentnb import Agent, CachingSkillsSource, MCPSkillsSource, SkillsProvider, SkillsSourceContext
from agentnb.exceptions import SkillSecurityError
from agentnb.local import ScriptedChatClient
from agentnb.skills import FileSkill, MCPSkill
from agentnb.skills._mcp import archive_files

from .skills_server import zip_of

SERVER = str(Path(__file__).with_name("skills_server.py"))
CTX = SkillsSourceContext(agent=None)


def connect() -> Any:
    # Entered inside each test: the SDK's cancel scopes must open and close in the same task.
    return Client(StdioServerParameters(command=sys.executable, args=[SERVER]))


async def test_index_entries_become_skills_and_hostile_archives_are_dropped() -> None:
    async with connect() as client:
        source = MCPSkillsSource(client)
        skills = {s.frontmatter.name: s for s in await source.get_skills(CTX)}
        assert sorted(skills) == ["packed", "packed-tar", "remote-guide"]
        reasons = dict(source.skipped)
        assert "climbs out" in reasons["climber"]
        assert "absolute path" in reasons["absolute"]
        assert "more than 20 files" in reasons["crowded"]
        assert "uncompressed size limit" in reasons["bomb"]
        assert "unsupported entry type" in reasons["templated"]

        remote = skills["remote-guide"]
        assert isinstance(remote, MCPSkill)
        assert "Read references/faq.md." in await remote.get_content()
        faq = await remote.get_resource("references/faq.md")
        assert faq is not None and await faq.read() == "Q: why? A: because."
        assert await remote.get_resource("../other/SKILL.md") is None
        assert await remote.get_resource("missing.md") is None
        assert await remote.get_script("anything") is None

        packed = skills["packed"]
        assert isinstance(packed, FileSkill) and not packed.runnable
        assert [r.name for r in packed.known_resources] == ["references/guide.md"]
        assert packed.known_scripts == [] and await packed.get_script("scripts/run.py") is None
        assert await (await packed.get_resource("references/guide.md")).read() == "the packed guide"  # type: ignore[union-attr]
        tar = skills["packed-tar"]
        assert [r.name for r in tar.known_resources] == ["notes.txt"]  # the link member was skipped


async def test_download_size_limit() -> None:
    async with connect() as client:
        source = MCPSkillsSource(client, archive_max_size_bytes=200)
        names = {s.frontmatter.name for s in await source.get_skills(CTX)}
        assert names == {"remote-guide"}
        assert "larger than 200 bytes" in dict(source.skipped)["packed"]


async def test_mcp_skills_through_an_agent_never_run_scripts() -> None:
    async with connect() as client:
        provider = SkillsProvider(CachingSkillsSource(MCPSkillsSource(client)), disable_run_skill_script_approval=True)
        script = ScriptedChatClient(
            [
                [
                    ScriptedChatClient.call("run_skill_script", skill_name="packed", script_name="scripts/run.py"),
                    ScriptedChatClient.call("run_skill_script", skill_name="remote-guide", script_name="x.py"),
                ],
                "done",
            ]
        )
        response = await Agent(script, context_providers=[provider]).run("go")
        results = [c.result for m in response.messages for c in m.contents if c.type == "function_result"]
        assert results == [
            "Error: Script 'scripts/run.py' not found in skill 'packed'.",
            "Error: Script 'x.py' not found in skill 'remote-guide'.",
        ]


def test_archive_members_are_checked_before_anything_is_kept() -> None:
    with pytest.raises(SkillSecurityError, match="climbs out"):
        archive_files(zip_of({"a/SKILL.md": b"x", "a/../../b": b"y"}), max_file_count=5, max_uncompressed_size_bytes=99)
    with pytest.raises(SkillSecurityError, match="absolute"):
        archive_files(zip_of({"C:/windows.md": b"x"}), max_file_count=5, max_uncompressed_size_bytes=99)
    with pytest.raises(ValueError, match="Not a ZIP"):
        archive_files(b"plain bytes", max_file_count=5, max_uncompressed_size_bytes=99)
    assert archive_files(zip_of({"./a//b.md": b"x"}), max_file_count=5, max_uncompressed_size_bytes=99) == {
        "a/b.md": b"x"
    }


def test_exactly_one_session_argument() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        MCPSkillsSource()
    with pytest.raises(ValueError, match="exactly one"):
        MCPSkillsSource(object(), session_provider=lambda: object())  # type: ignore[arg-type]
