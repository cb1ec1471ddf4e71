"""The agent loop: run an agent again and again until its work is done, never more than ``max_iterations``.

:class:`AgentLoopMiddleware` is agent middleware that calls ``call_next()`` repeatedly, feeding each
iteration a "next message" (a nudge, the open todos, a judge's feedback). It stops at once, before any
other check, when an iteration ends waiting for a tool approval: the person answers, then runs again. With
a session, the loop keeps its progress (iteration, cap, whether it runs) in ``session.state["agent_loop"]``,
which the notebook and DevUI show, and :func:`request_loop_stop` asks it to stop after the current iteration.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, Field
from typing_extensions import Self

from .._conversation import pending_requests
from .._middleware import AgentContext, AgentMiddleware
from .._sessions import AgentSession
from .._types import (
    AgentResponse,
    AgentResponseUpdate,
    Message,
    MessagesLike,
    ResponseStream,
    UsageDetails,
    add_usage_details,
    normalize_messages,
)
from ..exceptions import MiddlewareTermination, StructuredOutputError

if TYPE_CHECKING:
    from .._clients import SupportsChatGetResponse

__all__ = [
    "CRITERIA_PLACEHOLDER",
    "DEFAULT_JUDGE_INSTRUCTIONS",
    "DEFAULT_JUDGE_MAX_ITERATIONS",
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_NEXT_MESSAGE",
    "LOOP_STATE_KEY",
    "AgentLoopMiddleware",
    "JudgeVerdict",
    "background_tasks_running",
    "background_tasks_running_message",
    "request_loop_stop",
    "todos_remaining",
    "todos_remaining_message",
]

DEFAULT_NEXT_MESSAGE = "Continue working on the task. If it is complete, say so."
DEFAULT_MAX_ITERATIONS = 10
DEFAULT_JUDGE_MAX_ITERATIONS = 5
CRITERIA_PLACEHOLDER = "{{criteria}}"
JUDGE_VERDICT_DONE = "VERDICT: DONE"
JUDGE_VERDICT_MORE = "VERDICT: MORE"
DEFAULT_JUDGE_INSTRUCTIONS = (
    "You are an evaluator. You are given a user's original request and an agent's latest response. Decide "
    "whether the agent has fully addressed the original request. Set 'answered' to true if it has, false if "
    "more work is needed, and justify the decision briefly in 'reasoning'. If you cannot return structured "
    f"output, end your reply with a line reading exactly '{JUDGE_VERDICT_DONE}' when the request is fully "
    f"addressed or '{JUDGE_VERDICT_MORE}' when more work is needed." + CRITERIA_PLACEHOLDER
)
#: Where a loop with a session keeps its progress: ``{"iteration", "max_iterations", "running", "stop_requested"}``.
LOOP_STATE_KEY = "agent_loop"

ShouldContinueResult = bool | tuple[bool, str | None]
ShouldContinueCallable = Callable[..., "ShouldContinueResult | Awaitable[ShouldContinueResult]"]
NextMessageCallable = Callable[..., "MessagesLike | Awaitable[MessagesLike]"]
FeedbackCallable = Callable[..., "str | Awaitable[str | None] | None"]


class JudgeVerdict(BaseModel):
    """A judge's structured answer: was the original request answered, and why (not)."""

    answered: bool = Field(description="True if the agent fully addressed the original request and the criteria.")
    reasoning: str = Field(default="", description="Brief justification for the verdict.")


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _criteria_block(criteria: Sequence[str] | None) -> str:
    if not criteria:
        return ""
    return "\n\nThe response must satisfy all of the following criteria:\n" + "\n".join(f"- {c}" for c in criteria)


