"""What a batch runs: agents, workflows, async functions and import strings, and one case run end to end.

A case goes through the target's ordinary run path (``agent.run``, ``workflow.run``), so middleware,
telemetry, the run store and anything else that watches runs sees it like any other run. Around that path
this module adds what a batch needs per case: a timeout, retries, backoff on rate limits honouring the
server's retry-after, the approval policy (the core's :class:`~agentnb.ApprovalPolicy`, run by the core's
approval driver as every front end does), token counts, the tools called, and the run record.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import json
import os
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from .. import _telemetry as tel
from .._approval_driver import ApprovalDriver
from .._approval_policy import ApprovalPolicy
from .._provenance import run_metadata
from ..exceptions import RateLimitError, ServiceTimeoutError
from ._cases import CaseResult, EvalCase, plain
from ._turns import output_messages, query_messages, workflow_agent_turns

__all__ = [
    "ApprovalPolicy",
    "OnApproval",
    "RunOptions",
    "Target",
    "describe_target",
    "import_target",
    "resolve_target",
    "run_case",
]

OnApproval = Literal["deny", "approve", "pending"] | Callable[[Any], "bool | None"] | ApprovalPolicy
"""What to do when a case's agent asks to run an approval-required tool (read as an :class:`ApprovalPolicy`).

