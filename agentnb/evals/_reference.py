"""``evaluate_agent`` and ``evaluate_workflow``: Agent Framework's evaluation calls, run by agentnb's engine.

The cases run through :func:`~agentnb.evals.evaluate` (concurrency, retries, the Ray backend, the run
store, progress, resume), then every evaluator judges the stored conversations, and its verdicts are written
into the same experiment, so ``load_experiment``, ``compare`` and the DevUI show them like any scorer's.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ._cases import CaseResult, EvalCase
from ._checks import Evaluator, LocalEvaluator, local_results, resolve_evaluators
from ._items import ConversationSplitter, EvalItem, ExpectedToolCall, agent_tools, item_from_case
from ._results import EvalItemResult, EvalResults, eval_run_metadata, score_columns, scorer_results
from ._targets import OnApproval, Outcome, Target, agent_outcome, workflow_outcome
from .scorers import Scorer

if TYPE_CHECKING:
    from ._experiment import Experiment

__all__ = ["evaluate_agent", "evaluate_workflow"]


def _split_evaluators(evaluators: Any) -> tuple[list[Any], list[Scorer]]:
    """Agent Framework's evaluators and checks (judged after the run), and agentnb scorers among them.

    agentnb's scorers (``scorers.tool_path(...)``, ``scorers.max_model_calls(...)``, ...) score each case as
    it finishes, inside the engine, where they read its trace: from its spans when it ran traced.
    """
    one = isinstance(evaluators, (Scorer, Evaluator)) or callable(evaluators)
    given: list[Any] = [evaluators] if one else list(cast("Iterable[Any]", evaluators))
    native = [e for e in given if isinstance(e, Scorer)]
    others = [e for e in given if not isinstance(e, Scorer)]
    return (resolve_evaluators(others) if others else []), native


def _with_scorers(results: list[EvalResults], experiment: Experiment, native: list[Scorer]) -> list[EvalResults]:
    """The evaluators' results, then agentnb's scorers' verdicts as one result from provider ``"agentnb"``."""
    if not native:
        return results
    return [*results, scorer_results(experiment, [s.name for s in native])]


def _listed(value: Any, kind: type) -> list[Any] | None:
    if value is None:
        return None
    return [value] if isinstance(value, kind) else list(value)


class _GivenOutcomes(Target):
    """A target that answers each case with an outcome given up front (responses evaluated without a run)."""

    def __init__(self, kind: str, name: str, outcomes: list[Outcome]) -> None:
        super().__init__(name, f"given:{name}")
        self.kind = kind
        self._outcomes = outcomes

    async def call(self, case: EvalCase, options: Any, store: Any) -> Outcome:
        return self._outcomes[case.position]


def _item_id(case: EvalCase, repetitions: int) -> str:
    return case.case_id if repetitions == 1 else f"{case.case_id}.{case.repetition}"


def _case_of(row: dict[str, Any]) -> tuple[EvalCase, CaseResult]:
    data = row["data"]
    case = EvalCase(
        case_id=row["case_id"],
        input=data.get("input"),
        expected=data.get("expected"),
        metadata=data.get("metadata") or {},
        position=row["position"],
        repetition=row["repetition"],
    )
    return case, CaseResult.from_record(data.get("result") or {"case_id": row["case_id"]})


def _errored(case: EvalCase, result: CaseResult, item_id: str) -> EvalItemResult:
    return EvalItemResult(
        item_id=item_id,
        status="error",
        error_code=result.status,
        error_message=result.error,
        input_text=case.input if isinstance(case.input, str) else None,
        metadata={"case_id": case.case_id, "repetition": case.repetition, "run_id": result.run_id},
    )


def _annotate(item: EvalItemResult, item_id: str, case: EvalCase, result: CaseResult) -> None:
    item.item_id = item_id
    item.metadata = {
        **(item.metadata or {}),
        "case_id": case.case_id,
        "repetition": case.repetition,
        "run_id": result.run_id,
        "trace_id": result.trace_id,
    }
    if item.token_usage is None and (result.input_tokens is not None or result.output_tokens is not None):
        prompt, completion = int(result.input_tokens or 0), int(result.output_tokens or 0)
        item.token_usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }


