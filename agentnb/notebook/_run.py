"""The engine behind the live views: runs an agent over a session on the kernel's event loop.

:class:`AgentRun` knows nothing about widgets. It runs the core's :class:`~agentnb._approval_driver.ApprovalDriver`
(stream a turn, let the approval policy answer what it covers, resume once every request has an answer) as
a background task, and keeps what a view shows: the transcript, the status, the pending requests.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Literal

from .._approval import DEFAULT_STATE_KEY
from .._approval_driver import ApprovalDriver, TurnStarted
from .._approval_policy import ApprovalPolicy
from .._provenance import current_cell, set_cell
from .._types import AgentResponse, AgentResponseUpdate
from ._approval import AutoApprove

if TYPE_CHECKING:
    from .._agents import SupportsAgentRun
    from .._sessions import AgentSession

__all__ = ["ALWAYS_ALLOW_KEY", "AgentRun", "RunStatus", "waiting_run"]

RunStatus = Literal["idle", "running", "waiting", "done", "stopped", "error"]

#: Session state key holding the standing approval rules ("always allow" answers among them), shared with
#: :class:`agentnb.ToolApprovalMiddleware`; JSON-safe, so the rules survive saving and restoring the session.
ALWAYS_ALLOW_KEY = DEFAULT_STATE_KEY

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
        self.driver = ApprovalDriver(agent, session=self.session)
        self.messages: list[Any] = []
        self.live_updates: list[Any] = []
        self.status: RunStatus = "idle"
        self.error: BaseException | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._task: asyncio.Task[None] | None = None
        # The cell that made the run: turns it runs later (after an approval click) count for that cell.
        self._cell = current_cell()
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
            run.driver = ApprovalDriver(agent, session=run.session, history=[*history, *response.messages])
        run.messages = list(response.messages)
        run.driver.responses.append(response)
        run.driver.waiting_on(response.user_input_requests)
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
    def responses(self) -> list[Any]:
        """Every complete :class:`agentnb.AgentResponse` of this run, in order."""
        return self.driver.responses

    @property
    def pending(self) -> list[Any]:
        """Approval requests that wait for a person's answer."""
        return self.driver.pending

    @property
    def response(self) -> Any:
        """The latest complete :class:`agentnb.AgentResponse` (``None`` before the first turn ends)."""
        return self.driver.response

    @property
    def running(self) -> bool:
        """Whether a turn is in progress."""
        return self._task is not None and not self._task.done()

    @property
    def always_allowed(self) -> list[str]:
        """Tools approved with "always allow" (or another standing rule) in this session, ``server:name`` for
        a tool with a source."""
        if self.session.state.get(ALWAYS_ALLOW_KEY) is None:
            return []
        rules = self.driver.policy.session_state(self.session).rules
        return [f"{r.server_label}:{r.tool_name}" if r.server_label is not None else r.tool_name for r in rules]

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
        return self._start(lambda: self.driver.run(messages, stream=self.stream))

    def _start(self, events: Callable[[], AsyncIterator[Any]]) -> asyncio.Task[None]:
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
        task = self._task = loop.create_task(self._drive(events))
        # Once more when the task is over: ``running`` is only false then, and views publish the settled
        # state (what a saved notebook keeps) on that change, not on the last one made inside the task.
        task.add_done_callback(lambda done: self._changed() if done is self._task else None)
        self._changed()
        return task

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
            always: Also approve this tool (from this source) automatically from now on, for this session.

        Raises:
            agentnb.exceptions.ApprovalError: ``request`` matches no pending request.
        """
        complete = self.driver.answer(request, approved, reason=reason, always=always)
        self._changed()
        if complete:
            self._start(lambda: self.driver.resume(stream=self.stream))

    def approve_all(self, reason: str | None = None) -> None:
        """Approve every pending request."""
        for request in [r for r in self.pending if not self.driver.is_answered(r)]:
            self.answer(request, True, reason=reason)

    def deny_all(self, reason: str | None = None) -> None:
        """Deny every pending request."""
        for request in [r for r in self.pending if not self.driver.is_answered(r)]:
            self.answer(request, False, reason=reason)

    def is_answered(self, request: Any) -> bool:
        """Whether ``request`` (content or id) already has an answer waiting to be sent."""
        return self.driver.is_answered(request)

    # -- internals -----------------------------------------------------------------------------------------
    def _policy(self) -> ApprovalPolicy:
        if self.auto_approve is None:
            return ApprovalPolicy.from_env() or ApprovalPolicy()
        return ApprovalPolicy.coerce(self.auto_approve)

    async def _drive(self, events: Callable[[], AsyncIterator[Any]]) -> None:
        self.status = "running"
        self.error = None
        self.started_at = time.time()
        self.ended_at = None
        if self._cell is not None:
            set_cell(self._cell)  # only in this task's own context: the cell running now is not changed
        try:
            self.driver.policy = self._policy()
            async for event in events():
                if isinstance(event, TurnStarted):
                    self.messages.extend(event.messages)
                elif isinstance(event, AgentResponseUpdate):
                    self.live_updates.append(event)
                elif isinstance(event, AgentResponse):
                    self.live_updates = []
                    self.messages.extend(event.messages)
                else:
                    continue
                self._changed()
        except asyncio.CancelledError:
            if not self._stop_requested:
                raise
            self._finish("stopped")
            return
        except Exception as exc:
            self.error = exc
            self._finish("error")
            return
        self._finish("waiting" if self.pending else "done")

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


def _assemble(updates: list[Any]) -> list[Any]:
    return AgentResponse.from_updates(updates).messages
