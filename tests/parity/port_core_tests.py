"""Port the reference's core unit tests (``python/packages/core/tests``) into ``core/``, by public names.

Each port is the reference's own test file with its ``agent_framework`` imports rewritten to agentnb's, name by
name, through the migration table (``docs/migration_table.py``): a name agentnb has is imported from where agentnb
keeps it, a name it lacks becomes a placeholder (:mod:`missing`) that fails the tests that use it, and only
those. A test that reaches into a private module of the reference (``agent_framework._x``, another package's
internals, or a ``patch("agent_framework._x...")`` target), directly or through a helper of its file, is out of
scope: the port leaves it out, and ``EXCLUDED.md`` lists it with the reason. Whole files about subsystems agentnb
does not have are listed there too. The shared fixtures (``conftest.py``) get the few edits listed in
:data:`HARNESS`, each with its reason, so the tests that use them stay in.

Tests that pass on the released reference but fail on agentnb are marked ``xfail(strict=True)`` by
``core/conftest.py`` from ``core/xfail.json`` (written by ``--record``: a reason per test, grouped), so a fix
shows up as an unexpected pass. ``manifest.json`` records, for every port, the hash of the original and the
lines that differ; ``--check`` (and ``tests/parity/test_parity_core.py``) restores each original from its port
and ports it again, which must give the committed file byte for byte.

Usage:
    python tests/parity/port_core_tests.py SNAPSHOT        # port from a checkout of the reference
    python tests/parity/port_core_tests.py --check         # the committed ports are what the script writes
    python tests/parity/port_core_tests.py --reference-flavour SNAPSHOT DIR   # the same tests, reference imports
    python tests/parity/port_core_tests.py --record JUNIT REFERENCE_JUNIT   # write core/xfail.json from runs
    python tests/parity/port_core_tests.py --rate JUNIT REFERENCE_JUNIT     # the pass rate, overall and per file
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).parent
CORE = HERE / "core"
PORTS = CORE / "ported"
MANIFEST = CORE / "manifest.json"
EXCLUDED = CORE / "EXCLUDED.md"
XFAIL = CORE / "xfail.json"
SOURCE = "python/packages/core/tests"
HEADER = "# Copyright (c) Microsoft. All rights reserved."

# Test files left out whole: the subsystem is not agentnb's, or the file tests the reference's packaging.
OUT_OF_SCOPE: dict[str, str] = {
    "core/test_azure_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_foundry_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_gemini_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_hyperlight_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_mistral_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_monty_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_tools_namespace.py": "the reference's lazy provider namespaces (separate packages)",
    "core/test_optional_dependencies.py": "the reference's packaging of optional dependencies",
    "core/test_root_exports.py": "the reference's stub file (`__init__.pyi`); agentnb's exports are checked by "
    "tests/test_package.py",
    "core/test_docstrings.py": "the reference's own docstrings",
    "core/test_feature_stage.py": "feature-stage markers (private `_feature_stage`); agentnb has none",
    "core/test_serializable_mixin.py": "the reference's private `SerializationMixin`",
    "test_security.py": "`agent_framework.security` (FIDES information-flow labels): no counterpart in agentnb",
    "workflow/test_checkpoint_unrestricted_pickle.py": "pickle-encoded checkpoints: agentnb refuses pickle by "
    "design (tagged JSON only)",
}

# Files the tests import or need beside them: ported the same way, never left out.
SUPPORT = ("conftest.py", "core/conftest.py", "core/utils.py")

# Edits to the harness: (file, exact text, replacement, the same for the reference's own run, reason). Each must
# apply (once per entry). The reference's version keeps its own names, written so that no private module is
# named in one string, and lets ``--reference-flavour`` run the same selection of tests on the reference.
_DEFAULT_CAP = (
    "the fixtures set the default tool-loop cap by patching the reference's private constant; the port "
    "patches agentnb's"
)
_MCP_ERROR = "mcp 2.x renamed `McpError` to `MCPError` (agentnb and the released reference both use mcp 2.x)"
HARNESS: list[tuple[str, str, str, str, str]] = [
    (
        "core/conftest.py",
        "from agent_framework._clients import OptionsCoT  # noqa: E402\n",
        'from typing import TypeVar  # noqa: E402\n\nOptionsCoT = TypeVar("OptionsCoT")\n',
        'from typing import TypeVar  # noqa: E402\n\nOptionsCoT = TypeVar("OptionsCoT")\n',
        "the mock client's options type variable comes from a private module; an equivalent one is declared",
    ),
    *[
        (
            "core/conftest.py",
            'patch("agent_framework._tools.DEFAULT_MAX_ITERATIONS", max_iterations)',
            'patch("agentnb._clients.DEFAULT_MAX_ITERATIONS", max_iterations)',
            'patch("agent_framework" + "._tools.DEFAULT_MAX_ITERATIONS", max_iterations)',
            _DEFAULT_CAP,
        )
    ]
    * 2,
    *[
        (
            rel,
            "from mcp.shared.exceptions import McpError\n",
            "from mcp.shared.exceptions import MCPError as McpError\n",
            "from mcp.shared.exceptions import MCPError as McpError\n",
            _MCP_ERROR,
        )
        for rel in ("core/test_mcp.py", "core/test_mcp_observability.py", "core/test_mcp_skills.py")
    ],
]

# The harness loop's own iteration cap shares its name with the tool loop's public one: imported from the private
# loop module it is the harness's (10), not the function-invocation cap the public name maps to.
_LOOP_CAP = "the harness loop's `DEFAULT_MAX_ITERATIONS` comes from a private module; agentnb.harness exports it"
HARNESS += [
    (
        "core/test_harness_loop.py",
        "    DEFAULT_JUDGE_MAX_ITERATIONS,\n    DEFAULT_MAX_ITERATIONS,\n    DEFAULT_NEXT_MESSAGE,\n"
        "    AgentLoopMiddleware,\n)\n",
        "    DEFAULT_JUDGE_MAX_ITERATIONS,\n    DEFAULT_NEXT_MESSAGE,\n    AgentLoopMiddleware,\n)\n"
        "from agentnb.harness import DEFAULT_MAX_ITERATIONS\n",
        "    DEFAULT_JUDGE_MAX_ITERATIONS,\n    DEFAULT_MAX_ITERATIONS,\n    DEFAULT_NEXT_MESSAGE,\n"
        "    AgentLoopMiddleware,\n)\n",
        _LOOP_CAP,
    ),
    (
        "core/test_harness_agent.py",
        "    from agent_framework._harness._loop import DEFAULT_MAX_ITERATIONS\n",
        "    from agentnb.harness import DEFAULT_MAX_ITERATIONS\n",
        "    from agent_framework._harness._loop import DEFAULT_MAX_ITERATIONS\n",
        _LOOP_CAP,
    ),
]

# Public reference modules and the migration table's area that maps their names.
AREA_OF = {
    "agent_framework": "Core",
    "agent_framework.orchestrations": "Orchestrations",
    "agent_framework.openai": "OpenAI",
    "agent_framework.observability": "Observability",
    "agent_framework.exceptions": "Exceptions",
    "agent_framework.anthropic": "Anthropic",
}
# Module names for ``import agent_framework[.x]`` and patch targets on public modules.
MODULES = {
    "agent_framework": "agentnb",
    "agent_framework.orchestrations": "agentnb.orchestrations",
    "agent_framework.openai": "agentnb.openai",
    "agent_framework.observability": "agentnb.observability",
    "agent_framework.exceptions": "agentnb.exceptions",
    "agent_framework.anthropic": "agentnb.anthropic",
}


def _table() -> ModuleType:
    path = HERE.parents[1] / "docs" / "migration_table.py"
    spec = importlib.util.spec_from_file_location("migration_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_MAPPING: dict[tuple[str, str], str | None] = {}


def mapped(module: str, name: str) -> str | None:
    """agentnb's dotted name for ``module.name`` of the reference (None when agentnb has no counterpart)."""
    key = (module, name)
    if key not in _MAPPING:
        table = _table()
        area = next(a for a in table.AREAS if a.title == AREA_OF[module])
        path, _note = table.counterpart(name, area)
        _MAPPING[key] = path
    return _MAPPING[key]


