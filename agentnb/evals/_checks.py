"""Checks and evaluators in Agent Framework's shape: ``LocalEvaluator``, ``@evaluator`` and the built-in checks.

A check is a function of one :class:`~agentnb.evals.EvalItem` returning a :class:`CheckResult` (sync or
async); :class:`LocalEvaluator` runs checks over items with no service call. Any object with a ``name`` and
an async ``evaluate(items, *, eval_name)`` is an :class:`Evaluator` (a cloud service, a judge).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, overload, runtime_checkable

from ._items import EvalItem
from ._results import EvalItemResult, EvalResults, EvalScoreResult

__all__ = [
    "CheckResult",
    "EvalCheck",
    "Evaluator",
    "LocalEvaluator",
    "evaluator",
    "keyword_check",
    "resolve_evaluators",
    "tool_call_args_match",
    "tool_called_check",
    "tool_calls_present",
]


@dataclass
class CheckResult:
    """One check's verdict on one item.

    Attributes:
        passed: Whether the item passed.
        reason: Why, in a sentence.
        check_name: The check.
    """

    passed: bool
    reason: str
    check_name: str


EvalCheck = Callable[[EvalItem], "CheckResult | Awaitable[CheckResult]"]
"""A check: a sync or async function of an :class:`EvalItem` returning a :class:`CheckResult`."""


@runtime_checkable
class Evaluator(Protocol):
    """Anything that scores a batch of items: a ``name`` and ``async evaluate(items, *, eval_name)``.

    Example:
        ```python
        class LengthEvaluator:
            name = "length"

            async def evaluate(self, items, *, eval_name="length"):
                return await LocalEvaluator(evaluator(lambda response: len(response) < 500, name="short")).evaluate(
                    items, eval_name=eval_name
                )
        ```
    """

    name: str

    async def evaluate(self, items: Sequence[EvalItem], *, eval_name: str) -> EvalResults:
        """Score ``items`` and return the results."""
        ...


def _named(check: Callable[[EvalItem], Any], name: str) -> EvalCheck:
    check.__name__ = name
    check.__qualname__ = name
    return check


def keyword_check(*keywords: str, case_sensitive: bool = False) -> EvalCheck:
    """A check that the response contains every keyword (case ignored unless ``case_sensitive``).

    Example:
        ```python
        keyword_check("weather", "temperature")
        ```
    """

    def keyword_check(item: EvalItem) -> CheckResult:
        text = item.response if case_sensitive else item.response.lower()
        missing = [k for k in keywords if (k if case_sensitive else k.lower()) not in text]
        if missing:
            return CheckResult(False, f"Missing keywords: {missing}", "keyword_check")
        return CheckResult(True, "All keywords found", "keyword_check")

    return _named(keyword_check, "keyword_check")


def tool_calls_of(item: EvalItem) -> list[tuple[str, dict[str, Any] | None]]:
    """Every tool call in the item's conversation: its name and its arguments as a dict (``None`` when not one)."""
    calls: list[tuple[str, dict[str, Any] | None]] = []
    for message in item.conversation:
        for content in message.contents:
            if content.type != "function_call" or not content.name:
                continue
            arguments: Any = content.arguments
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    arguments = None
            calls.append(
                (content.name, dict(cast("Mapping[str, Any]", arguments)) if isinstance(arguments, Mapping) else None)
            )
    return calls


def tool_called_check(*tool_names: str, mode: Literal["all", "any"] = "all") -> EvalCheck:
    """A check that the conversation called the tools: every one (``mode="all"``) or at least one (``"any"``).

    Example:
        ```python
        tool_called_check("get_weather", "get_flight_price")
        ```
    """
    if mode not in ("all", "any"):
        raise ValueError(f"tool_called_check mode must be 'all' or 'any', got {mode!r}")

    def tool_called(item: EvalItem) -> CheckResult:
        called = {name for name, _ in tool_calls_of(item)}
        if mode == "any":
            hit = sorted(set(tool_names) & called)
            if hit:
                return CheckResult(True, f"Expected tool found: {hit}", "tool_called")
            return CheckResult(
                False, f"None of expected tools called: {list(tool_names)} (called: {sorted(called)})", "tool_called"
            )
        missing = [t for t in tool_names if t not in called]
        if missing:
            return CheckResult(False, f"Expected tools not called: {missing} (called: {sorted(called)})", "tool_called")
        return CheckResult(True, f"All expected tools called: {sorted(called)}", "tool_called")

    return _named(tool_called, "tool_called")


def tool_calls_present(item: EvalItem) -> CheckResult:
    """A check that every tool in ``item.expected_tool_calls`` was called (any order, extra calls allowed).

    Arguments are not compared (see :func:`tool_call_args_match`); with no expected calls the item passes.
    """
    expected = item.expected_tool_calls or []
    if not expected:
        return CheckResult(True, "No expected tool calls specified.", "tool_calls_present")
    called = {name for name, _ in tool_calls_of(item)}
    names = [e.name for e in expected]
    missing = [n for n in names if n not in called]
    if missing:
        return CheckResult(False, f"Missing tool calls: {missing} (called: {sorted(called)})", "tool_calls_present")
    return CheckResult(True, f"All expected tools called: {names} (called: {sorted(called)})", "tool_calls_present")


