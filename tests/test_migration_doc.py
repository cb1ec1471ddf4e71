"""docs/migrating-from-agent-framework.md stays in step with agentnb's exports."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import agentnb

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "migrating-from-agent-framework.md"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("migration_table", REPO / "docs" / "migration_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def test_the_tables_match_what_agentnb_exports() -> None:
    generator = _generator()
    text = DOC.read_text()
    expected = generator.updated(text, generator.names_in_document(text))
    assert text == expected, "agentnb's exports changed: run `python docs/migration_table.py` and commit the doc"


def test_every_reference_module_is_listed_in_full() -> None:
    names = _generator().names_in_document(DOC.read_text())
    assert set(names) == {
        "Core",
        "Orchestrations",
        "OpenAI",
        "Anthropic",
        "Observability",
        "Exceptions",
        "Declarative",
        "A2A",
        "Shell tool",
    }
    assert sum(map(len, names.values())) >= 380
    for must in ("Agent", "tool", "WorkflowBuilder", "AgentSession", "MCPStdioTool"):
        assert must in names["Core"]
    for must in ("AgentFactory", "WorkflowFactory"):
        assert must in names["Declarative"]
    assert {"A2AAgent", "A2AExecutor"} <= set(names["A2A"])
    assert {"LocalShellTool", "ShellEnvironmentProvider", "ShellPolicy"} <= set(names["Shell tool"])


def test_every_agentnb_name_in_the_tables_exists() -> None:
    paths = re.findall(r"\| `[A-Za-z_]\w*` \| `(agentnb\.[\w.]+)` \|", DOC.read_text())
    assert len(paths) >= 100
    for path in paths:
        module, _, name = path.rpartition(".")
        assert hasattr(importlib.import_module(module), name), path


def test_every_public_agentnb_name_appears() -> None:
    text = DOC.read_text()
    missing = [name for name in agentnb.__all__ if f"`{name}`" not in text and f".{name}`" not in text]
    assert not missing, f"not in the migration guide: {missing}"


def test_every_reference_name_has_a_counterpart_unless_tied_to_a_microsoft_cloud_service() -> None:
    """Every reference name maps to an agentnb name, except those tied to a Microsoft cloud service, whose note
    says which service; a new reference name without a counterpart fails here."""
    generator = _generator()
    cloud = [re.compile(pattern) for pattern, _ in generator.MICROSOFT_CLOUD]
    unmapped: dict[str, str] = {}
    for area in generator.AREAS:
        for name in generator.names_in_document(DOC.read_text())[area.title]:
            path, note = generator.counterpart(name, area)
            if path is None:
                unmapped[name] = note
    assert [name for name in unmapped if not any(pattern.search(name) for pattern in cloud)] == []
    assert all("Microsoft" in note for note in unmapped.values()), unmapped
