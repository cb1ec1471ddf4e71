"""Standing approvals: rules a person made in advance, kept in the session, bounded by the tool's source.

The function-invocation loop never runs an approval-required tool without an approving answer. A standing
rule does not weaken that gate: it lets :class:`~agentnb.ApprovalPolicy` and
:class:`~agentnb.ToolApprovalMiddleware` *answer* requests the person already approved, with ordinary
``function_approval_response`` contents sent through the same flow. Rules are keyed by the tool's source
(an MCP server's ``server_label``) as well as its name, so approving one server's ``delete`` never approves
another server's ``delete``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from ._conversation import pending_requests
from ._sessions import HistoryProvider
from ._tools import FunctionTool, SupportsToolExpansion
from ._types import Content, Message, call_arguments

if TYPE_CHECKING:
    from ._sessions import AgentSession

__all__ = [
    "AUTO_APPROVED_KEY",
    "DEFAULT_STATE_KEY",
    "DEFAULT_TOOL_APPROVAL_SOURCE_ID",
    "RULE_KEY",
    "ToolApprovalRule",
    "ToolApprovalState",
    "approval_state",
    "create_always_approve_tool_response",
    "create_always_approve_tool_with_arguments_response",
    "pending_approval_requests",
    "tool_labels",
]

#: Key of a response's ``additional_properties`` asking the middleware to store a standing rule.
RULE_KEY = "tool_approval_rule"
#: Key of an automatic answer's ``additional_properties`` saying what approved it.
AUTO_APPROVED_KEY = "auto_approved_by"
#: Where the middleware keeps its state in ``AgentSession.state``.
DEFAULT_STATE_KEY = "tool_approval"
#: The reference's name for :data:`DEFAULT_STATE_KEY` (the middleware's ``source_id``).
DEFAULT_TOOL_APPROVAL_SOURCE_ID = DEFAULT_STATE_KEY


def _canonical(arguments: Any) -> str | None:
    """Arguments as canonical JSON, so ``{"n": 1}`` never equals ``{"n": True}`` or ``{"n": 1.0}``."""
    try:
        return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


@dataclass
class ToolApprovalRule:
    """A standing approval: calls to ``tool_name`` from ``server_label`` run without asking.

    Args:
        tool_name: The tool's name as the model calls it.
        server_label: The tool's source (an MCP server's name); ``None`` for local tools. A rule only
            matches tools from the same source.
        arguments: ``None`` approves every call of the tool; a dict approves only calls with exactly
            these arguments (``{}`` is a call without arguments).

    Example:
        ```python
        from agentnb import Content, ToolApprovalRule

        rule = ToolApprovalRule("get_weather", arguments={"city": "Paris"})
        call = Content.from_function_call("call_1", "get_weather", '{"city": "Paris"}')
        rule.matches(call)  # True
        ```
    """

    tool_name: str
    server_label: str | None = None
    arguments: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # Checked at run time too: notebooks pass whatever is at hand, and saved rules are read back from JSON.
        if not isinstance(cast(object, self.tool_name), str) or not self.tool_name:
            raise ValueError(f"tool_name must be a non-empty string, got {self.tool_name!r}")
        arguments = cast(object, self.arguments)
        if arguments is not None and (not isinstance(arguments, dict) or _canonical(arguments) is None):
            raise ValueError(f"arguments must be None or a JSON-serializable dict, got {self.arguments!r}")

    def matches(self, function_call: Content, server_label: str | None = None) -> bool:
        """Whether this rule approves ``function_call`` made to a tool from ``server_label``."""
        if function_call.type != "function_call" or function_call.name != self.tool_name:
            return False
        if server_label != self.server_label:
            return False
        if self.arguments is None:
            return True
        try:
            arguments = call_arguments(function_call)
        except ValueError:
            return False
        canonical = _canonical(arguments)
        return canonical is not None and canonical == _canonical(self.arguments)

    def describe(self) -> str:
        """A short human description, as shown in the reason of an automatic approval."""
        source = f" from {self.server_label!r}" if self.server_label is not None else ""
        if self.arguments is None:
            return f"always approve {self.tool_name!r}{source}"
        return f"always approve {self.tool_name!r}{source} with arguments {_canonical(self.arguments)}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; :meth:`from_dict` restores an equal rule."""
        return {"tool_name": self.tool_name, "server_label": self.server_label, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolApprovalRule:
        """Rebuild a rule saved with :meth:`to_dict`."""
        if not isinstance(cast(object, data), dict) or "tool_name" not in data:
            raise ValueError(f"Not a saved ToolApprovalRule: {data!r}")
        return cls(data["tool_name"], server_label=data.get("server_label"), arguments=data.get("arguments"))


@dataclass
class ToolApprovalState:
    """The standing approval rules of one session (kept in ``session.state``, saved with the session).

    Example:
        ```python
        from agentnb import ToolApprovalRule, ToolApprovalState

        state = ToolApprovalState()
        state.add(ToolApprovalRule("get_weather"))
        ToolApprovalState.from_dict(state.to_dict()) == state  # True
        ```
    """

    rules: list[ToolApprovalRule] = field(default_factory=list)

    def add(self, rule: ToolApprovalRule) -> bool:
        """Add ``rule`` unless an equal one is there; returns whether it was added."""
        if rule in self.rules:
            return False
        self.rules.append(rule)
        return True

    def remove(self, rule: ToolApprovalRule) -> bool:
        """Remove ``rule``; returns whether it was there."""
        if rule not in self.rules:
            return False
        self.rules.remove(rule)
        return True

    def clear(self) -> None:
        """Forget every standing rule."""
        self.rules.clear()

    def find(self, function_call: Content, server_label: str | None = None) -> ToolApprovalRule | None:
        """The first rule that approves ``function_call`` (from a tool of ``server_label``), if any."""
        return next((r for r in self.rules if r.matches(function_call, server_label)), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; :meth:`from_dict` restores an equal state."""
        return {"rules": [r.to_dict() for r in self.rules]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolApprovalState:
        """Rebuild a state saved with :meth:`to_dict`."""
        if not isinstance(cast(object, data), dict):
            raise ValueError(f"Not a saved ToolApprovalState: {data!r}")
        saved: list[dict[str, Any]] = data.get("rules") or []
        return cls(rules=[ToolApprovalRule.from_dict(r) for r in saved])


# -- answers that also create standing rules -----------------------------------------------------------------


def _rule_response(request: Content, scope: Literal["tool", "arguments"], reason: str | None) -> Content:
    if request.type != "function_approval_request" or request.function_call is None or request.id is None:
        raise ValueError(f"Only a function_approval_request can be answered, not a {request.type!r} content.")
    if scope == "arguments":
        call_arguments(request.function_call)  # arguments that are not a JSON object cannot make a rule
    response = request.to_function_approval_response(True, reason=reason)
    metadata: dict[str, Any] = {"scope": scope}
    if "server_label" in request.additional_properties:
        metadata["server_label"] = request.additional_properties["server_label"]
    response.additional_properties[RULE_KEY] = metadata
    return response


def create_always_approve_tool_response(request: Content, *, reason: str | None = None) -> Content:
    """Approve ``request`` and keep approving every later call of the same tool (from the same source).

    Send the result like any approval response; a :class:`ToolApprovalMiddleware` on the agent stores the
    rule in the session once the run accepts the answer.
    """
    return _rule_response(request, "tool", reason)


def create_always_approve_tool_with_arguments_response(request: Content, *, reason: str | None = None) -> Content:
    """Approve ``request`` and keep approving later calls of the same tool with exactly the same arguments."""
    return _rule_response(request, "arguments", reason)


async def pending_approval_requests(session: AgentSession, *, agent: Any = None) -> list[Content]:
    """The approval requests ``session`` still waits on, read from its history (for example after a restart).

    Args:
        session: The conversation.
        agent: The agent whose history provider holds the conversation; without it, the session's
            in-memory history is read.
    """
    history: list[Message] = []
    candidates: Sequence[object] = getattr(agent, "context_providers", None) or []
    providers = [p for p in candidates if isinstance(p, HistoryProvider)]
    if not providers:
        history = session.messages
    else:
        provider = providers[0]
        history = await provider.get_messages(session.session_id, state=session.state.get(provider.source_id, {}))
    return pending_requests(history)


def approval_state(session: AgentSession, state_key: str = DEFAULT_STATE_KEY) -> ToolApprovalState:
    """The standing rules ``session`` keeps under ``state_key`` (created empty on first use; saved with it)."""
    value = session.state.get(state_key)
    if isinstance(value, ToolApprovalState):
        return value
    state = ToolApprovalState() if value is None else ToolApprovalState.from_dict(value)
    session.state[state_key] = state
    return state


async def tool_labels(agent: Any) -> dict[str, str | None]:
    """The source (``server_label``; ``None`` for a local tool) of each of ``agent``'s tools, by tool name.

    For requests that do not record their source (made before sources were recorded). Tool providers such
    as MCP servers are asked for their tools, which may connect them.
    """
    labels: dict[str, str | None] = {}
    items: Sequence[object] = getattr(agent, "tools", None) or []
    for item in items:
        tools: Sequence[Any]
        if isinstance(item, FunctionTool):
            tools = [item]
        elif isinstance(item, SupportsToolExpansion):
            tools = await item.get_tools()
        else:
            continue
        for t in tools:
            labels.setdefault(t.name, t.additional_properties.get("server_label"))
    return labels
