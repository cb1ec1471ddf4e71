"""``WorkflowBuilder``: wire executors (or agents) into a validated :class:`Workflow`.

``build()`` rejects graphs that cannot work, naming the executors involved: a missing start executor,
two executors with one id, and what :func:`validate_workflow_graph` refuses (duplicate edges, executors the
start cannot reach, edges whose source sends no type the target accepts, output executors not in the graph).

Agents placed in the graph directly are wrapped in an :class:`AgentExecutor` (one per agent object).
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from .._serialization import type_id
from ..exceptions import ExecutorDuplicationError, ValidationTypeEnum, WorkflowValidationError
from ._checkpoints import CheckpointStorage
from ._edges import (
    Case,
    Default,
    EdgeGroup,
    FanInEdgeGroup,
    FanOutEdgeGroup,
    SingleEdgeGroup,
    SwitchCaseEdgeGroup,
    SwitchCaseEdgeGroupCase,
    SwitchCaseEdgeGroupDefault,
    graph_signature,
)
from ._executor import Executor, FunctionExecutor
from ._tracing import traced_build
from ._validation import validate_workflow_graph
from ._workflow import Workflow

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["WorkflowBuilder"]

Node = Any  # an Executor, an agent (wrapped in an AgentExecutor), or the id of an executor already added


class WorkflowBuilder:
    """Build a workflow graph step by step, then ``build()`` it.

    Args:
        start_executor: The executor (or agent) that receives the workflow input.
        checkpoint_storage: Write a checkpoint after every superstep into this storage.
        max_iterations: The most supersteps one run may take (guards cycles).
        name: The workflow's name (checkpoints and the run store list runs by it).
        description: A human-readable description.
        checkpoint_every: Checkpoint every N supersteps (and always when a run goes idle).
        output_from: Executors whose ``yield_output`` values are workflow outputs, or ``"all"``.
        intermediate_output_from: Executors whose yields become ``intermediate`` events, ``"all"``, or
            ``"all_other"`` (every executor not in ``output_from``). With neither selection every yield is an
            output; with either, an executor in neither is not published (the reference's rules).
        run_store: Mirror every run and its events into this ``agentnb.store.Store``.

    Example:
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor
        >>> @executor(id="double")
        ... async def double(n: int, ctx: WorkflowContext[int]) -> None:
        ...     await ctx.send_message(n * 2)
        >>> @executor(id="report")
        ... async def report(n: int, ctx: WorkflowContext[int, str]) -> None:
        ...     await ctx.yield_output(f"result: {n}")
        >>> workflow = WorkflowBuilder(start_executor=double, name="doubler").add_edge(double, report).build()
        >>> (await workflow.run(21)).get_outputs()  # doctest: +SKIP
        ['result: 42']
    """

    def __init__(
        self,
        start_executor: Node,
        *,
        checkpoint_storage: CheckpointStorage | None = None,
        max_iterations: int = 100,
        name: str | None = None,
        description: str | None = None,
        checkpoint_every: int = 1,
        output_from: Sequence[Node] | Literal["all"] | None = None,
        intermediate_output_from: Sequence[Node] | Literal["all", "all_other"] | None = None,
        run_store: Store | None = None,
        output_executors: Sequence[Node] | None = None,
    ) -> None:
        if output_executors is not None:
            if output_from is not None:
                raise TypeError(
                    "Cannot pass multiple workflow output selection parameters (`output_from`, `output_executors`); "
                    "use `output_from`."
                )
            warnings.warn(
                "`output_executors` is deprecated and will be removed in a future version; use `output_from` instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            output_from = output_executors
        if isinstance(output_from, str) and output_from != "all":
            raise ValueError(f"Unsupported output_from literal {output_from!r}; use 'all' or a list of executors.")
        if isinstance(intermediate_output_from, str) and intermediate_output_from not in ("all", "all_other"):
            raise ValueError(
                f"Unsupported intermediate_output_from literal {intermediate_output_from!r}; use 'all', 'all_other', "
                "or a list of executors."
            )
        # Checked at run time too: notebooks pass whatever is at hand.
        if not isinstance(cast(object, max_iterations), int) or max_iterations < 1:
            raise ValueError(f"max_iterations must be an int >= 1, got {max_iterations!r}.")
        if not isinstance(cast(object, checkpoint_every), int) or checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be an int >= 1, got {checkpoint_every!r}.")
        self._executors: dict[str, Executor] = {}
        self._agent_wrappers: dict[int, Executor] = {}
        self._groups: list[EdgeGroup] = []
        self._start: str | None = None
        self._checkpoint_storage = checkpoint_storage
        self._max_iterations = max_iterations
        self._name = name
        self._description = description
        self._checkpoint_every = checkpoint_every
        self._output_from = output_from
        self._intermediate_output_from = intermediate_output_from
        self._run_store = run_store
        self.set_start_executor(start_executor)

    # -- nodes --------------------------------------------------------------------------------------------
    def _node(self, node: Node) -> str:
        if isinstance(node, str):
            if node not in self._executors:
                raise WorkflowValidationError(
                    f"Unknown executor id {node!r}; add the executor object first (known: {sorted(self._executors)})."
                )
            return node
        if isinstance(node, Executor):
            executor = node
        elif _is_agent(node):
            executor = self._agent_wrappers.get(id(node))
            if executor is None:
                from ._agent_executor import AgentExecutor

                executor = AgentExecutor(node)
                self._agent_wrappers[id(node)] = executor
        elif inspect.iscoroutinefunction(node):
            raise TypeError(
                f"{node.__qualname__} is a plain function; decorate it with @executor to use it in a workflow."
            )
        else:
            raise TypeError(f"Cannot use {node!r} in a workflow: pass an Executor, an @executor function or an agent.")
        if not hasattr(executor, "_extra_specs"):
            raise TypeError(
                f"{type(executor).__name__}.__init__ did not call super().__init__(id); the executor is not set up."
            )
        executor.discover_handlers()  # resolve handler hints now, so mistakes surface at build time
        existing = self._executors.get(executor.id)
        if existing is not None and existing is not executor:
            raise ExecutorDuplicationError(f"Duplicate executor ID '{executor.id}' detected in workflow.")
        self._executors[executor.id] = executor
        return executor.id

    def set_start_executor(self, executor: Node) -> WorkflowBuilder:
        """Set the executor that receives the workflow input."""
        self._start = self._node(executor)
        return self

    def add_executor(self, executor: Node) -> WorkflowBuilder:
        """Register an executor without edges (it must still be reachable from the start)."""
        self._node(executor)
        return self

    # -- edges --------------------------------------------------------------------------------------------
    def _next_id(self, kind: str) -> str:
        return f"{kind}:{len(self._groups)}"

    def add_edge(self, source: Node, target: Node, condition: Callable[[Any], bool] | None = None) -> WorkflowBuilder:
        """Connect ``source`` to ``target``; with ``condition``, only messages for which it holds pass."""
        s, t = self._node(source), self._node(target)
        self._groups.append(SingleEdgeGroup(s, t, condition, id=self._next_id("single")))
        return self

    def add_chain(self, executors: Sequence[Node]) -> WorkflowBuilder:
        """Connect executors in a line: ``a -> b -> c``."""
        if len(executors) < 2:
            raise ValueError(f"add_chain needs at least two executors, got {len(executors)}.")
        ids = [self._node(e) for e in executors]
        for s, t in itertools.pairwise(ids):
            self._groups.append(SingleEdgeGroup(s, t, id=self._next_id("single")))
        return self

    def add_fan_out_edges(self, source: Node, targets: Sequence[Node]) -> WorkflowBuilder:
        """Send every message from ``source`` to all ``targets`` (each that can handle it)."""
        if not targets:
            raise ValueError("add_fan_out_edges needs at least one target.")
        s = self._node(source)
        self._groups.append(FanOutEdgeGroup(s, [self._node(t) for t in targets], id=self._next_id("fan_out")))
        return self

    def add_fan_in_edges(self, sources: Sequence[Node], target: Node) -> WorkflowBuilder:
        """Join ``sources`` into ``target``: it receives a ``list`` of their messages once every source has sent."""
        if not sources:
            raise ValueError("add_fan_in_edges needs at least one source.")
        ids = [self._node(s) for s in sources]
        if len(set(ids)) != len(ids):
            raise WorkflowValidationError(f"add_fan_in_edges lists a source twice: {ids}.")
        self._groups.append(FanInEdgeGroup(ids, self._node(target), id=self._next_id("fan_in")))
        return self

    def add_switch_case_edge_group(self, source: Node, cases: Sequence[Case | Default]) -> WorkflowBuilder:
        """Route each message from ``source`` to the first :class:`Case` that holds, else the :class:`Default`."""
        if not cases:
            raise ValueError("add_switch_case_edge_group needs at least one Case.")
        s = self._node(source)
        entries: list[SwitchCaseEdgeGroupCase | SwitchCaseEdgeGroupDefault] = []
        for i, case in enumerate(cast("Sequence[object]", cases)):  # untyped callers may pass anything
            if isinstance(case, Default):
                if i != len(cases) - 1:
                    raise ValueError("The Default of a switch-case edge group must come last.")
                entries.append(SwitchCaseEdgeGroupDefault(self._node(case.target)))
            elif isinstance(case, Case):
                entries.append(SwitchCaseEdgeGroupCase(case.condition, self._node(case.target)))
            elif isinstance(case, SwitchCaseEdgeGroupCase | SwitchCaseEdgeGroupDefault):
                self._node(case.target_id)
                entries.append(case)
            else:
                raise TypeError(f"Switch-case entries must be Case(...) or Default(...), got {case!r}.")
        self._groups.append(SwitchCaseEdgeGroup(s, entries, id=self._next_id("switch_case")))
        return self

    def add_multi_selection_edge_group(
        self,
        source: Node,
        targets: Sequence[Node],
        selection_func: Callable[[Any, list[str]], Sequence[str]],
    ) -> WorkflowBuilder:
        """Send each message to the targets ``selection_func(message, target_ids)`` returns (ids)."""
        if not targets:
            raise ValueError("add_multi_selection_edge_group needs at least one target.")
        s = self._node(source)
        ids = [self._node(t) for t in targets]
        self._groups.append(FanOutEdgeGroup(s, ids, selection_func, id=self._next_id("multi_selection")))
        return self

    # -- build --------------------------------------------------------------------------------------------
    def _output_selection(self) -> tuple[set[str] | None, set[str] | None]:
        """Which executors' yields are ``output`` and which ``intermediate`` events (``None``: every executor).

        The reference's rules: with neither selection every yield is an output; with either, only the named
        executors publish (``"all"`` names every executor, ``"all_other"`` every one not in ``output_from``).
        """
        chosen, progress = self._output_from, self._intermediate_output_from
        if chosen is None and progress is None:
            return None, None
        # "all" and "all_other" name the executors that declare what they yield, as the reference's do.
        yielding = [k for k, v in self._executors.items() if v.workflow_output_types]
        outputs = yielding if chosen == "all" else self._ids(chosen, "output_from")
        if progress == "all_other":
            intermediate = [k for k in yielding if k not in outputs]
        elif progress == "all":
            intermediate = list(yielding)
        else:
            intermediate = self._ids(progress, "intermediate_output_from")
        if not outputs and not intermediate:
            raise WorkflowValidationError(
                "Explicit workflow output designation must include at least one output or intermediate executor "
                "(or pass neither output_from nor intermediate_output_from to publish every executor's outputs).",
                ValidationTypeEnum.OUTPUT_VALIDATION,
            )
        for kind, ids in (("output", outputs), ("intermediate", intermediate)):
            repeated = sorted({i for i in ids if ids.count(i) > 1})
            if repeated:
                raise WorkflowValidationError(
                    f"Duplicate {kind} executor designation(s): {repeated}", ValidationTypeEnum.OUTPUT_VALIDATION
                )
        return set(outputs), set(intermediate)

    def _ids(self, nodes: Sequence[Node] | str | None, what: str) -> list[str]:
        if nodes is None:
            return []
        if isinstance(nodes, str):
            raise ValueError(f"{what} must be a list of executors or 'all'/'all_other', got {nodes!r}.")
        return [self._known(n, what) for n in nodes]

    def _known(self, node: Node, what: str) -> str:
        """The id of an executor already in the graph; naming one that is not is an error (as the reference)."""
        if isinstance(node, str):
            executor_id = node
        elif isinstance(node, Executor):
            executor_id = node.id
        else:
            wrapper = self._agent_wrappers.get(id(node))
            executor_id = wrapper.id if wrapper is not None else str(getattr(node, "name", None) or node)
            if wrapper is None:
                executor_id = f"{executor_id} (an agent not added to the graph)"
        if self._executors.get(executor_id) is None or (
            isinstance(node, Executor) and self._executors[executor_id] is not node
        ):
            kind = "Output" if what == "output_from" else "Intermediate"
            raise WorkflowValidationError(
                f"{kind} executor {executor_id!r} is not present in the workflow graph (named in {what}; "
                f"executors: {sorted(self._executors)}).",
                ValidationTypeEnum.OUTPUT_VALIDATION,
            )
        return executor_id

    @traced_build
    def build(self) -> Workflow:
        """Validate the graph and return the :class:`Workflow`.

        Raises:
            WorkflowValidationError: The graph is invalid; the message names the executors involved.
        """
        if self._start is None:  # pragma: no cover - the constructor sets it
            raise WorkflowValidationError(
                "The workflow has no start executor; pass WorkflowBuilder(start_executor=...)."
            )
        executors = self._executors
        start = self._start
        if not executors[start].handler_specs:
            raise WorkflowValidationError(f"Start executor {start!r} has no @handler, so it cannot take any input.")
        output_from, intermediate = self._output_selection()
        validate_workflow_graph(
            self._groups, executors, executors[start], sorted(output_from or ()), sorted(intermediate or ())
        )
        ordered = {start: executors[start], **{k: v for k, v in executors.items() if k != start}}
        signature = graph_signature(start, {k: _executor_kind(v) for k, v in ordered.items()}, self._groups)
        return Workflow(
            executors=ordered,
            edge_groups=self._groups,
            start_executor_id=start,
            name=self._name or f"workflow-{signature[:8]}",
            description=self._description,
            max_iterations=self._max_iterations,
            checkpoint_storage=self._checkpoint_storage,
            checkpoint_every=self._checkpoint_every,
            output_from=output_from,
            intermediate_output_from=intermediate,
            run_store=self._run_store,
            graph_signature=signature,
        )


def _is_agent(node: Any) -> bool:
    from .._agents import SupportsAgentRun

    return not inspect.isclass(node) and isinstance(node, SupportsAgentRun)


def _executor_kind(executor: Executor) -> str:
    # A class that took over another's place in a graph and restores its saved state names that class in
    # ``signature_kind``, so checkpoints written before the change keep resuming.
    declared = getattr(type(executor), "signature_kind", None)
    kind = declared if isinstance(declared, str) else type_id(type(executor))
    if isinstance(executor, FunctionExecutor):
        kind += "/" + str(getattr(executor.func, "__qualname__", ""))
    inner = getattr(executor, "workflow", None)
    if isinstance(inner, Workflow):
        # A nested workflow's structure is part of its node: a checkpoint of the outer graph must not resume
        # over a changed inner one (its paused state would be restored into different executors).
        kind += "/" + inner.graph_signature
    return kind
