"""The regression gate as a pytest fixture: a test evaluates, gates, and fails with the gate's report.

Load it in a ``conftest.py`` (``pytest_plugins = ["agentnb.evals.pytest_plugin"]``) or with
``pytest -p agentnb.evals.pytest_plugin``. It adds:

- the ``eval_gate`` fixture: ``eval_gate(experiment, thresholds=..., baseline=...)`` checks a stored
  experiment like :func:`~agentnb.evals.gate` and fails the test with the report's text (score means against
  floors and the baseline, each case that got worse with its answer diff and tool path change);
- ``--agentnb-baseline NAME``: the baseline every ``eval_gate`` call compares with when it names none
  (``main``'s experiment in CI), and ``--agentnb-store URL``: the run store the experiments are read from;
- a terminal summary section with every gate the run checked, passed or failed.

Example:
    ```python
    from agentnb.evals import evaluate, scorers

    async def test_geo_agent_does_not_regress(eval_gate):
        experiment = await evaluate(make_agent(), "geo.jsonl", [scorers.exact_match()], name="geo-candidate")
        eval_gate(experiment, thresholds={"exact_match": 0.9})
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from ._experiment import Experiment
    from ._gate import GateReport

__all__ = ["EvalGate", "eval_gate", "pytest_addoption", "pytest_terminal_summary"]

_REPORTS = pytest.StashKey[list["GateReport"]]()


class EvalGate(Protocol):
    """The ``eval_gate`` fixture: check an experiment, fail the test with the report when it does not pass."""

    def __call__(
        self,
        experiment: Experiment | str,
        *,
        baseline: Experiment | str | None = None,
        thresholds: Mapping[str, float] | None = None,
        max_regressions: int = 0,
        tolerance: float = 0.0,
        max_errors: int = 0,
        store: Any = None,
    ) -> GateReport: ...


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--agentnb-baseline`` and ``--agentnb-store``."""
    group = parser.getgroup("agentnb", "agentnb evaluation gate")
    group.addoption(
        "--agentnb-baseline",
        default=None,
        metavar="NAME",
        help="experiment every eval_gate compares with when the test names no baseline",
    )
    group.addoption(
        "--agentnb-store", default=None, metavar="URL", help="run store to read experiments from (default: agentnb's)"
    )


@pytest.fixture
def eval_gate(request: pytest.FixtureRequest) -> EvalGate:
    """Check an experiment against floors and a baseline; fail the test with the gate's report if it does not pass.

    Returns the :class:`~agentnb.evals.GateReport` when it passes.
    """
    from ._gate import gate

    config = request.config
    reports = config.stash.setdefault(_REPORTS, [])

    def check(
        experiment: Experiment | str,
        *,
        baseline: Experiment | str | None = None,
        thresholds: Mapping[str, float] | None = None,
        max_regressions: int = 0,
        tolerance: float = 0.0,
        max_errors: int = 0,
        store: Any = None,
    ) -> GateReport:
        report = gate(
            experiment,
            baseline=baseline if baseline is not None else config.getoption("agentnb_baseline"),
            thresholds=thresholds,
            max_regressions=max_regressions,
            tolerance=tolerance,
            max_errors=max_errors,
            store=store if store is not None else config.getoption("agentnb_store"),
        )
        reports.append(report)
        if not report.passed:
            pytest.fail(report.text(), pytrace=False)
        return report

    return check


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """List every gate this run checked."""
    reports = config.stash.get(_REPORTS, None)
    if not reports:
        return
    terminalreporter.section("agentnb eval gate")
    for report in reports:
        against = f" against {report.baseline}" if report.baseline else ""
        verdict = "PASSED" if report.passed else f"FAILED ({'; '.join(report.failures)})"
        terminalreporter.write_line(f"{report.experiment}{against}: {verdict}")
