"""Building skill folders for tests."""

from __future__ import annotations

from pathlib import Path

CONVERT = """\
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("--value", type=float, required=True)
parser.add_argument("--factor", type=float, required=True)
args = parser.parse_args()
print(json.dumps({"value": args.value, "factor": args.factor, "result": round(args.value * args.factor, 4)}))
"""


def write_skill(
    root: Path,
    name: str,
    *,
    description: str = "A test skill.",
    body: str = "Follow these steps.",
    files: dict[str, str] | None = None,
    folder: str | None = None,
) -> Path:
    """A skill folder ``root/<folder or name>`` with a SKILL.md and ``files`` (relative path -> text)."""
    directory = root / (folder or name)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    for relative, text in (files or {}).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory
