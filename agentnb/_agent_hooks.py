"""Agent hooks: the AGENT-HOOKS-0.1 control contract enforced over an agent's three middleware seams.

Interceptors (``agent-hooks-sdk``, the ``agentnb[hooks]`` extra) judge eight points of a run: ``agent_startup``,
``input``, ``output`` and ``agent_shutdown`` on the agent seam; ``pre_model_call`` and ``post_model_call`` on the
chat seam; ``pre_tool_call`` and ``post_tool_call`` on the function seam. The three middleware travel as one
:class:`~agentnb.MiddlewareBundle`, because installing only some of them would enforce only part of the contract;
put the bundle first in ``Agent(middleware=[...])`` (middleware listed before it runs outside the boundary).

In ``mode="enforce"`` every point is emitted before the guarded step (or before its result is used):

- a ``transform`` is written back into the run (messages, request, response, tool arguments, tool result,
  output), so the run uses exactly what the interceptors approved; rich contents keep their ``Content`` objects;
- a ``deny`` at ``input``, ``pre_model_call``, ``post_model_call`` or ``output`` ends the run with
  ``agent_hooks.InterceptionBlocked`` (a streamed run raises it when consumed);
- a ``deny`` at a tool point blocks that call (not run, or its result discarded) and the model is told so in
  the tool's result; a ``host_error:*`` deny there (an interceptor crashed or timed out) ends the run with the
  ``InterceptionBlocked``, since the enforcement itself failed;
- streams are buffered: nothing reaches the caller before the verdict on the whole response;
- the run's history writes (its context providers' ``after_run``) wait behind the ``output`` verdict and are
  dropped on a deny (:class:`~agentnb._sessions.PersistenceGate`); a nested agent run (an agent used as a tool,
  or run by a middleware) writes its own history at once.

``mode="evaluate_only"`` records every verdict and never acts on one. Tools the provider runs itself (hosted
tools) never pass the function seam; their calls show in the ``post_model_call`` content.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, cast

from pydantic import BaseModel

from ._middleware import (
    AgentContext,
    AgentMiddleware,
    ChatContext,
    ChatMiddleware,
    FunctionInvocationContext,
    FunctionMiddleware,
    MiddlewareBundle,
)
from ._plain import jsonable
from ._sessions import PersistenceGate
from ._types import (
    AgentResponse,
    AgentResponseUpdate,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
)
from .exceptions import AgentHooksError, MiddlewareTermination

if TYPE_CHECKING:
    from agent_hooks import (
        AgentContextBuilder,
        ApprovalResolver,
        CompositionConfig,
        EnforcementMode,
        IdentityProvider,
        InterceptionBlocked,
        InterceptionEmitter,
        InterceptionRecord,
        Interceptor,
    )

__all__ = ["create_agent_hooks_middleware", "create_agent_hooks_middleware_from_emitter"]

logger = logging.getLogger(__name__)

FRAMEWORK = "agentnb"
HOST_ERROR = "host_error:"
INSTALL_HINT = (
    "The agent-hooks middleware needs the optional `agent-hooks-sdk` package: "
    'pip install "agentnb[hooks]" (or pip install agent-hooks-sdk).'
)
WHOLE_BUNDLE = (
    "agent-hooks {seam} middleware ran without an agent-hooks run: install the bundle from "
    "create_agent_hooks_middleware() as one unit on an Agent (Agent(middleware=[bundle]))."
)
FOREIGN_BUNDLE = (
    "agent-hooks {seam} middleware found an active agent-hooks run owned by a different agent-hooks middleware "
    "bundle; install exactly one bundle per agent."
)


class _ToolSeamHalt(AgentHooksError):
    """Ends the run from the tool seam (where other errors become the tool's result); carries the cause."""

    end_run = True


def _require_sdk() -> None:
    """Import the SDK, with the install hint when (only when) the package itself is missing."""
    try:
        import agent_hooks  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "agent_hooks":
            raise ModuleNotFoundError(INSTALL_HINT, name="agent_hooks") from exc
        raise


# -- run state ----------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Config:
    """What one factory call configured (shared by the bundle's three middleware)."""

    interceptors: tuple[tuple[str | None, Interceptor], ...]
    resolver: ApprovalResolver | None = None
    mode: EnforcementMode | None = None
    composition: CompositionConfig | None = None
    identity_provider: str | IdentityProvider | None = None
    timeout: float | None = None
    record_sink: Callable[[InterceptionRecord], None] | None = None
    emitter: InterceptionEmitter | None = None
    builder: AgentContextBuilder | None = None


@dataclass(eq=False)
class _RunState:
    """One run's emitter and builder, seen by the chat and function seams through a context variable."""

    emitter: InterceptionEmitter
    builder: AgentContextBuilder
    host_owned: bool
    config: _Config


_RUN: ContextVar[_RunState | None] = ContextVar("agentnb_agent_hooks_run", default=None)


# -- values on the wire ---------------------------------------------------------------------------------------


def _same(left: Any, right: Any) -> bool:
    """Wire equality that tells ``True`` from ``1`` (a transform between them must not look untouched)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        lm, rm = cast("Mapping[Any, Any]", left), cast("Mapping[Any, Any]", right)
        return lm.keys() == rm.keys() and all(_same(v, rm[k]) for k, v in lm.items())
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        ls, rs = cast("Sequence[Any]", left), cast("Sequence[Any]", right)
        return len(ls) == len(rs) and all(_same(a, b) for a, b in zip(ls, rs, strict=True))
    return bool(left == right)


def _contents_wire(contents: Sequence[Content]) -> str | list[dict[str, Any]]:
    """One text content as its string (so string guards fire); anything richer as content dictionaries."""
    if len(contents) == 1 and contents[0].type == "text":
        return contents[0].text or ""
    return [_content_wire(c) for c in contents]


def _content_wire(content: Content) -> dict[str, Any]:
    """A content's dictionary; inline bytes as a ``data:`` URI (``uri``), the form interceptors see elsewhere."""
    out = cast("dict[str, Any]", jsonable(content.to_dict()))
    if content.type == "data" and out.pop("data", None) is not None:
        out["uri"] = content.uri
    return out


def _message_wire(message: Message, *, input_role: bool = False) -> dict[str, Any]:
    role = str(message.role or "user")
    if input_role and role not in ("user", "system"):
        role = "external"  # the spec's input roles are user, system and external
    return {"role": role, "content": _contents_wire(message.contents)}


def _contents_from_wire(value: Any, point: str) -> list[Content]:
    if value is None:
        return []
    if isinstance(value, str | Mapping):
        items: list[Any] = [value]
    elif isinstance(value, list):
        items = cast("list[Any]", value)
    else:
        raise AgentHooksError(f"agent-hooks {point} transform produced an unsupported content value.")
    out: list[Content] = []
    for item in items:
        if isinstance(item, str):
            out.append(Content.from_text(item))
        elif isinstance(item, Mapping) and "type" in item:
            try:
                out.append(Content.from_dict(dict(cast("Mapping[str, Any]", item))))
            except Exception as exc:
                raise AgentHooksError(f"agent-hooks {point} transform produced an undecodable content item.") from exc
        else:
            raise AgentHooksError(f"agent-hooks {point} transform produced an unsupported content item.")
    return out


def _messages_from_wire(
    originals: Sequence[Message], before: Sequence[Mapping[str, Any]], after: Any, point: str
) -> list[Message]:
    """A transformed message list as messages: untouched entries keep their objects, matched by value, not place.

    An entry equal to the next unmatched original's projection is that original; a changed entry rewrites the
    next original in place when that original is not kept further on and its role is the same; anything else
    (an insertion, a new role) is a new message.
    """
    if not isinstance(after, list):
        raise AgentHooksError(f"agent-hooks {point} transform must produce a list of messages.")
    entries: list[Mapping[str, Any]] = []
    for item in cast("list[Any]", after):
        if not isinstance(item, Mapping) or "content" not in item:
            raise AgentHooksError(f"agent-hooks {point} transform produced a message without role/content.")
        entries.append(cast("Mapping[str, Any]", item))
    out: list[Message] = []
    cursor = 0
    for index, entry in enumerate(entries):
        found = next((i for i in range(cursor, len(originals)) if _same(before[i], entry)), None)
        if found is not None:
            out.append(originals[found])
            cursor = found + 1
            continue
        role = str(entry.get("role") or "user")
        if cursor < len(originals):
            kept_later = any(_same(later, before[cursor]) for later in entries[index + 1 :])
            if not kept_later and role == str(before[cursor].get("role")):
                message = originals[cursor]
                cursor += 1
                message.contents = _contents_from_wire(entry.get("content"), point)
                out.append(message)
                continue
        out.append(Message(role, _contents_from_wire(entry.get("content"), point)))
    return out


def _args_wire(arguments: Any) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, BaseModel):
        arguments = arguments.model_dump()
    if isinstance(arguments, Mapping):
        return {str(k): jsonable(v) for k, v in cast("Mapping[Any, Any]", arguments).items()}
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return cast("dict[str, Any]", parsed)
        return {"raw_arguments": arguments}
    return {"raw_arguments": str(arguments)}


