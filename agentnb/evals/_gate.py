"""The regression gate: does an experiment meet its score thresholds, and did any case get worse than a baseline?

:func:`gate` reads two stored experiments (or one and thresholds) and returns a :class:`GateReport` that says
what failed, in words a CI log can show: each scorer's mean against its floor and the baseline's mean, and
for each case that got worse, which scores dropped, how the answer changed and how the tool path changed.
``python -m agentnb.evals gate`` is the same check from a shell (exit status 1 on failure).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _html as h
from ..exceptions import EvalNotPassedError

if TYPE_CHECKING:
    from ._experiment import Experiment

__all__ = ["GateReport", "Regression", "answer_diff", "gate", "regressions", "row_tool_path"]


@dataclass
class Regression:
    """One case that got worse between a baseline and a candidate.

    Attributes:
        case_id: The case (``case_id`` and, with repetitions, ``.repetition``).
        scores: Score column -> ``(baseline, candidate)`` for each score that dropped.
        status: ``(baseline, candidate)`` statuses when the case stopped answering.
        output_a: The baseline's answer.
        output_b: The candidate's answer.
        tools_a: The baseline's tool path.
        tools_b: The candidate's tool path.
    """

    case_id: str
    scores: dict[str, tuple[float | None, float | None]] = field(
        default_factory=dict[str, "tuple[float | None, float | None]"]
    )
    status: tuple[str, str] | None = None
    output_a: Any = None
    output_b: Any = None
    tools_a: list[str] = field(default_factory=list[str])
    tools_b: list[str] = field(default_factory=list[str])

    def answer_diff(self) -> str:
        """A unified diff of the two answers (empty when they are equal)."""
        return answer_diff(self.output_a, self.output_b)

    def text(self) -> str:
        """The regression in a few lines."""
        lines = [f"- case {self.case_id}"]
        if self.status:
            lines.append(f"    status: {self.status[0]} -> {self.status[1]}")
        for column, (a, b) in self.scores.items():
            lines.append(f"    {column}: {_fmt(a)} -> {_fmt(b)}")
        if self.tools_a != self.tools_b:
            lines.append(
                f"    tools: {' > '.join(self.tools_a) or '(none)'}  ->  {' > '.join(self.tools_b) or '(none)'}"
            )
        diff = self.answer_diff()
        if diff:
            lines.extend("    " + line for line in diff.splitlines())
        return "\n".join(lines)


def answer_diff(baseline: Any, candidate: Any) -> str:
    """A unified diff of two answers (text, or data shown as indented JSON); empty when they are equal."""
    a, b = _text(baseline).splitlines(), _text(candidate).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "baseline", "candidate", lineterm="", n=1))


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1)


def _fmt(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3g}"


def _key(row: Mapping[str, Any]) -> str:
    return str(row["case_id"]) + (f".{row['repetition']}" if row.get("repetition") else "")


def _output(row: Mapping[str, Any]) -> Any:
    result: dict[str, Any] = row["data"].get("result") or {}
    return result.get("output")


def row_tool_path(row: Mapping[str, Any]) -> list[str]:
    """A stored case row's tool path: the names of the tools its run called, in order."""
    result: dict[str, Any] = row["data"].get("result") or {}
    calls: list[dict[str, Any]] = result.get("tool_calls") or []
    return [str(call.get("name")) for call in calls]


def regressions(baseline: Experiment, candidate: Experiment, *, tolerance: float = 0.0) -> list[Regression]:
    """The cases of ``candidate`` that did worse than in ``baseline``: a shared score dropped by more than
    ``tolerance``, or the case stopped answering (status ``ok`` before, not now). Cases in one only are skipped.
    """
    before = {_key(row): row for row in baseline.rows}
    shared = [c for c in candidate.score_columns if c in set(baseline.score_columns)]
    out: list[Regression] = []
    for row in candidate.rows:
        old = before.get(_key(row))
        if old is None:
            continue
        found = Regression(_key(row))
        if old["status"] == "ok" and row["status"] != "ok":
            found.status = (old["status"], row["status"])
        for column in shared:
            a, b = old["scores"].get(column), row["scores"].get(column)
            if a is not None and (b is None or b < a - tolerance):
                found.scores[column] = (a, b)
        if found.status or found.scores:
            found.output_a, found.output_b = _output(old), _output(row)
            found.tools_a, found.tools_b = row_tool_path(old), row_tool_path(row)
            out.append(found)
    return out


