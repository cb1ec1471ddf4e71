"""Chat clients: the seam to a model, and the function-invocation loop layered around it.

A provider implements the seam in one of two forms: the reference's single method
``_inner_get_response(*, messages, stream, options, **kwargs)`` returning an awaitable ``ChatResponse`` or a
``ResponseStream``, or the core guide's pair ``_inner_get_response(*, messages, options)`` (and optionally
``_inner_get_streaming_response``). The base class adds chat and function middleware, telemetry, tool calling
and approval on top of either, in one loop that serves both streaming and non-streaming calls.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    TypedDict,
    cast,
    overload,
    runtime_checkable,
)

from typing_extensions import Self, TypeVar

from ._conversation import (
    CONTROL_TYPES,
    HAS_CALL,
    HAS_CONTROL,
    PendingBatch,
    approval_request,
    approval_required,
    calls_in,
    calls_needing_approval,
    check_answers,
    for_model,
    has_new_answers,
    is_hosted_approval,
    iterations_used,
    same_call,
    standalone_answers,
    tool_kinds,
)
from ._extensions import REQUEST_COMPACTION
from ._json import is_list_or_tuple
from ._middleware import (
    ChatContext,
    ChatMiddleware,
    FunctionInvocationContext,
    FunctionMiddleware,
    MiddlewareType,
    chat_context,
    function_context,
    run_pipeline,
    split_middleware,
)
from ._telemetry_layers import INSTRUCTIONS_METADATA, traced_model_call
from ._tools import FunctionTool, resolve_tools, split_hosted_tools
from ._types import (
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    MessagesLike,
    ResponseStream,
    StreamSplice,
    UsageDetails,
    add_usage_details,
    call_arguments,
    normalize_messages,
    request_response,
)
from .exceptions import AgentnbError, ToolArgumentsError, ToolError, UnknownToolError, UserInputRequiredError

if TYPE_CHECKING:
    from ._agents import Agent
    from ._compaction_protocols import CompactionStrategy, RequestCompactor, TokenizerProtocol
    from ._sessions import AgentSession

__all__ = [
    "BaseChatClient",
    "FunctionInvocationConfiguration",
    "SupportsChatGetResponse",
    "normalize_function_invocation_configuration",
]

DEFAULT_MAX_ITERATIONS = 40
# The middleware kinds a chat client runs (an agent runs agent middleware around them).
_CLIENT_KINDS = (MiddlewareType.CHAT, MiddlewareType.FUNCTION)
DEFAULT_MAX_CONSECUTIVE_ERRORS_PER_REQUEST = 3
LIMIT_REACHED_TEXT = "Function invocation limit reached before a final answer could be produced."


class FunctionInvocationConfiguration(TypedDict, total=False):
    """The knobs of a chat client's function-invocation loop (``client.function_invocation_configuration``).

    A plain dict, as in the reference: change it in place (``client.function_invocation_configuration
    ["max_iterations"] = 5``) and the next request uses it.

    - ``enabled``: run the loop at all; ``False`` returns the model's tool calls to the caller unexecuted.
    - ``max_iterations``: model calls in one request that may call tools (default 40); one more call without
      tools then asks for the answer.
    - ``max_function_calls``: tool executions in one request (``None``: unlimited). Checked after each batch,
      so a batch of parallel calls runs whole; after the limit the model answers without tools.
    - ``max_consecutive_errors_per_request``: batches in a row with a failed call (default 3) after which the
      model answers without tools.
    - ``terminate_on_unknown_calls``: a call to a tool that does not exist raises ``UnknownToolError``
      instead of reporting the mistake to the model.
    - ``additional_tools``: tools that run when the model calls them but are not offered to it.
    - ``include_detailed_errors``: show the model the exception a tool raised (type and message); by
      default it is told only that the tool failed, and the detail stays in the result's ``exception``.
      agentnb's own errors (unknown tool, invalid arguments, invocation limits) always reach the model,
      since they tell it how to correct its call and reveal nothing of the tool's internals.
    """

    enabled: bool
    max_iterations: int
    max_function_calls: int | None
    max_consecutive_errors_per_request: int
    terminate_on_unknown_calls: bool
    additional_tools: Sequence[FunctionTool]
    include_detailed_errors: bool


def normalize_function_invocation_configuration(
    config: FunctionInvocationConfiguration | Mapping[str, Any] | None = None,
) -> FunctionInvocationConfiguration:
    """Every knob with its default, overridden by ``config``; raises ``ValueError`` for an impossible value.

    Example:
        >>> normalize_function_invocation_configuration({"max_iterations": 5})["max_iterations"]
        5
    """
    normalized = FunctionInvocationConfiguration(
        enabled=True,
        max_iterations=DEFAULT_MAX_ITERATIONS,
        max_function_calls=None,
        max_consecutive_errors_per_request=DEFAULT_MAX_CONSECUTIVE_ERRORS_PER_REQUEST,
        terminate_on_unknown_calls=False,
        additional_tools=[],
        include_detailed_errors=False,
    )
    if config:
        unknown = sorted(set(config) - set(normalized))
        if unknown:
            raise ValueError(f"Unknown function invocation setting(s) {unknown}; known: {sorted(normalized)}.")
        normalized.update(cast("FunctionInvocationConfiguration", dict(config)))  # keys checked above
    iterations = normalized.get("max_iterations", DEFAULT_MAX_ITERATIONS)
    if iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {iterations}")
    limit = normalized.get("max_function_calls")
    if limit is not None and limit < 1:
        raise ValueError(f"max_function_calls must be at least 1 or None, got {limit}")
    errors = normalized.get("max_consecutive_errors_per_request", DEFAULT_MAX_CONSECUTIVE_ERRORS_PER_REQUEST)
    if errors < 0:
        raise ValueError(f"max_consecutive_errors_per_request must be 0 or more, got {errors}")
    return normalized


@runtime_checkable
class SupportsChatGetResponse(Protocol):
    """Anything that answers chat messages the way :class:`BaseChatClient` does."""

    def get_response(
        self, messages: MessagesLike, *, stream: bool = False, options: dict[str, Any] | None = None, **kwargs: Any
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        """Answer ``messages``."""
        ...


OptionsT = TypeVar("OptionsT", bound=Mapping[str, Any], default=ChatOptions)


class BaseChatClient(ABC, Generic[OptionsT]):
    """Base class of every chat client: subclasses implement the two ``_inner_*`` methods.

    Generic in its options dict (``OpenAIChatClient[MyOptions](...)``) for type checkers, as in the reference;
    ``async with client:`` releases what the client holds (HTTP connections) on leaving.

    Args:
        model_id: The model this client asks by default.
        middleware: Chat and function middleware applied to every request of this client.
        function_invocation_configuration: The tool loop's knobs (see :class:`FunctionInvocationConfiguration`);
            kept, completed with the defaults, as the mutable dict ``client.function_invocation_configuration``.
        max_iterations: agentnb's shorthand for ``function_invocation_configuration["max_iterations"]``
            (also readable and settable as ``client.max_iterations``).
        compaction_strategy: Compacts what each model call is sent (see :mod:`agentnb.compaction`); an
            agent's or a run's own strategy takes its place.
        tokenizer: Counts tokens for compaction and its reports.

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
    # Whether the service keeps the conversation when a request leaves ``store`` unset (an agent then keeps
    # no local history of its own); providers whose API stores by default set it.
    STORES_BY_DEFAULT: ClassVar[bool] = False

    def __init__(
        self,
        *,
        model_id: str | None = None,
        middleware: Sequence[Any] | None = None,
        function_invocation_configuration: FunctionInvocationConfiguration | None = None,
        max_iterations: int | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        self.compaction_strategy = compaction_strategy
        self.tokenizer = tokenizer
        config = dict(function_invocation_configuration or {})
        if max_iterations is not None:
            config["max_iterations"] = max_iterations
        self.function_invocation_configuration: FunctionInvocationConfiguration = (
            normalize_function_invocation_configuration(config)
        )
        self.model_id = model_id
        self.middleware: list[Any] = list(middleware or [])
        self.additional_properties: dict[str, Any] = additional_properties or {}

    @property
    def chat_middleware(self) -> list[ChatMiddleware]:
        """The chat middleware among ``middleware``; assigning replaces them and keeps the other kinds."""
        return split_middleware(self.middleware)[1]

    @chat_middleware.setter
    def chat_middleware(self, value: Sequence[Any]) -> None:
        agent, _, function = split_middleware(self.middleware)
        self.middleware = [*agent, *value, *function]

    @property
    def function_middleware(self) -> list[FunctionMiddleware]:
        """The function middleware among ``middleware``; assigning replaces them and keeps the other kinds."""
        return split_middleware(self.middleware)[2]

    @function_middleware.setter
    def function_middleware(self, value: Sequence[Any]) -> None:
        agent, chat, _ = split_middleware(self.middleware)
        self.middleware = [*agent, *chat, *value]

    @property
    def max_iterations(self) -> int:
        """``function_invocation_configuration["max_iterations"]``: model calls in one request that may call tools."""
        return self.function_invocation_configuration.get("max_iterations", DEFAULT_MAX_ITERATIONS)

    @max_iterations.setter
    def max_iterations(self, value: int) -> None:
        if value < 1:
            raise ValueError(f"max_iterations must be at least 1, got {value}")
        self.function_invocation_configuration["max_iterations"] = value

    async def close(self) -> None:
        """Release what the client holds (nothing by default; providers close their HTTP clients)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

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

    @traced_model_call
    async def _model_call(self, context: ChatContext) -> None:
        """One model call, the innermost step of chat middleware: the reply (or its stream) in ``context.result``.

        The seam the telemetry layer wraps (see :mod:`agentnb._telemetry_layers`); providers implement the
        ``_inner_*`` methods instead.
        """
        if _takes_stream(type(self)):
            # The reference's single-method form: one ``_inner_get_response(*, messages, stream, options)``.
            inner = cast("Callable[..., object]", self._inner_get_response)  # the subclass's own signature
            result = inner(messages=context.messages, stream=context.stream, options=context.options, **context.kwargs)
            context.result = _as_stream(result) if context.stream else await _as_response(result)
        elif context.stream:
            context.result = ResponseStream(
                self._inner_get_streaming_response(
                    messages=context.messages, options=context.options, **context.kwargs
                ),
                ChatResponse.from_updates,
            )
        else:
            context.result = await self._inner_get_response(
                messages=context.messages, options=context.options, **context.kwargs
            )

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
        client_kwargs: dict[str, Any] | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
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
        client_kwargs: dict[str, Any] | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
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
        client_kwargs: dict[str, Any] | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
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
            client_kwargs: Keywords for the provider call itself (``_inner_get_response``), not the tools;
                a ``"middleware"`` entry is taken as more middleware for this request.
            compaction_strategy: Compact what each model call of this request is sent (instead of the
                client's own ``compaction_strategy``).
            tokenizer: Count tokens with this (instead of the client's ``tokenizer``).
        """
        options = dict(options or {})
        if "additional_function_arguments" in options:  # the reference's option: tool kwargs, never sent
            arguments: Mapping[str, Any] = options.pop("additional_function_arguments") or {}
            function_invocation_kwargs = {**(function_invocation_kwargs or {}), **arguments}
        if client_kwargs:
            kwargs = {**kwargs, **client_kwargs}
            run_middleware = kwargs.pop("middleware", None)  # the reference's run-level middleware travels here
            if "session" in kwargs:  # and so does the agent session
                given = kwargs.pop("session")
                session = session if session is not None else given
            if run_middleware:
                listed = run_middleware if is_list_or_tuple(run_middleware) else [run_middleware]
                middleware = [*(middleware or []), *listed]
        if tools is not None:
            extra = tools if is_list_or_tuple(tools) else [tools]
            options["tools"] = [*(options.get("tools") or []), *extra]
        chat_mw: list[ChatMiddleware] = []
        function_mw: list[FunctionMiddleware] = []
        if self.middleware or middleware:  # most requests have none
            _, chat_mw, function_mw = split_middleware([*self.middleware, *(middleware or [])], supported=_CLIENT_KINDS)
        strategy = compaction_strategy or self.compaction_strategy
        counter = tokenizer or self.tokenizer
        compaction: RequestCompactor | None = None
        if strategy is not None or counter is not None:
            compaction = REQUEST_COMPACTION.get()(strategy, counter)
        loop = _FunctionInvocationLoop(  # positional: a class called with keywords passes them through a dict
            self,
            self._model_call,
            normalize_messages(messages),
            options,
            chat_mw,
            function_mw,
            session,
            function_invocation_kwargs or {},
            kwargs,
            compaction,
        )
        if stream:
            updates = cast("AsyncIterator[ChatResponseUpdate]", loop.run(stream=True))  # splices are its own
            return ResponseStream(updates, loop.final_response)
        return loop.run_to_completion()

    def as_agent(
        self,
        *,
        name: str | None = None,
        instructions: str | None = None,
        tools: Any = None,
        **kwargs: Any,
    ) -> Agent:
        """An :class:`~agentnb.Agent` that talks through this client (``kwargs`` are ``Agent``'s)."""
        from ._agents import Agent

        accepted = inspect.signature(Agent.__init__).parameters
        unknown = [k for k in kwargs if k not in accepted]
        if unknown:  # named after this method, not the constructor it forwards to
            raise TypeError(f"as_agent() got an unexpected keyword argument {unknown[0]!r}")
        return Agent(self, instructions, name=name, tools=tools, **kwargs)

    def service_url(self) -> str | None:
        """Where requests go (``None`` for in-process models)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r})"


@functools.cache
def _takes_stream(cls: type[BaseChatClient[Any]]) -> bool:
    """Whether ``cls`` implements the single-method seam (its ``_inner_get_response`` names ``stream``).

    An override that only passes ``**kwargs`` on (a retry or logging wrapper calling ``super()``) says nothing
    about the form, so the nearest ``_inner_get_response`` up the class hierarchy that names its parameters
    decides.
    """
    for klass in cls.__mro__:
        method = klass.__dict__.get("_inner_get_response")
        if method is None:
            continue
        parameters = inspect.signature(method).parameters.values()
        if any(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self" for p in parameters):
            return any(p.name == "stream" for p in parameters)
    return False


def _as_stream(result: object) -> ResponseStream[ChatResponseUpdate, ChatResponse]:
    """The stream a single-method provider answered with, whatever form it took.

    The reference's providers return a ``ResponseStream``, an async iterable of updates, or an awaitable of
    either (or of a whole ``ChatResponse``, streamed as one piece).
    """
    if isinstance(result, ResponseStream):
        return cast("ResponseStream[ChatResponseUpdate, ChatResponse]", result)
    if isinstance(result, AsyncIterable):
        return ResponseStream(cast("AsyncIterable[ChatResponseUpdate]", result), ChatResponse.from_updates)
    if inspect.isawaitable(result):
        resolved = _resolved_stream(cast("Awaitable[object]", result))
        return ResponseStream[ChatResponseUpdate, ChatResponse].from_awaitable(resolved)
    raise TypeError(
        f"_inner_get_response(stream=True) returned {type(result).__name__}; return a ResponseStream, an async "
        "iterable of ChatResponseUpdate, or an awaitable of one."
    )


async def _resolved_stream(awaitable: Awaitable[object]) -> ResponseStream[ChatResponseUpdate, ChatResponse]:
    value = await awaitable
    if isinstance(value, ChatResponse):
        whole = cast("ChatResponse", value)

        def finalize(_updates: list[ChatResponseUpdate]) -> ChatResponse:
            return whole

        return ResponseStream(_iterate(whole.to_updates()), finalize)
    return _as_stream(value)


async def _iterate(updates: list[ChatResponseUpdate]) -> AsyncIterator[ChatResponseUpdate]:
    for update in updates:
        yield update


async def _as_response(result: object) -> ChatResponse:
    """The response a single-method provider answered with when not streaming."""
    value = await result if inspect.isawaitable(result) else result
    if isinstance(value, ResponseStream):
        return await cast("ResponseStream[ChatResponseUpdate, ChatResponse]", value).get_final_response()
    if not isinstance(value, ChatResponse):
        raise TypeError(
            f"_inner_get_response(stream=False) returned {type(value).__name__}; return a ChatResponse or an "
            "awaitable of one."
        )
    return cast("ChatResponse", value)


def _kept(content: Content, types: tuple[str, ...]) -> bool:
    """Whether a content of the model's output stays when ``types`` are dropped from it.

    A call kept only for the transcript (``informational_only``) is a record, not a request; a hosted tool's
    approval request is the provider's to settle (see ``is_hosted_approval``).
    """
    if content.type not in types or content.informational_only:
        return True
    return content.type == "function_approval_request" and is_hosted_approval(content)


def _drop_update_contents(update: ChatResponseUpdate, types: tuple[str, ...]) -> None:
    """Remove contents of the given types from a streamed update (called per chunk: a loop, no generator)."""
    for content in update.contents:
        if not _kept(content, types):
            update.contents = [c for c in update.contents if _kept(c, types)]
            return


def _dropping(types: tuple[str, ...]) -> Callable[[ChatResponseUpdate], ChatResponseUpdate]:
    """A per-chunk filter: a model's streamed update without contents of ``types`` (see ``_drop_contents``)."""

    def without(update: ChatResponseUpdate) -> ChatResponseUpdate:
        for content in update.contents:  # _drop_update_contents's test, inline: most updates hold none
            if content.type in types:
                _drop_update_contents(update, types)
                break
        return update

    return without


_OVER_BUDGET_DROPPED = (*CONTROL_TYPES, "function_call")
"""What is dropped from the model's output once tools were no longer offered: the calls it makes anyway too."""
_without_control = _dropping(CONTROL_TYPES)
_without_control_or_calls = _dropping(_OVER_BUDGET_DROPPED)


def _final_of(
    stream: ResponseStream[ChatResponseUpdate, ChatResponse],
) -> Callable[[list[ChatResponseUpdate]], Awaitable[ChatResponse]]:
    """A finalizer answering ``stream``'s own final response (for a layer that only checks its updates)."""

    async def final(_updates: list[ChatResponseUpdate]) -> ChatResponse:
        return await stream.get_final_response()

    return final


_KINDS_CACHED = frozenset((*CONTROL_TYPES, "function_call"))
"""The content types a message's cached tool kinds tell about (see ``tool_kinds``)."""


def _drop_contents(response: ChatResponse | ChatResponseUpdate, types: tuple[str, ...]) -> None:
    """Remove contents of the given types from a response or update (messages left empty go too).

    A call kept only for the transcript (``informational_only``) stays: it is a record, not a request.
    """
    if isinstance(response, ChatResponseUpdate):
        _drop_update_contents(response, types)
        return
    # The cached kinds of each message answer "does it hold any?" for the usual types without a generator.
    flags = HAS_CONTROL | (HAS_CALL if "function_call" in types else 0)
    known = _KINDS_CACHED.issuperset(types)
    for message in response.messages:
        if known and not tool_kinds(message) & flags:
            continue
        if not all(_kept(c, types) for c in message.contents):
            message.contents = [c for c in message.contents if _kept(c, types)]
    response.messages = [m for m in response.messages if m.contents]


def _input_required(call_id: str, error: UserInputRequiredError) -> Content | list[Content]:
    """What a tool that needs the person's input asks (its requests, tied to the call), or a result saying so."""
    asked = [c for c in error.contents if isinstance(c, Content)]
    for request in asked:
        request.call_id = call_id
        if not request.id:
            request.id = call_id
    if asked:
        return asked
    return Content.from_function_result(
        call_id,
        result="Tool requires user input but no request details were provided.",
        exception="UserInputRequiredError",
    )


def _is_required(tool_choice: object) -> bool:
    """Whether ``tool_choice`` forces a tool call (``"required"`` or ``{"mode": "required", ...}``)."""
    if isinstance(tool_choice, Mapping):
        return cast("Mapping[str, object]", tool_choice).get("mode") == "required"
    return tool_choice == "required"


#: What the model is told of a call the person rejected (the reference's words; a given reason follows).
_REJECTED_TEXT = "Error: Tool call invocation was rejected by user."

_VISIBLE_TYPES = frozenset({"text", "data", "uri", "error", "hosted_file", "hosted_vector_store"})


class _FunctionInvocationLoop:
    """One request: model -> tools -> model ..., streaming updates as they happen."""

    def __init__(
        self,
        client: BaseChatClient[Any],
        model_call: Callable[[ChatContext], Awaitable[None]],
        messages: list[Message],
        options: dict[str, Any],
        chat_middleware: list[ChatMiddleware],
        function_middleware: list[FunctionMiddleware],
        session: AgentSession | None,
        function_kwargs: dict[str, Any],
        kwargs: dict[str, Any],
        compaction: RequestCompactor | None = None,
    ) -> None:
        self.client = client
        self.model_call = model_call
        self.input = messages
        self.options: dict[str, Any] = options
        self.chat_middleware = chat_middleware
        self.function_middleware = function_middleware
        self.session = session
        self.function_kwargs = function_kwargs
        self.kwargs = kwargs
        self.new_messages: list[Message] = []
        self.usage: UsageDetails | None = None
        self.last: ChatResponse | None = None
        self.tools: list[FunctionTool] = []  # offered to the model
        self.hosted: list[Mapping[str, Any]] = []  # hosted tool declarations, sent to the provider as given
        self.runnable: list[FunctionTool] = self.tools  # what calls may run: the tools and additional_tools
        self.calls_made = 0
        self.compaction = compaction
        self.instructions: list[Message] = []  # the system messages made of options["instructions"]
        self._logged = False
        self.required_used = False  # whether a model call has been made (a required tool_choice is spent)

    async def run_to_completion(self) -> ChatResponse:
        async for _ in self.run(stream=False):
            pass
        return self.final_response()

    def final_response(self, _updates: Any = None) -> ChatResponse:
        last = self.last or ChatResponse()
        response_format = self.options.get("response_format")
        additional_properties = last.additional_properties
        if self.compaction is not None and self.compaction.reports:
            additional_properties = {**additional_properties, "compaction": self.compaction.report_dicts()}
            if self.session is not None and not self._logged:
                self.compaction.log_turn(self.session.state)
                self._logged = True
        # The structured value is parsed when read (as in the reference): a reply that does not match the schema
        # still gives its response, to the caller and to context providers, and raises from ``value``.
        return request_response(last, self.new_messages, self.usage, response_format, additional_properties)

    def _add(self, message: Message) -> ChatResponseUpdate:
        self.new_messages.append(message)
        return ChatResponseUpdate(contents=list(message.contents), role=message.role, message_id=message.message_id)

    async def run(self, *, stream: bool) -> AsyncIterator[ChatResponseUpdate | StreamSplice]:
        """The request's updates; streamed, a model call's stream comes as a :class:`StreamSplice` of it."""
        config = self.client.function_invocation_configuration
        local, self.hosted = split_hosted_tools(self.options.get("tools"))
        self.tools = self.runnable = await resolve_tools(local) if local else []
        conversation = list(self.input)
        if self.compaction is not None:
            # Exclusions and summaries belong to this request: mark copies, never the session's messages.
            conversation = self.compaction.start(conversation)
        instructions = self.options.get("instructions")
        if instructions:
            # One system message per instruction (a list of them is allowed, as in the reference).
            texts = [instructions] if isinstance(instructions, str) else [t for t in instructions if t]
            self.instructions = [Message("system", [text]) for text in texts]
            if self.compaction is None:
                conversation[0:0] = self.instructions
            # Else kept apart from the conversation (and put first in each call), so compaction never drops them.
        # Disabled: no loop, one model call with the tools offered; its calls go back to the caller unexecuted.
        enabled = config.get("enabled", True)
        if enabled:
            hidden = config.get("additional_tools")
            if hidden:
                extra = await resolve_tools(list(hidden))
                self.runnable = [*self.tools, *(t for t in extra if t not in self.tools)]
            # Most turns hold no approval answers: skip the settling (and its coroutine) unless it has work.
            batch = PendingBatch.find(conversation)
            if batch is not None or has_new_answers(conversation):
                updates, done = await self._settle_answers(conversation, batch)
                if stream:
                    for update in updates:
                        yield update
                if done:
                    return

        max_iterations = config.get("max_iterations", DEFAULT_MAX_ITERATIONS)
        max_calls = config.get("max_function_calls")
        max_errors = config.get("max_consecutive_errors_per_request", DEFAULT_MAX_CONSECUTIVE_ERRORS_PER_REQUEST)
        errors_in_a_row = 0
        tools_stopped = max_calls is not None and self.calls_made >= max_calls
        used = iterations_used(conversation)
        for _ in range(max(max_iterations - used, 0) + 1):
            over_budget = enabled and (tools_stopped or used >= max_iterations)
            result = await self._call_model(conversation, stream=stream, allow_tools=not over_budget)
            # Over budget, tools were not offered: calls the model makes anyway are dropped (see below).
            dropped = _OVER_BUDGET_DROPPED if over_budget else CONTROL_TYPES
            if isinstance(result, ResponseStream):
                updates = cast("ResponseStream[ChatResponseUpdate, ChatResponse]", result)
                checked = updates.map(
                    _without_control_or_calls if over_budget else _without_control, _final_of(updates)
                )
                try:
                    if stream:
                        # The stream consuming this loop pulls the model's updates itself (StreamSplice): no
                        # step of this generator per chunk. It resumes here when the model's stream has ended.
                        yield StreamSplice(checked)
                    else:
                        await checked.get_final_response()
                finally:
                    await updates.aclose()  # closes the provider's stream (and its HTTP connection) on cancel
                result = await checked.get_final_response()
            if not isinstance(result, ChatResponse):
                raise TypeError(
                    f"{type(self.client).__name__} returned {type(result).__name__}; _inner_get_response must "
                    "return a ChatResponse."
                )
            response: ChatResponse = result  # pyright: ignore[reportUnknownVariableType]  (checked above; no cast() call)
            self.last = response
            self.usage = add_usage_details(self.usage, response.usage_details)
            if "continuation_token" in self.options:
                # The token was spent on this call; a later call of this request (after tools) sends new input.
                self.options = {k: v for k, v in self.options.items() if k != "continuation_token"}
            # Approval requests come from this loop and answers from the person: a model's output (untrusted)
            # may carry neither. Over budget, tools were not offered: calls the model makes anyway must not
            # linger as a pending batch that a later turn would execute (or ask approval for).
            _drop_contents(response, dropped)
            conversation.extend(response.messages)
            self.new_messages.extend(response.messages)
            if not enabled or response.continuation_token is not None:
                return  # a background response still running: the caller polls or resumes with the token
            calls = [c for m in response.messages for c in calls_in(m)]
            if over_budget:
                if not any(
                    c.type in _VISIBLE_TYPES or c.type == "function_approval_request"  # kept: a hosted tool's
                    for m in response.messages
                    for c in m.contents
                ):
                    # The calls it made anyway were dropped: say why there is no answer.
                    fallback = self._add(Message("assistant", [LIMIT_REACHED_TEXT]))
                    if stream:
                        yield fallback
                return
            if not calls:
                return
            tools_by_name = {t.name: t for t in self.runnable}
            if any(c.name in tools_by_name and tools_by_name[c.name].func is None for c in calls):
                return  # declaration-only tools: the caller executes them
            asked = calls_needing_approval(calls, tools_by_name, has_session=self.session is not None)
            if asked:
                requests = [approval_request(c, tools_by_name.get(c.name or "")) for c in asked]
                holder = next(m for m in reversed(response.messages) if calls_in(m))
                holder.contents.extend(requests)
                if stream:
                    yield ChatResponseUpdate(contents=requests, role="assistant", message_id=holder.message_id)
                return
            if config.get("terminate_on_unknown_calls") and (
                unknown := [c.name for c in calls if c.name not in tools_by_name]
            ):
                raise UnknownToolError(
                    f'Error: Requested function "{unknown[0]}" not found: the model called {unknown!r}, which is '
                    f"not among the tools ({', '.join(sorted(tools_by_name)) or 'none'}), and "
                    "terminate_on_unknown_calls is set."
                )
            results = await self._execute(calls, tools_by_name=tools_by_name)
            conversation.append(results)
            if stream:
                yield self._add(results)
            else:
                self.new_messages.append(results)  # as _add, without the update nobody reads
            if results.additional_properties.get("terminate"):
                return
            if any(c.exception is not None for c in results.contents):
                errors_in_a_row += 1
                tools_stopped = tools_stopped or errors_in_a_row >= max_errors
            else:
                errors_in_a_row = 0
            tools_stopped = tools_stopped or (max_calls is not None and self.calls_made >= max_calls)
            used = iterations_used(conversation)

    async def _settle_answers(
        self, conversation: list[Message], batch: PendingBatch | None
    ) -> tuple[list[ChatResponseUpdate], bool]:
        """Take the approval answers in the input: run or deny the calls they decide, or ask for what is missing.

        ``batch`` is the conversation's pending batch (:meth:`PendingBatch.find`). Returns the updates for the
        messages this added to the conversation, and whether the request ends here (answers still missing, or
        a tool ended the run). Answers that do not count raise ``ApprovalError`` before anything runs.
        """
        standalone = batch is None and self.session is None
        check_answers(conversation, batch, standalone=standalone)
        if batch is not None:
            answers, waiting = batch.settle(conversation, {t.name: t for t in self.runnable})
            if waiting:
                return [self._add(Message("assistant", waiting))], True
            calls, updates = batch.calls, []
        elif standalone and (given := standalone_answers(conversation)):
            # The requests are not in the messages: each answer carries the call it decides (see _conversation).
            answers = list[Content | None](given)
            calls = [a.function_call for a in given if a.function_call is not None]
            asked = Message("assistant", calls)
            conversation.append(asked)
            updates = [self._add(asked)]
        else:
            return [], False
        results = await self._execute(calls, approvals=answers)
        conversation.append(results)
        updates.append(self._add(results))
        return updates, bool(results.additional_properties.get("terminate"))

    # -- model calls -------------------------------------------------------------------------------------
    async def _call_model(self, conversation: list[Message], *, stream: bool, allow_tools: bool) -> object:
        """One model call through the chat middleware: what the provider (or a middleware) left as the result.

        A stream when streaming; the caller iterates it itself, so each update passes one generator less.
        """
        options = dict(self.options)
        options.pop("instructions", None)
        if self.tools or self.hosted:
            # Over budget the tools stay declared with tool_choice "none", as in the reference: the model still
            # reads the earlier calls against their declarations (and providers that cache the prompt keep it).
            options["tools"] = [*self.tools, *self.hosted]
            if not allow_tools:
                options["tool_choice"] = "none"
            elif self.required_used and _is_required(options.get("tool_choice")):
                # "required" applies to the first model call; after a tool ran the model must be free to answer.
                options.pop("tool_choice", None)
        else:
            options.pop("tools", None)
            options.pop("tool_choice", None)
        if self.compaction is None:
            sent = for_model(conversation)
        else:
            sent = for_model(await self.compaction.prepare(conversation))
            if self.instructions:
                sent = [*self.instructions, *sent]
        context = chat_context(self.client, sent, options, stream, self.kwargs, self.session, self.function_kwargs)
        if self.instructions:
            context.metadata[INSTRUCTIONS_METADATA] = self.instructions  # the chat span records them apart
        if self.compaction is not None and self.compaction.reports:
            context.metadata["compaction"] = self.compaction.reports[-1]  # for the chat span and middleware
        self.required_used = True
        if self.chat_middleware:
            await run_pipeline(self.chat_middleware, context, self.model_call)
            return context.hooked_result(context.result) if stream else context.result
        # Most requests have none: no pipeline coroutine per model call.
        await self.model_call(context)
        return context.result

    # -- tool execution ----------------------------------------------------------------------------------
    async def _execute(
        self,
        calls: list[Content],
        *,
        approvals: Sequence[Content | None] | None = None,
        tools_by_name: dict[str, FunctionTool] | None = None,
    ) -> Message:
        """Run a batch of calls concurrently; results keep the calls' order.

        ``approvals[i]`` is the person's answer for ``calls[i]`` (``None``: no answer). ``tools_by_name`` is the
        runnable tools by name, when the caller has it already.
        """
        if tools_by_name is None:
            tools_by_name = {t.name: t for t in self.runnable}
        answers = list(approvals) if approvals is not None else [None] * len(calls)
        self.calls_made += len(calls)
        if len(calls) == 1:
            outcomes = [await self._invoke(calls[0], tools_by_name, answers[0])]
        else:
            outcomes = await asyncio.gather(
                *(self._invoke(c, tools_by_name, a) for c, a in zip(calls, answers, strict=True))
            )
        contents: list[Content] = []
        for content, _ in outcomes:
            if isinstance(content, list):  # a tool that needs the person's input: what it asks for
                contents.extend(content)
            else:
                contents.append(content)
        message = Message("tool", contents)
        if any(terminate for _, terminate in outcomes):
            message.additional_properties["terminate"] = True
        return message

    async def _invoke(
        self, call: Content, tools_by_name: dict[str, FunctionTool], answer: Content | None
    ) -> tuple[Content | list[Content], bool]:
        """Run one call: its result and whether the run ends after this batch.

        A tool that needs the person's input (``UserInputRequiredError``) gives what it asks for instead.
        """
        call_id = call.call_id or ""
        tool = tools_by_name.get(call.name or "")
        if tool is None:
            available = ", ".join(sorted(tools_by_name)) or "none"
            return Content.from_function_result(
                call_id, exception=f'Error: Requested function "{call.name}" not found. Available tools: {available}.'
            ), False
        # Deny unless the answer approves this very call (the check is repeated here as the last line of defence).
        approved = answer is not None and answer.approved is True and same_call(answer.function_call, call)
        if (approval_required(tool) or answer is not None) and not approved:
            reason = f" Reason: {answer.reason}" if answer is not None and answer.reason else ""
            return Content.from_function_result(
                call_id,
                result=f"{_REJECTED_TEXT}{reason}",
                additional_properties={"approval": "rejected"},
            ), False
        try:
            arguments = call_arguments(call)
        except ValueError as e:
            return self._arguments_failed(call_id, e), False
        context = function_context(tool, arguments, call_id, self.session, self.tools, dict(self.function_kwargs))

        async def invoke(ctx: FunctionInvocationContext) -> None:
            ctx.result = await ctx.function.invoke_raw(arguments=ctx.arguments, context=ctx)

        try:
            if self.function_middleware:
                await run_pipeline(self.function_middleware, context, invoke)
            else:  # most requests have none: no pipeline coroutine per tool call
                context.result = await tool.invoke_raw(arguments=arguments, context=context)
        except Exception as e:
            if isinstance(e, AgentnbError) and e.end_run:
                raise  # the tool asked for this failure to end the run (see AgentnbError.end_run)
            if isinstance(e, ToolArgumentsError):
                return self._arguments_failed(call_id, e), context.terminate
            if isinstance(e, UserInputRequiredError):
                asked = _input_required(call_id, e)
                return asked, isinstance(asked, list)  # the run stops to ask the person
            detail = f"Error: tool {tool.name!r} failed: {type(e).__name__}: {e}"
            if isinstance(e, ToolError) or self.client.function_invocation_configuration.get(
                "include_detailed_errors", False
            ):
                told = f"Error: tool {tool.name!r} failed. Exception: {type(e).__name__}: {e}"
                return Content.from_function_result(call_id, result=told, exception=detail), context.terminate
            # What the tool raised may hold its internals (paths, queries, secrets): the model is told only
            # that it failed (the result's text); the caller keeps the detail in ``exception``.
            return Content.from_function_result(
                call_id, result=f"Error: tool {tool.name!r} failed.", exception=detail
            ), context.terminate
        return Content.from_function_result(call_id, result=context.result), context.terminate

    def _arguments_failed(self, call_id: str, error: Exception) -> Content:
        """The result of a call whose arguments do not fit: the reference's words, then what to fix.

        What is wrong is agentnb's own text (argument names and what they should be, never the values), so the
        model can correct its call; with ``include_detailed_errors`` it is told as the reference tells it.
        """
        if self.client.function_invocation_configuration.get("include_detailed_errors", False):
            told = f"Error: Argument parsing failed. Exception: {error}"
        else:
            told = f"Error: Argument parsing failed. {error}"
        return Content.from_function_result(call_id, result=told, exception=str(error))
