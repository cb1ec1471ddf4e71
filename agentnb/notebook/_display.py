"""HTML and plain-text views of agentnb objects, for notebooks and any other HTML front end.

Core types carry no display code: the notebook extension registers :func:`to_html` / :func:`to_text` as
IPython formatters for them, and other front ends (the DevUI, static exports) can call the same functions.
Everything that came from a model, a tool or a user goes through :mod:`agentnb._html` (escaped, or rendered
as sanitized Markdown).

Example:
    ```python
    from agentnb import Message
    from agentnb.notebook import to_html, to_text

    msg = Message("assistant", ["**Hello** <script>alert(1)</script>"])
    to_text(msg)  # '[assistant] **Hello** <script>alert(1)</script>'
    "<script>" in to_html(msg)  # False
    ```
"""

from __future__ import annotations

import base64
import json
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .. import _html as h
from .._conversation import approval_states, unanswered_requests
from .._hosted_view import citations_html, citations_text, hosted_content_html, hosted_content_text
from .._json import is_json_object
from .._plain import value_text
from .._types import AgentResponse, ChatResponse, Content, Message, call_arguments
from ..exceptions import StructuredOutputError, ToolSchemaError

if TYPE_CHECKING:
    from .._agents import BaseAgent, SupportsAgentRun
    from .._sessions import AgentSession
    from .._tools import FunctionTool

__all__ = [
    "agent_identity",
    "message_html",
    "messages_html",
    "register_renderer",
    "skill_activity",
    "to_html",
    "to_text",
    "usage_text",
]

_Renderer = Callable[[Any], str]
# Ordered (type, html, text): the first isinstance match wins; extended by register_renderer().
_RENDERERS: list[tuple[type, _Renderer, _Renderer]] = []

_RASTER_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def register_renderer(cls: type, html: _Renderer, text: _Renderer) -> None:
    """Teach :func:`to_html` and :func:`to_text` a new type (later registrations win over earlier ones).

    Args:
        cls: The type to render (subclasses match too).
        html: Returns a safe HTML fragment (without the ``.agentnb`` wrapper).
        text: Returns plain text.
    """
    _RENDERERS[:] = [r for r in _RENDERERS if r[0] is not cls]
    _RENDERERS.insert(0, (cls, html, text))


def _find(obj: object) -> tuple[type, _Renderer, _Renderer] | None:
    _ensure_core_renderers()
    for entry in _RENDERERS:
        if isinstance(obj, entry[0]):
            return entry
    return None


def to_html(obj: object) -> str | None:
    """Return a self-contained, safe HTML view of ``obj``, or ``None`` when the type is unknown.

    Args:
        obj: An agentnb object (Agent, FunctionTool, Message, AgentResponse, ChatResponse, AgentSession, ...).

    Returns:
        HTML wrapped in the ``.agentnb`` root with its stylesheet, or ``None``.
    """
    entry = _find(obj)
    return None if entry is None else h.wrap(entry[1](obj))


def to_text(obj: object) -> str | None:
    """Return a readable plain-text view of ``obj``, or ``None`` when the type is unknown."""
    entry = _find(obj)
    return None if entry is None else entry[2](obj)


# -- small helpers ------------------------------------------------------------------------------------------


def _args_text(arguments: Any, limit: int = 80) -> str:
    if arguments is None or arguments == "":
        return ""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return h.shorten(arguments, limit)
    if isinstance(arguments, dict):
        text = ", ".join(f"{k}={v!r}" for k, v in cast("dict[Any, Any]", arguments).items())
    else:
        text = repr(arguments)
    return h.shorten(text, limit)


def usage_text(usage: Mapping[str, object] | None) -> str:
    """Return a one-line token summary, e.g. ``'12 in · 30 out · 42 total tokens'`` (empty without usage)."""
    if not usage:
        return ""
    parts: list[str] = []
    for key, label in (("input_token_count", "in"), ("output_token_count", "out"), ("total_token_count", "total")):
        if usage.get(key) is not None:
            parts.append(f"{usage[key]} {label}")
    return (" · ".join(parts) + " tokens") if parts else ""


def _text_block(text: str) -> str:
    return h.render_markdown(text)


# -- contents and messages -------------------------------------------------------------------------------


def _call_summary(call: Content) -> str:
    summary = f"<code>{h.escape(call.name or '?')}</code>({h.escape(_args_text(call.arguments))})"
    note = skill_activity(call)
    return f"{summary} {h.badge(note, 'info')}" if note else summary


