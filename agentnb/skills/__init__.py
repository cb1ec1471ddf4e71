"""Agent Skills: SKILL.md folders, code and class skills, and MCP-served skills, given to agents by progressive
disclosure through :class:`SkillsProvider`.

Skills are advertised by name and description in every run; the model loads one, reads its resources and
runs its scripts through three tools, each under approval like any tool. Folder scripts run as
subprocesses (:class:`SubprocessScriptRunner`); skills from MCP servers never run scripts.

Example:
    ```python
    from agentnb import Agent, SkillsProvider, SubprocessScriptRunner, ToolApprovalMiddleware

    provider = SkillsProvider.from_paths("./skills", script_runner=SubprocessScriptRunner())
    agent = Agent(
        client,
        context_providers=[provider],
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[SkillsProvider.read_only_tools_auto_approval_rule])],
    )
    ```
"""

from __future__ import annotations

from ._files import MAX_SEARCH_DEPTH, FileSkillsSource, SkippedSkill
from ._mcp import MCPSkill, MCPSkillResource, MCPSkillsSource
from ._model import (
    DEFAULT_RESOURCE_EXTENSIONS,
    DEFAULT_SCRIPT_EXTENSIONS,
    DEFAULT_SEARCH_DEPTH,
    SKILL_FILE_NAME,
    ClassSkill,
    FileSkill,
    FileSkillScript,
    InlineSkill,
    InlineSkillResource,
    InlineSkillScript,
    Skill,
    SkillFrontmatter,
    SkillResource,
    SkillScript,
    SkillScriptArgumentParser,
    SkillScriptRunner,
)
from ._provider import DEFAULT_SKILLS_INSTRUCTION_PROMPT, SkillsProvider
from ._runner import SubprocessScriptRunner
from ._sources import (
    AggregatingSkillsSource,
    CachingSkillsSource,
    DeduplicatingSkillsSource,
    DelegatingSkillsSource,
    FilteringSkillsSource,
    InMemorySkillsSource,
    SkillsSource,
    SkillsSourceContext,
)

__all__ = [
    "DEFAULT_RESOURCE_EXTENSIONS",
    "DEFAULT_SCRIPT_EXTENSIONS",
    "DEFAULT_SEARCH_DEPTH",
    "DEFAULT_SKILLS_INSTRUCTION_PROMPT",
    "MAX_SEARCH_DEPTH",
    "SKILL_FILE_NAME",
    "AggregatingSkillsSource",
    "CachingSkillsSource",
    "ClassSkill",
    "DeduplicatingSkillsSource",
    "DelegatingSkillsSource",
    "FileSkill",
    "FileSkillScript",
    "FileSkillsSource",
    "FilteringSkillsSource",
    "InMemorySkillsSource",
    "InlineSkill",
    "InlineSkillResource",
    "InlineSkillScript",
    "MCPSkill",
    "MCPSkillResource",
    "MCPSkillsSource",
    "Skill",
    "SkillFrontmatter",
    "SkillResource",
    "SkillScript",
    "SkillScriptArgumentParser",
    "SkillScriptRunner",
    "SkillsProvider",
    "SkillsSource",
    "SkillsSourceContext",
    "SkippedSkill",
    "SubprocessScriptRunner",
]