def _usage_wire(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, Mapping):
        return None
    counts = {
        str(k): v for k, v in cast("Mapping[Any, Any]", usage).items() if isinstance(v, int) and not isinstance(v, bool)
    }
    return counts or None


def _host_calls(messages: Sequence[Message]) -> list[Content]:
    """The tool calls agentnb runs (the function seam brackets them); hosted calls are response content."""
    return [c for m in messages for c in m.contents if c.type == "function_call" and not c.informational_only]


# -- the codecs: one per point, both directions; an untouched value leaves the run untouched ---------------


def input_wire(messages: Sequence[Message]) -> dict[str, Any]:
    """``input``: one message as its content and role, several as a list of ``{"role", "content"}``."""
    if len(messages) == 1:
        return {
            "content": _contents_wire(messages[0].contents),
            "role": _message_wire(messages[0], input_role=True)["role"],
        }
    return {"content": [_message_wire(m, input_role=True) for m in messages], "role": "user"}


def write_back_input(messages: list[Message], before: Mapping[str, Any], after: Any) -> None:
    if after is None or _same(after, before):
        return
    if not isinstance(after, Mapping):
        raise AgentHooksError("agent-hooks input transform must produce an input object.")
    target = cast("Mapping[str, Any]", after)
    role = target.get("role")
    if role != before.get("role"):
        if len(messages) != 1 or not isinstance(role, str):
            raise AgentHooksError(
                "agent-hooks input transform changed the input role in a way that cannot be written back."
            )
        messages[0].role = cast("Any", role)
    content = target.get("content")
    if _same(content, before.get("content")):
        return
    entries = cast("list[Any]", content) if isinstance(content, list) else []
    is_list_of_messages = bool(entries) and all(isinstance(i, Mapping) and "content" in i for i in entries)
    if len(messages) == 1 and not is_list_of_messages:
        messages[0].contents = _contents_from_wire(content, "input")
        return
    projections = [_message_wire(m, input_role=True) for m in messages]
    messages[:] = _messages_from_wire(list(messages), projections, content, "input")


