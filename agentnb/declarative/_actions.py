"""The executors a declarative workflow is made of: one per action, plus the entry that reads the inputs.

The variables (``Local.*``, ``Workflow.Inputs.*``, ``Workflow.Outputs.*``, ``System.*``) live in the
workflow's shared state under one key, so they are checkpointed, restored and time-travelled with the
run like any other state. Actions run one per superstep; each passes a :class:`DeclarativeStep` to the
action it chose next, along an edge the factory drew, so the graph the DevUI shows is the control flow.
"""

from __future__ import annotations

import copy
import inspect
import json
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from .._serialization import register_type
from ..exceptions import (
    DeclarativeActionError,
    MCPError,
    ServiceConnectionError,
    ServiceTimeoutError,
    ToolExecutionError,
)
from ..workflows import Executor, WorkflowContext, handler, response_handler
from ._expressions import ExpressionError, evaluate, is_expression, truthy

__all__ = [
    "DeclarativeStep",
    "ExternalInputRequest",
    "ExternalInputResponse",
    "HttpRequestHandler",
    "HttpRequestInfo",
    "HttpRequestResult",
    "MCPToolHandler",
    "MCPToolInvocation",
    "MCPToolResult",
    "ToolApprovalRequest",
    "ToolApprovalResponse",
]

STATE_KEY = "declarative"
_TEXT_INPUTS = ("text", "input", "userInput", "message")  # the input fields that start the conversation
_SCOPES = {"local": "Local", "workflow": "Workflow", "system": "System", "inputs": "Inputs", "env": "Env"}


@dataclass
class DeclarativeStep:
    """The token passed from one action to the next (``loop`` carries a Foreach's position)."""

    source: str = ""


@dataclass
class ExternalInputRequest:
    """A Question or RequestExternalInput action, or an agent's ``externalLoop``, waits for this answer
    (``workflow.run(responses=...)``). For an agent's loop ``message`` is what the agent said and
    ``request_type`` is ``"agent_external_input"``."""

    request_id: str
    message: str
    request_type: str = "external"
    metadata: dict[str, Any] = field(default_factory=lambda: cast(dict[str, Any], {}))


@dataclass
class ExternalInputResponse:
    """An answer to an :class:`ExternalInputRequest` (a plain ``str`` answer works too)."""

    user_input: str
    value: Any = None


@dataclass
class ToolApprovalRequest:
    """An InvokeFunctionTool or InvokeMcpTool action with ``requireApproval: true`` waits for this answer.

    ``function_name`` and ``arguments`` are what will run once approved: the call is made from the request,
    so what a person approved is exactly what runs.
    """

    request_id: str
    function_name: str
    arguments: dict[str, Any]


@dataclass
class ToolApprovalResponse:
    """The answer to a :class:`ToolApprovalRequest`; a rejected call does not run."""

    approved: bool
    reason: str | None = None


#: What an :class:`ExternalInputRequest` takes as its answer: plain text, or the reference's response object.
_ANSWER_TYPE: Any = str | ExternalInputResponse


@dataclass
class HttpRequestInfo:
    """What an HttpRequestAction asks the caller's ``http_request_handler`` to send.

    ``body`` is the evaluated value (text, or data a handler sends as JSON); ``query_parameters`` come from the
    action's ``queryParameters`` and are appended to ``url``; ``timeout_ms`` from ``requestTimeoutInMilliseconds``.
    """

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))
    body: Any = None
    query_parameters: dict[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))
    timeout_ms: int | None = None


@dataclass
class HttpRequestResult:
    """What the caller's ``http_request_handler`` got back.

    ``body`` is what the workflow stores (the default handler parses JSON and keeps other text as text);
    ``text`` is the decoded body as received, when the handler keeps it.
    """

    status_code: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))
    text: str | None = None

    @property
    def is_success_status_code(self) -> bool:
        """Whether the status is 2xx (a handler returns other statuses as results, not errors)."""
        return 200 <= self.status_code < 300


