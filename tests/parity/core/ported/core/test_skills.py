# Copyright (c) Microsoft. All rights reserved.

"""Tests for Agent Skills provider (file-based and code-defined)."""

from __future__ import annotations

import os
from abc import ABC
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock, patch

import pytest

from agentnb import AggregatingSkillsSource, CachingSkillsSource, ClassSkill, Content, DeduplicatingSkillsSource, FileSkill, FileSkillScript, FileSkillsSource, InlineSkill, InMemorySkillsSource, SessionContext, Skill, SkillFrontmatter, SkillResource, SkillScript, SkillScriptArgumentParser, SkillScriptRunner, SkillsProvider, SkillsSource, SkillsSourceContext
from agentnb import InlineSkillResource, InlineSkillScript

from .conftest import MockAgent, MockAgentSession, create_junction_or_skip

# Cross-platform absolute path prefix for tests
_ABS = "C:\\skills" if os.name == "nt" else "/skills"


class _NamedMockAgent(MockAgent):
    """A :class:`MockAgent` with a configurable name for context-aware skill tests."""

    def __init__(self, name: str = "test-agent") -> None:
        self._name = name

    @property
    def name(self) -> str | None:  # type: ignore[override]  # pyrefly: ignore[bad-override]
        return self._name


def _make_source_context(agent_name: str = "test-agent") -> SkillsSourceContext:
    """Build a :class:`SkillsSourceContext` for exercising skill sources in tests."""
    return SkillsSourceContext(agent=_NamedMockAgent(agent_name))  # type: ignore[abstract]  # pyrefly: ignore[bad-instantiation]


# Shared context for the common case where the agent/session are irrelevant.
_SOURCE_CTX = _make_source_context()


async def _noop_script_runner(skill: Any, script: Any, args: Any = None) -> None:
    """No-op script runner for tests that need a SkillScriptRunner."""
    return


class _CountingSkillsSource(SkillsSource):
    """Test source that records how many times ``get_skills`` is called."""

    def __init__(self, skills: Sequence[Skill]) -> None:
        self._skills = list(skills)
        self.call_count = 0

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        self.call_count += 1
        return list(self._skills)




def _ctx(provider: SkillsProvider) -> tuple[dict[str, Skill], str | None, list[Any]]:
    """Return the captured context, asserting it was initialized.

    Converts the skills sequence to a dict keyed by name for convenient
    test assertions.
    """
    ctx = getattr(provider, "_test_context", None)
    assert ctx is not None, "_init_provider() must be called before accessing context"
    skills, instructions, tools = ctx
    return {s.frontmatter.name: s for s in skills}, instructions, tools


def _raw_skills(provider: SkillsProvider) -> Sequence[Skill]:
    """Return the raw skills sequence from the captured context."""
    ctx = getattr(provider, "_test_context", None)
    assert ctx is not None, "_init_provider() must be called before accessing context"
    return ctx[0]


def _symlinks_supported(tmp: Path) -> bool:
    """Return True if the current platform/environment supports symlinks."""
    test_target = tmp / "_symlink_test_target"
    test_link = tmp / "_symlink_test_link"
    try:
        test_target.write_text("test", encoding="utf-8")
        test_link.symlink_to(test_target)
        return True
    except (OSError, NotImplementedError):
        return False
    finally:
        test_link.unlink(missing_ok=True)
        test_target.unlink(missing_ok=True)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _write_skill(
    base: Path,
    name: str,
    description: str = "A test skill.",
    body: str = "# Instructions\nDo the thing.",
    *,
    extra_frontmatter: str = "",
    resources: dict[str, str] | None = None,
) -> Path:
    """Create a skill directory with SKILL.md and optional resource files."""
    skill_dir = base / name
    skill_dir.mkdir(parents=True, exist_ok=True)

    frontmatter = f"---\nname: {name}\ndescription: {description}\n{extra_frontmatter}---\n"
    skill_md = skill_dir / "SKILL.md"
    skill_md.write_text(frontmatter + body, encoding="utf-8")

    if resources:
        for rel_path, content in resources.items():
            res_file = skill_dir / rel_path
            res_file.parent.mkdir(parents=True, exist_ok=True)
            res_file.write_text(content, encoding="utf-8")

    return skill_dir




async def _discover_file_skills_for_test(
    skill_paths: str | Path | list[str],
    *,
    resource_extensions: tuple[str, ...] | None = None,
    script_extensions: tuple[str, ...] | None = None,
    search_depth: int | None = None,
    script_filter: Any = None,
    resource_filter: Any = None,
    script_runner: Any = None,
) -> dict[str, FileSkill]:
    """Test helper: discover file skills and return as a dict keyed by name.

    Wraps ``FileSkillsSource(...).get_skills()`` for easy test migration
    from the removed ``FileSkillsSource._discover_file_skills()`` static method.
    """
    kwargs: dict[str, Any] = {}
    if resource_extensions is not None:
        kwargs["resource_extensions"] = resource_extensions
    if script_extensions is not None:
        kwargs["script_extensions"] = script_extensions
    if search_depth is not None:
        kwargs["search_depth"] = search_depth
    if script_filter is not None:
        kwargs["script_filter"] = script_filter
    if resource_filter is not None:
        kwargs["resource_filter"] = resource_filter
    if script_runner is not None:
        kwargs["script_runner"] = script_runner

    source = FileSkillsSource(skill_paths, **kwargs)
    skills = await source.get_skills(_SOURCE_CTX)
    result: dict[str, FileSkill] = {}
    for s in skills:
        assert isinstance(s, FileSkill), f"Expected FileSkill, got {type(s).__name__}"
        result[s.frontmatter.name] = s
    return result


# ---------------------------------------------------------------------------
# Tests: module-level helper functions
# ---------------------------------------------------------------------------


class TestNormalizeResourcePath:
    """Tests for _normalize_resource_path."""










class TestDiscoverResourceFiles:
    """Tests for _discover_resource_files (depth-based resource discovery)."""
















class TestTryParseSkillDocument:
    """Tests for _extract_frontmatter."""














# ---------------------------------------------------------------------------
# Tests: skill discovery and loading
# ---------------------------------------------------------------------------


class TestDiscoverAndLoadSkills:
    """Tests for file skill discovery via FileSkillsSource.get_skills()."""

    async def test_discovers_valid_skill(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "my-skill")
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert "my-skill" in skills
        assert skills["my-skill"].frontmatter.name == "my-skill"

    async def test_discovers_nested_skills(self, tmp_path: Path) -> None:
        skills_dir = tmp_path / "skills"
        _write_skill(skills_dir, "skill-a")
        _write_skill(skills_dir, "skill-b")
        skills = await _discover_file_skills_for_test([str(skills_dir)])
        assert len(skills) == 2
        assert "skill-a" in skills
        assert "skill-b" in skills

    async def test_skips_invalid_skill(self, tmp_path: Path) -> None:
        skill_dir = tmp_path / "bad-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text("No frontmatter here.", encoding="utf-8")
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert len(skills) == 0

    async def test_skips_skill_with_name_directory_mismatch(self, tmp_path: Path) -> None:
        skill_dir = tmp_path / "wrong-dir-name"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: actual-skill-name\ndescription: A skill.\n---\nBody.", encoding="utf-8"
        )
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert len(skills) == 0

    async def test_deduplicates_skill_names(self, tmp_path: Path) -> None:
        dir1 = tmp_path / "dir1"
        dir2 = tmp_path / "dir2"
        _write_skill(dir1, "my-skill", body="First")
        _write_skill(dir2, "my-skill", body="Second")
        skills = await _discover_file_skills_for_test([str(dir1), str(dir2)])
        assert len(skills) == 1
        assert "First" in (await skills["my-skill"].get_content())

    async def test_empty_directory(self, tmp_path: Path) -> None:
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert len(skills) == 0

    async def test_nonexistent_directory(self) -> None:
        skills = await _discover_file_skills_for_test(["/nonexistent/path"])
        assert len(skills) == 0

    async def test_multiple_paths(self, tmp_path: Path) -> None:
        dir1 = tmp_path / "dir1"
        dir2 = tmp_path / "dir2"
        _write_skill(dir1, "skill-a")
        _write_skill(dir2, "skill-b")
        skills = await _discover_file_skills_for_test([str(dir1), str(dir2)])
        assert len(skills) == 2

    async def test_depth_limit(self, tmp_path: Path) -> None:
        # Depth 0: tmp_path itself
        # Depth 1: tmp_path/level1
        # Depth 2: tmp_path/level1/level2 (should be found)
        # Depth 3: tmp_path/level1/level2/level3 (should NOT be found)
        deep = tmp_path / "level1" / "level2" / "level3"
        deep.mkdir(parents=True)
        (deep / "SKILL.md").write_text("---\nname: deep-skill\ndescription: Too deep.\n---\nBody.", encoding="utf-8")
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert "deep-skill" not in skills

    async def test_skill_with_resources(self, tmp_path: Path) -> None:
        _write_skill(
            tmp_path,
            "my-skill",
            body="Instructions here.",
            resources={"references/FAQ.md": "FAQ content"},
        )
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert "my-skill" in skills
        assert [r.name for r in skills["my-skill"]._resources] == ["references/FAQ.md"]

    async def test_skill_discovers_all_resource_files(self, tmp_path: Path) -> None:
        """Resources are discovered by filesystem scan, not by markdown links."""
        _write_skill(
            tmp_path,
            "my-skill",
            body="No links here.",
            resources={"references/data.json": '{"key": "val"}', "assets/doc.md": "doc content"},
        )
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert "my-skill" in skills
        resource_names = sorted(r.name for r in skills["my-skill"]._resources)
        assert "assets/doc.md" in resource_names
        assert "references/data.json" in resource_names


# ---------------------------------------------------------------------------
# Tests: read_skill_resource
# ---------------------------------------------------------------------------


class TestReadSkillResource:
    """Tests for _FileSkillResource reading."""







# ---------------------------------------------------------------------------
# Tests: _create_instructions
# ---------------------------------------------------------------------------


class TestBuildSkillsInstructionPrompt:
    """Tests for _create_instructions."""









# ---------------------------------------------------------------------------
# Tests: SkillsProvider (file-based)
# ---------------------------------------------------------------------------


class TestSkillsProvider:
    """Tests for file-based usage of SkillsProvider."""

    def test_default_source_id(self, tmp_path: Path) -> None:
        provider = SkillsProvider.from_paths(str(tmp_path))
        assert provider.source_id == "agent_skills"




    async def test_before_run_with_skills(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "my-skill")
        provider = SkillsProvider.from_paths(str(tmp_path))
        context = SessionContext(input_messages=[])

        await provider.before_run(
            agent=AsyncMock(),
            session=AsyncMock(),
            context=context,
            state={},
        )

        assert len(context.instructions) == 1
        assert "my-skill" in context.instructions[0]
        tool_names = {t.name for t in context.tools}
        assert len(context.tools) == 3
        assert tool_names == {"load_skill", "read_skill_resource", "run_skill_script"}

    async def test_before_run_without_skills(self, tmp_path: Path) -> None:
        provider = SkillsProvider.from_paths(str(tmp_path))
        context = SessionContext(input_messages=[])

        await provider.before_run(
            agent=AsyncMock(),
            session=AsyncMock(),
            context=context,
            state={},
        )

        assert len(context.instructions) == 0
        assert len(context.tools) == 0









    async def test_skills_sorted_in_prompt(self, tmp_path: Path) -> None:
        skills_dir = tmp_path / "skills"
        _write_skill(skills_dir, "zebra", description="Z skill.")
        _write_skill(skills_dir, "alpha", description="A skill.")
        provider = SkillsProvider.from_paths(str(skills_dir))
        context = SessionContext(input_messages=[])

        await provider.before_run(
            agent=AsyncMock(),
            session=AsyncMock(),
            context=context,
            state={},
        )

        prompt = context.instructions[0]
        assert prompt.index("alpha") < prompt.index("zebra")

    async def test_xml_escaping_in_prompt(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "my-skill", description="Uses <tags> & stuff")
        provider = SkillsProvider.from_paths(str(tmp_path))
        context = SessionContext(input_messages=[])

        await provider.before_run(
            agent=AsyncMock(),
            session=AsyncMock(),
            context=context,
            state={},
        )

        prompt = context.instructions[0]
        assert "&lt;tags&gt;" in prompt
        assert "&amp;" in prompt


# ---------------------------------------------------------------------------
# Tests: link detection (_has_link_or_reparse_point_in_path and end-to-end guards)
# ---------------------------------------------------------------------------


@pytest.fixture()
def _requires_symlinks(tmp_path: Path) -> None:
    """Skip the test if the platform does not support symlinks."""
    if not _symlinks_supported(tmp_path):
        pytest.skip("Symlinks not supported on this platform/environment")


@pytest.mark.usefixtures("_requires_symlinks")
class TestSymlinkDetection:
    """Tests for link detection and the guards in validation/read."""




    async def test_discover_skips_symlinked_resource(self, tmp_path: Path) -> None:
        """get_skills() should skip a symlinked resource but keep the skill."""
        skill_dir = tmp_path / "my-skill"
        skill_dir.mkdir()

        outside_file = tmp_path / "secret.md"
        outside_file.write_text("secret content", encoding="utf-8")

        # Create SKILL.md
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: A test skill.\n---\nInstructions.\n",
            encoding="utf-8",
        )
        refs_dir = skill_dir / "references"
        refs_dir.mkdir()
        (refs_dir / "leak.md").symlink_to(outside_file)
        # Also add a safe resource
        (refs_dir / "safe.md").write_text("safe content", encoding="utf-8")

        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert "my-skill" in skills
        resource_names = [r.name for r in skills["my-skill"]._resources]
        assert "references/leak.md" not in resource_names
        assert "references/safe.md" in resource_names








class TestJunctionDetection:
    """Tests for Windows junction guards in file-based skills."""




class TestSkillDiscoveryFailsClosed:
    """Discovery must fail closed when an entry cannot be inspected."""




