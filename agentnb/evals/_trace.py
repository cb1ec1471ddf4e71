"""A case's trace as scorers read it: the model calls and tool calls, in order, with tokens and latency.

Built from the case's stored spans when they are at hand (each ``chat`` span is a model call with its
model, tokens and duration; each ``execute_tool`` span a tool call with its arguments and result), else from
the conversation the case kept (each assistant turn a model call, each tool call paired with its result by
call id; the case's token totals). Either way scorers see the same :class:`CaseTrace`, so "which tools, in
what order, with which arguments", "how many model calls" and "how many tokens" are one attribute away.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from ._cases import CaseResult

__all__ = ["CaseTrace", "Step", "has_steps"]


@dataclass(slots=True)
class Step:
    """One step of a case: a model call or a tool call.

    Attributes:
        kind: ``"model"`` or ``"tool"``.
        name: The model (when known) or the tool's name.
        arguments: A tool call's arguments.
        result: A tool call's result (text or data).
        input_tokens: A model call's input tokens (when the span recorded them).
        output_tokens: A model call's output tokens.
        latency_ms: How long the step took (from its span; ``None`` when read from the conversation).
        error: The step's error, when it failed.
        call_id: A tool call's id.
    """

    kind: Literal["model", "tool"]
    name: str | None = None
    arguments: dict[str, Any] | None = None
    result: Any = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: float | None = None
    error: str | None = None
    call_id: str | None = None


def _arguments(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return None
    if isinstance(value, dict):
        return cast("dict[str, Any]", value)
    return dict(cast("Mapping[str, Any]", value)) if isinstance(value, Mapping) else None


@dataclass
class CaseTrace:
    """The steps of one case, in order, and the totals scorers check.

    Attributes:
        steps: Model calls and tool calls in the order they happened.
        source: ``"spans"`` (from the stored trace) or ``"messages"`` (from the kept conversation).
        input_tokens: Tokens sent to models over the case.
        output_tokens: Tokens models produced over the case.
        latency_ms: The case's wall time.

    Example:
        ```python
        trace = result.trace
        trace.tool_path, trace.model_calls, trace.total_tokens
        ```
    """

    steps: list[Step] = field(default_factory=list[Step])
    source: Literal["spans", "messages"] = "messages"
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: float | None = None

    @property
    def model_steps(self) -> list[Step]:
        """The model calls."""
        return [s for s in self.steps if s.kind == "model"]

    @property
    def tool_steps(self) -> list[Step]:
        """The tool calls."""
        return [s for s in self.steps if s.kind == "tool"]

    @property
    def model_calls(self) -> int:
        """How many times a model was called."""
        return sum(1 for s in self.steps if s.kind == "model")

    @property
    def tool_path(self) -> list[str]:
        """The tools called, by name, in order."""
        return [s.name or "" for s in self.steps if s.kind == "tool"]

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens (unknown counts count as 0)."""
        return int(self.input_tokens or 0) + int(self.output_tokens or 0)

    def cost(self, prices: Mapping[str, Any], *, model: str | None = None) -> float | None:
        """What the case's model calls cost under ``prices`` (``{model: (input, output) per million tokens}``).

        Per model call when the spans named the models; else the case's totals priced as ``model`` (or the
        only model in ``prices``). ``None`` when a model has no price.
        """
        from ..observability import token_cost

        priced = [s for s in self.model_steps if s.name and (s.input_tokens is not None or s.output_tokens is not None)]
        if priced and model is None:
            total = 0.0
            for step in priced:
                cost = token_cost(step.name, step.input_tokens, step.output_tokens, cast("Any", prices))
                if cost is None:
                    return None
                total += cost[0] + cost[1]
            return total
        name = model or (next(iter(prices)) if len(prices) == 1 else None)
        cost = token_cost(name, self.input_tokens, self.output_tokens, cast("Any", prices))
        return None if cost is None else cost[0] + cost[1]

    # ------------------------------------------------------------------ building

    @classmethod
    def from_messages(cls, messages: Sequence[Any], result: CaseResult | None = None) -> CaseTrace:
        """The trace a conversation implies: one model call per assistant turn, tools paired by call id."""
        steps: list[Step] = []
        by_call: dict[str, Step] = {}
        answering = False  # consecutive assistant messages are one model call's answer
        for message in messages:
            role, contents = _role_and_contents(message)
            if role == "assistant":
                if not answering:
                    steps.append(Step("model"))
                    answering = True
                for content in contents:
                    if _get(content, "type") == "function_call":
                        call_id = _get(content, "call_id")
                        step = Step(
                            "tool",
                            name=_get(content, "name"),
                            arguments=_arguments(_get(content, "arguments")),
                            call_id=None if call_id is None else str(call_id),
                        )
                        steps.append(step)
                        by_call[str(call_id)] = step
                continue
            answering = False
            for content in contents:
                if _get(content, "type") == "function_result":
                    step = by_call.get(str(_get(content, "call_id")))
                    if step is not None:
                        step.result = _get(content, "result")
                        error = _get(content, "exception")
                        step.error = None if error is None else str(error)
        trace = cls(steps, "messages")
        if result is not None:
            trace.input_tokens, trace.output_tokens, trace.latency_ms = (
                result.input_tokens,
                result.output_tokens,
                result.latency_ms,
            )
        return trace

    @classmethod
    def from_spans(cls, spans: Sequence[Mapping[str, Any]], result: CaseResult | None = None) -> CaseTrace:
        """The trace stored spans record (rows of ``RunStore.list_spans``, in start order)."""
        steps: list[Step] = []
        tools: list[Step] = []
        input_tokens = output_tokens = 0
        counted = False
        for span in spans if _in_start_order(spans) else sorted(spans, key=_start_ns):
            get = span.get
            operation = get("operation")
            if operation != "chat" and operation != "execute_tool":
                continue
            start, end = get("start_ns"), get("end_ns")
            latency = (end - start) / 1e6 if start is not None and end is not None else None
            error = get("status_message") if get("status_code") == "ERROR" else None
            if operation == "chat":
                used_in, used_out = get("input_tokens"), get("output_tokens")
                step = Step("model", get("model"), None, None, used_in, used_out, latency, error)
                if used_in is not None or used_out is not None:
                    counted = True
                    input_tokens += int(used_in or 0)
                    output_tokens += int(used_out or 0)
            else:
                attributes: Mapping[str, Any] | None = get("attributes")
                arguments = result_value = call_id = None
                if attributes:
                    arguments = _arguments(attributes.get("gen_ai.tool.call.arguments"))
                    result_value = attributes.get("gen_ai.tool.call.result")
                    call_id = attributes.get("gen_ai.tool.call.id")
                step = Step("tool", get("tool_name"), arguments, result_value, None, None, latency, error, call_id)
                tools.append(step)
            steps.append(step)
        if result is not None and any(s.arguments is None or s.result is None for s in tools):
            # A workflow's tool calls are in its agents' turns (its own messages are the query and the output).
            kept = [m for turn in result.agents for m in turn["messages"]] if result.agents else result.messages
            if kept:
                _fill_tool_data(tools, _kept_tool_calls(kept))
        trace = cls(steps, "spans")
        if counted:
            trace.input_tokens, trace.output_tokens = input_tokens, output_tokens
        elif result is not None:
            trace.input_tokens, trace.output_tokens = result.input_tokens, result.output_tokens
        if result is not None:
            trace.latency_ms = result.latency_ms
        return trace