def response_content_wire(messages: Sequence[Message]) -> str | list[dict[str, Any]] | None:
    """``post_model_call`` content: everything but the calls agentnb runs (hosted calls included)."""
    parts: list[dict[str, Any]] = []
    for m in messages:
        shown = [c for c in m.contents if c.type != "function_call" or c.informational_only]
        if shown:
            parts.append({"role": str(m.role or "assistant"), "content": _contents_wire(shown)})
    if not parts:
        return None
    if len(parts) == 1 and isinstance(parts[0]["content"], str):
        return parts[0]["content"]
    return parts


def response_wire(response: ChatResponse[Any]) -> dict[str, Any]:
    return {
        "content": response_content_wire(response.messages),
        "tool_calls": [
            {"id": str(c.call_id or ""), "name": str(c.name or ""), "args": _args_wire(c.arguments)}
            for c in _host_calls(response.messages)
        ],
        "finish_reason": str(response.finish_reason or "stop"),
    }


def write_back_response(response: ChatResponse[Any], before: Mapping[str, Any], after: Any) -> bool:
    """Apply a ``post_model_call`` transform to the response; whether anything changed."""
    if after is None or _same(after, before):
        return False
    if not isinstance(after, Mapping):
        raise AgentHooksError("agent-hooks post_model_call transform must produce a response object.")
    target = cast("Mapping[str, Any]", after)
    changed = False
    finish = target.get("finish_reason")
    if finish != before.get("finish_reason"):
        if not isinstance(finish, str):
            raise AgentHooksError("agent-hooks post_model_call transform must keep finish_reason a string.")
        response.finish_reason = finish
        changed = True
    calls = target.get("tool_calls")
    if not _same(calls, before.get("tool_calls")):
        changed = _write_back_calls(response, calls) or changed
    content = target.get("content")
    if not _same(content, before.get("content")):
        _write_back_content(response, content)
        changed = True
    return changed


def _write_back_calls(response: ChatResponse[Any], calls: Any) -> bool:
    if not isinstance(calls, list):
        raise AgentHooksError("agent-hooks post_model_call transform must keep tool_calls a list.")
    wanted: dict[str, Mapping[str, Any]] = {}
    order: list[Mapping[str, Any]] = []
    for item in cast("list[Any]", calls):
        if not isinstance(item, Mapping) or "id" not in item or "name" not in item:
            raise AgentHooksError("agent-hooks post_model_call transform produced a tool call without id/name.")
        call = cast("Mapping[str, Any]", item)
        name, args = call.get("name"), call.get("args", {})
        if not isinstance(name, str) or not name:
            raise AgentHooksError(
                "agent-hooks post_model_call transform must keep each tool call's name a non-empty string."
            )
        if not isinstance(args, Mapping):
            raise AgentHooksError("agent-hooks post_model_call transform must keep each tool call's args an object.")
        wanted[str(call["id"])] = call
        order.append(call)
    changed = False
    seen: set[str] = set()
    for message in response.messages:
        kept: list[Content] = []
        for content in message.contents:
            if content.type != "function_call" or content.informational_only:
                kept.append(content)
                continue
            call = wanted.get(str(content.call_id))
            if call is None:
                changed = True  # the transform dropped this call
                continue
            seen.add(str(content.call_id))
            if call["name"] != content.name:
                content.name = str(call["name"])
                changed = True
            args = {str(k): v for k, v in cast("Mapping[Any, Any]", call.get("args", {})).items()}
            if not _same(_args_wire(content.arguments), args):
                content.arguments = args
                changed = True
            kept.append(content)
        if len(kept) != len(message.contents):
            message.contents = kept
    added = [
        Content.from_function_call(
            str(c["id"]),
            str(c["name"]),
            arguments={str(k): v for k, v in cast("Mapping[Any, Any]", c.get("args", {})).items()},
        )
        for c in order
        if str(c["id"]) not in seen
    ]
    if added:
        last = next((m for m in reversed(response.messages) if m.role == "assistant"), None)
        if last is None:
            response.messages.append(Message("assistant", added))
        else:
            last.contents = [*last.contents, *added]
        changed = True
    return changed