def skill_activity(call: Content) -> str | None:
    """What a skill tool call does, in words (``loading skill 'x'``), or ``None`` for other calls."""
    verb = _SKILL_VERBS.get(call.name or "")
    if verb is None:
        return None
    try:
        arguments = call_arguments(call)
    except ValueError:
        return None
    skill = arguments.get("skill_name")
    if not isinstance(skill, str):
        return None
    item = arguments.get("resource_name") or arguments.get("script_name")
    return f"{verb} {item!r} of skill {skill!r}" if isinstance(item, str) else f"{verb} skill {skill!r}"


# The reference's names for the three SkillsProvider tools (SkillsProvider.*_TOOL_NAME).
_SKILL_VERBS = {"load_skill": "loading", "read_skill_resource": "reading", "run_skill_script": "running"}


def _function_call_html(call: Content, result: Content | None, approval: str | None, *, pending: bool) -> str:
    if result is None:
        if approval == "pending":
            status = h.badge("awaiting approval", "warn")
        elif approval == "approved":
            status = h.badge("approved", "ok")
        elif approval == "denied":
            status = h.badge("denied", "err")
        else:
            status = h.badge("running…" if pending else "no result", "info" if pending else "warn")
        body = h.json_html(call.arguments) if call.arguments not in (None, "") else ""
    elif result.exception:
        status = h.badge("denied" if approval == "denied" else "error", "err")
        body = (
            "<div class='anb-muted'>arguments</div>"
            + h.json_html(call.arguments)
            + f"<div class='anb-error'>{h.escape(result.exception)}</div>"
        )
    else:
        status = h.badge("done", "ok")
        body = (
            "<div class='anb-muted'>arguments</div>"
            + h.json_html(call.arguments)
            + "<div class='anb-muted'>result</div>"
            + h.json_html(result.result)
        )
    summary = f"⚙ {_call_summary(call)} {status}"
    return h.details(summary, body)


def _content_html(
    content: Content, results: Mapping[str, Content], *, pending: bool, approvals: Mapping[str, str] | None = None
) -> str:
    kind = content.type
    if kind == "text":
        block = _text_block(content.text or "")
        return block + citations_html([content]) if content.annotations else block
    if kind == "text_reasoning":
        text = content.text or ""
        return h.details(
            "<span class='anb-muted'>reasoning</span>", f"<div class='anb-reasoning'>{h.escape(text)}</div>"
        )
    if kind == "function_call":
        call_id = content.call_id or ""
        return _function_call_html(content, results.get(call_id), (approvals or {}).get(call_id), pending=pending)
    if kind == "function_result":
        # Shown inside its call when both are in view; standalone otherwise.
        if content.call_id in results:
            return ""
        label = "error" if content.exception else "result"
        body = h.escape(content.exception) if content.exception else h.json_html(content.result)
        return h.details(f"↩ {label} for <code>{h.escape(content.call_id or '?')}</code>", body)
    if kind == "function_approval_request":
        call = content.function_call
        what = _call_summary(call) if call is not None else "a tool call"
        answered = (
            approvals is not None and call is not None and (approvals.get(call.call_id or "") or "pending") != "pending"
        )
        badge = h.badge("approval requested") if answered else h.badge("approval needed", "warn")
        return f"<div>{badge} {what}</div>"
    if kind == "function_approval_response":
        call = content.function_call
        what = _call_summary(call) if call is not None else h.escape(content.id)
        verdict = h.badge("approved", "ok") if content.approved else h.badge("denied", "err")
        reason = f" <span class='anb-muted'>— {h.escape(content.reason)}</span>" if content.reason else ""
        return f"<div>{verdict} {what}{reason}</div>"
    if kind == "data":
        media = content.media_type or "application/octet-stream"
        data = content.data or b""
        if media in _RASTER_IMAGES and data:
            # A data: URL we build ourselves from raster bytes is inert (no SVG, whose markup could script).
            b64 = base64.b64encode(data).decode("ascii")
            return f'<img alt="{h.escape(media)}" style="max-width:320px" src="data:{media};base64,{b64}">'
        return f"<span class='anb-muted'>[{h.escape(media)}, {len(data)} bytes]</span>"
    if kind == "uri":
        uri = content.uri or ""
        if uri.lower().startswith(("http://", "https://")):
            return f'<a href="{h.escape(uri)}" rel="noopener noreferrer nofollow" target="_blank">{h.escape(uri)}</a>'
        return f"<span class='anb-muted'>{h.escape(h.shorten(uri, 80))}</span>"
    if kind == "usage":
        return f"<div class='anb-muted'>{h.escape(usage_text(content.usage_details))}</div>"
    if kind == "error":
        code = f" [{h.escape(content.error_code)}]" if content.error_code else ""
        return f"<div class='anb-error'>⚠ {h.escape(content.message)}{code}</div>"
    hosted = hosted_content_html(content)
    if hosted is not None:
        return hosted
    return f"<span class='anb-muted'>{h.escape(kind)}</span>"


