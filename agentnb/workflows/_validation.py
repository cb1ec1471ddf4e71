"""Graph validation: what ``WorkflowBuilder.build()`` refuses, and what it only logs.

:func:`validate_workflow_graph` raises where the reference raises, with its messages, error types and
``validation_type`` (:class:`~agentnb.exceptions.ValidationTypeEnum`):

- :class:`~agentnb.exceptions.EdgeDuplicationError`: two edges join the same pair of executors;
- :class:`~agentnb.exceptions.TypeCompatibilityError`: an edge's source declares what it sends and none of it
  fits what the target accepts (a fan-in target receives ``list[...]`` of what its sources send);
- :class:`~agentnb.exceptions.GraphConnectivityError`: executors the start executor cannot reach;
- ``WorkflowValidationError`` (``OUTPUT_VALIDATION``): an output or intermediate executor that is not in the
  graph, declares no workflow output type, or is both.

It is no stricter than the reference: an executor whose ``WorkflowContext`` hints declare nothing it sends
(``WorkflowContext`` alone) may still have edges. Its edges cannot be checked, so the graph is accepted with
a warning on the ``agentnb.workflows`` logger, and the run reports any message no target takes as a
``warning`` event. A self-loop is accepted with a warning too; executors without outgoing edges are logged
at ``INFO`` (they are usually the final nodes), and each checked edge at ``DEBUG``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..exceptions import (
    EdgeDuplicationError,
    GraphConnectivityError,
    TypeCompatibilityError,
    ValidationTypeEnum,
    WorkflowValidationError,
)
from ._edges import EdgeGroup, FanInEdgeGroup

if TYPE_CHECKING:
    from ._executor import Executor

__all__ = ["validate_workflow_graph"]

logger = logging.getLogger("agentnb.workflows")


def validate_workflow_graph(
    edge_groups: Sequence[EdgeGroup],
    executors: Mapping[str, Executor],
    start_executor: Executor,
    output_executors: Sequence[str],
    intermediate_executors: Sequence[str] | None = None,
) -> None:
    """Check a graph as ``build()`` does (the reference's function of this name and signature).

    Args:
        edge_groups: The graph's edge groups.
        executors: Every executor, by id (empty: the start executor alone).
        start_executor: The executor that receives the workflow input.
        output_executors: Ids of the executors whose yields are outputs (empty: every executor).
        intermediate_executors: Ids of the executors whose yields are ``intermediate`` events.

    Raises:
        EdgeDuplicationError, TypeCompatibilityError, GraphConnectivityError, WorkflowValidationError: As the
            module docstring lists.
    """
    if not executors:
        executors = {start_executor.id: start_executor}
    if start_executor.id not in executors:
        raise GraphConnectivityError(f"Start executor '{start_executor.id}' is not present in the workflow graph.")
    _check_duplicates(edge_groups)
    _check_types(edge_groups, executors)
    _check_reachable(edge_groups, executors, start_executor.id)
    with_outgoing: set[str] = set()
    for group in edge_groups:
        for source, target in group.pairs():
            with_outgoing.add(source)
            if source == target:
                logger.warning(
                    "Self-loop detected: executor %r connects to itself. This may cause infinite recursion (until "
                    "max_iterations) unless a condition ends it.",
                    source,
                )
    dead_ends = sorted(set(executors) - with_outgoing)
    if dead_ends:
        logger.info(
            "Dead-end executors detected (no outgoing edges): %s. Verify these are intended as final nodes in the "
            "workflow.",
            dead_ends,
        )
    _check_outputs(executors, output_executors, intermediate_executors or ())


def _check_outputs(
    executors: Mapping[str, Executor], output_executors: Sequence[str], intermediate_executors: Sequence[str]
) -> None:
    overlap = sorted(set(output_executors) & set(intermediate_executors))
    if overlap:
        raise WorkflowValidationError(
            f"Executors cannot be both output and intermediate designated: {overlap}.",
            ValidationTypeEnum.OUTPUT_VALIDATION,
        )
    for kind, ids in (("Output", output_executors), ("Intermediate", intermediate_executors)):
        for executor_id in ids:
            executor = executors.get(executor_id)
            if executor is None:
                raise WorkflowValidationError(
                    f"{kind} executor '{executor_id}' is not present in the workflow graph "
                    f"(executors: {sorted(executors)}).",
                    ValidationTypeEnum.OUTPUT_VALIDATION,
                )
            if not executor.workflow_output_types:
                raise WorkflowValidationError(
                    f"{kind} executor '{executor_id}' must have output type annotations defined: declare what it "
                    "yields with WorkflowContext[T, W] (or workflow_output= on its handler).",
                    ValidationTypeEnum.OUTPUT_VALIDATION,
                )


def _check_duplicates(edge_groups: Sequence[EdgeGroup]) -> None:
    seen: dict[str, str] = {}
    for group in edge_groups:
        for edge in group.edges:
            if edge.id in seen:
                raise EdgeDuplicationError(
                    edge.id,
                    f" (added by {seen[edge.id]} and by {group.kind}); connect two executors once, with a condition "
                    "or switch-case if routing varies",
                )
            seen[edge.id] = group.kind


def _check_reachable(edge_groups: Sequence[EdgeGroup], executors: Mapping[str, Executor], start: str) -> None:
    adjacency: dict[str, list[str]] = {}
    for group in edge_groups:
        for s, t in group.pairs():
            adjacency.setdefault(s, []).append(t)
    seen = {start}
    stack = [start]
    while stack:
        for nxt in adjacency.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    unreachable = [e for e in executors if e not in seen]
    if unreachable:
        raise GraphConnectivityError(
            f"The following executors are unreachable from the start executor '{start}': {sorted(unreachable)}. "
            "This may indicate a disconnected workflow graph; connect them with an edge or remove them."
        )


def _sent(executors: Mapping[str, Executor], source: str, target: str) -> list[Any] | None:
    """What ``source`` declares it sends; ``None`` when it declares nothing or ``Any`` (the edge is not checked)."""
    sent = list(executors[source].output_types)
    if not sent:
        logger.warning(
            "Executor %r has no output type annotations, so its edge to %r cannot be type-checked. Consider adding "
            "WorkflowContext[T] generics in handlers (WorkflowContext[T] declares that it sends T).",
            source,
            target,
        )
        return None
    return None if Any in sent else sent


def _log_checked(source: str, target: str, sent: Sequence[Any], executor: Executor) -> None:
    if logger.isEnabledFor(logging.DEBUG):
        pairs = [(str(s), str(t)) for s in sent for t in executor.input_types if executor.accepts(s)]
        logger.debug("Type compatibility validated for edge %r -> %r. Compatible type pairs: %s", source, target, pairs)


def _check_types(edge_groups: Sequence[EdgeGroup], executors: Mapping[str, Executor]) -> None:
    for group in edge_groups:
        if isinstance(group, FanInEdgeGroup):
            target = executors[group.target]
            joined: list[Any] = []
            for s in group.sources:
                sent = _sent(executors, s, group.target)
                if sent is None:
                    joined = []
                    break
                joined.extend(list[t] for t in sent)  # type: ignore[valid-type]
            if joined and not any(target.accepts(hint) for hint in joined):
                raise TypeCompatibilityError(
                    ", ".join(group.sources),
                    group.target,
                    joined,
                    list(target.input_types),
                    f" Fan-in target {group.target!r} receives a list of what {group.sources} send; add a handler "
                    "for list[...] there.",
                )
            if joined:
                _log_checked(", ".join(group.sources), group.target, joined, target)
            continue
        for s, t in group.pairs():
            sent = _sent(executors, s, t)
            if sent is None:
                continue
            if not any(executors[t].accepts(hint) for hint in sent):
                raise TypeCompatibilityError(s, t, sent, list(executors[t].input_types))
            _log_checked(s, t, sent, executors[t])
