"""Cases and their results: what a dataset row becomes, and what running the target on it gave."""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from ._spans import SPAN_LOADER
from ._trace import CaseTrace, has_steps

if TYPE_CHECKING:
    from .._types import Message

__all__ = [
    "BATCH_COLUMNS",
    "CaseResult",
    "CaseStatus",
    "EvalCase",
    "as_messages",
    "cases_from_inputs",
    "load_cases",
    "make_frame",
    "message_dicts",
    "plain",
]

CaseStatus = Literal["ok", "error", "timeout", "approval_pending"]

#: The columns of :func:`agentnb.evals.run_batch`'s DataFrame, in order.
BATCH_COLUMNS: tuple[str, ...] = (
    "case_id",
    "input",
    "output",
    "status",
    "error",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "run_id",
    "trace_id",
)


@dataclass(frozen=True)
class EvalCase:
    """One row of a dataset: what the target gets, what it should give, and the row's other columns.

    Attributes:
        case_id: The row's ``case_id`` column, else its position (as text); unique within a dataset.
        input: Text for an agent, or a dict for a workflow whose start executor takes a typed input.
        expected: The expected answer (``None`` when the dataset has none).
        metadata: The row's other columns.
        position: The row's place in the dataset (results keep this order).
        repetition: Which repetition of the row this is (``0`` unless ``evaluate(repetitions=...)``).
    """

    case_id: str
    input: Any
    expected: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    position: int = 0
    repetition: int = 0


@dataclass
class CaseResult:
    """What running the target on one case gave; scorers get it as their second argument.

    Attributes:
        case_id: The case's id.
        output: The reply text (agents), the workflow's output (one) or outputs (several), or the function's
            return value.
        status: ``"ok"``, ``"error"``, ``"timeout"`` or ``"approval_pending"``.
        error: What went wrong (``None`` when ``status`` is ``"ok"``).
        latency_ms: Wall time of the case, retries included.
        input_tokens: Tokens sent to the model over the whole case (``None`` when unknown).
        output_tokens: Tokens the model produced over the whole case.
        run_id: The case's run in the run store.
        trace_id: The case's trace (when instrumentation is on).
        tool_calls: The tools the agent called, in order: ``{"name": ..., "arguments": {...}}``.
        attempts: How many times the target was called (retries and rate limits included).
        messages: The conversation: the input as messages, then every message the target answered with
            (tool calls and their results included); ``Message`` objects in the process that ran the case,
            their JSON form (``Message.to_dict()``) when read back. :attr:`conversation` gives them typed.
        agents: For a workflow, each agent's own turn: ``{"executor_id": ..., "messages": [...]}``.
        spans: The case's stored spans (``RunStore.list_spans`` rows), when they were read; :attr:`trace`
            then comes from them. In :func:`~agentnb.evals.evaluate`, the first read of :attr:`trace` reads
            them from the run store for a case that ran traced.
        response: The ``AgentResponse`` or ``WorkflowRunResult`` itself; only in the process that ran the
            case (``None`` for results loaded from the store or computed on a Ray worker).
    """

    case_id: str
    output: Any = None
    status: CaseStatus = "ok"
    error: str | None = None
    latency_ms: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    run_id: str | None = None
    trace_id: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 1
    messages: list[Any] = field(default_factory=list, repr=False)
    agents: list[dict[str, Any]] = field(default_factory=list, repr=False)
    spans: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    response: Any = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """Whether the target answered (status ``"ok"``)."""
        return self.status == "ok"

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools called, in order."""
        return [call["name"] for call in self.tool_calls]

    @property
    def trace(self) -> CaseTrace:
        """The case's steps (model and tool calls) and totals, from its spans when read, else its conversation."""
        cached: CaseTrace | None = self.__dict__.get("_trace")
        if cached is None:
            loader = self.__dict__.get(SPAN_LOADER)
            if loader is not None and self.spans is None:
                loader.load(self)  # evaluate() reads the stored spans of this case (and of others waiting)
            if self.spans and has_steps(self.spans):
                cached = CaseTrace.from_spans(self.spans, self)
            elif self.agents:  # a workflow: its steps are its agents' turns (its messages: query and output)
                turns = [message for turn in self.agents for message in turn["messages"]]
                cached = CaseTrace.from_messages(turns, self)
            else:
                cached = CaseTrace.from_messages(self.messages, self)
            self.__dict__["_trace"] = cached
        return cached

    @property
    def conversation(self) -> list[Message]:
        """:attr:`messages` as ``Message`` objects (rebuilt from their JSON form when read back)."""
        return as_messages(self.messages)

    def to_record(self) -> dict[str, Any]:
        """The JSON-safe fields (everything but ``response``), as stored and sent between processes."""
        return {
            "case_id": self.case_id,
            "output": plain(self.output),
            "status": self.status,
            "error": self.error,
            "latency_ms": self.latency_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "run_id": self.run_id,
            "trace_id": self.trace_id,
            "tool_calls": plain(self.tool_calls),
            "attempts": self.attempts,
            "messages": message_dicts(self.messages),
            "agents": [
                {"executor_id": agent["executor_id"], "messages": message_dicts(agent["messages"])}
                for agent in self.agents
            ],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CaseResult:
        """Rebuild a result from :meth:`to_record`'s dict (``response`` stays ``None``)."""
        fields = {k: record[k] for k in _RESULT_FIELDS if k in record}
        return cls(**fields)


_RESULT_FIELDS = (
    "case_id",
    "output",
    "status",
    "error",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "run_id",
    "trace_id",
    "tool_calls",
    "attempts",
    "messages",
    "agents",
)


def message_dicts(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Messages in their JSON form (``Message.to_dict()``); dicts pass through."""
    return [m if isinstance(m, dict) else m.to_dict() for m in messages]


def as_messages(messages: Sequence[Any]) -> list[Message]:
    """Messages as ``Message`` objects, rebuilt from their JSON form where needed."""
    from .._types import Message

    return [m if isinstance(m, Message) else Message.from_dict(m) for m in messages]


def plain(value: Any) -> Any:
    """Turn a value into JSON-safe data: pydantic models and dataclasses to dicts, unknown objects to text."""
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in cast("Mapping[Any, Any]", value).items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in cast("Sequence[Any]", value)]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return plain(dump(mode="json"))
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return plain(item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def dataset_rows(dataset: Any) -> list[Mapping[str, Any]]:
    """The dataset's rows as mappings, from a DataFrame, a list of dicts or a .jsonl / .csv file."""
    if isinstance(dataset, (str, os.PathLike)):
        path = Path(cast("str | os.PathLike[str]", dataset)).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"Dataset file {str(path)!r} does not exist.")
        if path.suffix == ".jsonl":
            rows: list[Mapping[str, Any]] = []
            with path.open(encoding="utf-8") as f:
                for number, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{path.name} line {number} is not JSON: {e}") from e
                    if not isinstance(row, dict):
                        raise ValueError(f"{path.name} line {number} must be a JSON object, got {type(row).__name__}.")
                    rows.append(cast("dict[str, Any]", row))
            return rows
        if path.suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as f:
                return list(csv.DictReader(f))
        raise ValueError(f"Dataset files must be .jsonl or .csv, got {path.name!r}.")
    if callable(getattr(dataset, "to_dict", None)) and hasattr(dataset, "columns"):  # a pandas DataFrame
        return list(dataset.to_dict("records"))
    if isinstance(dataset, Mapping):
        raise TypeError("A dataset is a DataFrame, a list of dicts or a .jsonl / .csv path, not one dict.")
    given: list[object] = list(dataset)
    for i, row in enumerate(given):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"Dataset row {i} is a {type(row).__name__}, not a dict; give rows like {{'input': ...}} "
                "(run_batch takes plain inputs)."
            )
    return cast("list[Mapping[str, Any]]", given)