def _results_by_call(messages: Iterable[Message]) -> dict[str, Content]:
    """Function results keyed by call id, for the calls present in ``messages`` (shown inside their call)."""
    messages = list(messages)
    calls = {c.call_id for m in messages for c in m.contents if c.type == "function_call" and c.call_id}
    out: dict[str, Content] = {}
    for message in messages:
        for content in message.contents:
            if content.type == "function_result" and content.call_id is not None and content.call_id in calls:
                out[content.call_id] = content
    return out


def message_html(
    message: Message,
    *,
    results: Mapping[str, Content] | None = None,
    approvals: Mapping[str, str] | None = None,
    pending: bool = False,
) -> str:
    """Return one message as a chat bubble (safe HTML, without the ``.agentnb`` wrapper).

    Args:
        message: A :class:`agentnb.Message`.
        results: Function results by call id, so a tool call shows its result inside it.
        approvals: Approval state by call id (see ``agentnb._conversation.approval_states``).
        pending: Whether calls without a result are still running (else they show "no result").

    Returns:
        Safe HTML.
    """
    results = results if results is not None else _results_by_call([message])
    approvals = approvals if approvals is not None else approval_states([message])
    parts = [_content_html(c, results, pending=pending, approvals=approvals) for c in message.contents]
    parts = [p for p in parts if p]
    if not parts:
        return ""
    role = message.role
    who = h.escape(role)
    if message.author_name:
        who += f" · {h.escape(message.author_name)}"
    return f"<div class='anb-msg anb-{h.escape(role)}'><div class='anb-role'>{who}</div>{''.join(parts)}</div>"


def messages_html(messages: Sequence[Message], *, pending: bool = False) -> str:
    """Return a transcript: each message as a bubble, tool calls paired with their results.

    Args:
        messages: Messages in order.
        pending: Whether calls without a result are still running.

    Returns:
        Safe HTML.
    """
    results = _results_by_call(messages)
    approvals = approval_states(messages)
    return "".join(message_html(m, results=results, approvals=approvals, pending=pending) for m in messages)


def _content_text(content: Content, results: Mapping[str, Content]) -> str:
    kind = content.type
    if kind == "text":
        text = content.text or ""
        return f"{text}\n{citations_text([content])}" if content.annotations else text
    if kind == "text_reasoning":
        return f"(reasoning) {h.shorten(content.text or '', 120)}"
    if kind == "function_call":
        line = f"{content.name}({_args_text(content.arguments)})"
        note = skill_activity(content)
        if note:
            line += f" [{note}]"
        result = results.get(content.call_id or "")
        if result is not None:
            line += f" -> error: {result.exception}" if result.exception else f" -> {value_text(result.result, 120)}"
        return line
    if kind == "function_result":
        if content.call_id in results:
            return ""
        return f"result {content.call_id}: " + (content.exception or value_text(content.result, 120))
    if kind == "function_approval_request":
        call = content.function_call
        name = f"{call.name}({_args_text(call.arguments)})" if call is not None else content.id
        return f"approval needed: {name}"
    if kind == "function_approval_response":
        call = content.function_call
        name = call.name if call is not None else content.id
        verdict = "approved" if content.approved else "denied"
        return f"{verdict}: {name}" + (f" ({content.reason})" if content.reason else "")
    if kind == "data":
        return f"[{content.media_type}, {len(content.data or b'')} bytes]"
    if kind == "uri":
        return content.uri or ""
    if kind == "usage":
        return usage_text(content.usage_details)
    if kind == "error":
        return f"error: {content.message}"
    hosted = hosted_content_text(content)
    if hosted is not None:
        return hosted
    return f"[{kind}]"


def _message_text(message: Message, results: Mapping[str, Content]) -> str:
    lines = [t for t in (_content_text(c, results) for c in message.contents) if t]
    if not lines:
        return ""
    who = message.role + (f" · {message.author_name}" if message.author_name else "")
    return f"[{who}] " + "\n  ".join(lines)