async def _judge(evaluator: Any, items: list[EvalItem], name: str) -> EvalResults:
    """One evaluator over items; a LocalEvaluator runs its items concurrently (its checks may await judges)."""
    if isinstance(evaluator, LocalEvaluator):
        judged = await asyncio.gather(*(evaluator.evaluate_item(item, str(i)) for i, item in enumerate(items)))
        return local_results(evaluator.name, name, list(judged))
    results = await evaluator.evaluate(items, eval_name=name)
    if len(results.items) not in (0, len(items)):
        raise ValueError(
            f"Evaluator {evaluator.name!r} returned {len(results.items)} item results for {len(items)} items; "
            "it must return one per item, in order (or none)."
        )
    return results


def _provider_names(evaluators: list[Any]) -> list[str]:
    names: list[str] = []
    for evaluator in evaluators:
        base = str(getattr(evaluator, "name", None) or type(evaluator).__name__)
        name, n = base, 2
        while name in names:
            name, n = f"{base}#{n}", n + 1
        names.append(name)
    return names


def _with_errors(results: EvalResults, errors: list[EvalItemResult], order: dict[str, int]) -> None:
    if not errors:
        return
    results.items = sorted([*results.items, *errors], key=lambda i: order.get(i.item_id, math.inf))
    counts = dict(results.result_counts or {"passed": 0, "failed": 0})
    counts["errored"] = counts.get("errored", 0) + len(errors)
    results.result_counts = counts


async def _judge_experiment(
    experiment: Experiment,
    evaluators: list[Any],
    *,
    eval_name: str,
    repetitions: int,
    split: ConversationSplitter | None,
    tools: Any,
    workflow: Any = None,
    include_overall: bool = True,
    include_per_agent: bool = False,
    store: Any,
) -> list[EvalResults]:
    """Build items from the experiment's stored cases, run every evaluator, and store the verdicts with the cases."""
    # Items in Agent Framework's order: every query once, then every query again for each repetition (so
    # a list of expected outputs lines up the same way); the verdicts go back to the rows by their index.
    by_round = sorted(range(len(experiment.rows)), key=lambda i: (experiment.rows[i]["repetition"], i))
    rows = [experiment.rows[i] for i in by_round]
    cases = [_case_of(row) for row in rows]
    ids = [_item_id(case, repetitions) for case, _ in cases]
    order = {item_id: i for i, item_id in enumerate(ids)}
    ok = [i for i, (_, result) in enumerate(cases) if result.ok]
    errors = [_errored(case, result, ids[i]) for i, (case, result) in enumerate(cases) if not result.ok]
    overall = [item_from_case(cases[i][0], cases[i][1], tools=tools, split=split) for i in ok]
    # Each workflow agent's turns, grouped by executor; each remembers its case, to store the verdict there.
    per_agent: dict[str, list[tuple[int, EvalItem]]] = {}
    if include_per_agent:
        for i in ok:
            for turn in cases[i][1].agents:
                executor_id = str(turn["executor_id"])
                executors: dict[str, Any] = getattr(workflow, "executors", None) or {}
                executor = executors.get(executor_id)
                agent = getattr(executor, "agent", None)
                conversation = CaseResult(case_id="", messages=list(turn["messages"])).conversation
                item = EvalItem(
                    conversation, tools=agent_tools(agent) if agent is not None else None, split_strategy=split
                )
                per_agent.setdefault(executor_id, []).append((i, item))
    if not overall and not per_agent and not errors:
        raise ValueError("Nothing to evaluate: no case produced a conversation.")
    if workflow is not None and include_per_agent and not per_agent and not include_overall:
        raise ValueError(
            "No agent executor data found in the workflow result. Ensure the workflow uses AgentExecutor-based agents."
        )
    providers = _provider_names(evaluators)
    several = len(evaluators) > 1
    out: list[EvalResults] = []
    verdicts: dict[int, dict[str, Any]] = {i: {} for i in range(len(rows))}
    for evaluator, provider in zip(evaluators, providers, strict=True):
        suffix = f" ({provider})" if several else ""
        subs: dict[str, EvalResults] = {}
        for executor_id, entries in per_agent.items():
            sub = await _judge(evaluator, [item for _, item in entries], f"{eval_name} — {executor_id}{suffix}")
            seen: dict[int, int] = {}
            for (i, _), item in zip(entries, sub.items, strict=False):
                case, result = cases[i]
                k = seen[i] = seen.get(i, 0) + 1
                _annotate(item, ids[i] if k == 1 else f"{ids[i]}#{k}", case, result)
                verdicts[i].setdefault(provider, {"item": None, "agents": {}})["agents"].setdefault(
                    executor_id, []
                ).append(item.to_dict())
            subs[executor_id] = sub
        if include_overall and (overall or errors):
            results = (
                await _judge(evaluator, overall, f"{eval_name}{' — overall' if workflow is not None else ''}{suffix}")
                if overall
                else local_results(provider, eval_name, [])
            )
            for i, item in zip(ok, results.items, strict=False):
                _annotate(item, ids[i], *cases[i])
            _with_errors(results, errors, order)
        else:
            passed = sum(s.passed for s in subs.values())
            failed = sum(s.failed for s in subs.values())
            done = all(s.status == "completed" for s in subs.values())
            results = EvalResults(
                provider=provider,
                eval_id="aggregate",
                run_id="aggregate",
                status="completed" if done else "partial",
                result_counts={"passed": passed, "failed": failed},
            )
        results.provider = provider
        results.sub_results = subs
        results.experiment = experiment.name
        for item in results.items:
            i = order.get(item.item_id)
            if i is not None:
                verdicts[i].setdefault(provider, {"item": None, "agents": {}})["item"] = item.to_dict()
        out.append(results)
    _store_verdicts(experiment, out, {by_round[i]: verdict for i, verdict in verdicts.items()}, store)
    return out


