"""The approval policy: which requests are answered without asking a person, and how.

One type answers "may this call run without asking?" for every front end: the notebook's ``auto_approve``
and "always allow", ``AGENTNB_AUTO_APPROVE``, ``%%agent --approve``, the DevUI's "always allow" and the
evals' ``on_approval``. It is made of the reference's parts: standing :class:`~agentnb.ToolApprovalRule`
objects (given up front, or kept in the session when a person answers with
:func:`~agentnb.create_always_approve_tool_response`), :data:`ToolApprovalRuleCallback` predicates, and
what to do with the requests nothing covers (ask, approve, deny, or a function that decides).

Rules are bounded by the tool's source: a rule for a local ``delete`` never approves an MCP server's
``delete``, and a rule for one server never approves another's. A policy only decides: the answer it
gives is an ordinary ``function_approval_response`` that goes through the same checks as a person's.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from ._approval import (
    AUTO_APPROVED_KEY,
    DEFAULT_STATE_KEY,
    ToolApprovalRule,
    ToolApprovalState,
    approval_state,
    tool_labels,
)
from ._types import Content, call_arguments

if TYPE_CHECKING:
    from ._sessions import AgentSession

__all__ = [
    "AUTO_APPROVE_ENV",
    "ApprovalDecision",
    "ApprovalFallback",
    "ApprovalPolicy",
    "ToolApprovalRuleCallback",
    "request_server_label",
]

#: Environment variable read by the notebook when no policy is given: ``all`` (or ``1``/``true``/``yes``),
#: ``none`` (or ``0``/``false``/``no``/``deny``), ``ask``, or a comma-separated list of tools to approve
#: (``name`` for a local tool, ``server:name`` for an MCP server's tool).
AUTO_APPROVE_ENV = "AGENTNB_AUTO_APPROVE"

ToolApprovalRuleCallback = Callable[[Content], "bool | Awaitable[bool]"]
"""A predicate over the requested ``function_call`` content; ``True`` approves it without asking.

