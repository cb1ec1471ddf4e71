"""Standing approvals: rules and predicates that answer tool approval requests on a person's behalf.

The function-invocation loop never runs an approval-required tool without an approving answer. This
middleware does not weaken that gate: it *answers* requests the person already approved in advance
(a standing rule kept in the session, or a predicate the developer supplied) by sending ordinary
``function_approval_response`` contents through the same flow, and hands every other request back to
the caller. Rules are keyed by the tool's source (an MCP server's ``server_label``) as well as its name,
so approving one server's ``delete`` never approves another server's ``delete``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from ._conversation import pending_requests
from ._json import is_json_object
from ._middleware import AgentContext, AgentMiddleware
from ._sessions import HistoryProvider
from ._tools import FunctionTool, SupportsToolExpansion
from ._types import (
    AgentResponse,
    AgentResponseUpdate,
    Content,
    Message,
    ResponseStream,
    add_usage_details,
)
from .exceptions import ApprovalError

if TYPE_CHECKING:
    from ._sessions import AgentSession

__all__ = [
    "AutoApprovalRule",
    "ToolApprovalMiddleware",
    "ToolApprovalRule",
    "ToolApprovalState",
    "create_always_approve_tool_response",
    "create_always_approve_tool_with_arguments_response",
    "pending_approval_requests",
]

#: Key of a response's ``additional_properties`` asking the middleware to store a standing rule.
RULE_KEY = "tool_approval_rule"
#: Key of an automatic answer's ``additional_properties`` saying what approved it.
AUTO_APPROVED_KEY = "auto_approved_by"
#: Where the middleware keeps its state in ``AgentSession.state``.
DEFAULT_STATE_KEY = "tool_approval"

AutoApprovalRule = Callable[[Content], "bool | Awaitable[bool]"]
"""A predicate over the requested ``function_call`` content; ``True`` approves it without asking."""


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
            arguments = function_call.parse_arguments()
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
        request.function_call.parse_arguments()  # arguments that are not a JSON object cannot make a rule
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


# -- the middleware -----------------------------------------------------------------------------------------


class ToolApprovalMiddleware(AgentMiddleware):
    """Answers approval requests covered by standing rules or predicates; passes the rest to the caller.

    Standing rules come from answers made with :func:`create_always_approve_tool_response` and
    :func:`create_always_approve_tool_with_arguments_response` (or :meth:`add_rule`) and live in
    ``session.state``, so they are saved and restored with the session. Without a session, rules made in a
    run last for that run only. ``auto_approval_rules`` are predicates over the requested function call
    (sync or async, returning ``bool``); the call they see carries the tool's ``server_label`` in its
    ``additional_properties`` when the tool has one. Automatic answers are visible in the response (a
    ``user`` message of approval responses whose ``additional_properties["auto_approved_by"]`` says why).

    Args:
        auto_approval_rules: Predicates; any returning ``True`` approves the call.
        state_key: Where the rules live in ``session.state``.
        max_auto_rounds: Automatic answer rounds allowed in one run; past it, requests go to the caller.

    Example:
        ```python
        from agentnb import Agent, Message, ToolApprovalMiddleware, create_always_approve_tool_response, tool
        from agentnb.local import ScriptedChatClient

        @tool(approval_mode="always_require")
        def send_email(to: str) -> str:
            \"\"\"Send an email.\"\"\"
            return f"sent to {to}"

        client = ScriptedChatClient([
            ScriptedChatClient.call("send_email", to="ada@example.com"), "Sent.",
            ScriptedChatClient.call("send_email", to="bob@example.com"), "Sent again.",
        ])
        agent = Agent(client, tools=[send_email], middleware=[ToolApprovalMiddleware()])
        session = agent.create_session()
        request = (await agent.run("Email Ada", session=session)).user_input_requests[0]
        await agent.run(Message("user", [create_always_approve_tool_response(request)]), session=session)
        (await agent.run("Email Bob", session=session)).text  # 'Sent again.' (no request this time)
        ```
    """

    def __init__(
        self,
        *,
        auto_approval_rules: Sequence[AutoApprovalRule] | None = None,
        state_key: str = DEFAULT_STATE_KEY,
        max_auto_rounds: int = 50,
    ) -> None:
        if max_auto_rounds < 1:
            raise ValueError(f"max_auto_rounds must be >= 1, got {max_auto_rounds}")
        rules = list(auto_approval_rules or [])
        for rule in rules:
            if not callable(rule):
                raise TypeError(f"auto_approval_rules must be callables taking a function_call content, got {rule!r}")
        self.auto_approval_rules: list[AutoApprovalRule] = rules
        self.state_key = state_key
        self.max_auto_rounds = max_auto_rounds

    # -- state -----------------------------------------------------------------------------------------------
    def get_state(self, session: AgentSession) -> ToolApprovalState:
        """The session's approval state (created empty on first use); changes to it are saved with the session."""
        value = session.state.get(self.state_key)
        if isinstance(value, ToolApprovalState):
            return value
        state = ToolApprovalState() if value is None else ToolApprovalState.from_dict(value)
        session.state[self.state_key] = state
        return state

    def add_rule(self, session: AgentSession, rule: ToolApprovalRule) -> bool:
        """Store a standing rule in ``session``; returns whether it is new."""
        return self.get_state(session).add(rule)

    def remove_rule(self, session: AgentSession, rule: ToolApprovalRule) -> bool:
        """Drop a standing rule from ``session``; returns whether it was there."""
        return self.get_state(session).remove(rule)

    def rules(self, session: AgentSession) -> list[ToolApprovalRule]:
        """The standing rules of ``session``."""
        if session.state.get(self.state_key) is None:
            return []
        return list(self.get_state(session).rules)

    # -- the run -----------------------------------------------------------------------------------------------
    async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
        """Store rules the input asks for, run, then answer what rules and predicates cover and resume."""
        run = _ApprovalRun(self, context)
        requested = await run.rules_requested(context.messages)
        if context.stream:
            await run.stream(call_next, requested)
        else:
            await run.run(call_next, requested)


