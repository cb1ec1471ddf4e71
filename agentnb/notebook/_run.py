"""The engine behind the live views: runs an agent over a session on the kernel's event loop.

:class:`AgentRun` knows nothing about widgets. It streams a turn, keeps the transcript, applies the
approval policy, and resumes the run when every pending approval request has an answer, by sending the
``function_approval_response`` contents as a user message on the same session: the one approval mechanism
of the core, with no second path.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, cast

from ._approval import AutoApprove, decide

if TYPE_CHECKING:
    from .._agents import SupportsAgentRun
    from .._sessions import AgentSession
    from .._types import AgentResponse, AgentResponseUpdate, Content, ResponseStream

__all__ = ["ALWAYS_ALLOW_KEY", "AgentRun", "RunStatus", "waiting_run"]

RunStatus = Literal["idle", "running", "waiting", "done", "stopped", "error"]

#: Session state key holding the tools a person chose to "always allow" (a list of names, JSON-safe, so it
#: survives saving and restoring the session).
ALWAYS_ALLOW_KEY = "agentnb.always_allow"

# The run that waits for approval on each session: any view of that session or of its responses joins it,
# so one request never gets two competing sets of cards.
_WAITING: weakref.WeakKeyDictionary[Any, AgentRun] = weakref.WeakKeyDictionary()


def waiting_run(session: Any) -> AgentRun | None:
    """Return the run waiting for approval on ``session``, if any."""
    try:
        run = _WAITING.get(session)
    except TypeError:
        return None
    return run if run is not None and run.status == "waiting" else None


class AgentRun:
    """Drive an agent over one session: stream turns, apply the approval policy, resume on answers.

    Args:
        agent: Anything with ``run(messages, *, session=..., stream=True)`` (an :class:`agentnb.Agent`).
        session: The session to run on; a new one from ``agent.create_session()`` when omitted.
        auto_approve: The unattended approval policy (see :data:`~agentnb.notebook.AutoApprove`).
        stream: Stream each turn (``False`` calls the agent's non-streaming path and shows the reply at once).
        on_change: Called (with this run) whenever the transcript, status or pending approvals change.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.notebook import AgentRun

        run = AgentRun(Agent(ScriptedChatClient(["Hello!"])))
        run.start("Hi")
        response = await run.wait()
        response.text  # 'Hello!'
        ```
    """

    def __init__(
        self,
        agent: SupportsAgentRun,
        *,
        session: AgentSession | None = None,
        auto_approve: AutoApprove = None,
        stream: bool = True,
        on_change: Callable[[AgentRun], None] | None = None,
    ) -> None:
        self.agent = agent
        self.stream = stream
        self.session: AgentSession = session if session is not None else agent.create_session()
        self.auto_approve = auto_approve
        self.messages: list[Any] = []
        self.live_updates: list[Any] = []
        self.responses: list[Any] = []
        self.pending: list[Any] = []
        self.status: RunStatus = "idle"
        self.error: BaseException | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._answers: dict[str, Any] = {}
        self._task: asyncio.Task[None] | None = None
        self._context: list[Any] = []
        self._stop_requested = False
        self._listeners: list[Callable[[AgentRun], None]] = [on_change] if on_change else []

    @classmethod
    def resume(
        cls,
        response: Any,
        *,
        agent: SupportsAgentRun,
        session: AgentSession | None = None,
        history: Any = (),
        auto_approve: AutoApprove = None,
        stream: bool = True,
        on_change: Callable[[AgentRun], None] | None = None,
    ) -> AgentRun:
        """Pick up a finished turn that waits for approval, so answering its requests continues the run.

        Args:
            response: The :class:`agentnb.AgentResponse` with pending approval requests.
            agent: The agent that produced it.
            session: The session it was produced on; ``None`` for a run without a session (a new session
                then carries the conversation on, starting from ``history``).
            history: For a run without a session: the conversation before ``response`` (the run's input).
            auto_approve: The policy for requests of later turns (the pending ones wait for an answer).
            stream: Stream the continuation.
            on_change: Called on every change.

        Returns:
            A run in the ``waiting`` state whose transcript is the response's messages.
        """
        run = cls(agent, session=session, auto_approve=auto_approve, stream=stream, on_change=on_change)
        if session is None:
            # The first resumed turn sends the whole conversation, so the new session's history holds it.
            run._context = [*history, *response.messages]
        run.messages = list(response.messages)
        run.responses = [response]
        run.pending = list(response.user_input_requests)
        run.status = "waiting" if run.pending else "done"
        run._register()
        return run

    # -- observation ---------------------------------------------------------------------------------------
    def subscribe(self, listener: Callable[[AgentRun], None]) -> None:
        """Call ``listener(run)`` on every change."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener(self)

    @property
    def response(self) -> Any:
        """The latest complete :class:`agentnb.AgentResponse` (``None`` before the first turn ends)."""
        return self.responses[-1] if self.responses else None

    @property
    def running(self) -> bool:
        """Whether a turn is in progress."""
        return self._task is not None and not self._task.done()

    @property
    def always_allowed(self) -> list[str]:
        """Tools approved with "always allow" for this session."""
        return list(self.session.state.get(ALWAYS_ALLOW_KEY, []))

    def transcript(self) -> list[Any]:
        """Messages so far, including the partial reply of a turn still streaming."""
        if not self.live_updates:
            return list(self.messages)
        return list(self.messages) + _assemble(self.live_updates)

    # -- control -------------------------------------------------------------------------------------------
    def start(self, messages: Any) -> asyncio.Task[None]:
        """Start a turn in the background on the running event loop and return its task.

        Args:
            messages: A prompt (str), a Message, or a list of them.

        Returns:
            The task; the run's own state (``status``, ``response``, ``error``) tells how it ended.

        Raises:
            RuntimeError: A turn is already running, or there is no running event loop.
        """
        if self.running:
            raise RuntimeError("A turn is already running; wait for it or call stop() first.")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "AgentRun.start() needs a running event loop (a Jupyter kernel has one); "
                "in a script use `await run.run(...)` instead."
            ) from None
        self._stop_requested = False
        self.status = "running"  # at once, so a view shows it before the task's first step
        self._task = loop.create_task(self._drive(messages))
        self._changed()
        return self._task

    async def run(self, messages: Any) -> Any:
        """Run a turn (and any automatically answered approvals) and return the latest response."""
        self.start(messages)
        return await self.wait()

    async def wait(self) -> Any:
        """Wait until the run settles (done, stopped, failed, or waiting for approval); return the response."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})
        return self.response

    def stop(self) -> None:
        """Cancel the running turn; the partial reply stays in the transcript and ``status`` becomes "stopped"."""
        if self._task is not None and not self._task.done():
            self._stop_requested = True
            self._task.cancel()

    def answer(self, request: Any, approved: bool, *, reason: str | None = None, always: bool = False) -> None:
        """Answer one pending approval request; resumes the run once every pending request has an answer.

        Args:
            request: The ``function_approval_request`` content, or its id.
            approved: Whether the call may run.
            reason: An optional reason sent to the model with the answer.
            always: Also approve this tool automatically from now on, for this session.

        Raises:
            agentnb.exceptions.ApprovalError: ``request`` matches no pending request.
        """
        request_id = request if isinstance(request, str) else request.id
        match = next((r for r in self.pending if r.id == request_id), None)
        if match is None:
            from ..exceptions import ApprovalError

            pending = [r.id for r in self.pending]
            raise ApprovalError(f"No pending approval request {request_id!r}; pending: {pending}.")
        if always and approved:
            self._remember_always(match)
        self._answers[match.id] = match.to_function_approval_response(approved, reason=reason)
        self._changed()
        if all(r.id in self._answers for r in self.pending):
            self._resume()

    def approve_all(self, reason: str | None = None) -> None:
        """Approve every pending request."""
        for request in [r for r in self.pending if r.id not in self._answers]:
            self.answer(request, True, reason=reason)

    def deny_all(self, reason: str | None = None) -> None:
        """Deny every pending request."""
        for request in [r for r in self.pending if r.id not in self._answers]:
            self.answer(request, False, reason=reason)

    def is_answered(self, request: Any) -> bool:
        """Whether ``request`` (content or id) already has an answer waiting to be sent."""
        return (request if isinstance(request, str) else request.id) in self._answers

    # -- internals -----------------------------------------------------------------------------------------
    def _remember_always(self, request: Content) -> None:
        state = self.session.state
        name = request.function_call.name if request.function_call is not None else None
        if name:
            names = list(state.get(ALWAYS_ALLOW_KEY, []))
            if name not in names:
                state[ALWAYS_ALLOW_KEY] = [*names, name]

    def _resume(self) -> None:
        answers = [self._answers[r.id] for r in self.pending]
        self.pending = []
        self._answers = {}
        from .._types import Message

        self.start(Message("user", answers))

    async def _drive(self, messages: Any) -> None:
        from .._types import Message, normalize_messages

        pending_input = normalize_messages(messages)
        self.status = "running"
        self.error = None
        self.started_at = time.time()
        self.ended_at = None
        while True:
            self.messages.extend(pending_input)
            self._changed()
            # Earlier conversation that only this turn must carry (see resume()); shown once, sent once.
            sent, self._context = [*self._context, *pending_input], []
            # SupportsAgentRun.run has no overloads: with stream=True it returns the ResponseStream.
            stream = (
                cast(
                    "ResponseStream[AgentResponseUpdate, AgentResponse[Any]]",
                    self.agent.run(sent, session=self.session, stream=True),
                )
                if self.stream
                else None
            )
            try:
                if stream is None:
                    response = await self.agent.run(sent, session=self.session)
                else:
                    async for update in stream:
                        self.live_updates.append(update)
                        self._changed()
                    response = await stream.get_final_response()
            except asyncio.CancelledError:
                if not self._stop_requested:
                    raise
                await _close(stream)
                self._finish("stopped")
                return
            except Exception as exc:
                await _close(stream)
                self.error = exc
                self._finish("error")
                return
            self.live_updates = []
            self.responses.append(response)
            self.messages.extend(response.messages)
            self.pending = list(response.user_input_requests)
            for request in self.pending:
                verdict = decide(self.auto_approve, request, always_allowed=self.always_allowed)
                if verdict is not None:
                    self._answers[request.id] = request.to_function_approval_response(
                        verdict, reason="approved by policy" if verdict else "denied by policy"
                    )
            if self.pending and all(r.id in self._answers for r in self.pending):
                pending_input = [Message("user", [self._answers[r.id] for r in self.pending])]
                self.pending = []
                self._answers = {}
                continue
            self._finish("waiting" if self.pending else "done")
            return

    def _finish(self, status: RunStatus) -> None:
        if self.live_updates:
            # Keep what streamed before a stop or failure: the person saw it, the transcript should too.
            self.messages.extend(_assemble(self.live_updates))
            self.live_updates = []
        self.status = status
        self.ended_at = time.time()
        self._register()
        self._changed()

    def _register(self) -> None:
        if self.status == "waiting":
            _WAITING[self.session] = self


async def _close(stream: Any) -> None:
    if stream is not None:
        # Closing also ends the model's HTTP stream; a failure to close must not hide why the turn ended.
        with contextlib.suppress(Exception):
            await stream.aclose()


def _assemble(updates: list[Any]) -> list[Any]:
    from .._types import AgentResponse

    return AgentResponse.from_updates(updates).messages
