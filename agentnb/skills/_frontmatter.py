"""The YAML subset a SKILL.md frontmatter uses, parsed without a YAML library.

SKILL.md frontmatter is a flat mapping of strings (``name``, ``description``, ``license``,
``compatibility``, ``allowed-tools``) plus one nested mapping (``metadata``). Reading only that subset keeps
skills free of a YAML dependency and keeps discovery fast: no type coercion, no anchors, no tags, nothing
a skill author could use to make the loader do work. Unknown keys are kept as text and ignored by callers.
"""

from __future__ import annotations

import re

__all__ = ["FrontmatterError", "parse_frontmatter", "split_frontmatter"]

_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_BLOCK = re.compile(r"([|>])([+-]?)[ \t]*(?:#.*)?$")
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    '"': '"',
    "\\": "\\",
    "/": "/",
    " ": " ",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "f": "\f",
    "v": "\v",
}


class FrontmatterError(ValueError):
    """The frontmatter is not the YAML subset SKILL.md files use; the message says where."""


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """``(frontmatter, body)`` of a document that starts with a ``---`` fenced block, else ``None``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].rstrip() != "---":
        return None
    start = first_end + 1
    position = start
    while position <= len(text):
        end = text.find("\n", position)
        line = text[position:] if end < 0 else text[position:end]
        if line.rstrip() == "---":
            return text[start:position], ("" if end < 0 else text[end + 1 :])
        if end < 0:
            return None
        position = end + 1
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _strip_comment(value: str) -> str:
    # In plain YAML scalars a comment starts at " #"; a "#" inside a word (a URL fragment) is text.
    cut = value.find(" #")
    return value if cut < 0 else value[:cut].rstrip()


def _quoted(value: str, line_number: int) -> str:
    quote = value[0]
    if quote == "'":
        end = 1
        out: list[str] = []
        while end < len(value):
            char = value[end]
            if char == "'":
                if value[end + 1 : end + 2] == "'":
                    out.append("'")
                    end += 2
                    continue
                _trailing(value[end + 1 :], line_number)
                return "".join(out)
            out.append(char)
            end += 1
        raise FrontmatterError(f"line {line_number}: unterminated single-quoted string")
    out = []
    end = 1
    while end < len(value):
        char = value[end]
        if char == "\\":
            code = value[end + 1 : end + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                end += 2
                continue
            if code in ("x", "u", "U"):
                width = {"x": 2, "u": 4, "U": 8}[code]
                digits = value[end + 2 : end + 2 + width]
                if len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
                    out.append(chr(int(digits, 16)))
                    end += 2 + width
                    continue
            raise FrontmatterError(f"line {line_number}: unknown escape '\\{code}' in a double-quoted string")
        if char == '"':
            _trailing(value[end + 1 :], line_number)
            return "".join(out)
        out.append(char)
        end += 1
    raise FrontmatterError(f"line {line_number}: unterminated double-quoted string")


def _trailing(rest: str, line_number: int) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise FrontmatterError(f"line {line_number}: unexpected text {rest!r} after a quoted string")


def _scalar(value: str, line_number: int) -> str:
    if value[:1] in ("'", '"'):
        return _quoted(value, line_number)
    return _strip_comment(value)


def _block(lines: list[str], index: int, style: str, chomp: str, parent_indent: int) -> tuple[str, int]:
    """A ``|`` or ``>`` block scalar starting at ``lines[index]``: its text and the next line's index."""
    taken: list[str] = []
    while index < len(lines):
        line = lines[index]
        if line.strip() and _indent(line) <= parent_indent:
            break
        taken.append(line)
        index += 1
    trailing_blank = 0
    while taken and not taken[-1].strip():
        taken.pop()
        trailing_blank += 1
    if not taken:
        return "", index
    width = min(_indent(line) for line in taken if line.strip())
    rows = [line[width:] if line.strip() else "" for line in taken]
    if style == "|":
        text = "\n".join(rows)
    else:
        # Folded: lines of a paragraph join with spaces; an empty line is a line break.
        paragraphs: list[str] = []
        current: list[str] = []
        for row in rows:
            if row:
                current.append(row)
            else:
                paragraphs.append(" ".join(current))
                current = []
        paragraphs.append(" ".join(current))
        text = "\n".join(paragraphs)
    if chomp == "-":
        return text, index
    if chomp == "+":
        return text + "\n" * (1 + trailing_blank), index
    return text + "\n", index


def parse_frontmatter(text: str) -> dict[str, str | dict[str, str]]:
    """Parse frontmatter text into top-level keys mapping to strings, or to a mapping of strings.

    Supports plain, single- and double-quoted scalars, ``|`` and ``>`` block scalars (with ``-`` / ``+``
    chomping), comments, and one level of nested mapping (as ``metadata`` uses).

    Raises:
        FrontmatterError: A line is not ``key: value``, a key repeats, or a quoted string is broken.
    """
    lines = text.splitlines()
    result: dict[str, str | dict[str, str]] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        if line[0] in " \t":
            raise FrontmatterError(f"line {index + 1}: unexpected indentation")
        match = _KEY.match(line)
        if match is None:
            raise FrontmatterError(f"line {index + 1}: expected 'key: value', got {stripped!r}")
        key, raw = match.group(1), match.group(2) or ""
        if key in result:
            raise FrontmatterError(f"line {index + 1}: key {key!r} appears twice")
        index += 1
        block = _BLOCK.match(raw)
        if block is not None:
            result[key], index = _block(lines, index, block.group(1), block.group(2), 0)
        elif raw and not raw.startswith("#"):
            result[key] = _scalar(raw, index)
        else:
            result[key], index = _mapping_or_empty(lines, index)
    return result


def _mapping_or_empty(lines: list[str], index: int) -> tuple[str | dict[str, str], int]:
    """The indented ``key: value`` lines under a key with no value (``metadata:``), a list, or ``""``."""
    mapping: dict[str, str] = {}
    items: list[str] = []
    width: int | None = None
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        if line[0] not in " \t":
            break
        indent = _indent(line)
        if width is None:
            width = indent
        if indent != width:
            raise FrontmatterError(f"line {index + 1}: only one level of nesting is supported")
        if stripped == "-" or stripped.startswith("- "):
            # A list (``allowed-tools`` written one tool a line): kept as the spec's space-delimited string.
            items.append(_scalar(stripped[1:].strip(), index + 1) if stripped != "-" else "")
            index += 1
            continue
        match = _KEY.match(stripped)
        if match is None:
            raise FrontmatterError(f"line {index + 1}: expected 'key: value', got {stripped!r}")
        key, raw = match.group(1), match.group(2) or ""
        if key in mapping:
            raise FrontmatterError(f"line {index + 1}: key {key!r} appears twice")
        index += 1
        block = _BLOCK.match(raw)
        if block is not None:
            mapping[key], index = _block(lines, index, block.group(1), block.group(2), width)
        else:
            mapping[key] = _scalar(raw, index) if raw else ""
    if width is None:
        return "", index
    if items and mapping:
        raise FrontmatterError(f"line {index}: a value cannot be both a list and a mapping")
    if items:
        return " ".join(item for item in items if item), index
    return mapping, index