def _start_ns(span: Mapping[str, Any]) -> int:
    return span.get("start_ns") or 0


def _in_start_order(spans: Sequence[Mapping[str, Any]]) -> bool:
    """Whether spans are sorted by start already (the store gives them so): then they are not sorted again."""
    previous = -1
    for span in spans:
        start = span.get("start_ns") or 0
        if start < previous:
            return False
        previous = start
    return True


def _kept_tool_calls(messages: Sequence[Any]) -> list[list[Any]]:
    """The conversation's tool calls in order, as ``[name, arguments, result, call_id]``; arguments as sent.

    Only what filling span steps needs (a walk over the contents, no steps built); results paired by call id.
    """
    calls: list[list[Any]] = []
    by_call: dict[str, list[Any]] = {}
    for message in messages:
        for content in _role_and_contents(message)[1]:
            if type(content) is dict:  # the stored form: read the dict directly
                stored = cast("dict[str, Any]", content)
                kind, call_id = stored.get("type"), stored.get("call_id")
                if kind == "function_call":
                    call = [stored.get("name"), stored.get("arguments"), None, call_id]
                elif kind == "function_result":
                    call = by_call.get(str(call_id))
                    if call is not None:
                        call[2] = stored.get("result")
                    continue
                else:
                    continue
            else:
                kind, call_id = _get(content, "type"), _get(content, "call_id")
                if kind == "function_call":
                    call = [_get(content, "name"), _get(content, "arguments"), None, call_id]
                elif kind == "function_result":
                    call = by_call.get(str(call_id))
                    if call is not None:
                        call[2] = _get(content, "result")
                    continue
                else:
                    continue
            calls.append(call)
            by_call[str(call_id)] = call
    return calls


def _fill_tool_data(tools: list[Step], kept: list[list[Any]]) -> None:
    """Give span tool steps the arguments and results the conversation kept.

    Spans record them only with sensitive-data capture on; the conversation always has them. A step takes
    the call with its call id when exactly one call has it, else the call in the same place when both list
    the same tools in the same order, so a step never takes another call's data.
    """
    in_order = len(tools) == len(kept)
    if in_order:
        for step, call in zip(tools, kept, strict=True):
            if step.name != call[0]:
                in_order = False
                break
    by_id: dict[str, list[list[Any]]] | None = None
    for i, step in enumerate(tools):
        call: list[Any] | None = None
        if step.call_id is not None:
            if by_id is None:
                by_id = {}
                for kept_call in kept:
                    by_id.setdefault(str(kept_call[3]), []).append(kept_call)
            same = by_id.get(str(step.call_id)) or []
            if len(same) == 1 and same[0][0] == step.name:
                call = same[0]
        if call is None and in_order:
            call = kept[i]
        if call is None:
            continue
        if step.arguments is None:
            step.arguments = _arguments(call[1])
        if step.result is None:
            step.result = call[2]


def has_steps(spans: Sequence[Mapping[str, Any]]) -> bool:
    """Whether stored spans record a model or tool call (a function target's case span alone does not)."""
    return any(span.get("operation") in _STEP_OPERATIONS for span in spans)


_STEP_OPERATIONS = frozenset({"chat", "execute_tool"})


def _role_and_contents(message: Any) -> tuple[str, Sequence[Any]]:
    """A message's role and contents, from a ``Message`` or its stored JSON form (read without rebuilding it)."""
    if type(message) is dict:
        stored = cast("dict[str, Any]", message)
        return str(stored.get("role")), stored.get("contents") or ()
    if isinstance(message, Mapping):
        mapping = cast("Mapping[str, Any]", message)
        return str(mapping.get("role")), list(mapping.get("contents") or ())
    return str(message.role), list(message.contents)


def _get(content: Any, key: str) -> Any:
    # Stored conversations are plain dicts: test for dict itself (a Mapping check costs several times more).
    if isinstance(content, dict):
        return cast("dict[str, Any]", content).get(key)
    return getattr(content, key, None)
