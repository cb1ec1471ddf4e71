# Copyright (c) Microsoft. All rights reserved.

from collections.abc import AsyncIterable, Awaitable
from typing import Any, Literal, overload

import pytest

from agentnb import AgentExecutor, AgentResponse, AgentResponseUpdate, AgentRunInputs, AgentSession, BaseAgent, Content, Message, ResponseStream, WorkflowBuilder, WorkflowEvent, WorkflowRunState
from agentnb import AgentExecutorResponse
from agentnb import InMemoryCheckpointStorage


class _CountingAgent(BaseAgent):
    """Agent that echoes messages with a counter to verify session state persistence."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.call_count = 0

    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[False] = ...,
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]]: ...
    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[True],
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse[Any]]: ...

    def run(
        self,
        messages: AgentRunInputs | None = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]] | ResponseStream[AgentResponseUpdate, AgentResponse[Any]]:
        self.call_count += 1
        if stream:

            async def _stream() -> AsyncIterable[AgentResponseUpdate]:
                yield AgentResponseUpdate(
                    contents=[Content.from_text(text=f"Response #{self.call_count}: {self.name}")]
                )

            return ResponseStream(_stream(), finalizer=AgentResponse.from_updates)

        async def _run() -> AgentResponse:
            return AgentResponse(messages=[Message("assistant", [f"Response #{self.call_count}: {self.name}"])])

        return _run()


class _StreamingHookAgent(BaseAgent):
    """Agent that exposes whether its streaming result hook was executed."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.result_hook_called = False

    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[False] = ...,
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]]: ...
    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[True],
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse[Any]]: ...

    def run(
        self,
        messages: AgentRunInputs | None = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]] | ResponseStream[AgentResponseUpdate, AgentResponse[Any]]:
        if stream:

            async def _stream() -> AsyncIterable[AgentResponseUpdate]:
                yield AgentResponseUpdate(
                    contents=[Content.from_text(text="hook test")],
                    role="assistant",
                )

            async def _mark_result_hook_called(
                response: AgentResponse,
            ) -> AgentResponse:
                self.result_hook_called = True
                return response

            return ResponseStream(_stream(), finalizer=AgentResponse.from_updates).with_result_hook(
                _mark_result_hook_called
            )

        async def _run() -> AgentResponse:
            return AgentResponse(messages=[Message("assistant", ["hook test"])])

        return _run()


async def test_agent_executor_streaming_finalizes_stream_and_runs_result_hooks() -> None:
    """AgentExecutor should call get_final_response() so stream result hooks execute."""
    agent = _StreamingHookAgent(id="hook_agent", name="HookAgent")
    executor = AgentExecutor(agent, id="hook_exec")
    workflow = WorkflowBuilder(start_executor=executor).build()

    output_events: list[Any] = []
    async for event in workflow.run("run hook test", stream=True):
        if event.type == "output":
            output_events.append(event)

    assert output_events
    assert agent.result_hook_called










class _NonCopyableRaw:
    """Simulates an LLM SDK response object that cannot be deep-copied (e.g., proto/gRPC)."""

    def __deepcopy__(self, memo: dict) -> Any:
        raise TypeError("Cannot deepcopy this object")


