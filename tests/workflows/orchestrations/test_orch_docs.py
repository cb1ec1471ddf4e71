"""The examples in the orchestration docstrings run and show what they claim."""

from __future__ import annotations

import doctest
import inspect
import re
import textwrap
from typing import Any

import pytest

import agentnb.workflows as wf
from agentnb.workflows._orchestrations import _base, _group_chat, _handoff, _magentic

BUILDERS = ["SequentialBuilder", "ConcurrentBuilder", "HandoffBuilder", "GroupChatBuilder", "MagenticBuilder"]


@pytest.mark.parametrize("name", BUILDERS)
async def test_builder_example_runs_and_matches_its_comments(name: str) -> None:
    doc = inspect.getdoc(getattr(wf, name)) or ""
    match = re.search(r"```python\n(.*?)```", doc, re.S)
    assert match, f"{name} has no runnable example"
    checks: list[tuple[str, str]] = []
    lines = []
    for line in textwrap.dedent(match.group(1)).splitlines():
        expr, sep, expected = line.partition("  # ")
        if sep and expr and not expr[0].isspace() and "=" not in expr:
            checks.append((expr, expected))
            line = f"__shown.append({expr})"
        lines.append(line)
    assert checks, f"{name}'s example shows no result"
    namespace: dict[str, Any] = {"__shown": []}
    exec("async def __example():\n" + textwrap.indent("\n".join(lines), "    "), namespace)
    await namespace["__example"]()
    assert [repr(v) for v in namespace["__shown"]] == [expected for _, expected in checks]


@pytest.mark.parametrize("module", [_base, _group_chat, _handoff, _magentic], ids=lambda m: m.__name__)
def test_doctests(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
