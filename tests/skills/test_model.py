"""The skill model: frontmatter validation, resources, scripts, and the three ways to define a skill."""

from __future__ import annotations

import json

import pytest

from agentnb import (
    ClassSkill,
    FileSkill,
    FileSkillScript,
    InlineSkill,
    InlineSkillResource,
    InlineSkillScript,
    SkillFrontmatter,
)


def fm(name: str = "demo", description: str = "A demo skill.") -> SkillFrontmatter:
    return SkillFrontmatter(name=name, description=description)


@pytest.mark.parametrize("name", ["", "Upper", "-lead", "trail-", "dou--ble", "under_score", "a" * 65])
def test_frontmatter_rejects_names_against_the_spec(name: str) -> None:
    with pytest.raises(ValueError, match="name"):
        fm(name)


def test_frontmatter_limits_and_copies_metadata() -> None:
    with pytest.raises(ValueError, match="1024"):
        fm(description="x" * 1025)
    with pytest.raises(ValueError, match="empty"):
        fm(description="  ")
    with pytest.raises(ValueError, match="500"):
        SkillFrontmatter(name="a", description="b", compatibility="c" * 501)
    metadata = {"k": "v"}
    frontmatter = SkillFrontmatter(name="a-1", description="b", metadata=metadata)
    metadata["k"] = "changed"
    assert frontmatter.metadata == {"k": "v"}
    frontmatter.name = "Not Valid"  # later assignments are not re-validated, as in the reference
    assert frontmatter.name == "Not Valid"


async def test_resource_needs_exactly_one_of_content_or_function() -> None:
    with pytest.raises(ValueError, match="either content or function"):
        InlineSkillResource(name="r")
    with pytest.raises(ValueError, match="either content or function, not both"):
        InlineSkillResource(name="r", content="a", function=lambda: "b")
    assert await InlineSkillResource(name="r", content="static").read(user="x") == "static"

    async def dynamic(**kwargs: object) -> str:
        return f"for {kwargs['user']}"

    assert await InlineSkillResource(name="r", function=dynamic).read(user="ada") == "for ada"
    assert await InlineSkillResource(name="r", function=lambda: 3).read(user="ignored") == 3


async def test_inline_script_arguments_and_parser() -> None:
    script = InlineSkillScript(name="add", function=lambda a, b: a + b)
    assert await script.run(None, {"a": 1, "b": 2}) == 3
    with pytest.raises(TypeError, match="not a list"):
        await script.run(None, ["1", "2"])
    with pytest.raises(TypeError, match="argument_parser"):
        await script.run(None, '{"a": 1, "b": 2}')
    parsed = InlineSkillScript(name="add", function=lambda a, b: a + b, argument_parser=lambda raw: json.loads(raw))  # type: ignore[arg-type]
    assert await parsed.run(None, '{"a": 1, "b": 2}') == 3


def test_file_script_needs_an_absolute_path(tmp_path: object) -> None:
    with pytest.raises(ValueError, match="absolute"):
        FileSkillScript(name="s.py", full_path="relative/s.py")


async def test_inline_skill_decorators_and_content() -> None:
    skill = InlineSkill(frontmatter=fm(description="Use <b> & co."), instructions="Do the thing.")

    @skill.resource(description="A table")
    def table() -> str:
        return "| a |"

    @skill.script
    def convert(value: float, factor: float) -> float:
        """Multiply."""
        return value * factor

    content = await skill.get_content()
    assert "<description>Use &lt;b&gt; &amp; co.</description>" in content
    assert '<resource name="table" description="A table"/>' in content
    assert '<script name="convert">' in content and '"value"' in content
    assert await (await skill.get_resource("TABLE")).read() == "| a |"  # type: ignore[union-attr]
    assert await (await skill.get_script("convert")).run(skill, {"value": 2, "factor": 3}) == 6  # type: ignore[union-attr]
    assert await skill.get_script("missing") is None
    empty = InlineSkill(frontmatter=fm("empty"), instructions="x")
    assert "<available_resources />" in await empty.get_content()
    assert "<available_scripts />" in await empty.get_content()


class Converter(ClassSkill):
    def __init__(self) -> None:
        super().__init__(frontmatter=fm("converter"))

    @property
    def instructions(self) -> str:
        return "Convert."

    @property
    @ClassSkill.resource(description="Factors")
    def conversion_table(self) -> str:
        return "miles->km 1.609"

    @ClassSkill.resource(name="live")
    def live_rates(self) -> str:
        return "live"

    @ClassSkill.script
    def convert_value(self, value: float, factor: float) -> float:
        return value * factor


async def test_class_skill_discovers_marked_members() -> None:
    skill = Converter()
    assert [r.name for r in skill.resources] == ["conversion-table", "live"]
    assert [s.name for s in skill.scripts] == ["convert-value"]
    assert await (await skill.get_resource("conversion-table")).read() == "miles->km 1.609"  # type: ignore[union-attr]
    assert await (await skill.get_script("convert-value")).run(skill, {"value": 1, "factor": 2}) == 2  # type: ignore[union-attr]
    assert "<instructions>\nConvert.\n</instructions>" in await skill.get_content()


def test_class_skill_decorator_misuse_is_reported() -> None:
    with pytest.raises(TypeError, match="before @property"):
        ClassSkill.resource(property(lambda self: "x"))
    with pytest.raises(ValueError, match="name"):
        ClassSkill.script(name="Bad Name")


def test_class_skill_duplicate_names_are_refused() -> None:
    class Twice(ClassSkill):
        def __init__(self) -> None:
            super().__init__(frontmatter=fm("twice"))

        @property
        def instructions(self) -> str:
            return "x"

        @ClassSkill.script(name="go")
        def a(self) -> None: ...

        @ClassSkill.script(name="go")
        def b(self) -> None: ...

    with pytest.raises(ValueError, match="already has a script named 'go'"):
        _ = Twice().scripts


async def test_file_skill_content_appends_resources_and_scripts(tmp_path: object) -> None:
    skill = FileSkill(frontmatter=fm(), content="---\nname: demo\n---\nBody", path="/skills/demo")
    content = await skill.get_content()
    assert content.startswith("---\nname: demo\n---\nBody\n\n<available_resources />")
    assert "<available_scripts />" in content
