"""Notebook display of skills, sources and providers: what each offers, where it came from, escaped."""

from __future__ import annotations

from pathlib import Path

from agentnb import Agent, InlineSkill, SkillFrontmatter, SkillsProvider
from agentnb.local import ScriptedChatClient

from .helpers import write_skill


async def test_provider_skill_and_source_show_origin_and_escape_text(tmp_path: Path) -> None:
    write_skill(tmp_path, "good", description="<script>alert(1)</script>", files={"refs/a.md": "x", "run.py": ""})
    write_skill(tmp_path, "other", folder="mismatch")
    provider = SkillsProvider.from_paths(tmp_path)
    assert "not read yet" in provider.source._repr_html_()  # nothing fetched by displaying
    await Agent(ScriptedChatClient(["ok"]), context_providers=[provider]).run("hi")
    html = provider._repr_html_()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert str(tmp_path / "good" / "refs" / "a.md") in html and "run.py" in html
    assert "load_skill: asks" in html and "1 skipped" in html and "differs from its folder" in html
    skill = InlineSkill(frontmatter=SkillFrontmatter(name="c", description="d & e"), instructions="i")
    assert "d &amp; e" in skill._repr_html_() and "InlineSkill" in skill._repr_html_()
