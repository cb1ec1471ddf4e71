"""The package's shape: modules talk to each other through public names only.

A *private name* is a module-level name that starts with one underscore (``_helper``, ``_Cache``), not a
dunder. Modules whose own name is private (``agentnb._types``) are the package's units and are imported
freely; what a module keeps private stays inside it. A module breaks the rule when it imports another
agentnb module's private name (``from ._clients import _helper``) or reaches one through a module it
imported (``_serialization._resolve(...)``). Private *attributes* of objects are the object's business
and not scanned here.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agentnb"


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, current: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_module(name: str, package: Path) -> bool:
    path = package.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Every place a module imports (or reaches through a module) another module's private name."""
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        current = _module_name(path, package)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules: dict[str, str] = {}  # local name -> agentnb module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(node, current, path.name == "__init__.py")
                if source.split(".")[0] != package.name:
                    continue
                for alias in node.names:
                    if _is_module(f"{source}.{alias.name}", package):
                        modules[alias.asname or alias.name] = f"{source}.{alias.name}"
                    elif _private(alias.name) and source != current:
                        found.append(f"{path.name}:{node.lineno}: from {source} import {alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == package.name and alias.asname:
                        modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and _private(node.attr)
                and not _is_module(f"{modules[node.value.id]}.{node.attr}", package)
            ):
                found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    assert private_imports() == []


def test_the_scan_flags_what_it_is_meant_to(tmp_path: Path) -> None:
    package = tmp_path / "agentnb"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_html.py").write_text("def _escape(s): return s\ndef escape(s): return s\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "_view.py").write_text(
        "from .. import _html as h\n"  # a private module: fine
        "from .._html import escape, _escape\n"  # a private name: flagged
        "from agentnb._html import _escape as e2\n"  # the same, absolute
        "h.escape('x'); h._escape('x')\n"  # reached through the module: flagged
        "def _own(): return 1\n"
    )
    assert private_imports(package) == [
        "_view.py:2: from agentnb._html import _escape",
        "_view.py:3: from agentnb._html import _escape",
        "_view.py:4: h._escape",
    ]