class _AgentWithRawRepr(BaseAgent):
    """Agent that returns responses with a non-copyable raw_representation."""

    def __init__(self, raw: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self._raw = raw

    def run(
        self,
        messages: str | Message | list[str] | list[Message] | None = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse] | ResponseStream[AgentResponseUpdate, AgentResponse]:
        async def _run() -> AgentResponse:
            return AgentResponse(
                messages=[Message("assistant", [f"reply from {self.name}"])],
                raw_representation=self._raw,
            )

        return _run()


async def test_agent_executor_workflow_with_non_copyable_raw_representation() -> None:
    """Workflow should complete when AgentResponse contains a raw_representation that cannot be deep-copied."""
    raw = _NonCopyableRaw()

    agent_a = _AgentWithRawRepr(raw=raw, id="a", name="AgentA")
    agent_b = _CountingAgent(id="b", name="AgentB")

    exec_a = AgentExecutor(agent_a, id="exec_a")  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
    exec_b = AgentExecutor(agent_b, id="exec_b")

    workflow = WorkflowBuilder(start_executor=exec_a).add_edge(exec_a, exec_b).build()
    events = await workflow.run("hello")

    completed = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_completed"]
    completed_a = [e for e in completed if e.executor_id == "exec_a"]

    assert len(completed_a) == 1
    assert completed_a[0].data is not None

    # The yielded AgentResponse should preserve its raw_representation reference
    agent_responses = [d for d in completed_a[0].data if isinstance(d, AgentResponse)]
    assert len(agent_responses) > 0
    assert agent_responses[0].text == "reply from AgentA"
    assert agent_responses[0].raw_representation is raw


# ---------------------------------------------------------------------------
# Context mode tests
# ---------------------------------------------------------------------------


class _MessageCapturingAgent(BaseAgent):
    """Agent that records the messages it received and returns a configurable reply."""

    def __init__(self, *, reply_text: str = "reply", **kwargs: Any):
        super().__init__(**kwargs)
        self.reply_text = reply_text
        self.last_messages: list[Message] = []

    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[False] = ...,
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]]: ...
    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[True],
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse[Any]]: ...

    def run(
        self,
        messages: AgentRunInputs | None = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]] | ResponseStream[AgentResponseUpdate, AgentResponse[Any]]:
        captured: list[Message] = []
        if messages:
            for m in messages:  # type: ignore[union-attr]  # ty: ignore[not-iterable]
                if isinstance(m, Message):
                    captured.append(m)
                elif isinstance(m, str):
                    captured.append(Message("user", [m]))
        self.last_messages = captured

        if stream:

            async def _stream() -> AsyncIterable[AgentResponseUpdate]:
                yield AgentResponseUpdate(contents=[Content.from_text(text=self.reply_text)])

            return ResponseStream(_stream(), finalizer=AgentResponse.from_updates)

        async def _run() -> AgentResponse:
            return AgentResponse(messages=[Message("assistant", [self.reply_text])])

        return _run()


def test_context_mode_custom_requires_context_filter() -> None:
    """context_mode='custom' without context_filter must raise ValueError."""
    agent = _CountingAgent(id="a", name="A")
    with pytest.raises(ValueError, match="context_filter must be provided"):
        AgentExecutor(agent, context_mode="custom")






def test_context_mode_invalid_value_raises() -> None:
    """Invalid context_mode value should raise ValueError."""
    agent = _CountingAgent(id="a", name="A")
    with pytest.raises(ValueError, match="context_mode must be one of"):
        AgentExecutor(agent, context_mode="invalid_mode")  # type: ignore


async def test_from_response_context_mode_full_passes_full_conversation() -> None:
    """context_mode='full' (default) should pass full_conversation to the second agent."""
    first = _MessageCapturingAgent(id="first", name="First", reply_text="first reply")
    second = _MessageCapturingAgent(id="second", name="Second", reply_text="second reply")

    exec_a = AgentExecutor(first, id="exec_a")
    exec_b = AgentExecutor(second, id="exec_b", context_mode="full")

    wf = WorkflowBuilder(start_executor=exec_a).add_edge(exec_a, exec_b).build()

    async for ev in wf.run("hello", stream=True):
        if ev.type == "status" and ev.state == WorkflowRunState.IDLE:
            break

    # Second agent should see full conversation: [user("hello"), assistant("first reply")]
    seen = second.last_messages
    assert len(seen) == 2
    assert seen[0].role == "user" and "hello" in (seen[0].text or "")
    assert seen[1].role == "assistant" and "first reply" in (seen[1].text or "")