def tool_call_args_match(item: EvalItem) -> CheckResult:
    """A check that each expected tool call was made with at least its expected arguments.

    Some call of the tool must carry every expected key with the expected value (other arguments may
    differ); an ``ExpectedToolCall`` without arguments only needs the call.
    """
    expected = item.expected_tool_calls or []
    if not expected:
        return CheckResult(True, "No expected tool calls specified.", "tool_call_args_match")
    actual = tool_calls_of(item)
    lines: list[str] = []
    matched = 0
    for want in expected:
        same_name = [arguments for name, arguments in actual if name == want.name]
        if not same_name:
            lines.append(f"  {want.name}: not called")
        elif want.arguments is None:
            matched += 1
            lines.append(f"  {want.name}: called (args not checked)")
        elif any(
            args is not None and all(k in args and args[k] == v for k, v in want.arguments.items())
            for args in same_name
        ):
            matched += 1
            lines.append(f"  {want.name}: args match")
        else:
            lines.append(f"  {want.name}: args mismatch (actual: {same_name})")
    reason = f"Tool call args match: {matched}/{len(expected)}\n" + "\n".join(lines)
    return CheckResult(matched == len(expected), reason, "tool_call_args_match")


# --------------------------------------------------------------------------- @evaluator

#: The parameters an ``@evaluator`` function may declare, and what each receives from the item.
_FIELDS: dict[str, Callable[[EvalItem], Any]] = {
    "query": lambda item: item.query,
    "response": lambda item: item.response,
    "expected_output": lambda item: item.expected_output or "",
    "expected_tool_calls": lambda item: item.expected_tool_calls or [],
    "conversation": lambda item: item.conversation,
    "tools": lambda item: item.tools,
    "context": lambda item: item.context,
}


def _as_check_result(value: Any, name: str) -> CheckResult:
    """What an ``@evaluator`` function returned, as a verdict: a bool, a number (0.5 passes), a dict or a result."""
    if isinstance(value, CheckResult):
        return value
    if isinstance(value, bool):
        return CheckResult(value, "passed" if value else "failed", name)
    if isinstance(value, (int, float)):
        return CheckResult(value >= 0.5, f"score={value:.3f}", name)
    if isinstance(value, Mapping):
        verdict = cast("Mapping[str, Any]", value)
        if "score" in verdict:
            try:
                score = float(verdict["score"])
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"Function evaluator '{name}' returned dict with non-numeric 'score' value: {verdict['score']!r}"
                ) from e
            passed = bool(verdict["passed"]) if "passed" in verdict else score >= float(verdict.get("threshold", 0.5))
            return CheckResult(passed, str(verdict.get("reason", f"score={score:.3f}")), name)
        if "passed" in verdict:
            passed_value = verdict["passed"]
            if not isinstance(passed_value, (bool, int)):
                raise TypeError(
                    f"Function evaluator '{name}' returned dict with non-boolean 'passed' value: {passed_value!r}"
                )
            return CheckResult(
                bool(passed_value), str(verdict.get("reason", "passed" if passed_value else "failed")), name
            )
    raise TypeError(
        f"Function evaluator '{name}' returned unsupported type {type(cast('object', value)).__name__}. "
        "Expected bool, float, dict, or CheckResult."
    )


@overload
def evaluator(fn: Callable[..., Any], /) -> EvalCheck: ...
@overload
def evaluator(*, name: str | None = None) -> Callable[[Callable[..., Any]], EvalCheck]: ...
def evaluator(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None
) -> EvalCheck | Callable[[Callable[..., Any]], EvalCheck]:
    """Make a plain function a check: its parameter names say what it gets from the item.

    Parameters may be any of ``query``, ``response``, ``expected_output``, ``expected_tool_calls``,
    ``conversation``, ``tools`` and ``context``. It may be async, and returns a bool, a number (0.5 or more
    passes), a dict with ``score`` or ``passed`` (and ``reason``), or a
    :class:`CheckResult`.

    Raises:
        TypeError: The function has a required parameter that is none of those.

    Example:
        ```python
        from agentnb.evals import evaluator

        @evaluator
        def short(response: str) -> bool:
            return len(response) < 200
        ```
    """

    def wrap(func: Callable[..., Any]) -> EvalCheck:
        check_name = name or getattr(func, "__name__", None) or "evaluator"
        parameters = inspect.signature(func).parameters
        unknown = sorted(n for n, p in parameters.items() if n not in _FIELDS and p.default is p.empty)
        if unknown:
            raise TypeError(
                f"Function evaluator '{getattr(func, '__name__', check_name)}' has unknown required parameter(s) "
                f"{unknown}.  Supported: {sorted(_FIELDS)}"
            )
        wanted = [n for n in parameters if n in _FIELDS]

        async def check(item: EvalItem) -> CheckResult:
            value = func(**{n: _FIELDS[n](item) for n in wanted})
            if inspect.isawaitable(value):
                value = await value
            return _as_check_result(value, check_name)

        check.__doc__ = func.__doc__
        return _named(check, check_name)

    return wrap(fn) if fn is not None else wrap


