"""Edges: how a message sent by one executor reaches others.

Every edge belongs to an *edge group*, the unit the builder creates and the runner routes through:

- :class:`SingleEdgeGroup` — one source, one target, an optional ``condition(message) -> bool``.
- :class:`FanOutEdgeGroup` — one source, two or more targets; every target that can handle the message gets
  it, or only those a ``selection_func(message, target_ids) -> list[str]`` picks (multi-selection).
- :class:`FanInEdgeGroup` — two or more sources, one target; messages are buffered until every source has
  sent at least one, then the target receives them all as one ``list`` (in source order). The buffer is
  part of the run state and is saved in checkpoints.
- :class:`SwitchCaseEdgeGroup` — one source; the first :class:`SwitchCaseEdgeGroupCase` whose condition
  holds picks the target, else the :class:`SwitchCaseEdgeGroupDefault` (the builder takes :class:`Case` and
  :class:`Default`, which name executor objects).

Conditions and selection functions may be sync or async. They must be pure: the runner may evaluate
them again when a run resumes from a checkpoint.

Each group routes its own messages (:meth:`EdgeGroup.route`) through a :class:`Router`, the runner's side
of delivery; a new kind of edge is a new subclass, not a change to the runner. Routing runs once per message,
so it stays synchronous while every condition answers synchronously: only an async condition or selection
function makes ``route`` return an awaitable (no coroutine per message on the common path).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from ..exceptions import WorkflowRunError

__all__ = [
    "INTERNAL_SOURCE_ID",
    "Case",
    "Default",
    "Edge",
    "EdgeCondition",
    "EdgeGroup",
    "FanInEdgeGroup",
    "FanOutEdgeGroup",
    "Router",
    "SingleEdgeGroup",
    "SwitchCaseEdgeGroup",
    "SwitchCaseEdgeGroupCase",
    "SwitchCaseEdgeGroupDefault",
    "WorkflowMessage",
]

logger = logging.getLogger("agentnb.workflows")

Condition = Callable[[Any], Any]
#: A condition on an edge: takes the message, returns a bool (or an awaitable of one). The reference's name.
EdgeCondition: TypeAlias = Callable[[Any], "bool | Awaitable[bool]"]
SelectionFunc = Callable[[Any, list[str]], Any]


def _callable_name(func: Callable[..., Any] | None, fallback: str) -> str:
    # Lambdas and callable objects without a useful name get a generic label.
    name = getattr(func, "__name__", None)
    return fallback if not name or name == "<lambda>" else name


class Edge:
    """One directed edge of a group, as the reference names it: ``source_id -> target_id``, maybe conditional.

    Graph validation reads edges through this (:meth:`EdgeGroup.edge_list`); routing goes through the groups.

    Example:
        >>> edge = Edge("fetch", "parse", condition=lambda data: bool(data))
        >>> edge.id, edge.has_condition, edge.condition_name
        ('fetch->parse', True, '<lambda>')
    """

    ID_SEPARATOR = "->"
    __slots__ = ("_condition", "condition_name", "source_id", "target_id")

    def __init__(
        self,
        source_id: str,
        target_id: str,
        condition: EdgeCondition | None = None,
        *,
        condition_name: str | None = None,
    ) -> None:
        if not source_id:
            raise ValueError("Edge source_id must be a non-empty string.")
        if not target_id:
            raise ValueError("Edge target_id must be a non-empty string.")
        self.source_id = source_id
        self.target_id = target_id
        self._condition = condition
        if condition_name is None and condition is not None:
            condition_name = getattr(condition, "__name__", None) or "<callable>"
        self.condition_name = condition_name

    @property
    def id(self) -> str:
        """``"source->target"``: unique within a valid workflow."""
        return f"{self.source_id}{self.ID_SEPARATOR}{self.target_id}"

    @property
    def has_condition(self) -> bool:
        """Whether a condition decides if a message takes this edge."""
        return self._condition is not None

    async def should_route(self, data: Any) -> bool:
        """Whether ``data`` takes this edge: ``True`` without a condition, else what the condition answers."""
        if self._condition is None:
            return True
        verdict = self._condition(data)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    def to_dict(self) -> dict[str, Any]:
        """``source_id``, ``target_id`` and, when there is a condition, its ``condition_name`` (never the callable)."""
        payload = {"source_id": self.source_id, "target_id": self.target_id}
        if self.condition_name is not None:
            payload["condition_name"] = self.condition_name
        return payload

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Edge):
            return NotImplemented
        return (self.source_id, self.target_id, self.condition_name) == (
            other.source_id,
            other.target_id,
            other.condition_name,
        )

    def __hash__(self) -> int:
        return hash((self.source_id, self.target_id, self.condition_name))

    def __repr__(self) -> str:
        return f"Edge({self.source_id!r} -> {self.target_id!r}, condition_name={self.condition_name!r})"


@dataclass
class WorkflowMessage:
    """A message sent from ``source_id`` (to ``target_id`` only, when set) carrying ``data``.

    agentnb's runner routes plain values; this envelope, the reference's, is for code written against it: an
    executor's ``can_handle`` and ``Workflow.run`` accept one and use its ``data``.

    Example:
        >>> WorkflowMessage(data="hi", source_id="writer").to_dict()["source_id"]
        'writer'
    """

    data: Any
    source_id: str
    target_id: str | None = None
    type: Literal["standard", "response"] = "standard"
    trace_contexts: list[dict[str, str]] | None = None
    source_span_ids: list[str] | None = None

    @property
    def trace_context(self) -> dict[str, str] | None:
        """The first of ``trace_contexts``, if any."""
        return self.trace_contexts[0] if self.trace_contexts else None

    @property
    def source_span_id(self) -> str | None:
        """The first of ``source_span_ids``, if any."""
        return self.source_span_ids[0] if self.source_span_ids else None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (``data`` as is)."""
        return {
            "data": self.data,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "type": self.type,
            "trace_contexts": self.trace_contexts,
            "source_span_ids": self.source_span_ids,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkflowMessage:
        """The message :meth:`to_dict` described.

        Raises:
            KeyError: ``data`` or ``source_id`` is missing.
        """
        for key in ("data", "source_id"):
            if key not in data:
                raise KeyError(f"Missing '{key}' field in WorkflowMessage dictionary.")
        return cls(
            data=data["data"],
            source_id=data["source_id"],
            target_id=data.get("target_id"),
            type=data.get("type", "standard"),
            trace_contexts=data.get("trace_contexts"),
            source_span_ids=data.get("source_span_ids"),
        )


INTERNAL_SOURCE_PREFIX = "internal"


def INTERNAL_SOURCE_ID(executor_id: str) -> str:
    """The sender name of a message the runner itself addressed to ``executor_id`` (the workflow's input).

    A checkpoint lists its waiting messages by sender; the input has none, so it is listed under this name.

    Example:
        >>> INTERNAL_SOURCE_ID("start")
        'internal:start'
    """
    return f"{INTERNAL_SOURCE_PREFIX}:{executor_id}"


@dataclass(frozen=True)
class Case:
    """One branch of a switch-case edge group: the ``target`` gets the message when ``condition(message)`` holds.

    Example:
        >>> from agentnb.workflows import Case, Default  # doctest: +SKIP
        >>> builder.add_switch_case_edge_group(router, [Case(lambda n: n > 0, pos), Default(neg)])  # doctest: +SKIP
    """

    condition: Condition
    target: Any


@dataclass(frozen=True)
class Default:
    """The fallback branch of a switch-case edge group.

    Example:
        >>> Default(target="fallback").target
        'fallback'
    """

    target: Any


class Router(Protocol):
    """What an edge group needs from the runner to route a message."""

    def can_handle(self, target: str, data: Any) -> bool:
        """Whether executor ``target`` has a handler for ``data``."""
        ...

    def deliver(self, target: str, source: str | None, data: Any) -> None:
        """Hand ``data`` to ``target`` in the next superstep."""
        ...

    def fan_in_buffer(self, group_id: str) -> dict[str, list[Any]]:
        """The run's buffer of messages waiting in fan-in group ``group_id`` (saved in checkpoints)."""
        ...

    def warn(self, text: str) -> None:
        """Report a routing problem as a ``warning`` event."""
        ...


#: What :meth:`EdgeGroup.route` returns: whether the group took the message, or an awaitable of that when an
#: async condition or selection function had to be awaited.
Routed: TypeAlias = "bool | Awaitable[bool]"


class EdgeGroup:
    """A set of edges the runner routes through as one unit (see the module docstring for the kinds).

    Without an ``id``, a group gets ``"<ClassName>/<uuid>"`` as the reference's do; the builder gives its groups
    stable ids instead (a fan-in buffer is saved in checkpoints under its group's id).
    """

    kind: str = "edge"
    __slots__ = ("id", "sources", "targets")

    def __init__(self, sources: Sequence[str], targets: Sequence[str], *, id: str | None = None) -> None:
        self.id = id or f"{type(self).__name__}/{uuid.uuid4()}"
        self.sources = list(sources)
        self.targets = list(targets)

    @property
    def type(self) -> str:
        """The group's class name (the reference's ``type`` field)."""
        return type(self).__name__

    @property
    def source_executor_ids(self) -> list[str]:
        """The ids of the executors whose messages this group routes."""
        return list(self.sources)

    @property
    def target_executor_ids(self) -> list[str]:
        """The ids of the executors this group may deliver to."""
        return list(self.targets)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (source, target) pair this group connects."""
        return [(s, t) for s in self.sources for t in self.targets]

    @property
    def edges(self) -> list[Edge]:
        """This group's edges as :class:`Edge` objects (what graph validation reads)."""
        return [Edge(s, t) for s, t in self.pairs()]

    @property
    def conditional(self) -> bool:
        """Whether delivery depends on a condition or selection function (drawn dashed)."""
        return False

    def edge_label(self, source: str, target: str) -> str | None:
        """A short label for drawing the edge from ``source`` to ``target``, if any."""
        return None

    def describe(self) -> dict[str, Any]:
        """A stable description used for the graph signature and for visualization."""
        return {"kind": self.kind, "sources": self.sources, "targets": self.targets}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe description in the reference's shape: ``id``, ``type`` and ``edges`` (no callables)."""
        return {"id": self.id, "type": self.type, "edges": [edge.to_dict() for edge in self.edges]}

    def route(self, data: Any, source: str, target: str | None, router: Router) -> Routed:
        """Route one message sent by ``source`` (to ``target`` only, when set): whether this group took it.

        Returns a ``bool``, or an awaitable of one when the group had to await an async condition; subclasses
        may also be ``async def``.
        """
        return _deliver_all(self.targets, data, source, target, router)

    def may_take(self, data: Any, target: str | None, can_handle: Callable[[str, Any], bool]) -> bool:
        """Whether this group could take ``data`` (conditions aside): a static check, for edited checkpoints."""
        return any((target is None or target == t) and can_handle(t, data) for t in self.targets)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sources!r} -> {self.targets!r})"


