"""``WorkflowFactory``: build an ordinary agentnb :class:`~agentnb.workflows.Workflow` from declarative YAML.

Reads the reference's declarative workflow format: either ``actions:`` at the top (with ``name``,
``description``, ``inputs``) or ``kind: Workflow`` with a ``trigger`` holding the actions. Every action
becomes one executor and the control flow (If, ConditionGroup, GotoAction, Foreach, BreakLoop, ContinueLoop)
becomes edges, so the result checkpoints, resumes, travels in time and draws like any workflow built in Python.

Nothing in the file reaches outside the process on its own: agents, functions, HTTP and MCP come from
what the caller passes (``agents=``, ``bindings=``, ``http_request_handler=``, ``mcp_tool_handler=``), and
``=Env.NAME`` reads only ``configuration=``. Every mistake found while building names its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..exceptions import AgentnbError, DeclarativeWorkflowError
from ._actions import (
    ConditionExecutor,
    DeclarativeActionExecutor,
    EndExecutor,
    ForeachExecutor,
    GotoExecutor,
    HttpRequestExecutor,
    HttpRequestHandler,
    InvokeAgentExecutor,
    InvokeFunctionToolExecutor,
    InvokeMcpToolExecutor,
    LoopControlExecutor,
    MCPToolHandler,
    QuestionExecutor,
    SendActivityExecutor,
    Services,
    SetValueExecutor,
    StartExecutor,
)
from ._data_actions import (
    ClearAllVariablesExecutor,
    CreateConversationExecutor,
    EditTableExecutor,
    ParseValueExecutor,
    ResetVariableExecutor,
    SetMultipleVariablesExecutor,
)
from ._expressions import ExpressionError, is_expression, parse
from ._yaml import line_of, locate, read_definition

if TYPE_CHECKING:
    from ..workflows import CheckpointStorage, Workflow
    from ._loader import AgentFactory

__all__ = ["ACTION_KINDS", "WorkflowFactory"]

#: Action kind -> executor class. The kinds the reference's samples use that need no cloud service.
ACTION_KINDS: dict[str, type[DeclarativeActionExecutor]] = {
    "SetValue": SetValueExecutor,
    "SetVariable": SetValueExecutor,
    "SetTextVariable": SetValueExecutor,
    "SendActivity": SendActivityExecutor,
    "If": ConditionExecutor,
    "ConditionGroup": ConditionExecutor,
    "GotoAction": GotoExecutor,
    "Foreach": ForeachExecutor,
    "EndWorkflow": EndExecutor,
    "EndConversation": EndExecutor,
    "Question": QuestionExecutor,
    "RequestExternalInput": QuestionExecutor,
    "InvokeAzureAgent": InvokeAgentExecutor,
    "InvokeAgent": InvokeAgentExecutor,
    "InvokeFunctionTool": InvokeFunctionToolExecutor,
    "HttpRequestAction": HttpRequestExecutor,
    "InvokeMcpTool": InvokeMcpToolExecutor,
    "SetMultipleVariables": SetMultipleVariablesExecutor,
    "ResetVariable": ResetVariableExecutor,
    "ClearAllVariables": ClearAllVariablesExecutor,
    "ParseValue": ParseValueExecutor,
    "EditTable": EditTableExecutor,
    "EditTableV2": EditTableExecutor,
    "CreateConversation": CreateConversationExecutor,
    "BreakLoop": LoopControlExecutor,
    "ContinueLoop": LoopControlExecutor,
}
_START_ID = "workflow_start"
_TOP_KEYS = frozenset(
    {"kind", "name", "description", "inputs", "actions", "trigger", "maxTurns", "id", "displayName", "agents"}
)


class _Compiler:
    """Turns the action tree into executors and the edges between them."""

    def __init__(self, factory: WorkflowFactory, services: Services, source: str | None) -> None:
        self.factory = factory
        self.services = services
        self.source = source
        self.executors: dict[str, DeclarativeActionExecutor] = {}
        self.edges: list[tuple[str, str]] = []
        self.gotos: list[tuple[GotoExecutor, Mapping[str, Any]]] = []
        self.loops: list[ForeachExecutor] = []  # the Foreach actions whose bodies are being compiled, innermost last
        self.counter = 0

    def fail(self, where: Any, key: str | int | None, message: str) -> DeclarativeWorkflowError:
        return DeclarativeWorkflowError(message, source=locate(where) or self.source, line=line_of(where, key))

    def sequence(self, parent: Mapping[str, Any], key: str, after: str | None) -> str | None:
        raw = parent.get(key)
        if raw is None:
            return after
        if not isinstance(raw, Sequence) or isinstance(raw, str):
            raise self.fail(parent, key, f"{key} must be a list of actions")
        actions = cast(Sequence[Any], raw)
        entry = after
        for index in reversed(range(len(actions))):
            item = actions[index]
            if not isinstance(item, Mapping):
                raise self.fail(raw, index, "each action must be a mapping with a kind")
            entry = self.action(cast("Mapping[str, Any]", item), entry)
        return entry

    def _id(self, spec: Mapping[str, Any], kind: str) -> str:
        given = spec.get("id")
        if given is None:
            self.counter += 1
            given = f"{re.sub(r'(?<!^)(?=[A-Z])', '_', kind).lower()}_{self.counter}"
        action_id = str(given)
        if action_id in self.executors or action_id == _START_ID:
            raise self.fail(spec, "id", f"the action id {action_id!r} is used twice")
        return action_id

    def _check_expressions(self, spec: Mapping[str, Any]) -> None:
        for key, value in spec.items():
            if is_expression(value):
                try:
                    parse(cast(str, value))
                except ExpressionError as e:
                    raise self.fail(spec, key, str(e)) from e

    def action(self, spec: Mapping[str, Any], after: str | None) -> str:
        kind = spec.get("kind")
        cls = ACTION_KINDS.get(str(kind))
        if cls is None:
            raise self.fail(
                spec, "kind" if "kind" in spec else None, f"unknown action kind {kind!r}; known: {sorted(ACTION_KINDS)}"
            )
        kind = str(kind)
        action_id = self._id(spec, kind)
        self._check_expressions(spec)
        self._check_resources(spec, kind)
        executor = cls(action_id, spec, self.services)
        self.executors[action_id] = executor
        targets: list[str | None] = []
        if isinstance(executor, ConditionExecutor):
            if kind == "If":
                if "condition" not in spec:
                    raise self.fail(spec, None, "an If action needs a condition")
                executor.branches = [(spec["condition"], self.sequence(spec, "then", after))]
                executor.else_target = self.sequence(spec, "else", after)
            else:
                conditions = spec.get("conditions")
                if not isinstance(conditions, Sequence) or isinstance(conditions, str):
                    raise self.fail(spec, "conditions", "a ConditionGroup needs a list of conditions")
                for index, branch in enumerate(cast(Sequence[Any], conditions)):
                    if not isinstance(branch, Mapping) or "condition" not in branch:
                        raise self.fail(conditions, index, "each condition needs a condition and actions")
                    mapping = cast("Mapping[str, Any]", branch)
                    self._check_expressions(mapping)
                    executor.branches.append((mapping["condition"], self.sequence(mapping, "actions", after)))
                executor.else_target = self.sequence(spec, "elseActions", after)
            targets = [entry for _, entry in executor.branches] + [executor.else_target]
        elif isinstance(executor, GotoExecutor):
            self.gotos.append((executor, spec))
        elif isinstance(executor, ForeachExecutor):
            executor.next_id = after
            self.loops.append(executor)
            try:
                executor.body = self.sequence(spec, "actions", action_id)
            finally:
                self.loops.pop()
            targets = [executor.body, after]
        elif isinstance(executor, LoopControlExecutor):
            if not self.loops:
                raise self.fail(spec, "kind", f"{kind} can only be used inside a Foreach")
            executor.loop = self.loops[-1]
            targets = [executor.loop.id if kind == "ContinueLoop" else executor.loop.next_id]
        elif isinstance(executor, EndExecutor):
            pass
        else:
            executor.next_id = after
            targets = [after]
        for target in targets:
            if target is not None and (action_id, target) not in self.edges:
                self.edges.append((action_id, target))
        return action_id

    def _check_resources(self, spec: Mapping[str, Any], kind: str) -> None:
        services = self.services
        if kind in ("InvokeAzureAgent", "InvokeAgent"):
            agent = spec.get("agent")
            name = cast("Mapping[str, Any]", agent).get("name") if isinstance(agent, Mapping) else agent
            if not isinstance(name, str) or not name:
                raise self.fail(spec, "agent", "the action needs agent.name")
            if not is_expression(name) and name not in services.agents:
                raise self.fail(spec, "agent", f"agent {name!r} is not in agents= (have {sorted(services.agents)})")
            input_spec = spec.get("input")
            loop = (
                cast("Mapping[str, Any]", input_spec).get("externalLoop") if isinstance(input_spec, Mapping) else None
            )
            if loop is not None and not (isinstance(loop, Mapping) and "when" in loop):
                raise self.fail(input_spec, "externalLoop", "externalLoop needs a when condition")
        elif kind == "InvokeFunctionTool":
            name = spec.get("functionName")
            if isinstance(name, str) and not is_expression(name) and name not in services.bindings:
                raise self.fail(
                    spec, "functionName", f"function {name!r} is not in bindings= (have {sorted(services.bindings)})"
                )
        elif kind == "HttpRequestAction" and services.http_request_handler is None:
            raise self.fail(
                spec, "kind", "HttpRequestAction needs http_request_handler=; a workflow file cannot reach the network"
            )
        elif kind == "InvokeMcpTool" and services.mcp_tool_handler is None:
            raise self.fail(
                spec, "kind", "InvokeMcpTool needs mcp_tool_handler=; a workflow file cannot reach MCP servers"
            )

    def resolve_gotos(self) -> None:
        for executor, spec in self.gotos:
            target = spec.get("actionId")
            if not isinstance(target, str) or target not in self.executors:
                raise self.fail(spec, "actionId", f"GotoAction points at {target!r}, which is no action's id")
            executor.target = target
            self.edges.append((executor.id, target))


class WorkflowFactory:
    """Build workflows from declarative YAML (a file, a string or a dict).

    Args:
        agents: Agents the workflow may invoke, by the name the YAML uses.
        bindings: Functions ``InvokeFunctionTool`` may call, by name.
        http_request_handler: Sends ``HttpRequestAction`` requests (none: such workflows are refused).
        mcp_tool_handler: Calls ``InvokeMcpTool`` tools (none: such workflows are refused).
        configuration: The values ``=Env.NAME`` may read (the process environment is never read).
        checkpoint_storage: Where the built workflows write checkpoints.
        max_iterations: The superstep limit (default: ``maxTurns`` from the file, else 100).

    Example:
        ```python
        from agentnb.declarative import WorkflowFactory

        workflow = WorkflowFactory().create_workflow_from_yaml('''
        name: greet
        actions:
          - kind: SetValue
            path: Local.name
            value: =If(IsBlank(inputs.name), "World", inputs.name)
          - kind: SendActivity
            activity:
              text: =Concat("Hello, ", Local.name, "!")
        ''')
        print((await workflow.run({"name": "Ada"})).get_outputs())  # ['Hello, Ada!']
        ```
    """

    def __init__(
        self,
        *,
        agents: Mapping[str, Any] | None = None,
        bindings: Mapping[str, Callable[..., Any]] | None = None,
        http_request_handler: HttpRequestHandler | None = None,
        mcp_tool_handler: MCPToolHandler | None = None,
        configuration: Mapping[str, str] | None = None,
        checkpoint_storage: CheckpointStorage | None = None,
        max_iterations: int | None = None,
        agent_factory: AgentFactory | None = None,
    ) -> None:
        self.agents: dict[str, Any] = dict(agents or {})
        self.agent_factory = agent_factory
        self.bindings: dict[str, Callable[..., Any]] = dict(bindings or {})
        self.http_request_handler = http_request_handler
        self.mcp_tool_handler = mcp_tool_handler
        self.configuration: dict[str, str] = dict(configuration or {})
        self.checkpoint_storage = checkpoint_storage
        self.max_iterations = max_iterations

    def register_tool(self, name: str, function: Callable[..., Any]) -> WorkflowFactory:
        """Let ``InvokeFunctionTool`` actions call ``function`` as ``name``; returns the factory for chaining."""
        if not callable(function):
            raise TypeError(f"register_tool needs a callable, got {type(function).__name__}")
        self.bindings[name] = function
        return self

    def register_agent(self, name: str, agent: Any) -> WorkflowFactory:
        """Let ``InvokeAzureAgent`` actions run ``agent`` as ``name``; returns the factory for chaining."""
        self.agents[name] = agent
        return self

    def create_workflow_from_yaml_path(self, yaml_path: str | Path) -> Workflow:
        """Build the workflow a YAML file defines; errors name the file and line."""
        path = Path(yaml_path)
        if not path.is_file():
            raise DeclarativeWorkflowError(f"YAML file not found at path: {path}")
        return self._create(path, path.parent)

    def create_workflow_from_yaml(self, yaml_content: str, base_path: Path | None = None) -> Workflow:
        """Build the workflow a YAML string defines (``base_path``: where its agent ``file:`` entries live)."""
        if not isinstance(cast(object, yaml_content), str):
            raise TypeError(f"yaml_content must be a str, got {type(yaml_content).__name__}")
        return self._create(yaml_content, base_path)

    def create_workflow_from_definition(
        self, workflow_def: Mapping[str, Any], base_path: Path | None = None
    ) -> Workflow:
        """Build the workflow a dict (parsed YAML) defines."""
        return self._create(workflow_def, base_path)

    def _inline_agents(self, data: Mapping[str, Any], source: str | None, base: Path | None) -> dict[str, Any]:
        """The workflow's own ``agents:`` (inline ``kind: Prompt`` definitions or ``file:`` references), built
        with ``agent_factory``; agents passed to the factory win over them, as in the reference."""
        raw = data.get("agents")
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            raise DeclarativeWorkflowError(
                "agents must map names to definitions", source=source, line=line_of(data, "agents")
            )
        agents: dict[str, Any] = {}
        factory = self.agent_factory
        for name, definition in cast("Mapping[str, Any]", raw).items():
            if name in self.agents:
                continue
            line = line_of(raw, name)
            if not isinstance(definition, Mapping):
                raise DeclarativeWorkflowError(f"agent {name!r} needs a definition", source=source, line=line)
            spec = cast("Mapping[str, Any]", definition)
            if factory is None:
                from ..local import default_chat_client
                from ._loader import AgentFactory

                factory = self.agent_factory = AgentFactory(client=default_chat_client())
            try:
                if "file" in spec:
                    agents[str(name)] = factory.create_agent_from_yaml_path(self._agent_file(spec["file"], base))
                elif "kind" in spec:
                    agents[str(name)] = factory.create_agent_from_dict(spec)
                else:
                    raise DeclarativeWorkflowError(
                        f"agent {name!r}: expected an inline definition (kind: Prompt) or file:; a connection-based "
                        "agent must be passed in agents=",
                        source=source,
                        line=line,
                    )
            except DeclarativeWorkflowError:
                raise
            except (AgentnbError, ValueError, TypeError) as e:
                raise DeclarativeWorkflowError(f"agent {name!r}: {e}", source=source, line=line) from e
        return agents

    @staticmethod
    def _agent_file(file: Any, base: Path | None) -> Path:
        """An agent file named by a workflow: relative, and inside the workflow's own folder."""
        if base is None:
            raise ValueError("a file: reference needs the workflow's folder (load it from a path or pass base_path)")
        root = base.resolve()
        path = (root / str(file)).resolve()
        if not path.is_relative_to(root):
            raise ValueError(f"{file!r} is outside the workflow's folder {root}")
        return path

    def _create(self, value: str | Path | Mapping[str, Any], base: Path | None = None) -> Workflow:
        from ..workflows import WorkflowBuilder

        data, text, source = read_definition(value, what="workflow")
        for key in data:
            if key not in _TOP_KEYS:
                raise DeclarativeWorkflowError(
                    f"unknown key {key!r} in the workflow; expected one of {sorted(_TOP_KEYS)}",
                    source=locate(data) or source,
                    line=line_of(data, key),
                )
        body: Mapping[str, Any] = data
        if "trigger" in data:
            trigger = data["trigger"]
            if not isinstance(trigger, Mapping):
                raise DeclarativeWorkflowError(
                    "trigger must be a mapping", source=source, line=line_of(data, "trigger")
                )
            body = cast("Mapping[str, Any]", trigger)
        if "actions" not in body:
            raise DeclarativeWorkflowError("the workflow has no actions", source=source, line=line_of(body, None))
        services = Services(
            agents={**self._inline_agents(data, source, base), **self.agents},
            bindings=self.bindings,
            http_request_handler=self.http_request_handler,
            mcp_tool_handler=self.mcp_tool_handler,
            env=self.configuration,
        )
        compiler = _Compiler(self, services, source)
        first = compiler.sequence(body, "actions", None)
        compiler.resolve_gotos()
        name = str(
            data.get("name") or body.get("id") or (Path(source).parent.name if source else "declarative_workflow")
        )
        max_turns = data.get("maxTurns")
        start = StartExecutor(_START_ID, first, self.configuration)
        builder = WorkflowBuilder(
            start,
            name=name,
            description=cast("str | None", data.get("description")),
            checkpoint_storage=self.checkpoint_storage,
            max_iterations=self.max_iterations or (max_turns if isinstance(max_turns, int) else 100),
        )
        if first is not None:
            builder.add_edge(start, compiler.executors[first])
        for executor in compiler.executors.values():
            builder.add_executor(executor)
        for source_id, target_id in compiler.edges:
            builder.add_edge(compiler.executors[source_id], compiler.executors[target_id])
        workflow = builder.build()
        workflow.declarative = {"kind": "workflow", "source": source, "yaml": text}  # type: ignore[attr-defined]
        return workflow