# ---------------------------------------------------------------------------
# Tests: SkillResource
# ---------------------------------------------------------------------------


class TestSkillResource:
    """Tests for SkillResource dataclass."""

    def test_static_content(self) -> None:
        resource = InlineSkillResource(name="ref", content="static content")
        assert resource.name == "ref"
        assert resource.content == "static content"
        assert resource.function is None

    def test_callable_function(self) -> None:
        def my_func() -> str:
            return "dynamic"

        resource = InlineSkillResource(name="func", function=my_func)
        assert resource.name == "func"
        assert resource.content is None
        assert resource.function is my_func

    def test_with_description(self) -> None:
        resource = InlineSkillResource(name="ref", description="A reference doc.", content="data")
        assert resource.description == "A reference doc."

    def test_requires_content_or_function(self) -> None:
        with pytest.raises(ValueError, match="must have either content or function"):
            InlineSkillResource(name="empty")

    def test_content_and_function_mutually_exclusive(self) -> None:
        with pytest.raises(ValueError, match="must have either content or function, not both"):
            InlineSkillResource(name="both", content="static", function=lambda: "dynamic")




# ---------------------------------------------------------------------------
# Tests: InlineSkill
# ---------------------------------------------------------------------------


class TestInlineSkill:
    """Tests for InlineSkill and .resource decorator."""

    def test_skill_is_abstract(self) -> None:
        """Skill base class cannot be instantiated directly."""
        with pytest.raises(TypeError):
            Skill()  # type: ignore[abstract]

    def test_inline_skill_is_skill(self) -> None:
        """InlineSkill is a subclass of Skill."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")
        assert isinstance(skill, Skill)

    def test_file_skill_is_skill(self) -> None:
        """FileSkill is a subclass of Skill."""
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), content="Body", path="/tmp/skill"
        )
        assert isinstance(skill, Skill)

    def test_basic_construction(self) -> None:
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="A test skill."), instructions="Instructions."
        )
        assert skill.frontmatter.name == "my-skill"
        assert skill.frontmatter.description == "A test skill."
        assert skill.instructions == "Instructions."
        assert skill._resources == []

    def test_construction_with_static_resources(self) -> None:
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="A test skill."),
            instructions="Instructions.",
            resources=[
                InlineSkillResource(name="ref", content="Reference content"),
            ],
        )
        assert len(skill._resources) == 1
        assert skill._resources[0].name == "ref"

    def test_empty_name_raises(self) -> None:
        with pytest.raises(ValueError, match="cannot be empty"):
            InlineSkill(frontmatter=SkillFrontmatter(name="", description="A skill."), instructions="Body")

    def test_invalid_name_raises(self) -> None:
        with pytest.raises(ValueError, match="Invalid skill name"):
            InlineSkill(frontmatter=SkillFrontmatter(name="Invalid-Name", description="A skill."), instructions="Body")

    def test_name_starts_with_hyphen_raises(self) -> None:
        with pytest.raises(ValueError, match="Invalid skill name"):
            InlineSkill(frontmatter=SkillFrontmatter(name="-bad-name", description="A skill."), instructions="Body")

    def test_name_with_consecutive_hyphens_raises(self) -> None:
        with pytest.raises(ValueError, match="Invalid skill name"):
            InlineSkill(
                frontmatter=SkillFrontmatter(name="consecutive--hyphens", description="A skill."), instructions="Body"
            )

    def test_name_too_long_raises(self) -> None:
        with pytest.raises(ValueError, match="Invalid skill name"):
            InlineSkill(frontmatter=SkillFrontmatter(name="a" * 65, description="A skill."), instructions="Body")

    def test_empty_description_raises(self) -> None:
        with pytest.raises(ValueError, match="cannot be empty"):
            InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description=""), instructions="Body")

    def test_description_too_long_raises(self) -> None:
        with pytest.raises(ValueError, match="invalid description"):
            InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="a" * 1025), instructions="Body")

    def test_resource_decorator_bare(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource
        def get_schema() -> Any:
            """Get the database schema."""
            return "CREATE TABLE users (id INT)"

        assert len(skill._resources) == 1
        assert skill._resources[0].name == "get_schema"
        assert skill._resources[0].description is None
        assert isinstance(skill._resources[0], InlineSkillResource)
        assert skill._resources[0].function is get_schema

    def test_resource_decorator_with_args(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource(name="custom-name", description="Custom description")
        def my_resource() -> Any:
            return "data"

        assert len(skill._resources) == 1
        assert skill._resources[0].name == "custom-name"
        assert skill._resources[0].description == "Custom description"

    def test_resource_decorator_returns_function(self) -> None:
        """Decorator should return the original function unchanged."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource
        def get_data() -> Any:
            return "data"

        assert callable(get_data)
        assert get_data() == "data"

    def test_multiple_resources(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource
        def resource_a() -> Any:
            return "A"

        @skill.resource
        def resource_b() -> Any:
            return "B"

        assert len(skill._resources) == 2
        names = [r.name for r in skill._resources]
        assert "resource_a" in names
        assert "resource_b" in names

    def test_resource_decorator_async(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource
        async def get_async_data() -> Any:
            return "async data"

        assert len(skill._resources) == 1
        assert isinstance(skill._resources[0], InlineSkillResource)
        assert skill._resources[0].function is get_async_data


# ---------------------------------------------------------------------------
# Tests: SkillsProvider with code-defined skills
# ---------------------------------------------------------------------------


class TestSkillsProviderCodeSkill:
    """Tests for SkillsProvider with code-defined skills."""
















    async def test_before_run_injects_code_skills(self) -> None:
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="prog-skill", description="A code-defined skill."), instructions="Body"
        )
        provider = SkillsProvider([skill])
        context = SessionContext(input_messages=[])

        await provider.before_run(agent=AsyncMock(), session=AsyncMock(), context=context, state={})

        assert len(context.instructions) == 1
        assert "prog-skill" in context.instructions[0]
        assert len(context.tools) == 3
        assert {t.name for t in context.tools} == {"load_skill", "read_skill_resource", "run_skill_script"}

    async def test_before_run_empty_provider(self) -> None:
        provider = SkillsProvider([])
        context = SessionContext(input_messages=[])

        await provider.before_run(agent=AsyncMock(), session=AsyncMock(), context=context, state={})

        assert len(context.instructions) == 0
        assert len(context.tools) == 0



    async def test_combined_prompt_includes_both(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "file-skill")
        prog_skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="prog-skill", description="A code-defined skill."), instructions="Body"
        )
        provider = SkillsProvider(
            DeduplicatingSkillsSource(
                AggregatingSkillsSource([
                    FileSkillsSource(str(tmp_path)),
                    InMemorySkillsSource([prog_skill]),
                ])
            )
        )
        context = SessionContext(input_messages=[])

        await provider.before_run(agent=AsyncMock(), session=AsyncMock(), context=context, state={})

        prompt = context.instructions[0]
        assert "file-skill" in prompt
        assert "prog-skill" in prompt



# ---------------------------------------------------------------------------
# Tests: File-based skill parsing and content
# ---------------------------------------------------------------------------


class TestFileBasedSkillParsing:
    """Tests for file-based skills parsed from SKILL.md."""




    async def test_resources_populated(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "my-skill", resources={"references/doc.md": "content"})
        skills = await _discover_file_skills_for_test([str(tmp_path)])
        assert "my-skill" in skills
        resource_names = [r.name for r in skills["my-skill"]._resources]
        assert "references/doc.md" in resource_names


# ---------------------------------------------------------------------------
# Tests: _load_skill formatting
# ---------------------------------------------------------------------------


class TestLoadSkillFormatting:
    """Tests for _load_skill output formatting differences between file-based and code-defined skills."""





# ---------------------------------------------------------------------------
# Tests: _discover_resource_files edge cases
# ---------------------------------------------------------------------------


class TestDiscoverResourceFilesEdgeCases:
    """Additional edge-case tests for filesystem resource discovery."""





class TestDiscoverFilesOSErrorWarning:
    """OSError during directory listing should log a warning, not fail silently."""




class TestSearchDepthValidation:
    """Tests for search_depth parameter validation."""


    def test_search_depth_zero_raises(self) -> None:
        with pytest.raises(ValueError, match="search_depth must be >= 1"):
            FileSkillsSource(".", search_depth=0)

    def test_search_depth_negative_raises(self) -> None:
        with pytest.raises(ValueError, match="search_depth must be >= 1"):
            FileSkillsSource(".", search_depth=-1)



class TestFileSkillsSourceSearchDepthAndFilters:
    """Tests for search_depth, script_filter, and resource_filter parameters."""

    async def test_search_depth_controls_resource_discovery(self, tmp_path: Path) -> None:
        """search_depth limits how deep resource files are discovered."""
        skill_dir = tmp_path / "my-skill"
        deep = skill_dir / "a" / "b"
        deep.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (skill_dir / "root.md").write_text("root", encoding="utf-8")
        (skill_dir / "a" / "level1.md").write_text("l1", encoding="utf-8")
        (deep / "level2.md").write_text("l2", encoding="utf-8")

        # depth=1: only root
        source1 = FileSkillsSource(str(tmp_path), search_depth=1)
        skills1 = await source1.get_skills(_SOURCE_CTX)
        names1 = [r.name for r in skills1[0]._resources]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "root.md" in names1
        assert "a/level1.md" not in names1

        # depth=2 (default): root + one level
        source2 = FileSkillsSource(str(tmp_path))
        skills2 = await source2.get_skills(_SOURCE_CTX)
        names2 = [r.name for r in skills2[0]._resources]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "root.md" in names2
        assert "a/level1.md" in names2
        assert "a/b/level2.md" not in names2

        # depth=3: finds all
        source3 = FileSkillsSource(str(tmp_path), search_depth=3)
        skills3 = await source3.get_skills(_SOURCE_CTX)
        names3 = [r.name for r in skills3[0]._resources]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "a/b/level2.md" in names3

    async def test_resource_filter_excludes_files(self, tmp_path: Path) -> None:
        """resource_filter predicate controls which resources are included."""
        skill_dir = tmp_path / "my-skill"
        refs = skill_dir / "references"
        refs.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (refs / "keep.md").write_text("keep", encoding="utf-8")
        (refs / "secret.md").write_text("secret", encoding="utf-8")

        source = FileSkillsSource(
            str(tmp_path),
            resource_filter=lambda name, path: "secret" not in path,
        )
        skills = await source.get_skills(_SOURCE_CTX)
        resource_names = [r.name for r in skills[0]._resources]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "references/keep.md" in resource_names
        assert "references/secret.md" not in resource_names

    async def test_script_filter_excludes_files(self, tmp_path: Path) -> None:
        """script_filter predicate controls which scripts are included."""
        skill_dir = tmp_path / "my-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (skill_dir / "run.py").write_text("print('run')", encoding="utf-8")
        (skill_dir / "test_run.py").write_text("print('test')", encoding="utf-8")

        source = FileSkillsSource(
            str(tmp_path),
            script_filter=lambda name, path: not path.startswith("test_"),
        )
        skills = await source.get_skills(_SOURCE_CTX)
        script_names = [s.name for s in skills[0]._scripts]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "run.py" in script_names
        assert "test_run.py" not in script_names



    async def test_nested_skill_directory_absorbed_into_parent(self, tmp_path: Path) -> None:
        """A nested SKILL.md is not an independent skill; its contents belong to the parent."""
        parent_dir = tmp_path / "parent-skill"
        child_dir = parent_dir / "child-skill"
        child_dir.mkdir(parents=True)
        (parent_dir / "SKILL.md").write_text(
            "---\nname: parent-skill\ndescription: parent\n---\nParent body",
            encoding="utf-8",
        )
        (parent_dir / "parent-resource.md").write_text("parent", encoding="utf-8")
        (child_dir / "SKILL.md").write_text(
            "---\nname: child-skill\ndescription: child\n---\nChild body",
            encoding="utf-8",
        )
        (child_dir / "child-resource.md").write_text("child", encoding="utf-8")
        (child_dir / "child-script.py").write_text("print('child')", encoding="utf-8")

        source = FileSkillsSource(str(tmp_path), search_depth=3)
        skills = await source.get_skills(_SOURCE_CTX)
        skills_dict = {s.frontmatter.name: s for s in skills}

        # Only the parent skill is discovered; the nested SKILL.md is not its own skill.
        assert "parent-skill" in skills_dict
        assert "child-skill" not in skills_dict

        # The parent absorbs the nested directory's resources and scripts.
        parent_resources = [r.name for r in skills_dict["parent-skill"]._resources]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        parent_scripts = [s.name for s in skills_dict["parent-skill"]._scripts]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "parent-resource.md" in parent_resources
        assert "child-skill/child-resource.md" in parent_resources
        assert "child-skill/child-script.py" in parent_scripts

        # The nested SKILL.md file itself is never surfaced as a resource.
        assert "child-skill/SKILL.md" not in parent_resources


# ---------------------------------------------------------------------------
# Tests: _is_path_within_directory
# ---------------------------------------------------------------------------


class TestIsPathWithinDirectory:
    """Tests for _is_path_within_directory."""






# ---------------------------------------------------------------------------
# Tests: _has_link_or_reparse_point_in_path edge cases
# ---------------------------------------------------------------------------


class TestHasLinkOrReparsePointInPathEdgeCases:
    """Edge-case tests for _has_link_or_reparse_point_in_path."""





# ---------------------------------------------------------------------------
# Tests: _validate_skill_metadata
# ---------------------------------------------------------------------------


class TestValidateSkillMetadata:
    """Tests for _validate_skill_metadata."""


















# ---------------------------------------------------------------------------
# Tests: _discover_skill_directories
# ---------------------------------------------------------------------------


class TestDiscoverSkillDirectories:
    """Tests for _discover_skill_directories."""









# ---------------------------------------------------------------------------
# Tests: _read_and_parse_skill_file edge cases
# ---------------------------------------------------------------------------


class TestReadAndParseSkillFile:
    """Tests for _read_and_parse_skill_file."""






