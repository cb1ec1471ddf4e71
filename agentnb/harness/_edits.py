"""Text edits the file tools apply: substring replacement and whole-line replacement.

Shared by the file-access and file-memory tools so both edit the same way; each edit is all or nothing
(a bad edit raises ``ValueError`` before anything is written).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, cast

from pydantic import BaseModel, Field

__all__ = ["LineEdit", "apply_replace", "apply_replace_lines", "line_edits"]


class LineEdit(BaseModel):
    """One literal line replacement: the 1-based line and the text that takes its place."""

    line_number: Annotated[int, Field(description="1-based line number to replace.")]
    new_line: Annotated[
        str,
        Field(
            description=(
                "Literal replacement text for the line, including any trailing newline you want to keep "
                "(the editor does not add one). An empty string deletes the line, including its line break."
            )
        ),
    ]


def apply_replace(content: str, old_string: str, new_string: str, replace_all: bool) -> tuple[str, int]:
    """``content`` with ``old_string`` replaced, and how many times; it must occur (once, unless ``replace_all``)."""
    if not old_string:
        raise ValueError("old_string must not be empty.")
    count = content.count(old_string)
    if count == 0:
        raise ValueError(f"old_string not found: {old_string!r}.")
    if count > 1 and not replace_all:
        raise ValueError(
            f"old_string occurs {count} times; pass replace_all=true to replace all, or give a more specific "
            "old_string."
        )
    return content.replace(old_string, new_string), count


def _lines(content: str) -> list[str]:
    # Split on "\n" only, keeping it, so line numbers agree with the grep tools' numbering.
    parts = content.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


def apply_replace_lines(content: str, edits: list[tuple[int, str]]) -> str:
    """``content`` with whole lines replaced verbatim (an empty replacement deletes the line and its break)."""
    if not edits:
        raise ValueError("At least one line edit must be provided.")
    lines = _lines(content)
    seen: set[int] = set()
    for number, _ in edits:
        if number in seen:
            raise ValueError(f"Duplicate line_number {number} in edits.")
        seen.add(number)
        if not 1 <= number <= len(lines):
            raise ValueError(f"line_number {number} is out of range (the file has {len(lines)} lines).")
    for number, text in edits:
        lines[number - 1] = text
    return "".join(lines)


def line_edits(edits: list[Any]) -> list[tuple[int, str]]:
    """Edits given as models or dicts, as ``(line_number, new_line)`` pairs."""
    out: list[tuple[int, str]] = []
    for edit in edits:
        if isinstance(edit, Mapping):
            item = cast("Mapping[str, Any]", edit)
            out.append((int(item["line_number"]), str(item["new_line"])))
        else:
            out.append((int(edit.line_number), str(edit.new_line)))
    return out