class SingleEdgeGroup(EdgeGroup):
    """One edge from ``source_id`` to ``target_id``, taken when ``condition`` (if any) holds.

    Example:
        >>> SingleEdgeGroup("a", "b").pairs()
        [('a', 'b')]
    """

    kind = "single"
    __slots__ = ("condition",)

    def __init__(
        self, source_id: str, target_id: str, condition: Condition | None = None, *, id: str | None = None
    ) -> None:
        super().__init__([source_id], [target_id], id=id)
        self.condition = condition

    @property
    def conditional(self) -> bool:
        return self.condition is not None

    def edge_label(self, source: str, target: str) -> str | None:
        return _callable_name(self.condition, "condition") if self.condition is not None else None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "condition": self.condition is not None}

    @property
    def edges(self) -> list[Edge]:
        return [Edge(self.sources[0], self.targets[0], self.condition)]

    def route(self, data: Any, source: str, target: str | None, router: Router) -> Routed:
        only = self.targets[0]
        if target is not None and target != only:
            return False
        if self.condition is not None:
            verdict = self.condition(data)
            if inspect.isawaitable(verdict):
                return self._route_after(verdict, data, source, router)
            if not verdict:
                return False
        if not router.can_handle(only, data):  # _deliver_one, inlined: this runs for every message of a chain
            return False
        router.deliver(only, source, data)
        return True

    async def _route_after(self, verdict: Awaitable[Any], data: Any, source: str, router: Router) -> bool:
        return bool(await verdict) and _deliver_one(self.targets[0], data, source, router)