def _store_verdicts(
    experiment: Experiment, results: list[EvalResults], verdicts: dict[int, dict[str, Any]], store: Any
) -> None:
    """Write each evaluator's verdicts into the experiment: per case (scores and items) and per run (metadata)."""
    from ._run import resolve_store

    run_store = resolve_store(store)
    info = run_store.get_experiment(experiment.name)
    metadata: dict[str, Any] = dict(info["metadata"]) if info else {}
    scorers = [s for s in metadata.get("scorers", []) if s["name"] not in {r.provider for r in results}]
    columns: dict[str, list[str]] = {r.provider: [] for r in results}
    changed: list[dict[str, Any]] = []
    for i, row in enumerate(experiment.rows):
        evals: dict[str, Any] = dict(row["data"].get("evals") or {})
        scores = {k: v for k, v in row["scores"].items() if k.split(".", 1)[0] not in columns}
        for provider, verdict in verdicts[i].items():
            evals[provider] = verdict
            if verdict["item"] is not None:
                item = EvalItemResult.from_dict(verdict["item"])
                for column, value in score_columns(provider, item).items():
                    scores[column] = None if math.isnan(value) else value
                    if column not in columns[provider]:
                        columns[provider].append(column)
        row["scores"] = scores
        row["data"] = {**row["data"], "evals": evals}
        changed.append(row)
    for row in changed:
        if row["status"] != "ok":  # as with agentnb's scorers: a case that did not run scores 0 everywhere
            for provider_columns in columns.values():
                row["scores"].update(dict.fromkeys(provider_columns, 0.0))
    metadata["scorers"] = [*scorers, *({"name": p, "threshold": 0.5, "columns": c} for p, c in columns.items())]
    metadata["evals"] = {**(metadata.get("evals") or {}), **{r.provider: eval_run_metadata(r) for r in results}}
    means: dict[str, float] = dict(metadata.get("means") or {})
    for provider_columns in columns.values():
        for column in provider_columns:
            values = [r["scores"][column] for r in changed if r["scores"].get(column) is not None]
            if values:
                means[column] = sum(values) / len(values)
    metadata["means"] = means
    run_store.put_experiment(experiment.name, status=experiment.status, metadata=metadata)
    if changed:
        run_store.add_experiment_cases(experiment.name, changed)
    experiment.info["metadata"] = metadata
    experiment.replace_rows(changed)