def messages_text(messages: Sequence[Message]) -> str:
    """Messages as plain text (tool calls with their results), for the plain-text views."""
    results = _results_by_call(messages)
    return "\n".join(t for t in (_message_text(m, results) for m in messages) if t)


# -- responses ---------------------------------------------------------------------------------------------


Response = AgentResponse[Any] | ChatResponse[Any]


def _agent_label(response: Response) -> str | None:
    """The agent's name as its messages carry it, else its id (names read better than UUIDs)."""
    for message in response.messages:
        if message.role == "assistant" and message.author_name:
            return message.author_name
    return response.agent_id if isinstance(response, AgentResponse) else None


def _structured_value_html(response: Response) -> str:
    """The structured output, when one was requested; a parse failure is shown, not raised."""
    try:
        value = response.value
    except StructuredOutputError as e:
        return f"<div class='anb-error'>structured value: {h.escape(e)}</div>"
    if value is None:
        return ""
    return h.details("structured value", h.json_html(_jsonable(value)), open=True)


def _response_html(response: Response) -> str:
    head = [f"<span class='anb-title'>{h.escape(type(response).__name__)}</span>"]
    agent = _agent_label(response)
    if agent:
        head.append(h.badge(f"agent {agent}"))
    if response.model_id:
        head.append(h.badge(response.model_id, "info"))
    if response.finish_reason:
        head.append(h.badge(response.finish_reason))
    pending = response.user_input_requests
    if pending:
        head.append(h.badge(f"{len(pending)} approval(s) pending", "warn"))
    body = messages_html(response.messages) + _structured_value_html(response) + _compaction_html(response)
    usage = usage_text(response.usage_details)
    foot = f"<div class='anb-muted'>{h.escape(usage)}</div>" if usage else ""
    return f"<div class='anb-card'><div class='anb-head'>{''.join(head)}</div>{body}{foot}</div>"


def _compaction_html(response: Response) -> str:
    """Per model call of the turn: tokens sent against the budget, and the groups left out and why."""
    from ..compaction import compaction_reports

    reports = compaction_reports(response)
    if not reports:
        return ""
    parts: list[str] = []
    for number, report in enumerate(reports, start=1):
        label = f"call {number}: " if len(reports) > 1 else ""
        title = f"🗜 compaction {h.badge(report.strategy)} {h.escape(label + report.summary_line())}"
        parts.append(h.details(title, report.html_body()))
    return "".join(parts)


def compaction_log_html(session: AgentSession) -> str:
    """A session's compaction turn by turn (each expandable), or nothing when it recorded none."""
    from ..compaction import session_compaction_log

    log = session_compaction_log(session)
    if not log:
        return ""
    rows = "".join(
        h.details(
            f"turn {turn}: {h.badge(report.strategy)} {h.escape(report.summary_line())}",
            report.html_body(),
        )
        for turn, report in enumerate(log, start=1)
    )
    compacted = sum(1 for r in log if r.compacted)
    return h.details(f"<b>Compaction</b> ({compacted} of {len(log)} turn(s) compacted)", rows)


def _jsonable(value: object) -> object:
    from pydantic import BaseModel  # loaded already by any response_format

    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _response_text(response: Response) -> str:
    bits = [type(response).__name__]
    agent = _agent_label(response)
    if agent:
        bits.append(f"agent {agent!r}")
    if response.model_id:
        bits.append(f"model {response.model_id}")
    bits.append(f"{len(response.messages)} message(s)")
    usage = usage_text(response.usage_details)
    if usage:
        bits.append(usage)
    pending = response.user_input_requests
    if pending:
        bits.append(f"{len(pending)} approval(s) pending")
    body = messages_text(response.messages)
    return " · ".join(bits) + ("\n" + body if body else "")


# -- tools, agents, sessions -------------------------------------------------------------------------------


def _tool_parameters(tool: FunctionTool) -> dict[str, Any] | None:
    try:
        return tool.parameters()
    except ToolSchemaError:  # a broken signature must not break the display of the agent that holds it
        return None


def _as_tool(item: object) -> FunctionTool | None:
    """An agent's tool entry as the ``FunctionTool`` it runs as; ``None`` for a provider or a hosted tool."""
    from .._tools import SupportsToolExpansion, is_hosted_tool, to_tool

    return None if isinstance(item, SupportsToolExpansion) or is_hosted_tool(item) else to_tool(item)