# ---------------------------------------------------------------------------
# Tests: _create_resource_element
# ---------------------------------------------------------------------------


class TestCreateResourceElement:
    """Tests for _create_resource_element."""






# ---------------------------------------------------------------------------
# Tests: _FileSkillResource edge cases
# ---------------------------------------------------------------------------


class TestReadFileSkillResourceEdgeCases:
    """Edge-case tests for _FileSkillResource."""






class TestGetValidatedResourcePath:
    """Tests for FileSkillsSource._get_validated_resource_path security validation."""







# ---------------------------------------------------------------------------
# Tests: _normalize_resource_path edge cases
# ---------------------------------------------------------------------------


class TestNormalizeResourcePathEdgeCases:
    """Additional edge-case tests for _normalize_resource_path."""






# ---------------------------------------------------------------------------
# Tests: file skill discovery edge cases
# ---------------------------------------------------------------------------


class TestDiscoverFileSkillsEdgeCases:
    """Edge-case tests for file skill discovery."""

    async def test_empty_paths_returns_empty(self) -> None:
        skills = await _discover_file_skills_for_test([])
        assert len(skills) == 0

    async def test_accepts_path_object(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "my-skill")
        skills = await _discover_file_skills_for_test(tmp_path)
        assert "my-skill" in skills

    async def test_accepts_single_string_path(self, tmp_path: Path) -> None:
        _write_skill(tmp_path, "my-skill")
        skills = await _discover_file_skills_for_test(str(tmp_path))
        assert "my-skill" in skills


# ---------------------------------------------------------------------------
# Tests: _extract_frontmatter edge cases
# ---------------------------------------------------------------------------


class TestExtractFrontmatterEdgeCases:
    """Additional edge-case tests for _extract_frontmatter."""






# ---------------------------------------------------------------------------
# Tests: _extract_frontmatter block scalar parsing
# ---------------------------------------------------------------------------


class TestExtractFrontmatterBlockScalars:
    """Tests for YAML block scalar (| and >) parsing in _extract_frontmatter."""

















# ---------------------------------------------------------------------------
# Tests: Skill spec fields (via SkillFrontmatter)
# ---------------------------------------------------------------------------


class TestSkillSpecFields:
    """Tests for agentskills.io spec fields on SkillFrontmatter exposed via Skill.frontmatter."""

    def test_basic_construction_defaults(self) -> None:
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="A description."), instructions="Do it."
        )
        assert skill.frontmatter.name == "my-skill"
        assert skill.frontmatter.description == "A description."
        assert skill.frontmatter.license is None
        assert skill.frontmatter.compatibility is None
        assert skill.frontmatter.allowed_tools is None
        assert skill.frontmatter.metadata is None

    def test_all_fields_on_inline_skill(self) -> None:
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(
                name="my-skill",
                description="A description.",
                license="MIT",
                compatibility="Works with GPT-4",
                allowed_tools="tool1 tool2",
                metadata={"author": "test", "version": "1.0"},
            ),
            instructions="Do it.",
        )
        assert skill.frontmatter.license == "MIT"
        assert skill.frontmatter.compatibility == "Works with GPT-4"
        assert skill.frontmatter.allowed_tools == "tool1 tool2"
        assert skill.frontmatter.metadata == {"author": "test", "version": "1.0"}

    def test_compatibility_too_long_raises(self) -> None:
        with pytest.raises(ValueError):
            InlineSkill(
                frontmatter=SkillFrontmatter(name="my-skill", description="A description.", compatibility="a" * 501),
                instructions="Do it.",
            )

    def test_compatibility_exactly_max_length(self) -> None:
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="A description.", compatibility="a" * 500),
            instructions="Do it.",
        )
        assert skill.frontmatter.compatibility == "a" * 500

    def test_file_skill_spec_fields(self) -> None:
        skill = FileSkill(
            frontmatter=SkillFrontmatter(
                name="my-skill",
                description="Test.",
                license="MIT",
                compatibility="compat info",
                allowed_tools="tool1",
                metadata={"key": "val"},
            ),
            content="---\nname: my-skill\n---",
            path="/skills/my-skill",
        )
        assert skill.frontmatter.license == "MIT"
        assert skill.frontmatter.compatibility == "compat info"
        assert skill.frontmatter.allowed_tools == "tool1"
        assert skill.frontmatter.metadata == {"key": "val"}


# ---------------------------------------------------------------------------
# Tests: SkillFrontmatter class and two-form constructors
# ---------------------------------------------------------------------------


class TestSkillFrontmatter:
    """Tests for the :class:`SkillFrontmatter` class."""

    def test_basic_construction(self) -> None:
        fm = SkillFrontmatter(name="my-skill", description="A test skill.")
        assert fm.name == "my-skill"
        assert fm.description == "A test skill."
        assert fm.license is None
        assert fm.compatibility is None
        assert fm.allowed_tools is None
        assert fm.metadata is None

    def test_all_fields(self) -> None:
        fm = SkillFrontmatter(
            name="my-skill",
            description="Desc.",
            license="MIT",
            compatibility="GPT-4",
            allowed_tools="tool1",
            metadata={"key": "val"},
        )
        assert fm.license == "MIT"
        assert fm.compatibility == "GPT-4"
        assert fm.allowed_tools == "tool1"
        assert fm.metadata == {"key": "val"}

    def test_invalid_name_raises(self) -> None:
        with pytest.raises(ValueError):
            SkillFrontmatter(name="Bad Name!", description="Desc.")

    def test_invalid_description_raises(self) -> None:
        with pytest.raises(ValueError):
            SkillFrontmatter(name="my-skill", description="")

    def test_invalid_compatibility_raises(self) -> None:
        with pytest.raises(ValueError):
            SkillFrontmatter(name="my-skill", description="Desc.", compatibility="a" * 501)

    def test_compatibility_can_be_reassigned(self) -> None:
        fm = SkillFrontmatter(name="my-skill", description="Desc.")
        fm.compatibility = "a" * 500
        assert fm.compatibility == "a" * 500
        # Plain attribute: post-construction assignment is not re-validated.
        fm.compatibility = "a" * 501
        assert fm.compatibility == "a" * 501

    def test_metadata_is_shallow_copied(self) -> None:
        original = {"key": "val"}
        fm = SkillFrontmatter(name="my-skill", description="Desc.", metadata=original)
        original["key"] = "mutated"
        assert fm.metadata == {"key": "val"}

    def test_name_is_mutable(self) -> None:
        fm = SkillFrontmatter(name="my-skill", description="Desc.")
        fm.name = "other-skill"
        assert fm.name == "other-skill"

    def test_description_is_mutable(self) -> None:
        fm = SkillFrontmatter(name="my-skill", description="Desc.")
        fm.description = "Other description."
        assert fm.description == "Other description."


class TestExtractFrontmatterSpecFields:
    """Tests for _extract_frontmatter parsing all agentskills.io spec fields."""









    async def test_file_skill_fields_populated_from_discovery(self, tmp_path: Path) -> None:
        """End-to-end: spec fields are populated on FileSkill via discovery."""
        skill_dir = tmp_path / "test-skill"
        skill_dir.mkdir()
        skill_md = skill_dir / "SKILL.md"
        skill_md.write_text(
            "---\n"
            "name: test-skill\n"
            "description: A test skill.\n"
            "license: MIT\n"
            "compatibility: GPT-4\n"
            "allowed-tools: tool1\n"
            "metadata:\n"
            "  key: value\n"
            "---\n"
            "Instructions.",
            encoding="utf-8",
        )
        source = FileSkillsSource(str(tmp_path))
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 1
        skill = skills[0]
        assert isinstance(skill, FileSkill)
        assert skill.frontmatter.license == "MIT"
        assert skill.frontmatter.compatibility == "GPT-4"
        assert skill.frontmatter.allowed_tools == "tool1"
        assert skill.frontmatter.metadata == {"key": "value"}



# ---------------------------------------------------------------------------
# Tests: _create_instructions edge cases
# ---------------------------------------------------------------------------


class TestCreateInstructionsEdgeCases:
    """Additional edge-case tests for _create_instructions."""













# ---------------------------------------------------------------------------
# Tests: SkillsProvider edge cases
# ---------------------------------------------------------------------------


class TestSkillsProviderEdgeCases:
    """Additional edge-case tests for SkillsProvider."""









    async def test_before_run_extends_tools_even_without_instructions(self) -> None:
        """If instructions are somehow None but skills exist, tools should still be added."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")
        provider = SkillsProvider([skill])
        context = SessionContext(input_messages=[])

        await provider.before_run(agent=AsyncMock(), session=AsyncMock(), context=context, state={})

        tool_names = {t.name for t in context.tools}
        assert len(context.tools) == 3
        assert tool_names == {"load_skill", "read_skill_resource", "run_skill_script"}


# ---------------------------------------------------------------------------
# Tests: SkillResource edge cases
# ---------------------------------------------------------------------------


class TestSkillResourceEdgeCases:
    """Additional edge-case tests for SkillResource."""

    def test_empty_name_raises(self) -> None:
        with pytest.raises(ValueError, match="cannot be empty"):
            InlineSkillResource(name="", content="data")

    def test_whitespace_only_name_raises(self) -> None:
        with pytest.raises(ValueError, match="cannot be empty"):
            InlineSkillResource(name="   ", content="data")

    def test_description_defaults_to_none(self) -> None:
        r = InlineSkillResource(name="ref", content="data")
        assert r.description is None


# ---------------------------------------------------------------------------
# Tests: SkillResource.read()
# ---------------------------------------------------------------------------


class TestSkillResourceRead:
    """Tests for SkillResource.read() method."""

    async def test_read_static_content(self) -> None:
        """read() returns static content directly."""
        r = InlineSkillResource(name="ref", content="hello")
        result = await r.read()
        assert result == "hello"

    async def test_read_sync_function(self) -> None:
        """read() invokes a sync function and returns its result."""
        r = InlineSkillResource(name="ref", function=lambda: "computed")
        result = await r.read()
        assert result == "computed"

    async def test_read_async_function(self) -> None:
        """read() awaits an async function and returns its result."""

        async def get_data() -> str:
            return "async result"

        r = InlineSkillResource(name="ref", function=get_data)
        result = await r.read()
        assert result == "async result"

    async def test_read_function_with_kwargs(self) -> None:
        """read() forwards kwargs to functions that accept them."""

        def get_config(**kwargs: Any) -> str:
            return f"user={kwargs.get('user_id')}"

        r = InlineSkillResource(name="ref", function=get_config)
        result = await r.read(user_id="u42")
        assert result == "user=u42"

    async def test_read_async_function_with_kwargs(self) -> None:
        """read() forwards kwargs to async functions that accept them."""

        async def get_config(**kwargs: Any) -> str:
            return f"user={kwargs.get('user_id')}"

        r = InlineSkillResource(name="ref", function=get_config)
        result = await r.read(user_id="u42")
        assert result == "user=u42"

    async def test_read_function_without_kwargs_ignores_extra(self) -> None:
        """read() does not pass kwargs to functions that don't accept them."""

        def simple() -> str:
            return "fixed"

        r = InlineSkillResource(name="ref", function=simple)
        result = await r.read(user_id="ignored")
        assert result == "fixed"

    async def test_read_function_raises_propagates(self) -> None:
        """read() propagates exceptions from the function."""

        def failing() -> str:
            raise RuntimeError("boom")

        r = InlineSkillResource(name="ref", function=failing)
        with pytest.raises(RuntimeError, match="boom"):
            await r.read()


# ---------------------------------------------------------------------------
# Tests: Skill.resource decorator edge cases
# ---------------------------------------------------------------------------


