"""The approval middleware: answers what the policy covers inside the run, hands the rest to the caller.

The function-invocation loop never runs an approval-required tool without an approving answer. This
middleware does not weaken that gate: after each round it asks the agent's :class:`~agentnb.ApprovalPolicy`
(standing rules kept in the session, predicates the developer supplied) about the requests the round ended
with, sends its answers as ordinary ``function_approval_response`` contents through the same flow, and
hands every request the policy leaves to a person back to the caller.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ._approval import (
    DEFAULT_STATE_KEY,
    RULE_KEY,
    ToolApprovalRule,
    ToolApprovalState,
    approval_state,
    tool_labels,
)
from ._approval_policy import ApprovalPolicy, ToolApprovalRuleCallback
from ._json import is_json_object
from ._middleware import AgentContext, AgentMiddleware
from ._types import (
    AgentResponse,
    AgentResponseUpdate,
    Content,
    Message,
    ResponseStream,
    add_usage_details,
    call_arguments,
)
from .exceptions import ApprovalError

if TYPE_CHECKING:
    from ._sessions import AgentSession

__all__ = ["ToolApprovalMiddleware"]


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
        policy: The whole policy instead (its predicates, up-front rules and fallback); give either this
            or the two arguments above.
        max_auto_rounds: Automatic answer rounds allowed in one run; past it, requests go to the caller.
        source_id: The reference's name for ``state_key`` (default :data:`DEFAULT_TOOL_APPROVAL_SOURCE_ID`).

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
        auto_approval_rules: Sequence[ToolApprovalRuleCallback] | None = None,
        state_key: str = DEFAULT_STATE_KEY,
        max_auto_rounds: int = 50,
        policy: ApprovalPolicy | None = None,
        source_id: str | None = None,
    ) -> None:
        if source_id is not None:  # the reference's name for state_key
            if state_key not in (DEFAULT_STATE_KEY, source_id):
                raise ValueError("Give either source_id= or state_key= (the same setting), not both.")
            state_key = source_id
        if max_auto_rounds < 1:
            raise ValueError(f"max_auto_rounds must be >= 1, got {max_auto_rounds}")
        if policy is None:
            policy = ApprovalPolicy(auto_approval_rules=list(auto_approval_rules or []), state_key=state_key)
        elif auto_approval_rules or state_key != DEFAULT_STATE_KEY:
            raise ValueError("Give either policy= or auto_approval_rules= / state_key=, not both.")
        self.policy = policy
        self.max_auto_rounds = max_auto_rounds

    @property
    def auto_approval_rules(self) -> list[ToolApprovalRuleCallback]:
        """The policy's predicates."""
        return list(self.policy.auto_approval_rules)

    @property
    def state_key(self) -> str:
        """Where the session keeps its standing rules."""
        return self.policy.state_key

    @property
    def source_id(self) -> str:
        """The reference's name for :attr:`state_key`."""
        return self.policy.state_key

    # -- state -----------------------------------------------------------------------------------------------
    def get_state(self, session: AgentSession) -> ToolApprovalState:
        """The session's approval state (created empty on first use); changes to it are saved with the session."""
        return approval_state(session, self.state_key)

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
                        arguments = call_arguments(call)
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
            self._labels = await tool_labels(self.context.agent)
        return self._labels.get(tool_name)

    async def answers_for(self, requests: Sequence[Content]) -> list[Content]:
        """The policy's answers for the requests it decides (the rest go to the caller)."""
        answers: list[Content] = []
        run_rules = self.local_state.rules if self.session is None else ()
        for request in requests:
            call = request.function_call
            if call is None or request.id is None or not call.name:
                continue
            if "server_label" in request.additional_properties:
                label = request.additional_properties["server_label"]
            else:
                label = await self.label_of(call.name)
            decision = await self.middleware.policy.decide(
                request, session=self.session, server_label=label, run_rules=run_rules
            )
            if not decision.asks:
                answers.append(decision.response(request))
        return answers

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