def _hosted_name(item: object) -> str | None:
    """The name a hosted tool declaration shows under (its server label or type); ``None`` for other tools."""
    if not is_json_object(item):
        return None
    return str(item.get("server_label") or item.get("type") or "hosted tool")


def _signature(tool: FunctionTool) -> list[tuple[str, str]]:
    props = (_tool_parameters(tool) or {}).get("properties", {})
    return [(str(k), str(v.get("type", "any")) if is_json_object(v) else "any") for k, v in props.items()]


def _tool_row_html(item: object) -> str:
    hosted = _hosted_name(item)
    if hosted is not None:  # the provider runs it
        return f"<div><code>{h.escape(hosted)}</code> {h.badge('hosted', 'info')}</div>"
    tool = _as_tool(item)
    if tool is None:  # its tools are listed when a run connects to it
        return f"<div><code>{h.escape(h.shorten(repr(item), 100))}</code> <span class='anb-muted'>tools</span></div>"
    badge = h.badge("needs approval", "warn") if tool.approval_mode == "always_require" else ""
    sig = ", ".join(f"{h.escape(k)}: {h.escape(t)}" for k, t in _signature(tool))
    summary = (
        f"<code>{h.escape(tool.name)}</code>({sig}) {badge} "
        f"<span class='anb-muted'>{h.escape(h.shorten(tool.description, 100))}</span>"
    )
    schema = _tool_parameters(tool)
    return h.details(summary, h.json_html(schema) if schema is not None else "")


def _tool_html(tool: FunctionTool) -> str:
    head = f"<div class='anb-head'><span class='anb-title'>{h.escape(type(tool).__name__)}</span></div>"
    extra = ""
    if tool.max_invocations:
        extra = f"<div class='anb-muted'>max invocations: {h.escape(tool.max_invocations)}</div>"
    return f"<div class='anb-card'>{head}{_tool_row_html(tool)}{extra}</div>"


def _tool_line(item: object) -> str:
    hosted = _hosted_name(item)
    if hosted is not None:
        return f"{hosted} [hosted]"
    tool = _as_tool(item)
    if tool is None:
        return repr(item)
    sig = ", ".join(f"{k}: {t}" for k, t in _signature(tool))
    return f"{tool.name}({sig})" + (" [needs approval]" if tool.approval_mode == "always_require" else "")


def _tool_text(tool: FunctionTool) -> str:
    line = f"{type(tool).__name__} {_tool_line(tool)}"
    return line + (f"\n  {tool.description}" if tool.description else "")


def agent_identity(agent: SupportsAgentRun) -> tuple[str, str | None, str | None]:
    """``(name, client class, model)`` of an agent, for view headers; client and model only for an ``Agent``."""
    from .._agents import Agent

    name = agent.name or agent.id or type(agent).__name__
    if not isinstance(agent, Agent):
        return name, None, None
    return name, type(agent.client).__name__, agent.default_options.get("model_id") or agent.client.model_id


def _agent_parts(agent: BaseAgent) -> dict[str, Any]:
    from .._agents import Agent

    parts: dict[str, Any] = {
        "name": agent.name,
        "id": agent.id,
        "description": agent.description,
        "client": None,
        "model": None,
        "instructions": None,
        "tools": [],
        "middleware": list(agent.middleware),
        "context_providers": [p.source_id for p in agent.context_providers],
    }
    if isinstance(agent, Agent):
        client = agent.client
        parts["client"] = type(client).__name__
        parts["model"] = agent.default_options.get("model_id") or client.model_id
        parts["instructions"] = agent.instructions
        parts["tools"] = list(agent.tools)
    return parts


def _middleware_name(middleware: object) -> str:
    """A function's own name; a middleware object's class name."""
    if isinstance(middleware, (types.FunctionType, types.MethodType)):
        return middleware.__name__
    return type(middleware).__name__


def _agent_html(agent: BaseAgent) -> str:
    p = _agent_parts(agent)
    title = p["name"] or type(agent).__name__
    head = [f"<span class='anb-title'>{h.escape(title)}</span>"]
    if p["client"]:
        head.append(h.badge(p["client"], "info"))
    if p["model"]:
        head.append(h.badge(p["model"]))
    rows: list[tuple[str, str]] = []
    if p["description"]:
        rows.append(("description", h.escape(p["description"])))
    if p["instructions"]:
        rows.append(("instructions", f"<div style='white-space:pre-wrap'>{h.escape(p['instructions'])}</div>"))
    if p["tools"]:
        rows.append((f"tools ({len(p['tools'])})", "".join(_tool_row_html(t) for t in p["tools"])))
    if p["middleware"]:
        rows.append(("middleware", h.escape(", ".join(_middleware_name(m) for m in p["middleware"]))))
    if p["context_providers"]:
        rows.append(("context providers", h.escape(", ".join(p["context_providers"]))))
    if p["id"]:
        rows.append(("id", f"<code>{h.escape(p['id'])}</code>"))
    return f"<div class='anb-card'><div class='anb-head'>{''.join(head)}</div>{h.kv_table(rows)}</div>"


