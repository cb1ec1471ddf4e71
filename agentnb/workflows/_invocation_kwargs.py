"""The kwargs ``Workflow.run`` hands to the run's agents: ``function_invocation_kwargs`` and ``client_kwargs``.

As in the reference, a plain mapping is shared by every agent unless one of its keys is an executor id; then it
is per-executor (a ``"__global__"`` key holds a shared part). :class:`WorkflowInvocationKwargs` says both
explicitly and may name an executor's agent instead of its id. Loaded by the first run that is given some, so
importing a workflow costs nothing for it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, cast

if TYPE_CHECKING:
    from ._executor import Executor

__all__ = ["GLOBAL_KWARGS_KEY", "RoutedKwargs", "WorkflowInvocationKwargs", "resolve_invocation_kwargs"]

logger = logging.getLogger(__name__)

#: The key of a mapping's shared part when its other keys name executors (the reference's legacy mixed form).
GLOBAL_KWARGS_KEY = "__global__"


@dataclass(frozen=True)
class WorkflowInvocationKwargs:
    """Kwargs for every agent of a run plus overrides for some executors (``Workflow.run(client_kwargs=...)``).

    A plain mapping is either shared (no key names an executor) or per-executor (some key does); use this
    to have both. Keys of ``executor_kwargs`` are executor ids or the names of the agents they run; an
    executor's own values override the shared ones of the same name.

    Example:
        >>> kwargs = WorkflowInvocationKwargs({"temperature": 0.2}, {"critic": {"temperature": 0.9}})
        >>> kwargs.executor_kwargs["critic"]
        {'temperature': 0.9}
    """

    global_kwargs: Mapping[str, Any] = field(default_factory=lambda: dict[str, Any]())
    executor_kwargs: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: dict[str, Mapping[str, Any]]())


class RoutedKwargs(NamedTuple):
    """One of a run's invocation kwargs, resolved against the workflow's executors."""

    shared: dict[str, Any] | None  # for every executor (None: none given)
    by_executor: dict[str, dict[str, Any]]  # by executor id (keys naming no executor here are kept for children)
    routed: frozenset[str]  # the keys that named executors of this workflow

    def for_executor(self, executor_id: str) -> dict[str, Any] | None:
        """What ``executor_id`` is given: its own values over the shared ones (``None`` when neither)."""
        own = self.by_executor.get(executor_id)
        if own is None:
            return None if self.shared is None else dict(self.shared)
        return {**(self.shared or {}), **own}

    def for_subworkflow(self, executor_id: str) -> WorkflowInvocationKwargs | dict[str, Any] | None:
        """What the workflow run by node ``executor_id`` is given: the shared values (with the node's own over
        them) and the entries that named no executor here (they may name the child's executors)."""
        shared = self.for_executor(executor_id)
        rest = {k: v for k, v in self.by_executor.items() if k not in self.routed}
        if not rest:
            return shared
        return WorkflowInvocationKwargs(shared or {}, rest)


def _as_kwargs(param: str, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{param}[{key!r}] must be a mapping of keyword arguments for executor {key!r}, got "
            f"{type(value).__qualname__}; to give every agent values alongside per-executor ones use "
            "WorkflowInvocationKwargs(global_kwargs=..., executor_kwargs=...)."
        )
    return dict(cast("Mapping[str, Any]", value))


def resolve_invocation_kwargs(
    executors: Mapping[str, Executor], kwargs: WorkflowInvocationKwargs | Mapping[str, Any], param: str
) -> RoutedKwargs:
    """Resolve ``Workflow.run``'s ``param`` against the executors: shared, per-executor, or both.

    A plain mapping is per-executor when a key is an executor id (a ``"__global__"`` key then holds the
    shared part), else shared by all. :class:`WorkflowInvocationKwargs` keys may also name an executor's agent.
    """
    aliases: dict[str, str] = {}
    if isinstance(kwargs, WorkflowInvocationKwargs):
        ambiguous: set[str] = set()
        for executor_id, executor in executors.items():
            name = getattr(getattr(executor, "agent", None), "name", None)
            if not isinstance(name, str) or not name or name in executors:
                continue
            if name in aliases:
                ambiguous.add(name)
            aliases[name] = executor_id
        clash = sorted(ambiguous & kwargs.executor_kwargs.keys())
        if clash:
            raise ValueError(
                f"Ambiguous agent name(s) in {param}: {', '.join(clash)}. "
                "Use the corresponding executor IDs for per-executor kwargs."
            )
        logger.info("Explicit global %s provided with executor-specific overrides.", param)
        shared: dict[str, Any] | None = dict(kwargs.global_kwargs)
        entries: Mapping[str, Any] = kwargs.executor_kwargs
    else:
        if not (kwargs.keys() & executors.keys()):
            logger.info("No executor IDs found in %s keys; treating as global kwargs for all executors.", param)
            return RoutedKwargs(dict(kwargs), {}, frozenset())
        entries = dict(kwargs)
        shared = None
        if GLOBAL_KWARGS_KEY in entries and GLOBAL_KWARGS_KEY not in executors:
            shared = _as_kwargs(param, GLOBAL_KWARGS_KEY, entries.pop(GLOBAL_KWARGS_KEY))
            logger.info("Detected legacy mixed %s with global values and executor ID(s) %s.", param, sorted(entries))
        else:
            logger.info(
                "Detected per-executor %s: executor ID(s) %s found in keys. All entries will be treated as "
                "per-executor.",
                param,
                sorted(entries.keys() & executors.keys()),
            )
    by_executor: dict[str, dict[str, Any]] = {}
    for key, value in entries.items():
        executor_id = aliases.get(key, key)
        if executor_id in by_executor:
            raise ValueError(f"{param} targets executor '{executor_id}' by both its ID and agent name.")
        by_executor[executor_id] = _as_kwargs(param, key, value)
    return RoutedKwargs(shared, by_executor, frozenset(by_executor.keys() & executors.keys()))