def _judge(client: SupportsChatGetResponse, instructions: str) -> tuple[ShouldContinueCallable, NextMessageCallable]:
    """A should_continue asking ``client`` for a :class:`JudgeVerdict`, and a next_message relaying its reasoning."""

    async def should_continue(
        *, last_result: AgentResponse, original_messages: list[Message], **_: Any
    ) -> tuple[bool, str | None]:
        messages = [
            Message("system", [instructions]),
            Message("user", ["Evaluate the agent's work. The user's original request follows:"]),
            *original_messages,
            Message("user", ["The agent's latest response was:"]),
            *last_result.messages,
            Message("user", ["Has the original request been fully addressed?"]),
        ]
        try:
            response = await cast("Any", client).get_response(messages, options={"response_format": JudgeVerdict})
            verdict, text = response.value, str(response.text)
        except StructuredOutputError as e:  # a reply that is not the schema: read the text markers instead
            verdict, text = None, e.text or ""
        if isinstance(verdict, JudgeVerdict):
            answered, reasoning = verdict.answered, verdict.reasoning
        else:
            # MORE wins: an ambiguous reply keeps the loop going rather than stopping on unfinished work.
            answered = JUDGE_VERDICT_MORE not in text.upper() and JUDGE_VERDICT_DONE in text.upper()
            reasoning = text.strip()
        return (not answered), (reasoning or None)

    def next_message(*, feedback: str | None = None, **_: Any) -> str:
        if feedback:
            return (
                "An evaluator reviewed your previous response and judged that it does not yet fully address the "
                f"original request.\n\nEvaluator feedback: {feedback}\n\nRevise and continue so the original "
                "request is fully addressed."
            )
        return DEFAULT_NEXT_MESSAGE

    return should_continue, next_message


def _loop_state(session: AgentSession | None) -> dict[str, Any]:
    if session is None:
        return {}
    value = session.state.setdefault(LOOP_STATE_KEY, {})
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def request_loop_stop(session: AgentSession) -> None:
    """Ask a loop running on ``session`` to stop once its current iteration ends (the notebook's Stop)."""
    _loop_state(session)["stop_requested"] = True