class FanOutEdgeGroup(EdgeGroup):
    """Edges from one source to two or more targets, optionally narrowed per message by ``selection_func``.

    Example:
        >>> FanOutEdgeGroup("split", ["a", "b"]).pairs()
        [('split', 'a'), ('split', 'b')]
    """

    __slots__ = ("selection_func", "selection_func_name")

    def __init__(
        self,
        source_id: str,
        target_ids: Sequence[str],
        selection_func: SelectionFunc | None = None,
        *,
        selection_func_name: str | None = None,
        id: str | None = None,
    ) -> None:
        if len(target_ids) <= 1:
            raise ValueError("FanOutEdgeGroup must contain at least two targets.")
        super().__init__([source_id], target_ids, id=id)
        self.selection_func = selection_func
        if selection_func_name is None and selection_func is not None:
            selection_func_name = getattr(selection_func, "__name__", None) or "<callable>"
        self.selection_func_name = selection_func_name

    @property
    def kind(self) -> str:  # type: ignore[override]  # pyright: ignore[reportIncompatibleVariableOverride]
        """``"multi_selection"`` when a selection function picks targets, else ``"fan_out"``."""
        return "multi_selection" if self.selection_func is not None else "fan_out"

    @property
    def conditional(self) -> bool:
        return self.selection_func is not None

    def edge_label(self, source: str, target: str) -> str | None:
        return _callable_name(self.selection_func, "selected") if self.selection_func is not None else None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "kind": self.kind}

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "selection_func_name": self.selection_func_name}

    def route(self, data: Any, source: str, target: str | None, router: Router) -> Routed:
        if self.selection_func is None:
            return _deliver_all(self.targets, data, source, target, router)
        chosen = self.selection_func(data, list(self.targets))
        if inspect.isawaitable(chosen):
            return self._route_after(chosen, data, source, target, router)
        return self._deliver_chosen(chosen, data, source, target, router)

    async def _route_after(
        self, chosen: Awaitable[Sequence[str]], data: Any, source: str, target: str | None, router: Router
    ) -> bool:
        return self._deliver_chosen(await chosen, data, source, target, router)

    def _deliver_chosen(
        self, chosen: Sequence[str], data: Any, source: str, target: str | None, router: Router
    ) -> bool:
        unknown = [t for t in chosen if t not in self.targets]
        if unknown:
            raise WorkflowRunError(
                f"The selection function of the edge group from {source!r} chose {unknown}, which are not among "
                f"its targets {self.targets}."
            )
        picked = set(chosen)
        return _deliver_all([t for t in self.targets if t in picked], data, source, target, router)