def _write_back_content(response: ChatResponse[Any], content: Any) -> None:
    calls = _host_calls(response.messages)
    messages: list[Message]
    if content is None:
        messages = []
    elif isinstance(content, str):
        messages = [Message("assistant", [content])]
    elif isinstance(content, list):
        messages = []
        for item in cast("list[Any]", content):
            if not isinstance(item, Mapping) or "content" not in item:
                raise AgentHooksError("agent-hooks post_model_call transform produced content without role/content.")
            entry = cast("Mapping[str, Any]", item)
            messages.append(
                Message(
                    str(entry.get("role") or "assistant"), _contents_from_wire(entry.get("content"), "post_model_call")
                )
            )
    else:
        raise AgentHooksError("agent-hooks post_model_call transform produced unsupported content.")
    if calls:
        if messages and messages[-1].role == "assistant":
            messages[-1].contents = [*messages[-1].contents, *calls]
        else:
            messages.append(Message("assistant", calls))
    response.messages = messages


def write_back_args(arguments: Any, before: Mapping[str, Any], after: Any) -> tuple[Any, dict[str, Any]]:
    """A ``pre_tool_call`` transform over the native arguments: changed keys from the wire, the rest as they were.

    Returns the arguments to run with and their wire form (what ``post_tool_call`` reports).
    """
    if not isinstance(after, Mapping):
        raise AgentHooksError("agent-hooks pre_tool_call transform must produce an arguments object.")
    wire = {str(k): v for k, v in cast("Mapping[Any, Any]", after).items()}
    if _same(wire, before):
        return arguments, wire
    if isinstance(arguments, BaseModel):
        native = {name: getattr(arguments, name) for name in type(arguments).model_fields}
    elif isinstance(arguments, Mapping):
        native = {str(k): v for k, v in cast("Mapping[Any, Any]", arguments).items()}
    else:
        native = {}
    merged = {k: v for k, v in native.items() if k in wire}
    merged.update({k: v for k, v in wire.items() if k not in before or not _same(before[k], v)})
    return merged, wire


def result_wire(value: Any) -> Any:
    """A tool's result as the model sees it: text as text, contents unwrapped, never a ``repr``."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list) and len(cast("list[Any]", value)) == 1 and isinstance(value[0], Content):
        return result_wire(value[0])
    if isinstance(value, Content):
        if value.type == "text":
            return value.text or ""
        if value.type == "function_result":
            if value.result is not None:
                return result_wire(value.result)
            return [result_wire(i) for i in value.items] if value.items is not None else None
        return jsonable(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): result_wire(v) for k, v in cast("Mapping[Any, Any]", value).items()}
    if isinstance(value, list | tuple):
        return [result_wire(v) for v in cast("Sequence[Any]", value)]
    return jsonable(value)


def write_back_result(original: Any, before: Any, after: Any) -> Any:
    """A ``post_tool_call`` transform as the result to use; a list of contents keeps its contents where it can."""
    if _same(after, before):
        return original
    if isinstance(original, list) and original and all(isinstance(i, Content) for i in cast("list[Any]", original)):
        contents = cast("list[Content]", original)
        if isinstance(after, str) and len(contents) == 1 and contents[0].type == "text":
            return [Content.from_text(after)]
        if isinstance(after, list) and len(cast("list[Any]", after)) == len(contents):
            rebuilt: list[Content] = []
            for content, item in zip(contents, cast("list[Any]", after), strict=True):
                if _same(result_wire(content), item):
                    rebuilt.append(content)
                elif content.type == "text" and isinstance(item, str):
                    rebuilt.append(Content.from_text(item))
                else:
                    return cast("Any", after)
            return rebuilt
    return cast("Any", after)


def output_wire(response: AgentResponse[Any]) -> str | list[dict[str, Any]]:
    parts = [_message_wire(m) for m in response.messages]
    if len(parts) == 1 and isinstance(parts[0]["content"], str):
        return parts[0]["content"]
    return parts


def write_back_output(response: AgentResponse[Any], before: Any, after: Any) -> bool:
    """Apply an ``output`` transform to the response; whether it changed."""
    if after is None:
        return False
    if not isinstance(after, Mapping):
        raise AgentHooksError("agent-hooks output transform must produce an output object.")
    content = cast("Mapping[str, Any]", after).get("content")
    if _same(content, before):
        return False
    originals = list(response.messages)
    if isinstance(content, str):
        if len(originals) == 1:
            originals[0].contents = _contents_from_wire(content, "output")
        else:
            response.messages = [Message("assistant", [content])]
    elif content is None:
        response.messages = []
    else:
        response.messages = _messages_from_wire(originals, [_message_wire(m) for m in originals], content, "output")
    return True


# -- helpers of the seams -------------------------------------------------------------------------------------


def _tool_name(tool: Any) -> str:
    name = getattr(tool, "name", None)
    if isinstance(name, str) and name:
        return name
    if isinstance(tool, Mapping):
        spec = cast("Mapping[str, Any]", tool)
        function = spec.get("function")
        if isinstance(function, Mapping) and isinstance(cast("Mapping[str, Any]", function).get("name"), str):
            return str(cast("Mapping[str, Any]", function)["name"])
        for key in ("name", "type"):
            if isinstance(spec.get(key), str) and spec[key]:
                return str(spec[key])
    named = cast("object", tool)
    return str(getattr(named, "__name__", None) or type(named).__name__)


def _tool_description(tool: Any) -> str | None:
    if isinstance(tool, Mapping):
        spec = cast("Mapping[str, Any]", tool)
        function = spec.get("function")
        described = cast("Mapping[str, Any]", function).get("description") if isinstance(function, Mapping) else None
        described = described if described is not None else spec.get("description")
    else:
        described = getattr(tool, "description", None)
    return described if isinstance(described, str) and described else None


def _as_list(tools: Any) -> list[Any]:
    if tools is None:
        return []
    return list(cast("Sequence[Any]", tools)) if isinstance(tools, list | tuple) else [tools]


def _startup_tools(context: AgentContext) -> list[str]:
    """The tools known at the run's start (the agent's and the options'); tools added later show per model call."""
    try:
        tools = [*_as_list(getattr(context.agent, "tools", None)), *_as_list(context.options.get("tools"))]
        return [_tool_name(t) for t in tools]
    except Exception:
        logger.warning("agent-hooks could not list the run's tools for agent_startup.")
        return []


