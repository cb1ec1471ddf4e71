"""``run_batch`` and ``evaluate``: run a target over many inputs, score the results, keep them in the store."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ._cases import BATCH_COLUMNS, CaseResult, EvalCase, cases_from_inputs, load_cases, make_frame, plain
from ._engine import Progress, Recorder, get_backend
from ._spans import CaseSpans
from ._targets import OnApproval, RunOptions, describe_target
from .scorers import Scorer, as_scorer

if TYPE_CHECKING:
    import pandas as pd

    from ._experiment import Experiment

__all__ = ["CaseScores", "case_row", "evaluate", "resolve_store", "run_batch", "score_case"]

#: Statuses a resumed experiment keeps: the target answered (or is waiting for a person), so calling the
#: model again would only cost money. Errors and timeouts are tried again.
_FINISHED = frozenset({"ok", "approval_pending"})


def resolve_store(store: Any) -> Any:
    """``None`` is the default run store (``AGENTNB_STORE_URL``); a URL or path opens that store; a store
    passes through."""
    if store is None:
        from ..store import default_store

        return default_store()
    if isinstance(store, (str, os.PathLike)):
        from ..store import open_store

        return open_store(cast("str | os.PathLike[str]", store))
    if not callable(getattr(store, "add_runs", None)):
        raise TypeError(f"store must be a run store, a path or None (the default store), got {type(store).__name__}")
    return store


def _require_pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - pandas comes with the evals extra
        raise ImportError('agentnb.evals needs pandas: pip install "agentnb[evals]"') from e
    return pd


def case_row(
    case: EvalCase,
    result: CaseResult,
    scores: Mapping[str, float | None] | None = None,
    *,
    scorer_errors: dict[str, str] | None = None,
    notes: dict[str, str] | None = None,
    scorer_tokens: dict[str, list[int | None]] | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The stored form of one finished case (what ``Experiment`` and the DevUI read back); a NaN or ``None``
    score is stored as ``None``."""
    return {
        "case_id": case.case_id,
        "repetition": case.repetition,
        "position": case.position,
        "status": result.status,
        "run_id": result.run_id,
        "trace_id": result.trace_id,
        "scores": {k: (None if v is None or math.isnan(v) else v) for k, v in (scores or {}).items()},
        "data": {
            "input": plain(case.input),
            "expected": plain(case.expected),
            "metadata": plain(dict(case.metadata)),
            "result": result.to_record(),
            "scorer_errors": scorer_errors or {},
            "notes": notes or {},
            "scorer_tokens": scorer_tokens or {},
            **({"details": details} if details else {}),
        },
    }