class TestSkillResourceDecoratorEdgeCases:
    """Additional edge-case tests for the @skill.resource decorator."""

    def test_decorator_no_docstring_description_is_none(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource
        def no_docs() -> Any:
            return "data"

        assert skill._resources[0].description is None

    def test_decorator_with_name_only(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource(name="custom-name")
        def get_data() -> Any:
            """Some docs."""
            return "data"

        assert skill._resources[0].name == "custom-name"
        # description is None when not explicitly provided
        assert skill._resources[0].description is None

    def test_decorator_with_description_only(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource(description="Custom desc")
        def get_data() -> Any:
            return "data"

        assert skill._resources[0].name == "get_data"
        assert skill._resources[0].description == "Custom desc"

    def test_decorator_preserves_original_function_identity(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="A skill."), instructions="Body")

        @skill.resource
        def original() -> Any:
            return "original"

        @skill.resource(name="aliased")
        def aliased() -> Any:
            return "aliased"

        # Both decorated functions should still be callable
        assert original() == "original"
        assert aliased() == "aliased"


# ---------------------------------------------------------------------------
# SkillScript tests
# ---------------------------------------------------------------------------


class TestSkillScript:
    """Tests for the SkillScript data model."""

    def test_empty_name_raises(self) -> None:
        with pytest.raises(ValueError, match="Script name cannot be empty"):
            InlineSkillScript(name="", function=lambda: None)

    def test_whitespace_name_raises(self) -> None:
        with pytest.raises(ValueError, match="Script name cannot be empty"):
            InlineSkillScript(name="   ", function=lambda: None)

    def test_inline_script_has_no_path(self) -> None:
        script = InlineSkillScript(name="test", function=lambda: None)
        assert not hasattr(script, "path")

    def test_full_path_set_explicitly(self) -> None:
        script = FileSkillScript(name="gen.py", full_path=f"{_ABS}/my-skill/scripts/gen.py")
        assert script.full_path == f"{_ABS}/my-skill/scripts/gen.py"

    def test_create_with_function(self) -> None:
        script = InlineSkillScript(name="analyze", description="Run analysis", function=lambda: "result")
        assert script.name == "analyze"
        assert script.description == "Run analysis"
        assert script.function is not None






class TestSkillScriptRun:
    """Tests for SkillScript.run()."""

    async def test_run_code_defined_sync(self) -> None:
        def greet(name: str = "world") -> str:
            return f"hello {name}"

        script = InlineSkillScript(name="greet", function=greet)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill, args={"name": "Alice"})
        assert result == "hello Alice"

    async def test_run_code_defined_async(self) -> None:
        async def greet(name: str = "world") -> str:
            return f"async {name}"

        script = InlineSkillScript(name="greet", function=greet)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill, args={"name": "Bob"})
        assert result == "async Bob"

    async def test_run_code_defined_with_kwargs(self) -> None:
        def func(x: int = 0, **kwargs: Any) -> dict[str, Any]:
            return {"x": x, **kwargs}

        script = InlineSkillScript(name="f", function=func)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill, args={"x": 1}, extra="val")
        assert result == {"x": 1, "extra": "val"}

    async def test_run_code_defined_no_args(self) -> None:
        script = InlineSkillScript(name="f", function=lambda: 42)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill)
        assert result == 42

    async def test_run_file_based_with_runner(self) -> None:
        captured: dict[str, Any] = {}

        def runner(skill: Skill, script: SkillScript, args: dict[str, Any] | None = None) -> str:
            captured["skill"] = skill.frontmatter.name
            captured["script"] = script.name
            captured["args"] = args
            return "runner_result"

        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py", runner=runner)  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="d"), content="c", path=f"{_ABS}/test"
        )
        result = await script.run(skill, args={"key": "val"})
        assert result == "runner_result"
        assert captured["skill"] == "my-skill"
        assert captured["script"] == "run.py"
        assert captured["args"] == {"key": "val"}

    async def test_run_file_based_with_async_runner(self) -> None:
        async def runner(skill: Skill, script: SkillScript, args: dict[str, Any] | None = None) -> str:
            return "async_runner"

        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py", runner=runner)  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
        skill = FileSkill(frontmatter=SkillFrontmatter(name="s", description="d"), content="c", path=f"{_ABS}/test")
        result = await script.run(skill, args=None)
        assert result == "async_runner"

    async def test_run_file_based_without_runner_raises(self) -> None:
        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py")
        skill = FileSkill(frontmatter=SkillFrontmatter(name="s", description="d"), content="c", path=f"{_ABS}/test")
        with pytest.raises(ValueError, match="requires a runner"):
            await script.run(skill)

    async def test_run_file_based_with_non_file_skill_raises_type_error(self) -> None:
        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py", runner=_noop_script_runner)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        with pytest.raises(TypeError, match="requires a FileSkill"):
            await script.run(skill)

    def test_full_path_rejects_relative(self) -> None:
        with pytest.raises(ValueError, match="absolute path"):
            FileSkillScript(name="run.py", full_path="scripts/run.py")

    def test_full_path_rejects_empty(self) -> None:
        with pytest.raises(ValueError, match="cannot be empty"):
            FileSkillScript(name="run.py", full_path="")


# ---------------------------------------------------------------------------
# @skill.script decorator tests
# ---------------------------------------------------------------------------


