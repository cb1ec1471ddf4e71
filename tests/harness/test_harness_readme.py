"""The README's harness section runs as written (top-level await, as in a notebook cell)."""

from __future__ import annotations

import re
import textwrap
import warnings
from pathlib import Path

import pytest

from agentnb.harness import ExperimentalWarning

README = Path(__file__).resolve().parents[2] / "README.md"


async def test_the_readme_harness_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    section = README.read_text(encoding="utf-8").split("<!-- section: harness -->", 1)[1].split("<!-- section:", 1)[0]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    namespace: dict[str, object] = {}
    exec("async def example():\n" + textwrap.indent(code, "    "), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)  # file access and the loop are experimental
        await namespace["example"]()  # type: ignore[operator]
    assert capsys.readouterr().out.splitlines() == ["file_access_read", "Q1 sales: 37."]
