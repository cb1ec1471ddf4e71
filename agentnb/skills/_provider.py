"""The context provider that gives an agent its skills by progressive disclosure.

1. Advertise: every run's instructions list each skill's name and description (about 100 tokens a skill).
2. Load: the ``load_skill`` tool returns a skill's full body.
3. Read / run: ``read_skill_resource`` returns a resource; ``run_skill_script`` runs a script.

All three tools need a person's approval by default, through the same approval flow as any tool; the
static rules here let :class:`~agentnb.ToolApprovalMiddleware` approve them on the person's behalf.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import timedelta
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeVar

from .._sessions import ContextProvider
from .._tools import FunctionTool
from ._files import FileSkillsSource
from ._model import (
    DEFAULT_RESOURCE_EXTENSIONS,
    DEFAULT_SCRIPT_EXTENSIONS,
    DEFAULT_SEARCH_DEPTH,
    Skill,
    SkillScriptRunner,
)
from ._sources import (
    CachingSkillsSource,
    DeduplicatingSkillsSource,
    InMemorySkillsSource,
    SkillsSource,
    SkillsSourceContext,
)

if TYPE_CHECKING:
    from .._sessions import AgentSession, SessionContext
    from .._types import Content

__all__ = [
    "DEFAULT_SKILLS_INSTRUCTION_PROMPT",
    "RESOURCE_INSTRUCTIONS",
    "SCRIPT_RUNNER_INSTRUCTIONS",
    "SKILLS_SOURCE_KEY",
    "SkillsProvider",
]

logger = logging.getLogger("agentnb.skills")

#: Key of a skill tool's ``additional_properties`` naming the provider (its ``source_id``) that made it.
SKILLS_SOURCE_KEY: Final[str] = "skills_provider"

DEFAULT_SKILLS_INSTRUCTION_PROMPT: Final[str] = """\
You have access to skills containing domain-specific knowledge and capabilities.
Each skill provides specialized instructions, reference documents, and assets for specific tasks.

<available_skills>
{skills}
</available_skills>

