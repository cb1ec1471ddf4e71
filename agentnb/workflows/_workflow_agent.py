"""``workflow.as_agent()``: a workflow behind the agent interface.

The agent's input messages become the workflow input (``list[Message]``, a ``Message`` or their text,
whichever the start executor accepts); the workflow's outputs become the agent's answer (an
``AgentResponse`` output contributes its messages, a ``Message`` or ``list[Message]`` itself, anything
else its text). A ``request_info`` request becomes a ``function_approval_request`` content whose ``id`` is
the request id: answer it on the next run with ``request.to_function_approval_response(True)`` (the
response is ``True``/``False``, or the approval content itself when the request expects a content), or with
``Content.from_function_result(call_id=request_id, result=value)`` for any other value.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .._agents import BaseAgent
from .._types import AgentResponse, AgentResponseUpdate, Content, Message, ResponseStream, normalize_messages
from ._events import WorkflowEvent, safe_encode
from ._typing_utils import matches

if TYPE_CHECKING:
    from .._sessions import AgentSession
    from ._workflow import Workflow

__all__ = ["WorkflowAgent"]


class WorkflowAgent(BaseAgent):
    """An agent that runs a workflow for each turn (create it with ``workflow.as_agent()``).

    Example:
        >>> from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor
        >>> @executor(id="echo")
        ... async def echo(text: str, ctx: WorkflowContext[str, str]) -> None:
        ...     await ctx.yield_output(f"echo: {text}")
        >>> agent = WorkflowBuilder(start_executor=echo).build().as_agent(name="echoer")
        >>> (await agent.run("hi")).text  # doctest: +SKIP
        'echo: hi'
    """

    def __init__(
        self, workflow: Workflow, *, name: str | None = None, description: str | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id or f"workflow:{workflow.name}", name=name or workflow.name, description=description)
        self.workflow = workflow

    def run(  # type: ignore[override]
        self,
        messages: Any = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the workflow on ``messages``; ``stream=True`` returns a ``ResponseStream`` of updates."""
        response_stream: ResponseStream[AgentResponseUpdate, AgentResponse] = ResponseStream(
            self._updates(messages, streaming=stream), self._finalize
        )
        if stream:
            return response_stream
        return response_stream.get_final_response()

    def _finalize(self, updates: list[AgentResponseUpdate]) -> AgentResponse:
        response = AgentResponse.from_updates(updates)
        response.agent_id = self.id
        return response

    def _responses_from(self, messages: list[Message]) -> tuple[dict[str, Any], list[Message]]:
        pending = {e.request_id: e for e in self.workflow.pending_requests if e.request_id}
        responses: dict[str, Any] = {}
        rest: list[Message] = []
        for message in messages:
            kept: list[Content] = []
            for content in message.contents:
                if content.type == "function_approval_response" and content.id in pending:
                    request = pending[content.id]
                    responses[content.id] = content if matches(content, request.response_type) else content.approved
                elif content.type == "function_result" and content.call_id in pending:
                    responses[content.call_id] = content.result
                else:
                    kept.append(content)
            if kept:
                rest.append(Message(message.role, kept, author_name=message.author_name))
        return responses, rest

    def _input_for(self, messages: list[Message]) -> Any:
        start = self.workflow.get_start_executor()
        candidates: list[Any] = [messages]
        if len(messages) == 1:
            candidates.append(messages[0])
        candidates.append("\n".join(m.text for m in messages))
        for candidate in candidates:
            if start.can_handle(candidate):
                return candidate
        raise TypeError(
            f"The start executor {start.id!r} of workflow {self.workflow.name!r} accepts none of list[Message], "
            "Message or str, so the workflow cannot run as an agent."
        )

    async def _updates(self, messages: Any, *, streaming: bool) -> AsyncIterator[AgentResponseUpdate]:
        normalized = normalize_messages(messages)
        responses, rest = self._responses_from(normalized)
        if responses:
            events = self.workflow.run(responses=responses, stream=True)
        else:
            events = self.workflow.run(self._input_for(rest), stream=True)
        streamed_by: set[str] = set()
        async for event in events:
            for update in self._convert(event, streaming, streamed_by):
                yield update

    def _convert(self, event: WorkflowEvent, streaming: bool, streamed_by: set[str]) -> list[AgentResponseUpdate]:
        author = self.name
        if event.type == "agent_update" and streaming and isinstance(event.data, AgentResponseUpdate):
            if event.executor_id:
                streamed_by.add(event.executor_id)
            return [event.data]
        if event.type == "intermediate":
            # Progress, not the answer: it travels as reasoning content so ``response.text`` stays the output.
            text = _text_of(event.data)
            if not text:
                return []
            return [
                AgentResponseUpdate(
                    contents=[Content.from_reasoning(text)],
                    role="assistant",
                    author_name=event.executor_id or author,
                    agent_id=self.id,
                    message_id=uuid.uuid4().hex,
                )
            ]
        if event.type == "output":
            data = event.data
            if isinstance(data, AgentResponse):
                if event.executor_id in streamed_by:
                    return []  # its text already went out as agent_update events
                messages = data.messages
            elif isinstance(data, Message):
                messages = [data]
            elif isinstance(data, list) and all(isinstance(m, Message) for m in data):
                messages = data
            else:
                text = data if isinstance(data, str) else getattr(data, "text", None) or str(data)
                messages = [Message("assistant", [text], author_name=author)]
            return [
                AgentResponseUpdate(
                    contents=m.contents,
                    role=m.role,
                    author_name=m.author_name,
                    agent_id=self.id,
                    message_id=m.message_id or uuid.uuid4().hex,
                )
                for m in messages
            ]
        if event.type == "request_info" and event.request_id:
            call = Content.from_function_call(
                event.request_id, "request_info", {"executor_id": event.executor_id, "data": safe_encode(event.data)}
            )
            request = Content.from_function_approval_request(event.request_id, call)
            return [
                AgentResponseUpdate(
                    contents=[request],
                    role="assistant",
                    author_name=author,
                    agent_id=self.id,
                    message_id=uuid.uuid4().hex,
                )
            ]
        return []


def _text_of(data: Any) -> str:
    if isinstance(data, str):
        return data
    if isinstance(data, (AgentResponse, AgentResponseUpdate, Message)):
        return data.text
    if isinstance(data, list) and all(isinstance(m, Message) for m in data):
        return "\n".join(m.text for m in data)
    return str(data)