def _agent_text(agent: BaseAgent) -> str:
    p = _agent_parts(agent)
    line = f"{type(agent).__name__} {p['name'] or p['id'] or ''}".rstrip()
    if p["client"]:
        line += f" · {p['client']}" + (f" ({p['model']})" if p["model"] else "")
    lines = [line]
    if p["description"]:
        lines.append(f"  description: {p['description']}")
    if p["instructions"]:
        lines.append(f"  instructions: {h.shorten(str(p['instructions']), 200)}")
    for t in p["tools"]:
        lines.append("  tool: " + _tool_line(t))
    if p["middleware"]:
        lines.append("  middleware: " + ", ".join(_middleware_name(m) for m in p["middleware"]))
    return "\n".join(lines)


def _session_html(session: AgentSession) -> str:
    messages = session.messages
    head = f"<span class='anb-title'>{h.escape(type(session).__name__)}</span>"
    head += f" <code>{h.escape(session.session_id)}</code>"
    head += " " + h.badge(f"{len(messages)} message(s)")
    waiting = unanswered_requests(messages)
    if waiting:
        head += " " + h.badge(f"{len(waiting)} approval(s) pending", "warn")
    keys = sorted(str(k) for k in session.state)
    state = f"<div class='anb-muted'>state keys: {h.escape(', '.join(keys))}</div>" if keys else ""
    body = messages_html(messages) + compaction_log_html(session)
    return f"<div class='anb-card'><div class='anb-head'>{head}</div>{body}{state}</div>"


def _session_text(session: AgentSession) -> str:
    messages = session.messages
    line = f"{type(session).__name__} {session.session_id} · {len(messages)} message(s)"
    body = messages_text(messages)
    return line + ("\n" + body if body else "")


def _message_html_card(message: Message) -> str:
    role = h.escape(message.role)
    return message_html(message) or f"<div class='anb-msg anb-{role}'><div class='anb-role'>{role}</div></div>"


def _message_text_plain(message: Message) -> str:
    return _message_text(message, _results_by_call([message])) or f"[{message.role}]"


def _content_html_card(content: Content) -> str:
    return _content_html(content, {}, pending=False)


def _content_text_plain(content: Content) -> str:
    return f"Content[{content.type}] " + _content_text(content, {})


_core_loaded = False
_workflows_loaded = False

#: Types registered with IPython by module and name, so loading the extension does not import them.
LAZY_TYPES: tuple[tuple[str, str], ...] = (
    ("agentnb.workflows._workflow", "Workflow"),
    ("agentnb.workflows._events", "WorkflowRunResult"),
    ("agentnb.workflows._checkpoints", "WorkflowCheckpoint"),
)


def _ensure_core_renderers() -> None:
    """Register the core types on first use, and the workflow types once ``agentnb.workflows`` is imported."""
    global _core_loaded, _workflows_loaded
    if not _workflows_loaded and "agentnb.workflows" in sys.modules:
        _workflows_loaded = True
        from ._workflow import register_renderers

        register_renderers()
    if _core_loaded:
        return
    _core_loaded = True
    from .._agents import Agent, BaseAgent
    from .._sessions import AgentSession
    from .._tools import FunctionTool

    register_renderer(Content, _content_html_card, _content_text_plain)
    register_renderer(Message, _message_html_card, _message_text_plain)
    register_renderer(ChatResponse, _response_html, _response_text)
    register_renderer(AgentResponse, _response_html, _response_text)
    register_renderer(FunctionTool, _tool_html, _tool_text)
    register_renderer(BaseAgent, _agent_html, _agent_text)
    register_renderer(Agent, _agent_html, _agent_text)
    register_renderer(AgentSession, _session_html, _session_text)


def core_types() -> list[type]:
    """Return the types :func:`to_html` knows now, for formatter registration."""
    _ensure_core_renderers()
    return [entry[0] for entry in _RENDERERS]