def load_cases(dataset: Any) -> list[EvalCase]:
    """Turn a dataset into cases: column ``input`` is required, ``expected`` and ``case_id`` optional.

    Args:
        dataset: A pandas DataFrame, a list of dicts, or a ``.jsonl`` / ``.csv`` path.

    Raises:
        ValueError: A row has no ``input``, or two rows share a ``case_id``.
    """
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for position, row in enumerate(dataset_rows(dataset)):
        if "input" not in row or _missing(row["input"]):
            raise ValueError(f"Dataset row {position} has no 'input' (its columns are {sorted(map(str, row))}).")
        raw_id = row.get("case_id")
        case_id = str(position) if _missing(raw_id) else str(raw_id)
        if case_id in seen:
            raise ValueError(f"Dataset rows share case_id {case_id!r}; case ids must be unique.")
        seen.add(case_id)
        expected = row.get("expected")
        metadata = {str(k): (None if _missing(v) else v) for k, v in row.items() if k not in _RESERVED}
        cases.append(
            EvalCase(
                case_id=case_id,
                input=row["input"],
                expected=None if _missing(expected) else expected,
                metadata=metadata,
                position=position,
            )
        )
    return cases


def cases_from_inputs(inputs: Iterable[Any]) -> list[EvalCase]:
    """Turn plain inputs (``run_batch``'s) into cases numbered by position; a DataFrame's ``input`` column counts."""
    if hasattr(inputs, "columns") and callable(getattr(inputs, "to_dict", None)):
        return load_cases(inputs)
    if isinstance(inputs, (str, bytes, Mapping)):
        raise TypeError("run_batch takes a list of inputs (or a DataFrame with an 'input' column), not one input.")
    tolist: Callable[[], list[Any]] | None = getattr(inputs, "tolist", None)  # a pandas Series or numpy array
    items = tolist() if callable(tolist) else list(inputs)
    return [EvalCase(case_id=str(i), input=value, position=i) for i, value in enumerate(items)]


_RESERVED = frozenset({"input", "expected", "case_id"})


#: Columns whose values stay as given (text, dicts, lists, ``None``): pandas would otherwise turn a missing
#: answer into ``NaN`` and a column of dicts into something else.
_TYPED_COLUMNS = {
    "case_id": "str",
    "status": "str",
    "latency_ms": "float64",
    "input_tokens": "Int64",
    "output_tokens": "Int64",
}


def make_frame(records: list[list[Any]] | list[tuple[Any, ...]], columns: list[str], floats: Iterable[str] = ()) -> Any:
    """Build a results DataFrame: ids, statuses, latencies, tokens and ``floats`` typed; every other column kept
    as Python objects (so a missing output is ``None`` and a dict stays a dict)."""
    import pandas as pd

    float_columns = set(floats)
    data: dict[str, pd.Series[Any]] = {}
    for index, column in enumerate(columns):
        values = [record[index] for record in records]
        if column in float_columns:
            dtype: Any = "float64"
        else:
            dtype = _TYPED_COLUMNS.get(column, object)
        data[column] = pd.Series(values, dtype=dtype)
    return pd.DataFrame(data, columns=columns)