class FanInEdgeGroup(EdgeGroup):
    """Edges from two or more sources into one target, which receives a ``list`` once every source has sent.

    Example:
        >>> FanInEdgeGroup(["a", "b"], "join").pairs()
        [('a', 'join'), ('b', 'join')]
    """

    kind = "fan_in"
    __slots__ = ()

    def __init__(self, source_ids: Sequence[str], target_id: str, *, id: str | None = None) -> None:
        if len(source_ids) <= 1:
            raise ValueError("FanInEdgeGroup must contain at least two sources.")
        super().__init__(source_ids, [target_id], id=id)

    @property
    def target(self) -> str:
        """The executor that receives the joined list."""
        return self.targets[0]

    def route(self, data: Any, source: str, target: str | None, router: Router) -> Routed:
        if target is not None and target != self.target:
            return False
        buffers = router.fan_in_buffer(self.id)
        buffers.setdefault(source, []).append(data)
        # Buffers only hold sources that sent, and are emptied on delivery: full means all have sent.
        if len(buffers) == len(self.sources):
            joined = [item for s in self.sources for item in buffers[s]]
            buffers.clear()
            if router.can_handle(self.target, joined):
                router.deliver(self.target, None, joined)
            else:
                router.warn(f"Fan-in target {self.target!r} cannot handle the joined list from {self.sources}.")
        return True

    def may_take(self, data: Any, target: str | None, can_handle: Callable[[str, Any], bool]) -> bool:
        return target is None or target == self.target  # buffered; the joined list is checked on delivery


class SwitchCaseEdgeGroupCase:
    """One branch of a :class:`SwitchCaseEdgeGroup` by executor id: ``target_id`` gets the message when
    ``condition(message)`` holds. (:class:`Case` is the builder's form, with the executor object.)

    Example:
        >>> SwitchCaseEdgeGroupCase(lambda n: n > 0, target_id="pos").to_dict()
        {'target_id': 'pos', 'type': 'Case', 'condition_name': '<lambda>'}
    """

    __slots__ = ("condition", "condition_name", "target_id", "type")

    def __init__(self, condition: Condition, target_id: str, *, condition_name: str | None = None) -> None:
        if not target_id:
            raise ValueError("SwitchCaseEdgeGroupCase requires a target_id")
        self.condition = condition
        self.target_id = target_id
        self.type = "Case"
        self.condition_name = condition_name or getattr(condition, "__name__", None) or "<callable>"

    def to_dict(self) -> dict[str, Any]:
        """The case without its callable: ``target_id``, ``type`` and ``condition_name``."""
        return {"target_id": self.target_id, "type": self.type, "condition_name": self.condition_name}

    def __repr__(self) -> str:
        return f"SwitchCaseEdgeGroupCase(target_id={self.target_id!r}, condition_name={self.condition_name!r})"


class SwitchCaseEdgeGroupDefault:
    """The fallback branch of a :class:`SwitchCaseEdgeGroup`, by executor id.

    Example:
        >>> SwitchCaseEdgeGroupDefault("fallback").to_dict()
        {'target_id': 'fallback', 'type': 'Default'}
    """

    __slots__ = ("target_id", "type")

    def __init__(self, target_id: str) -> None:
        if not target_id:
            raise ValueError("SwitchCaseEdgeGroupDefault requires a target_id")
        self.target_id = target_id
        self.type = "Default"

    def to_dict(self) -> dict[str, Any]:
        """``target_id`` and ``type``."""
        return {"target_id": self.target_id, "type": self.type}

    def __repr__(self) -> str:
        return f"SwitchCaseEdgeGroupDefault(target_id={self.target_id!r})"