class TestSkillScriptDecorator:
    """Tests for the @skill.script decorator."""

    def test_bare_decorator(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body")

        @skill.script
        def analyze(query: str) -> str:
            """Run analysis."""
            return "result"

        assert len(skill._scripts) == 1
        assert skill._scripts[0].name == "analyze"
        assert skill._scripts[0].description is None
        assert isinstance(skill._scripts[0], InlineSkillScript)
        assert skill._scripts[0].function is analyze

    def test_parameterized_decorator(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body")

        @skill.script(name="custom-name", description="Custom desc")
        def my_func() -> str:
            return "data"

        assert len(skill._scripts) == 1
        assert skill._scripts[0].name == "custom-name"
        assert skill._scripts[0].description == "Custom desc"
        assert isinstance(skill._scripts[0], InlineSkillScript)
        assert skill._scripts[0].function is my_func

    def test_multiple_scripts(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body")

        @skill.script
        def script_a() -> str:
            return "a"

        @skill.script
        def script_b() -> str:
            return "b"

        assert len(skill._scripts) == 2
        assert skill._scripts[0].name == "script_a"
        assert skill._scripts[1].name == "script_b"

    def test_async_script(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body")

        @skill.script
        async def fetch_data() -> str:
            """Fetch remote data."""
            return "data"

        assert len(skill._scripts) == 1
        assert skill._scripts[0].name == "fetch_data"
        assert isinstance(skill._scripts[0], InlineSkillScript)
        assert skill._scripts[0].function is fetch_data

    def test_decorator_returns_original_function(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body")

        @skill.script
        def original() -> str:
            return "original"

        @skill.script(name="aliased")
        def aliased() -> str:
            return "aliased"

        assert original() == "original"
        assert aliased() == "aliased"


# ---------------------------------------------------------------------------
# Skill with scripts attribute tests
# ---------------------------------------------------------------------------


class TestSkillWithScripts:
    """Tests for the Skill class with scripts attribute."""

    def test_default_empty_scripts(self) -> None:
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body")
        assert skill._scripts == []

    def test_scripts_at_construction(self) -> None:
        scripts = [InlineSkillScript(name="s1", function=lambda: None)]
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="test"), instructions="body", scripts=scripts
        )
        assert len(skill._scripts) == 1
        assert skill._scripts[0].name == "s1"


# ---------------------------------------------------------------------------
# Runner tests
# ---------------------------------------------------------------------------


class TestSkillScriptRunnerProtocol:
    """Tests for the SkillScriptRunner protocol."""

    async def test_async_callable_satisfies_protocol(self) -> None:
        results: list[tuple] = []

        async def my_runner(skill, script, args=None):
            results.append((skill.frontmatter.name, script.name, args))
            return "executed"

        assert isinstance(my_runner, SkillScriptRunner)

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = FileSkillScript(name="my-script", full_path=f"{_ABS}/test/scripts/run.py")
        skill._scripts.append(script)

        result = await my_runner(skill, script, args={"key": "val"})  # pyrefly: ignore[bad-argument-type]

        assert result == "executed"
        assert len(results) == 1
        assert results[0] == ("test-skill", "my-script", {"key": "val"})

    async def test_callable_class_satisfies_protocol(self) -> None:
        class _CustomRunner:
            async def __call__(self, skill, script, args=None):
                return "custom result"

        runner = _CustomRunner()
        assert isinstance(runner, SkillScriptRunner)

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = InlineSkillScript(name="my-script", function=lambda: None)
        skill._scripts.append(script)

        result = await runner(skill, script, args={"key": "val"})  # type: ignore[arg-type]
        assert result == "custom result"

    async def test_runner_returns_none(self) -> None:
        async def noop_runner(skill, script, args=None):
            return None

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = InlineSkillScript(name="s1", function=lambda: None)

        result = await noop_runner(skill, script)
        assert result is None

    async def test_runner_returns_object(self) -> None:
        async def dict_runner(skill, script, args=None):
            return {"exit_code": 0, "output": "ok"}

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = FileSkillScript(name="s1", full_path=f"{_ABS}/test/scripts/run.py")

        result = await dict_runner(skill, script)
        assert result == {"exit_code": 0, "output": "ok"}

    def test_sync_callable_satisfies_protocol(self) -> None:
        results: list[tuple] = []

        def my_runner(skill, script, args=None):
            results.append((skill.frontmatter.name, script.name, args))
            return "executed"

        assert isinstance(my_runner, SkillScriptRunner)

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = FileSkillScript(name="my-script", full_path=f"{_ABS}/test/scripts/run.py")
        skill._scripts.append(script)

        result = my_runner(skill, script, args={"key": "val"})  # pyrefly: ignore[bad-argument-type]

        assert result == "executed"
        assert len(results) == 1
        assert results[0] == ("test-skill", "my-script", {"key": "val"})

    def test_sync_callable_class_satisfies_protocol(self) -> None:
        class _SyncRunner:
            def __call__(self, skill, script, args=None):
                return "sync result"

        runner = _SyncRunner()
        assert isinstance(runner, SkillScriptRunner)

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = InlineSkillScript(name="my-script", function=lambda: None)
        skill._scripts.append(script)

        result = runner(skill, script, args={"key": "val"})  # type: ignore[arg-type]
        assert result == "sync result"

    def test_sync_runner_returns_none(self) -> None:
        def noop_runner(skill, script, args=None):
            return None

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = InlineSkillScript(name="s1", function=lambda: None)

        result = noop_runner(skill, script)
        assert result is None

    def test_sync_runner_returns_object(self) -> None:
        def dict_runner(skill, script, args=None):
            return {"exit_code": 0, "output": "ok"}

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        script = FileSkillScript(name="s1", full_path=f"{_ABS}/test/scripts/run.py")

        result = dict_runner(skill, script)
        assert result == {"exit_code": 0, "output": "ok"}


# ---------------------------------------------------------------------------
# SkillsProvider static factory tests
# ---------------------------------------------------------------------------


class TestSkillsProviderFactories:
    """Tests for the SkillsProvider constructor auto-wiring behavior."""






































    async def test_tool_name_constants(self) -> None:
        """The provider exposes its tool names as class constants."""
        assert SkillsProvider.LOAD_SKILL_TOOL_NAME == "load_skill"
        assert SkillsProvider.READ_SKILL_RESOURCE_TOOL_NAME == "read_skill_resource"
        assert SkillsProvider.RUN_SKILL_SCRIPT_TOOL_NAME == "run_skill_script"

    async def test_read_only_tools_auto_approval_rule(self) -> None:
        """The read-only rule approves only load_skill and read_skill_resource."""
        approved = {
            SkillsProvider.LOAD_SKILL_TOOL_NAME,
            SkillsProvider.READ_SKILL_RESOURCE_TOOL_NAME,
        }
        rejected = {
            SkillsProvider.RUN_SKILL_SCRIPT_TOOL_NAME,
            "some_other_tool",
        }
        for name in approved:
            call = Content("function_call", call_id="c1", name=name, arguments="{}")
            assert SkillsProvider.read_only_tools_auto_approval_rule(call) is True
        for name in rejected:
            call = Content("function_call", call_id="c1", name=name, arguments="{}")
            assert SkillsProvider.read_only_tools_auto_approval_rule(call) is False
        # A hosted tool with the same name (carrying a server_label) is NOT auto-approved.
        for name in approved:
            hosted = Content(
                "function_call",
                call_id="c1",
                name=name,
                arguments="{}",
                additional_properties={"server_label": "remote"},
            )
            assert SkillsProvider.read_only_tools_auto_approval_rule(hosted) is False

    async def test_all_tools_auto_approval_rule(self) -> None:
        """The all-tools rule approves every skill tool but nothing else."""
        for name in (
            SkillsProvider.LOAD_SKILL_TOOL_NAME,
            SkillsProvider.READ_SKILL_RESOURCE_TOOL_NAME,
            SkillsProvider.RUN_SKILL_SCRIPT_TOOL_NAME,
        ):
            call = Content("function_call", call_id="c1", name=name, arguments="{}")
            assert SkillsProvider.all_tools_auto_approval_rule(call) is True
            # A hosted tool with the same name (carrying a server_label) is NOT auto-approved.
            hosted = Content(
                "function_call",
                call_id="c1",
                name=name,
                arguments="{}",
                additional_properties={"server_label": "remote"},
            )
            assert SkillsProvider.all_tools_auto_approval_rule(hosted) is False

        unrelated = Content("function_call", call_id="c1", name="some_other_tool", arguments="{}")
        assert SkillsProvider.all_tools_auto_approval_rule(unrelated) is False




# ---------------------------------------------------------------------------
# File script discovery tests
# ---------------------------------------------------------------------------


class TestFileScriptDiscovery:
    """Tests for automatic .py script discovery in skill directories."""

    async def test_discovers_py_files_in_scripts_dir(self, tmp_path: Path) -> None:
        skill_dir = tmp_path / "my-skill"
        scripts_dir = skill_dir / "scripts"
        scripts_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (scripts_dir / "analyze.py").write_text("print('hi')", encoding="utf-8")

        skills = await _discover_file_skills_for_test(str(tmp_path))
        assert "my-skill" in skills
        assert len(skills["my-skill"]._scripts) == 1
        assert skills["my-skill"]._scripts[0].name == "scripts/analyze.py"

    async def test_root_py_files_discovered_by_default(self, tmp_path: Path) -> None:
        """Scripts at the skill root ARE discovered with default depth=2."""
        skill_dir = tmp_path / "my-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (skill_dir / "analyze.py").write_text("print('hi')", encoding="utf-8")

        skills = await _discover_file_skills_for_test(str(tmp_path))
        assert "my-skill" in skills
        assert len(skills["my-skill"]._scripts) == 1
        assert skills["my-skill"]._scripts[0].name == "analyze.py"

    async def test_discovered_script_has_absolute_full_path(self, tmp_path: Path) -> None:
        skill_dir = tmp_path / "my-skill"
        scripts_dir = skill_dir / "scripts"
        scripts_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (scripts_dir / "generate.py").write_text("print('gen')", encoding="utf-8")

        skills = await _discover_file_skills_for_test(str(tmp_path))
        script = skills["my-skill"]._scripts[0]
        assert script.full_path is not None  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert os.path.isabs(script.full_path)  # type: ignore[attr-defined]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[unresolved-attribute]
        expected = str(Path(str(skill_dir), "scripts", "generate.py"))
        assert script.full_path == expected  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    async def test_scripts_not_discovered_recursively(self, tmp_path: Path) -> None:
        """Scripts inside subdirectories of scripts/ are NOT discovered (non-recursive)."""
        skill_dir = tmp_path / "my-skill"
        scripts_dir = skill_dir / "scripts"
        scripts_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        # File directly in scripts/ is discovered
        (scripts_dir / "top.py").write_text("print('top')", encoding="utf-8")
        # File in scripts/sub/ is NOT discovered
        sub_dir = scripts_dir / "sub"
        sub_dir.mkdir()
        (sub_dir / "nested.py").write_text("print('nested')", encoding="utf-8")

        skills = await _discover_file_skills_for_test(str(tmp_path))
        assert len(skills["my-skill"]._scripts) == 1
        assert skills["my-skill"]._scripts[0].name == "scripts/top.py"

    async def test_no_scripts_when_no_py_files(self, tmp_path: Path) -> None:
        skill_dir = tmp_path / "my-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (skill_dir / "readme.md").write_text("# Docs", encoding="utf-8")

        skills = await _discover_file_skills_for_test(str(tmp_path))
        assert len(skills["my-skill"]._scripts) == 0


class TestCustomScriptExtensions:
    """Tests for the script_extensions parameter (parity with resource_extensions)."""

    async def test_custom_script_extensions_via_get_skills(self, tmp_path: Path) -> None:
        """get_skills() forwards script_extensions to _discover_script_files."""
        skill_dir = tmp_path / "my-skill"
        scripts_dir = skill_dir / "scripts"
        scripts_dir.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: test\n---\nBody",
            encoding="utf-8",
        )
        (scripts_dir / "analyze.py").write_text("print('hi')", encoding="utf-8")
        (scripts_dir / "run.sh").write_text("#!/bin/bash", encoding="utf-8")

        # Default: only .py discovered
        skills_default = await _discover_file_skills_for_test(str(tmp_path))
        script_names_default = [s.name for s in skills_default["my-skill"]._scripts]
        assert "scripts/analyze.py" in script_names_default
        assert "scripts/run.sh" not in script_names_default

        # Custom: only .sh discovered
        skills_custom = await _discover_file_skills_for_test(str(tmp_path), script_extensions=(".sh",))
        script_names_custom = [s.name for s in skills_custom["my-skill"]._scripts]
        assert "scripts/run.sh" in script_names_custom
        assert "scripts/analyze.py" not in script_names_custom





# ---------------------------------------------------------------------------
# _create_instructions with scripts tests
# ---------------------------------------------------------------------------


class TestCreateInstructionsWithScripts:
    """Tests for script metadata in skill advertisement."""




# ---------------------------------------------------------------------------
# _load_skill with scripts tests
# ---------------------------------------------------------------------------


class TestLoadSkillWithScripts:
    """Tests for script metadata in load_skill output."""




# ---------------------------------------------------------------------------
# Tests: ClassSkill
# ---------------------------------------------------------------------------


class _MinimalClassSkill(ClassSkill):
    """A minimal class-based skill with no resources or scripts."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="minimal-skill", description="A minimal skill."))

    @property
    def instructions(self) -> str:
        return "Do minimal things."


class _FullClassSkill(ClassSkill):
    """A class-based skill with resources and scripts."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="full-skill", description="A full skill."))
        self._resources: list[SkillResource] | None = None
        self._scripts: list[SkillScript] | None = None

    @property
    def instructions(self) -> str:
        return "Use this skill for full tasks."

    @property
    def resources(self) -> list[SkillResource]:
        if self._resources is None:
            self._resources = [
                InlineSkillResource(name="test-resource", content="Static resource content."),
            ]
        return self._resources

    @property
    def scripts(self) -> list[SkillScript]:
        if self._scripts is None:
            self._scripts = [
                InlineSkillScript(name="test-script", function=_class_skill_test_fn),
            ]
        return self._scripts


def _class_skill_test_fn(value: float, factor: float) -> str:
    """Multiply value by factor."""
    import json as _json

    return _json.dumps({"result": round(value * factor, 4)})


class TestClassSkill:
    """Tests for ClassSkill abstract base class."""

    def test_minimal_skill_has_no_resources(self) -> None:
        skill = _MinimalClassSkill()
        assert skill.resources == []

    def test_minimal_skill_has_no_scripts(self) -> None:
        skill = _MinimalClassSkill()
        assert skill.scripts == []

    async def test_minimal_skill_content_contains_name(self) -> None:
        skill = _MinimalClassSkill()
        assert "<name>minimal-skill</name>" in (await skill.get_content())

    async def test_minimal_skill_content_contains_description(self) -> None:
        skill = _MinimalClassSkill()
        assert "<description>A minimal skill.</description>" in (await skill.get_content())

    async def test_minimal_skill_content_contains_instructions(self) -> None:
        skill = _MinimalClassSkill()
        assert "Do minimal things." in (await skill.get_content())

    async def test_minimal_skill_content_emits_empty_resources_element(self) -> None:
        skill = _MinimalClassSkill()
        assert "<available_resources />" in (await skill.get_content())

    async def test_minimal_skill_content_emits_empty_scripts_element(self) -> None:
        skill = _MinimalClassSkill()
        assert "<available_scripts />" in (await skill.get_content())

    def test_full_skill_has_resources(self) -> None:
        skill = _FullClassSkill()
        assert len(skill.resources) == 1
        assert skill.resources[0].name == "test-resource"

    def test_full_skill_has_scripts(self) -> None:
        skill = _FullClassSkill()
        assert len(skill.scripts) == 1
        assert skill.scripts[0].name == "test-script"

    async def test_full_skill_content_contains_resources(self) -> None:
        skill = _FullClassSkill()
        assert "<available_resources>" in (await skill.get_content())
        assert 'name="test-resource"' in (await skill.get_content())

    async def test_full_skill_content_contains_scripts(self) -> None:
        skill = _FullClassSkill()
        assert "<available_scripts>" in (await skill.get_content())
        assert 'name="test-script"' in (await skill.get_content())

    async def test_content_is_cached(self) -> None:
        skill = _MinimalClassSkill()
        content1 = await skill.get_content()
        content2 = await skill.get_content()
        assert content1 is content2

    def test_resources_are_lazy_cached(self) -> None:
        skill = _FullClassSkill()
        resources1 = skill.resources
        resources2 = skill.resources
        assert resources1 is resources2

    def test_scripts_are_lazy_cached(self) -> None:
        skill = _FullClassSkill()
        scripts1 = skill.scripts
        scripts2 = skill.scripts
        assert scripts1 is scripts2

    def test_script_has_parameters_schema(self) -> None:
        skill = _FullClassSkill()
        script = skill.scripts[0]
        assert isinstance(script, InlineSkillScript)
        schema = script.parameters_schema
        assert schema is not None
        assert "value" in schema.get("properties", {})
        assert "factor" in schema.get("properties", {})



    async def test_in_memory_source_with_class_skill(self) -> None:
        skill = _MinimalClassSkill()
        source = InMemorySkillsSource([skill])
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 1
        assert skills[0].frontmatter.name == "minimal-skill"


    async def test_class_skill_script_runs(self) -> None:
        skill = _FullClassSkill()
        script = skill.scripts[0]
        result = await script.run(skill, {"value": 10.0, "factor": 2.5})
        import json as _json

        parsed = _json.loads(result)
        assert parsed["result"] == 25.0

    async def test_class_skill_resource_reads(self) -> None:
        skill = _FullClassSkill()
        resource = skill.resources[0]
        content = await resource.read()
        assert content == "Static resource content."


# ---------------------------------------------------------------------------
# Tests: ClassSkill with decorator-based discovery
# ---------------------------------------------------------------------------


class _DecoratorClassSkill(ClassSkill):
    """A class-based skill using @ClassSkill.resource and @ClassSkill.script decorators."""

    def __init__(self) -> None:
        super().__init__(
            frontmatter=SkillFrontmatter(name="decorator-skill", description="A decorator-discovered skill.")
        )

    @property
    def instructions(self) -> str:
        return "Use this skill for decorator tests."

    @ClassSkill.resource(name="lookup-table")
    def get_table(self) -> str:
        """Conversion lookup table."""
        return "| From | To | Factor |"

    @ClassSkill.script(name="convert")
    def run_convert(self, value: float, factor: float) -> str:
        """Convert a value."""
        import json as _json

        return _json.dumps({"result": round(value * factor, 4)})


class _BareDecoratorSkill(ClassSkill):
    """Skill using bare decorators (no arguments) — name/description from method."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="bare-skill", description="Bare decorator skill."))

    @property
    def instructions(self) -> str:
        return "Bare instructions."

    @ClassSkill.resource
    def my_table(self) -> str:
        """The table docs."""
        return "table content"

    @ClassSkill.script
    def my_script(self, x: int) -> int:
        """Double x."""
        return x * 2


class _DuplicateResourceSkill(ClassSkill):
    """Skill with duplicate resource names — should raise."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="dup-skill", description="Dup."))

    @property
    def instructions(self) -> str:
        return "x"

    @ClassSkill.resource(name="same-name")
    def res_a(self) -> str:
        return "a"

    @ClassSkill.resource(name="same-name")
    def res_b(self) -> str:
        return "b"


class _DuplicateScriptSkill(ClassSkill):
    """Skill with duplicate script names — should raise."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="dup-script-skill", description="Dup."))

    @property
    def instructions(self) -> str:
        return "x"

    @ClassSkill.script(name="same-name")
    def script_a(self, x: int) -> int:
        return x

    @ClassSkill.script(name="same-name")
    def script_b(self, x: int) -> int:
        return x


class _SelfAccessSkill(ClassSkill):
    """Skill where resource/script access instance state via self."""

    def __init__(self, multiplier: int = 10) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="self-access", description="Self access skill."))
        self.multiplier = multiplier

    @property
    def instructions(self) -> str:
        return "Use multiplier."

    @ClassSkill.resource(name="config")
    def get_config(self) -> str:
        return f"multiplier={self.multiplier}"

    @ClassSkill.script(name="multiply")
    def multiply(self, value: int) -> int:
        return value * self.multiplier


class TestClassSkillDecoratorDiscovery:
    """Tests for decorator-based resource/script discovery on ClassSkill."""

    def test_discovers_resources(self) -> None:
        skill = _DecoratorClassSkill()
        assert len(skill.resources) == 1
        assert skill.resources[0].name == "lookup-table"

    def test_discovers_scripts(self) -> None:
        skill = _DecoratorClassSkill()
        assert len(skill.scripts) == 1
        assert skill.scripts[0].name == "convert"

    def test_resource_description_from_decorator(self) -> None:
        skill = _DecoratorClassSkill()
        assert skill.resources[0].description is None

    def test_script_description_from_decorator(self) -> None:
        skill = _DecoratorClassSkill()
        assert skill.scripts[0].description is None

    def test_bare_decorator_name_from_method(self) -> None:
        skill = _BareDecoratorSkill()
        assert skill.resources[0].name == "my-table"
        assert skill.scripts[0].name == "my-script"

    def test_bare_decorator_description_is_none(self) -> None:
        skill = _BareDecoratorSkill()
        assert skill.resources[0].description is None
        assert skill.scripts[0].description is None

    async def test_resource_reads(self) -> None:
        skill = _DecoratorClassSkill()
        content = await skill.resources[0].read()
        assert content == "| From | To | Factor |"

    async def test_script_runs(self) -> None:
        skill = _DecoratorClassSkill()
        import json as _json

        result = await skill.scripts[0].run(skill, {"value": 10.0, "factor": 2.5})
        parsed = _json.loads(result)
        assert parsed["result"] == 25.0

    def test_script_schema_excludes_self(self) -> None:
        skill = _DecoratorClassSkill()
        script = skill.scripts[0]
        assert isinstance(script, InlineSkillScript)
        schema = script.parameters_schema
        assert schema is not None
        props = schema.get("properties", {})
        assert "self" not in props
        assert "value" in props
        assert "factor" in props

    def test_resources_cached(self) -> None:
        skill = _DecoratorClassSkill()
        r1 = skill.resources
        r2 = skill.resources
        assert r1 == r2
        assert r1 is not r2  # defensive copy

    def test_scripts_cached(self) -> None:
        skill = _DecoratorClassSkill()
        s1 = skill.scripts
        s2 = skill.scripts
        assert s1 == s2
        assert s1 is not s2  # defensive copy

    async def test_content_includes_discovered_resources(self) -> None:
        skill = _DecoratorClassSkill()
        assert "<available_resources>" in (await skill.get_content())
        assert 'name="lookup-table"' in (await skill.get_content())

    async def test_content_includes_discovered_scripts(self) -> None:
        skill = _DecoratorClassSkill()
        assert "<available_scripts>" in (await skill.get_content())
        assert 'name="convert"' in (await skill.get_content())

    def test_duplicate_resource_name_raises(self) -> None:
        skill = _DuplicateResourceSkill()
        with pytest.raises(ValueError, match="already has a resource named"):
            _ = skill.resources

    def test_duplicate_script_name_raises(self) -> None:
        skill = _DuplicateScriptSkill()
        with pytest.raises(ValueError, match="already has a script named"):
            _ = skill.scripts

    async def test_self_access_resource(self) -> None:
        skill = _SelfAccessSkill(multiplier=42)
        content = await skill.resources[0].read()
        assert content == "multiplier=42"

    async def test_self_access_script(self) -> None:
        skill = _SelfAccessSkill(multiplier=3)
        result = await skill.scripts[0].run(skill, {"value": 7})
        assert result == 21

    def test_no_decorators_yields_empty(self) -> None:
        skill = _MinimalClassSkill()
        assert skill.resources == []
        assert skill.scripts == []


    def test_manual_override_wins(self) -> None:
        """A subclass that overrides resources/scripts bypasses decorator discovery."""
        skill = _FullClassSkill()
        assert len(skill.resources) == 1
        assert skill.resources[0].name == "test-resource"

    async def test_property_resource_reads(self) -> None:
        """@ClassSkill.resource on a @property works correctly."""
        skill = _PropertyResourceSkill()
        assert len(skill.resources) == 1
        assert skill.resources[0].name == "static-table"
        content = await skill.resources[0].read()
        assert "miles" in content

    def test_property_resource_description_is_none_without_explicit(self) -> None:
        skill = _PropertyResourceSkill()
        assert skill.resources[0].description is None

    async def test_property_resource_in_content(self) -> None:
        skill = _PropertyResourceSkill()
        assert 'name="static-table"' in (await skill.get_content())


    def test_explicit_resource_description_in_object(self) -> None:
        """Explicit description= on @ClassSkill.resource is stored on the object."""
        skill = _ExplicitDescriptionSkill()
        res = next(r for r in skill.resources if r.name == "described-res")
        assert res.description == "A described resource."

    def test_explicit_script_description_in_object(self) -> None:
        """Explicit description= on @ClassSkill.script is stored on the object."""
        skill = _ExplicitDescriptionSkill()
        scr = next(s for s in skill.scripts if s.name == "described-scr")
        assert scr.description == "A described script."

    async def test_explicit_description_in_content_xml(self) -> None:
        """Explicit descriptions appear in the skill content XML."""
        skill = _ExplicitDescriptionSkill()
        assert 'description="A described resource."' in (await skill.get_content())
        assert 'description="A described script."' in (await skill.get_content())

    def test_property_getter_not_called_during_discovery(self) -> None:
        """Property getter must NOT be evaluated when resources are discovered."""
        skill = _PropertyCallCountSkill()
        assert skill.getter_call_count == 0
        _ = skill.resources  # discovery should NOT call the getter
        assert skill.getter_call_count == 0

    async def test_property_getter_called_on_read(self) -> None:
        """Property getter IS evaluated when the resource is read."""
        skill = _PropertyCallCountSkill()
        _ = skill.resources
        assert skill.getter_call_count == 0
        await skill.resources[0].read()
        assert skill.getter_call_count == 1


    def test_inherited_decorated_resources_are_discovered(self) -> None:
        """Decorated resources from a parent class are discovered on subclass."""
        skill = _ChildSkill()
        names = {r.name for r in skill.resources}
        assert "parent-data" in names

    def test_inherited_decorated_scripts_are_discovered(self) -> None:
        """Decorated scripts from a parent class are discovered on subclass."""
        skill = _ChildSkill()
        names = {s.name for s in skill.scripts}
        assert "parent-action" in names

    def test_child_can_add_own_resources(self) -> None:
        """A child class can add resources alongside inherited ones."""
        skill = _ChildSkill()
        names = {r.name for r in skill.resources}
        assert "parent-data" in names
        assert "child-data" in names

    async def test_script_receives_kwargs(self) -> None:
        """ClassSkill scripts receive **kwargs forwarded from the runtime."""
        skill = _KwargsSkill()
        script = skill.scripts[0]
        result = await script.run(skill, {"x": 5}, custom_key="hello")
        assert result == "5-hello"

    def test_wrong_decorator_order_resource_raises(self) -> None:
        """@ClassSkill.resource above @property raises TypeError at class definition."""
        with pytest.raises(TypeError, match="must be applied before @property"):

            class _BadOrder(ClassSkill):
                def __init__(self) -> None:
                    super().__init__(frontmatter=SkillFrontmatter(name="bad", description="bad"))

                @property
                def instructions(self) -> str:
                    return "x"

                @ClassSkill.resource(name="oops")  # type: ignore[prop-decorator]  # wrong: should be below @property
                @property
                def bad_prop(self) -> str:
                    return "x"

    def test_wrong_decorator_order_script_raises(self) -> None:
        """@ClassSkill.script on a property raises TypeError."""
        with pytest.raises(TypeError, match="must be applied before"):

            class _BadOrder(ClassSkill):
                def __init__(self) -> None:
                    super().__init__(frontmatter=SkillFrontmatter(name="bad", description="bad"))

                @property
                def instructions(self) -> str:
                    return "x"

                @ClassSkill.script(name="oops")  # type: ignore[prop-decorator]
                @property
                def bad_prop(self) -> str:
                    return "x"

    def test_invalid_explicit_resource_name_raises(self) -> None:
        """Invalid name= on @ClassSkill.resource raises ValueError at decoration."""
        with pytest.raises(ValueError, match="Invalid @ClassSkill.resource name"):

            class _BadName(ClassSkill):
                def __init__(self) -> None:
                    super().__init__(frontmatter=SkillFrontmatter(name="bad", description="bad"))

                @property
                def instructions(self) -> str:
                    return "x"

                @ClassSkill.resource(name="UPPER CASE!")
                def res(self) -> str:
                    return "x"

    def test_invalid_explicit_script_name_raises(self) -> None:
        """Invalid name= on @ClassSkill.script raises ValueError at decoration."""
        with pytest.raises(ValueError, match="Invalid @ClassSkill.script name"):

            class _BadName(ClassSkill):
                def __init__(self) -> None:
                    super().__init__(frontmatter=SkillFrontmatter(name="bad", description="bad"))

                @property
                def instructions(self) -> str:
                    return "x"

                @ClassSkill.script(name="has spaces")
                def scr(self, x: int) -> int:
                    return x

    def test_empty_explicit_name_raises(self) -> None:
        """Empty name= on @ClassSkill.resource raises ValueError."""
        with pytest.raises(ValueError, match="name cannot be empty"):

            class _EmptyName(ClassSkill):
                def __init__(self) -> None:
                    super().__init__(frontmatter=SkillFrontmatter(name="bad", description="bad"))

                @property
                def instructions(self) -> str:
                    return "x"

                @ClassSkill.resource(name="")
                def res(self) -> str:
                    return "x"

    def test_resources_copy_prevents_cache_mutation(self) -> None:
        """Mutating the returned resources list does not affect the cache."""
        skill = _DecoratorClassSkill()
        r1 = skill.resources
        r1.clear()
        r2 = skill.resources
        assert len(r2) == 1  # original cached list is intact

    def test_scripts_copy_prevents_cache_mutation(self) -> None:
        """Mutating the returned scripts list does not affect the cache."""
        skill = _DecoratorClassSkill()
        s1 = skill.scripts
        s1.clear()
        s2 = skill.scripts
        assert len(s2) == 1  # original cached list is intact

    async def test_inherited_property_resource_discovered(self) -> None:
        """A @property @ClassSkill.resource on a parent class is discovered on child."""
        skill = _ChildWithInheritedPropertySkill()
        names = {r.name for r in skill.resources}
        assert "parent-prop" in names
        content = await next(r for r in skill.resources if r.name == "parent-prop").read()
        assert content == "parent property content"


# ---------------------------------------------------------------------------
# Helper skills for additional tests
# ---------------------------------------------------------------------------


class _ExplicitDescriptionSkill(ClassSkill):
    """Skill with explicit descriptions on decorator."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="desc-skill", description="Explicit desc."))

    @property
    def instructions(self) -> str:
        return "x"

    @ClassSkill.resource(name="described-res", description="A described resource.")
    def res(self) -> str:
        return "data"

    @ClassSkill.script(name="described-scr", description="A described script.")
    def scr(self, x: int) -> int:
        return x


class _PropertyCallCountSkill(ClassSkill):
    """Tracks how many times the property getter is called."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="callcount-skill", description="Tracks calls."))
        self.getter_call_count = 0

    @property
    def instructions(self) -> str:
        return "x"

    @property
    @ClassSkill.resource(name="counted")
    def counted_resource(self) -> str:
        self.getter_call_count += 1
        return "counted"


class _ParentSkill(ClassSkill, ABC):
    """Parent with decorated resources/scripts."""

    @ClassSkill.resource(name="parent-data")
    def parent_resource(self) -> str:
        return "parent"

    @ClassSkill.script(name="parent-action")
    def parent_script(self, x: int) -> int:
        return x


class _ChildSkill(_ParentSkill):
    """Child inheriting parent resources and adding its own."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="child-skill", description="Child."))

    @property
    def instructions(self) -> str:
        return "child"

    @ClassSkill.resource(name="child-data")
    def child_resource(self) -> str:
        return "child"


class _KwargsSkill(ClassSkill):
    """Skill that uses **kwargs from runtime."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="kwargs-skill", description="Kwargs."))

    @property
    def instructions(self) -> str:
        return "x"

    @ClassSkill.script(name="echo")
    def echo(self, x: int, **kwargs: Any) -> str:
        return f"{x}-{kwargs.get('custom_key', 'none')}"


class _ParentWithPropertyResource(ClassSkill, ABC):
    """Parent with a property-based resource."""

    @property
    @ClassSkill.resource(name="parent-prop")
    def parent_property(self) -> str:
        return "parent property content"


class _ChildWithInheritedPropertySkill(_ParentWithPropertyResource):
    """Child that should discover inherited property resource."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="child-prop-skill", description="Child prop."))

    @property
    def instructions(self) -> str:
        return "x"


class _PropertyResourceSkill(ClassSkill):
    """Skill with a property-based resource."""

    def __init__(self) -> None:
        super().__init__(frontmatter=SkillFrontmatter(name="prop-skill", description="Property skill."))

    @property
    def instructions(self) -> str:
        return "Use this skill."

    @property
    @ClassSkill.resource(name="static-table")
    def conversion_table(self) -> str:
        """Static conversion table."""
        return "| miles | km | 1.60934 |"




class TestReadSkillResourceWithScripts:
    """Tests for _read_skill_resource falling back to scripts."""








# ---------------------------------------------------------------------------
# Tests: _generate_function_schema
# ---------------------------------------------------------------------------


class TestGenerateFunctionSchema:
    """Tests for SkillScript.parameters_schema lazy generation."""

    def test_simple_function(self) -> None:
        def analyze(query: str, limit: int) -> str:
            return ""

        script = InlineSkillScript(name="analyze", function=analyze)
        schema = script.parameters_schema
        assert schema is not None
        assert schema["type"] == "object"
        assert "query" in schema["properties"]
        assert "limit" in schema["properties"]
        assert "query" in schema["required"]
        assert "limit" in schema["required"]

    def test_optional_parameter(self) -> None:
        def fetch(url: str, timeout: int = 30) -> str:
            return ""

        script = InlineSkillScript(name="fetch", function=fetch)
        schema = script.parameters_schema
        assert schema is not None
        assert "url" in schema["properties"]
        assert "timeout" in schema["properties"]
        assert "url" in schema["required"]
        # timeout has a default, so it should NOT be in required
        assert "timeout" not in schema.get("required", [])

    def test_no_parameters_returns_none(self) -> None:
        def noop() -> None:
            pass

        script = InlineSkillScript(name="noop", function=noop)
        assert script.parameters_schema is None

    def test_skips_self_and_cls(self) -> None:
        def method(self, query: str) -> str:  # noqa: ANN001
            return ""

        script = InlineSkillScript(name="method", function=method)
        schema = script.parameters_schema
        assert schema is not None
        assert "self" not in schema["properties"]
        assert "query" in schema["properties"]

    def test_skips_var_keyword(self) -> None:
        def func(name: str, **kwargs: Any) -> str:
            return ""

        script = InlineSkillScript(name="func", function=func)
        schema = script.parameters_schema
        assert schema is not None
        assert "kwargs" not in schema["properties"]
        assert "name" in schema["properties"]

    def test_async_function(self) -> None:
        async def fetch_data(url: str) -> str:
            return ""

        script = InlineSkillScript(name="fetch_data", function=fetch_data)
        schema = script.parameters_schema
        assert schema is not None
        assert "url" in schema["properties"]

    def test_bool_and_float_types(self) -> None:
        def process(verbose: bool, threshold: float) -> None:
            pass

        script = InlineSkillScript(name="process", function=process)
        schema = script.parameters_schema
        assert schema is not None
        assert "verbose" in schema["properties"]
        assert "threshold" in schema["properties"]

    def test_lazy_generation_is_cached(self) -> None:
        def analyze(query: str) -> str:
            return ""

        script = InlineSkillScript(name="analyze", function=analyze)
        first = script.parameters_schema
        second = script.parameters_schema
        assert first is second


# ---------------------------------------------------------------------------
# Tests: _create_script_element
# ---------------------------------------------------------------------------


class TestCreateScriptElement:
    """Tests for _create_script_element."""








# ---------------------------------------------------------------------------
# Tests: SkillScript.parameters_schema
# ---------------------------------------------------------------------------


class TestSkillScriptParametersSchema:
    """Tests for parameters_schema auto-generation on SkillScript."""

    def test_auto_generated_from_function(self) -> None:
        def analyze(query: str) -> str:
            return ""

        script = InlineSkillScript(name="analyze", function=analyze)
        assert script.parameters_schema is not None
        assert "query" in script.parameters_schema["properties"]

    def test_none_for_file_based_script(self) -> None:
        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/scripts/run.py")
        assert script.parameters_schema == {"type": "array", "items": {"type": "string"}}

    def test_no_params_function_returns_none(self) -> None:
        def noop() -> None:
            pass

        script = InlineSkillScript(name="noop", function=noop)
        assert script.parameters_schema is None

    def test_kwargs_only_function_returns_none(self) -> None:
        def func(**kwargs: Any) -> str:
            return ""

        script = InlineSkillScript(name="func", function=func)
        assert script.parameters_schema is None



# ---------------------------------------------------------------------------
# Tests: Source-based merging behavior
# ---------------------------------------------------------------------------


class TestLoadSkillsMerging:
    """Tests for source-based merging of file-based and code-defined skills."""

    def test_code_skill_with_invalid_name_raises(self) -> None:
        """Code skills with invalid metadata (e.g. uppercase name) raise at construction."""
        with pytest.raises(ValueError, match="Invalid skill name"):
            InlineSkill(frontmatter=SkillFrontmatter(name="INVALID_NAME", description="valid"), instructions="body")

    async def test_file_skill_takes_precedence_over_code_skill(self, tmp_path: Path) -> None:
        """When file-based and code-defined skills share a name, file-based wins."""
        from agentnb import AggregatingSkillsSource, DeduplicatingSkillsSource, FileSkillsSource, InMemorySkillsSource

        skill_dir = tmp_path / "my-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: File skill.\n---\nFile body.",
            encoding="utf-8",
        )

        code_skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="Code skill."), instructions="Code body."
        )

        source = DeduplicatingSkillsSource(
            AggregatingSkillsSource([
                FileSkillsSource(str(tmp_path)),
                InMemorySkillsSource([code_skill]),
            ])
        )
        result = await source.get_skills(_SOURCE_CTX)
        skills_by_name = {s.frontmatter.name: s for s in result}
        assert "my-skill" in skills_by_name
        assert skills_by_name["my-skill"].path is not None  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]  # file-based skill has path set