_PUBLIC: dict[str, set[str]] = {}


def public_module(module: str, name: str) -> str | None:
    """The public reference module that exports ``name`` imported from ``module`` (None for a private name)."""
    if name.startswith("_"):
        return None
    if module in AREA_OF:
        return module
    if not module.startswith("agent_framework"):
        return None
    if not _PUBLIC:
        table = _table()
        listed = table.names_in_document(table.DOC.read_text(encoding="utf-8"))
        for public, area in AREA_OF.items():
            _PUBLIC[public] = set(listed.get(area, []))
    return next((public for public, names in _PUBLIC.items() if name in names), None)


def is_private(module: str) -> bool:
    """Whether a reference module is private (or another package's internals) rather than a public module."""
    if module in AREA_OF:
        return False
    return module == "agent_framework" or module.startswith(("agent_framework.", "agent_framework_"))


# -- what a test reaches into ------------------------------------------------------------------------------------


def _private_strings(node: ast.AST) -> list[str]:
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            for match in re.finditer(r"agent_framework[\w.]*", sub.value):
                target = match.group(0)
                if re.search(r"(^|\.)_|^agent_framework_", target):
                    found.append(target)
    return found


def _private_imports(node: ast.AST) -> list[str]:
    """The private reference names a statement imports (a public name from a private path is not one)."""
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.ImportFrom) and sub.module and is_private(sub.module):
            found.extend(f"{sub.module}.{a.name}" for a in sub.names if public_module(sub.module, a.name) is None)
        elif isinstance(sub, ast.Import):
            found.extend(alias.name for alias in sub.names if is_private(alias.name))
    return found


