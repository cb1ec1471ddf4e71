"""Edge runners: an edge group bound to the executors of its graph, the unit a run delivers messages through.

A :class:`Workflow` makes one :class:`EdgeRunner` per edge group (:func:`create_edge_runner`) and its runner
routes every message a source sends through that source's edge runners (``edge_runner.route(...)``): for a
single unconditional edge the runner checks the bound target executor itself, without asking the run, and
every other group routes as :meth:`EdgeGroup.route` does. ``route`` is an attribute holding the chosen call,
so a run pays one call per group and message, as when it called the group directly.

:meth:`EdgeRunner.send_message` is the reference's standalone use: deliver one message through the group now
and run the executors that received it, with their sends and events going to a :class:`RunnerContext`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._edges import EdgeGroup, Routed, Router, SingleEdgeGroup, WorkflowMessage

if TYPE_CHECKING:
    from ._executor import Executor
    from ._runner import Runner
    from ._runner_context import RunnerContext

__all__ = ["EdgeRunner", "create_edge_runner"]

RouteCall = Callable[[Any, str, "str | None", Router], Routed]


class EdgeRunner:
    """One edge group bound to its graph's executors: routes a source's messages to the targets that take them.

    ``route(data, source, target, router)`` is what a run calls for each message (whether the group took it,
    or an awaitable of that); ``send_message`` delivers one message on its own (see the module docstring).

    Example:
        >>> from agentnb.workflows import FanOutEdgeGroup
        >>> create_edge_runner(FanOutEdgeGroup("a", ["b", "c"]), {}).edge_group.targets
        ['b', 'c']
    """

    __slots__ = ("_standalone", "edge_group", "executors", "route")

    def __init__(self, edge_group: EdgeGroup, executors: dict[str, Executor]) -> None:
        self.edge_group = edge_group
        self.executors = executors
        self.route: RouteCall = edge_group.route
        self._standalone: Runner | None = None

    @property
    def source_ids(self) -> list[str]:
        """The executors whose messages this runner routes."""
        return self.edge_group.sources

    async def send_message(
        self, message: WorkflowMessage, state: dict[str, Any] | None = None, ctx: RunnerContext | None = None
    ) -> bool:
        """Deliver ``message`` through this group now and run the executors that receive it.

        Their messages go to ``ctx`` (``ctx.send_message``), their events to ``ctx.add_event`` and their
        shared-state writes into ``state``. Returns whether the group took the message (a fan-in group takes
        every message of its sources and runs its target once all have sent).

        Raises:
            WorkflowRunError: A receiving executor failed.
        """
        from ._runner import Runner  # the runner imports the workflow, which builds edge runners

        runner = self._standalone
        if runner is None:
            runner = self._standalone = Runner([self.edge_group], self.executors, state, ctx)
        else:
            runner.bind(state, ctx)
        return await runner.deliver_through(self, message)


class SingleEdgeRunner(EdgeRunner):
    """A single edge: without a condition, the bound target executor is asked directly (a chain's every step)."""

    __slots__ = ("_target", "_target_id")

    def __init__(self, edge_group: SingleEdgeGroup, executors: dict[str, Executor]) -> None:
        super().__init__(edge_group, executors)
        self._target_id = edge_group.targets[0]
        self._target = executors.get(self._target_id)
        if edge_group.condition is None and self._target is not None:
            self.route = self._unconditional

    def _unconditional(self, data: Any, source: str, target: str | None, router: Router) -> Routed:
        only = self._target_id
        if target is not None and target != only:
            return False
        assert self._target is not None
        if not self._target.can_handle(data):
            return False
        router.deliver(only, source, data)
        return True


def create_edge_runner(edge_group: EdgeGroup, executors: dict[str, Executor]) -> EdgeRunner:
    """The edge runner for ``edge_group`` over ``executors`` (what a workflow builds for each of its groups)."""
    if isinstance(edge_group, SingleEdgeGroup):
        return SingleEdgeRunner(edge_group, executors)
    return EdgeRunner(edge_group, executors)