# ---------------------------------------------------------------------------
# Tests: SkillsSource classes
# ---------------------------------------------------------------------------


class TestSkillsSource:
    """Tests for the abstract SkillsSource and concrete implementations."""

    async def test_file_skills_source_discovers_skills(self, tmp_path: Path) -> None:
        """FileSkillsSource discovers skills from SKILL.md files."""
        skill_dir = tmp_path / "my-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: Test skill.\n---\nBody.",
            encoding="utf-8",
        )

        source = FileSkillsSource(str(tmp_path))
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 1
        assert skills[0].frontmatter.name == "my-skill"
        assert skills[0].path is not None  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]

    async def test_file_skills_source_with_extensions(self, tmp_path: Path) -> None:
        """FileSkillsSource resource_extensions controls extension filtering."""
        skill_dir = tmp_path / "my-skill"
        refs = skill_dir / "references"
        refs.mkdir(parents=True)
        (skill_dir / "SKILL.md").write_text(
            "---\nname: my-skill\ndescription: Test skill.\n---\nBody.",
            encoding="utf-8",
        )
        (refs / "data.json").write_text("{}", encoding="utf-8")
        (refs / "data.csv").write_text("a,b", encoding="utf-8")

        # Only allow .json resources
        source = FileSkillsSource(str(tmp_path), resource_extensions=(".json",))
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 1
        resource_names = [r.name for r in skills[0]._resources]  # type: ignore[attr-defined]  # ty: ignore[unresolved-attribute]
        assert "references/data.json" in resource_names
        assert "references/data.csv" not in resource_names

    async def test_in_memory_skills_source_returns_all_skills(self) -> None:
        """InMemorySkillsSource returns all provided skills."""
        from agentnb import InMemorySkillsSource

        s1 = InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        s2 = InlineSkill(frontmatter=SkillFrontmatter(name="skill-b", description="B"), instructions="body")

        source = InMemorySkillsSource([s1, s2])
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 2
        assert skills[0].frontmatter.name == "skill-a"
        assert skills[1].frontmatter.name == "skill-b"

    async def test_aggregating_source_combines_sources(self) -> None:
        """Aggregating source concatenates results from multiple sources."""
        from agentnb import AggregatingSkillsSource, InMemorySkillsSource

        s1 = InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        s2 = InlineSkill(frontmatter=SkillFrontmatter(name="skill-b", description="B"), instructions="body")

        source = AggregatingSkillsSource([
            InMemorySkillsSource([s1]),
            InMemorySkillsSource([s2]),
        ])
        skills = await source.get_skills(_SOURCE_CTX)
        names = [s.frontmatter.name for s in skills]
        assert names == ["skill-a", "skill-b"]

    async def test_filtering_source_filters_by_predicate(self) -> None:
        """FilteringSkillsSource only returns skills matching the predicate."""
        from agentnb import FilteringSkillsSource, InMemorySkillsSource

        s1 = InlineSkill(frontmatter=SkillFrontmatter(name="keep-me", description="keep"), instructions="body")
        s2 = InlineSkill(frontmatter=SkillFrontmatter(name="drop-me", description="drop"), instructions="body")

        source = FilteringSkillsSource(
            InMemorySkillsSource([s1, s2]),
            predicate=lambda s, _ctx: s.frontmatter.name.startswith("keep"),
        )
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 1
        assert skills[0].frontmatter.name == "keep-me"

    async def test_deduplicating_source_removes_duplicates(self) -> None:
        """DeduplicatingSkillsSource keeps first skill with each name."""
        from agentnb import DeduplicatingSkillsSource, InMemorySkillsSource

        s1 = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="first"), instructions="body1")
        s2 = InlineSkill(frontmatter=SkillFrontmatter(name="my-skill", description="second"), instructions="body2")
        s3 = InlineSkill(frontmatter=SkillFrontmatter(name="other", description="other"), instructions="body3")

        source = DeduplicatingSkillsSource(InMemorySkillsSource([s1, s2, s3]))
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 2
        names = {s.frontmatter.name for s in skills}
        assert names == {"my-skill", "other"}
        # First one wins
        my_skill = next(s for s in skills if s.frontmatter.name == "my-skill")
        assert my_skill.frontmatter.description == "first"

    async def test_delegating_source_delegates(self) -> None:
        """DelegatingSkillsSource delegates to inner source by default."""
        from agentnb import DelegatingSkillsSource, InMemorySkillsSource

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        inner = InMemorySkillsSource([skill])

        class PassthroughSource(DelegatingSkillsSource):
            pass

        source = PassthroughSource(inner)
        assert source.inner_source is inner
        skills = await source.get_skills(_SOURCE_CTX)
        assert len(skills) == 1
        assert skills[0].frontmatter.name == "test-skill"

    async def test_caching_source_caches_inner_results(self) -> None:
        """CachingSkillsSource queries the inner source only once."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        inner = _CountingSkillsSource([skill])

        cached = CachingSkillsSource(inner)
        first = await cached.get_skills(_SOURCE_CTX)
        second = await cached.get_skills(_SOURCE_CTX)

        assert inner.call_count == 1
        assert first is second
        assert [s.frontmatter.name for s in first] == ["test-skill"]

    async def test_caching_source_is_delegating(self) -> None:
        """CachingSkillsSource exposes its inner source like other decorators."""
        from agentnb import DelegatingSkillsSource

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="test"), instructions="body")
        inner = InMemorySkillsSource([skill])
        cached = CachingSkillsSource(inner)
        assert isinstance(cached, DelegatingSkillsSource)
        assert cached.inner_source is inner

    async def test_caching_source_retries_after_failure(self) -> None:
        """A failing first fetch is not cached; the next call retries."""

        class FlakySource(SkillsSource):
            def __init__(self) -> None:
                self.call_count = 0

            async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
                self.call_count += 1
                if self.call_count == 1:
                    raise RuntimeError("transient failure")
                return [
                    InlineSkill(
                        frontmatter=SkillFrontmatter(name="test-skill", description="test"),
                        instructions="body",
                    )
                ]

        inner = FlakySource()
        cached = CachingSkillsSource(inner)

        with pytest.raises(RuntimeError, match="transient failure"):
            await cached.get_skills(_SOURCE_CTX)

        skills = await cached.get_skills(_SOURCE_CTX)
        assert inner.call_count == 2
        assert [s.frontmatter.name for s in skills] == ["test-skill"]

    async def test_caching_source_shares_single_inflight_fetch(self) -> None:
        """Concurrent callers share one in-flight fetch of the inner source."""
        import asyncio

        started = asyncio.Event()
        release = asyncio.Event()

        class SlowSource(SkillsSource):
            def __init__(self) -> None:
                self.call_count = 0

            async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
                self.call_count += 1
                started.set()
                await release.wait()
                return [
                    InlineSkill(
                        frontmatter=SkillFrontmatter(name="test-skill", description="test"),
                        instructions="body",
                    )
                ]

        inner = SlowSource()
        cached = CachingSkillsSource(inner)

        first = asyncio.ensure_future(cached.get_skills(_SOURCE_CTX))
        await started.wait()
        second = asyncio.ensure_future(cached.get_skills(_SOURCE_CTX))
        release.set()

        results = await asyncio.gather(first, second)
        assert inner.call_count == 1
        assert results[0] is results[1]



    async def test_composed_source_pipeline(self, tmp_path: Path) -> None:
        """Full source composition: file + code → aggregate → dedup → filter."""
        from agentnb import AggregatingSkillsSource, DeduplicatingSkillsSource, FileSkillsSource, FilteringSkillsSource, InMemorySkillsSource

        skill_dir = tmp_path / "file-skill"
        skill_dir.mkdir()
        (skill_dir / "SKILL.md").write_text(
            "---\nname: file-skill\ndescription: File.\n---\nBody.",
            encoding="utf-8",
        )

        code_skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="code-skill", description="Code."), instructions="Body."
        )
        internal = InlineSkill(
            frontmatter=SkillFrontmatter(name="internal", description="Internal."), instructions="Body."
        )

        source = FilteringSkillsSource(
            DeduplicatingSkillsSource(
                AggregatingSkillsSource([
                    FileSkillsSource(str(tmp_path)),
                    InMemorySkillsSource([code_skill, internal]),
                ])
            ),
            predicate=lambda s, _ctx: s.frontmatter.name != "internal",
        )

        skills = await source.get_skills(_SOURCE_CTX)
        names = {s.frontmatter.name for s in skills}
        assert names == {"file-skill", "code-skill"}
        assert "internal" not in names


# ---------------------------------------------------------------------------
# Tests: Source composition (replaces SkillsProviderBuilder)
# ---------------------------------------------------------------------------


class TestSkillsSourceContext:
    """Tests for SkillsSourceContext propagation and context-aware sources."""

    async def test_context_exposes_agent_and_session(self) -> None:
        """SkillsSourceContext carries the agent and optional session."""
        agent = _NamedMockAgent()  # type: ignore[abstract]  # pyrefly: ignore[bad-instantiation]
        ctx = SkillsSourceContext(agent=agent)
        assert ctx.agent is agent
        assert ctx.session is None

        session = MockAgentSession()
        ctx_with_session = SkillsSourceContext(agent=agent, session=session)
        assert ctx_with_session.session is session

    async def test_context_flows_through_decorator_pipeline(self) -> None:
        """The context passed to get_skills reaches the innermost source."""
        received: list[SkillsSourceContext] = []

        class _RecordingSource(SkillsSource):
            async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
                received.append(context)
                return [
                    InlineSkill(
                        frontmatter=SkillFrontmatter(name="skill-a", description="A"),
                        instructions="body",
                    )
                ]

        source = DeduplicatingSkillsSource(CachingSkillsSource(_RecordingSource()))
        ctx = _make_source_context("agent-x")

        skills = await source.get_skills(ctx)
        assert [s.frontmatter.name for s in skills] == ["skill-a"]
        assert received == [ctx]
        assert received[0].agent.name == "agent-x"

    async def test_filtering_predicate_receives_context(self) -> None:
        """FilteringSkillsSource passes the context to the predicate."""
        from agentnb import FilteringSkillsSource

        seen: list[SkillsSourceContext] = []

        def _predicate(skill: Skill, context: SkillsSourceContext) -> bool:
            seen.append(context)
            # Keep only skills whose name matches the invoking agent's name.
            return skill.frontmatter.name == context.agent.name

        s1 = InlineSkill(frontmatter=SkillFrontmatter(name="agent-x", description="A"), instructions="body")
        s2 = InlineSkill(frontmatter=SkillFrontmatter(name="agent-y", description="B"), instructions="body")

        source = FilteringSkillsSource(InMemorySkillsSource([s1, s2]), predicate=_predicate)
        ctx = _make_source_context("agent-x")

        skills = await source.get_skills(ctx)
        assert [s.frontmatter.name for s in skills] == ["agent-x"]
        assert all(c is ctx for c in seen)

    async def test_caching_shared_bucket_by_default(self) -> None:
        """Without an isolation key selector, all contexts share one cache entry."""
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(inner)

        first = await cached.get_skills(_make_source_context("agent-x"))
        second = await cached.get_skills(_make_source_context("agent-y"))

        assert inner.call_count == 1
        assert first is second

    async def test_caching_isolation_key_separates_buckets(self) -> None:
        """An isolation key selector caches skills separately per key."""
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(
            inner,
            cache_isolation_key_selector=lambda context: context.agent.name,
        )

        first_x = await cached.get_skills(_make_source_context("agent-x"))
        first_y = await cached.get_skills(_make_source_context("agent-y"))
        second_x = await cached.get_skills(_make_source_context("agent-x"))

        # One fetch per distinct key; repeated keys are served from cache.
        assert inner.call_count == 2
        assert first_x is second_x
        assert first_x is not first_y

    async def test_caching_isolation_key_none_uses_shared_bucket(self) -> None:
        """A selector returning None falls back to the shared cache bucket."""
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(inner, cache_isolation_key_selector=lambda context: None)

        await cached.get_skills(_make_source_context("agent-x"))
        await cached.get_skills(_make_source_context("agent-y"))

        assert inner.call_count == 1

    async def test_refresh_interval_none_never_expires(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With no refresh_interval, the cache never expires regardless of elapsed time."""
        clock = {"now": 1000.0}
        monkeypatch.setattr("time.monotonic", lambda: clock["now"])
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(inner)

        first = await cached.get_skills(_SOURCE_CTX)
        clock["now"] += 10_000.0  # advance well past any plausible interval
        second = await cached.get_skills(_SOURCE_CTX)

        assert inner.call_count == 1
        assert first is second

    async def test_refresh_interval_serves_cache_within_interval(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A cached list younger than refresh_interval is served without re-querying."""
        clock = {"now": 1000.0}
        monkeypatch.setattr("time.monotonic", lambda: clock["now"])
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(inner, refresh_interval=timedelta(seconds=60))

        first = await cached.get_skills(_SOURCE_CTX)
        clock["now"] += 59.0  # still within the interval
        second = await cached.get_skills(_SOURCE_CTX)

        assert inner.call_count == 1
        assert first is second

    async def test_refresh_interval_refetches_after_expiry(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Once refresh_interval has elapsed, the next call re-queries and replaces the cache."""
        clock = {"now": 1000.0}
        monkeypatch.setattr("time.monotonic", lambda: clock["now"])
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(inner, refresh_interval=timedelta(seconds=60))

        first = await cached.get_skills(_SOURCE_CTX)
        clock["now"] += 60.0  # exactly at the interval boundary -> stale
        second = await cached.get_skills(_SOURCE_CTX)

        assert inner.call_count == 2
        assert first is not second
        assert [s.frontmatter.name for s in second] == ["skill-a"]

    async def test_refresh_interval_zero_always_refetches(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A zero refresh_interval makes every cached result immediately stale."""
        clock = {"now": 1000.0}
        monkeypatch.setattr("time.monotonic", lambda: clock["now"])
        inner = _CountingSkillsSource([
            InlineSkill(frontmatter=SkillFrontmatter(name="skill-a", description="A"), instructions="body")
        ])
        cached = CachingSkillsSource(inner, refresh_interval=timedelta(0))

        await cached.get_skills(_SOURCE_CTX)
        await cached.get_skills(_SOURCE_CTX)  # no time advance, still refetches

        assert inner.call_count == 2

    async def test_refresh_interval_failed_refresh_retries(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A failed refresh after expiry propagates and does not overwrite the cache; the next call retries."""
        clock = {"now": 1000.0}
        monkeypatch.setattr("time.monotonic", lambda: clock["now"])

        class FlakyOnRefreshSource(SkillsSource):
            def __init__(self) -> None:
                self.call_count = 0

            async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
                self.call_count += 1
                if self.call_count == 2:
                    raise RuntimeError("refresh failed")
                return [
                    InlineSkill(
                        frontmatter=SkillFrontmatter(name="skill-a", description="A"),
                        instructions="body",
                    )
                ]

        inner = FlakyOnRefreshSource()
        cached = CachingSkillsSource(inner, refresh_interval=timedelta(seconds=60))

        await cached.get_skills(_SOURCE_CTX)  # fetch 1 succeeds
        clock["now"] += 60.0  # expire

        with pytest.raises(RuntimeError, match="refresh failed"):
            await cached.get_skills(_SOURCE_CTX)  # fetch 2 fails

        skills = await cached.get_skills(_SOURCE_CTX)  # fetch 3 retries and succeeds
        assert inner.call_count == 3
        assert [s.frontmatter.name for s in skills] == ["skill-a"]


class TestSourceComposition:
    """Tests for composing sources directly instead of using a builder."""












# ---------------------------------------------------------------------------
# Tests: SkillsProvider factory methods
# ---------------------------------------------------------------------------


class TestSkillsProviderFactoryMethods:
    """Tests for the SkillsProvider factory class methods."""

    def test_from_paths_creates_provider(self, tmp_path: Path) -> None:
        """from_paths returns a SkillsProvider instance."""
        provider = SkillsProvider.from_paths(str(tmp_path))
        assert isinstance(provider, SkillsProvider)
        assert provider.source_id == "agent_skills"



    async def test_from_paths_custom_source_id(self, tmp_path: Path) -> None:
        """from_paths supports custom source_id."""
        provider = SkillsProvider.from_paths(str(tmp_path), source_id="custom")
        assert provider.source_id == "custom"


    def test_init_with_skills_creates_provider(self) -> None:
        """Constructor with skill list returns a SkillsProvider instance."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="Test"), instructions="Body")
        provider = SkillsProvider([skill])
        assert isinstance(provider, SkillsProvider)




    def test_init_with_source_creates_provider(self) -> None:
        """Constructor with SkillsSource returns a SkillsProvider instance."""
        from agentnb import InMemorySkillsSource

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="Test"), instructions="Body")
        source = InMemorySkillsSource([skill])
        provider = SkillsProvider(source)
        assert isinstance(provider, SkillsProvider)



# ---------------------------------------------------------------------------
# Tests: disable_caching
# ---------------------------------------------------------------------------


class TestDisableCaching:
    """Tests for the disable_caching option (now backed by CachingSkillsSource)."""








    async def test_disable_caching_before_run_rebuilds(self) -> None:
        """before_run with disable_caching=True calls _create_context each time."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="Test"), instructions="Body")
        provider = SkillsProvider([skill], disable_caching=True)
        context = SessionContext(input_messages=[])
        await provider.before_run(agent=AsyncMock(), session=AsyncMock(), context=context, state={})
        assert context.instructions  # Skills instructions were added







# ---------------------------------------------------------------------------
# Tests: SkillsProvider constructor edge cases
# ---------------------------------------------------------------------------


class TestSkillsProviderConstructorEdgeCases:
    """Tests for SkillsProvider constructor source coercion."""



    def test_string_source_rejected_with_helpful_error(self) -> None:
        """Passing a string (path) to SkillsProvider raises TypeError."""
        with pytest.raises(TypeError, match="from_paths"):
            SkillsProvider("./skills")  # type: ignore[arg-type]  # ty: ignore[invalid-argument-type]

    def test_path_source_rejected_with_helpful_error(self) -> None:
        """Passing a Path to SkillsProvider raises TypeError."""
        with pytest.raises(TypeError, match="from_paths"):
            SkillsProvider(Path("./skills"))  # type: ignore[arg-type]  # ty: ignore[invalid-argument-type]


# ---------------------------------------------------------------------------
# Tests: InlineSkill content caching
# ---------------------------------------------------------------------------


class TestInlineSkillContentCaching:
    """Tests for InlineSkill.content caching."""

    async def test_content_cached_after_first_access(self) -> None:
        """InlineSkill.content returns the same object on subsequent accesses."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="test-skill", description="Test"), instructions="Body")
        first = await skill.get_content()
        second = await skill.get_content()
        assert first is second  # Same object (cached)
        assert "<name>test-skill</name>" in first


# ---------------------------------------------------------------------------
# Tests: Array-style (list[str]) script arguments
# ---------------------------------------------------------------------------


class TestArrayStyleScriptArgs:
    """Tests for list[str] arguments on skill scripts (port of .NET PR #5475)."""

    async def test_inline_script_rejects_list_args(self) -> None:
        """InlineSkillScript.run() raises TypeError when args is a list."""
        script = InlineSkillScript(name="greet", function=lambda name="world": f"hello {name}")
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        with pytest.raises(TypeError, match="requires keyword arguments"):
            await script.run(skill, args=["hello", "--name", "Alice"])

    async def test_inline_script_error_message_mentions_script_name(self) -> None:
        """The TypeError message includes the script name for debugging."""
        script = InlineSkillScript(name="my-script", function=lambda: None)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        with pytest.raises(TypeError, match="my-script"):
            await script.run(skill, args=["arg1"])

    async def test_file_script_passes_list_to_runner(self) -> None:
        """FileSkillScript.run() passes list[str] args through to the runner."""
        captured: dict[str, Any] = {}

        def runner(skill: Any, script: Any, args: Any = None) -> str:
            captured["args"] = args
            return "ok"

        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py", runner=runner)
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="d"), content="c", path=f"{_ABS}/test"
        )
        result = await script.run(skill, args=["input.docx", "--output", "result.idx"])
        assert result == "ok"
        assert captured["args"] == ["input.docx", "--output", "result.idx"]

    async def test_file_script_passes_dict_to_runner(self) -> None:
        """FileSkillScript.run() still passes dict args through to the runner."""
        captured: dict[str, Any] = {}

        def runner(skill: Any, script: Any, args: Any = None) -> str:
            captured["args"] = args
            return "ok"

        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py", runner=runner)
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="d"), content="c", path=f"{_ABS}/test"
        )
        result = await script.run(skill, args={"key": "val"})
        assert result == "ok"
        assert captured["args"] == {"key": "val"}

    async def test_file_script_passes_none_to_runner(self) -> None:
        """FileSkillScript.run() passes None args through to the runner."""
        captured: dict[str, Any] = {}

        def runner(skill: Any, script: Any, args: Any = None) -> str:
            captured["args"] = args
            return "ok"

        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py", runner=runner)
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="d"), content="c", path=f"{_ABS}/test"
        )
        result = await script.run(skill)
        assert result == "ok"
        assert captured["args"] is None

    def test_file_script_parameters_schema_returns_array(self) -> None:
        """FileSkillScript.parameters_schema returns the string-array JSON schema."""
        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py")
        assert script.parameters_schema == {"type": "array", "items": {"type": "string"}}

    async def test_runner_protocol_accepts_list_args(self) -> None:
        """A runner accepting list[str] args satisfies the SkillScriptRunner protocol."""
        captured: dict[str, Any] = {}

        def my_runner(skill: Any, script: Any, args: Any = None) -> str:
            captured["args"] = args
            return "ok"

        assert isinstance(my_runner, SkillScriptRunner)
        skill = FileSkill(frontmatter=SkillFrontmatter(name="s", description="d"), content="c", path=f"{_ABS}/test")
        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py")
        result = my_runner(skill, script, args=["--flag", "value"])
        assert result == "ok"
        assert captured["args"] == ["--flag", "value"]




    async def test_file_skill_content_includes_scripts_block(self) -> None:
        """FileSkill.content appends an <available_scripts> block when scripts are present."""
        script = FileSkillScript(name="run.py", full_path=f"{_ABS}/test/run.py")
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="test"),
            content="---\nname: my-skill\n---\nBody",
            path=f"{_ABS}/test",
            scripts=[script],
        )
        assert "<available_scripts>" in (await skill.get_content())
        assert 'name="run.py"' in (await skill.get_content())
        assert "<parameters_schema>" in (await skill.get_content())
        assert '"type": "array"' in (await skill.get_content())

    async def test_file_skill_content_no_scripts_emits_empty_block(self) -> None:
        """FileSkill.content always emits self-closing resource and script blocks when empty."""
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="test"),
            content="---\nname: my-skill\n---\nBody",
            path=f"{_ABS}/test",
        )
        content = await skill.get_content()
        assert "<available_resources />" in content
        assert "<available_scripts />" in content

    async def test_file_skill_content_includes_resources_block(self) -> None:
        """FileSkill.content appends an <available_resources> block when resources are present."""
        skill = FileSkill(
            frontmatter=SkillFrontmatter(name="my-skill", description="test"),
            content="---\nname: my-skill\n---\nBody",
            path=f"{_ABS}/test",
            resources=[InlineSkillResource(name="ref-data", content="data")],
        )
        content = await skill.get_content()
        assert "<available_resources>" in content
        assert '<resource name="ref-data"/>' in content


