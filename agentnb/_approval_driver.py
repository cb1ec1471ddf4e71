"""The approval driver: run an agent, collect the answers its approval requests need, resume.

Every front end that lets an agent ask for approval does the same three things: run a turn, gather one
answer per pending ``function_approval_request`` (from the :class:`~agentnb.ApprovalPolicy`, or from a
person: a card click, an API item, a workflow response), and once every request has its answer, send them
all in one user message on the same conversation. :class:`ApprovalDriver` does them once, for the notebook,
the DevUI chat and its Responses API, evals and workflow executors; each front end only renders what the
driver reports and passes on what a person decided.

With a session, the conversation lives there. Without one (evals, workflow executors) the driver keeps the
transcript itself and sends it whole each turn, which is what a session would have held.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ._approval import ToolApprovalRule, create_always_approve_tool_response
from ._approval_policy import ApprovalDecision, ApprovalPolicy, request_server_label
from ._conversation import HAS_CONTROL, tool_kinds
from ._types import AgentResponse, AgentResponseUpdate, Content, Message, normalize_messages
from .exceptions import ApprovalError

if TYPE_CHECKING:
    from ._sessions import AgentSession
    from ._types import ResponseStream

__all__ = ["ApprovalDriver", "AutoAnswered", "DriverEvent", "TurnStarted"]


@dataclass(frozen=True)
class TurnStarted:
    """The driver is about to call the agent with ``messages`` (the new input of this turn)."""

    messages: list[Message]


@dataclass(frozen=True)
class AutoAnswered:
    """The policy answered ``request`` without a person."""

    request: Content
    decision: ApprovalDecision


DriverEvent = TurnStarted | AgentResponseUpdate | AgentResponse | AutoAnswered
"""What :meth:`ApprovalDriver.run` reports, in order: a turn starts, its streamed updates, its response,
and the policy's answers to the requests that response ended with."""


