"""The public surface of agentnb.workflows: a sorted __all__, importable names, lazy root exports."""

from __future__ import annotations

import subprocess
import sys

import agentnb
import agentnb.workflows as workflows


def test_all_is_sorted_and_importable() -> None:
    # Ruff's order (RUF022): CONSTANTS, then Classes, then functions, each alphabetical.
    order = sorted(workflows.__all__, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    assert workflows.__all__ == order
    for name in workflows.__all__:
        assert getattr(workflows, name) is not None, name


def test_root_exports_are_the_same_objects() -> None:
    for name in (
        "WorkflowBuilder",
        "Executor",
        "WorkflowContext",
        "handler",
        "executor",
        "response_handler",
        "Case",
        "Default",
        "Workflow",
        "WorkflowEvent",
        "WorkflowRunResult",
        "WorkflowViz",
    ):
        assert getattr(agentnb, name) is getattr(workflows, name), name


def test_importing_agentnb_does_not_load_the_workflow_engine() -> None:
    code = "import sys, agentnb; print('agentnb.workflows' in sys.modules, 'sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]