async def run_batch(
    target: Any,
    inputs: Iterable[Any],
    *,
    concurrency: int = 16,
    backend: Any = "local",
    timeout: float | None = None,
    retries: int = 0,
    on_approval: OnApproval = "deny",
    progress: bool = True,
    store: Any = None,
    rate_limit_retries: int = 6,
) -> pd.DataFrame:
    """Run ``target`` on every input, ``concurrency`` at a time, and return one row per input, in input order.

    A case that fails, times out or waits for approval never stops the batch: it gets that ``status``.
    Rate limits (``RateLimitError``) are retried with backoff, honouring the server's retry-after. Every
    case is a run in the run store (with its trace when instrumentation is on).

    Args:
        target: An Agent, a Workflow, an async function ``input -> output``, or an import string
            ``"pkg.module:factory"`` naming a zero-argument callable that returns one (Ray needs this form).
        inputs: Texts (or dicts for a workflow with a typed input), or a DataFrame with an ``input`` column.
        concurrency: How many cases run at once (per Ray task with ``backend="ray"``).
        backend: ``"local"`` (asyncio here), ``"ray"``, or a ``LocalBackend`` / ``RayBackend``.
        timeout: Seconds one attempt of a case may take; ``None`` waits.
        retries: Extra attempts for a case that failed or timed out.
        on_approval: ``"deny"``, ``"approve"``, ``"pending"`` or a callable (see :data:`OnApproval`).
        progress: Show a ``tqdm`` progress bar.
        store: The run store (``None``: the default store), or a store URL or path.
        rate_limit_retries: How many times a rate-limited case waits and tries again.

    Returns:
        A DataFrame with columns ``case_id, input, output, status, error, latency_ms, input_tokens,
        output_tokens, run_id, trace_id``.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.evals import run_batch
        from agentnb.local import FunctionChatClient

        agent = Agent(FunctionChatClient(lambda messages, options: messages[-1].text.upper()), name="shout")
        frame = await run_batch(agent, ["hi", "bye"], progress=False)
        frame[["input", "output", "status"]]
        ```
    """
    _require_pandas()
    cases = cases_from_inputs(inputs)
    options = RunOptions(
        timeout=timeout, retries=retries, on_approval=on_approval, rate_limit_retries=rate_limit_retries
    )
    engine = get_backend(backend, concurrency)
    run_store = resolve_store(store)
    # Rows, not results: a result holds its whole response, and ten thousand live responses make every cyclic
    # garbage collection walk them all (which would cost more than the batch's own work).
    rows: list[tuple[Any, ...] | None] = [None] * len(cases)
    bar = Progress(len(cases), enabled=progress, desc=f"run_batch {describe_target(target)}")
    recorder = Recorder(run_store)

    async def on_result(case: EvalCase, result: CaseResult, record: dict[str, Any] | None) -> None:
        rows[case.position] = (
            case.case_id,
            plain(case.input),
            result.output,
            result.status,
            result.error,
            result.latency_ms,
            result.input_tokens,
            result.output_tokens,
            result.run_id,
            result.trace_id,
        )
        if record is not None:
            recorder.add(run=record)
        bar.advance(result)

    try:
        await engine.run(target, cases, options, store=run_store, on_result=on_result)
    finally:
        recorder.close()
        bar.close()
    complete = [row for row in rows if row is not None]
    assert len(complete) == len(cases), "every backend reports every case"
    return make_frame(complete, list(BATCH_COLUMNS))


def _unique_scorers(scorers: Any) -> list[Scorer]:
    one = callable(scorers) and not isinstance(scorers, (list, tuple))
    items: list[Any] = [scorers] if one else list(cast("Iterable[Any]", scorers))
    out = [as_scorer(s) for s in items]
    names = [s.name for s in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"Scorers need distinct names; {duplicates} appear twice. Pass name=... to one of them.")
    return out


class CaseScores(TypedDict):
    """What the scorers said of one case, in the stored form (the keyword arguments of :func:`case_row`)."""

    scores: dict[str, float | None]
    scorer_errors: dict[str, str]
    notes: dict[str, str]
    scorer_tokens: dict[str, list[int | None]]
    details: dict[str, Any]


async def score_case(
    scorers: Sequence[Scorer], case: EvalCase, result: CaseResult, columns: dict[str, list[str]]
) -> CaseScores:
    """Score one finished case (a failed case scores 0 on every scorer); ``case_row(case, result, **scored)``
    is its stored row. A NaN score (the scorer abstained or failed) is ``None``.

    Only the verdicts: rescoring a stored case merges them into the row it has, so the result is not written
    out again.
    """
    scores: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    notes: dict[str, str] = {}
    tokens: dict[str, list[int | None]] = {}
    details: dict[str, Any] = {}
    for scorer in scorers:
        if not result.ok:
            for column in columns.get(scorer.name) or [scorer.name]:
                scores[column] = 0.0
            continue
        scored = await scorer.score(case, result)
        values = scored.values
        known = columns.setdefault(scorer.name, [])
        for column, value in values.items():
            scores[column] = None if value != value else value  # NaN: abstained or failed
            if column not in known:
                known.append(column)
        if scored.error is not None:
            errors[scorer.name] = scored.error
        if scored.note is not None:
            notes[scorer.name] = scored.note
        if scored.input_tokens is not None or scored.output_tokens is not None:
            tokens[scorer.name] = [scored.input_tokens, scored.output_tokens]
        if scored.details is not None:
            details[scorer.name] = plain(scored.details)
    return {"scores": scores, "scorer_errors": errors, "notes": notes, "scorer_tokens": tokens, "details": details}