class ApprovalDriver:
    """Run an agent turn by turn, answering approval requests from the policy or a person.

    Args:
        agent: Anything with ``run(messages, *, session=..., stream=...)`` (an :class:`agentnb.Agent`).
        session: The conversation; ``None`` keeps the transcript in the driver instead.
        policy: What may be answered without a person (anything :meth:`ApprovalPolicy.coerce` takes).
        history: Conversation that comes before the first input and is sent once with it (a response
            picked up without its session continues on a new one).
        max_auto_rounds: Turns the policy may resume on its own in one :meth:`run`; past it :attr:`gave_up`
            is set and the run stops with the policy's answers collected (:meth:`resume` sends them). ``0``
            lets the caller resume every turn itself.
        options: More keyword arguments for every ``agent.run`` call (``tools=...`` for one participant).

    Example:
        ```python
        from agentnb import Agent, ApprovalPolicy, tool
        from agentnb._approval_driver import ApprovalDriver
        from agentnb.local import ScriptedChatClient

        @tool(approval_mode="always_require")
        def delete(path: str) -> str:
            \"\"\"Delete a file.\"\"\"
            return f"deleted {path}"

        agent = Agent(ScriptedChatClient([ScriptedChatClient.call("delete", path="a"), "Done."]), tools=[delete])
        driver = ApprovalDriver(agent, session=agent.create_session())
        async for _event in driver.run("Delete a"):
            pass
        driver.answer(driver.pending[0], True)
        async for _event in driver.resume():
            pass
        driver.response.text  # 'Done.'
        ```
    """

    __slots__ = (
        "_answers", "_context", "_options", "_run_rules", "_tail", "_transcript", "_turn_input", "agent", "gave_up",
        "max_auto_rounds", "pending", "policy", "responses", "session",
    )  # fmt: skip

    def __init__(
        self,
        agent: Any,
        *,
        session: AgentSession | None = None,
        policy: Any = None,
        history: Sequence[Message] = (),
        max_auto_rounds: int = 50,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        if max_auto_rounds < 0:
            raise ValueError(f"max_auto_rounds must be >= 0, got {max_auto_rounds}")
        self.agent = agent
        self.session = session
        self.policy = ApprovalPolicy.coerce(policy)
        self.max_auto_rounds = max_auto_rounds
        self.pending: list[Content] = []
        self.responses: list[AgentResponse] = []
        self.gave_up = False
        self._answers: dict[str, Content] = {}
        self._context: list[Message] = list(history)
        self._transcript: list[Message] | None = None if session is not None else []
        self._tail: tuple[Any, AgentResponse] | None = None  # the last turn, not yet added to the transcript
        self._turn_input: Any = []  # the new input of the turn running now (without the transcript)
        self._run_rules: list[ToolApprovalRule] = []
        self._options: dict[str, Any] = dict(options or {})

    # -- state ------------------------------------------------------------------------------------------------
    @property
    def response(self) -> AgentResponse | None:
        """The latest complete response (``None`` before the first turn ends)."""
        return self.responses[-1] if self.responses else None

    @property
    def complete(self) -> bool:
        """Whether every pending request has an answer (nothing pending counts as complete)."""
        return all(r.id in self._answers for r in self.pending)

    def is_answered(self, request: Content | str) -> bool:
        """Whether ``request`` (content or id) has an answer waiting to be sent."""
        return (request if isinstance(request, str) else request.id) in self._answers

    def waiting_on(self, requests: Sequence[Content]) -> None:
        """Take ``requests`` as the pending ones (a turn that ended elsewhere, e.g. read back from a session)."""
        self.pending = list(requests)
        self._answers = {}

    # -- answers ----------------------------------------------------------------------------------------------
    def answer(
        self, request: Content | str, approved: bool, *, reason: str | None = None, always: bool = False
    ) -> bool:
        """Record a person's answer to one pending request; returns whether every request now has one.

        Args:
            request: The ``function_approval_request`` content, or its id.
            approved: Whether the call may run.
            reason: Sent to the model with the answer.
            always: With ``approved``, keep approving this tool from this source: a standing rule in the
                session (or, without one, for the rest of this driver's runs).

        Raises:
            ApprovalError: ``request`` matches no pending request, or was answered already.
        """
        request_id = request if isinstance(request, str) else request.id
        match = next((r for r in self.pending if r.id == request_id), None)
        if match is None:
            raise ApprovalError(f"No pending approval request {request_id!r}; pending: {[r.id for r in self.pending]}.")
        if match.id in self._answers:
            raise ApprovalError(f"Approval request {request_id!r} already has an answer.")
        if always and approved:
            if self.session is not None:
                self.policy.remember(self.session, match)
            else:
                call = match.function_call
                assert call is not None and call.name  # pending requests always name their call
                self._run_rules.append(ToolApprovalRule(call.name, server_label=request_server_label(match)))
            # Still an ordinary approval; a ToolApprovalMiddleware on the agent keeps the rule too.
            answer = create_always_approve_tool_response(match, reason=reason)
        else:
            answer = match.to_function_approval_response(approved, reason=reason)
        self._answers[str(match.id)] = answer
        return self.complete

    def take_answers(self, extra: Sequence[Content] = (), *, partial: bool = False) -> Message:
        """The user message that resumes the run: every answer in request order, then ``extra`` contents.

        Args:
            extra: More contents for the same message (text a client sent along with its answers).
            partial: Send the answers there are; the agent asks again for the requests left unanswered.

        Raises:
            ApprovalError: A pending request has no answer yet (and ``partial`` is false).
        """
        missing = [r.id for r in self.pending if r.id not in self._answers]
        if missing and not partial:
            raise ApprovalError(f"Approval request(s) {missing} have no answer yet; answer every one to resume.")
        contents = [self._answers[str(r.id)] for r in self.pending if r.id in self._answers]
        self.pending, self._answers = [], {}
        return Message("user", [*contents, *extra])

    # -- running ----------------------------------------------------------------------------------------------
    async def run(self, messages: Any, *, stream: bool = False) -> AsyncIterator[DriverEvent]:
        """Run turns from ``messages`` until the agent answers or a request waits for a person.

        Yields :data:`DriverEvent` values. Requests the policy answers resume the run at once; the rest stay
        in :attr:`pending` for :meth:`answer`, then :meth:`resume`. New input while requests are pending
        leaves them to the agent (which runs none of them without an answer).
        """
        self._begin()
        pending_input = normalize_messages(messages)
        rounds = 0
        while True:
            yield TurnStarted(list(pending_input))
            sent = self._sent(pending_input)
            response: AgentResponse | None = None
            async with contextlib.aclosing(self._call(sent, stream=stream)) as events:
                async for event in events:
                    if isinstance(event, AgentResponse):
                        response = event
                    else:
                        yield event
            assert response is not None
            yield response
            requests = self._record(self._turn_input, response)
            for answered in await self._decide(requests) if requests else ():
                yield answered
            if not self._resumes(rounds):
                return
            rounds += 1
            pending_input = [self.take_answers()]

    async def resume(self, extra: Sequence[Content] = (), *, stream: bool = False) -> AsyncIterator[DriverEvent]:
        """Send the collected answers (and ``extra`` contents) and run on; see :meth:`run`."""
        message = self.take_answers(extra)
        async for event in self.run(message, stream=stream):
            yield event

    async def run_to_end(self, messages: Any) -> AgentResponse:
        """:meth:`run` without streaming or events (the path a batch of cases takes); returns the latest response."""
        self._begin()
        options = self._options if self.session is None else {**self._options, "session": self.session}
        # Nothing to add in front: the input goes to the agent as given (it normalizes it), as a bare call would.
        plain = not self._context and not self._transcript and self._tail is None
        sent: Any
        if plain:
            sent = self._turn_input = messages
        else:
            sent = self._sent(normalize_messages(messages))
        rounds = 0
        while True:
            response: AgentResponse = await self.agent.run(sent, **options)
            requests = self._record(self._turn_input, response)
            if not requests:
                return response
            await self._decide(requests)
            if not self._resumes(rounds):
                return response
            rounds += 1
            sent = self._sent([self.take_answers()])

    # -- the steps of a run -----------------------------------------------------------------------------------
    def _begin(self) -> None:
        if self.pending or self._answers:
            self.pending, self._answers = [], {}
        self.gave_up = False

    def _sent(self, new_input: list[Message]) -> list[Message]:
        """What the agent is sent for ``new_input``: earlier context once, and without a session the transcript."""
        sent = [*self._context, *new_input] if self._context else new_input
        self._context = []
        self._turn_input = sent
        if self._tail is not None:
            before, response = self._tail
            self._transcript = [*(self._transcript or []), *normalize_messages(before), *response.messages]
            self._tail = None
        if self._transcript:
            sent = [*self._transcript, *sent]
        return sent

    def _record(self, new_input: Any, response: AgentResponse) -> list[Content]:
        """Record ``response`` (the reply to ``new_input``); returns the requests it ended with."""
        self.responses.append(response)
        if self._transcript is not None:
            # The transcript grows by this turn (its new input, the reply) when, and only if, another is sent.
            self._tail = (new_input, response)
        for message in response.messages:
            # Most turns hold no approval bookkeeping: the per-message cache says so without a scan.
            if tool_kinds(message) & HAS_CONTROL:
                requests = response.user_input_requests
                self.pending, self._answers = requests, {}
                return requests
        return []

    async def _decide(self, requests: list[Content]) -> list[AutoAnswered]:
        """Let the policy answer the requests it covers (the rest wait for a person)."""
        answered: list[AutoAnswered] = []
        for request in requests:
            decision = await self.policy.decide(
                request, session=self.session, agent=self.agent, run_rules=self._run_rules
            )
            if not decision.asks:
                self._answers[str(request.id)] = decision.response(request)
                answered.append(AutoAnswered(request, decision))
        return answered

    def _resumes(self, rounds: int) -> bool:
        """Whether the policy answered every request and may resume on its own once more."""
        if not self.pending or not self.complete:
            return False
        if rounds >= self.max_auto_rounds:
            self.gave_up = True  # the answers stay: resume() sends them when the caller chooses
            return False
        return True

    async def _call(self, sent: list[Message], *, stream: bool) -> AsyncGenerator[AgentResponseUpdate | AgentResponse]:
        options = dict(self._options)
        if self.session is not None:  # without one, agents that take no session keyword work too
            options["session"] = self.session
        if not stream:
            yield await self.agent.run(sent, **options)
            return
        updates = cast(
            "ResponseStream[AgentResponseUpdate, AgentResponse]", self.agent.run(sent, stream=True, **options)
        )
        try:
            async for update in updates:
                yield update
            yield await updates.get_final_response()
        except BaseException:
            # Closing also ends the model's HTTP stream; a failure to close must not hide why the turn ended.
            with contextlib.suppress(Exception):
                await updates.aclose()
            raise