class TestSkillScriptArgumentParser:
    """Tests for custom argument parsing on inline skill scripts.

    Mirrors the .NET PR #6498 that lets callers plug in their own argument
    conversion logic (e.g. for vLLM backends that send tool-call arguments as
    a JSON string instead of a JSON object).
    """

    @staticmethod
    def _json_string_parser(args: dict[str, Any] | list[str] | str | None) -> dict[str, Any] | None:
        """Parser that decodes a JSON-string ``args`` into a dict."""
        import json as _json

        if isinstance(args, str):
            return _json.loads(args)
        if isinstance(args, dict):
            return args
        return None

    async def test_default_no_parser_passes_dict_unchanged(self) -> None:
        """Without a parser, dict args reach the callable unchanged."""
        script = InlineSkillScript(name="greet", function=lambda name="world": f"hello {name}")
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill, args={"name": "Alice"})
        assert result == "hello Alice"

    async def test_script_parser_converts_json_string_to_dict(self) -> None:
        """A parser converts a JSON-string args payload into named arguments."""
        script = InlineSkillScript(
            name="greet",
            function=lambda name="world": f"hello {name}",
            argument_parser=self._json_string_parser,
        )
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill, args='{"name": "Alice"}')
        assert result == "hello Alice"

    async def test_script_parser_passes_dict_through(self) -> None:
        """A parser still receives and may pass through dict args."""
        script = InlineSkillScript(
            name="greet",
            function=lambda name="world": f"hello {name}",
            argument_parser=self._json_string_parser,
        )
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        result = await script.run(skill, args={"name": "Bob"})
        assert result == "hello Bob"

    async def test_script_parser_is_satisfied_by_callable(self) -> None:
        """A plain callable satisfies the SkillScriptArgumentParser alias."""
        parser: SkillScriptArgumentParser = self._json_string_parser
        assert callable(parser)

    async def test_parser_returning_list_still_rejected(self) -> None:
        """Defense-in-depth: even if a parser yields a list, the inline guard fires.

        The parser output type forbids lists, so this scenario requires a
        loosely-typed parser; the runtime guard still protects against it.
        """

        def to_list(args: dict[str, Any] | list[str] | str | None) -> Any:
            return ["a", "b"]

        script = InlineSkillScript(name="s1", function=lambda: "ok", argument_parser=to_list)
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        with pytest.raises(TypeError, match="requires keyword arguments"):
            await script.run(skill, args={"ignored": True})

    async def test_inline_skill_propagates_parser_to_decorated_scripts(self) -> None:
        """InlineSkill passes its parser to scripts added via @skill.script."""
        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="s", description="d"),
            instructions="c",
            argument_parser=self._json_string_parser,
        )

        @skill.script
        def greet(name: str = "world") -> str:
            return f"hi {name}"

        script = await skill.get_script("greet")
        assert isinstance(script, InlineSkillScript)
        assert script.argument_parser is self._json_string_parser
        result = await script.run(skill, args='{"name": "Carol"}')
        assert result == "hi Carol"

    async def test_inline_skill_no_parser_leaves_scripts_unparsed(self) -> None:
        """Without an InlineSkill parser, decorated scripts have none."""
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")

        @skill.script
        def greet(name: str = "world") -> str:
            return f"hi {name}"

        script = await skill.get_script("greet")
        assert isinstance(script, InlineSkillScript)
        assert script.argument_parser is None

    async def test_class_skill_propagates_parser_to_discovered_scripts(self) -> None:
        """ClassSkill passes its parser to scripts discovered via @ClassSkill.script."""
        parser = self._json_string_parser

        class _ParsingClassSkill(ClassSkill):
            def __init__(self) -> None:
                super().__init__(
                    frontmatter=SkillFrontmatter(name="cs", description="d"),
                    argument_parser=parser,
                )

            @property
            def instructions(self) -> str:
                return "body"

            @ClassSkill.script
            def convert(self, name: str = "world") -> str:
                return f"converted {name}"

        skill = _ParsingClassSkill()
        script = await skill.get_script("convert")
        assert isinstance(script, InlineSkillScript)
        assert script.argument_parser is parser
        result = await script.run(skill, args='{"name": "Dan"}')
        assert result == "converted Dan"


    async def test_inline_string_args_without_parser_raises(self) -> None:
        """A raw string reaching an inline script with no parser raises a clear TypeError."""
        script = InlineSkillScript(name="greet", function=lambda name="world": f"hello {name}")
        skill = InlineSkill(frontmatter=SkillFrontmatter(name="s", description="d"), instructions="c")
        with pytest.raises(TypeError, match="argument_parser"):
            await script.run(skill, args='{"name": "Alice"}')