def _engine_options(
    concurrency: int,
    backend: Any,
    store: Any,
    resume: bool,
    progress: bool,
    timeout: float | None,
    retries: int,
    on_approval: OnApproval,
) -> dict[str, Any]:
    return {
        "concurrency": concurrency,
        "backend": backend,
        "store": store,
        "resume": resume,
        "progress": progress,
        "timeout": timeout,
        "retries": retries,
        "on_approval": on_approval,
    }


async def evaluate_agent(
    *,
    agent: Any = None,
    queries: str | Sequence[str] | None = None,
    expected_output: str | Sequence[str] | None = None,
    expected_tool_calls: Sequence[ExpectedToolCall] | Sequence[Sequence[ExpectedToolCall]] | None = None,
    responses: Any = None,
    evaluators: Any,
    eval_name: str | None = None,
    context: str | None = None,
    conversation_split: ConversationSplitter | None = None,
    num_repetitions: int = 1,
    concurrency: int = 16,
    backend: Any = "local",
    store: Any = None,
    resume: bool = False,
    progress: bool = False,
    timeout: float | None = None,
    retries: int = 0,
    on_approval: OnApproval = "deny",
) -> list[EvalResults]:
    """Run an agent on queries (or take its earlier responses) and evaluate the answers; one result per evaluator.

    Agent Framework's call, run by :func:`~agentnb.evals.evaluate`: the queries are cases, ``concurrency`` at
    a time, each an ordinary run recorded in the run store; the evaluation is stored as experiment
    ``eval_name``, so ``load_experiment(eval_name)``, ``compare`` and the DevUI see it. A query whose run
    fails is an ``"error"`` item (the others are still evaluated).

    Args:
        agent: The agent (also where the items' tools are read from).
        queries: A query or queries.
        expected_output: The expected answer per query.
        expected_tool_calls: The expected tool calls per query (a flat list for a single query).
        responses: ``AgentResponse`` (s) to evaluate instead of running the agent; ``queries`` say what
            each answered.
        evaluators: Evaluators and checks; bare checks are gathered into a :class:`LocalEvaluator`.
            agentnb scorers (``scorers.tool_path(...)``, ...) may be among them: they score each case in
            the engine, reading its trace (its spans when it ran traced), and come back last, as one result
            from provider ``"agentnb"``.
        eval_name: The evaluation's name, and its experiment's (default ``"Eval: <agent name>"``).
        context: A grounding document for every item.
        conversation_split: How every item splits into query and response.
        num_repetitions: Run each query this many times (ignored with ``responses``).
        concurrency: How many queries run at once.
        backend: ``"local"``, ``"ray"`` or a backend object (see :func:`~agentnb.evals.run_batch`).
        store: The run store (``None``: the default store).
        resume: Re-use answers stored under ``eval_name`` instead of running those queries again.
        progress: Show a progress bar.
        timeout: Seconds one run may take.
        retries: Extra attempts for a run that failed.
        on_approval: What to do when the agent asks to run an approval-required tool.

    Raises:
        ValueError: Neither queries with an agent nor responses with queries were given, or lengths differ.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.evals import evaluate_agent, keyword_check
        from agentnb.local import FunctionChatClient

        agent = Agent(FunctionChatClient(lambda m, o: "Sunny weather."), name="weather")
        results = await evaluate_agent(agent=agent, queries=["Weather?"], evaluators=keyword_check("weather"))
        results[0].raise_for_status()
        ```
    """
    from ._run import evaluate

    query_list = _listed(queries, str)
    expected_list = _listed(expected_output, str)
    response_list: list[Any] | None = None
    if responses is not None:
        response_list = [responses] if hasattr(responses, "messages") else list(responses)
    calls: list[list[ExpectedToolCall]] | None = None
    if expected_tool_calls is not None:
        given = list(cast("Sequence[Any]", expected_tool_calls))
        calls = [given] if given and isinstance(given[0], ExpectedToolCall) else [list(c) for c in given]
    if num_repetitions < 1:
        raise ValueError(f"num_repetitions must be >= 1, got {num_repetitions}.")
    if expected_list is not None and query_list is not None and len(expected_list) != len(query_list):
        raise ValueError(f"Got {len(query_list)} queries but {len(expected_list)} expected_output values.")
    if calls is not None and query_list is not None and len(calls) != len(query_list):
        raise ValueError(f"Got {len(query_list)} queries but {len(calls)} expected_tool_calls lists.")
    if response_list is not None:
        if query_list is None:
            raise ValueError(
                "Provide 'queries' alongside 'responses' so the conversation can be constructed for evaluation."
            )
        if len(query_list) != len(response_list):
            raise ValueError(f"Got {len(query_list)} queries but {len(response_list)} responses.")
        num_repetitions = 1
    elif query_list is not None and agent is None:
        raise ValueError(
            "Provide 'agent' when using 'queries' to run the agent. "
            "To evaluate pre-existing responses without an agent, use 'responses=' instead."
        )
    elif query_list is None:
        raise ValueError("Provide either 'queries' (with 'agent') or 'responses' (or both).")
    assert query_list is not None
    evaluator_list, native = _split_evaluators(evaluators)
    label = getattr(agent, "name", None) or getattr(agent, "id", None) or "agent"
    name = eval_name or f"Eval: {label}"
    dataset = [
        {
            "case_id": str(i),
            "input": query,
            "expected": None if expected_list is None else expected_list[i],
            "expected_tool_calls": None
            if calls is None
            else [{"name": c.name, "arguments": c.arguments} for c in calls[i]],
            "context": context,
        }
        for i, query in enumerate(query_list)
    ]
    target: Any = agent
    if response_list is not None:
        outcomes = [agent_outcome([r], q) for q, r in zip(query_list, response_list, strict=True)]
        target = _GivenOutcomes("agent", str(label), outcomes)
    options = _engine_options(concurrency, backend, store, resume, progress, timeout, retries, on_approval)
    if response_list is not None:
        options["backend"] = "local"  # the responses live in this process
    experiment = await evaluate(target, dataset, native, name=name, repetitions=num_repetitions, **options)
    judged: list[EvalResults] = []
    if evaluator_list:
        judged = await _judge_experiment(
            experiment,
            evaluator_list,
            eval_name=name,
            repetitions=num_repetitions,
            split=conversation_split,
            tools=agent_tools(agent) or None if agent is not None else None,
            store=store,
        )
    return _with_scorers(judged, experiment, native)