class AgentLoopMiddleware(AgentMiddleware):
    """Re-run the agent while ``should_continue`` says so, up to ``max_iterations`` runs in all.

    The callables get keyword arguments (declare what you use plus ``**kwargs``): ``iteration``,
    ``last_result``, ``messages``, ``original_messages``, ``session``, ``agent``, ``progress`` (the feedback
    log so far) and ``feedback`` (what ``should_continue`` returned beside its bool, if it returned a tuple).
    Each check, in order, after an iteration: a pending approval request stops the loop and returns; then
    ``max_iterations``; then a stop request; then ``should_continue``.

    Args:
        should_continue: ``bool`` or ``(bool, feedback)``, sync or async.
        max_iterations: The cap on runs (``None``: unbounded; the loop then relies on ``should_continue``).
        next_message: The next iteration's input (default :data:`DEFAULT_NEXT_MESSAGE`); returning ``None``
            reuses the previous input (without ``fresh_context``).
        record_feedback: A progress entry per iteration (default: the response's text).
        inject_progress: Put the progress log in the next input (only the newest entry when a session keeps
            the earlier ones).
        fresh_context: Start each iteration from the original input plus the progress log, restoring the
            session to its state before the loop.
        return_final_only: Return only the last iteration's response (non-streaming runs); by default every
            iteration's messages and the injected nudges are returned.
        additional_instructions: A system message put ahead of the input of every iteration.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.harness import AgentLoopMiddleware
        from agentnb.local import ScriptedChatClient

        loop = AgentLoopMiddleware(lambda *, last_result, **kw: "DONE" not in last_result.text, max_iterations=3)
        agent = Agent(ScriptedChatClient(["Working...", "DONE"]), middleware=[loop])
        (await agent.run("Go")).text  # 'Working...Continue working on the task. If it is complete, say so.DONE'
        ```
    """

    def __init__(
        self,
        should_continue: ShouldContinueCallable,
        *,
        max_iterations: int | None = DEFAULT_MAX_ITERATIONS,
        next_message: NextMessageCallable | None = None,
        record_feedback: FeedbackCallable | None = None,
        inject_progress: bool = True,
        fresh_context: bool = False,
        return_final_only: bool = False,
        additional_instructions: str | None = None,
    ) -> None:
        if not callable(should_continue):
            raise TypeError(f"should_continue must be callable, got {should_continue!r}")
        if max_iterations is not None and (isinstance(max_iterations, bool) or max_iterations < 1):
            raise ValueError(f"max_iterations must be None or a positive integer, got {max_iterations!r}.")
        self.should_continue = should_continue
        self.max_iterations = max_iterations
        self.next_message = next_message
        self.record_feedback = record_feedback
        self.inject_progress = inject_progress
        self.fresh_context = fresh_context
        self.return_final_only = return_final_only
        self.additional_instructions = additional_instructions

    @classmethod
    def with_judge(
        cls,
        judge_client: SupportsChatGetResponse,
        *,
        criteria: Sequence[str] | None = None,
        instructions: str | None = None,
        max_iterations: int | None = DEFAULT_JUDGE_MAX_ITERATIONS,
        next_message: NextMessageCallable | None = None,
        fresh_context: bool = False,
    ) -> Self:
        """A loop that runs until ``judge_client`` says the original request was answered.

        The judge is sent the original request and each latest response, so it must be a service you trust
        as much as the agent's own model. ``criteria`` go both to the agent (as an instruction) and into the
        judge's instructions where :data:`CRITERIA_PLACEHOLDER` stands.
        """
        judged = (instructions or DEFAULT_JUDGE_INSTRUCTIONS).replace(CRITERIA_PLACEHOLDER, _criteria_block(criteria))
        should_continue, relay = _judge(judge_client, judged)
        extra = None
        if criteria:
            extra = "Your response must satisfy all of the following criteria:\n" + "\n".join(
                f"- {c}" for c in criteria
            )
        return cls(
            should_continue,
            max_iterations=max_iterations,
            next_message=next_message or relay,
            fresh_context=fresh_context,
            additional_instructions=extra,
        )

    # -- the loop ------------------------------------------------------------------------------------------
    async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
        if self.additional_instructions is not None:
            context.messages = [Message("system", [self.additional_instructions]), *context.messages]
        original = list(context.messages)
        snapshot = context.session.to_dict() if self.fresh_context and context.session is not None else None
        state = _loop_state(context.session)
        state.update(iteration=0, max_iterations=self.max_iterations, running=True, stop_requested=False)
        if context.stream:
            holder = [AgentResponse()]  # the last iteration's response: the stream's final response
            context.result = ResponseStream(
                self._stream(context, call_next, original, snapshot, state, holder), lambda _updates: holder[0]
            )
            return
        try:
            await self._run(context, call_next, original, snapshot, state)
        finally:
            state["running"] = False

    def _kwargs(self, context: AgentContext, iteration: int, result: AgentResponse, original: list[Message],
                progress: list[str], feedback: str | None) -> dict[str, Any]:  # fmt: skip
        return {
            "iteration": iteration,
            "last_result": result,
            "messages": context.messages,
            "original_messages": original,
            "session": context.session,
            "agent": context.agent,
            "progress": list(progress),  # a copy: callbacks cannot edit the loop's log
            "feedback": feedback,
        }

    async def _after(
        self, context: AgentContext, iteration: int, result: AgentResponse, original: list[Message],
        progress: list[str], snapshot: dict[str, Any] | None, state: dict[str, Any],
    ) -> list[Message] | None:  # fmt: skip
        """Decide after an iteration: ``None`` to stop, else the next iteration's input."""
        state["iteration"] = iteration
        if pending_requests(result.messages):
            return None  # waiting for a person: hand the request back now
        kwargs = self._kwargs(context, iteration, result, original, progress, None)
        feedback: str | None = None
        if (self.max_iterations is not None and iteration >= self.max_iterations) or state.get("stop_requested"):
            stop = True
        else:
            verdict: object = await _maybe_await(self.should_continue(**kwargs))
            if isinstance(verdict, tuple):
                pair = cast("tuple[object, object]", verdict)
                keep, feedback = bool(pair[0]), (str(pair[1]) if pair[1] is not None else None)
            else:
                keep = bool(verdict)
            stop = not keep
        kwargs["feedback"] = feedback
        entry = await _maybe_await(self.record_feedback(**kwargs)) if self.record_feedback else result.text.strip()
        if entry:
            progress.append(str(entry))
            kwargs["progress"] = list(progress)
        if stop:
            return None
        if snapshot is not None and context.session is not None:
            restored = AgentSession.from_dict(snapshot)
            context.session.service_session_id = restored.service_session_id
            context.session.state.clear()
            context.session.state.update(restored.state)
            context.session.state[LOOP_STATE_KEY] = state  # the loop's own progress survives the reset
        return await self._next_input(kwargs, original)

    async def _next_input(self, kwargs: dict[str, Any], original: list[Message]) -> list[Message]:
        if self.next_message is None:
            nudge = normalize_messages(DEFAULT_NEXT_MESSAGE)
        else:
            given = await _maybe_await(self.next_message(**kwargs))
            if given is None and not self.fresh_context:
                return list(kwargs["messages"])  # reuse the previous input verbatim
            nudge = normalize_messages(given if given is not None else DEFAULT_NEXT_MESSAGE)
        progress: list[str] = kwargs["progress"]
        note: list[Message] = []
        if self.inject_progress and progress:
            entries = progress if kwargs["session"] is None or self.fresh_context else progress[-1:]
            note = [Message("user", ["Progress so far:\n" + "\n".join(f"- {e}" for e in entries)])]
        if self.fresh_context:
            return [*original, *note, *nudge]
        return [*note, *nudge]

    async def _run(
        self, context: AgentContext, call_next: Callable[[], Awaitable[None]], original: list[Message],
        snapshot: dict[str, Any] | None, state: dict[str, Any],
    ) -> None:  # fmt: skip
        progress: list[str] = []
        transcript: list[Message] = []
        usage: UsageDetails | None = None
        iteration = 0
        while True:
            await call_next()
            iteration += 1
            outcome: object = context.result
            if isinstance(outcome, ResponseStream):  # an inner middleware switched to streaming
                outcome = await cast("ResponseStream[AgentResponseUpdate, AgentResponse]", outcome).get_final_response()
            if not isinstance(outcome, AgentResponse):
                raise TypeError(f"AgentLoopMiddleware expected an AgentResponse, got {type(outcome).__name__}")
            result = cast("AgentResponse[Any]", outcome)
            transcript.extend(result.messages)
            usage = add_usage_details(usage, result.usage_details)
            following = await self._after(context, iteration, result, original, progress, snapshot, state)
            if following is None:
                break
            context.messages = following
            transcript.extend(following)
        if not self.return_final_only:
            context.result = AgentResponse(
                messages=transcript,
                response_id=result.response_id,
                agent_id=result.agent_id,
                conversation_id=result.conversation_id,
                model_id=result.model_id,
                created_at=result.created_at,
                finish_reason=result.finish_reason,
                usage_details=usage,
                value=result.value,  # the last iteration's, not re-parsed from the combined text
                additional_properties=dict(result.additional_properties or {}),
            )
        else:
            context.result = result

    async def _stream(
        self, context: AgentContext, call_next: Callable[[], Awaitable[None]], original: list[Message],
        snapshot: dict[str, Any] | None, state: dict[str, Any], holder: list[AgentResponse],
    ) -> AsyncIterator[AgentResponseUpdate]:  # fmt: skip
        progress: list[str] = []
        iteration = 0
        try:
            while True:
                try:
                    await call_next()
                    inner = context.result
                    if not isinstance(inner, ResponseStream):
                        raise TypeError(f"AgentLoopMiddleware expected a ResponseStream, got {type(inner).__name__}")
                    stream = cast("ResponseStream[AgentResponseUpdate, AgentResponse]", inner)
                    async for update in stream:
                        yield update
                    final = await stream.get_final_response()
                except MiddlewareTermination:
                    return  # raised after the pipeline returned (streams run lazily): stop cleanly
                holder[0] = final
                iteration += 1
                following = await self._after(context, iteration, final, original, progress, snapshot, state)
                if following is None:
                    return
                context.messages = following
                for message in following:
                    yield AgentResponseUpdate(contents=list(message.contents), role=message.role)
        finally:
            state["running"] = False

    def __repr__(self) -> str:
        return f"AgentLoopMiddleware(max_iterations={self.max_iterations!r}, fresh_context={self.fresh_context})"


