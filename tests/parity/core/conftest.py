"""Marks for the ported reference tests: each that fails on agentnb is ``xfail(strict=True)`` with its reason
from ``xfail.json`` (written by ``port_core_tests.py --record``), so a fix shows up as an unexpected pass; and
each gets a short timeout, since a behaviour difference can leave a test waiting forever.

A ported file that agentnb cannot import at all (a name used at module level is missing) becomes one item,
``<import>``, that raises the import's error, marked the same way."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
PORTS = HERE / "ported"
REASONS: dict[str, str] = json.loads((HERE / "xfail.json").read_text(encoding="utf-8"))
TIMEOUT_SECONDS = 20
HANG_SECONDS = 3  # for the tests recorded as waiting forever: they fail (as expected) sooner
IMPORT_ITEM = "<import>"
EXPERIMENTAL_WARNINGS_SHOWN = "default::agentnb.harness.ExperimentalWarning"


def _key(path: Path, nodeid: str) -> str:
    return "::".join([path.relative_to(PORTS).as_posix(), *nodeid.split("::")[1:]])


class _ImportFailure(pytest.Item):
    """Stands for a ported file that does not import: running it raises the import's error."""

    def __init__(self, *, error: BaseException | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        if self.error is None:
            raise AssertionError("this file imports now: run port_core_tests.py --record to record its tests")
        raise self.error

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"importing {self.path.name}"


class _PortedModule(pytest.Module):
    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        recorded = _key(self.path, f"x::{IMPORT_ITEM}") in REASONS
        try:
            items = list(super().collect())
        except Exception as error:  # an ImportError comes as CollectError, a name missing at import as itself
            if not recorded:
                raise
            return [_ImportFailure.from_parent(self, name=IMPORT_ITEM, error=error)]
        if recorded:
            items.append(_ImportFailure.from_parent(self, name=IMPORT_ITEM, error=None))
        return items


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if module_path.is_relative_to(PORTS) and module_path.name.startswith("test_"):
        return _PortedModule.from_parent(parent, path=module_path)
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "flaky: the reference's mark for tests it reruns (no rerun here)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if not path.is_relative_to(PORTS):
            continue
        stale = isinstance(item, _ImportFailure) and item.error is None
        reason = None if stale else REASONS.get(_key(path, item.nodeid))
        hangs = reason is not None and reason.startswith("waits forever")
        item.add_marker(pytest.mark.timeout(HANG_SECONDS if hangs else TIMEOUT_SECONDS))
        # The reference's suite does not turn warnings into errors; agentnb's experimental-feature warning (the
        # counterpart of the reference's, which its tests see too) is shown here, not raised.
        item.add_marker(pytest.mark.filterwarnings(EXPERIMENTAL_WARNINGS_SHOWN))
        if reason:
            # An outcome that depends on the tests before it (port_core_tests.ORDER_DEPENDENT) cannot be strict.
            strict = not reason.startswith("depends on what ran before")
            item.add_marker(pytest.mark.xfail(strict=strict, reason=reason))
