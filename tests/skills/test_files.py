"""FileSkillsSource: discovery, and the trust boundary below each root (links, unreadable entries)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentnb import FileSkillsSource, SkillsSourceContext
from agentnb.exceptions import SkillSecurityError
from agentnb.skills import FileSkill
from agentnb.skills._files import _entry_is_link  # pyright: ignore[reportPrivateUsage]

from .helpers import write_skill

CTX = SkillsSourceContext(agent=None)


async def names(source: FileSkillsSource) -> list[str]:
    return sorted(s.frontmatter.name for s in await source.get_skills(CTX))


async def test_discovers_skills_resources_and_scripts(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "unit-converter",
        files={"references/TABLE.md": "t", "scripts/convert.py": "print(1)", "notes.txt": "n", "deep/a/b.md": "x"},
    )
    write_skill(tmp_path / "group", "nested-skill")  # two levels below the root
    write_skill(tmp_path / "a" / "b", "too-deep")  # three levels: not searched
    (tmp_path / "unit-converter" / "inner").mkdir()
    write_skill(tmp_path / "unit-converter", "inner")  # below a skill: part of it, not a skill
    source = FileSkillsSource(tmp_path)
    skills = await source.get_skills(CTX)
    assert sorted(s.frontmatter.name for s in skills) == ["nested-skill", "unit-converter"]
    skill = next(s for s in skills if s.frontmatter.name == "unit-converter")
    assert isinstance(skill, FileSkill)
    assert [r.name for r in skill.known_resources] == ["notes.txt", "references/TABLE.md"]
    assert [s.name for s in skill.known_scripts] == ["scripts/convert.py"]
    assert await (await skill.get_resource("./references/TABLE.md")).read() == "t"  # type: ignore[union-attr]


async def test_extensions_depth_and_filters(tmp_path: Path) -> None:
    write_skill(tmp_path, "s", files={"a.md": "", "b.json": "", "c.py": "", "sub/d.md": "", "tests/t.py": ""})
    source = FileSkillsSource(
        tmp_path,
        resource_extensions=(".md",),
        search_depth=1,
        script_filter=lambda skill, path: not path.startswith("tests/"),
    )
    (skill,) = await source.get_skills(CTX)
    assert [r.name for r in skill.known_resources] == ["a.md"]
    assert [s.name for s in skill.known_scripts] == ["c.py"]
    (skill,) = await FileSkillsSource(tmp_path, resource_extensions=(), script_extensions=()).get_skills(CTX)
    assert skill.known_resources == [] and skill.known_scripts == []
    (skill,) = await FileSkillsSource(tmp_path, resource_extensions=None, script_extensions=None).get_skills(CTX)
    assert "a.md" in [r.name for r in skill.known_resources]
    with pytest.raises(ValueError, match="search_depth"):
        FileSkillsSource(tmp_path, search_depth=0)


async def test_bad_skills_are_skipped_with_a_reason(tmp_path: Path) -> None:
    write_skill(tmp_path, "good")
    write_skill(tmp_path, "other-name", folder="mismatch")
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "SKILL.md").write_text("no frontmatter")
    source = FileSkillsSource(tmp_path)
    assert await names(source) == ["good"]
    reasons = {Path(s.path).name: s.reason for s in source.skipped}
    assert "differs from its folder's name" in reasons["mismatch"]
    assert "no frontmatter" in reasons["broken"]


# -- the trust boundary: links are never followed below a root --------------------------------------------------


async def test_a_linked_skill_folder_below_a_root_is_not_adopted(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_skill(outside, "planted")
    root = tmp_path / "root"
    root.mkdir()
    (root / "planted").symlink_to(outside / "planted", target_is_directory=True)
    (root / "group").symlink_to(outside, target_is_directory=True)
    source = FileSkillsSource(root)
    assert await names(source) == []
    assert {Path(s.path).name for s in source.skipped} == {"planted", "group"}


async def test_a_linked_skill_md_is_not_adopted(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("---\nname: sneaky\ndescription: d\n---\n")
    skill = tmp_path / "root" / "sneaky"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").symlink_to(elsewhere)
    source = FileSkillsSource(tmp_path / "root")
    assert await names(source) == []
    assert "symbolic link" in source.skipped[0].reason


async def test_the_root_itself_may_be_a_link(tmp_path: Path) -> None:
    write_skill(tmp_path / "real", "fine")
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert await names(FileSkillsSource(tmp_path / "alias")) == ["fine"]


async def test_linked_files_and_folders_inside_a_skill_are_left_out(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("secret")
    (tmp_path / "secret-dir").mkdir()
    (tmp_path / "secret-dir" / "x.md").write_text("secret")
    skill = write_skill(tmp_path / "root", "s", files={"ok.md": "ok"})
    (skill / "link.md").symlink_to(secret)
    (skill / "refs").symlink_to(tmp_path / "secret-dir", target_is_directory=True)
    (skill / "evil.py").symlink_to(secret)
    (found,) = await FileSkillsSource(tmp_path / "root").get_skills(CTX)
    assert [r.name for r in found.known_resources] == ["ok.md"]
    assert found.known_scripts == []


async def test_a_resource_replaced_by_a_link_after_discovery_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("secret")
    skill = write_skill(tmp_path / "root", "s", files={"refs/a.md": "fine"})
    (found,) = await FileSkillsSource(tmp_path / "root").get_skills(CTX)
    resource = await found.get_resource("refs/a.md")
    assert resource is not None and await resource.read() == "fine"
    (skill / "refs" / "a.md").unlink()
    (skill / "refs" / "a.md").symlink_to(secret)
    with pytest.raises(SkillSecurityError, match="symbolic link"):
        await resource.read()
    # A link higher up (the folder) is refused the same way.
    (skill / "refs" / "a.md").unlink()
    os.rename(skill / "refs", skill / "refs-real")
    (skill / "refs").symlink_to(skill / "refs-real", target_is_directory=True)
    (skill / "refs-real" / "a.md").write_text("fine")
    with pytest.raises(SkillSecurityError):
        await resource.read()


async def test_an_entry_that_cannot_be_inspected_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An lstat failure (a permission or I/O error we cannot cause as root) must count as unsafe, never as safe.
    write_skill(tmp_path / "root", "s", files={"refs/a.md": "x"})
    (found,) = await FileSkillsSource(tmp_path / "root").get_skills(CTX)
    resource = await found.get_resource("refs/a.md")
    assert resource is not None
    real_lstat = os.lstat

    def failing_lstat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if str(path).endswith("refs"):
            raise PermissionError(13, "denied", str(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", failing_lstat)
    with pytest.raises(SkillSecurityError):
        await resource.read()

    class Unreadable:
        path = str(tmp_path)

        def is_symlink(self) -> bool:
            raise OSError(5, "I/O error")

    assert _entry_is_link(Unreadable()) is True  # type: ignore[arg-type]