# -- helpers for todo- and background-driven loops --------------------------------------------------------
def _provider(agent: Any, kind: type) -> Any:
    return next((p for p in getattr(agent, "context_providers", []) if isinstance(p, kind)), None)


def todos_remaining(*, looping_modes: Sequence[str] | None = None) -> ShouldContinueCallable:
    """A should_continue that loops while the agent's :class:`TodoProvider` has open items.

    Args:
        looping_modes: Loop only in these modes (read from the agent's :class:`AgentModeProvider`), so an
            agent still planning stays interactive; ``None`` loops in every mode.

    Raises:
        ValueError: ``looping_modes`` is empty.
    """
    allowed = None if looping_modes is None else {m.strip().lower() for m in looping_modes}
    if allowed is not None and not allowed:
        raise ValueError("looping_modes must be None or a non-empty sequence of mode names.")

    async def should_continue(*, session: AgentSession | None = None, agent: Any = None, **_: Any) -> bool:
        from ._mode import AgentModeProvider, get_agent_mode
        from ._todo import TodoProvider

        if session is None or agent is None:
            return False
        if allowed is not None:
            modes = _provider(agent, AgentModeProvider)
            mode = modes.get_mode(session) if modes is not None else get_agent_mode(session)
            if mode not in allowed:
                return False
        todos = _provider(agent, TodoProvider)
        if todos is None:
            return False
        return any(not i.is_complete for i in await todos.get_items(session))

    return should_continue


