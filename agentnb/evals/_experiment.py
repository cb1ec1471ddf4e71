"""Experiments: a stored evaluation's results as DataFrames, its summary, listing, reloading and comparing."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._cases import BATCH_COLUMNS, make_frame
from ._gate import answer_diff, row_tool_path

if TYPE_CHECKING:
    import pandas as pd

    from ._results import EvalResults

__all__ = ["Experiment", "compare", "experiments", "load_experiment"]

SUMMARY_COLUMNS: tuple[str, ...] = ("mean", "pass_rate", "n", "errors", "p50", "p95", "total")


class Experiment:
    """A named evaluation: every case with its answer and scores, as stored in the run store.

    Build one with :func:`evaluate` or read one back with :func:`load_experiment`; both give the same
    object, so another notebook (or the DevUI) sees exactly what the evaluation saw.

    Attributes:
        name: The experiment's name.
        target: What was evaluated (``agent:helper``, an import string, ...).
        status: ``"completed"``, ``"running"`` or ``"interrupted"``.
        rows: The stored case rows, in dataset order.

    Example:
        ```python
        from agentnb.evals import load_experiment

        experiment = load_experiment("geo-v1")
        experiment.summary()
        experiment.results.sort_values("exact_match").head()
        ```
    """

    def __init__(self, name: str, *, info: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
        self.name = name
        self.info = info
        self.target: str | None = info.get("target")
        self.status: str = info.get("status", "completed")
        self.rows = list(rows)
        self._results: pd.DataFrame | None = None

    @classmethod
    def from_store(cls, store: Any, name: str) -> Experiment:
        """Read experiment ``name`` from ``store``.

        Raises:
            KeyError: There is no such experiment.
        """
        info = store.get_experiment(name)
        if info is None:
            known = [e["name"] for e in store.list_experiments(limit=20)]
            raise KeyError(f"No experiment {name!r} in the run store; stored experiments include {known}.")
        return cls(name, info=info, rows=store.list_experiment_cases(name))

    def __repr__(self) -> str:
        return f"Experiment(name={self.name!r}, target={self.target!r}, cases={len(self.rows)}, status={self.status!r})"

    # ------------------------------------------------------------------ data

    @property
    def scorers(self) -> list[dict[str, Any]]:
        """The scorers: ``name``, ``threshold`` and the score ``columns`` each gave."""
        return list(self.info.get("metadata", {}).get("scorers", []))

    @property
    def score_columns(self) -> list[str]:
        """Every score column, in scorer order."""
        out: list[str] = []
        for scorer in self.scorers:
            for column in _scorer_columns(scorer):
                if column not in out:
                    out.append(column)
        return out

    def _threshold(self, column: str) -> float:
        for scorer in self.scorers:
            if column in _scorer_columns(scorer):
                return float(scorer.get("threshold", 0.5))
        return 0.5

    def replace_rows(self, rows: list[dict[str, Any]]) -> None:
        """Replace the case rows (the ``results`` frame is rebuilt from them on its next read)."""
        self.rows = rows
        self._results = None

    @property
    def results(self) -> pd.DataFrame:
        """One row per case: ``run_batch``'s columns, ``expected``, the dataset's other columns, one per score."""
        if self._results is None:
            self._results = self._frame()
        return self._results.copy()

    def _frame(self) -> pd.DataFrame:
        score_columns = self.score_columns
        metadata_columns: list[str] = []
        for row in self.rows:
            row_metadata: dict[str, Any] = row["data"].get("metadata") or {}
            for key in row_metadata:
                if key not in metadata_columns:
                    metadata_columns.append(key)
        repeated = any(row["repetition"] for row in self.rows)
        base = ["case_id", *(["repetition"] if repeated else []), *BATCH_COLUMNS[1:], "expected"]
        meta = [c for c in metadata_columns if c not in base]
        scored = [c for c in score_columns if c not in base and c not in meta]
        columns = base + meta + scored
        records: list[list[Any]] = []
        for row in self.rows:
            data = row["data"]
            result: dict[str, Any] = data.get("result") or {}
            metadata: dict[str, Any] = data.get("metadata") or {}
            scores = row["scores"]
            record: list[Any] = [row["case_id"]]
            if repeated:
                record.append(row["repetition"])
            record += [
                data.get("input"),
                result.get("output"),
                row["status"],
                result.get("error"),
                result.get("latency_ms"),
                result.get("input_tokens"),
                result.get("output_tokens"),
                row["run_id"],
                row["trace_id"],
                data.get("expected"),
            ]
            record += [metadata.get(c) for c in meta]
            record += [math.nan if scores.get(c) is None else float(scores[c]) for c in scored]
            records.append(record)
        return make_frame(records, columns, floats=scored)

    def failures(self) -> pd.DataFrame:
        """The cases that failed: a status other than ``ok`` or a score below its threshold, worst first."""
        frame = self._ranked()
        return frame[frame["_rank"] < 1].drop(columns="_rank").reset_index(drop=True)

    def _ranked(self) -> pd.DataFrame:
        """Results with a ``_rank`` column: failed cases first (lowest score share first), passing last."""
        frame = self.results
        columns = self.score_columns
        ranks: list[float] = []
        for _, row in frame.iterrows():
            if row["status"] != "ok":
                ranks.append(-1.0)
                continue
            passed = [row[c] >= self._threshold(c) for c in columns if not math.isnan(row[c])]
            ranks.append(sum(passed) / len(passed) if passed else 1.0)
        frame["_rank"] = ranks
        return frame.sort_values("_rank", kind="stable")

    def summary(self) -> pd.DataFrame:
        """Per score: mean, pass rate, n and scorer errors; latency p50 / p95; tokens (judges' apart)."""
        import pandas as pd

        frame = self.results
        index: list[str] = []
        data: list[list[Any]] = []
        errors: dict[str, int] = {}
        for row in self.rows:
            scorer_errors: dict[str, Any] = row["data"].get("scorer_errors") or {}
            for scorer_name in scorer_errors:
                errors[scorer_name] = errors.get(scorer_name, 0) + 1
        nan = math.nan
        for scorer in self.scorers:
            for column in _scorer_columns(scorer):
                if column not in frame:
                    continue
                values = frame[column].dropna()
                n = int(values.size)
                mean = float(values.mean()) if n else nan
                pass_rate = float((values >= float(scorer.get("threshold", 0.5))).mean()) if n else nan
                index.append(column)
                data.append([mean, pass_rate, n, errors.get(scorer["name"], 0), nan, nan, nan])
        ok = frame["status"] == "ok"
        latency = frame.loc[ok, "latency_ms"].dropna()
        index.append("latency_ms")
        data.append(
            [
                float(latency.mean()) if latency.size else nan,
                nan,
                int(latency.size),
                int((~ok).sum()),
                float(latency.quantile(0.5)) if latency.size else nan,
                float(latency.quantile(0.95)) if latency.size else nan,
                nan,
            ]
        )
        for column in ("input_tokens", "output_tokens"):
            values = frame[column].dropna()
            index.append(column)
            total = int(values.sum()) if values.size else 0
            data.append([float(values.mean()) if values.size else nan, nan, int(values.size), 0, nan, nan, total])
        judge_in = judge_out = 0
        judged = 0
        for row in self.rows:
            scorer_tokens: dict[str, list[int | None]] = row["data"].get("scorer_tokens") or {}
            for pair in scorer_tokens.values():
                judged += 1
                judge_in += int(pair[0] or 0)
                judge_out += int(pair[1] or 0)
        if judged:
            index += ["scorer_input_tokens", "scorer_output_tokens"]
            data.append([judge_in / judged, nan, judged, 0, nan, nan, judge_in])
            data.append([judge_out / judged, nan, judged, 0, nan, nan, judge_out])
        summary = pd.DataFrame(data, index=pd.Index(index, name="metric"), columns=list(SUMMARY_COLUMNS))
        summary["n"] = summary["n"].astype("int64")
        summary["errors"] = summary["errors"].astype("int64")
        return summary

    def means(self) -> dict[str, float]:
        """The mean of each score column."""
        frame = self.results
        return {c: float(frame[c].mean()) for c in self.score_columns if c in frame}

    # ------------------------------------------------------------------ Agent Framework's results

    def to_eval_results(self) -> list[EvalResults]:
        """This experiment as Agent Framework's results, one per evaluator.

        An experiment ``evaluate_agent`` / ``evaluate_workflow`` wrote gives back each evaluator's stored
        results (per-agent ``sub_results`` included); one agentnb's scorers judged gives one result from
        provider ``"agentnb"`` (a score at or above its scorer's threshold passes; a case that did not run
        is an ``"error"`` item).
        """
        from ._results import eval_results_from_experiment

        return eval_results_from_experiment(self)

    @classmethod
    def from_eval_results(
        cls,
        results: EvalResults | Sequence[EvalResults],
        *,
        name: str | None = None,
        store: Any = None,
        save: bool = False,
    ) -> Experiment:
        """Agent Framework's results (one or more evaluators over the same items) as an experiment.

        Each item is a case (``item_id`` its ``case_id``) whose score columns are ``<provider>.<evaluator>``;
        ``save=True`` writes it to the run store (``store``, else the default one).
        """
        from ._results import experiment_from_eval_results

        return experiment_from_eval_results(results, name=name, store=store, save=save)

    # ------------------------------------------------------------------ display

    def _repr_html_(self) -> str:
        from ._display import experiment_html

        return experiment_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": repr(self), "text/html": self._repr_html_()}


def _scorer_columns(scorer: dict[str, Any]) -> list[str]:
    """The score columns one scorer gave: its ``columns``, or just its name."""
    columns: list[str] = scorer.get("columns") or [scorer["name"]]
    return columns


def _store(store: Any) -> Any:
    from ._run import resolve_store

    return resolve_store(store)


def load_experiment(name: str, *, store: Any = None) -> Experiment:
    """Read experiment ``name`` back from the run store (``None``: the default store).

    Raises:
        KeyError: There is no such experiment.
    """
    return Experiment.from_store(_store(store), name)


def experiments(*, store: Any = None, limit: int | None = None) -> pd.DataFrame:
    """List stored experiments, most recently updated first, with the mean of each score.

    Columns: ``name, status, target, cases, created_at, updated_at``, then one per score column.
    """
    import pandas as pd

    listed = _store(store).list_experiments(limit=limit)
    records: list[dict[str, Any]] = []
    score_columns: list[str] = []
    for info in listed:
        if info["target"] == "dataset":  # saved dataset versions share the store's experiment records
            continue
        means: dict[str, float] = info["metadata"].get("means") or {}
        for column in means:
            if column not in score_columns:
                score_columns.append(column)
        records.append(
            {
                "name": info["name"],
                "status": info["status"],
                "target": info["target"],
                "cases": info["cases"],
                "created_at": pd.Timestamp(info["created_at"]),
                "updated_at": pd.Timestamp(info["updated_at"]),
                **means,
            }
        )
    columns = ["name", "status", "target", "cases", "created_at", "updated_at", *score_columns]
    return pd.DataFrame.from_records(records, columns=columns)


def _as_experiment(value: Experiment | str, store: Any) -> Experiment:
    return value if isinstance(value, Experiment) else load_experiment(value, store=store)


def compare(a: Experiment | str, b: Experiment | str, *, store: Any = None) -> pd.DataFrame:
    """Compare two experiments case by case (matched by ``case_id`` and repetition), regressions first.

    Columns: ``case_id``, ``input``, ``expected``, ``change`` (``regression``, ``improvement``, ``same``,
    ``only_a``, ``only_b``), ``status_a``/``status_b``, ``output_a``/``output_b``, ``tools_a``/``tools_b`` (each
    run's tool path), ``worse`` (the scores that dropped in this case), ``answer_diff`` (a unified diff of the
    two answers, empty when they are equal), and for every score both experiments have ``<score>_a``,
    ``<score>_b`` and ``<score>_delta`` (b minus a). The frame's ``attrs`` hold the two names (``a``, ``b``)
    and, under ``worse``, each score's cases that got worse: ``{"exact_match": ["italy"], ...}``.

    Example:
        ```python
        diff = compare("geo-v1", "geo-v2")
        diff.attrs["worse"]  # {"exact_match": ["italy"]}
        print(diff.loc[diff["change"] == "regression", "answer_diff"].iloc[0])
        ```
    """
    import pandas as pd

    first, second = _as_experiment(a, store), _as_experiment(b, store)
    left, right = first.results, second.results
    keys = ["case_id", "repetition"] if "repetition" in left or "repetition" in right else ["case_id"]
    for frame in (left, right):
        if "repetition" in keys and "repetition" not in frame:
            frame["repetition"] = 0
    shared = [c for c in first.score_columns if c in second.score_columns]
    keep = ["input", "expected", "status", "output", *shared]
    merged = pd.merge(
        left[keys + keep], right[keys + keep], on=keys, how="outer", suffixes=("_a", "_b"), indicator=True
    )
    merged["input"] = merged["input_a"].where(merged["input_a"].notna(), merged["input_b"])
    merged["expected"] = merged["expected_a"].where(merged["expected_a"].notna(), merged["expected_b"])
    reps = merged["repetition"] if "repetition" in keys else pd.Series(0, index=merged.index)
    total = pd.Series(0.0, index=merged.index)
    worse: list[list[str]] = [[] for _ in range(len(merged))]
    for column in shared:
        delta = merged[f"{column}_b"] - merged[f"{column}_a"]
        merged[f"{column}_delta"] = delta
        total = total + delta.fillna(0.0)
        dropped = (delta < 0) | (merged[f"{column}_a"].notna() & merged[f"{column}_b"].isna())
        for i in dropped[dropped & (merged["_merge"] == "both")].index:
            worse[int(i)].append(column)
    merged["worse"] = worse
    lost = (merged["status_a"] == "ok") & (merged["status_b"] != "ok")
    gained = (merged["status_a"] != "ok") & (merged["status_b"] == "ok")
    change = pd.Series("same", index=merged.index, dtype=object)
    change[(total > 0) | gained] = "improvement"
    change[(total < 0) | lost] = "regression"
    change[merged["_merge"] == "left_only"] = "only_a"
    change[merged["_merge"] == "right_only"] = "only_b"
    merged["change"] = change
    tools_a, tools_b = _tool_paths(first), _tool_paths(second)
    case_keys = [(str(case), int(rep)) for case, rep in zip(merged["case_id"], reps, strict=True)]
    merged["tools_a"] = [tools_a.get(k, []) for k in case_keys]
    merged["tools_b"] = [tools_b.get(k, []) for k in case_keys]
    merged["answer_diff"] = [
        answer_diff(out_a, out_b) if side == "both" else ""
        for out_a, out_b, side in zip(merged["output_a"], merged["output_b"], merged["_merge"], strict=True)
    ]
    order = {"regression": 0, "improvement": 1, "only_a": 2, "only_b": 3, "same": 4}
    merged["_order"] = merged["change"].map(order)
    merged["_total"] = total
    merged["_rep"] = reps
    merged = merged.sort_values(["_order", "_total"], kind="stable").reset_index(drop=True)
    reps_sorted = merged["_rep"]
    columns = [*keys, "input", "expected", "change", "status_a", "status_b", "output_a", "output_b"]
    columns += ["tools_a", "tools_b", "worse", "answer_diff"]
    for column in shared:
        columns += [f"{column}_a", f"{column}_b", f"{column}_delta"]
    result = merged[columns]
    by_score: dict[str, list[str]] = {}
    for i, dropped_scores in zip(merged.index, result["worse"], strict=True):
        rep = int(reps_sorted.iloc[i])
        label = str(result["case_id"].iloc[i]) + (f".{rep}" if rep else "")
        for column in dropped_scores:
            by_score.setdefault(column, []).append(label)
    result.attrs.update({"a": first.name, "b": second.name, "worse": by_score})
    return result


def _tool_paths(experiment: Experiment) -> dict[tuple[str, int], list[str]]:
    """Each case's tool path (the names of the tools its run called, in order), by case and repetition."""
    return {(str(row["case_id"]), int(row.get("repetition") or 0)): row_tool_path(row) for row in experiment.rows}
