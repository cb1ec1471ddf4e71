from __future__ import annotations

import subprocess
import sys

import pytest

import agentnb

HEAVY = (
    "openai",
    "mcp",
    "pandas",
    "panel",
    "ipywidgets",
    "opentelemetry.sdk",
    "bokeh",
    "IPython",
    "pydantic",
    "tqdm",
    "ray",
    "yaml",
    "anthropic",
    "a2a",
    "tiktoken",
    "numpy",
    "httpx",
)

# What `import agentnb` and `import agentnb.workflows` may load of agentnb itself: the core, and the graph with
# its runner and checkpoints. Everything else (orchestrations, agent executors, time travel, re-runs, drawing,
# providers, views, evals and every subsystem added later) loads on first use.
CORE_MODULES = {
    "agentnb",
    *(f"agentnb.{m}" for m in (
        "_agents", "_approval", "_approval_middleware", "_approval_policy", "_call_history", "_clients",
        "_conversation", "_extensions", "_files", "_json", "_layers", "_listeners", "_middleware", "_origin",
        "_serialization", "_session_store", "_sessions", "_telemetry", "_telemetry_layers", "_tools", "_types",
        "exceptions",
    )),
}  # fmt: skip
WORKFLOW_MODULES = {
    "agentnb._provenance",
    "agentnb.workflows",
    *(f"agentnb.workflows.{m}" for m in (
        "_builder", "_checkpoints", "_context", "_eager", "_edge_runner", "_edges", "_events", "_executor", "_failure",
        "_handlers", "_runner", "_tracing", "_typing_utils", "_validation", "_workflow",
    )),
}  # fmt: skip


def _loaded_modules(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.split('.')[0] == 'agentnb'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_loads_only_the_core_and_the_graph() -> None:
    eager = _loaded_modules("import agentnb") - CORE_MODULES
    assert not eager, f"import agentnb now loads {sorted(eager)} eagerly: export them lazily instead"
    eager = _loaded_modules("import agentnb.workflows") - CORE_MODULES - WORKFLOW_MODULES
    assert not eager, f"import agentnb.workflows now loads {sorted(eager)} eagerly: export them lazily instead"
    # The lazy names still resolve, and only then load their modules.
    assert "agentnb.workflows._orchestrations" in _loaded_modules("import agentnb.workflows as w; w.SequentialBuilder")


def test_import_agentnb_workflows_stays_light() -> None:
    code = f"import sys, agentnb.workflows; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import agentnb.workflows pulled in: {out.stdout.strip()}"


def test_import_agentnb_stays_light() -> None:
    code = f"import sys, agentnb; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import agentnb pulled in: {out.stdout.strip()}"


def test_public_api_is_sorted_and_resolvable() -> None:
    # Ruff's order (RUF022): CONSTANTS, then Classes, then the rest, each alphabetical.
    assert agentnb.__all__ == sorted(
        agentnb.__all__, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n)
    )
    core = [n for n in agentnb.__all__ if n not in agentnb._LAZY_EXPORTS]
    for name in core:
        assert getattr(agentnb, name) is not None
    try:
        agentnb.does_not_exist  # noqa: B018
    except AttributeError as e:
        assert "does_not_exist" in str(e)
    else:
        raise AssertionError("unknown attributes must raise AttributeError")


def test_every_lazy_workflow_name_resolves_to_what_it_names() -> None:
    import agentnb.workflows as workflows

    # Ruff's order (RUF022), as the generator writes it: CONSTANTS, then Classes, then the rest.
    assert workflows.__all__ == sorted(
        workflows.__all__, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n)
    )
    for name, module in workflows._LAZY_EXPORTS.items():
        assert getattr(workflows, name) is getattr(sys.modules[module], name)
    assert "SequentialBuilder" in dir(workflows)
    with pytest.raises(AttributeError, match="does_not_exist"):
        workflows.does_not_exist  # noqa: B018


def test_py_typed_marker_ships() -> None:
    from importlib.resources import files

    assert files("agentnb").joinpath("py.typed").is_file()


def test_import_agentnb_evals_stays_light() -> None:
    code = f"import sys, agentnb.evals; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import agentnb.evals pulled in: {out.stdout.strip()}"


def test_public_names_are_written_once() -> None:
    # Names are written in the imports of agentnb/__init__.py; the lazy table and __all__ are generated.
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "generate_init.py"
    out = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
