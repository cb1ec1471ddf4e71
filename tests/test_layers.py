"""The layer table, enforced over the import graph: a package imports only packages of lower layers.

Also: HTML is written by the views (``agentnb.views``, the DevUI, the notebook) and the core's escaping helpers;
the domain packages below them return typed data (``KNOWN_HTML`` lists the modules that still write HTML).

Every ``import`` and ``from ... import`` of agentnb in ``agentnb/`` counts, lazy ones inside functions too (they
load the module all the same, only later). A module may import its own package freely; across packages the
target's layer must be strictly lower. ``agentnb/__init__.py`` is left out: its lazy export table names every
area by design. The known breaches are listed in ``KNOWN`` with the reason they still stand; the test fails
when a new one appears and when a listed one is gone (take it off the list), so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agentnb"

#: Layer of each top-level area, lowest first; modules directly under ``agentnb/`` are the core (layer 0).
LAYERS: dict[str, int] = {
    "compaction": 1,
    "openai": 2,
    "anthropic": 2,
    "mcp": 2,
    "local": 2,
    "harness": 3,
    "skills": 3,
    "store": 4,
    "workflows": 5,
    "orchestrations": 6,  # the reference's import path for agentnb.workflows' orchestrations
    "observability": 6,
    "evals": 7,
    "declarative": 7,
    "a2a": 7,
    "serving": 8,
    "views": 9,  # HTML of domain objects that the notebook and the DevUI both show
    "devui": 10,
    "notebook": 11,  # %agentnb devui starts the DevUI from a notebook; the DevUI never imports the notebook
}

#: Breaches that still stand (importer area -> imported area) and why; remove an entry once it is fixed. A lower
#: layer that needs work done above it asks an extension point (``agentnb/_extensions.py``) instead.
KNOWN: dict[tuple[str, str], str] = {}


def _area(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "core"


def _rank(area: str) -> int:
    return LAYERS.get(area, 0)


def _imports(path: Path, package: Path) -> tuple[str, list[str]]:
    """The module's dotted name and every agentnb module it imports."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    module = ".".join(parts[:-1] if is_package else parts)
    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            if source == PACKAGE.name:
                targets.extend(f"{source}.{alias.name}" for alias in node.names)
            elif source.split(".")[0] == PACKAGE.name:
                targets.append(source)
        elif isinstance(node, ast.Import):
            targets.extend(a.name for a in node.names if a.name.split(".")[0] == PACKAGE.name)
    return module, targets


def layer_breaches(package: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """Imports that reach a package of the same or a higher layer, by (importer area, imported area)."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        if path == package / "__init__.py":
            continue
        module, targets = _imports(path, package)
        mine = _area(module)
        for target in targets:
            theirs = _area(target)
            if theirs != mine and _rank(theirs) >= _rank(mine):
                found.setdefault((mine, theirs), []).append(f"{module} -> {target}")
    return found


def test_imports_point_down_the_layer_table() -> None:
    found = layer_breaches()
    new = {pair: found[pair] for pair in found if pair not in KNOWN}
    assert not new, f"imports that reach up (or sideways) the layer table: {new}"


def test_the_known_breaches_still_exist() -> None:
    found = layer_breaches()
    fixed = [pair for pair in KNOWN if pair not in found]
    assert not fixed, f"fixed: take {fixed} off KNOWN in tests/test_layers.py"


def test_the_scan_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "agentnb"
    (package / "store").mkdir(parents=True)
    (package / "notebook").mkdir()
    (package / "__init__.py").write_text("from . import notebook\n")
    (package / "_types.py").write_text("def f():\n    from .store import x\n")
    (package / "store" / "__init__.py").write_text("")
    (package / "store" / "_a.py").write_text("from ..notebook import y\nfrom .._types import f\n")
    (package / "notebook" / "__init__.py").write_text("import agentnb.store\n")
    found = layer_breaches(package)
    assert set(found) == {("core", "store"), ("store", "notebook")}
    assert found[("core", "store")] == ["agentnb._types -> agentnb.store"]


#: Views (and the core's escaping helpers) render HTML; every other area returns typed data for them.
RENDERING_AREAS = {"core", "views", "devui", "notebook"}
#: Modules below the views that still write HTML, and why; the list only shrinks (move the HTML to the views).
KNOWN_HTML: dict[str, str] = {
    "agentnb/compaction/_report.py": "compaction_view_html and the report's _repr_html_",
    "agentnb/evals/_datasets.py": "Dataset._repr_html_",
    "agentnb/evals/_gate.py": "the gate's _repr_html_",
    "agentnb/evals/_results.py": "EvalResults._repr_html_",
    "agentnb/harness/_snapshot.py": "the harness snapshot's to_html",
    "agentnb/skills/_display.py": "skill and provider cards, the DevUI's skills panel",
    "agentnb/workflows/_functional_view.py": "the functional workflow's timeline and saved calls",
    "agentnb/workflows/_viz.py": "WorkflowViz.to_svg (drawing the graph is the workflow's own public API)",
}
_TAG = re.compile(r"<(div|span|table|pre|details|svg|ul|li|tr|td|b|code)\b")


def html_writers(package: Path = PACKAGE) -> set[str]:
    """Modules outside the rendering areas whose string literals (docstrings aside) hold HTML tags."""
    found: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent)
        if _area(".".join(relative.with_suffix("").parts)) in RENDERING_AREAS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        if any(
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and _TAG.search(node.value)
            for node in ast.walk(tree)
        ):  # fmt: skip
            found.add(relative.as_posix())
    return found


def test_domain_packages_return_data_and_the_views_render_it() -> None:
    found = html_writers()
    assert not found - set(KNOWN_HTML), f"HTML written outside the views: {sorted(found - set(KNOWN_HTML))}"
    assert not set(KNOWN_HTML) - found, f"no HTML left: take {sorted(set(KNOWN_HTML) - found)} off KNOWN_HTML"
