"""The SKILL.md frontmatter reader: the YAML subset skills use, with clear errors for anything else."""

from __future__ import annotations

import pytest

from agentnb.skills._files import frontmatter_from_text
from agentnb.skills._frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter


def test_split_needs_a_fenced_block_at_the_start() -> None:
    assert split_frontmatter("---\nname: a\n---\nbody\n") == ("name: a\n", "body\n")
    assert split_frontmatter("\ufeff---\nname: a\n---\n") == ("name: a\n", "")
    assert split_frontmatter("text\n---\nname: a\n---\n") is None
    assert split_frontmatter("---\nname: a\n") is None  # never closed


def test_scalars_quotes_comments_and_metadata() -> None:
    parsed = parse_frontmatter(
        "# a comment\n"
        "name: unit-converter\n"
        "description: 'It''s: quoted'   # trailing comment\n"
        'license: "MIT \\u00e9\\n"\n'
        "compatibility: url http://x.example/#frag\n"
        "metadata:\n"
        "  author: ada\n"
        '  version: "1.0"\n'
    )
    assert parsed == {
        "name": "unit-converter",
        "description": "It's: quoted",
        "license": "MIT é\n",
        "compatibility": "url http://x.example/#frag",
        "metadata": {"author": "ada", "version": "1.0"},
    }


def test_block_scalars_literal_folded_and_chomping() -> None:
    text = "a: |\n  one\n  two\n\nb: >-\n  one\n  two\n\n  three\nc: |+\n  kept\n\nd: x\n"
    parsed = parse_frontmatter(text)
    assert parsed["a"] == "one\ntwo\n"
    assert parsed["b"] == "one two\nthree"
    assert parsed["c"] == "kept\n\n"
    assert parsed["d"] == "x"


def test_a_list_becomes_the_specs_space_delimited_string() -> None:
    assert parse_frontmatter("allowed-tools:\n  - Read\n  - 'Bash(git:*)'\n") == {"allowed-tools": "Read Bash(git:*)"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: a\nname: b\n", "appears twice"),
        ("  name: a\n", "unexpected indentation"),
        ("just text\n", "expected 'key: value'"),
        ('name: "open\n', "unterminated"),
        ("name: 'a' tail\n", "unexpected text"),
        ('name: "\\q"\n', "unknown escape"),
        ("m:\n  a: 1\n    b: 2\n", "one level of nesting"),
    ],
)
def test_malformed_frontmatter_says_where(text: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=message):
        parse_frontmatter(text)


def test_validation_names_the_file_and_field() -> None:
    with pytest.raises(ValueError, match=r"SKILL\.md has no 'name'"):
        frontmatter_from_text("---\ndescription: x\n---\n", "SKILL.md")
    with pytest.raises(ValueError, match="Invalid skill name 'Bad_Name'"):
        frontmatter_from_text("---\nname: Bad_Name\ndescription: x\n---\n", "SKILL.md")
    with pytest.raises(ValueError, match="no frontmatter"):
        frontmatter_from_text("# title\n", "SKILL.md")
    fm = frontmatter_from_text(
        "---\nName: ok\nDescription: d\nallowed-tools: a b\nmetadata:\n  k: v\n---\n", "SKILL.md"
    )
    assert (fm.name, fm.allowed_tools, fm.metadata) == ("ok", "a b", {"k": "v"})