@dataclass
class MCPToolInvocation:
    """What an InvokeMcpTool action asks the caller's ``mcp_tool_handler`` to call (``headers`` from the
    action's ``headers``, for example an ``Authorization`` header)."""

    server_url: str
    tool_name: str
    arguments: dict[str, Any]
    server_label: str | None = None
    headers: dict[str, str] = field(default_factory=lambda: cast(dict[str, str], {}))


@dataclass
class MCPToolResult:
    """What the caller's ``mcp_tool_handler`` returned (``is_error`` marks a failed call)."""

    content: Any
    is_error: bool = False


class HttpRequestHandler(Protocol):
    """The caller's way out to HTTP; the only one a workflow file has."""

    def __call__(self, request: HttpRequestInfo, /) -> Awaitable[HttpRequestResult] | HttpRequestResult: ...


class MCPToolHandler(Protocol):
    """The caller's way out to MCP servers; the only one a workflow file has."""

    def __call__(self, invocation: MCPToolInvocation, /) -> Awaitable[MCPToolResult] | MCPToolResult: ...


for _cls in (
    DeclarativeStep,
    ExternalInputRequest,
    ExternalInputResponse,
    HttpRequestInfo,
    HttpRequestResult,
    MCPToolInvocation,
    MCPToolResult,
    ToolApprovalRequest,
    ToolApprovalResponse,
):
    register_type(_cls, f"agentnb.declarative.{_cls.__name__}")


# -- variables ----------------------------------------------------------------------------------------------
class Scopes:
    """The workflow's variables, read and written by dotted paths, and expressions evaluated over them."""

    def __init__(self, data: Mapping[str, Any], env: Mapping[str, str]) -> None:
        self.data: dict[str, Any] = copy.deepcopy(dict(data))
        self.env = env

    @staticmethod
    def initial(inputs: Any, conversation_id: str) -> dict[str, Any]:
        inputs_map: dict[str, Any] = (
            dict(cast("Mapping[str, Any]", inputs)) if isinstance(inputs, Mapping) else {"input": inputs}
        )
        if isinstance(inputs, str):
            inputs_map["text"] = inputs
        first = next((inputs_map[k] for k in _TEXT_INPUTS if inputs_map.get(k)), "")
        text = inputs if isinstance(inputs, str) else str(first)
        conversation = [{"role": "user", "text": text}] if text else []
        return {
            "Local": {},
            "Workflow": {"Inputs": inputs_map, "Outputs": {}},
            "System": {
                "ConversationId": conversation_id,
                "LastMessage": {"Text": text, "Role": "user"},
                "Conversation": conversation,
            },
        }

    def _path(self, path: Sequence[str]) -> list[str]:
        if not path:
            raise ExpressionError("empty variable path")
        head = _SCOPES.get(path[0].lower(), path[0])
        rest = list(path[1:])
        if head == "Inputs":
            return ["Workflow", "Inputs", *rest]
        if head == "Workflow" and rest:
            rest[0] = {"inputs": "Inputs", "outputs": "Outputs"}.get(rest[0].lower(), rest[0])
        return [head, *rest]

    def get(self, path: Sequence[str]) -> Any:
        parts = self._path(path)
        if parts[0] == "Env":
            return self.env.get(parts[1]) if len(parts) == 2 else None
        node: Any = self.data
        for part in parts:
            if isinstance(node, Mapping):
                mapping = cast("Mapping[str, Any]", node)
                node = mapping.get(part, mapping.get(part[:1].lower() + part[1:], mapping.get(part.lower())))
            else:
                return None
        return node

    def set(self, dotted: str, value: Any) -> None:
        parts = self._path(dotted.lstrip("=").split("."))
        if parts[0] not in ("Local", "Workflow", "System") or len(parts) < 2:
            raise ExpressionError(f"cannot assign to {dotted!r}; use Local.name or Workflow.Outputs.name")
        node: dict[str, Any] = self.data
        for part in parts[:-1]:
            child: Any = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ExpressionError(f"cannot assign into {dotted!r}: {part} is not a record")
            node = cast(dict[str, Any], child)
        node[parts[-1]] = _plain(value)

    def eval(self, value: Any) -> Any:
        """``value`` with every ``=expression`` in it evaluated (mappings and lists recursively)."""
        if is_expression(value):
            return evaluate(cast(str, value), self.get)
        if isinstance(value, Mapping):
            return {str(k): self.eval(v) for k, v in cast("Mapping[str, Any]", value).items()}
        if isinstance(value, list):
            return [self.eval(v) for v in cast(list[Any], value)]
        return value

    def add_message(self, role: str, text: str) -> None:
        system = self.data.setdefault("System", {})
        system.setdefault("Conversation", []).append({"role": role, "text": text})
        system["LastMessage"] = {"Text": text, "Role": role}