async def todos_remaining_message(*, session: AgentSession | None = None, agent: Any = None, **_: Any) -> str | None:
    """A next_message listing the open todos and telling the agent to finish them (``None`` if there are none)."""
    from ._todo import TodoProvider

    todos = _provider(agent, TodoProvider) if session is not None else None
    if todos is None or session is None:
        return None
    open_items = [i for i in await todos.get_items(session) if not i.is_complete]
    if not open_items:
        return None
    lines = "\n".join(f"- {i.title}" for i in open_items)
    return (
        f"You still have {len(open_items)} open todo item(s) to address before you can finish:\n{lines}\n\n"
        "Continue working through them now. Mark each todo complete as you finish it, and only stop once every "
        "todo item is complete."
    )


def _running_tasks(session: AgentSession | None, agent: Any) -> list[Any]:
    from ._background import BackgroundAgentsProvider, BackgroundTaskStatus

    provider = _provider(agent, BackgroundAgentsProvider) if session is not None else None
    if provider is None or session is None:
        return []
    return [t for t in provider.get_tasks(session) if t.status is BackgroundTaskStatus.RUNNING]


def background_tasks_running() -> ShouldContinueCallable:
    """A should_continue that loops while the agent's :class:`BackgroundAgentsProvider` has running tasks."""

    def should_continue(*, session: AgentSession | None = None, agent: Any = None, **_: Any) -> bool:
        return bool(_running_tasks(session, agent))

    return should_continue


def background_tasks_running_message(*, session: AgentSession | None = None, agent: Any = None, **_: Any) -> str | None:
    """A next_message listing the running background tasks and telling the agent to wait for them."""
    running = _running_tasks(session, agent)
    if not running:
        return None
    lines = "\n".join(f"- #{t.id} ({t.agent_name}): {t.description}" for t in running)
    return (
        f"You still have {len(running)} background task(s) running that must finish before you can complete the "
        f"work:\n{lines}\n\nWait for these tasks to complete, retrieve their results, and incorporate them. Only "
        "stop once every background task has finished."
    )