def _used_names(node: ast.AST) -> set[str]:
    names = {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name)}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):  # fixtures arrive as parameters
        names |= {arg.arg for arg in [*node.args.args, *node.args.kwonlyargs]}
    return names


def _bound(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {sub.id for t in targets for sub in ast.walk(t) if isinstance(sub, ast.Name)}
    return set()


def _decorators(node: ast.stmt) -> list[ast.expr]:
    return list(getattr(node, "decorator_list", []))


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def own_private_names(tree: ast.AST) -> set[str]:
    """The ``_names`` a file defines itself (functions, classes, variables, attributes it assigns, parameters)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.attr)
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            names.add(node.arg)
    return {name for name in names if name.startswith("_")}


def _private_attributes(node: ast.AST, own: set[str]) -> list[str]:
    """``._name`` attributes the code reads that its file does not define: the reference's internals."""
    return [
        sub.attr
        for sub in ast.walk(node)
        if isinstance(sub, ast.Attribute)
        and sub.attr.startswith("_")
        and not sub.attr.startswith("__")
        and sub.attr not in own
    ]


class Tainted:
    """The names of a file (and of the shared fixtures) that reach into the reference's private modules."""

    def __init__(self, inherited: dict[str, str] | None = None, own: set[str] | None = None) -> None:
        self.why: dict[str, str] = dict(inherited or {})
        self.own = own

    def reason(self, node: ast.AST) -> str | None:
        if privates := _private_imports(node):
            return f"imports `{privates[0]}`"
        if strings := _private_strings(node):
            return f"patches or names `{strings[0]}`"
        if self.own is not None and (attributes := _private_attributes(node, self.own)):
            return f"uses the reference's private attribute `{attributes[0]}`"
        for name in sorted(_used_names(node)):
            if name in self.why:
                return self.why[name]
        return None


def _module_level_taint(tree: ast.Module, tainted: Tainted) -> None:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and is_private(node.module):
            for alias in node.names:
                if public_module(node.module, alias.name) is None:
                    tainted.why[alias.asname or alias.name] = f"uses `{node.module}.{alias.name}`"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if is_private(alias.name):
                    tainted.why[alias.asname or alias.name.split(".")[0]] = f"uses `{alias.name}`"
    _spread(tree, tainted)


def _spread(tree: ast.Module, tainted: Tainted) -> None:
    """Taint every module-level helper that uses a tainted name, until nothing changes."""
    changed = True
    while changed:
        changed = False
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom) or _is_test(node):
                continue
            bound = _bound(node) - set(tainted.why)
            if bound and (why := tainted.reason(node)):
                for name in bound:
                    tainted.why[name] = why
                changed = True


def _head_reason(tainted: Tainted, node: ast.ClassDef) -> str | None:
    """Why a class's bases or decorators reach into a private module (None when they do not)."""
    return tainted.reason(ast.Tuple(elts=[*node.bases, *node.decorator_list], ctx=ast.Load()))