class SwitchCaseEdgeGroup(EdgeGroup):
    """Edges from one source where the first matching case (else the one default) gets the message.

    Example:
        >>> g = SwitchCaseEdgeGroup(
        ...     "route", [SwitchCaseEdgeGroupCase(lambda n: n > 0, "pos"), SwitchCaseEdgeGroupDefault("neg")]
        ... )
        >>> g.targets
        ['pos', 'neg']
    """

    kind = "switch_case"
    __slots__ = ("_branches", "cases", "default")

    def __init__(
        self,
        source_id: str,
        cases: Sequence[SwitchCaseEdgeGroupCase | SwitchCaseEdgeGroupDefault],
        *,
        id: str | None = None,
    ) -> None:
        if len(cases) < 2:
            raise ValueError("SwitchCaseEdgeGroup must contain at least two cases (including the default case).")
        defaults = [c for c in cases if isinstance(c, SwitchCaseEdgeGroupDefault)]
        if len(defaults) != 1:
            raise ValueError("SwitchCaseEdgeGroup must contain exactly one default case.")
        at = cases.index(defaults[0])
        if at != len(cases) - 1:
            logger.warning(
                "Default case in the switch-case edge group from %r is not the last case; the cases after it are "
                "never tried.",
                source_id,
            )
        super().__init__([source_id], list(dict.fromkeys(c.target_id for c in cases)), id=id)
        self.cases = list(cases)
        self.default = defaults[0].target_id
        self._branches = [(c.target_id, c.condition) for c in cases[:at] if isinstance(c, SwitchCaseEdgeGroupCase)]

    @property
    def conditional(self) -> bool:
        return True

    def edge_label(self, source: str, target: str) -> str | None:
        if target == self.default and all(t != target for t, _ in self._branches):
            return "default"
        for i, (t, cond) in enumerate(self._branches):
            if t == target:
                return _callable_name(cond, f"case {i}")
        return None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "cases": [t for t, _ in self._branches], "default": self.default}

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "cases": [case.to_dict() for case in self.cases]}

    def route(self, data: Any, source: str, target: str | None, router: Router) -> Routed:
        for index, (candidate, condition) in enumerate(self._branches):
            verdict = condition(data)
            if inspect.isawaitable(verdict):
                return self._route_after(index, verdict, data, source, target, router)
            if verdict:
                return self._deliver_case(candidate, data, source, target, router)
        return self._deliver_case(self.default, data, source, target, router)

    async def _route_after(
        self, index: int, verdict: Awaitable[Any], data: Any, source: str, target: str | None, router: Router
    ) -> bool:
        # Cases are tried in order: an async one is awaited before the next is asked.
        if await verdict:
            return self._deliver_case(self._branches[index][0], data, source, target, router)
        for candidate, condition in self._branches[index + 1 :]:
            verdict = condition(data)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return self._deliver_case(candidate, data, source, target, router)
        return self._deliver_case(self.default, data, source, target, router)

    @staticmethod
    def _deliver_case(chosen: str | None, data: Any, source: str, target: str | None, router: Router) -> bool:
        if chosen is None or (target is not None and target != chosen):
            return False
        return _deliver_one(chosen, data, source, router)


def _deliver_one(target: str, data: Any, source: str, router: Router) -> bool:
    if not router.can_handle(target, data):
        return False
    router.deliver(target, source, data)
    return True


def _deliver_all(targets: Sequence[str], data: Any, source: str, target: str | None, router: Router) -> bool:
    """Deliver to every one of ``targets`` (only ``target``, when set) that can handle ``data``."""
    delivered = False
    for candidate in targets:
        if (target is None or target == candidate) and router.can_handle(candidate, data):
            router.deliver(candidate, source, data)
            delivered = True
    return delivered


def graph_signature(start_id: str, executors: dict[str, str], groups: Sequence[EdgeGroup]) -> str:
    """A hash of the graph's shape: executor ids and classes, the start node, and every edge group.

    Two builds of the same code give the same signature in any process; adding, removing or rewiring a
    node changes it, so a checkpoint cannot be resumed on a graph it was not written by.
    """
    import json

    payload = {
        "start": start_id,
        "executors": sorted(executors.items()),
        "edges": [g.describe() for g in groups],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