class _ApprovalRun:
    """One agent run under the middleware: the rounds of automatic answers and their merged response."""

    def __init__(self, middleware: ToolApprovalMiddleware, context: AgentContext) -> None:
        self.middleware = middleware
        self.context = context
        self.original = context.messages
        self.session = context.session
        # Without a session, rules made in this run still cover its later rounds.
        self.local_state = ToolApprovalState()
        self.rounds: list[tuple[list[Content], AgentResponse]] = []
        self._labels: dict[str, str | None] | None = None

    @property
    def state(self) -> ToolApprovalState:
        if self.session is None:
            return self.local_state
        return self.middleware.get_state(self.session)

    # -- rules asked for in the input -------------------------------------------------------------------------
    async def rules_requested(self, messages: Sequence[Message]) -> list[ToolApprovalRule]:
        """Rules the input's approval responses ask for; inconsistent requests are refused before anything runs."""
        rules: list[ToolApprovalRule] = []
        for message in messages:
            for content in message.contents:
                metadata = content.additional_properties.get(RULE_KEY)
                if content.type != "function_approval_response" or metadata is None:
                    continue
                call = content.function_call
                if not is_json_object(metadata) or metadata.get("scope") not in ("tool", "arguments"):
                    raise ApprovalError(
                        f"Approval response {content.id!r} asks for an unknown standing rule {metadata!r}."
                    )
                if content.approved is not True or call is None or not call.name:
                    raise ApprovalError(
                        f"Approval response {content.id!r} asks for a standing rule but does not approve a call; "
                        "nothing was executed."
                    )
                label = metadata["server_label"] if "server_label" in metadata else await self.label_of(call.name)
                if metadata["scope"] == "tool":
                    rules.append(ToolApprovalRule(call.name, server_label=label))
                else:
                    try:
                        arguments = call.parse_arguments()
                    except ValueError as e:
                        raise ApprovalError(f"Approval response {content.id!r}: {e}; nothing was executed.") from e
                    rules.append(ToolApprovalRule(call.name, server_label=label, arguments=arguments))
        return rules

    def commit(self, rules: Sequence[ToolApprovalRule]) -> None:
        """Store rules once the run has accepted the answers that asked for them."""
        for rule in rules:
            self.state.add(rule)

    # -- automatic answers --------------------------------------------------------------------------------------
    async def label_of(self, tool_name: str) -> str | None:
        """The server label of the agent's tool named ``tool_name`` (for requests that do not record it)."""
        if self._labels is None:
            labels: dict[str, str | None] = {}
            items: Sequence[object] = getattr(self.context.agent, "tools", None) or []
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
            self._labels = labels
        return self._labels.get(tool_name)

    async def answers_for(self, requests: Sequence[Content]) -> list[Content]:
        """Approving answers for the requests a standing rule or a predicate covers."""
        answers: list[Content] = []
        for request in requests:
            call = request.function_call
            if call is None or request.id is None or not call.name:
                continue
            if "server_label" in request.additional_properties:
                label = request.additional_properties["server_label"]
            else:
                label = await self.label_of(call.name)
            reason: str | None = None
            rule = self.state.find(call, label)
            if rule is not None:
                reason = f"standing rule: {rule.describe()}"
            else:
                for predicate in self.middleware.auto_approval_rules:
                    if await self._predicate_approves(predicate, call, label):
                        reason = f"auto-approval rule {getattr(predicate, '__name__', type(predicate).__name__)}"
                        break
            if reason is not None:
                answer = request.to_function_approval_response(True, reason=f"Approved automatically ({reason}).")
                answer.additional_properties[AUTO_APPROVED_KEY] = reason
                answers.append(answer)
        return answers

    @staticmethod
    async def _predicate_approves(predicate: AutoApprovalRule, call: Content, label: str | None) -> bool:
        # A copy: the predicate sees the source without the model-visible call being changed.
        seen = Content.from_dict(call.to_dict())
        if label is not None:
            seen.additional_properties["server_label"] = label
        verdict: Any = predicate(seen)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if not isinstance(verdict, bool):
            raise TypeError(
                f"Auto-approval rule {getattr(predicate, '__name__', predicate)!r} returned "
                f"{type(verdict).__name__}; it must return True or False."
            )
        return verdict

    def next_input(self, answers: list[Content]) -> list[Message]:
        """What to send to resume: the answers (with a session) or the whole conversation plus the answers."""
        message = Message("user", answers)
        if self.session is not None:
            return [message]
        so_far: list[Message] = list(self.original)
        for previous_answers, response in self.rounds:
            if previous_answers:
                so_far.append(Message("user", previous_answers))
            so_far.extend(response.messages)
        return [*so_far, message]

    def merged(self) -> AgentResponse:
        """One response for the whole run: every round's messages, with the automatic answers between them."""
        if len(self.rounds) == 1:
            return self.rounds[0][1]
        messages: list[Message] = []
        usage = None
        for answers, response in self.rounds:
            if answers:
                messages.append(Message("user", answers))
            messages.extend(response.messages)
            usage = add_usage_details(usage, response.usage_details)
        first, last = self.rounds[0][1], self.rounds[-1][1]
        return AgentResponse(
            messages=messages,
            response_id=last.response_id,
            agent_id=last.agent_id,
            conversation_id=last.conversation_id,
            model_id=last.model_id,
            created_at=first.created_at,
            finish_reason=last.finish_reason,
            usage_details=usage,
            response_format=last._response_format,  # pyright: ignore[reportPrivateUsage]
            additional_properties=last.additional_properties,
            raw_representation=[response for _, response in self.rounds],
        )

    # -- non-streaming -----------------------------------------------------------------------------------------
    async def run(self, call_next: Callable[[], Awaitable[None]], requested: list[ToolApprovalRule]) -> None:
        context = self.context
        try:
            await call_next()
            response = await _final(context.result)
            self.commit(requested)
            answers: list[Content] = []
            self.rounds.append((answers, response))
            for _ in range(self.middleware.max_auto_rounds):
                answers = await self.answers_for(response.user_input_requests)
                if not answers:
                    break
                context.messages = self.next_input(answers)
                await call_next()
                response = await _final(context.result)
                self.rounds.append((answers, response))
        finally:
            context.messages = self.original
        context.result = self.merged()

    # -- streaming ---------------------------------------------------------------------------------------------
    async def stream(self, call_next: Callable[[], Awaitable[None]], requested: list[ToolApprovalRule]) -> None:
        context = self.context
        await call_next()
        first = context.result
        agent_id = getattr(context.agent, "id", None)

        async def updates() -> AsyncIterator[AgentResponseUpdate]:
            stream: AgentResponse | ResponseStream[AgentResponseUpdate, AgentResponse] = first
            answers: list[Content] = []
            try:
                for round_number in range(self.middleware.max_auto_rounds + 1):
                    if isinstance(stream, ResponseStream):
                        async for update in stream:
                            yield update
                    response = await _final(stream)
                    if round_number == 0:
                        self.commit(requested)
                    self.rounds.append((answers, response))
                    if round_number == self.middleware.max_auto_rounds:
                        break
                    answers = await self.answers_for(response.user_input_requests)
                    if not answers:
                        break
                    yield AgentResponseUpdate(contents=list(answers), role="user", agent_id=agent_id)
                    context.messages = self.next_input(answers)
                    outer = context.result  # the stream the caller holds (ours, or an outer middleware's)
                    await call_next()
                    stream = context.result
                    context.result = outer
            finally:
                context.messages = self.original

        context.result = ResponseStream(updates(), lambda _updates: self.merged())


async def _final(result: Any) -> AgentResponse:
    # ``context.result`` is whatever the run (or another middleware) left there: check it, then type it.
    if isinstance(result, ResponseStream):
        return await cast("ResponseStream[AgentResponseUpdate, AgentResponse]", result).get_final_response()
    if not isinstance(result, AgentResponse):
        raise TypeError(f"ToolApprovalMiddleware expected an AgentResponse from the run, got {type(result).__name__}.")
    return cast(AgentResponse, result)