async def test_from_response_context_mode_last_agent_passes_only_agent_messages() -> None:
    """context_mode='last_agent' should pass only the previous agent's response messages."""
    first = _MessageCapturingAgent(id="first", name="First", reply_text="first reply")
    second = _MessageCapturingAgent(id="second", name="Second", reply_text="second reply")

    exec_a = AgentExecutor(first, id="exec_a")
    exec_b = AgentExecutor(second, id="exec_b", context_mode="last_agent")

    wf = WorkflowBuilder(start_executor=exec_a).add_edge(exec_a, exec_b).build()

    async for ev in wf.run("hello", stream=True):
        if ev.type == "status" and ev.state == WorkflowRunState.IDLE:
            break

    # Second agent should see only the assistant message from first: [assistant("first reply")]
    seen = second.last_messages
    assert len(seen) == 1
    assert seen[0].role == "assistant" and "first reply" in (seen[0].text or "")


async def test_from_response_context_mode_custom_uses_filter() -> None:
    """context_mode='custom' should invoke context_filter on full_conversation."""
    first = _MessageCapturingAgent(id="first", name="First", reply_text="first reply")
    second = _MessageCapturingAgent(id="second", name="Second", reply_text="second reply")

    # Custom filter: keep only user messages
    def only_user_messages(msgs: list[Message]) -> list[Message]:
        return [m for m in msgs if m.role == "user"]

    exec_a = AgentExecutor(first, id="exec_a")
    exec_b = AgentExecutor(second, id="exec_b", context_mode="custom", context_filter=only_user_messages)

    wf = WorkflowBuilder(start_executor=exec_a).add_edge(exec_a, exec_b).build()

    async for ev in wf.run("hello", stream=True):
        if ev.type == "status" and ev.state == WorkflowRunState.IDLE:
            break

    # Second agent should see only user messages: [user("hello")]
    seen = second.last_messages
    assert len(seen) == 1
    assert seen[0].role == "user" and "hello" in (seen[0].text or "")


async def test_checkpoint_save_does_not_include_context_mode() -> None:
    """on_checkpoint_save should not include context_mode in the saved state."""
    agent = _CountingAgent(id="a", name="A")
    executor = AgentExecutor(agent, context_mode="last_agent")

    state = await executor.on_checkpoint_save()

    assert "context_mode" not in state
    assert "cache" in state
    assert "agent_session" in state




# ---------------------------------------------------------------------------
# Per-executor kwargs resolution tests
# ---------------------------------------------------------------------------






















# region Tool approval emission


class _ApprovalEmittingAgent(BaseAgent):
    """Agent that returns a single ``function_approval_request`` Content.

    Used to verify that ``AgentExecutor`` does *not* surface the approval
    payload via both an ``output`` event and a ``request_info`` event in the
    same superstep — only the ``request_info`` event must carry it.
    """

    def __init__(
        self,
        *,
        approval_request_id: str = "apr_1",
        tool_name: str = "delete_file",
        tool_arguments: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self._approval_request_id = approval_request_id
        self._tool_name = tool_name
        self._tool_arguments: dict[str, Any] = tool_arguments or {"path": "/tmp/secret.txt"}
        self.run_count = 0

    def _build_approval_content(self) -> Content:
        function_call = Content.from_function_call(
            call_id=self._approval_request_id,
            name=self._tool_name,
            arguments=self._tool_arguments,
        )
        return Content.from_function_approval_request(id=self._approval_request_id, function_call=function_call)

    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[False] = ...,
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]]: ...

    @overload
    def run(
        self,
        messages: AgentRunInputs | None = ...,
        *,
        stream: Literal[True],
        session: AgentSession | None = ...,
        **kwargs: Any,
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse[Any]]: ...

    def run(
        self,
        messages: AgentRunInputs | None = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse[Any]] | ResponseStream[AgentResponseUpdate, AgentResponse[Any]]:
        self.run_count += 1
        approval = self._build_approval_content()

        if stream:

            async def _stream() -> AsyncIterable[AgentResponseUpdate]:
                yield AgentResponseUpdate(contents=[approval], role="assistant")

            return ResponseStream(_stream(), finalizer=AgentResponse.from_updates)

        async def _run() -> AgentResponse:
            return AgentResponse(messages=[Message("assistant", [approval])])

        return _run()


