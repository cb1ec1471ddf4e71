"""Rich notebook display of skills, sources and providers: what each offers and where it came from.

Everything shown is text from skill authors or remote servers, so every value goes through
:mod:`agentnb._html` escaping; nothing here fetches (views show what is already known).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._html import badge, details, escape, shorten, table, wrap

if TYPE_CHECKING:
    from ._model import Skill
    from ._provider import SkillsProvider
    from ._sources import SkillsSource

__all__ = ["provider_html", "skill_html", "skill_rows", "source_html", "source_tree"]


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