When a task aligns with a skill's domain, follow these steps in exact order:
- Use `load_skill` to retrieve the skill's instructions.
- Follow the provided guidance.
{resource_instructions}
{runner_instructions}
Only load what is needed, when it is needed."""

RESOURCE_INSTRUCTIONS: Final[str] = (
    "- Use `read_skill_resource` to read any referenced resources, using the name exactly as listed\n"
    '   (e.g. `"style-guide"` not `"style-guide.md"`, `"references/FAQ.md"` not `"FAQ.md"`).\n'
)

SCRIPT_RUNNER_INSTRUCTIONS: Final[str] = (
    "- Use `run_skill_script` to run referenced scripts, using the name exactly as listed.\n"
    "- Pass script arguments inside `args` as a JSON object"
    ' (e.g. `args: {"length": 24}`), not as top-level tool parameters.\n'
)

_LOAD_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"skill_name": {"type": "string", "description": "The name of the skill to load."}},
    "required": ["skill_name"],
}
_READ_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "skill_name": {"type": "string", "description": "The name of the skill."},
        "resource_name": {"type": "string", "description": "The name of the resource."},
    },
    "required": ["skill_name", "resource_name"],
}
_RUN_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "skill_name": {"type": "string", "description": "The name of the skill."},
        "script_name": {
            "type": "string",
            "description": "The name of the script to run as listed in the skill, preserving any directory "
            "prefix exactly as shown. Do not add or remove path prefixes.",
        },
        "args": {
            "oneOf": [
                {
                    "type": "object",
                    "additionalProperties": True,
                    "description": 'Named arguments as key-value pairs (e.g. {"length": 24, "uppercase": true}).',
                },
                {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": 'Positional CLI arguments as a string array (e.g. ["input.docx", "--output"]).',
                },
                {"type": "null"},
            ],
            "default": None,
            "description": "Arguments to pass to the script: an array of strings for command-line scripts, or an "
            "object for named parameters. How they are mapped is up to the script or its runner.",
        },
    },
    "required": ["skill_name", "script_name"],
}

_P = TypeVar("_P", bound="SkillsProvider")


def _check_template(template: str) -> None:
    try:
        probe = template.format(skills="\0skills\0", runner_instructions="", resource_instructions="")
    except (KeyError, IndexError, ValueError) as e:
        raise ValueError(
            "instruction_template is not a valid format string: it must contain '{skills}' (and may contain "
            "'{resource_instructions}' and '{runner_instructions}'); write literal braces as '{{' and '}}'."
        ) from e
    if "\0skills\0" not in probe:
        raise ValueError("instruction_template must contain a '{skills}' placeholder.")


class _Turn:
    """What one list of skills gives a run: the advertising text, the tools, and a name index."""

    __slots__ = ("by_name", "instructions", "names", "skills", "tools")

    def __init__(self, provider: SkillsProvider, skills: list[Skill]) -> None:
        self.skills = skills
        self.by_name = {s.frontmatter.name.lower(): s for s in reversed(skills)}  # first of a name wins
        ordered = sorted(skills, key=lambda s: s.frontmatter.name)
        self.names = [s.frontmatter.name for s in ordered]
        rows: list[str] = []
        for skill in ordered:
            rows.append(
                "  <skill>\n"
                f"    <name>{escape(skill.frontmatter.name, quote=False)}</name>\n"
                f"    <description>{escape(skill.frontmatter.description, quote=False)}</description>\n"
                "  </skill>"
            )
        self.instructions = (provider.instruction_template or DEFAULT_SKILLS_INSTRUCTION_PROMPT).format(
            skills="\n".join(rows),
            resource_instructions=RESOURCE_INSTRUCTIONS,
            runner_instructions=SCRIPT_RUNNER_INSTRUCTIONS,
        )
        self.tools = provider.create_tools(self)


class SkillsProvider(ContextProvider):
    """Gives an agent skills: advertises them every run and serves them through three tools.

    Accepts a :class:`SkillsSource`, one :class:`Skill`, or a sequence of skills; for folders use
    :meth:`from_paths`. Skills passed directly are deduplicated and cached; a source you pass is used as-is
    (compose :class:`CachingSkillsSource` yourself, with a ``cache_isolation_key_selector`` if the source
    depends on the agent), so one agent's skills are never replayed for another.

    Every tool requires approval unless its ``disable_*_approval`` switch is set; to approve them without
    asking, give :class:`~agentnb.ToolApprovalMiddleware` :meth:`read_only_tools_auto_approval_rule` or
    :meth:`all_tools_auto_approval_rule`. Skill content reaches the model as-is: use skills you trust.

    Args:
        source: The skills, or where they come from.
        instruction_template: The advertising text, with ``{skills}`` and optionally
            ``{resource_instructions}`` and ``{runner_instructions}``.
        disable_caching: Rebuild the skills every run (only for skills passed directly).
        cache_refresh_interval: How long the built-in cache stays fresh (``None``: forever).
        disable_load_skill_approval: ``load_skill`` runs without approval.
        disable_read_skill_resource_approval: ``read_skill_resource`` runs without approval.
        disable_run_skill_script_approval: ``run_skill_script`` runs without approval.
        source_id: This provider's id (its slice of ``session.state``).

    Example:
        ```python
        from agentnb import Agent, InlineSkill, SkillFrontmatter, SkillsProvider, ToolApprovalMiddleware
        from agentnb.local import ScriptedChatClient

        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="style", description="House writing style."),
            instructions="Write short sentences.",
        )
        agent = Agent(
            ScriptedChatClient([ScriptedChatClient.call("load_skill", skill_name="style"), "Done."]),
            context_providers=[SkillsProvider(skill)],
            middleware=[ToolApprovalMiddleware(auto_approval_rules=[SkillsProvider.read_only_tools_auto_approval_rule])],
        )
        (await agent.run("Write in house style")).text  # 'Done.'
        ```
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "agent_skills"
    #: The tool that returns a skill's full body.
    LOAD_SKILL_TOOL_NAME: ClassVar[str] = "load_skill"
    #: The tool that returns one of a skill's resources.
    READ_SKILL_RESOURCE_TOOL_NAME: ClassVar[str] = "read_skill_resource"
    #: The tool that runs one of a skill's scripts.
    RUN_SKILL_SCRIPT_TOOL_NAME: ClassVar[str] = "run_skill_script"
    _READ_ONLY_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset({"load_skill", "read_skill_resource"})
    _ALL_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset({"load_skill", "read_skill_resource", "run_skill_script"})

    # -- approval rules ----------------------------------------------------------------------------------------
    @staticmethod
    def _is_local_tool_call(function_call: Content) -> bool:
        # A server-provided tool (it has a server_label) is another source, even when its name matches.
        return function_call.type == "function_call" and not function_call.additional_properties.get("server_label")

    @staticmethod
    def read_only_tools_auto_approval_rule(function_call: Content) -> bool:
        """Approves ``load_skill`` and ``read_skill_resource`` calls; scripts still ask.

        Pass it to :class:`~agentnb.ToolApprovalMiddleware` (``auto_approval_rules=[...]``). Calls to a tool
        from a server (one with a ``server_label``) are never approved, whatever their name; agentnb also
        refuses two tools of one name on an agent, so no other local tool can borrow these names.
        """
        return (
            SkillsProvider._is_local_tool_call(function_call)
            and function_call.name in SkillsProvider._READ_ONLY_TOOL_NAMES
        )

    @staticmethod
    def all_tools_auto_approval_rule(function_call: Content) -> bool:
        """Approves every skill tool call, scripts included (same source scoping as the read-only rule)."""
        return (
            SkillsProvider._is_local_tool_call(function_call) and function_call.name in SkillsProvider._ALL_TOOL_NAMES
        )

    # -- construction ---------------------------------------------------------------------------------------------
    def __init__(
        self,
        source: SkillsSource | Sequence[Skill] | Skill,
        *,
        instruction_template: str | None = None,
        disable_caching: bool = False,
        cache_refresh_interval: timedelta | None = None,
        disable_load_skill_approval: bool = False,
        disable_read_skill_resource_approval: bool = False,
        disable_run_skill_script_approval: bool = False,
        source_id: str | None = None,
    ) -> None:
        super().__init__(source_id or self.DEFAULT_SOURCE_ID)
        if isinstance(source, (str, Path)):
            raise TypeError(
                f"SkillsProvider does not take a path; use SkillsProvider.from_paths({str(source)!r}) for skills "
                "in folders."
            )
        if instruction_template is not None:
            _check_template(instruction_template)
        if not isinstance(source, SkillsSource):
            skills = [source] if isinstance(source, Skill) else list(source)
            # Cache the deduplicated list: a cached run then returns the very same list, which the provider
            # recognises to reuse its advertising text and tools instead of rebuilding them.
            leaf: SkillsSource = DeduplicatingSkillsSource(InMemorySkillsSource(skills))
            source = leaf if disable_caching else CachingSkillsSource(leaf, refresh_interval=cache_refresh_interval)
        self._source: SkillsSource = source
        self.instruction_template = instruction_template
        self._disable_caching = disable_caching
        self._cache_refresh_interval = cache_refresh_interval
        self._disable_load_skill_approval = disable_load_skill_approval
        self._disable_read_skill_resource_approval = disable_read_skill_resource_approval
        self._disable_run_skill_script_approval = disable_run_skill_script_approval
        self._turn: _Turn | None = None
        self._turn_length = -1

    @classmethod
    def from_paths(
        cls: type[_P],
        skill_paths: str | Path | Sequence[str | Path],
        *,
        script_runner: SkillScriptRunner | None = None,
        resource_extensions: tuple[str, ...] | None = DEFAULT_RESOURCE_EXTENSIONS,
        script_extensions: tuple[str, ...] | None = DEFAULT_SCRIPT_EXTENSIONS,
        search_depth: int = DEFAULT_SEARCH_DEPTH,
        script_filter: Callable[[str, str], bool] | None = None,
        resource_filter: Callable[[str, str], bool] | None = None,
        instruction_template: str | None = None,
        disable_caching: bool = False,
        cache_refresh_interval: timedelta | None = None,
        disable_load_skill_approval: bool = False,
        disable_read_skill_resource_approval: bool = False,
        disable_run_skill_script_approval: bool = False,
        source_id: str | None = None,
    ) -> _P:
        """A provider for the skills in folders (see :class:`FileSkillsSource` for the arguments).

        The folders are scanned on the first run and cached (``disable_caching=True`` rescans every run;
        ``cache_refresh_interval`` rescans once a cached scan is older than it).
        """
        files = FileSkillsSource(
            skill_paths,
            script_runner=script_runner,
            resource_extensions=resource_extensions,
            script_extensions=script_extensions,
            search_depth=search_depth,
            script_filter=script_filter,
            resource_filter=resource_filter,
        )
        # The file source is context-independent, so one shared cache is safe; as with skills passed directly,
        # the deduplicated list is what gets cached.
        deduplicated = DeduplicatingSkillsSource(files)
        source: SkillsSource = (
            deduplicated
            if disable_caching
            else CachingSkillsSource(deduplicated, refresh_interval=cache_refresh_interval)
        )
        switches: dict[str, Any] = {}
        if disable_load_skill_approval:
            switches["disable_load_skill_approval"] = True
        if disable_read_skill_resource_approval:
            switches["disable_read_skill_resource_approval"] = True
        if disable_run_skill_script_approval:
            switches["disable_run_skill_script_approval"] = True
        return cls(
            source,
            instruction_template=instruction_template,
            disable_caching=disable_caching,
            source_id=source_id,
            **switches,
        )

    @property
    def source(self) -> SkillsSource:
        """The source pipeline this provider reads."""
        return self._source

    @property
    def load_skill_approval(self) -> Literal["always_require", "never_require"]:
        """The approval mode of ``load_skill``."""
        return self._mode(self._disable_load_skill_approval)

    @property
    def read_skill_resource_approval(self) -> Literal["always_require", "never_require"]:
        """The approval mode of ``read_skill_resource``."""
        return self._mode(self._disable_read_skill_resource_approval)

    @property
    def run_skill_script_approval(self) -> Literal["always_require", "never_require"]:
        """The approval mode of ``run_skill_script``."""
        return self._mode(self._disable_run_skill_script_approval)

    @property
    def skills(self) -> list[Skill]:
        """The skills of the latest run (empty before the first), without fetching anything."""
        return list(self._turn.skills) if self._turn is not None else []

    async def get_skills(self, agent: Any = None, session: AgentSession | None = None) -> list[Skill]:
        """The skills ``agent`` would be offered now (fetching from the source as a run would)."""
        return list(await self._source.get_skills(SkillsSourceContext(agent=agent, session=session)))

    # -- each run ---------------------------------------------------------------------------------------------------
    def _turn_for(self, skills: list[Skill]) -> _Turn:
        turn = self._turn
        if turn is None or turn.skills is not skills or self._turn_length != len(skills):
            turn = _Turn(self, skills)
            self._turn = turn
            self._turn_length = len(skills)
        return turn

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        """Advertise the skills in the run's instructions and offer the skill tools."""
        skills = await self._source.get_skills(SkillsSourceContext(agent=agent, session=session))
        if not skills:
            return
        turn = self._turn_for(skills)
        context.extend_instructions(self.source_id, turn.instructions)
        context.extend_tools(self.source_id, turn.tools)
        # Views read which skills each run advertised from here (saved with the session).
        if state.get("advertised") is not turn.names:  # identity: comparing 100 names each run costs more
            state["advertised"] = turn.names

    # -- the tools -------------------------------------------------------------------------------------------------
    @staticmethod
    def _mode(disabled: bool) -> Literal["always_require", "never_require"]:
        return "never_require" if disabled else "always_require"

    def create_tools(self, turn: _Turn) -> list[FunctionTool]:
        """The three tools bound to one list of skills."""
        marker = {SKILLS_SOURCE_KEY: self.source_id}

        async def load_skill(skill_name: str) -> str:
            return await self._load_skill(turn, skill_name)

        async def read_skill_resource(skill_name: str, resource_name: str, **kwargs: Any) -> Any:
            return await self._read_skill_resource(turn, skill_name, resource_name, **kwargs)

        async def run_skill_script(
            skill_name: str, script_name: str, args: dict[str, Any] | list[str] | None = None, **kwargs: Any
        ) -> Any:
            return await self._run_skill_script(turn, skill_name, script_name, args, **kwargs)

        return [
            FunctionTool(
                load_skill,
                name=self.LOAD_SKILL_TOOL_NAME,
                description="Loads the full instructions for a specific skill.",
                approval_mode=self._mode(self._disable_load_skill_approval),
                input_model=_LOAD_SCHEMA,
                additional_properties=dict(marker),
            ),
            FunctionTool(
                read_skill_resource,
                name=self.READ_SKILL_RESOURCE_TOOL_NAME,
                description="Reads a resource associated with a skill, such as references, assets, or dynamic data.",
                approval_mode=self._mode(self._disable_read_skill_resource_approval),
                input_model=_READ_SCHEMA,
                additional_properties=dict(marker),
            ),
            FunctionTool(
                run_skill_script,
                name=self.RUN_SKILL_SCRIPT_TOOL_NAME,
                description="Runs a script associated with a skill.",
                approval_mode=self._mode(self._disable_run_skill_script_approval),
                input_model=_RUN_SCHEMA,
                additional_properties=dict(marker),
            ),
        ]

    @staticmethod
    def _find(turn: _Turn, name: str) -> Skill | None:
        return turn.by_name.get(name.lower())

    async def _load_skill(self, turn: _Turn, skill_name: str) -> str:
        if not skill_name or not skill_name.strip():
            return "Error: Skill name cannot be empty."
        skill = self._find(turn, skill_name)
        if skill is None:
            return f"Error: Skill '{skill_name}' not found."
        logger.info("Loading skill %s", skill.frontmatter.name)
        return await skill.get_content()

    async def _read_skill_resource(self, turn: _Turn, skill_name: str, resource_name: str, **kwargs: Any) -> Any:
        if not skill_name or not skill_name.strip():
            return "Error: Skill name cannot be empty."
        if not resource_name or not resource_name.strip():
            return "Error: Resource name cannot be empty."
        skill = self._find(turn, skill_name)
        if skill is None:
            return f"Error: Skill '{skill_name}' not found."
        resource = await skill.get_resource(resource_name)
        if resource is None:
            return f"Error: Resource '{resource_name}' not found in skill '{skill_name}'."
        return await resource.read(**kwargs)

    async def _run_skill_script(
        self,
        turn: _Turn,
        skill_name: str,
        script_name: str,
        args: dict[str, Any] | list[str] | None,
        **kwargs: Any,
    ) -> Any:
        if not skill_name or not skill_name.strip():
            return "Error: Skill name cannot be empty."
        if not script_name or not script_name.strip():
            return "Error: Script name cannot be empty."
        skill = self._find(turn, skill_name)
        if skill is None:
            return f"Error: Skill '{skill_name}' not found."
        script = await skill.get_script(script_name)
        if script is None:
            return f"Error: Script '{script_name}' not found in skill '{skill_name}'."
        return await script.run(skill, args, **kwargs)

    # -- views -------------------------------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        from ._display import provider_html

        return provider_html(self)

    def __repr__(self) -> str:
        return f"SkillsProvider(source={self._source!r}, source_id={self.source_id!r})"