def _has_approval_payload(event: WorkflowEvent[Any]) -> bool:
    """Return True if the event's data carries a ``function_approval_request`` content."""
    data: Any = event.data

    def _contents_of(value: Any) -> list[Content]:
        if isinstance(value, AgentResponseUpdate):
            return list(value.contents)
        if isinstance(value, AgentResponse):
            return [c for m in value.messages for c in m.contents]
        if isinstance(value, AgentExecutorResponse):
            return [c for m in value.agent_response.messages for c in m.contents]
        if isinstance(value, Message):
            return list(value.contents)
        if isinstance(value, Content):
            return [value]
        return []

    return any(c.type == "function_approval_request" for c in _contents_of(data))


async def test_agent_executor_does_not_double_emit_approval_non_streaming() -> None:
    """Non-streaming: approval payload must only appear in the ``request_info`` event.

    Regression test for the bug where ``AgentExecutor._run_agent`` first
    ``yield_output``-ed the response (carrying the approval Content) and then
    additionally emitted a ``request_info`` event for the same payload.
    """
    agent = _ApprovalEmittingAgent(id="approve_agent", name="ApproveAgent", approval_request_id="apr_ns_1")
    executor = AgentExecutor(agent, id="approve_exec")
    workflow = WorkflowBuilder(start_executor=executor).build()

    request_info_events: list[WorkflowEvent[Any]] = []
    output_events: list[WorkflowEvent[Any]] = []

    for event in await workflow.run("please delete it"):
        if event.type == "request_info":
            request_info_events.append(event)
        elif event.type == "output":
            output_events.append(event)

    assert len(request_info_events) == 1
    assert _has_approval_payload(request_info_events[0])
    # The approval payload must not also be surfaced as a workflow output.
    assert not any(_has_approval_payload(e) for e in output_events)
    assert agent.run_count == 1


async def test_agent_executor_does_not_double_emit_approval_streaming() -> None:
    """Streaming: per-update approval payload must not be ``yield_output``-ed."""
    agent = _ApprovalEmittingAgent(id="approve_agent_s", name="ApproveAgentS", approval_request_id="apr_st_1")
    executor = AgentExecutor(agent, id="approve_exec_s")
    workflow = WorkflowBuilder(start_executor=executor).build()

    request_info_events: list[WorkflowEvent[Any]] = []
    output_events: list[WorkflowEvent[Any]] = []

    async for event in workflow.run("please delete it", stream=True):
        if event.type == "request_info":
            request_info_events.append(event)
        elif event.type == "output":
            output_events.append(event)

    assert len(request_info_events) == 1
    assert _has_approval_payload(request_info_events[0])
    assert not any(_has_approval_payload(e) for e in output_events)
    assert agent.run_count == 1


async def test_agent_executor_request_info_uses_user_input_request_id() -> None:
    """``ctx.request_info`` must register the request under the agent's approval id.

    This makes the workflow's pending-request id round-trip with the
    ``function_approval_response.id`` the caller echoes back, so
    ``Workflow._send_responses_internal`` can look it up directly.
    """
    agent = _ApprovalEmittingAgent(id="approve_agent_id", name="ApproveAgentId", approval_request_id="apr_match")
    executor = AgentExecutor(agent, id="approve_exec_id")
    workflow = WorkflowBuilder(start_executor=executor).build()

    request_info_events: list[WorkflowEvent[Any]] = []
    async for event in workflow.run("please delete it", stream=True):
        if event.type == "request_info":
            request_info_events.append(event)

    assert len(request_info_events) == 1
    assert request_info_events[0].request_id == "apr_match"


# endregion Tool approval emission