def _is_test(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name.startswith(
        ("test_", "Test")
    )


# -- rewriting ---------------------------------------------------------------------------------------------------


def _import_lines(node: ast.ImportFrom | ast.Import, indent: str) -> list[str]:
    """agentnb's import lines for one public reference import (placeholders for names agentnb lacks)."""
    if isinstance(node, ast.Import):
        out = []
        for alias in node.names:
            target = MODULES[alias.name]
            if alias.asname:
                out.append(f"{indent}import {target} as {alias.asname}")
            elif alias.name == "agent_framework":
                out.append(f"{indent}import agentnb as agent_framework")
            else:  # ``import agent_framework.x`` binds ``agent_framework``: bind it to agentnb, with ``x`` loaded
                out.append(f"{indent}import {target}")
                out.append(f"{indent}import agentnb as agent_framework")
        return out
    assert node.module is not None
    by_module: dict[str, list[str]] = {}
    missing: list[str] = []
    for alias in node.names:
        local = alias.asname or alias.name
        public = public_module(node.module, alias.name)
        if public is None:  # a private name: the tests that use it are left out
            continue
        path = mapped(public, alias.name)
        if path is None:
            missing.append(f'{indent}{local} = missing("{public}.{alias.name}")')
            continue
        module, _, name = path.rpartition(".")
        by_module.setdefault(module, []).append(name if name == local else f"{name} as {local}")
    out = [f"{indent}from {module} import {', '.join(names)}" for module, names in sorted(by_module.items())]
    if missing:
        out.append(f"{indent}from tests.parity.core.missing import missing")
        out.extend(missing)
    return out


def _public_only(node: ast.ImportFrom | ast.Import) -> list[str]:
    """A reference import as it is, less its private names (for the reference's own run)."""
    indent = " " * node.col_offset
    if isinstance(node, ast.Import):
        return [indent + ast.unparse(node)]
    kept = [a for a in node.names if public_module(node.module or "", a.name)]
    return [indent + ast.unparse(ast.ImportFrom(node.module, kept, node.level))] if kept else []


def _rewrite_strings(text: str) -> str:
    """Patch targets on public reference modules name agentnb's module instead."""

    def sub(match: re.Match[str]) -> str:
        module = match.group(2)
        while module not in MODULES and "." in module:
            module = module.rsplit(".", 1)[0]
        return match.group(1) + MODULES.get(module, module) + match.group(2)[len(module) :]

    return re.sub(r"""(["'])(agent_framework(?:\.[A-Za-z]\w*)*)""", sub, text)


def port_file(
    rel: str,
    original: str,
    inherited: dict[str, str],
    siblings: dict[str, dict[str, str]] | None = None,
    *,
    rewrite: bool = True,
) -> tuple[str, list[tuple[str, str]], dict[str, str]]:
    """The port of one file, the tests it leaves out (name, reason), and the names it taints for other files.

    ``inherited`` are the shared fixtures' tainted names; ``siblings`` the tainted names of the test modules
    beside it (module name -> name -> reason), for ``from .module import name``. With ``rewrite=False`` the
    same tests are left out but the imports stay the reference's (the selection run on the reference itself).
    """
    siblings = siblings or {}
    text = original
    for file, old, new, new_reference, _reason in HARNESS:
        if file == rel:
            if old not in text:
                raise SystemExit(f"{rel}: harness edit {old!r} matches nothing; port it by hand")
            text = text.replace(old, new if rewrite else new_reference, 1)
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    tainted = Tainted(inherited, own_private_names(tree))
    _module_level_taint(tree, tainted)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if why := siblings.get(node.module or "", {}).get(alias.name):
                    tainted.why[alias.asname or alias.name] = why
    _spread(tree, tainted)
    removed: list[tuple[int, int]] = []  # 1-based inclusive line ranges to drop
    replaced: dict[int, tuple[int, list[str]]] = {}  # start line -> (end line, new lines)
    left_out: list[tuple[str, str]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom | ast.Import):
                if isinstance(node, ast.Import) and any(is_private(a.name) for a in node.names):
                    removed.append((node.lineno, node.end_lineno or node.lineno))
                continue
            if isinstance(node, ast.ClassDef) and _is_test(node) and not _head_reason(tainted, node):
                helpers = [n for n in node.body if not _is_test(n) and tainted.reason(n)]
                if not helpers:
                    visit(node.body, f"{prefix}{node.name}::")
                    continue
            if isinstance(node, ast.If | ast.Try | ast.With):
                visit(node.body, prefix)
                continue
            why = tainted.reason(node)
            if why is None and _is_test(node) and any("integration" in ast.unparse(d) for d in _decorators(node)):
                why = "an integration test against a live service (`@pytest.mark.integration`)"
            if why is None:
                continue
            if _is_test(node) or _bound(node) or isinstance(node, ast.Expr | ast.Assert):
                removed.append((_start(node), node.end_lineno or node.lineno))
                if _is_test(node):
                    left_out.append((prefix + node.name, why))  # type: ignore[attr-defined]

    visit(tree.body, "")
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom | ast.Import) or any(a <= node.lineno <= b for a, b in removed):
            continue
        modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            gone = siblings.get(node.module or "", {})
            kept = [a for a in node.names if a.name not in gone]
            if len(kept) < len(node.names):
                names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in kept)
                new = [f"{' ' * node.col_offset}from .{node.module} import {names}"] if kept else []
                replaced[node.lineno] = (node.end_lineno or node.lineno, [line + "\n" for line in new])
        elif any(m.startswith("agent_framework") for m in modules):
            new = _import_lines(node, " " * node.col_offset) if rewrite else _public_only(node)
            replaced[node.lineno] = (node.end_lineno or node.lineno, [line + "\n" for line in new])
    _keep_blocks_valid(tree, lines, removed, replaced)
    out: list[str] = []
    number = 1
    drop = sorted(removed)
    while number <= len(lines):
        span = next(((a, b) for a, b in drop if a == number), None)
        if span:
            number = span[1] + 1
            continue
        if number in replaced:
            end, new = replaced[number]
            out.extend(new)
            number = end + 1
            continue
        out.append(lines[number - 1])
        number += 1
    ported = _rewrite_strings("".join(out)) if rewrite else "".join(out)
    exported = {name: why for name, why in tainted.why.items() if name not in inherited}
    return ported, left_out, exported


