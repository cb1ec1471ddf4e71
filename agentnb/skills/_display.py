"""Rich notebook display of skills, sources and providers: what each offers and where it came from.

Everything shown is text from skill authors or remote servers, so every value goes through
:mod:`agentnb._html` escaping; nothing here fetches (views show what is already known).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._html import badge, details, escape, shorten, table, wrap

if TYPE_CHECKING:
    from .._types import Content, Message
    from ._model import Skill
    from ._provider import SkillsProvider
    from ._sources import SkillsSource

__all__ = [
    "provider_html",
    "skill_html",
    "skill_rows",
    "skills_panel_html",
    "source_html",
    "source_tree",
    "turn_activity",
]


def skill_rows(skill: Skill) -> dict[str, Any]:
    """A skill as plain data for views: name, description, kind, origin, resources and scripts."""
    frontmatter = skill.frontmatter
    return {
        "name": frontmatter.name,
        "description": frontmatter.description,
        "kind": type(skill).__name__,
        "origin": skill.origin,
        "license": frontmatter.license,
        "compatibility": frontmatter.compatibility,
        "allowed_tools": frontmatter.allowed_tools,
        "metadata": dict(frontmatter.metadata or {}),
        "resources": [
            {"name": r.name, "description": r.description, "origin": r.origin} for r in skill.known_resources
        ],
        "scripts": [{"name": s.name, "description": s.description, "origin": s.origin} for s in skill.known_scripts],
    }


def _skill_body(skill: Skill) -> str:
    data = skill_rows(skill)
    parts = [f"<div>{escape(data['description'])}</div>"]
    facts = [("from", data["origin"])]
    for key in ("license", "compatibility", "allowed_tools"):
        if data[key]:
            facts.append((key.replace("_", " "), data[key]))
    facts.extend((f"metadata.{k}", v) for k, v in data["metadata"].items())
    parts.append(table(["", ""], facts))
    if data["resources"]:
        parts.append("<b>resources</b>")
        parts.append(
            table(
                ["name", "description", "from"],
                [(r["name"], r["description"] or "", r["origin"]) for r in data["resources"]],
            )
        )
    if data["scripts"]:
        parts.append("<b>scripts</b>")
        parts.append(
            table(
                ["name", "description", "from"],
                [(s["name"], s["description"] or "", s["origin"]) for s in data["scripts"]],
            )
        )
    return "".join(parts)


def _skill_summary(skill: Skill) -> str:
    data = skill_rows(skill)
    counts = f"{len(data['resources'])} resources · {len(data['scripts'])} scripts"
    return (
        f"<b>{escape(data['name'])}</b> {badge(data['kind'], 'info')} "
        f"<span>{escape(shorten(data['description'], 120))}</span> <small>{escape(counts)}</small>"
    )


def skill_html(skill: Skill) -> str:
    """One skill: its fields, resources and scripts, and where it came from."""
    return wrap(details(_skill_summary(skill), _skill_body(skill), open=True))


def source_tree(source: SkillsSource) -> list[tuple[int, str]]:
    """The source pipeline as ``(depth, label)`` rows, outermost first."""
    rows: list[tuple[int, str]] = []

    def visit(node: SkillsSource, depth: int) -> None:
        rows.append((depth, node.label))
        for inner in node.inner_sources:
            visit(inner, depth + 1)

    visit(source, 0)
    return rows


def _tree_html(source: SkillsSource) -> str:
    lines = [
        f"<div style='padding-left:{depth * 1.2}em'>↳ {escape(label)}</div>" for depth, label in source_tree(source)
    ]
    return "".join(lines)


def _known(source: SkillsSource) -> list[Skill] | None:
    """The skills a source already holds (a cache's list, a file source's last scan), without fetching."""
    cached = getattr(source, "cached", None)
    if callable(cached):
        value = cached()
        if isinstance(value, list):
            return value  # pyright: ignore[reportUnknownVariableType]
    for inner in source.inner_sources:
        found = _known(inner)
        if found is not None:
            return found
    return None


def _skipped(source: SkillsSource) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    skipped: list[object] = list(getattr(source, "skipped", None) or [])
    for skip in skipped:
        rows.append((str(getattr(skip, "path", "")), str(getattr(skip, "reason", ""))))
    for inner in source.inner_sources:
        rows.extend(_skipped(inner))
    return rows


def _skills_list(skills: list[Skill]) -> str:
    return "".join(details(_skill_summary(s), _skill_body(s)) for s in skills)


def source_html(source: SkillsSource) -> str:
    """A source: its pipeline, the skills it already holds and the folders it skipped (with why)."""
    parts = [f"<b>{escape(source.label)}</b>", _tree_html(source)]
    known = _known(source)
    if known is None:
        parts.append("<div><i>not read yet: skills are listed after the first run</i></div>")
    else:
        parts.append(_skills_list(known))
    skipped = _skipped(source)
    if skipped:
        parts.append(details(badge(f"{len(skipped)} skipped", "warn"), table(["path", "reason"], skipped)))
    return wrap("".join(parts))


def provider_html(provider: SkillsProvider) -> str:
    """A provider: its tools and their approval, its source pipeline and its skills."""
    skills = provider.skills or _known(provider.source) or []
    tools = [
        (provider.LOAD_SKILL_TOOL_NAME, provider.load_skill_approval),
        (provider.READ_SKILL_RESOURCE_TOOL_NAME, provider.read_skill_resource_approval),
        (provider.RUN_SKILL_SCRIPT_TOOL_NAME, provider.run_skill_script_approval),
    ]
    tool_badges = " ".join(
        badge(
            f"{name}: {'asks' if mode == 'always_require' else 'no approval'}",
            "warn" if mode == "always_require" else "",
        )
        for name, mode in tools
    )
    parts = [
        f"<b>SkillsProvider</b> {badge(provider.source_id, 'info')} <small>{len(skills)} skills</small>",
        f"<div>{tool_badges}</div>",
        _tree_html(provider.source),
        _skills_list(skills) if skills else "<div><i>no skills read yet: they are listed after the first run</i></div>",
    ]
    skipped = _skipped(provider.source)
    if skipped:
        parts.append(details(badge(f"{len(skipped)} skipped", "warn"), table(["path", "reason"], skipped)))
    return wrap("".join(parts))


# -- what each turn did with skills (the DevUI side panel) --------------------------------------------------------

_LOAD, _READ, _RUN = "load_skill", "read_skill_resource", "run_skill_script"


def turn_activity(messages: Sequence[Message], start: int = 0) -> dict[str, list[str]]:
    """The skills a stretch of conversation loaded and used, and the skill calls still awaiting an answer.

    Read from the messages themselves (calls and their results), so it is the same after a reload.
    ``loaded`` lists skill names; ``used`` lists ``skill: resource`` reads and ``skill ▶ script`` runs;
    ``denied`` and ``waiting`` list calls a person refused or has not answered yet. Only calls made, or
    answered, from ``messages[start]`` on count (a turn that resumes after an approval ran an earlier call).
    """
    from .._types import call_arguments  # the display module loads without the core types

    results: dict[str, Content] = {}
    answered_here: set[str] = set()
    for position, message in enumerate(messages):
        for content in message.contents:
            if content.type == "function_result" and content.call_id:
                results[content.call_id] = content
                if position >= start:
                    answered_here.add(content.call_id)
    activity: dict[str, list[str]] = {"loaded": [], "used": [], "denied": [], "waiting": []}
    for position, message in enumerate(messages):
        for call in message.contents:
            if call.type != "function_call" or call.name not in (_LOAD, _READ, _RUN):
                continue
            if position < start and (call.call_id or "") not in answered_here:
                continue
            try:
                arguments = call_arguments(call)
            except ValueError:
                continue
            skill = str(arguments.get("skill_name", "?"))
            if call.name == _LOAD:
                label = skill
            elif call.name == _READ:
                label = f"{skill}: {arguments.get('resource_name', '?')}"
            else:
                label = f"{skill} ▶ {arguments.get('script_name', '?')}"
            result = results.get(call.call_id or "")
            if result is None:
                activity["waiting"].append(label)
            elif result.additional_properties.get("approval") == "rejected":
                activity["denied"].append(label)
            else:
                activity["loaded" if call.name == _LOAD else "used"].append(label)
    return activity


def skills_panel_html(
    providers: Sequence[SkillsProvider], turns: Sequence[tuple[int, list[str], dict[str, list[str]]]]
) -> str:
    """The side panel of an agent with skills: each provider's skills, then what every turn did with them.

    ``turns`` holds ``(turn number, advertised names, activity)`` rows, activity as from :func:`turn_activity`.
    """
    parts: list[str] = []
    for provider in providers:
        skills = provider.skills or _known(provider.source) or []
        parts.append(
            f"<div class='anb-role'>{escape(provider.source_id)} · {len(skills)} skills</div>"
            + (_skills_list(skills) if skills else "<i>listed after the first turn</i>")
        )
    rows = [
        (
            number,
            len(advertised),
            ", ".join(activity["loaded"]) or "—",
            ", ".join(activity["used"]) or "—",
            ", ".join(
                [
                    *(f"{w} (awaiting approval)" for w in activity["waiting"]),
                    *(f"{d} (denied)" for d in activity["denied"]),
                ]
            )
            or "—",
        )
        for number, advertised, activity in turns
    ]
    parts.append("<div class='anb-role'>Skills by turn</div>")
    parts.append(
        table(["turn", "advertised", "loaded", "used", "asked"], rows)
        if rows
        else "<span class='anb-muted'>no turns yet</span>"
    )
    return "".join(parts)