def _expand(cases: list[EvalCase], repetitions: int) -> list[EvalCase]:
    if repetitions == 1:
        return cases
    return [
        EvalCase(c.case_id, c.input, c.expected, c.metadata, position=c.position, repetition=r)
        for c in cases
        for r in range(repetitions)
    ]


async def evaluate(
    target: Any,
    dataset: Any,
    scorers: Sequence[Any] | Any,
    *,
    name: str,
    concurrency: int = 16,
    backend: Any = "local",
    repetitions: int = 1,
    resume: bool = True,
    progress: bool = True,
    store: Any = None,
    timeout: float | None = None,
    retries: int = 0,
    on_approval: OnApproval = "deny",
    rate_limit_retries: int = 6,
) -> Experiment:
    """Run ``target`` over a dataset, score every case, and keep it all in the run store as experiment ``name``.

    Each case is stored as soon as it is scored, so an interrupted evaluation (Ctrl-C, a killed kernel) loses
    no finished case, and running it again with ``resume=True`` (the default) re-uses every case that already
    finished under this name: the model is not called again for them (cases that failed are tried again;
    scorers added since are applied to the stored answers).

    Args:
        target: What to evaluate (see :func:`run_batch`).
        dataset: A DataFrame, a list of dicts, or a ``.jsonl`` / ``.csv`` path; column ``input``, optional
            ``expected`` and ``case_id``; other columns are kept as metadata.
        scorers: Scorers (see :mod:`agentnb.evals.scorers`) or plain callables ``(case, result) -> score``.
        name: The experiment's name in the store (``load_experiment(name)`` reads it back).
        concurrency: How many cases run at once (per Ray task with ``backend="ray"``).
        backend: ``"local"``, ``"ray"``, or a ``LocalBackend`` / ``RayBackend``.
        repetitions: Run every case this many times (for variance of a non-deterministic model).
        resume: Re-use finished cases stored under ``name``; ``False`` starts the experiment afresh.
        progress: Show a ``tqdm`` bar with the running mean of every scorer.
        store: The run store (``None``: the default store), or a store URL or path.
        timeout: Seconds one attempt of a case may take.
        retries: Extra attempts for a case that failed or timed out.
        on_approval: ``"deny"``, ``"approve"``, ``"pending"`` or a callable.
        rate_limit_retries: How many times a rate-limited case waits and tries again.

    Returns:
        The :class:`Experiment`: ``.results``, ``.summary()``, rich display.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.evals import evaluate, scorers
        from agentnb.local import FunctionChatClient

        agent = Agent(FunctionChatClient(lambda messages, options: "Paris"), name="geo")
        dataset = [{"input": "Capital of France?", "expected": "Paris"}]
        experiment = await evaluate(agent, dataset, [scorers.exact_match()], name="geo-v1", progress=False)
        experiment.summary()
        ```
    """
    from ._experiment import Experiment

    _require_pandas()
    if not name or not isinstance(cast(object, name), str):
        raise ValueError(f"evaluate needs a non-empty experiment name, got {name!r}")
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    scorer_list = _unique_scorers(scorers)
    cases = _expand(load_cases(dataset), repetitions)
    options = RunOptions(
        timeout=timeout,
        retries=retries,
        on_approval=on_approval,
        rate_limit_retries=rate_limit_retries,
        experiment=name,
    )
    engine = get_backend(backend, concurrency)
    run_store = resolve_store(store)
    previous = run_store.get_experiment(name)
    columns: dict[str, list[str]] = {}
    if previous is not None and resume:
        for info in previous["metadata"].get("scorers", []):
            columns[info["name"]] = list(info.get("columns") or [])
    elif previous is not None:
        run_store.delete_experiment(name)
    for scorer in scorer_list:
        columns.setdefault(scorer.name, [])

    def metadata(
        status_counts: dict[str, int] | None = None, summary: dict[str, float] | None = None
    ) -> dict[str, Any]:
        return {
            "scorers": [{"name": s.name, "threshold": s.threshold, "columns": columns[s.name]} for s in scorer_list],
            "dataset_size": len(cases) // repetitions,
            "repetitions": repetitions,
            "backend": repr(engine),
            "concurrency": concurrency,
            "statuses": status_counts or {},
            "means": summary or {},
        }

    run_store.put_experiment(name, status="running", target=describe_target(target), metadata=metadata())
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    todo: list[EvalCase] = cases
    recorder = Recorder(run_store, experiment=name)
    spans = CaseSpans(run_store)
    bar = Progress(len(cases), enabled=progress, desc=name)
    status = "interrupted"
    try:
        if previous is not None and resume:
            todo = await _reuse(run_store, name, cases, scorer_list, columns, rows, recorder, bar, spans)

        async def on_result(case: EvalCase, result: CaseResult, record: dict[str, Any] | None) -> None:
            spans.expect(result)
            try:
                row = case_row(case, result, **await score_case(scorer_list, case, result, columns))
            finally:
                spans.forget(result)
            rows[(case.case_id, case.repetition)] = row
            recorder.add(run=record, case=row)
            bar.advance(result, {k: (math.nan if v is None else v) for k, v in row["scores"].items()})

        if todo:
            await engine.run(target, todo, options, store=run_store, on_result=on_result)
        status = "completed"
    finally:
        recorder.close()
        bar.close()
        ordered = [rows[(c.case_id, c.repetition)] for c in cases if (c.case_id, c.repetition) in rows]
        counts: dict[str, int] = {}
        for row in ordered:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        run_store.put_experiment(name, status=status, metadata=metadata(counts, bar.means()))
    return Experiment.from_store(run_store, name)


