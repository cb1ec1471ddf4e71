"""Evaluation results in Agent Framework's shape (``EvalResults`` and its parts), and their conversion to and
from agentnb's :class:`~agentnb.evals.Experiment`.

An experiment keeps a reference evaluator's verdicts in each case row (``data["evals"][provider]``) and the
run-level fields in its metadata (``metadata["evals"][provider]``), so the results read back exactly; an
experiment that agentnb's scorers judged becomes one ``EvalResults`` from provider ``"agentnb"``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .. import _html as h
from ..exceptions import EvalNotPassedError
from ._cases import plain

if TYPE_CHECKING:
    from ._experiment import Experiment

__all__ = [
    "EvalItemResult",
    "EvalResults",
    "EvalScoreResult",
    "RubricScore",
    "eval_results_from_experiment",
    "experiment_from_eval_results",
    "scorer_results",
]


@dataclass(frozen=True)
class RubricScore:
    """One rubric dimension's score for one item, from a rubric evaluator (such as ``scorers.rubric_judge``).

    Attributes:
        id: The dimension's id in the rubric.
        score: Its score, or ``None`` when the dimension did not apply to the item.
        applicable: Whether the dimension applied.
        weight: The dimension's weight in the rubric.
        reason: The evaluator's short rationale.
    """

    id: str
    score: int | None
    applicable: bool
    weight: int
    reason: str


@dataclass
class EvalScoreResult:
    """One evaluator's verdict on one item.

    Attributes:
        name: The evaluator or check (``"keyword_check"``, ``"relevance"``).
        score: The score.
        passed: Whether it met the evaluator's threshold (``None`` when the evaluator has none).
        sample: The evaluator's raw output (a reason, metadata).
        dimensions: Per-dimension scores of a rubric evaluator.
    """

    name: str
    score: float
    passed: bool | None = None
    sample: dict[str, Any] | None = None
    dimensions: list[RubricScore] | None = None


@dataclass
class EvalItemResult:
    """One item's outcome: ``"pass"``, ``"fail"`` or ``"error"``, with every evaluator's score.

    Attributes:
        item_id: The item (the case's id when it came from a dataset).
        status: ``"pass"`` (every score passed), ``"fail"`` or ``"error"`` (the run itself failed).
        scores: One per evaluator or check.
        error_code: What kind of error, when ``status`` is ``"error"`` (the case's status or exception type).
        error_message: The error.
        response_id: The response's id, where a service gave one.
        input_text: What was asked.
        output_text: What was answered.
        token_usage: ``prompt_tokens``, ``completion_tokens``, ``total_tokens`` of the run.
        metadata: More data (agentnb puts the case's ``run_id`` and ``case_id`` here).
    """

    item_id: str
    status: str
    scores: list[EvalScoreResult] = field(default_factory=list[EvalScoreResult])
    error_code: str | None = None
    error_message: str | None = None
    response_id: str | None = None
    input_text: str | None = None
    output_text: str | None = None
    token_usage: dict[str, int] | None = None
    metadata: dict[str, Any] | None = None

    @property
    def is_error(self) -> bool:
        """Whether the item could not be evaluated (an infrastructure failure, not a quality one)."""
        return self.status in ("error", "errored")

    @property
    def is_passed(self) -> bool:
        """Whether every evaluator passed the item."""
        return self.status == "pass"

    @property
    def is_failed(self) -> bool:
        """Whether some evaluator failed the item."""
        return self.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields, as an experiment stores them."""
        return cast("dict[str, Any]", plain(dataclasses.asdict(self)))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalItemResult:
        """Rebuild an item result from :meth:`to_dict`."""
        stored: list[dict[str, Any]] = data.get("scores") or []
        scores = [
            EvalScoreResult(
                name=str(s["name"]),
                score=float(s["score"]) if s.get("score") is not None else math.nan,
                passed=s.get("passed"),
                sample=s.get("sample"),
                dimensions=[RubricScore(**d) for d in cast("list[dict[str, Any]]", s["dimensions"])]
                if s.get("dimensions")
                else None,
            )
            for s in stored
        ]
        known = {f.name for f in dataclasses.fields(cls)} - {"scores"}
        return cls(scores=scores, **{k: v for k, v in data.items() if k in known})


def _more(items: list[str], shown: int = 5) -> str:
    text = ", ".join(items[:shown])
    return text + (f" (+{len(items) - shown} more)" if len(items) > shown else "")


class EvalResults:
    """One evaluator's results over a set of items: counts, per-item verdicts, and per-agent sub-results.

    ``evaluate_agent`` and ``evaluate_workflow`` return one per evaluator; :meth:`raise_for_status` and the
    ``assert_*`` methods turn them into a CI gate. :meth:`to_experiment` (and ``Experiment.to_eval_results``)
    convert to agentnb's experiments and back.

    Args:
        provider: The evaluator's name (``"Local"`` for :class:`LocalEvaluator`).
        eval_id: The evaluation's id at the provider.
        run_id: The evaluation run's id (the evaluation's name for local ones).
        status: ``"completed"``, ``"failed"``, ``"canceled"``, ``"timeout"`` or ``"partial"``.
        result_counts: ``{"passed": ..., "failed": ..., "errored": ...}``.
        report_url: Where the provider shows the results.
        error: What went wrong, or the failing checks' reasons.
        per_evaluator: Counts per evaluator or check.
        items: Per-item results.
        sub_results: For a workflow, each agent's own results by executor id.

    Example:
        ```python
        results = await evaluate_agent(agent=agent, queries=["Hi"], evaluators=keyword_check("hello"))
        results[0].passed, results[0].total
        results[0].raise_for_status()
        ```
    """

    def __init__(
        self,
        *,
        provider: str,
        eval_id: str = "",
        run_id: str = "",
        status: str = "completed",
        result_counts: dict[str, int] | None = None,
        report_url: str | None = None,
        error: str | None = None,
        per_evaluator: dict[str, dict[str, int]] | None = None,
        items: list[EvalItemResult] | None = None,
        sub_results: dict[str, EvalResults] | None = None,
    ) -> None:
        self.provider = provider
        self.eval_id = eval_id
        self.run_id = run_id
        self.status = status
        self.result_counts = result_counts
        self.report_url = report_url
        self.error = error
        self.per_evaluator = per_evaluator or {}
        self.items = items or []
        self.sub_results = sub_results or {}
        #: The experiment these results are stored as (set by ``evaluate_agent`` / ``evaluate_workflow``).
        self.experiment: str | None = None

    def __repr__(self) -> str:
        return (
            f"EvalResults(provider={self.provider!r}, status={self.status!r}, passed={self.passed}, "
            f"failed={self.failed}, items={len(self.items)}, sub_results={sorted(self.sub_results)})"
        )

    @property
    def passed(self) -> int:
        """How many items passed."""
        return (self.result_counts or {}).get("passed", 0)

    @property
    def failed(self) -> int:
        """How many items failed."""
        return (self.result_counts or {}).get("failed", 0)

    @property
    def total(self) -> int:
        """Passed plus failed (errored items are not counted)."""
        return self.passed + self.failed

    @property
    def all_passed(self) -> bool:
        """Whether the run completed with at least one item, none failed or errored, and every sub-result passed."""
        if self.status != "completed":
            return False
        counts = self.result_counts
        errored = (counts or {}).get("errored", 0)
        own = self.failed == 0 and errored == 0 and self.total > 0
        if self.sub_results:
            return (own if counts else True) and all(s.all_passed for s in self.sub_results.values())
        return own

    def _walk(self) -> Iterable[EvalResults]:
        yield self
        for sub in self.sub_results.values():
            yield from sub._walk()

    def raise_for_status(self, msg: str | None = None) -> None:
        """Raise :class:`EvalNotPassedError` unless :attr:`all_passed`, naming the failing items.

        Raises:
            EvalNotPassedError: Some item failed or errored, or the run did not complete.
        """
        if self.all_passed:
            return
        bad = [f"{item.item_id}:{item.status}" for r in self._walk() for item in r.items if not item.is_passed]
        if msg is None:
            errored = (self.result_counts or {}).get("errored", 0)
            msg = f"Eval run {self.run_id} {self.status}: {self.passed} passed, {self.failed} failed."
            if errored:
                msg += f" {errored} errored."
            if self.report_url:
                msg += f" See {self.report_url} for details."
            if self.error:
                msg += f" Error: {self.error}"
            failing_agents = [name for name, sub in self.sub_results.items() if not sub.all_passed]
            if failing_agents:
                msg += f" Failed: {', '.join(failing_agents)}."
            errors = [f"{i.item_id}: {i.error_code or 'unknown'}" for r in self._walk() for i in r.items if i.is_error]
            if errors:
                msg += f" Errored items: {', '.join(errors)}."
            failing = [i.item_id for i in self.items if i.is_failed]
            if failing:
                msg += f" Failed items: {_more(failing, 10)}."
        raise EvalNotPassedError(msg, failed_items=bad)

    def assert_score_at_least(self, min_score: float, *, evaluator: str | None = None, msg: str | None = None) -> None:
        """Raise unless every score (of ``evaluator`` only, when given) is at least ``min_score``, sub-results too.

        Raises:
            EvalNotPassedError: Naming up to five low scores as ``item/evaluator=score``.
        """
        low = [
            (item.item_id, f"{item.item_id}/{s.name}={s.score:.3f}")
            for r in self._walk()
            for item in r.items
            for s in item.scores
            if (evaluator is None or s.name == evaluator) and s.score < min_score
        ]
        if low:
            where = f" for {evaluator}" if evaluator else ""
            detail = msg or f"{len(low)} score(s) below threshold {min_score}{where}: {_more([t for _, t in low])}"
            raise EvalNotPassedError(detail, failed_items=sorted({i for i, _ in low}))

    def assert_dimension_score_at_least(
        self,
        dimension_id: str,
        min_score: float,
        *,
        evaluator: str | None = None,
        require_applicable: bool = False,
        msg: str | None = None,
    ) -> None:
        """Raise unless every applicable score of rubric dimension ``dimension_id`` is at least ``min_score``.

        Args:
            dimension_id: The rubric dimension.
            min_score: The lowest passing score.
            evaluator: Only scores of this evaluator.
            require_applicable: Also raise for items where the dimension never applied.
            msg: The error message instead of the generated one.

        Raises:
            EvalNotPassedError: A dimension score is too low (or missing, with ``require_applicable``).
        """
        low: list[str] = []
        missing: list[str] = []
        bad: set[str] = set()
        for r in self._walk():
            for item in r.items:
                applied = False
                for s in item.scores:
                    if evaluator is not None and s.name != evaluator:
                        continue
                    for d in s.dimensions or []:
                        if d.id != dimension_id or not d.applicable:
                            continue
                        applied = True
                        if d.score is None or d.score < min_score:
                            low.append(f"{item.item_id}/{s.name}/{dimension_id}={d.score}")
                            bad.add(item.item_id)
                if require_applicable and not applied:
                    missing.append(item.item_id)
                    bad.add(item.item_id)
        problems: list[str] = []
        if low:
            problems.append(f"{len(low)} dimension score(s) for '{dimension_id}' below {min_score}: {_more(low)}")
        if missing:
            problems.append(f"Dimension '{dimension_id}' not applicable on {len(missing)} item(s): {_more(missing)}")
        if problems:
            raise EvalNotPassedError(msg or "; ".join(problems), failed_items=sorted(bad))

    def assert_no_failed_items(self, msg: str | None = None) -> None:
        """Raise if any item (sub-results included) failed or errored.

        Raises:
            EvalNotPassedError: Naming the items as ``item_id:status``.
        """
        bad = [f"{i.item_id}:{i.status}" for r in self._walk() for i in r.items if i.is_failed or i.is_error]
        if bad:
            raise EvalNotPassedError(msg or f"{len(bad)} item(s) failed or errored: {_more(bad)}", failed_items=bad)

    # ------------------------------------------------------------------ conversion and display

    def to_experiment(self, name: str | None = None, *, store: Any = None, save: bool = False) -> Experiment:
        """These results as an :class:`~agentnb.evals.Experiment` (saved to the run store when ``save=True``).

        Args:
            name: The experiment's name (default: :attr:`experiment`, else :attr:`run_id`).
            store: The run store to save to (``None``: the default store).
            save: Write it to the store, where ``load_experiment`` and the DevUI find it.
        """
        return experiment_from_eval_results([self], name=name, store=store, save=save)

    @classmethod
    def from_experiment(cls, experiment: Experiment | str, *, store: Any = None) -> list[EvalResults]:
        """An experiment (or a stored one's name) as results, one per evaluator (see ``Experiment.to_eval_results``)."""
        from ._experiment import load_experiment

        loaded = experiment if not isinstance(experiment, str) else load_experiment(experiment, store=store)
        return eval_results_from_experiment(loaded)

    def _repr_html_(self) -> str:
        kind = "ok" if self.all_passed else "err"
        head = (
            f"{h.badge('passed' if self.all_passed else 'not passed', kind)} <b>{h.escape(self.provider)}</b> "
            f"{self.passed}/{self.total} passed"
            + (
                f", {(self.result_counts or {}).get('errored', 0)} errored"
                if (self.result_counts or {}).get("errored")
                else ""
            )
            + f" <span class='anb-muted'>{h.escape(self.run_id)}</span>"
        )
        rows = [
            [
                item.item_id,
                item.status,
                h.shorten(item.input_text or "", 80),
                h.shorten(item.output_text or item.error_message or "", 120),
                ", ".join(f"{s.name}={s.score:.3g}{' (failed)' if s.passed is False else ''}" for s in item.scores),
            ]
            for item in self.items[:50]
        ]
        body = h.table(["item", "status", "input", "output", "scores"], rows) if rows else ""
        subs = "".join(
            h.details(f"<b>{h.escape(name)}</b> {sub.passed}/{sub.total} passed", sub._repr_html_())
            for name, sub in self.sub_results.items()
        )
        return h.wrap(f"<div>{head}</div>{body}{subs}")


# --------------------------------------------------------------------------- Experiment <-> EvalResults


def _run_fields(results: EvalResults) -> dict[str, Any]:
    return {
        "eval_id": results.eval_id,
        "run_id": results.run_id,
        "status": results.status,
        "result_counts": results.result_counts,
        "report_url": results.report_url,
        "error": results.error,
        "per_evaluator": results.per_evaluator,
    }


def eval_run_metadata(results: EvalResults) -> dict[str, Any]:
    """What an experiment's metadata keeps of one evaluator's run: its fields, and each sub-result's."""
    return {**_run_fields(results), "sub": {name: _run_fields(sub) for name, sub in results.sub_results.items()}}


def score_columns(provider: str, item: EvalItemResult) -> dict[str, float]:
    """An item's scores as experiment score columns, named ``provider.evaluator``."""
    return {f"{provider}.{s.name}": float(s.score) for s in item.scores}


def experiment_from_eval_results(
    results: Sequence[EvalResults] | EvalResults,
    *,
    name: str | None = None,
    store: Any = None,
    save: bool = False,
) -> Experiment:
    """Results of one or more evaluators over the same items as one experiment (items matched by ``item_id``)."""
    from ._experiment import Experiment

    group = [results] if isinstance(results, EvalResults) else list(results)
    if not group:
        raise ValueError("experiment_from_eval_results needs at least one EvalResults.")
    title = name or group[0].experiment or group[0].run_id or "eval"
    rows: dict[str, dict[str, Any]] = {}
    columns: dict[str, list[str]] = {}
    for results_ in group:
        for position, item in enumerate(results_.items):
            row = rows.get(item.item_id)
            if row is None:
                usage = item.token_usage or {}
                row = rows[item.item_id] = {
                    "case_id": item.item_id,
                    "repetition": 0,
                    "position": position,
                    "status": "error" if item.is_error else "ok",
                    "run_id": (item.metadata or {}).get("run_id"),
                    "trace_id": (item.metadata or {}).get("trace_id"),
                    "scores": {},
                    "data": {
                        "input": item.input_text,
                        "expected": (item.metadata or {}).get("expected"),
                        "metadata": {},
                        "result": {
                            "case_id": item.item_id,
                            "output": item.output_text,
                            "status": "error" if item.is_error else "ok",
                            "error": item.error_message,
                            "input_tokens": usage.get("prompt_tokens"),
                            "output_tokens": usage.get("completion_tokens"),
                        },
                        "evals": {},
                    },
                }
            row["scores"].update(score_columns(results_.provider, item))
            row["data"]["evals"][results_.provider] = {"item": item.to_dict(), "agents": {}}
            known = columns.setdefault(results_.provider, [])
            known.extend(c for c in score_columns(results_.provider, item) if c not in known)
        for executor_id, sub in results_.sub_results.items():
            for item in sub.items:
                source = (item.metadata or {}).get("case_id")
                row = rows.get(str(source)) if source is not None else None
                if row is not None:
                    agents = row["data"]["evals"][results_.provider]["agents"]
                    agents.setdefault(executor_id, []).append(item.to_dict())
    info = {
        "name": title,
        "status": "completed",
        "target": f"eval:{group[0].provider}",
        "metadata": {
            "scorers": [{"name": p, "threshold": 0.5, "columns": c} for p, c in columns.items()],
            "evals": {r.provider: eval_run_metadata(r) for r in group},
            "dataset_size": len(rows),
            "repetitions": 1,
        },
    }
    ordered = sorted(rows.values(), key=lambda r: r["position"])
    if save:
        from ._run import resolve_store

        run_store = resolve_store(store)
        run_store.put_experiment(title, status="completed", target=info["target"], metadata=info["metadata"])
        run_store.add_experiment_cases(title, ordered)
        return Experiment.from_store(run_store, title)
    return Experiment(title, info=info, rows=ordered)


def _counts(items: Sequence[EvalItemResult]) -> dict[str, int]:
    return {
        "passed": sum(i.is_passed for i in items),
        "failed": sum(i.is_failed for i in items),
        "errored": sum(i.is_error for i in items),
    }


def _rebuild(provider: str, fields: Mapping[str, Any], items: list[EvalItemResult]) -> EvalResults:
    return EvalResults(
        provider=provider,
        eval_id=fields.get("eval_id") or "",
        run_id=fields.get("run_id") or "",
        status=fields.get("status") or "completed",
        result_counts=fields.get("result_counts") or _counts(items),
        report_url=fields.get("report_url"),
        error=fields.get("error"),
        per_evaluator=fields.get("per_evaluator") or {},
        items=items,
    )


def eval_results_from_experiment(experiment: Experiment) -> list[EvalResults]:
    """An experiment as results: each reference evaluator's stored verdicts, or agentnb's scores as one provider."""
    stored: dict[str, Any] = experiment.info.get("metadata", {}).get("evals") or {}
    out: list[EvalResults] = []
    for provider, fields in stored.items():
        items: list[EvalItemResult] = []
        agents: dict[str, list[EvalItemResult]] = {}
        for row in experiment.rows:
            evals: dict[str, dict[str, Any]] = row["data"].get("evals") or {}
            verdict = evals.get(provider)
            if verdict is None:
                continue
            if verdict.get("item") is not None:
                items.append(EvalItemResult.from_dict(verdict["item"]))
            by_agent: dict[str, list[dict[str, Any]]] = verdict.get("agents") or {}
            for executor_id, entries in by_agent.items():
                agents.setdefault(executor_id, []).extend(EvalItemResult.from_dict(e) for e in entries)
        results = _rebuild(provider, fields, items)
        subs: dict[str, Any] = fields.get("sub") or {}
        results.sub_results = {
            executor_id: _rebuild(provider, subs.get(executor_id) or {}, entries)
            for executor_id, entries in agents.items()
        }
        results.experiment = experiment.name
        out.append(results)
    if not out:
        out.append(_native(experiment))
    else:  # agentnb scorers judged beside the evaluators (evaluate_agent / evaluate_workflow take both)
        native = [s["name"] for s in experiment.scorers if s["name"] not in stored]
        if native:
            out.append(_native(experiment, only=native))
    return out


def scorer_results(experiment: Experiment, names: Collection[str]) -> EvalResults:
    """The verdicts of agentnb scorers ``names`` in an experiment, as one result from provider ``"agentnb"``
    (what ``evaluate_agent`` and ``evaluate_workflow`` return for the scorers given among their evaluators)."""
    return _native(experiment, only=names)


def _native(experiment: Experiment, only: Collection[str] | None = None) -> EvalResults:
    """agentnb scorers' verdicts: a score at or above its threshold passes; a case that did not run errors.

    ``only`` names the scorers to read (the others' columns are left out); ``None`` reads every score.
    """
    thresholds: dict[str, float] = {}
    for scorer in experiment.scorers:
        if only is None or scorer["name"] in only:
            for column in scorer.get("columns") or [scorer["name"]]:
                thresholds[column] = float(scorer.get("threshold", 0.5))
    items: list[EvalItemResult] = []
    per: dict[str, dict[str, int]] = {}
    for row in experiment.rows:
        data = row["data"]
        result: dict[str, Any] = data.get("result") or {}
        scores: list[EvalScoreResult] = []
        for column, value in row["scores"].items():
            if value is None or (only is not None and column not in thresholds):
                continue
            passed = float(value) >= thresholds.get(column, 0.5)
            scores.append(
                EvalScoreResult(
                    name=column,
                    score=float(value),
                    passed=passed,
                    sample=_note(data, column),
                    dimensions=_dimensions(data, column),
                )
            )
            counts = per.setdefault(column, {"passed": 0, "failed": 0, "errored": 0})
            counts["passed" if passed else "failed"] += 1
        status = "error" if row["status"] != "ok" else ("pass" if scores and all(s.passed for s in scores) else "fail")
        tokens_in, tokens_out = result.get("input_tokens"), result.get("output_tokens")
        usage = None
        if tokens_in is not None or tokens_out is not None:
            usage = {
                "prompt_tokens": int(tokens_in or 0),
                "completion_tokens": int(tokens_out or 0),
                "total_tokens": int(tokens_in or 0) + int(tokens_out or 0),
            }
        case_id = str(row["case_id"]) + (f".{row['repetition']}" if row.get("repetition") else "")
        items.append(
            EvalItemResult(
                item_id=case_id,
                status=status,
                scores=scores,
                error_code=row["status"] if status == "error" else None,
                error_message=result.get("error"),
                input_text=_text(data.get("input")),
                output_text=_text(result.get("output")),
                token_usage=usage,
                metadata={"case_id": row["case_id"], "run_id": row.get("run_id"), "trace_id": row.get("trace_id")},
            )
        )
    results = EvalResults(
        provider="agentnb",
        eval_id="agentnb",
        run_id=experiment.name,
        status="completed" if experiment.status == "completed" else experiment.status,
        result_counts=_counts(items),
        per_evaluator=per,
        items=items,
    )
    results.experiment = experiment.name
    return results


def _note(data: Mapping[str, Any], column: str) -> dict[str, Any] | None:
    notes: dict[str, str] = data.get("notes") or {}
    scorer = column.split(".", 1)[0]
    note = notes.get(column) or notes.get(scorer)
    return {"reason": note} if note else None


def _dimensions(data: Mapping[str, Any], column: str) -> list[RubricScore] | None:
    """A rubric judge's per-dimension verdicts, on its overall column."""
    details: dict[str, Any] = data.get("details") or {}
    kept: dict[str, Any] = details.get(column) or {}
    entries: list[dict[str, Any]] = kept.get("dimensions") or []
    return [RubricScore(**entry) for entry in entries] or None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    import json

    return json.dumps(plain(value), ensure_ascii=False)
