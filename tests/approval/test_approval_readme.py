"""The README's approval section runs as written (top-level await, as in a notebook cell)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


async def test_the_readme_approval_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("<!-- section: approval -->", 1)[1].split("<!-- section:", 1)[0]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    assert "to_function_approval_response(True)" in code
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec("async def example():\n" + textwrap.indent(code, "    "), namespace)

    await namespace["example"]()

    assert capsys.readouterr().out.splitlines() == [
        "transfer {'amount': 50, 'to': 'Ada'}",
        "Done: 50 EUR went to Ada.",
        "Done: 20 EUR went to Bob.",
    ]
    assert len(list((tmp_path / ".agentnb" / "sessions").glob("*.json"))) == 1