def _keep_blocks_valid(
    tree: ast.Module, lines: list[str], removed: list[tuple[int, int]], replaced: dict[int, tuple[int, list[str]]]
) -> None:
    """A block whose every statement is left out keeps a ``pass`` in place of its first one."""

    def gone(node: ast.stmt) -> bool:
        start = _start(node)
        return any(a == start for a, _ in removed) or replaced.get(node.lineno, (0, ["x"]))[1] == []

    for owner in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(owner, field, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            stmts: list[ast.stmt] = body
            if isinstance(owner, ast.Module) or not all(gone(node) for node in stmts):
                continue
            first = stmts[0]
            start = _start(first)
            removed[:] = [(a, b) for a, b in removed if a != start]
            indent = lines[first.lineno - 1][: first.col_offset]
            replaced[start] = (first.end_lineno or first.lineno, [f"{indent}pass\n"])


# -- the manifest and the check ----------------------------------------------------------------------------------


def _samples_helpers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("parity_regenerate", HERE / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def in_scope(snapshot: Path) -> list[str]:
    root = snapshot / SOURCE
    files = sorted(str(p.relative_to(root)) for p in root.rglob("test_*.py"))
    return [rel for rel in files if rel not in OUT_OF_SCOPE]


def _port_all(
    originals: dict[str, str], *, rewrite: bool = True
) -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
    ports: dict[str, str] = {}
    left_out: dict[str, list[tuple[str, str]]] = {}
    shared: dict[str, str] = {}
    for rel in SUPPORT:
        if rel in originals:
            ports[rel], _, exported = port_file(rel, originals[rel], {}, rewrite=rewrite)
            if rel.endswith("conftest.py"):
                shared.update(exported)
    tests = [rel for rel in originals if rel not in SUPPORT]
    exports: dict[str, dict[str, str]] = {}
    for rel in tests:  # first pass: what each test module taints, for the modules that import from it
        exports[rel] = port_file(rel, originals[rel], shared, rewrite=rewrite)[2]
    for rel in tests:
        folder = rel.rpartition("/")[0]
        siblings = {"conftest": shared}
        siblings.update({Path(other).stem: names for other, names in exports.items() if other.startswith(folder)})
        ports[rel], left_out[rel], _ = port_file(rel, originals[rel], shared, siblings, rewrite=rewrite)
    return ports, left_out


def _excluded_md(left_out: dict[str, list[tuple[str, str]]]) -> str:
    lines = [
        "# Reference tests left out of the port",
        "",
        "Written by `python tests/parity/port_core_tests.py`; do not edit.",
        "",
        "## Whole files",
        "",
        *(f"- `{rel}`: {why}" for rel, why in sorted(OUT_OF_SCOPE.items())),
        "",
        "## Tests that reach into a private module of the reference (or need a live service)",
        "",
    ]
    for rel, tests in sorted(left_out.items()):
        for name, why in tests:
            lines.append(f"- `{rel}::{name}`: {why}")
    lines += ["", "## Edits to the shared fixtures", ""]
    lines += [f"- `{file}`: {reason}" for file, *_edit, reason in dict.fromkeys(HARNESS)]
    return "\n".join(lines) + "\n"


def regenerate(snapshot: Path) -> None:
    root = snapshot / SOURCE
    rels = [*SUPPORT, *in_scope(snapshot)]
    originals = {rel: (root / rel).read_text(encoding="utf-8") for rel in rels}
    ports, left_out = _port_all(originals)
    helpers = _samples_helpers()
    manifest: dict[str, object] = {"reference": "microsoft/agent-framework", "files": {}}
    for rel, ported in ports.items():
        target = PORTS / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(ported, encoding="utf-8")
        (target.parent / "__init__.py").touch()
        manifest["files"][rel] = {  # type: ignore[index]
            "sha256": helpers.sha256(originals[rel]),
            "hunks": helpers.hunks(originals[rel], ported),
        }
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    EXCLUDED.write_text(_excluded_md(left_out), encoding="utf-8")
    total = sum(map(len, left_out.values()))
    print(f"ported {len(ports)} files; left out {total} tests (private modules, live services)")


def reference_flavour(snapshot: Path, target: Path) -> None:
    """Write the same selection of tests with the reference's own imports under ``target`` (to run there)."""
    root = snapshot / SOURCE
    rels = [*SUPPORT, *in_scope(snapshot)]
    ports, _ = _port_all({rel: (root / rel).read_text(encoding="utf-8") for rel in rels}, rewrite=False)
    for rel, text in ports.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text, encoding="utf-8")
        (target / rel).parent.joinpath("__init__.py").touch()
    print(f"wrote {len(ports)} files for the reference's run under {target}")


def check() -> list[str]:
    """Problems with the committed ports: each must restore to its original and port back to itself."""
    helpers = _samples_helpers()
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    originals: dict[str, str] = {}
    problems: list[str] = []
    for rel, entry in manifest["files"].items():
        original = helpers.restore((PORTS / rel).read_text(encoding="utf-8"), entry["hunks"])
        if helpers.sha256(original) != entry["sha256"]:
            problems.append(f"{rel}: does not restore to the original")
        elif not original.startswith(HEADER):
            problems.append(f"{rel}: the original's license header is missing")
        originals[rel] = original
    if problems:
        return problems
    ports, left_out = _port_all(originals)
    for rel, ported in ports.items():
        if ported != (PORTS / rel).read_text(encoding="utf-8"):
            problems.append(f"{rel}: differs from what the porter writes; run port_core_tests.py")
    if EXCLUDED.read_text(encoding="utf-8") != _excluded_md(left_out):
        problems.append("EXCLUDED.md differs from what the porter writes")
    for rel in ports:
        if not ported.startswith(HEADER):
            problems.append(f"{rel}: license header lost")
    return problems


# -- recording the failures --------------------------------------------------------------------------------------

# Failure messages to reasons, first match wins: (regex over the failure's text, reason).
CLASSIFY: list[tuple[str, str]] = [
    (r"MissingReferenceName: agent_framework[\w.]*\.(\w+)", "not in agentnb: `{0}`"),
    (r"'([\w.]+)' (?:object )?has no attribute '(\w+)'", "agentnb has no attribute `{0}.{1}`"),
    (r"([\w.]+)\(\) got an unexpected keyword argument '(\w+)'", "agentnb does not take the keyword `{0}({1}=)`"),
    (r"Failed: DID NOT RAISE <class '[\w.]*?(\w+)'>", "agentnb accepts what the reference refuses with `{0}`"),
    (r"Failed: Timeout", "waits forever on agentnb (a behaviour difference the test does not survive)"),
    (r"^(?:E\s+)?AssertionError|^(?:E\s+)?assert |Regex pattern did not match", "a value differs from the reference's"),
    (r"^(?:E\s+)?([\w.]*?\w+(?:Error|Exception)):", "agentnb raises `{0}` where the reference does not"),
]


def _cases(junit: Path) -> dict[str, tuple[str, str]]:
    """nodeid (relative to the tests' root) -> (outcome, failure text) from a JUnit XML report (or a folder of them)."""
    out: dict[str, tuple[str, str]] = {}
    reports = sorted(junit.glob("*.xml")) if junit.is_dir() else [junit]
    cases = [case for report in reports for case in ET.parse(report).getroot().iter("testcase")]
    for case in cases:
        classname = case.get("classname", "")
        if not classname and "test_" in (case.get("name") or ""):  # the module did not import
            classname, case.attrib["name"] = case.get("name", ""), IMPORT_ITEM
        if not re.search(r"(^|\.)test_\w+", classname):
            continue  # pytest's own entries (an internal error)
        parts = classname.split(".")
        file_parts = [p for p in parts if not p[:1].isupper()]
        owners = [p for p in parts if p[:1].isupper()]
        rel = "/".join(file_parts) + ".py"
        rel = re.sub(r"^.*?((?:core|workflow)/test_\w+\.py|test_\w+\.py)$", r"\1", rel)
        nodeid = "::".join([rel, *owners, case.get("name", "")])
        failure = case.find("failure")
        error = case.find("error")
        skipped = case.find("skipped")
        if skipped is not None and skipped.get("type") == "pytest.xfail":
            out[nodeid] = ("xfailed", "")
        elif skipped is not None:
            out[nodeid] = ("skipped", "")
        elif failure is not None or error is not None:
            node = failure if failure is not None else error
            assert node is not None
            message = node.get("message") or ""
            xpassed = message.startswith("[XPASS(strict)]")
            out[nodeid] = ("xpassed", "") if xpassed else ("failed", message + "\n" + (node.text or ""))
        else:
            out[nodeid] = ("passed", "")
    return out


def classify(text: str) -> str:
    """The reason for a failure: the first rule that matches its message, else the first that matches its report."""
    message, _, report = text.partition("\n")
    for part in (message, report):
        for pattern, reason in CLASSIFY:
            if match := re.search(pattern, part, re.M):
                groups = match.groups()
                if "raises" in reason:  # an exception's class, without its module
                    groups = tuple(group.rsplit(".", 1)[-1] for group in groups)
                return reason.format(*groups)
    return "behaves differently from the reference"


def _still_ported(nodeid: str) -> bool:
    """Whether the test of ``nodeid`` is in the current port (a run may predate a test being left out)."""
    rel, _, name = nodeid.partition("::")
    function = name.split("::")[-1].split("[")[0]
    path = PORTS / rel
    return path.exists() and (function == IMPORT_ITEM or f"def {function}(" in path.read_text(encoding="utf-8"))


# Reasons written by hand where the classification cannot say why (a deliberate difference).
_NO_STAGES = "deliberate: agentnb marks no API with a feature stage (`__feature_stage__`, `__feature_id__`)"
_APPROVALS_TOGETHER = (
    "deliberate: the harness ToolApprovalMiddleware returns every approval request of a turn together, "
    "auto-answered ones shown with their answers"
)
_LOST_TASKS = "deliberate: a task saved as running that no process of this provider runs is `lost`, not running"
_USER_AGENT = "deliberate: agentnb's requests name agentnb in their User-Agent, not Agent Framework"
_INSTRUMENTATION_OFF = "deliberate: instrumentation is off until something switches it on"
_LAZY_STREAM = "deliberate: a chat stream does no work until it is read, so a client's error leaves the first read"
_AWAIT_STREAM = "deliberate: awaiting a ResponseStream returns the final response, not the stream"
_RESULT_KEPT = "deliberate: a function result that is not a list of contents is kept as it is, not turned into text"
_ARGUMENT_ERROR = "deliberate: an invalid tool mode raises ValueError, as every agentnb argument check does"
MANUAL: dict[str, str] = {
    **dict.fromkeys(
        (
            "core/test_telemetry.py::test_telemetry_disabled_env_var",
            "core/test_telemetry.py::test_agent_framework_user_agent_format",
            "core/test_telemetry.py::test_agent_framework_user_agent_uses_core_distribution_version",
            "core/test_telemetry.py::test_prepend_to_existing_user_agent",
        ),
        _USER_AGENT,
    ),
    "core/test_observability.py::test_observability_settings_defaults_instrumentation_true": _INSTRUMENTATION_OFF,
    "core/test_observability.py::test_chat_streaming_super_failure_closes_span[True]": _LAZY_STREAM,
    "core/test_types.py::TestResponseStreamAwaitableSource::test_await_stream": _AWAIT_STREAM,
    "core/test_types.py::test_function_result_content": _RESULT_KEPT,
    "core/test_types.py::test_from_function_result_with_non_content_list": _RESULT_KEPT,
    "core/test_types.py::test_chat_options_tool_choice_validation": _ARGUMENT_ERROR,
    "core/test_sessions.py::TestSessionStore::test_is_marked_experimental": _NO_STAGES,
    "core/test_sessions.py::TestFileHistoryProvider::test_is_marked_experimental": _NO_STAGES,
    "core/test_harness_memory.py::test_memory_harness_classes_are_marked_experimental": _NO_STAGES,
    "core/test_harness_file_access.py::test_file_access_harness_classes_are_marked_experimental": _NO_STAGES,
    "core/test_mcp_skills.py::TestMCPSkillsExperimentalStage::test_docstrings_include_experimental_warning": (
        _NO_STAGES
    ),
    "core/test_mcp_skills.py::TestMCPSkillsExperimentalStage::test_feature_metadata_is_set": _NO_STAGES,
    "core/test_harness_tool_approval.py::test_tool_approval_middleware_queues_multiple_approval_requests": (
        _APPROVALS_TOGETHER
    ),
    "core/test_harness_tool_approval.py::test_tool_approval_middleware_queues_streamed_approval_requests": (
        _APPROVALS_TOGETHER
    ),
    "core/test_harness_tool_approval.py::test_tool_approval_middleware_auto_approval_rule_receives_function_call": (
        _APPROVALS_TOGETHER
    ),
    "core/test_harness_loop.py::test_background_tasks_running_helper_reflects_state": _LOST_TASKS,
    "core/test_harness_loop.py::test_background_tasks_running_message_lists_running_tasks": _LOST_TASKS,
}

# Tests whose outcome depends on what ran earlier in the same process, by node id prefix. Recorded with a reason
# that starts with ORDER_DEPENDENT_PREFIX, which core/conftest.py marks xfail without strict: they fail when run
# alone and pass inside the whole suite.
ORDER_DEPENDENT_PREFIX = "depends on what ran before"
ORDER_DEPENDENT: dict[str, str] = {
    "core/test_mcp.py::test_get_input_model_from_mcp_tool_parametrized[": (
        f"{ORDER_DEPENDENT_PREFIX}: reads the mcp 1.x `Tool.inputSchema`, which mcp 2.x has only once another "
        "package has patched the old name back in"
    ),
}


def _order_dependent(nodeid: str) -> str | None:
    return next((reason for prefix, reason in ORDER_DEPENDENT.items() if nodeid.startswith(prefix)), None)


def record(junit: Path, reference_junit: Path) -> None:
    """Write ``xfail.json``: every ported test that fails on agentnb, with a reason (the reference's own
    failures say so; a test the reference run did not reach is classified like the others)."""
    ours, theirs = _cases(junit), _cases(reference_junit)
    recorded: dict[str, str] = json.loads(XFAIL.read_text(encoding="utf-8")) if XFAIL.exists() else {}
    reasons: dict[str, str] = {}
    for nodeid, (outcome, text) in sorted(ours.items()):
        if outcome == "xfailed" and nodeid in recorded and _still_ported(nodeid):  # a run with the marks on
            reasons[nodeid] = recorded[nodeid]
        elif outcome == "failed" and _still_ported(nodeid):
            on_reference = theirs.get(nodeid, ("passed",))[0]
            reasons[nodeid] = (
                MANUAL.get(nodeid)
                or _order_dependent(nodeid)
                or (classify(text) if on_reference in ("passed", "skipped") else "fails on the released reference too")
            )
    XFAIL.write_text(json.dumps(reasons, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    counts = Counter(reasons.values())
    print(f"{len(reasons)} failing tests, {len(counts)} reasons")


def rate(junit: Path, reference_junit: Path) -> None:
    """Print, overall and per file, how many of the ported tests that pass on the reference pass on agentnb."""
    ours, theirs = _cases(junit), _cases(reference_junit)
    broken = {nodeid.split("::")[0] for nodeid, (outcome, _) in ours.items() if nodeid.endswith("::" + IMPORT_ITEM)}
    per_file: dict[str, list[int]] = {}
    for nodeid, (outcome, _text) in theirs.items():
        if outcome != "passed" or not _still_ported(nodeid):
            continue
        rel = nodeid.split("::")[0]
        counts = per_file.setdefault(rel, [0, 0])
        counts[1] += 1
        mine = ours.get(nodeid, ("missing", ""))[0]
        counts[0] += mine in ("passed", "xpassed") and rel not in broken
    print(f"{'file':55} {'pass':>6} {'of':>6} {'rate':>6}")
    for rel, (passed, total) in sorted(per_file.items()):
        print(f"{rel:55} {passed:6} {total:6} {passed / total:6.0%}")
    passed, total = (sum(c[i] for c in per_file.values()) for i in (0, 1))
    print(f"{'all':55} {passed:6} {total:6} {passed / max(total, 1):6.1%}")


IMPORT_ITEM = "<import>"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rate":
        rate(Path(sys.argv[2]), Path(sys.argv[3]))
        raise SystemExit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "--reference-flavour":
        reference_flavour(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "--record":
        record(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 2 and sys.argv[1] == "--check":
        found = check()
        print("\n".join(found) or "all ports are what the porter writes")
        raise SystemExit(1 if found else 0)
    elif len(sys.argv) == 2:
        regenerate(Path(sys.argv[1]))
    else:
        raise SystemExit(__doc__)