``"deny"`` answers every request with a denial and lets the agent go on; ``"approve"`` approves every one;
``"pending"`` stops the case with status ``"approval_pending"``; a callable gets the request content and
returns ``True`` (approve), ``False`` (deny) or ``None`` (leave it pending); a policy gives rules bounded
by the tool's source (``ApprovalPolicy(rules=[ToolApprovalRule("search", server_label="docs")], fallback="deny")``).
"""

#: Attribute of a case's span holding its run id (the span store files it in the ``run_id`` column).
_RUN_ID_ATTRIBUTE = tel.WORKFLOW_RUN_ID
_CASE_SPAN = "eval.case"
# Run ids: a random prefix per process and a counter, as unique as uuid4 across processes and machines but
# without reading the OS's random source per case (which costs tens of µs on some virtual machines).
_ID_PREFIX = os.urandom(8).hex()
_ID_COUNTER = itertools.count()


def new_run_id() -> str:
    """A 32-hex-digit run id, unique across processes."""
    return f"{_ID_PREFIX}{next(_ID_COUNTER):016x}"


_MAX_APPROVAL_ROUNDS = 8


@dataclass(frozen=True)
class RunOptions:
    """Per-case settings shared by every case of a batch (plain data, so it crosses to Ray workers)."""

    timeout: float | None = None
    retries: int = 0
    on_approval: Any = "deny"
    rate_limit_retries: int = 6
    max_backoff: float = 60.0
    experiment: str | None = None

    def __post_init__(self) -> None:
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds (or None), got {self.timeout}")
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        if self.rate_limit_retries < 0:
            raise ValueError(f"rate_limit_retries must be >= 0, got {self.rate_limit_retries}")
        policy = self.on_approval
        if (
            not isinstance(policy, ApprovalPolicy)
            and not callable(policy)
            and policy not in ("deny", "approve", "pending")
        ):
            raise ValueError(
                f"on_approval must be 'deny', 'approve', 'pending', a callable or an ApprovalPolicy, got {policy!r}"
            )


# --------------------------------------------------------------------------- targets


class Target:
    """A resolved target: knows how to run one case and what kind of run that is."""

    kind = "function"

    def __init__(self, name: str, description: str) -> None:
        self.name = name
        self.description = description

    async def call(self, case: EvalCase, options: RunOptions, store: Any) -> Outcome:
        raise NotImplementedError


@dataclass
class Outcome:
    output: Any
    status: Literal["ok", "approval_pending"] = "ok"
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tool_calls: list[dict[str, Any]] | None = None
    run_id: str | None = None  # a run the target recorded itself (workflows)
    response: Any = None
    messages: list[Any] | None = None
    agents: list[dict[str, Any]] | None = None


class _AgentTarget(Target):
    kind = "agent"

    def __init__(self, agent: Any, description: str) -> None:
        super().__init__(str(getattr(agent, "name", None) or type(agent).__name__), description)
        self.agent = agent
        self._policies: tuple[object, ApprovalPolicy] | None = None

    def _policy(self, options: RunOptions) -> ApprovalPolicy:
        # Read once per batch (every case of a batch shares its options), not once per case.
        cached = self._policies
        if cached is None or cached[0] is not options.on_approval:
            cached = self._policies = (options.on_approval, ApprovalPolicy.coerce(options.on_approval))
        return cached[1]

    async def call(self, case: EvalCase, options: RunOptions, store: Any) -> Outcome:
        # No session: the driver sends the conversation so far each turn, which is what a session would hold.
        driver = ApprovalDriver(self.agent, policy=self._policy(options), max_auto_rounds=_MAX_APPROVAL_ROUNDS)
        await driver.run_to_end(case.input)
        responses: list[Any] = list(driver.responses)
        if driver.gave_up:
            return agent_outcome(
                responses,
                case.input,
                status="approval_pending",
                error="The agent kept asking for approvals; gave up.",
            )
        if driver.pending:
            return agent_outcome(responses, case.input, status="approval_pending", error=_pending_text(driver.pending))
        return agent_outcome(responses, case.input)


def _pending_text(requests: list[Any]) -> str:
    names = [getattr(getattr(r, "function_call", None), "name", None) or "?" for r in requests]
    return f"Waiting for approval of {', '.join(names)} (on_approval='pending')."


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except ValueError:
            return value
    return plain(value) if value is not None else {}


def agent_outcome(responses: list[Any], query: Any = None, *, status: Any = "ok", error: str | None = None) -> Outcome:
    calls: list[dict[str, Any]] = []
    input_tokens = output_tokens = None
    messages: list[Any] = query_messages(query)
    for response in responses:
        messages.extend(response.messages)
        for message in response.messages:
            for content in message.contents:
                if content.type == "function_call":
                    calls.append({"name": content.name, "arguments": _arguments(content.arguments)})
        usage = response.usage_details
        if usage:
            if usage.get("input_token_count") is not None:
                input_tokens = (input_tokens or 0) + int(usage["input_token_count"])
            if usage.get("output_token_count") is not None:
                output_tokens = (output_tokens or 0) + int(usage["output_token_count"])
    last = responses[-1]
    return Outcome(
        output=last.text,
        status=status,
        error=error,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        tool_calls=calls,
        response=last,
        messages=messages,
    )


class _WorkflowTarget(Target):
    """Workflows hold executor state and run one run at a time, so concurrent cases get their own instances."""

    kind = "workflow"

    def __init__(self, first: Any, factory: Callable[[], Any] | None, limit: int, description: str) -> None:
        super().__init__(str(first.name), description)
        self._factory = factory
        self._limit = limit if factory is not None else 1
        self._made = 1
        self._idle: asyncio.Queue[Any] | None = None
        self._first = first

    def _queue(self) -> asyncio.Queue[Any]:
        if self._idle is None:  # made on first use, inside the loop that runs the batch
            self._idle = asyncio.Queue()
            self._idle.put_nowait(self._first)
        return self._idle

    async def _acquire(self) -> Any:
        idle = self._queue()
        if idle.empty() and self._made < self._limit and self._factory is not None:
            self._made += 1
            return self._factory()
        return await idle.get()

    async def call(self, case: EvalCase, options: RunOptions, store: Any) -> Outcome:
        workflow = await self._acquire()
        try:
            result = await workflow.run(_workflow_input(workflow, case.input), run_store=store)
        finally:
            self._queue().put_nowait(workflow)
        return workflow_outcome(result, case.input)


def workflow_outcome(result: Any, query: Any = None) -> Outcome:
    """What a workflow run gave a case: its output(s), tokens and tool calls over all agents, each agent's turn."""
    outputs = result.get_outputs()
    output = outputs[0] if len(outputs) == 1 else outputs
    input_tokens = output_tokens = None
    calls: list[dict[str, Any]] = []
    for event in result:
        if event.type not in ("output", "intermediate"):
            continue
        data = event.data
        response = getattr(data, "agent_response", None) or (
            data if hasattr(data, "usage_details") and hasattr(data, "messages") else None
        )
        if response is None:
            continue
        partial = agent_outcome([response])  # tokens and tools only
        calls.extend(partial.tool_calls or [])
        if partial.input_tokens is not None:
            input_tokens = (input_tokens or 0) + partial.input_tokens
        if partial.output_tokens is not None:
            output_tokens = (output_tokens or 0) + partial.output_tokens
    pending = result.get_request_info_events()
    agents = workflow_agent_turns(result)
    overall = query_messages(query if isinstance(query, str) else None)
    overall.extend(output_messages(outputs[-1] if outputs else None))
    return Outcome(
        output=output,
        status="approval_pending" if pending else "ok",
        error=f"The workflow is waiting for {len(pending)} request(s)." if pending else None,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        tool_calls=calls,
        run_id=result.run_id,
        response=result,
        messages=overall,
        agents=agents,
    )