async def _reuse(
    run_store: Any,
    name: str,
    cases: list[EvalCase],
    scorers: Sequence[Scorer],
    columns: dict[str, list[str]],
    rows: dict[tuple[str, int], dict[str, Any]],
    recorder: Recorder,
    bar: Progress,
    spans: CaseSpans,
) -> list[EvalCase]:
    """Keep the stored cases that finished on the same input; score them with scorers they lack; return the rest."""
    stored = {(r["case_id"], r["repetition"]): r for r in run_store.list_experiment_cases(name)}
    todo: list[EvalCase] = []
    kept: list[tuple[EvalCase, dict[str, Any], list[Scorer], CaseResult | None]] = []
    for case in cases:
        row = stored.get((case.case_id, case.repetition))
        if row is None or row["status"] not in _FINISHED or row["data"].get("input") != plain(case.input):
            todo.append(case)
            continue
        expected = plain(case.expected)
        if row["data"].get("expected") != expected or row["data"].get("metadata") != plain(dict(case.metadata)):
            # The answer stands; what it is judged against changed, so every scorer looks again.
            row["data"]["expected"] = expected
            row["data"]["metadata"] = plain(dict(case.metadata))
            row["scores"] = {}
        missing = [s for s in scorers if not any(c in row["scores"] for c in columns.get(s.name) or [s.name])]
        result = None
        if missing:
            result = CaseResult.from_record(row["data"]["result"])
            spans.expect(result)  # all queued first: the first trace a scorer reads loads the next 500 at once
        kept.append((case, row, missing, result))
    kept.reverse()
    while kept:  # each result (with its spans and trace) is let go once scored, so few are alive at a time
        case, row, missing, result = kept.pop()
        if result is not None:
            try:
                fresh = await score_case(missing, case, result, columns)
            finally:
                spans.forget(result)
            row["scores"].update(fresh["scores"])
            for key in ("scorer_errors", "notes", "scorer_tokens", "details"):
                if fresh[key]:
                    row["data"].setdefault(key, {}).update(fresh[key])
        moved = row["position"] != case.position
        row["position"] = case.position
        if missing or moved:
            recorder.add(case=row)
        rows[(case.case_id, case.repetition)] = row
        bar.add_scores({k: v for k, v in row["scores"].items() if v is not None})
        if bar.bar is not None:
            bar.bar.update(1)
    return todo