def _request_tools(options: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    out: list[dict[str, Any]] = []
    for tool in _as_list(options.get("tools")):
        entry: dict[str, Any] = {"name": _tool_name(tool)}
        described = _tool_description(tool)
        if described:
            entry["description"] = described
        out.append(entry)
    return out or None


def _blocked_result(point: str, record: InterceptionRecord) -> dict[str, Any]:
    """What the model is told of a blocked tool call."""
    told: dict[str, Any] = {
        "error": f"Tool call blocked by agent-hooks at {point}.",
        "reason": record.verdict.reason or "deny",
    }
    if record.verdict.message:
        told["message"] = record.verdict.message
    return told


def _unwrap_halt(error: BaseException) -> NoReturn:
    """A run ended from the tool seam ends as the block itself (one deny surface at every point)."""
    from agent_hooks import InterceptionBlocked

    cause = error.__cause__
    if isinstance(error, _ToolSeamHalt) and isinstance(cause, InterceptionBlocked):
        error.__cause__ = None
        if error.__context__ is cause:
            error.__context__ = None
        raise cause
    raise error


def agent_updates(response: AgentResponse[Any]) -> list[AgentResponseUpdate]:
    """A response as updates, one per message (what a gated stream releases after a transform)."""
    updates: list[AgentResponseUpdate] = [
        AgentResponseUpdate(
            contents=list(m.contents),
            role=m.role,
            author_name=m.author_name,
            agent_id=response.agent_id,
            message_id=m.message_id,
            response_id=response.response_id,
            additional_properties=dict(m.additional_properties),
        )
        for m in response.messages
    ]
    if response.finish_reason is not None or response.usage_details:
        tail = AgentResponseUpdate(
            contents=[], role=None, agent_id=response.agent_id, finish_reason=response.finish_reason
        )
        if response.usage_details:
            tail.contents.append(Content.from_usage(response.usage_details))
        updates.append(tail)
    return updates


# -- the three middleware ---------------------------------------------------------------------------------


class _Seam:
    """What the bundle's three middleware share: the factory call's configuration."""

    def __init__(self, config: _Config) -> None:
        self._config = config

    def _state(self, seam: str) -> _RunState:
        state = _RUN.get()
        if state is None:
            raise AgentHooksError(WHOLE_BUNDLE.format(seam=seam))
        if state.config is not self._config:
            raise AgentHooksError(FOREIGN_BUNDLE.format(seam=seam))
        return state


class _AgentSeam(_Seam, AgentMiddleware):
    """``agent_startup``, ``input``, ``output``, ``agent_shutdown``; holds the run's history behind the verdict."""

    def _new_state(self, context: AgentContext) -> _RunState:
        config = self._config
        if config.emitter is not None and config.builder is not None:
            return _RunState(config.emitter, config.builder, True, config)
        from agent_hooks import AgentContextBuilder, InterceptionEmitter

        agent = context.agent
        name = getattr(agent, "name", None)
        builder = AgentContextBuilder(
            agent_id=str(getattr(agent, "id", None) or name or "agent"),
            framework=FRAMEWORK,
            session_id=uuid.uuid4().hex,
            agent_name=str(name) if name else None,
        )
        options: dict[str, Any] = {
            "resolver": config.resolver,
            "timeout": config.timeout,
            "composition": config.composition,
            "identity_provider": config.identity_provider,
        }
        if config.mode is not None:
            options["mode"] = config.mode
        emitter = InterceptionEmitter(**options)
        for registered, interceptor in config.interceptors:
            emitter.register(interceptor, registered)
        if config.record_sink is not None:
            emitter.set_record_sink(config.record_sink)
        return _RunState(emitter, builder, False, config)

    async def _start(self, context: AgentContext, state: _RunState) -> None:
        if not state.host_owned:
            await state.emitter.emit(state.builder.agent_startup(tools_registered=_startup_tools(context)))
        before = input_wire(context.messages)
        outcome = await state.emitter.emit(state.builder.input(content=before["content"], role=before["role"]))
        write_back_input(context.messages, before, outcome.target)

    async def _output(self, state: _RunState, response: Any, what: str = "run") -> bool:
        if not isinstance(response, AgentResponse):
            raise AgentHooksError(
                f"agent-hooks cannot guard a {what} result of type {type(response).__name__}; "
                "the output interception point was not emitted."
            )
        before = output_wire(cast("AgentResponse[Any]", response))
        outcome = await state.emitter.emit(state.builder.output(content=before))
        return write_back_output(cast("AgentResponse[Any]", response), before, outcome.target)

    async def _shutdown(self, state: _RunState, reason: str) -> None:
        """``agent_shutdown`` for a run that is its own session (best effort: the run's outcome stands)."""
        if state.host_owned:
            return
        try:
            await state.emitter.emit_unchecked(state.builder.agent_shutdown(reason=reason))
        except Exception:
            logger.warning("agent-hooks could not emit agent_shutdown (reason=%r).", reason, exc_info=True)

    async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
        from agent_hooks import InterceptionBlocked

        state = self._new_state(context)
        gate = PersistenceGate()
        context.persistence_gate = gate  # the run's own history writes wait for the verdict
        token = _RUN.set(state)
        if context.stream:
            try:
                await self._setup_stream(context, call_next, state, gate)
            finally:
                _RUN.reset(token)
            return
        reason = "completed"
        try:
            await self._start(context, state)
            ended: MiddlewareTermination | None = None
            try:
                await call_next()
            except MiddlewareTermination as termination:
                ended = termination  # a substituted result still passes the output point
            if context.result is not None:
                await self._output(state, context.result)
            await gate.flush()
            if ended is not None:
                raise ended
        except InterceptionBlocked:
            gate.drop()
            reason = "error"
            context.result = None
            raise
        except _ToolSeamHalt as halt:
            gate.drop()
            reason = "error"
            context.result = None
            _unwrap_halt(halt)
        except MiddlewareTermination:
            raise
        except BaseException as error:
            gate.drop()
            reason = "cancelled" if isinstance(error, asyncio.CancelledError) else "error"
            raise
        finally:
            await self._shutdown(state, reason)
            _RUN.reset(token)

    async def _setup_stream(
        self, context: AgentContext, call_next: Callable[[], Awaitable[None]], state: _RunState, gate: PersistenceGate
    ) -> None:
        """Open a streamed run: its result becomes a stream released only after the ``output`` verdict."""
        handed_over = False
        try:
            await self._start(context, state)
            ended: MiddlewareTermination | None = None
            try:
                await call_next()
            except MiddlewareTermination as termination:
                ended = termination
            inner = context.result
            if inner is None and ended is not None:  # nothing egresses: what ran is released
                await gate.flush()
                await self._shutdown(state, "completed")
                handed_over = True
                raise ended
            if not isinstance(inner, ResponseStream):
                raise AgentHooksError(
                    "agent-hooks streaming enforcement needs a ResponseStream agent result; "
                    f"got {type(inner).__name__}."
                )
            context.result = self._gated(
                state, cast("ResponseStream[AgentResponseUpdate, AgentResponse[Any]]", inner), gate
            )
            handed_over = True
            if ended is not None:
                raise ended
        except _ToolSeamHalt as halt:
            _unwrap_halt(halt)
        finally:
            if not handed_over:
                gate.drop()
                await self._shutdown(state, "error")

    def _gated(
        self,
        state: _RunState,
        inner: ResponseStream[AgentResponseUpdate, AgentResponse[Any]],
        gate: PersistenceGate,
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse[Any]]:
        async def consume() -> tuple[list[AgentResponseUpdate], AgentResponse[Any]]:
            token = _RUN.set(state)
            try:
                updates = [u async for u in inner]
                return updates, await inner.get_final_response()
            except BaseException as error:
                gate.drop()
                await self._shutdown(state, "cancelled" if isinstance(error, asyncio.CancelledError) else "error")
                _unwrap_halt(error)
            finally:
                _RUN.reset(token)

        async def judge(
            _updates: list[AgentResponseUpdate], final: AgentResponse[Any]
        ) -> tuple[AgentResponse[Any], bool]:
            try:
                changed = await self._output(state, final, "streamed run")
            except BaseException:
                gate.drop()
                await self._shutdown(state, "error")
                raise
            await gate.flush()
            await self._shutdown(state, "completed")
            return final, changed

        return ResponseStream[AgentResponseUpdate, AgentResponse[Any]].buffered_and_gated(
            consume=consume, gate=judge, rederive=agent_updates
        )


class _ChatSeam(_Seam, ChatMiddleware):
    """``pre_model_call`` and ``post_model_call`` around each model call."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        state = self._state("chat")
        options = context.options or {}
        model_id = str(
            options.get("model")
            or options.get("model_id")
            or getattr(context.client, "model_id", None)
            or type(context.client).__name__
        )
        before = [_message_wire(m) for m in context.messages]
        outcome = await state.emitter.emit(
            state.builder.pre_model_call(model_id=model_id, messages=before, tools=_request_tools(options))
        )
        if not _same(outcome.target, before):
            context.messages = _messages_from_wire(list(context.messages), before, outcome.target, "pre_model_call")
        ended: MiddlewareTermination | None = None
        try:
            await call_next()
        except MiddlewareTermination as termination:
            ended = termination  # a substituted response still passes post_model_call
        result = context.result
        if isinstance(result, ResponseStream):
            context.result = self._gated(
                state, model_id, cast("ResponseStream[ChatResponseUpdate, ChatResponse[Any]]", result)
            )
        elif isinstance(result, ChatResponse):
            try:
                await self._post(state, model_id, cast("ChatResponse[Any]", result))
            except BaseException:
                context.result = None
                raise
        elif result is not None:
            raise AgentHooksError(
                f"agent-hooks cannot guard a chat result of type {type(result).__name__}; "
                "the post_model_call interception point was not emitted."
            )
        elif context.stream and ended is None:
            raise AgentHooksError("agent-hooks streaming enforcement needs a ResponseStream chat result.")
        if ended is not None:
            raise ended

    async def _post(self, state: _RunState, model_id: str, response: Any) -> bool:
        if not isinstance(response, ChatResponse):
            raise AgentHooksError(
                f"agent-hooks cannot guard a streamed chat result of type {type(response).__name__}; "
                "the post_model_call interception point was not emitted."
            )
        chat = cast("ChatResponse[Any]", response)
        before = response_wire(chat)
        outcome = await state.emitter.emit(
            state.builder.post_model_call(
                model_id=str(chat.model_id or model_id),
                content=before["content"],
                tool_calls=before["tool_calls"],
                finish_reason=before["finish_reason"],
                usage=_usage_wire(chat.usage_details),
                request_id=chat.response_id,
            )
        )
        return write_back_response(chat, before, outcome.target)

    def _gated(
        self, state: _RunState, model_id: str, inner: ResponseStream[ChatResponseUpdate, ChatResponse[Any]]
    ) -> ResponseStream[ChatResponseUpdate, ChatResponse[Any]]:
        async def consume() -> tuple[list[ChatResponseUpdate], ChatResponse[Any]]:
            updates = [u async for u in inner]
            return updates, await inner.get_final_response()

        async def judge(_updates: list[ChatResponseUpdate], final: ChatResponse[Any]) -> tuple[ChatResponse[Any], bool]:
            return final, await self._post(state, model_id, final)

        return ResponseStream[ChatResponseUpdate, ChatResponse[Any]].buffered_and_gated(
            consume=consume, gate=judge, rederive=ChatResponse.to_updates
        )


class _FunctionSeam(_Seam, FunctionMiddleware):
    """``pre_tool_call`` and ``post_tool_call`` around each tool call; a deny becomes the tool's result."""

    def _state_or_halt(self) -> _RunState:
        try:
            return self._state("function")
        except AgentHooksError as error:
            raise _ToolSeamHalt(str(error)) from error

    def _block(self, context: FunctionInvocationContext, blocked: InterceptionBlocked, point: str) -> None:
        context.result = _blocked_result(point, blocked.result)
        self._halt_on_host_error(blocked, point)

    @staticmethod
    def _halt_on_host_error(blocked: InterceptionBlocked, point: str) -> None:
        """An interceptor crashed or timed out: the run ends (going on would run unguarded)."""
        reason = blocked.result.verdict.reason or ""
        if reason.startswith(HOST_ERROR):
            raise _ToolSeamHalt(f"agent-hooks {point} failed closed: {reason}") from blocked

    async def process(self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]) -> None:
        from agent_hooks import InterceptionBlocked

        state = self._state_or_halt()
        call_id = str(context.call_id or context.metadata.get("call_id") or uuid.uuid4().hex)
        name = str(getattr(context.function, "name", context.function))
        try:
            args = _args_wire(context.arguments)
            outcome = await state.emitter.emit(state.builder.pre_tool_call(call_id=call_id, name=name, args=args))
            arguments, args = write_back_args(context.arguments, args, outcome.target)
            if arguments is not context.arguments:
                context.arguments = arguments
        except InterceptionBlocked as blocked:
            self._block(context, blocked, "pre_tool_call")  # not run, and no post_tool_call
            return
        except (_ToolSeamHalt, MiddlewareTermination):
            raise
        except Exception as error:
            raise _ToolSeamHalt(f"agent-hooks pre_tool_call enforcement failed: {error}") from error

        ended: MiddlewareTermination | None = None
        try:
            await call_next()
        except MiddlewareTermination as termination:
            ended = termination  # a substituted result still enters the conversation: it is bracketed below
        except Exception as failure:
            # The call failed: still bracketed, with only the exception's type crossing the boundary.
            try:
                await state.emitter.emit(
                    state.builder.post_tool_call(
                        call_id=call_id, name=name, args=args, value=type(failure).__name__, is_error=True
                    )
                )
            except InterceptionBlocked as blocked:
                self._halt_on_host_error(blocked, "post_tool_call")
            raise
        result = context.result
        if isinstance(result, Content) and result.type == "function_approval_request":
            if ended is not None:  # approval control flow: the tool has not run, nothing to bracket
                raise ended
            return
        try:
            value = result_wire(result)
            outcome = await state.emitter.emit(
                state.builder.post_tool_call(call_id=call_id, name=name, args=args, value=value)
            )
            context.result = write_back_result(result, value, outcome.target)
        except InterceptionBlocked as blocked:
            self._block(context, blocked, "post_tool_call")  # the result is discarded
        except (_ToolSeamHalt, MiddlewareTermination):
            raise
        except Exception as error:
            raise _ToolSeamHalt(f"agent-hooks post_tool_call enforcement failed: {error}") from error
        if ended is not None:
            raise ended