@dataclass
class GateReport:
    """Whether an experiment passed the gate, and why not.

    Attributes:
        experiment: The candidate's name.
        baseline: The baseline's name (``None`` without one).
        means: Score column -> the candidate's mean.
        baseline_means: Score column -> the baseline's mean.
        thresholds: Score column -> the lowest passing mean.
        failures: One sentence per failed condition.
        regressions: The cases that got worse than the baseline.
        errored: Cases whose target failed (status other than ``ok``).

    Example:
        ```python
        report = gate("geo-v2", baseline="geo-v1", thresholds={"exact_match": 0.9})
        print(report.text())
        report.raise_for_status()
        ```
    """

    experiment: str
    baseline: str | None = None
    means: dict[str, float] = field(default_factory=dict[str, float])
    baseline_means: dict[str, float] = field(default_factory=dict[str, float])
    thresholds: dict[str, float] = field(default_factory=dict[str, float])
    failures: list[str] = field(default_factory=list[str])
    regressions: list[Regression] = field(default_factory=list[Regression])
    errored: list[str] = field(default_factory=list[str])

    @property
    def passed(self) -> bool:
        """Whether every condition held."""
        return not self.failures

    def text(self) -> str:
        """The report as plain text (for a CI log)."""
        head = f"Gate {'PASSED' if self.passed else 'FAILED'}: {self.experiment}"
        if self.baseline:
            head += f" against baseline {self.baseline}"
        lines = [head, ""]
        columns = list(dict.fromkeys([*self.means, *self.thresholds]))
        if columns:
            lines.append(f"{'score':<32} {'mean':>8} {'floor':>8} {'baseline':>9}")
            for column in columns:
                floor = self.thresholds.get(column)
                lines.append(
                    f"{column:<32} {_fmt(self.means.get(column)):>8} {_fmt(floor):>8} "
                    f"{_fmt(self.baseline_means.get(column)):>9}"
                )
            lines.append("")
        if self.failures:
            lines.append("Failed:")
            lines.extend(f"- {failure}" for failure in self.failures)
            lines.append("")
        if self.regressions:
            lines.append(f"Cases that got worse ({len(self.regressions)}):")
            lines.extend(r.text() for r in self.regressions)
        return "\n".join(lines).rstrip() + "\n"

    def raise_for_status(self) -> None:
        """Raise :class:`~agentnb.exceptions.EvalNotPassedError` with the report when the gate failed."""
        if not self.passed:
            bad = [r.case_id for r in self.regressions] + self.errored
            raise EvalNotPassedError(self.text(), failed_items=list(dict.fromkeys(bad)))

    def _repr_html_(self) -> str:
        kind = "ok" if self.passed else "err"
        return h.wrap(f"{h.badge('passed' if self.passed else 'failed', kind)}<pre>{h.escape(self.text())}</pre>")


def _as_experiment(value: Experiment | str, store: Any) -> Experiment:
    from ._experiment import Experiment, load_experiment

    return value if isinstance(value, Experiment) else load_experiment(value, store=store)


def gate(
    experiment: Experiment | str,
    *,
    baseline: Experiment | str | None = None,
    thresholds: Mapping[str, float] | None = None,
    max_regressions: int = 0,
    tolerance: float = 0.0,
    max_errors: int = 0,
    store: Any = None,
) -> GateReport:
    """Check an experiment against score floors and a baseline.

    Args:
        experiment: The candidate (an ``Experiment`` or a stored one's name).
        baseline: The experiment it must not be worse than.
        thresholds: Score column -> the lowest passing mean (a scorer's name stands for its only column).
        max_regressions: How many cases may get worse than in the baseline.
        tolerance: How far a case's score may drop before it counts as worse.
        max_errors: How many cases may fail to run (error, timeout, waiting for approval).
        store: The run store the names are read from.

    Raises:
        KeyError: A threshold names a score the experiment does not have, or an experiment does not exist.
    """
    candidate = _as_experiment(experiment, store)
    report = GateReport(candidate.name, means=candidate.means())
    report.errored = [_key(row) for row in candidate.rows if row["status"] != "ok"]
    for column, floor in (thresholds or {}).items():
        if column not in report.means:
            raise KeyError(f"No score {column!r} in experiment {candidate.name!r}; it has {sorted(report.means)}.")
        report.thresholds[column] = float(floor)
        mean = report.means[column]
        if math.isnan(mean) or mean < floor:
            report.failures.append(f"{column} mean {_fmt(mean)} is below its floor {floor:g}")
    if len(report.errored) > max_errors:
        report.failures.append(
            f"{len(report.errored)} case(s) did not run (allowed {max_errors}): {', '.join(report.errored[:10])}"
        )
    if baseline is not None:
        base = _as_experiment(baseline, store)
        report.baseline = base.name
        report.baseline_means = base.means()
        report.regressions = regressions(base, candidate, tolerance=tolerance)
        if len(report.regressions) > max_regressions:
            names = ", ".join(r.case_id for r in report.regressions[:10])
            report.failures.append(
                f"{len(report.regressions)} case(s) got worse than {base.name} (allowed {max_regressions}): {names}"
            )
    return report