# --------------------------------------------------------------------------- LocalEvaluator


async def _run_check(check: EvalCheck, item: EvalItem) -> CheckResult:
    verdict: Any = check(item)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    if not isinstance(verdict, CheckResult):
        raise TypeError(
            f"Check {getattr(check, '__name__', check)!r} returned {type(verdict).__name__}, not a CheckResult; "
            "wrap plain functions with @evaluator."
        )
    return verdict


class LocalEvaluator:
    """Run checks on every item here, with no service call; an item passes when every check passes.

    An item with no checks fails (a pass would carry no evidence). Counts per check are in the results'
    ``per_evaluator``, and each check's reason in its score's ``sample``.

    Args:
        checks: Checks (``keyword_check(...)``, ``@evaluator`` functions, ``tool_calls_present``, ...).

    Example:
        ```python
        from agentnb.evals import LocalEvaluator, keyword_check, tool_called_check

        local = LocalEvaluator(keyword_check("weather"), tool_called_check("get_weather"))
        results = await local.evaluate(items)
        ```
    """

    def __init__(self, *checks: EvalCheck) -> None:
        for check in checks:
            if not callable(check):
                raise TypeError(f"LocalEvaluator takes checks (functions of an EvalItem), got {type(check).__name__}.")
        self.name = "Local"
        self._checks = checks

    def __repr__(self) -> str:
        names = [getattr(c, "__name__", type(c).__name__) for c in self._checks]
        return f"LocalEvaluator({', '.join(names)})"

    @property
    def checks(self) -> tuple[EvalCheck, ...]:
        """The checks, in order."""
        return self._checks

    async def evaluate_item(self, item: EvalItem, item_id: str) -> EvalItemResult:
        """Run every check on one item."""
        verdicts = await asyncio.gather(*(_run_check(check, item) for check in self._checks))
        scores = [
            EvalScoreResult(
                name=v.check_name,
                score=1.0 if v.passed else 0.0,
                passed=v.passed,
                sample={"reason": v.reason} if v.reason else None,
            )
            for v in verdicts
        ]
        passed = bool(verdicts) and all(v.passed for v in verdicts)
        return EvalItemResult(
            item_id=item_id,
            status="pass" if passed else "fail",
            scores=scores,
            input_text=item.query,
            output_text=item.response,
        )

    async def evaluate(self, items: Sequence[EvalItem], *, eval_name: str = "Local Eval") -> EvalResults:
        """Run every check on every item and count the results."""
        results = [await self.evaluate_item(item, str(i)) for i, item in enumerate(items)]
        return local_results(self.name, eval_name, results)


def local_results(provider: str, eval_name: str, items: list[EvalItemResult]) -> EvalResults:
    """Count checked items into results, with per-check counts and the failing checks' reasons."""
    per: dict[str, dict[str, int]] = {}
    reasons: list[str] = []
    for item in items:
        for score in item.scores:
            counts = per.setdefault(score.name, {"passed": 0, "failed": 0, "errored": 0})
            counts["passed" if score.passed else "failed"] += 1
            if not score.passed:
                reasons.append(f"{score.name}: {(score.sample or {}).get('reason', '')}")
    passed = sum(i.is_passed for i in items)
    errored = sum(i.is_error for i in items)
    return EvalResults(
        provider=provider,
        eval_id="local",
        run_id=eval_name,
        status="completed",
        result_counts={"passed": passed, "failed": len(items) - passed - errored, "errored": errored},
        per_evaluator=per,
        items=items,
        error="; ".join(reasons) if reasons else None,
    )


def resolve_evaluators(evaluators: Any) -> list[Any]:
    """Evaluators as a list: consecutive bare checks are gathered into one :class:`LocalEvaluator`.

    Raises:
        TypeError: Something is neither an evaluator nor a callable check.
    """
    given: list[Any] = [evaluators] if isinstance(evaluators, Evaluator) or callable(evaluators) else list(evaluators)
    out: list[Any] = []
    loose: list[EvalCheck] = []
    for entry in given:
        if isinstance(entry, Evaluator):
            if loose:
                out.append(LocalEvaluator(*loose))
                loose = []
            out.append(entry)
        elif callable(entry):
            loose.append(cast("EvalCheck", entry))
        else:
            raise TypeError(f"Expected an Evaluator or callable, got {type(entry).__name__}")
    if loose:
        out.append(LocalEvaluator(*loose))
    return out