# -- the factories --------------------------------------------------------------------------------------------


def create_agent_hooks_middleware(
    interceptors: Sequence[Interceptor] | Mapping[str, Interceptor],
    *,
    resolver: ApprovalResolver | None = None,
    mode: EnforcementMode | str = "enforce",
    composition: CompositionConfig | None = None,
    identity_provider: str | IdentityProvider | None = "jcs-sha256",
    timeout: float | None = 5.0,
    record_sink: Callable[[InterceptionRecord], None] | None = None,
) -> MiddlewareBundle:
    """The agent-hooks enforcement for an agent: one bundle, one agent-hooks session per run.

    Each run gets its own emitter and builder; ``agent_startup`` and ``agent_shutdown`` bracket it. Pass the
    bundle first in ``Agent(middleware=[...])``, one bundle per agent.

    Args:
        interceptors: The interceptors, or a mapping of name to interceptor (names show on the records).

    Keyword Args:
        resolver: An approval resolver for liftable denies.
        mode: ``"enforce"`` acts on verdicts; ``"evaluate_only"`` records them only.
        composition: The composition profile (the SDK's default when ``None``).
        identity_provider: ``"jcs-sha256"``, an ``agent_hooks.IdentityProvider``, or ``None``.
        timeout: Seconds each interceptor (and the resolver) may take.
        record_sink: Called with every interception record.

    Raises:
        ModuleNotFoundError: ``agent-hooks-sdk`` is not installed (``pip install "agentnb[hooks]"``).
        ValueError: No interceptors.

    Example:
        ```python
        from agent_hooks import ALLOW, Verdict

        class EgressGuard:
            def intercept(self, context):
                if "secret" in str(context.get("target")):
                    return Verdict.deny(reason="egress_blocked")
                return ALLOW

        agent = Agent(client, middleware=[create_agent_hooks_middleware([EgressGuard()])])
        ```
    """
    _require_sdk()
    from agent_hooks import EnforcementMode

    if isinstance(interceptors, Mapping):
        named = tuple((str(k), v) for k, v in interceptors.items())
    else:
        named = tuple((None, i) for i in interceptors)
    if not named:
        raise ValueError(
            "create_agent_hooks_middleware requires at least one interceptor (an emitter with none fails closed "
            "on every emission)."
        )
    config = _Config(
        interceptors=named,
        resolver=resolver,
        mode=EnforcementMode(mode),
        composition=composition,
        identity_provider=identity_provider,
        timeout=timeout,
        record_sink=record_sink,
    )
    return _bundle(config)


def create_agent_hooks_middleware_from_emitter(
    emitter: InterceptionEmitter, builder: AgentContextBuilder
) -> MiddlewareBundle:
    """The agent-hooks enforcement over a session the host keeps across runs (its emitter and builder).

    The bundle emits the per-run points (``input`` to ``output``) on ``emitter``; the host emits
    ``agent_startup`` and ``agent_shutdown`` itself.

    Raises:
        ModuleNotFoundError: ``agent-hooks-sdk`` is not installed (``pip install "agentnb[hooks]"``).
        ValueError: ``emitter`` or ``builder`` is missing.
    """
    _require_sdk()
    if not emitter or not builder:
        raise ValueError("create_agent_hooks_middleware_from_emitter requires both an emitter and a builder.")
    return _bundle(_Config(interceptors=(), emitter=emitter, builder=builder))


def _bundle(config: _Config) -> MiddlewareBundle:
    return MiddlewareBundle([_AgentSeam(config), _ChatSeam(config), _FunctionSeam(config)])