def _workflow_input(workflow: Any, value: Any) -> Any:
    """Turn a dataset's dict into the start executor's typed input (a pydantic model or dataclass)."""
    if not isinstance(value, Mapping):
        return value
    value = cast("Mapping[str, Any]", value)
    start = getattr(workflow, "get_start_executor", None)  # a functional workflow has input_types only
    if start is not None and start().can_handle(value):
        return value
    import dataclasses

    for kind in workflow.input_types:
        if hasattr(kind, "model_validate"):
            return kind.model_validate(value)
        if dataclasses.is_dataclass(kind) and isinstance(kind, type):
            return kind(**value)
    return value


class _FunctionTarget(Target):
    def __init__(self, func: Callable[[Any], Any], description: str) -> None:
        super().__init__(str(getattr(func, "__name__", None) or type(func).__name__), description)
        self.func = func

    async def call(self, case: EvalCase, options: RunOptions, store: Any) -> Outcome:
        result = self.func(case.input)
        if inspect.isawaitable(result):
            result = await result
        if hasattr(result, "messages") and hasattr(result, "usage_details") and hasattr(result, "text"):
            return agent_outcome([result], case.input)  # the function ran an agent: its reply, tokens and tools
        return Outcome(output=result, tool_calls=[], response=result)


def import_target(spec: str) -> Any:
    """Import ``"pkg.module:attribute"`` (dots after the colon walk attributes).

    Raises:
        ValueError: ``spec`` is not of that form.
        ImportError: The module or attribute does not exist.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"An import-string target looks like 'pkg.module:factory', got {spec!r}.")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise ImportError(f"Cannot import module {module_name!r} of target {spec!r}: {e}") from e
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise ImportError(f"Module {module_name!r} has no attribute {attribute!r} (target {spec!r}).") from e
    return obj


def _is_workflow(obj: Any) -> bool:
    module = sys.modules.get("agentnb.workflows")  # not loaded means nothing can be a Workflow yet
    return module is not None and isinstance(obj, (module.Workflow, module.FunctionalWorkflow))


def _is_workflow_definition(obj: Any) -> bool:
    module = sys.modules.get("agentnb.workflows._functional")
    return module is not None and isinstance(obj, module.FunctionalWorkflowDefinition)


def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "run", None)) and callable(getattr(obj, "create_session", None))


def _takes_input(func: Any) -> bool:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        for p in params
    )


def describe_target(target: Any) -> str:
    """A short text naming the target, stored with an experiment (``agent:helper``, ``pkg.mod:factory``)."""
    if isinstance(target, str):
        return target
    if _is_workflow(target) or _is_workflow_definition(target):
        return f"workflow:{target.name}"
    if _is_agent(target):
        return f"agent:{getattr(target, 'name', None) or type(target).__name__}"
    return f"function:{getattr(target, '__qualname__', None) or type(target).__name__}"


def resolve_target(target: Any, *, concurrency: int = 1) -> Target:
    """Turn what the user passed into a :class:`Target`.

    Args:
        target: An Agent (anything with ``run`` and ``create_session``), a Workflow, an async function
            ``input -> output``, or an import string naming one of those or a zero-argument factory of one.
        concurrency: How many workflow instances a factory may build for concurrent cases.

    Raises:
        TypeError: ``target`` is none of those.
    """
    description = describe_target(target)
    factory: Callable[[], Any] | None = None
    obj = target
    if isinstance(target, str):
        obj = import_target(target)
        if callable(obj) and not _is_agent(obj) and not _is_workflow(obj) and not _takes_input(obj):
            factory = obj
            obj = factory()
            if inspect.isawaitable(obj):
                raise TypeError(f"The factory {target!r} must return a target, not a coroutine; make it a plain def.")
    if _is_workflow_definition(obj):  # @workflow's definition: one built workflow per concurrent case
        factory = cast("Callable[[], Any]", getattr(obj, "build"))  # noqa: B009
        obj = factory()
    if _is_workflow(obj):
        return _WorkflowTarget(obj, factory, concurrency, description)
    if _is_agent(obj):
        return _AgentTarget(obj, description)
    if callable(obj) and not isinstance(obj, type):
        return _FunctionTarget(obj, description)
    raise TypeError(
        f"A target is an Agent, a Workflow, an async function input -> output, or an import string "
        f"'pkg.module:factory'; got {type(obj).__name__}."
    )


# --------------------------------------------------------------------------- one case


def _rate_limit(error: BaseException) -> RateLimitError | None:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, RateLimitError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _backoff(error: RateLimitError, attempt: int, cap: float) -> float:
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, (int, float)) and retry_after >= 0:
        return min(float(retry_after), cap)
    return min(cap, 0.5 * 2**attempt) * random.uniform(0.5, 1.0)


async def _wait(seconds: float) -> None:
    """Wait before trying a rate-limited case again (a seam for tests that check the waits, not their length)."""
    await asyncio.sleep(seconds)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


async def run_case(
    target: Target,
    case: EvalCase,
    options: RunOptions,
    *,
    store: Any = None,
) -> tuple[CaseResult, dict[str, Any] | None]:
    """Run one case to the end: never raises for the case's own failures (they become its status).

    Returns:
        The result, and the run record to store (``None`` when the target recorded its own run, as
        workflows do).
    """
    run_id = new_run_id()
    started_wall = time.time()
    started = time.perf_counter()
    span = None
    if tel.is_enabled():
        attributes: dict[str, Any] = {"eval.case_id": case.case_id, "eval.experiment": options.experiment}
        if target.kind != "workflow":
            attributes[_RUN_ID_ATTRIBUTE] = run_id
        span = tel.start_span(_CASE_SPAN, attributes)
    attempts = 0
    rate_limited = 0
    failures = 0
    outcome: Outcome | None = None
    status: Any = "ok"
    error: str | None = None
    failure: BaseException | None = None
    while True:
        attempts += 1
        try:
            with tel.use_span(span):
                if options.timeout is None:
                    outcome = await target.call(case, options, store)
                else:
                    outcome = await asyncio.wait_for(target.call(case, options, store), options.timeout)
            status, error = outcome.status, outcome.error
            break
        except (TimeoutError, ServiceTimeoutError) as e:
            if failures < options.retries:
                failures += 1
                continue
            failure = e
            status = "timeout"
            error = (
                f"Timed out after {options.timeout:g} s."
                if isinstance(e, TimeoutError) and options.timeout is not None
                else _error_text(e)
            )
            break
        except Exception as e:
            limited = _rate_limit(e)
            if limited is not None and rate_limited < options.rate_limit_retries:
                await _wait(_backoff(limited, rate_limited, options.max_backoff))
                rate_limited += 1
                continue
            if limited is None and failures < options.retries:
                failures += 1
                continue
            failure = e
            status, error = "error", _error_text(e)
            break
        except BaseException as e:  # cancelled or interrupted: close the span and let it through
            tel.end_span(span, error=e)
            raise
    latency_ms = (time.perf_counter() - started) * 1000.0
    trace_id = None
    if span is not None:
        raw = span.get_span_context().trace_id
        trace_id = format(raw, "032x") if raw else None  # 0: no SDK provider, so nothing is recorded
        tel.end_span(span, error=failure, attributes={"eval.status": status})
    result = CaseResult(
        case_id=case.case_id,
        output=None if outcome is None else plain(outcome.output),
        status=status,
        error=error,
        latency_ms=latency_ms,
        input_tokens=None if outcome is None else outcome.input_tokens,
        output_tokens=None if outcome is None else outcome.output_tokens,
        run_id=run_id,
        trace_id=trace_id,
        tool_calls=[] if outcome is None or outcome.tool_calls is None else outcome.tool_calls,
        attempts=attempts,
        response=None if outcome is None else outcome.response,
        messages=[] if outcome is None or outcome.messages is None else outcome.messages,
        agents=[] if outcome is None or outcome.agents is None else outcome.agents,
    )
    if target.kind == "workflow":
        result.run_id = None if outcome is None else outcome.run_id
        return result, None
    record = {
        "run_id": run_id,
        "kind": target.kind,
        "name": target.name,
        "status": _RUN_STATUS[status],
        "started_at": started_wall,
        "ended_at": started_wall + latency_ms / 1000.0,
        "error": error,
        "metadata": {
            **run_metadata(),
            "via": "evals",
            "experiment": options.experiment,
            "case_id": case.case_id,
            "trace_id": trace_id,
        },
        "events": [
            {"type": "input", "data": {"input": plain(case.input)}, "timestamp": started_wall},
            {"type": "output", "data": {"output": result.output, "status": status}},
        ],
    }
    return result, record


_RUN_STATUS = {"ok": "completed", "error": "failed", "timeout": "failed", "approval_pending": "paused"}