The call carries its tool's ``server_label`` in ``additional_properties`` when the tool has a source.
"""

ApprovalFallback = Literal["ask", "approve", "deny"] | Callable[[Content], "bool | None"]
"""What happens to a request no rule or callback approves: ask a person, approve, deny, or a function of the
``function_approval_request`` content returning ``True`` (approve), ``False`` (deny) or ``None`` (ask)."""

_APPROVE_WORDS = frozenset({"all", "1", "true", "yes", "approve"})
_DENY_WORDS = frozenset({"none", "0", "false", "no", "deny"})
_ASK_WORDS = frozenset({"ask", "pending"})
_UNSET: Any = object()


@dataclass(frozen=True)
class ApprovalDecision:
    """A policy's answer to one request: ``approved`` is ``True``, ``False`` or ``None`` (ask a person).

    ``by`` says what decided (a standing rule, a predicate, the policy's fallback); ``reason`` is what the
    answer tells the model.
    """

    approved: bool | None
    reason: str | None = None
    by: str | None = None

    @property
    def asks(self) -> bool:
        """Whether a person must answer."""
        return self.approved is None

    def response(self, request: Content) -> Content:
        """The ``function_approval_response`` this decision gives ``request`` (not for a decision that asks)."""
        if self.approved is None:
            raise ValueError("This decision leaves the request to a person; there is no automatic answer.")
        answer = request.to_function_approval_response(self.approved, reason=self.reason)
        if self.approved:
            answer.additional_properties[AUTO_APPROVED_KEY] = self.by or self.reason
        return answer


def request_server_label(request: Content, default: str | None = None) -> str | None:
    """The source recorded on an approval request (``None``: a local tool); ``default`` when it records none."""
    return request.additional_properties.get("server_label", default)


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which approval requests are answered without a person, and how.

    A request is approved when a standing rule kept in the session covers it, or one of ``rules``, or one
    of ``auto_approval_rules`` returns ``True``; otherwise ``fallback`` decides. Every rule is bounded by the
    tool's source (``server_label``).

    Args:
        rules: Standing rules given up front (the session's own rules always apply too).
        auto_approval_rules: Predicates over the requested call; ``True`` approves it.
        fallback: ``"ask"`` (the default), ``"approve"``, ``"deny"``, or a function of the request
            returning ``True``, ``False`` or ``None`` (ask).
        state_key: Where the session keeps its standing rules (shared with :class:`~agentnb.ToolApprovalMiddleware`).

    Example:
        ```python
        from agentnb import ApprovalPolicy, Content

        policy = ApprovalPolicy.parse("lookup,docs:search")
        call = Content.from_function_call("c1", "lookup", arguments={"key": "a"})
        request = Content.from_function_approval_request("r1", call, additional_properties={"server_label": None})
        (await policy.decide(request)).approved  # True
        ```
    """

    rules: Sequence[ToolApprovalRule] = ()
    auto_approval_rules: Sequence[ToolApprovalRuleCallback] = ()
    fallback: ApprovalFallback = "ask"
    state_key: str = DEFAULT_STATE_KEY

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(self.rules))
        object.__setattr__(self, "auto_approval_rules", tuple(self.auto_approval_rules))
        for rule in self.rules:
            if not isinstance(cast(object, rule), ToolApprovalRule):
                raise TypeError(f"rules must be ToolApprovalRule objects, got {rule!r}")
        for predicate in self.auto_approval_rules:
            if not callable(predicate):
                raise TypeError(f"auto_approval_rules must be callables taking a function_call, got {predicate!r}")
        fallback = cast(object, self.fallback)
        if not callable(fallback) and fallback not in ("ask", "approve", "deny"):
            raise ValueError(f"fallback must be 'ask', 'approve', 'deny' or a callable, got {self.fallback!r}")

    # -- building one ------------------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> ApprovalPolicy:
        """A policy from its text form (``AGENTNB_AUTO_APPROVE``, ``%%agent --approve``).

        ``all`` approves everything, ``none`` denies everything, ``ask`` asks; otherwise a comma-separated
        list of tools to approve, ``name`` for a local tool and ``server:name`` for an MCP server's tool.

        Raises:
            ValueError: ``text`` is empty or names an empty tool.
        """
        raw = text.strip()
        low = raw.lower()
        if low in _APPROVE_WORDS:
            return cls(fallback="approve")
        if low in _DENY_WORDS:
            return cls(fallback="deny")
        if low in _ASK_WORDS:
            return cls()
        names = [part.strip() for part in raw.split(",")]
        if not raw or any(not n for n in names):
            raise ValueError(f"An approval policy is all, none, ask or tool names (server:name), got {text!r}")
        return cls(rules=[_rule_for(name) for name in names])

    @classmethod
    def from_env(cls) -> ApprovalPolicy | None:
        """The policy ``$AGENTNB_AUTO_APPROVE`` describes, or ``None`` when it is unset or empty."""
        raw = os.environ.get(AUTO_APPROVE_ENV, "").strip()
        return cls.parse(raw) if raw else None

    @classmethod
    def coerce(cls, value: Any) -> ApprovalPolicy:
        """Turn what a front end accepts into a policy.

        ``True``/``False``, ``"approve"``/``"deny"``/``"ask"``/``"pending"``, a collection of tool names
        (``server:name`` for an MCP tool) or :class:`~agentnb.ToolApprovalRule` objects, a callable deciding
        each request (``True``/``False``/``None``), or a policy.

        Raises:
            TypeError: ``value`` is none of those (a bare tool name must come in a list).
        """
        if isinstance(value, ApprovalPolicy):
            return value
        if value is None:
            return cls()
        if isinstance(value, bool):
            return cls(fallback="approve" if value else "deny")
        if isinstance(value, str):
            low = value.strip().lower()
            if low in ("approve", "deny", "ask", "pending"):
                return cls(fallback="ask" if low == "pending" else low)
            raise TypeError(f"A policy takes a collection of tool names, not a string; use [{value!r}]")
        if isinstance(value, ToolApprovalRule):
            return cls(rules=[value])
        if callable(value):
            return cls(fallback=cast("Callable[[Content], bool | None]", value))
        if isinstance(value, Iterable):
            rules: list[ToolApprovalRule] = []
            for item in cast("Iterable[object]", value):
                if isinstance(item, ToolApprovalRule):
                    rules.append(item)
                elif isinstance(item, str) and item.strip():
                    rules.append(_rule_for(item.strip()))
                else:
                    raise TypeError(f"A policy's tools are names or ToolApprovalRule objects, got {item!r}")
            return cls(rules=rules)
        raise TypeError(f"Not an approval policy: {value!r}")

    # -- the session's standing rules ---------------------------------------------------------------------------
    def session_state(self, session: AgentSession) -> ToolApprovalState:
        """The session's standing rules (created empty on first use; saved with the session)."""
        return approval_state(session, self.state_key)

    def remember(
        self, session: AgentSession, request: Content, *, scope: Literal["tool", "arguments"] = "tool"
    ) -> ToolApprovalRule:
        """Keep approving calls like ``request`` in ``session``: the same tool from the same source.

        Args:
            session: Where the rule is kept.
            request: The ``function_approval_request`` a person approved with "always allow".
            scope: ``"tool"`` (any arguments) or ``"arguments"`` (exactly these arguments).

        Raises:
            ValueError: ``request`` is not an approval request for a named call.
        """
        call = request.function_call
        if request.type != "function_approval_request" or call is None or not call.name:
            raise ValueError(f"Only a function_approval_request names a tool to remember, not a {request.type!r}.")
        label = request_server_label(request)
        arguments = call_arguments(call) if scope == "arguments" else None
        rule = ToolApprovalRule(call.name, server_label=label, arguments=arguments)
        self.session_state(session).add(rule)
        return rule

    # -- deciding --------------------------------------------------------------------------------------------
    async def decide(
        self,
        request: Content,
        *,
        session: AgentSession | None = None,
        agent: Any = None,
        server_label: str | None = _UNSET,
        run_rules: Sequence[ToolApprovalRule] = (),
    ) -> ApprovalDecision:
        """Decide one ``function_approval_request``: approve, deny, or leave it to a person.

        Args:
            request: The request.
            session: The session whose standing rules apply (``None``: only this policy's own).
            agent: The agent that asked, to find the tool's source when the request does not record it.
            server_label: The tool's source when the caller already knows it (overrides the lookup).
            run_rules: Rules that hold for this run only (made in a run without a session).
        """
        call = request.function_call
        if request.type != "function_approval_request" or call is None or not call.name:
            return ApprovalDecision(None)
        label = server_label
        if label is _UNSET:
            if "server_label" in request.additional_properties or agent is None:
                label = request_server_label(request)
            else:
                label = (await tool_labels(agent)).get(call.name)
        rules: list[ToolApprovalRule] = [*run_rules, *self.rules]
        if session is not None and session.state.get(self.state_key) is not None:
            rules = [*self.session_state(session).rules, *rules]
        rule = next((r for r in rules if r.matches(call, label)), None)
        if rule is not None:
            return _automatic(f"standing rule: {rule.describe()}")
        for predicate in self.auto_approval_rules:
            if await _predicate_approves(predicate, call, label):
                return _automatic(f"auto-approval rule {getattr(predicate, '__name__', type(predicate).__name__)}")
        fallback = self.fallback
        if fallback == "ask":
            return ApprovalDecision(None)
        if fallback == "approve":
            return ApprovalDecision(True, "approved by policy", "policy")
        if fallback == "deny":
            return ApprovalDecision(False, "denied by policy", "policy")
        verdict = cast(object, fallback(request))  # user code may return anything
        if verdict is not None and not isinstance(verdict, bool):
            raise TypeError(f"An approval policy function must return True, False or None, got {verdict!r}")
        if verdict is None:
            return ApprovalDecision(None)
        return ApprovalDecision(verdict, "approved by policy" if verdict else "denied by policy", "policy")


def _automatic(by: str) -> ApprovalDecision:
    return ApprovalDecision(True, f"Approved automatically ({by}).", by)


def _rule_for(name: str) -> ToolApprovalRule:
    """``name`` approves a local tool; ``server:name`` approves that MCP server's tool."""
    server, sep, tool = name.rpartition(":")
    if sep and server and tool:
        return ToolApprovalRule(tool, server_label=server)
    if sep:
        raise ValueError(f"A tool is named 'name' or 'server:name', got {name!r}")
    return ToolApprovalRule(name)


async def _predicate_approves(predicate: ToolApprovalRuleCallback, call: Content, label: str | None) -> bool:
    # A copy: the predicate sees the source without the model-visible call being changed.
    seen = Content.from_dict(call.to_dict())
    if label is not None:
        seen.additional_properties["server_label"] = label
    verdict = cast(object, predicate(seen))
    if inspect.isawaitable(verdict):
        verdict = await verdict
    if not isinstance(verdict, bool):
        raise TypeError(
            f"Auto-approval rule {getattr(predicate, '__name__', predicate)!r} returned "
            f"{type(verdict).__name__}; it must return True or False."
        )
    return verdict