def _overall_query(result: Any) -> str | None:
    """The text a workflow run started from: its first executor's input."""
    for event in result:
        if event.type != "executor_invoked" or event.data is None:
            continue
        data = event.data
        if isinstance(data, str):
            return data
        if isinstance(data, list) and data:
            items = cast("list[Any]", data)
            if hasattr(items[0], "role"):
                return " ".join(str(m.text) for m in items if getattr(m, "role", None) == "user")
            if isinstance(items[0], str):
                return " ".join(str(s) for s in items)
        return str(cast("object", data))
    return None


async def evaluate_workflow(
    *,
    workflow: Any,
    workflow_result: Any = None,
    queries: str | Sequence[str] | None = None,
    expected_output: str | Sequence[str] | None = None,
    evaluators: Any,
    eval_name: str | None = None,
    include_overall: bool = True,
    include_per_agent: bool = True,
    conversation_split: ConversationSplitter | None = None,
    num_repetitions: int = 1,
    concurrency: int = 16,
    backend: Any = "local",
    store: Any = None,
    resume: bool = False,
    progress: bool = False,
    timeout: float | None = None,
    retries: int = 0,
) -> list[EvalResults]:
    """Evaluate a workflow's final output and each agent in it; one result per evaluator, agents in ``sub_results``.

    Either runs the workflow on ``queries`` (through :func:`~agentnb.evals.evaluate`, so runs are stored and
    concurrent cases get their own workflow instances when the workflow is an import-string factory) or
    judges an earlier ``workflow_result``. Each agent's turn is read from the run's events, which graph and
    functional workflows share.

    Args:
        workflow: The workflow (or an import string ``"pkg.module:factory"`` building one).
        workflow_result: A finished run to evaluate instead of running ``queries``.
        queries: Queries to run the workflow on.
        expected_output: The expected final answer per query.
        evaluators: Evaluators and checks; bare checks are gathered into a :class:`LocalEvaluator`.
            agentnb scorers (``scorers.tool_path(...)``, ...) may be among them: they score each case in
            the engine, reading its trace (its spans when it ran traced), and come back last, as one result
            from provider ``"agentnb"``.
        eval_name: The evaluation's name, and its experiment's.
        include_overall: Judge the workflow's final output.
        include_per_agent: Judge each agent's own turn.
        conversation_split: How every item splits into query and response.
        num_repetitions: Run each query this many times.
        concurrency: How many queries run at once.
        backend: ``"local"``, ``"ray"`` or a backend object.
        store: The run store (``None``: the default store).
        resume: Re-use runs stored under ``eval_name``.
        progress: Show a progress bar.
        timeout: Seconds one run may take.
        retries: Extra attempts for a run that failed.

    Raises:
        ValueError: Neither ``queries`` nor ``workflow_result``, lengths differ, or no agent turn was found.
    """
    from ._run import evaluate
    from ._targets import import_target

    query_list = _listed(queries, str)
    expected_list = _listed(expected_output, str)
    if workflow_result is None and query_list is None:
        raise ValueError("Provide either 'workflow_result' or 'queries'.")
    if expected_list is not None and query_list is None:
        raise ValueError(
            "Provide 'queries' when using 'expected_output'; 'expected_output' is not supported with "
            "'workflow_result' only."
        )
    if expected_list is not None and query_list is not None and len(expected_list) != len(query_list):
        raise ValueError(f"Got {len(query_list)} queries but {len(expected_list)} expected_output values.")
    if num_repetitions < 1:
        raise ValueError(f"num_repetitions must be >= 1, got {num_repetitions}.")
    evaluator_list, native = _split_evaluators(evaluators)
    instance = import_target(workflow) if isinstance(workflow, str) else workflow
    if isinstance(workflow, str) and callable(instance) and not hasattr(instance, "run"):
        instance = instance()
    label = getattr(instance, "name", None) or type(instance).__name__
    name = eval_name or f"Workflow Eval: {label}"
    options = _engine_options(concurrency, backend, store, resume, progress, timeout, retries, "pending")
    if query_list is not None:
        dataset = [
            {"case_id": str(i), "input": q, "expected": None if expected_list is None else expected_list[i]}
            for i, q in enumerate(query_list)
        ]
        experiment = await evaluate(workflow, dataset, native, name=name, repetitions=num_repetitions, **options)
    else:
        query = _overall_query(workflow_result)
        outcome = workflow_outcome(workflow_result, query)
        target = _GivenOutcomes("workflow", str(label), [outcome])
        options["backend"] = "local"
        experiment = await evaluate(target, [{"case_id": "0", "input": query or ""}], native, name=name, **options)
        num_repetitions = 1
    if not evaluator_list:
        return _with_scorers([], experiment, native)
    results = await _judge_experiment(
        experiment,
        evaluator_list,
        eval_name=name,
        repetitions=num_repetitions,
        split=conversation_split,
        tools=None,
        workflow=instance,
        include_overall=include_overall,
        include_per_agent=include_per_agent,
        store=store,
    )
    if not include_overall and not any(r.sub_results for r in results):
        raise ValueError(
            "No agent executor data found in the workflow result. Ensure the workflow uses AgentExecutor-based agents."
        )
    return _with_scorers(results, experiment, native)
