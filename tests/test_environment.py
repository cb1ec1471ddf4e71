"""The test environment is what the repo says it is: locked, with named plugins, and every import declared."""

from __future__ import annotations

import ast
import re
import sys
import warnings
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from scripts.lock import pins

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# The plugins the suite relies on; anything else installed that registers one stays out (see addopts).
NAMED_PLUGINS = {"asyncio", "timeout", "nbval", "hypothesispytest", "pytest_cov"}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """The core requirements plus those of ``extras``, following the self-references (``agentnb[all]``)."""
    found = [Requirement(r) for r in PROJECT["dependencies"]]
    todo, seen = list(extras), set[str]()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in map(Requirement, PROJECT["optional-dependencies"][extra]):
            if _normalize(requirement.name) == "agentnb":
                todo.extend(requirement.extras)
            else:
                found.append(requirement)
    return found


def test_the_lock_satisfies_every_range_the_suite_installs() -> None:
    locked: dict[str, set[str]] = {}
    for (name, _), version in pins((REPO / "requirements" / "ci.txt").read_text()).items():
        locked.setdefault(name, set()).add(version)
    stale = [
        str(r)
        for r in _requirements(("dev", "compat"))
        if not any(r.specifier.contains(v, prereleases=True) for v in locked.get(_normalize(r.name), ()))
    ]
    assert not stale, f"requirements/ci.txt does not satisfy {stale}: run `python scripts/lock.py --keep`"


def test_only_the_named_pytest_plugins_are_loaded(request: pytest.FixtureRequest) -> None:
    manager = request.config.pluginmanager
    loaded = {dist.project_name for _, dist in manager.list_plugin_distinfo()}
    assert manager.has_plugin("asyncio") and manager.has_plugin("timeout")
    assert not manager.has_plugin("phoenix"), "an installed package's pytest plugin was loaded"
    assert loaded <= {"pytest-asyncio", "pytest-timeout", "nbval", "hypothesis", "pytest-cov"}, loaded
    for name in NAMED_PLUGINS:
        assert f"-p {name}" in " ".join(request.config.getini("addopts"))


def test_third_party_deprecations_pass_and_agentnbs_own_fail() -> None:
    # The filters pytest installed from pyproject.toml are active here: exercise both halves of them.
    for module in ("ldap3.utils.asn1", "pyasn1.codec.ber.encoder", "jupyter_client.session"):
        warnings.warn_explicit("tagMap is deprecated", DeprecationWarning, f"{module}.py", 1, module=module)
    for module in ("agentnb._agents", "tests.test_environment", "devui.main"):
        with pytest.raises(DeprecationWarning):
            warnings.warn_explicit("old call", DeprecationWarning, f"{module}.py", 1, module=module)
    with pytest.raises(RuntimeWarning):  # other categories fail wherever they come from
        warnings.warn_explicit("never awaited", RuntimeWarning, "anyio.py", 1, module="anyio._backends")


def _imported_top_level_modules(package: Path) -> dict[str, str]:
    """``{top-level module: first file importing it}`` for the absolute imports of every file in ``package``."""
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    return found


def test_every_third_party_module_agentnb_imports_is_declared() -> None:
    declared = {
        _normalize(r.name)
        for r in _requirements(tuple(e for e in PROJECT["optional-dependencies"] if e not in {"dev", "compat"}))
    }
    distributions = packages_distributions()
    undeclared = {}
    for module, where in _imported_top_level_modules(REPO / "agentnb").items():
        if module in sys.stdlib_module_names or module in {"agentnb", "__future__"}:
            continue
        dists = {_normalize(d) for d in distributions.get(module, [module])}
        if not dists & declared:
            undeclared[module] = where
    assert not undeclared, f"imported by agentnb/ but declared in no extra of pyproject.toml: {undeclared}"


def test_exceptiongroup_is_declared_only_where_python_lacks_it() -> None:
    [requirement] = [r for r in _requirements(()) if _normalize(r.name) == "exceptiongroup"]
    assert requirement.marker is not None
    assert requirement.marker.evaluate({"python_version": "3.10"})
    assert not requirement.marker.evaluate({"python_version": "3.11"})
