"""Chat clients: the seam to a model, and the function-invocation loop layered around it.

A provider implements ``_inner_get_response`` (and optionally ``_inner_get_streaming_response``); the
base class adds chat and function middleware, telemetry, tool calling and approval on top, in one loop
that serves both streaming and non-streaming calls.
"""

from __future__ import annotations

import asyncio
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Sequence
from contextlib import aclosing
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload, runtime_checkable

from . import _telemetry as tel
from ._middleware import (
    ChatContext,
    ChatMiddleware,
    FunctionInvocationContext,
    FunctionMiddleware,
    run_pipeline,
    split_middleware,
)
from ._tools import FunctionTool, resolve_tools
from ._types import (
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    MessagesLike,
    ResponseStream,
    UsageDetails,
    add_usage_details,
    normalize_messages,
)
from .exceptions import AgentnbError, ApprovalError

if TYPE_CHECKING:
    from ._agents import Agent
    from ._sessions import AgentSession

__all__ = ["BaseChatClient", "SupportsChatGetResponse"]

DEFAULT_MAX_ITERATIONS = 40


@runtime_checkable
class SupportsChatGetResponse(Protocol):
    """Anything that answers chat messages the way :class:`BaseChatClient` does."""

    def get_response(
        self, messages: MessagesLike, *, stream: bool = False, options: dict[str, Any] | None = None, **kwargs: Any
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        """Answer ``messages``."""
        ...


class BaseChatClient(ABC):
    """Base class of every chat client: subclasses implement the two ``_inner_*`` methods.

    Args:
        model_id: The model this client asks by default.
        middleware: Chat and function middleware applied to every request of this client.
        max_iterations: Model calls allowed in one request while tools are being called.

    Example:
        ```python
        from agentnb import BaseChatClient, ChatResponse, Message

        class EchoClient(BaseChatClient):
            async def _inner_get_response(self, *, messages, options, **kwargs):
                return ChatResponse(messages=[Message("assistant", [messages[-1].text])])

        response = await EchoClient().get_response("hello")
        response.text  # 'hello'
        ```
    """

    OTEL_PROVIDER_NAME: str = "agentnb"

    def __init__(
        self,
        *,
        model_id: str | None = None,
        middleware: Sequence[Any] | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        self.model_id = model_id
        self.middleware: list[Any] = list(middleware or [])
        self.max_iterations = max_iterations
        self.additional_properties: dict[str, Any] = additional_properties or {}

    # -- what providers implement ------------------------------------------------------------------------
    @abstractmethod
    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        """Send ``messages`` to the model and return its reply (one model call, no tool execution)."""

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        """Stream the model's reply; by default the whole reply arrives as one piece."""
        response = await self._inner_get_response(messages=messages, options=options, **kwargs)
        for update in response.to_updates():
            yield update

    # -- public API --------------------------------------------------------------------------------------
    @overload
    def get_response(
        self,
        messages: MessagesLike,
        *,
        stream: Literal[False] = False,
        options: dict[str, Any] | None = None,
        tools: Any = None,
        middleware: Sequence[Any] | None = None,
        session: AgentSession | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Awaitable[ChatResponse]: ...

    @overload
    def get_response(
        self,
        messages: MessagesLike,
        *,
        stream: Literal[True],
        options: dict[str, Any] | None = None,
        tools: Any = None,
        middleware: Sequence[Any] | None = None,
        session: AgentSession | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ResponseStream[ChatResponseUpdate, ChatResponse]: ...

    def get_response(
        self,
        messages: MessagesLike,
        *,
        stream: bool = False,
        options: dict[str, Any] | None = None,
        tools: Any = None,
        middleware: Sequence[Any] | None = None,
        session: AgentSession | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        """Answer ``messages``, calling tools as the model asks, until a final answer or an approval request.

        Args:
            messages: A string, Content, Message, or a list of them.
            stream: Return a ``ResponseStream`` of updates instead of awaiting the whole response.
            options: ``ChatOptions`` for this request (``tools`` here and ``tools=`` are combined).
            tools: Extra tools for this request.
            middleware: Extra chat/function middleware for this request (runs inside the client's own).
            session: The agent session, visible to tools through ``FunctionInvocationContext``.
            function_invocation_kwargs: Values passed to tools that accept ``**kwargs``.
        """
        options = dict(options or {})
        if tools is not None:
            extra = tools if isinstance(tools, (list, tuple)) else [tools]
            options["tools"] = [*(options.get("tools") or []), *extra]
        _, chat_mw, function_mw = split_middleware([*self.middleware, *(middleware or [])])
        loop = _FunctionInvocationLoop(
            self,
            normalize_messages(messages),
            options,
            chat_middleware=chat_mw,
            function_middleware=function_mw,
            session=session,
            function_kwargs=function_invocation_kwargs or {},
            kwargs=kwargs,
        )
        if stream:
            return ResponseStream(loop.run(stream=True), loop.final_response)
        return loop.run_to_completion()

    def as_agent(
        self,
        *,
        name: str | None = None,
        instructions: str | None = None,
        tools: Any = None,
        **kwargs: Any,
    ) -> Agent:
        """An :class:`~agentnb.Agent` that talks through this client."""
        from ._agents import Agent

        return Agent(self, instructions, name=name, tools=tools, **kwargs)

    def service_url(self) -> str | None:
        """Where requests go (``None`` for in-process models)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"


def _approval_required(tool: FunctionTool | None) -> bool:
    return tool is not None and tool.approval_mode == "always_require"


def _approval_request(call: Content, tool: FunctionTool | None) -> Content:
    """A new approval request for one call occurrence, naming the tool's source (its MCP server, if any)."""
    request = Content.from_function_approval_request(f"{call.call_id}:{uuid.uuid4().hex[:12]}", call)
    if tool is not None:
        # The call alone cannot tell same-named tools of two sources apart (None: a local tool); rules and
        # the resume check below need to.
        request.additional_properties["server_label"] = tool.additional_properties.get("server_label")
    return request


_HAS_CALL, _HAS_RESULT, _HAS_CONTROL = 1, 2, 4
_CONTROL_TYPES = ("function_approval_request", "function_approval_response")
_NO_IDS: frozenset[str] = frozenset()


def _flags(message: Message) -> int:
    """Which kinds of tool content a message holds, cached on the message.

    Every turn re-reads the whole history; caching keeps that a flag check per message, so a long
    session does not make each turn slower. The cache is keyed by the contents list and its length.
    """
    contents = message.contents
    cached = message._flags
    if cached is not None and cached[0] is contents and cached[1] == len(contents):
        return cached[2]
    flags = 0
    for content in contents:
        kind = content.type
        if kind == "function_call":
            flags |= _HAS_CALL
        elif kind == "function_result":
            flags |= _HAS_RESULT
        elif kind in _CONTROL_TYPES:
            flags |= _HAS_CONTROL
    message._flags = (contents, len(contents), flags)
    return flags


def _calls_in(message: Message) -> list[Content]:
    if not _flags(message) & _HAS_CALL:
        return []
    return [c for c in message.contents if c.type == "function_call"]


def _result_ids(message: Message) -> frozenset[str] | set[str]:
    if not _flags(message) & _HAS_RESULT:
        return _NO_IDS
    return {c.call_id for c in message.contents if c.type == "function_result" and c.call_id}


class _PendingBatch:
    """The last assistant message whose tool calls have no results yet, with its approval requests."""

    def __init__(self, index: int, calls: list[Content], requests: dict[str, Content]) -> None:
        self.index = index
        self.calls = calls
        self.requests = requests  # request id -> request content

    @classmethod
    def find(cls, conversation: list[Message]) -> _PendingBatch | None:
        """The batch waiting for approval answers, if any.

        The search stops at the model's last plain answer: a batch before it was settled, so a long
        conversation costs no more per turn than a short one.
        """
        for index in range(len(conversation) - 1, -1, -1):
            message = conversation[index]
            if _is_plain_answer(message):
                return None
            calls = _calls_in(message) if message.role == "assistant" else []
            if not calls:
                continue
            answered: set[str] = set()
            for later in conversation[index + 1 :]:
                answered |= _result_ids(later)
            if all(c.call_id in answered for c in calls):
                return None
            requests = {
                c.id: c
                for m in conversation[index:]
                for c in m.contents
                if c.type == "function_approval_request" and c.id is not None
            }
            return cls(index, calls, requests)
        return None


def _is_plain_answer(message: Message) -> bool:
    """An assistant message with no tool calls or approval requests: the end of a settled turn."""
    return message.role == "assistant" and not _flags(message)


def _answers_start(conversation: list[Message]) -> int:
    """Where unprocessed approval answers may start: after the last tool results or plain answer."""
    for index in range(len(conversation) - 1, -1, -1):
        message = conversation[index]
        if _flags(message) & _HAS_RESULT or _is_plain_answer(message):
            return index
    return -1


def _same_call(a: Content | None, b: Content | None) -> bool:
    if a is None or b is None:
        return False
    try:
        return a.call_id == b.call_id and a.name == b.name and a.parse_arguments() == b.parse_arguments()
    except ValueError:
        return False


class _Scan:
    """What ``_history_flags`` learned about a run of messages, kept on the run's last message.

    The next turn's conversation holds the same Message objects (from the session's history) followed by
    new ones, so only the new ones need a look. The summary is reused only if every message of the run is
    the same object with the same contents list of the same length (the per-message ``_flags`` cache key),
    checked with C-level passes instead of a Python loop over the history.
    """

    __slots__ = ("answered", "contents", "lengths", "messages", "seen")

    def __init__(self, messages: list[Message], seen: int, answered: set[str]) -> None:
        self.messages = messages
        self.contents = list(map(_contents_of, messages))
        self.lengths = list(map(len, self.contents))
        self.seen = seen
        self.answered = answered

    def covers(self, window: list[Message]) -> bool:
        # List equality checks identity first, element by element, in C: Message and Content compare by
        # value only when the objects differ, and then equal values have equal flags anyway.
        if window != self.messages:
            return False
        contents = list(map(_contents_of, window))
        return contents == self.contents and list(map(len, contents)) == self.lengths


_contents_of = attrgetter("contents")


def _history_flags(conversation: list[Message]) -> tuple[int, set[str]]:
    """Flags of all messages and the call ids of all function results, reusing the last turn's summary."""
    n = len(conversation)
    # Leading system messages are usually instructions rebuilt every turn: the summary leaves them out
    # (when they hold no tool content) so that it still matches next turn.
    first = 0
    while first < n and conversation[first].role == "system" and not _flags(conversation[first]):
        first += 1
    if first == n:
        return 0, set()
    memo: _Scan | None = None
    for j in range(n - 1, first - 1, -1):  # the latest summary sits a few messages from the end
        found = conversation[j]._scan
        if found is None:
            continue
        conversation[j]._scan = None  # moves to the last message below, or was stale
        if j + 1 - len(found.messages) == first and found.covers(conversation[first : j + 1]):
            memo = found
        break
    if memo is None:
        memo = _Scan([], 0, set())
    start = first + len(memo.messages)
    seen, answered = memo.seen, memo.answered
    tail = conversation[start:]
    for message in tail:
        flags = _flags(message)
        seen |= flags
        if flags & _HAS_RESULT:
            answered |= _result_ids(message)
    memo.seen = seen
    memo.messages.extend(tail)
    tail_contents = list(map(_contents_of, tail))
    memo.contents.extend(tail_contents)
    memo.lengths.extend(map(len, tail_contents))
    conversation[-1]._scan = memo
    return seen, answered


def _for_model(conversation: list[Message]) -> list[Message]:
    """The conversation as the model should see it: no approval bookkeeping, no unanswered calls."""
    seen, answered = _history_flags(conversation)
    if not seen & (_HAS_CALL | _HAS_CONTROL):
        return conversation  # nothing to hide: the common case costs one pass of flag checks
    out: list[Message] = []
    for message in conversation:
        if not _flags(message) & (_HAS_CALL | _HAS_CONTROL):
            out.append(message)
            continue
        kept = [
            c
            for c in message.contents
            if c.type not in ("function_approval_request", "function_approval_response")
            and not (c.type == "function_call" and c.call_id not in answered)
        ]
        if not kept:
            continue
        if len(kept) == len(message.contents):
            out.append(message)
        else:
            out.append(
                Message(
                    message.role,
                    kept,
                    author_name=message.author_name,
                    message_id=message.message_id,
                    additional_properties=message.additional_properties,
                )
            )
    return out


def _drop_contents(response: ChatResponse | ChatResponseUpdate, types: tuple[str, ...]) -> None:
    """Remove contents of the given types from a response or update (messages left empty go too)."""
    if isinstance(response, ChatResponseUpdate):
        if any(c.type in types for c in response.contents):
            response.contents = [c for c in response.contents if c.type not in types]
        return
    for message in response.messages:
        if any(c.type in types for c in message.contents):
            message.contents = [c for c in message.contents if c.type not in types]
    response.messages = [m for m in response.messages if m.contents]


def _iterations_used(conversation: list[Message]) -> int:
    """Model calls that asked for tools since the person last said something (approvals don't count)."""
    used = 0
    for message in reversed(conversation):
        if message.role == "user" and any(c.type != "function_approval_response" for c in message.contents):
            break
        if message.role == "assistant" and _calls_in(message):
            used += 1
    return used


class _FunctionInvocationLoop:
    """One request: model -> tools -> model ..., streaming updates as they happen."""

    def __init__(
        self,
        client: BaseChatClient,
        messages: list[Message],
        options: dict[str, Any],
        *,
        chat_middleware: list[ChatMiddleware],
        function_middleware: list[FunctionMiddleware],
        session: AgentSession | None,
        function_kwargs: dict[str, Any],
        kwargs: dict[str, Any],
    ) -> None:
        self.client = client
        self.input = messages
        self.options = options
        self.chat_middleware = chat_middleware
        self.function_middleware = function_middleware
        self.session = session
        self.function_kwargs = function_kwargs
        self.kwargs = kwargs
        self.new_messages: list[Message] = []
        self.usage: UsageDetails | None = None
        self.last: ChatResponse | None = None
        self.tools: list[FunctionTool] = []

    async def run_to_completion(self) -> ChatResponse:
        async for _ in self.run(stream=False):
            pass
        return self.final_response()

    def final_response(self, _updates: Any = None) -> ChatResponse:
        last = self.last or ChatResponse()
        response = ChatResponse(
            messages=self.new_messages,
            response_id=last.response_id,
            conversation_id=last.conversation_id,
            model_id=last.model_id,
            created_at=last.created_at,
            finish_reason=last.finish_reason,
            usage_details=self.usage,
            response_format=self.options.get("response_format"),
            additional_properties=last.additional_properties,
            raw_representation=last.raw_representation,
        )
        if response._response_format is not None and not response.user_input_requests and response.text:
            _ = response.value  # surface schema errors from the run, not later
        return response

    def _add(self, message: Message) -> ChatResponseUpdate:
        self.new_messages.append(message)
        return ChatResponseUpdate(contents=list(message.contents), role=message.role, message_id=message.message_id)

    async def run(self, *, stream: bool) -> AsyncIterator[ChatResponseUpdate]:
        self.tools = await resolve_tools(self.options.get("tools"))
        conversation = list(self.input)
        instructions = self.options.get("instructions")
        if instructions:
            conversation.insert(0, Message("system", [instructions]))

        batch = _PendingBatch.find(conversation)
        self._check_approval_answers(conversation, batch)
        if batch is not None:
            outcome = await self._resume(conversation, batch)
            if isinstance(outcome, list):  # still waiting for answers
                if stream:
                    yield self._add(Message("assistant", outcome))
                else:
                    self._add(Message("assistant", outcome))
                return
            if outcome is not None:
                conversation.append(outcome)
                update = self._add(outcome)
                if stream:
                    yield update
                if outcome.additional_properties.get("terminate"):
                    return

        max_iterations = self.client.max_iterations
        for _ in range(max(max_iterations - _iterations_used(conversation), 0) + 1):
            over_budget = _iterations_used(conversation) >= max_iterations
            response = None
            async with aclosing(self._call_model(conversation, stream=stream, allow_tools=not over_budget)) as items:
                async for item in items:
                    if isinstance(item, ChatResponse):
                        response = item
                    else:
                        _drop_contents(item, _CONTROL_TYPES)
                        yield item
            assert response is not None
            self.last = response
            self.usage = add_usage_details(self.usage, response.usage_details)
            # Approval requests come from this loop and answers from the person: a model's output (untrusted)
            # may carry neither. Over budget, tools were not offered: calls the model makes anyway must not
            # linger as a pending batch that a later turn would execute (or ask approval for).
            _drop_contents(response, (*_CONTROL_TYPES, "function_call") if over_budget else _CONTROL_TYPES)
            conversation.extend(response.messages)
            self.new_messages.extend(response.messages)
            calls = [c for m in response.messages for c in _calls_in(m)]
            if not calls or over_budget:
                return
            tools_by_name = {t.name: t for t in self.tools}
            if any(c.name in tools_by_name and tools_by_name[c.name].func is None for c in calls):
                return  # declaration-only tools: the caller executes them
            requests = [
                _approval_request(c, tools_by_name.get(c.name or ""))
                for c in calls
                if _approval_required(tools_by_name.get(c.name or ""))
            ]
            if requests:
                holder = next(m for m in reversed(response.messages) if _calls_in(m))
                holder.contents.extend(requests)
                if stream:
                    yield ChatResponseUpdate(contents=requests, role="assistant", message_id=holder.message_id)
                return
            results = await self._execute(calls)
            conversation.append(results)
            update = self._add(results)
            if stream:
                yield update
            if results.additional_properties.get("terminate"):
                return

    # -- model calls -------------------------------------------------------------------------------------
    async def _call_model(
        self, conversation: list[Message], *, stream: bool, allow_tools: bool
    ) -> AsyncIterator[ChatResponseUpdate | ChatResponse]:
        options = dict(self.options)
        options.pop("instructions", None)
        if allow_tools and self.tools:
            options["tools"] = list(self.tools)
        else:
            options.pop("tools", None)
            options.pop("tool_choice", None)
        context = ChatContext(
            client=self.client, messages=_for_model(conversation), options=options, stream=stream, kwargs=self.kwargs
        )
        client = self.client
        model = options.get("model_id") or client.model_id
        span = (
            None
            if not tel.is_enabled()
            else tel.start_span(
                f"chat {model}" if model else "chat",
                {
                    tel.GEN_AI_OPERATION_NAME: "chat",
                    tel.GEN_AI_PROVIDER_NAME: client.OTEL_PROVIDER_NAME,
                    tel.GEN_AI_REQUEST_MODEL: model,
                    tel.GEN_AI_REQUEST_TEMPERATURE: options.get("temperature"),
                    tel.GEN_AI_REQUEST_TOP_P: options.get("top_p"),
                    tel.GEN_AI_REQUEST_MAX_TOKENS: options.get("max_tokens"),
                    tel.GEN_AI_REQUEST_SEED: options.get("seed"),
                },
                kind="client",
            )
        )

        async def call_model(ctx: ChatContext) -> None:
            tel.record_sensitive(span, tel.GEN_AI_INPUT_MESSAGES, ctx.messages)
            if ctx.stream:
                ctx.result = ResponseStream(
                    client._inner_get_streaming_response(messages=ctx.messages, options=ctx.options, **ctx.kwargs),
                    lambda updates: ChatResponse.from_updates(updates),
                )
            else:
                ctx.result = await client._inner_get_response(messages=ctx.messages, options=ctx.options, **ctx.kwargs)

        try:
            with tel.use_span(span):
                await run_pipeline(self.chat_middleware, context, call_model)
            result = context.result
            if isinstance(result, ResponseStream):
                try:
                    async for update in result:
                        yield update
                finally:
                    await result.aclose()  # closes the provider's stream (and its HTTP connection) on cancel
                result = await result.get_final_response()
            elif not isinstance(result, ChatResponse):
                raise TypeError(
                    f"{type(client).__name__} returned {type(result).__name__}; _inner_get_response must return "
                    "a ChatResponse."
                )
        except BaseException as e:
            tel.end_span(span, error=e)
            raise
        if span is not None:
            usage = result.usage_details or {}
            tel.record_sensitive(span, tel.GEN_AI_OUTPUT_MESSAGES, result.messages, finish_reason=result.finish_reason)
            tel.end_span(
                span,
                attributes={
                    tel.GEN_AI_RESPONSE_MODEL: result.model_id,
                    tel.GEN_AI_RESPONSE_ID: result.response_id,
                    tel.GEN_AI_RESPONSE_FINISH_REASONS: [result.finish_reason] if result.finish_reason else None,
                    tel.GEN_AI_USAGE_INPUT_TOKENS: usage.get("input_token_count"),
                    tel.GEN_AI_USAGE_OUTPUT_TOKENS: usage.get("output_token_count"),
                },
            )
        yield result

    # -- approvals ---------------------------------------------------------------------------------------
    def _check_approval_answers(self, conversation: list[Message], batch: _PendingBatch | None) -> None:
        """Refuse answers that match no pending request: unknown, already answered, forged or repeated."""
        start = batch.index if batch is not None else _answers_start(conversation)
        seen: set[str] = set()
        for message in conversation[start + 1 :]:
            if not _flags(message) & _HAS_CONTROL:
                continue
            for content in message.contents:
                if content.type != "function_approval_response":
                    continue
                rid = content.id or ""
                request = batch.requests.get(rid) if batch is not None else None
                if request is None:
                    raise ApprovalError(
                        f"Approval response {rid!r} answers no pending request (unknown or already answered); "
                        "nothing was executed."
                    )
                if rid in seen:
                    raise ApprovalError(f"Approval request {rid!r} was answered twice; nothing was executed.")
                if not _same_call(content.function_call, request.function_call):
                    raise ApprovalError(
                        f"Approval response {rid!r} does not match the requested call "
                        f"{request.function_call.name if request.function_call else '?'!r}; nothing was executed."
                    )
                seen.add(rid)

    async def _resume(self, conversation: list[Message], batch: _PendingBatch) -> Message | list[Content] | None:
        """Run a batch whose approvals are all answered; otherwise return the requests still waiting.

        Each call occurrence is paired with its own request (a model may repeat a call id inside one reply),
        so an answer approves exactly one call, never a sibling that shares its id.
        """
        answers: dict[str, Content] = {}  # request id -> answer (already checked to match the request's call)
        for message in conversation[batch.index + 1 :]:
            for content in message.contents:
                if content.type == "function_approval_response" and content.id is not None:
                    answers[content.id] = content
        tools_by_name = {t.name: t for t in self.tools}
        unclaimed = list(batch.requests.values())
        approvals: list[Content | None] = []
        waiting: list[Content] = []
        for call in batch.calls:
            request = next((r for r in unclaimed if _same_call(r.function_call, call)), None)
            if request is not None:
                unclaimed.remove(request)
            tool = tools_by_name.get(call.name or "")
            if request is None and not _approval_required(tool):
                approvals.append(None)
                continue
            answer = answers.get(request.id or "") if request is not None else None
            if (
                answer is not None
                and request is not None
                and tool is not None
                and "server_label" in request.additional_properties
                and request.additional_properties["server_label"] != tool.additional_properties.get("server_label")
            ):
                # The tool of that name now comes from another source than the one the person approved.
                answer = Content.from_function_approval_response(
                    request.id or "",
                    False,
                    call,
                    reason=f"the approval was for {call.name!r} from another source "
                    f"({request.additional_properties['server_label']!r}); call it again to ask anew",
                )
            if answer is None:
                # An approval-required call that never got a request (or whose request is unanswered): ask.
                waiting.append(request if request is not None else _approval_request(call, tool))
            approvals.append(answer)
        if waiting:
            return waiting
        return await self._execute(batch.calls, approvals=approvals)

    # -- tool execution ----------------------------------------------------------------------------------
    async def _execute(self, calls: list[Content], *, approvals: Sequence[Content | None] | None = None) -> Message:
        """Run a batch of calls concurrently; results keep the calls' order.

        ``approvals[i]`` is the person's answer for ``calls[i]`` (``None``: no answer).
        """
        tools_by_name = {t.name: t for t in self.tools}
        answers = list(approvals) if approvals is not None else [None] * len(calls)
        if len(calls) == 1:
            outcomes = [await self._invoke(calls[0], tools_by_name, answers[0])]
        else:
            outcomes = await asyncio.gather(
                *(self._invoke(c, tools_by_name, a) for c, a in zip(calls, answers, strict=True))
            )
        message = Message("tool", [content for content, _ in outcomes])
        if any(terminate for _, terminate in outcomes):
            message.additional_properties["terminate"] = True
        return message

    async def _invoke(
        self, call: Content, tools_by_name: dict[str, FunctionTool], answer: Content | None
    ) -> tuple[Content, bool]:
        call_id = call.call_id or ""
        tool = tools_by_name.get(call.name or "")
        if tool is None:
            available = ", ".join(sorted(tools_by_name)) or "none"
            return Content.from_function_result(
                call_id, exception=f"Error: there is no tool named {call.name!r}. Available tools: {available}."
            ), False
        # Deny unless the answer approves this very call (the check is repeated here as the last line of defence).
        approved = answer is not None and answer.approved is True and _same_call(answer.function_call, call)
        if (_approval_required(tool) or answer is not None) and not approved:
            reason = f" Reason: {answer.reason}" if answer is not None and answer.reason else ""
            return Content.from_function_result(
                call_id,
                result=f"The user denied the call to {tool.name!r}; do not retry it.{reason}",
                additional_properties={"approval": "rejected"},
            ), False
        try:
            arguments = call.parse_arguments()
        except ValueError as e:
            return Content.from_function_result(call_id, exception=f"Error: {e}"), False
        context = FunctionInvocationContext(
            function=tool,
            arguments=arguments,
            call_id=call_id,
            session=self.session,
            tools=self.tools,
            kwargs=dict(self.function_kwargs),
        )
        span = (
            None
            if not tel.is_enabled()
            else tel.start_span(
                f"execute_tool {tool.name}",
                {
                    tel.GEN_AI_OPERATION_NAME: "execute_tool",
                    tel.GEN_AI_TOOL_NAME: tool.name,
                    tel.GEN_AI_TOOL_CALL_ID: call_id,
                    tel.GEN_AI_TOOL_TYPE: "function",
                    tel.GEN_AI_TOOL_DESCRIPTION: tool.description or None,
                },
            )
        )

        async def invoke(ctx: FunctionInvocationContext) -> None:
            tel.record_sensitive(span, tel.GEN_AI_TOOL_CALL_ARGUMENTS, ctx.arguments)
            ctx.result = await ctx.function.invoke(arguments=ctx.arguments, context=ctx, **ctx.kwargs)

        try:
            with tel.use_span(span):
                await run_pipeline(self.function_middleware, context, invoke)
        except Exception as e:
            tel.end_span(span, error=e)
            if isinstance(e, AgentnbError) and e.end_run:
                raise  # the tool asked for this failure to end the run (see AgentnbError.end_run)
            return Content.from_function_result(
                call_id, exception=f"Error: tool {tool.name!r} failed: {type(e).__name__}: {e}"
            ), context.terminate
        tel.record_sensitive(span, tel.GEN_AI_TOOL_CALL_RESULT, context.result)
        tel.end_span(span)
        return Content.from_function_result(call_id, result=context.result), context.terminate