def _plain(value: Any) -> Any:
    """A JSON-safe copy of ``value`` (variables are checkpointed as JSON)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        text = getattr(value, "text", None)
        return text if isinstance(text, str) else str(value)


# -- executors ----------------------------------------------------------------------------------------------
class DeclarativeActionExecutor(Executor):
    """One action of a declarative workflow; ``spec`` is its YAML mapping, ``next_id`` the action after it."""

    def __init__(self, id: str, spec: Mapping[str, Any], services: Services) -> None:
        super().__init__(id)
        self.spec = spec
        self.kind = str(spec.get("kind"))
        self.services = services
        self.next_id: str | None = None

    def scopes(self, ctx: WorkflowContext[Any, Any]) -> Scopes:
        return Scopes(ctx.get_state(STATE_KEY) or {}, self.services.env)

    def save(self, ctx: WorkflowContext[Any, Any], scopes: Scopes) -> None:
        ctx.set_state(STATE_KEY, scopes.data)

    def fail(self, message: str) -> DeclarativeActionError:
        return DeclarativeActionError(message, action_id=self.id)

    def value(self, scopes: Scopes, key: str, default: Any = None) -> Any:
        try:
            return scopes.eval(self.spec.get(key, default))
        except ExpressionError as e:
            raise self.fail(f"{key}: {e}") from e

    async def go(self, ctx: WorkflowContext[Any, Any], target: str | None) -> None:
        if target is not None:
            await ctx.send_message(DeclarativeStep(self.id), target_id=target)

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        """Do the action; return the id of the action to run next (``None`` ends this path)."""
        raise NotImplementedError  # pragma: no cover

    @handler
    async def run(self, step: DeclarativeStep, ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        scopes = self.scopes(ctx)
        target = await self.act(scopes, ctx)
        self.save(ctx, scopes)
        await self.go(ctx, target)


class Services:
    """What the caller lent the workflow: agents, functions, HTTP and MCP handlers, the ``Env`` values."""

    def __init__(
        self,
        *,
        agents: Mapping[str, Any],
        bindings: Mapping[str, Callable[..., Any]],
        http_request_handler: HttpRequestHandler | None,
        mcp_tool_handler: MCPToolHandler | None,
        env: Mapping[str, str],
    ) -> None:
        self.agents = dict(agents)
        self.bindings = dict(bindings)
        self.http_request_handler = http_request_handler
        self.mcp_tool_handler = mcp_tool_handler
        self.env = dict(env)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class StartExecutor(Executor):
    """Reads the run's input into ``Workflow.Inputs`` and starts the first action."""

    def __init__(self, id: str, first: str | None, env: Mapping[str, str]) -> None:
        super().__init__(id)
        self.first = first
        self.env = env

    async def _begin(self, inputs: Any, ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        ctx.set_state(STATE_KEY, Scopes.initial(inputs, ctx.run_id))
        if self.first is not None:
            await ctx.send_message(DeclarativeStep(self.id), target_id=self.first)

    @handler
    async def from_mapping(self, inputs: dict[str, Any], ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        await self._begin(inputs, ctx)

    @handler
    async def from_text(self, text: str, ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        await self._begin(text, ctx)


class SetValueExecutor(DeclarativeActionExecutor):
    """SetValue / SetVariable / SetTextVariable: ``path`` (or ``variable``) = ``value``."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        target = self.spec.get("path") or self.spec.get("variable")
        value = self.value(scopes, "value")
        if self.kind == "SetTextVariable":
            value = "" if value is None else str(value)
        try:
            scopes.set(str(target), value)
        except ExpressionError as e:
            raise self.fail(str(e)) from e
        return self.next_id


class SendActivityExecutor(DeclarativeActionExecutor):
    """SendActivity: publish a message as a workflow output (and add it to the conversation)."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        activity = self.spec.get("activity")
        raw = cast("Mapping[str, Any]", activity).get("text") if isinstance(activity, Mapping) else activity
        text = scopes.eval(raw) if not is_expression(raw) else self._eval_text(scopes, cast(str, raw))
        if text is not None and text != "":
            await ctx.yield_output(str(text))
            scopes.add_message("assistant", str(text))
        return self.next_id

    def _eval_text(self, scopes: Scopes, raw: str) -> Any:
        try:
            return scopes.eval(raw)
        except ExpressionError as e:
            raise self.fail(f"activity: {e}") from e


class ConditionExecutor(DeclarativeActionExecutor):
    """If / ConditionGroup: evaluate conditions in order and go to the first matching branch."""

    def __init__(self, id: str, spec: Mapping[str, Any], services: Services) -> None:
        super().__init__(id, spec, services)
        self.branches: list[tuple[Any, str | None]] = []  # (condition expression, entry id)
        self.else_target: str | None = None

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        for condition, entry in self.branches:
            if isinstance(condition, bool):
                matched = condition
            else:
                expression = condition if is_expression(condition) else f"={condition}"
                try:
                    matched = truthy(scopes.eval(expression))
                except ExpressionError as e:
                    raise self.fail(f"condition: {e}") from e
            if matched:
                return entry
        return self.else_target


class GotoExecutor(DeclarativeActionExecutor):
    """GotoAction: continue at ``actionId``."""

    target: str | None = None

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        return self.target


class EndExecutor(DeclarativeActionExecutor):
    """EndWorkflow / EndConversation: stop this path."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        return None


class ForeachExecutor(DeclarativeActionExecutor):
    """Foreach: run the body once per item of ``items``, with ``value`` (and ``index``) set each time."""

    body: str | None = None

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        key = f"__foreach_{self.id}"
        loops = cast(dict[str, Any], scopes.data.setdefault("System", {}).setdefault("Loops", {}))
        position: dict[str, Any] | None = loops.get(key)
        if position is None:
            raw: Any = self.value(scopes, "items") or []
            items: list[Any] = list(cast(list[Any], raw)) if isinstance(raw, list) else [raw]
            position = {"items": items, "index": 0}
        else:
            position["index"] = int(position["index"]) + 1
        items_list = cast(list[Any], position["items"])
        index = int(position["index"])
        if index >= len(items_list) or self.body is None:
            loops.pop(key, None)
            return self.next_id
        loops[key] = position
        value_var = self.spec.get("value") or self.spec.get("itemVariable") or "Local.item"
        scopes.set(str(value_var), items_list[index])
        if self.spec.get("index"):
            scopes.set(str(self.spec["index"]), index)
        return self.body


class LoopControlExecutor(DeclarativeActionExecutor):
    """BreakLoop / ContinueLoop: leave the enclosing Foreach, or go on with its next item."""

    loop: ForeachExecutor | None = None  # the enclosing Foreach, set by the factory

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        loop = self.loop
        if loop is None:  # the factory refuses a loop control outside a loop; kept for restored graphs
            raise self.fail(f"{self.kind} is not inside a Foreach")
        if self.kind == "ContinueLoop":
            return loop.id
        loops = cast(dict[str, Any], scopes.data.setdefault("System", {}).setdefault("Loops", {}))
        loops.pop(f"__foreach_{loop.id}", None)
        return loop.next_id


class QuestionExecutor(DeclarativeActionExecutor):
    """Question / RequestExternalInput: ask outside the workflow and store the answer in ``variable``."""

    @handler
    async def run(self, step: DeclarativeStep, ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        scopes = self.scopes(ctx)
        prompt = self.spec.get("question") or self.spec.get("prompt") or self.spec.get("text") or ""
        if isinstance(prompt, Mapping):
            prompt = cast("Mapping[str, Any]", prompt).get("text", "")
        message = scopes.eval(prompt)
        variable = self.spec.get("variable") or self.spec.get("property") or "Local.answer"
        request = ExternalInputRequest(
            request_id=uuid.uuid4().hex,
            message="" if message is None else str(message),
            request_type="question" if self.kind == "Question" else str(self.spec.get("requestType") or "external"),
            metadata={"output_property": variable, "default": scopes.eval(self.spec.get("default")), "action": self.id},
        )
        await ctx.request_info(request, _ANSWER_TYPE, request_id=request.request_id)

    async def _answer(self, request: ExternalInputRequest, answer: Any, ctx: WorkflowContext[Any, Any]) -> None:
        scopes = self.scopes(ctx)
        try:
            scopes.set(str(request.metadata["output_property"]), answer)
        except ExpressionError as e:
            raise self.fail(str(e)) from e
        if isinstance(answer, str):
            scopes.add_message("user", answer)
        self.save(ctx, scopes)
        await self.go(ctx, self.next_id)

    @response_handler
    async def on_text(
        self, request: ExternalInputRequest, answer: str, ctx: WorkflowContext[DeclarativeStep, Any]
    ) -> None:
        await self._answer(request, answer, ctx)

    @response_handler
    async def on_response(
        self, request: ExternalInputRequest, answer: ExternalInputResponse, ctx: WorkflowContext[DeclarativeStep, Any]
    ) -> None:
        await self._answer(request, answer.value if answer.value is not None else answer.user_input, ctx)


def _output_spec(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    output = spec.get("output")
    return cast("Mapping[str, Any]", output) if isinstance(output, Mapping) else {}


class InvokeAgentExecutor(DeclarativeActionExecutor):
    """InvokeAzureAgent / InvokeAgent: run a caller-provided agent on the conversation (or ``input.messages``).

    With ``input.externalLoop.when``, after each answer the condition is evaluated; while it holds, the run
    pauses with an :class:`ExternalInputRequest` carrying the answer, and the reply (kept in ``Local.userInput``
    and the conversation) goes back to the agent, unless the condition no longer holds once the reply is in.
    ``maxIterations`` (default 100) bounds the loop.
    """

    def _loop(self) -> tuple[Any, int] | None:
        input_spec = self.spec.get("input")
        loop = cast("Mapping[str, Any]", input_spec).get("externalLoop") if isinstance(input_spec, Mapping) else None
        if not isinstance(loop, Mapping) or cast("Mapping[str, Any]", loop).get("when") is None:
            return None
        loop_map = cast("Mapping[str, Any]", loop)
        return loop_map["when"], int(loop_map.get("maxIterations") or 100)

    def _holds(self, scopes: Scopes, when: Any) -> bool:
        if isinstance(when, bool):
            return when
        try:
            return truthy(scopes.eval(when if is_expression(when) else f"={when}"))
        except ExpressionError as e:
            raise self.fail(f"externalLoop.when: {e}") from e

    def _agent_name(self, scopes: Scopes) -> str:
        agent_spec = self.spec.get("agent")
        name = cast("Mapping[str, Any]", agent_spec).get("name") if isinstance(agent_spec, Mapping) else agent_spec
        return str(scopes.eval(name))

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        await self._invoke(scopes, ctx, reply=None)
        return self.next_id

    async def _invoke(self, scopes: Scopes, ctx: WorkflowContext[Any, Any], *, reply: str | None) -> str:
        from .._types import Message

        name = self._agent_name(scopes)
        agent = self.services.agents.get(name)
        if agent is None:
            raise self.fail(f"agent {name!r} is not one of the agents passed to WorkflowFactory")
        input_spec = self.spec.get("input")
        given = cast("Mapping[str, Any]", input_spec).get("messages") if isinstance(input_spec, Mapping) else None
        if given is not None and reply is None:
            value = scopes.eval(given)
            messages = [Message("user", [value if isinstance(value, str) else json.dumps(value)])]
        else:  # the conversation so far, which holds the reply of an external loop
            conversation = cast(list[dict[str, Any]], scopes.get(("System", "Conversation")) or [])
            messages = [Message("assistant" if m["role"] == "assistant" else "user", [m["text"]]) for m in conversation]
        response = await agent.run(messages)
        text = str(response.text)
        output = _output_spec(self.spec)
        if output.get("autoSend", True) and text:
            await ctx.yield_output(text)
        scopes.add_message("assistant", text)
        for key in ("messages", "response"):
            if output.get(key):
                scopes.set(str(output[key]), text)
        if output.get("responseObject"):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            scopes.set(str(output["responseObject"]), parsed)
        return text

    async def _after_answer(self, scopes: Scopes, ctx: WorkflowContext[Any, Any], text: str, iteration: int) -> None:
        """Ask outside the workflow while the loop's condition holds; otherwise go on to the next action."""
        loop = self._loop()
        if loop is not None and iteration < loop[1] and self._holds(scopes, loop[0]):
            request = ExternalInputRequest(
                request_id=uuid.uuid4().hex,
                message=text,
                request_type="agent_external_input",
                metadata={"action": self.id, "agent": self._agent_name(scopes), "iteration": iteration},
            )
            self.save(ctx, scopes)
            await ctx.request_info(request, _ANSWER_TYPE, request_id=request.request_id)
            return
        self.save(ctx, scopes)
        await self.go(ctx, self.next_id)

    @handler
    async def run(self, step: DeclarativeStep, ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        scopes = self.scopes(ctx)
        text = await self._invoke(scopes, ctx, reply=None)
        await self._after_answer(scopes, ctx, text, iteration=1)

    async def _resume(self, request: ExternalInputRequest, reply: str, ctx: WorkflowContext[Any, Any]) -> None:
        scopes = self.scopes(ctx)
        scopes.set("Local.userInput", reply)
        scopes.add_message("user", reply)
        loop = self._loop()
        if loop is None or not self._holds(scopes, loop[0]):  # the reply itself ends the loop ("exit")
            self.save(ctx, scopes)
            await self.go(ctx, self.next_id)
            return
        text = await self._invoke(scopes, ctx, reply=reply)
        await self._after_answer(scopes, ctx, text, iteration=int(request.metadata.get("iteration", 1)) + 1)

    @response_handler
    async def on_text(
        self, request: ExternalInputRequest, answer: str, ctx: WorkflowContext[DeclarativeStep, Any]
    ) -> None:
        await self._resume(request, answer, ctx)

    @response_handler
    async def on_response(
        self, request: ExternalInputRequest, answer: ExternalInputResponse, ctx: WorkflowContext[DeclarativeStep, Any]
    ) -> None:
        await self._resume(request, answer.user_input, ctx)


class _ApprovableToolExecutor(DeclarativeActionExecutor):
    """A tool action that, with ``requireApproval: true``, asks before it calls anything.

    A rejection runs nothing: ``output.result`` gets ``{"rejected": true, "reason": ...}`` and the workflow
    goes on, as in the reference.
    """

    def prepare(self, scopes: Scopes) -> tuple[str, dict[str, Any]]:
        """The tool's name and evaluated arguments."""
        raise NotImplementedError  # pragma: no cover

    async def call(self, scopes: Scopes, ctx: WorkflowContext[Any, Any], name: str, arguments: dict[str, Any]) -> None:
        """Call the tool and store its result."""
        raise NotImplementedError  # pragma: no cover

    @handler
    async def run(self, step: DeclarativeStep, ctx: WorkflowContext[DeclarativeStep, Any]) -> None:
        scopes = self.scopes(ctx)
        name, arguments = self.prepare(scopes)
        if self.spec.get("requireApproval") is True:
            request = ToolApprovalRequest(request_id=uuid.uuid4().hex, function_name=name, arguments=arguments)
            self.save(ctx, scopes)
            await ctx.request_info(request, ToolApprovalResponse, request_id=request.request_id)
            return
        await self.call(scopes, ctx, name, arguments)
        self.save(ctx, scopes)
        await self.go(ctx, self.next_id)

    @response_handler
    async def on_approval(
        self, request: ToolApprovalRequest, answer: ToolApprovalResponse, ctx: WorkflowContext[DeclarativeStep, Any]
    ) -> None:
        scopes = self.scopes(ctx)
        if answer.approved:
            await self.call(scopes, ctx, request.function_name, dict(request.arguments))
        else:
            output = _output_spec(self.spec)
            if output.get("result"):
                scopes.set(str(output["result"]), {"rejected": True, "reason": answer.reason})
        self.save(ctx, scopes)
        await self.go(ctx, self.next_id)


class InvokeFunctionToolExecutor(_ApprovableToolExecutor):
    """InvokeFunctionTool: call a function from the caller's ``bindings`` with evaluated arguments."""

    def prepare(self, scopes: Scopes) -> tuple[str, dict[str, Any]]:
        return str(self.value(scopes, "functionName")), dict(self.value(scopes, "arguments") or {})

    async def call(self, scopes: Scopes, ctx: WorkflowContext[Any, Any], name: str, arguments: dict[str, Any]) -> None:
        function = self.services.bindings.get(name)
        if function is None:
            raise self.fail(f"function {name!r} is not in the bindings passed to WorkflowFactory")
        try:
            result = await _maybe_await(function(**arguments))
        except Exception as e:
            raise self.fail(f"{name} failed: {type(e).__name__}: {e}") from e
        output = _output_spec(self.spec)
        if output.get("result"):
            scopes.set(str(output["result"]), result)
        if output.get("autoSend") and result is not None:
            await ctx.yield_output(result if isinstance(result, str) else _plain(result))


def _text_map(value: Any) -> dict[str, str]:
    """A mapping of evaluated header or query values as text, leaving out blank ones (as the reference does)."""
    if not isinstance(value, Mapping):
        return {}
    pairs = cast("Mapping[Any, Any]", value).items()
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in pairs if v is not None and v != ""}


def _timeout_ms(value: Any) -> int | None:
    """``requestTimeoutInMilliseconds`` as a positive int; anything else means the handler's default."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


_JSON_BODY = frozenset({"json", "JsonRequestContent"})
_RAW_BODY = frozenset({"raw", "RawRequestContent"})
_NO_BODY = frozenset({"none", "NoRequestContent"})


def _request_body(value: Any) -> tuple[Any, str | None]:
    """The body to send and its content type: the reference's ``{kind: json | raw | none, content, contentType}``
    form as that executor sends it, any other value (text, or data a handler sends as JSON) as it is."""
    if not isinstance(value, Mapping):
        return value, None
    spec = cast("Mapping[str, Any]", value)
    kind = spec.get("kind", spec.get("$kind"))
    if not isinstance(kind, str) or kind not in _JSON_BODY | _RAW_BODY | _NO_BODY:
        return spec, None
    content = spec.get("content")
    if kind in _NO_BODY or content is None:
        return None, None
    if kind in _JSON_BODY:
        return json.dumps(content, default=str), "application/json"
    return str(content), str(spec.get("contentType") or "text/plain")


class HttpRequestExecutor(DeclarativeActionExecutor):
    """HttpRequestAction: send a request through the caller's ``http_request_handler``."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        handler_ = self.services.http_request_handler
        if handler_ is None:  # the factory refuses this at build time; kept for restored graphs
            raise self.fail("no http_request_handler was passed to WorkflowFactory")
        headers = {str(k): str(v) for k, v in cast("Mapping[str, Any]", self.value(scopes, "headers") or {}).items()}
        body, content_type = _request_body(self.value(scopes, "body"))
        if content_type and not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = content_type
        request = HttpRequestInfo(
            method=str(self.value(scopes, "method") or "GET").upper(),
            url=str(self.value(scopes, "url")),
            headers=headers,
            body=body,
            query_parameters=_text_map(self.value(scopes, "queryParameters")),
            timeout_ms=_timeout_ms(self.value(scopes, "requestTimeoutInMilliseconds")),
        )
        result = cast(HttpRequestResult, await _maybe_await(handler_(request)))
        if not result.is_success_status_code:  # as the reference: an error page is not the response the file wants
            raise self.fail(f"HTTP {request.method} {request.url!r} failed with status code {result.status_code}")
        target = self.spec.get("response") or _output_spec(self.spec).get("result")
        if target:
            scopes.set(str(target), result.body)
        if self.spec.get("responseHeaders"):
            scopes.set(str(self.spec["responseHeaders"]), result.headers)
        return self.next_id


class InvokeMcpToolExecutor(_ApprovableToolExecutor):
    """InvokeMcpTool: call an MCP tool through the caller's ``mcp_tool_handler``.

    A failed call stores ``"Error: <message>"`` in ``output.result`` and the workflow goes on (as the reference);
    a typed tool/MCP/service error or an httpx error raised by the handler counts as a failed call.
    """

    def prepare(self, scopes: Scopes) -> tuple[str, dict[str, Any]]:
        return str(self.value(scopes, "toolName")), dict(self.value(scopes, "arguments") or {})

    async def call(self, scopes: Scopes, ctx: WorkflowContext[Any, Any], name: str, arguments: dict[str, Any]) -> None:
        handler_ = self.services.mcp_tool_handler
        if handler_ is None:
            raise self.fail("no mcp_tool_handler was passed to WorkflowFactory")
        invocation = MCPToolInvocation(
            server_url=str(self.value(scopes, "serverUrl")),
            tool_name=name,
            arguments=arguments,
            server_label=self.value(scopes, "serverLabel"),
            headers=_text_map(self.value(scopes, "headers")),
        )
        result = await _call_mcp_handler(handler_, invocation)
        output = _output_spec(self.spec)
        if result.is_error:  # as the reference (.NET AssignErrorAsync): store the error text and go on
            if output.get("result"):
                scopes.set(str(output["result"]), _error_text(result.content))
            return
        if output.get("result"):
            scopes.set(str(output["result"]), result.content)
        if output.get("autoSend") and result.content is not None:
            await ctx.yield_output(_plain(result.content))


async def _call_mcp_handler(handler_: MCPToolHandler, invocation: MCPToolInvocation) -> MCPToolResult:
    """The handler's result, with a failed tool call or transport (a typed tool, MCP or service error, the mcp SDK's
    MCPError, an httpx error) turned into an error result as the reference does; any other exception is a bug and
    propagates."""
    try:
        return cast(MCPToolResult, await _maybe_await(handler_(invocation)))
    except (ToolExecutionError, MCPError, ServiceConnectionError, ServiceTimeoutError) as exc:
        return MCPToolResult(content=str(exc) or type(exc).__name__, is_error=True)
    except Exception as exc:
        # Only a handler that imported httpx or the mcp SDK can raise their errors; neither is imported here.
        httpx = sys.modules.get("httpx")
        if httpx is not None and isinstance(exc, httpx.HTTPError):
            return MCPToolResult(
                content=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, is_error=True
            )
        sdk_error = getattr(sys.modules.get("mcp.shared.exceptions"), "MCPError", None)
        if isinstance(sdk_error, type) and isinstance(exc, sdk_error):
            return MCPToolResult(content=str(exc) or type(exc).__name__, is_error=True)
        raise


def _error_text(content: Any) -> str:
    """``"Error: <message>"`` for an error result, without doubling the prefix a handler may already have added."""
    text = "" if content is None else content if isinstance(content, str) else json.dumps(_plain(content), default=str)
    text = text or "MCP tool invocation failed."
    return text if text.startswith("Error: ") else f"Error: {text}"
