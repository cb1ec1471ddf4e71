"""``A2AExecutor``: serve any agentnb agent (or workflow) through the a2a-sdk's request handler.

Each A2A context is one agentnb session, so a remote caller holds a conversation. Answers become task
artifacts (streamed chunk by chunk when ``stream=True``). A turn that ends waiting for a person (a tool
needing approval, a workflow's request for input) leaves the task ``input-required`` with the request in
the status message; the caller's next message on that task answers it: an approval answer (a data part
from another agentnb, see :mod:`._parts`), or text such as "yes"/"no" for approvals and the reply itself
for other requests.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, cast

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part

from .._agents import BaseAgent, SupportsAgentRun
from .._sessions import AgentSession
from .._types import AgentResponse, AgentResponseUpdate, Content, Message, call_arguments
from ._parts import contents_to_parts, parts_to_contents

__all__ = ["A2AExecutor"]

logger = logging.getLogger("agentnb.a2a")

_YES = frozenset({"y", "yes", "approve", "approved", "ok", "allow", "true"})


def _answer_parts(contents: Iterable[Content]) -> list[Part]:
    """The parts of an answer: text, files and links (approval requests go in the status message)."""
    return contents_to_parts(c for c in contents if c.type in ("text", "data", "uri"))


def _is_workflow_request(request: Content) -> bool:
    """A workflow's ``request_info`` (surfaced by ``workflow.as_agent()``), not a tool waiting for approval."""
    call = request.function_call
    return call is not None and call.name == "request_info"


def _describe(request: Content) -> str:
    call = request.function_call
    if call is not None and _is_workflow_request(request):
        data: Any = call_arguments(call).get("data")
        fields: Any = cast("dict[str, Any]", data).get("fields") if isinstance(data, dict) else None
        message: Any = cast("dict[str, Any]", fields).get("message") if isinstance(fields, dict) else None
        return str(message) if message else f"Input needed: {data}"
    if request.type == "function_approval_request" and call is not None:
        return f"Approval needed to call {call.name}({call.arguments or ''}). Answer yes or no."
    return request.text or "Input needed."


class A2AExecutor(AgentExecutor):
    """Run an agentnb agent for each A2A request and publish its answer as task events.

    Args:
        agent: The agent to serve; a workflow is served through ``workflow.as_agent()``.
        stream: Publish the answer in chunks as the agent streams it (else once, when it is done).
        run_kwargs: More keyword arguments for ``agent.run`` (not ``session`` or ``stream``).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.a2a import A2AExecutor
        from agentnb.local import ScriptedChatClient

        executor = A2AExecutor(Agent(ScriptedChatClient(["Hi"]), name="Greeter"), stream=True)
        ```
    """

    def __init__(self, agent: Any, stream: bool = False, run_kwargs: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        if not isinstance(agent, BaseAgent) and callable(getattr(agent, "as_agent", None)):
            agent = agent.as_agent()
        if not callable(getattr(agent, "run", None)) or not callable(getattr(agent, "create_session", None)):
            raise TypeError(f"A2AExecutor serves agents and workflows, got {type(agent).__name__}")
        for key in ("session", "stream"):
            if run_kwargs and key in run_kwargs:
                raise ValueError(f"run_kwargs cannot contain {key!r}: the executor manages it.")
        self.agent: SupportsAgentRun = cast(SupportsAgentRun, agent)
        self.stream = stream
        self.run_kwargs: dict[str, Any] = dict(run_kwargs or {})
        self._sessions: dict[str, AgentSession] = {}
        self._pending: dict[str, list[Content]] = {}

    def session_for(self, context_id: str) -> AgentSession:
        """The agentnb session that holds the conversation of A2A context ``context_id``."""
        session = self._sessions.get(context_id)
        if session is None:
            session = self.agent.create_session(session_id=context_id)
            self._sessions[context_id] = session
        return session

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Mark the task canceled (the SDK has already cancelled the running ``execute``)."""
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run one turn for the incoming message and publish it as task events."""
        message = context.message
        if message is None:
            raise ValueError("The request has no message.")
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        contents = self._answer_pending(task.id, parts_to_contents(message.parts))
        session = self.session_for(task.context_id)
        try:
            response = await self._run(Message("user", contents), session, updater)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            logger.exception("The served agent failed")
            await updater.failed(updater.new_agent_message([Part(text=f"{type(e).__name__}: {e}")]))
            return
        requests = response.user_input_requests
        if requests:
            self._pending[task.id] = list(requests)
            parts = [Part(text="\n".join(_describe(r) for r in requests)), *contents_to_parts(requests)]
            await updater.requires_input(updater.new_agent_message(parts))
            return
        await updater.complete()

    def _answer_pending(self, task_id: str, contents: list[Content]) -> list[Content]:
        """Turn a reply to an ``input-required`` task into the answers the agent's requests expect."""
        pending = self._pending.pop(task_id, None)
        if not pending or any(c.type == "function_approval_response" for c in contents):
            return contents
        text = " ".join(c.text for c in contents if c.type == "text" and c.text).strip()
        answers: list[Content] = []
        for request in pending:
            if _is_workflow_request(request) and request.id is not None:
                # A workflow asked a question: the reply itself is the answer.
                answers.append(Content.from_function_result(call_id=request.id, result=text))
            elif request.type == "function_approval_request":
                answers.append(request.to_function_approval_response(text.lower().rstrip(".!") in _YES))
        return answers or contents

    async def _run(self, message: Message, session: AgentSession, updater: TaskUpdater) -> AgentResponse:
        artifact_id = uuid.uuid4().hex
        if not self.stream:
            response = await cast(Any, self.agent).run(message, session=session, stream=False, **self.run_kwargs)
            parts = _answer_parts(c for m in response.messages if m.role == "assistant" for c in m.contents)
            if parts:
                await updater.add_artifact(parts, artifact_id=artifact_id, name="answer", last_chunk=True)
            return response
        stream = self.agent.run(message, session=session, stream=True, **self.run_kwargs)
        first = True
        async for update in cast(Any, stream):
            chunk = cast(AgentResponseUpdate, update)
            if chunk.role == "user":
                continue
            parts = _answer_parts(chunk.contents)
            if parts:
                await updater.add_artifact(
                    parts, artifact_id=artifact_id, name="answer", append=None if first else True
                )
                first = False
        return cast(AgentResponse, await cast(Any, stream).get_final_response())
