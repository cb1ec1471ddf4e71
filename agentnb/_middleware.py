"""Middleware: code that wraps an agent run, a model call, or a tool call.

Each middleware gets a context and ``call_next``; it may read or change the context before calling
``call_next()``, look at ``context.result`` after, replace the result, or not call ``call_next`` at all
to end that step with its own result. Agent-level middleware wraps run-level middleware, which wraps
the agent's work; the same order holds for chat and function middleware and for streaming runs.
In a streaming run ``context.result`` is a ``ResponseStream``: code after ``call_next()`` runs once the
stream is set up, before updates flow; wrap or replace the stream to act on its updates.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, cast, get_type_hints

from ._json import is_list_or_tuple
from .exceptions import MiddlewareError, MiddlewareTermination

if TYPE_CHECKING:
    from ._sessions import AgentSession, PersistenceGate
    from ._tools import FunctionTool
    from ._types import Message

__all__ = [
    "AgentContext",
    "AgentMiddleware",
    "AgentMiddlewareCallable",
    "AgentMiddlewareTypes",
    "ChatAndFunctionMiddlewareTypes",
    "ChatContext",
    "ChatMiddleware",
    "ChatMiddlewareCallable",
    "ChatMiddlewareTypes",
    "FunctionInvocationContext",
    "FunctionMiddleware",
    "FunctionMiddlewareCallable",
    "FunctionMiddlewareTypes",
    "MiddlewareBundle",
    "MiddlewareTermination",
    "MiddlewareType",
    "MiddlewareTypes",
    "agent_middleware",
    "chat_middleware",
    "function_middleware",
]

CallNext = Callable[[], Awaitable[None]]


class _StreamHooks:
    """Hooks middleware registers on a streamed result before it exists (the reference's ``stream_*_hooks``).

    Added to once ``call_next()`` has set up the stream, they are attached to ``context.result`` when the
    middleware chain unwinds; the lists are made on first use, so a context nobody hooks costs nothing.
    """

    _hooks: tuple[list[Any], list[Any], list[Any]] | None = None

    def _stream_hooks(self) -> tuple[list[Any], list[Any], list[Any]]:
        if self._hooks is None:
            self._hooks = ([], [], [])
        return self._hooks

    @property
    def stream_transform_hooks(self) -> list[Callable[[Any], Any]]:
        """Hooks that see (and may replace) each streamed update."""
        return self._stream_hooks()[0]

    @property
    def stream_result_hooks(self) -> list[Callable[[Any], Any]]:
        """Hooks that see (and may replace) the stream's final response."""
        return self._stream_hooks()[1]

    @property
    def stream_cleanup_hooks(self) -> list[Callable[[], Any]]:
        """Hooks run once when the stream ends, however it ends."""
        return self._stream_hooks()[2]

    def hooked_result(self, result: Any) -> Any:
        """``result`` with the registered stream hooks attached (as it is when none were, or not a stream)."""
        hooks = self._hooks
        if hooks is None or not hasattr(result, "with_transform_hook"):
            return result
        transforms, results, cleanups = hooks
        for transform in transforms:
            result = result.with_transform_hook(transform)
        for hook in results:
            result = result.with_result_hook(hook)
        for cleanup in cleanups:
            result = result.with_cleanup_hook(cleanup)
        return result


class AgentContext(_StreamHooks):
    """What agent middleware sees: the agent, the input messages, session, options and (after) the result.

    ``result`` is an ``AgentResponse`` for a normal run and a ``ResponseStream`` when ``stream`` is true.
    ``persistence_gate``, when a middleware sets one, holds the run's history writes until it is flushed.
    """

    persistence_gate: PersistenceGate | None = None

    def __init__(
        self,
        *,
        agent: Any,
        messages: list[Message],
        session: AgentSession | None = None,
        options: dict[str, Any] | None = None,
        stream: bool = False,
        kwargs: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.agent = agent
        # Values for the run's tools that accept ``**kwargs`` (``kwargs`` holds the rest of the run's keywords).
        self.function_invocation_kwargs: dict[str, Any] = function_invocation_kwargs or {}
        self.messages = messages
        self.session = session
        self.options: dict[str, Any] = options if options is not None else {}
        self.stream = stream
        self.kwargs: dict[str, Any] = kwargs or {}
        self.result: Any = None
        self.metadata: dict[str, Any] = metadata if metadata is not None else {}


def agent_context(
    agent: Any,
    messages: list[Message],
    session: AgentSession | None,
    options: dict[str, Any],
    stream: bool,
    kwargs: dict[str, Any],
    function_invocation_kwargs: dict[str, Any] | None,
) -> AgentContext:
    """``AgentContext(...)`` with these values, positional and without its keyword passing: one per agent run.

    Writes exactly the fields the constructor writes (a test compares them).
    """
    context: AgentContext = object.__new__(AgentContext)
    context.agent = agent
    context.function_invocation_kwargs = function_invocation_kwargs or {}
    context.messages = messages
    context.session = session
    context.options = options
    context.stream = stream
    context.kwargs = kwargs or {}
    context.result = None
    context.metadata = {}
    return context


class ChatContext(_StreamHooks):
    """What chat middleware sees for one model call: messages, options and (after) the response.

    ``result`` is a ``ChatResponse``, or a ``ResponseStream`` of updates when ``stream`` is true. ``session``
    is the agent session of the run (``None`` outside one), for middleware that keeps per-conversation state.
    """

    def __init__(
        self,
        *,
        client: Any,
        messages: list[Message],
        options: dict[str, Any],
        stream: bool = False,
        kwargs: dict[str, Any] | None = None,
        session: AgentSession | None = None,
        metadata: dict[str, Any] | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.session = session
        self.messages = messages
        self.options = options
        self.stream = stream
        self.kwargs: dict[str, Any] = kwargs or {}
        # The run's values for its tools (``function_invocation_kwargs``): seen here, never sent to the provider.
        self.function_invocation_kwargs: dict[str, Any] = function_invocation_kwargs or {}
        self.result: Any = None
        self.metadata: dict[str, Any] = metadata if metadata is not None else {}


def chat_context(
    client: Any,
    messages: list[Message],
    options: dict[str, Any],
    stream: bool,
    kwargs: dict[str, Any],
    session: AgentSession | None,
    function_invocation_kwargs: dict[str, Any],
) -> ChatContext:
    """``ChatContext(...)`` with these values, positional and without its keyword passing: one per model call.

    Writes exactly the fields the constructor writes (a test compares them).
    """
    context: ChatContext = object.__new__(ChatContext)
    context.client = client
    context.session = session
    context.messages = messages
    context.options = options
    context.stream = stream
    context.kwargs = kwargs or {}
    context.function_invocation_kwargs = function_invocation_kwargs or {}
    context.result = None
    context.metadata = {}
    return context


class FunctionInvocationContext:
    """What function middleware and tools see for one tool call.

    A tool may declare a parameter annotated ``FunctionInvocationContext`` to receive it (the parameter
    is hidden from the model's schema). ``tools`` is the run's live tool list; tools added or removed
    here are offered to the model from the next iteration on.
    """

    def __init__(
        self,
        *,
        function: FunctionTool,
        arguments: dict[str, Any],
        call_id: str | None = None,
        session: AgentSession | None = None,
        tools: list[FunctionTool] | None = None,
        kwargs: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.function = function
        self.arguments = arguments
        self.call_id = call_id
        self.session = session
        # None outside a run's loop (a context made by hand): there is no tool list to add to or remove from.
        self.tools: list[FunctionTool] | None = tools
        self.kwargs: dict[str, Any] = kwargs or {}
        self.result: Any = None
        self.exception: BaseException | None = None
        self.metadata: dict[str, Any] = metadata if metadata is not None else {}
        self.terminate = False

    def add_tools(self, *tools: FunctionTool | Callable[..., Any] | Sequence[Any]) -> None:
        """Offer more tools (``FunctionTool``s, functions, or lists of them) from the next iteration of this run.

        A tool already offered is skipped; another tool with the same name raises ``ValueError`` and then
        none of the batch is added.
        """
        from ._chat_options import normalize_tools  # the tools layer builds on this module

        live = self._live_tools()
        offered = {t.name: t for t in live}
        added: list[FunctionTool] = []
        for new in normalize_tools(list(tools)):
            known = offered.get(new.name)
            if known is new:
                continue
            if known is not None:
                raise ValueError(f"A different tool named {new.name!r} is already offered in this run.")
            offered[new.name] = new
            added.append(new)
        live.extend(added)

    def remove_tools(self, *tools: str | FunctionTool) -> None:
        """Stop offering these tools (by name or object) from the next iteration of this run."""
        live = self._live_tools()
        names = {t if isinstance(t, str) else t.name for t in tools}
        live[:] = [t for t in live if t.name not in names]

    def _live_tools(self) -> list[FunctionTool]:
        if self.tools is None:
            raise RuntimeError("This context has no live tool list: tools can be added or removed only in a run.")
        return self.tools


_ContextT = TypeVar("_ContextT")


class _Middleware(ABC, Generic[_ContextT]):
    @abstractmethod
    async def process(self, context: _ContextT, call_next: CallNext) -> None:
        """Do work around ``await call_next()``; set ``context.result`` to replace the outcome."""


def function_context(
    function: FunctionTool,
    arguments: dict[str, Any],
    call_id: str | None,
    session: AgentSession | None,
    tools: list[FunctionTool] | None,
    kwargs: dict[str, Any],
) -> FunctionInvocationContext:
    """``FunctionInvocationContext(...)`` with these values, positional and without its keyword passing: one per
    tool call. Writes exactly the fields the constructor writes (a test compares them)."""
    context: FunctionInvocationContext = object.__new__(FunctionInvocationContext)
    context.function = function
    context.arguments = arguments
    context.call_id = call_id
    context.session = session
    context.tools = tools
    context.kwargs = kwargs or {}
    context.result = None
    context.exception = None
    context.metadata = {}
    context.terminate = False
    return context


class AgentMiddleware(_Middleware[AgentContext]):
    """Wraps a whole agent run (all model and tool calls of one turn).

    Example:
        ```python
        from agentnb import AgentMiddleware

        class Logging(AgentMiddleware):
            async def process(self, context, call_next):
                print("in:", context.messages[-1].text)
                await call_next()
                print("out:", context.result.text if not context.stream else "(stream)")
        ```
    """


class ChatMiddleware(_Middleware[ChatContext]):
    """Wraps each model call of a run."""


class FunctionMiddleware(_Middleware[FunctionInvocationContext]):
    """Wraps each tool call of a run."""


class MiddlewareType(str, Enum):
    """The three places middleware runs: around the agent turn, each model call, or each tool call."""

    AGENT = "agent"
    FUNCTION = "function"
    CHAT = "chat"


class _FunctionMiddleware:
    """Adapts a plain ``async def f(context, call_next)`` to a middleware class."""

    def __init__(self, func: Callable[[Any, CallNext], Awaitable[None]]) -> None:
        self.func = func
        self.__name__ = getattr(func, "__name__", type(self).__name__)

    async def process(self, context: Any, call_next: CallNext) -> None:
        await self.func(context, call_next)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__})"


# Each keeps its kind where the reference's decorators mark a function (``_middleware_type``).
class _AgentFunctionMiddleware(_FunctionMiddleware, AgentMiddleware):
    _middleware_type = MiddlewareType.AGENT


class _ChatFunctionMiddleware(_FunctionMiddleware, ChatMiddleware):
    _middleware_type = MiddlewareType.CHAT


class _FunctionFunctionMiddleware(_FunctionMiddleware, FunctionMiddleware):
    _middleware_type = MiddlewareType.FUNCTION


# What the ``middleware=`` lists accept, named as in the reference: a middleware object, or a function
# taking ``(context, call_next)`` (classified by its context annotation, or wrapped by the decorators below).
AgentMiddlewareCallable: TypeAlias = Callable[[AgentContext, CallNext], Awaitable[None]]
ChatMiddlewareCallable: TypeAlias = Callable[[ChatContext, CallNext], Awaitable[None]]
FunctionMiddlewareCallable: TypeAlias = Callable[[FunctionInvocationContext, CallNext], Awaitable[None]]
AgentMiddlewareTypes: TypeAlias = AgentMiddleware | AgentMiddlewareCallable
ChatMiddlewareTypes: TypeAlias = ChatMiddleware | ChatMiddlewareCallable
FunctionMiddlewareTypes: TypeAlias = FunctionMiddleware | FunctionMiddlewareCallable
ChatAndFunctionMiddlewareTypes: TypeAlias = (
    ChatMiddleware | ChatMiddlewareCallable | FunctionMiddleware | FunctionMiddlewareCallable
)
MiddlewareTypes: TypeAlias = AgentMiddlewareTypes | ChatAndFunctionMiddlewareTypes


def agent_middleware(func: Callable[[AgentContext, CallNext], Awaitable[None]]) -> AgentMiddleware:
    """Make ``async def f(context, call_next)`` an agent middleware."""
    _kind_of(func, MiddlewareType.AGENT)
    return _AgentFunctionMiddleware(func)


def chat_middleware(func: Callable[[ChatContext, CallNext], Awaitable[None]]) -> ChatMiddleware:
    """Make ``async def f(context, call_next)`` a chat middleware."""
    _kind_of(func, MiddlewareType.CHAT)
    return _ChatFunctionMiddleware(func)


def function_middleware(
    func: Callable[[FunctionInvocationContext, CallNext], Awaitable[None]],
) -> FunctionMiddleware:
    """Make ``async def f(context, call_next)`` a function (tool call) middleware."""
    _kind_of(func, MiddlewareType.FUNCTION)
    return _FunctionFunctionMiddleware(func)


def _kind_of(item: Callable[..., Any], declared: MiddlewareType | None) -> MiddlewareType:
    """The kind of a middleware function (or callable object): from its decorator, its ``_middleware_type``
    or its first parameter's annotation, which must agree.

    Raises:
        MiddlewareError: It takes fewer than ``(context, call_next)``, or its kind is unclear or contradictory.
    """
    name = getattr(item, "__name__", None) or type(item).__name__
    target: Any = item if inspect.isroutine(item) else getattr(item, "__call__", item)  # noqa: B004
    params = list(inspect.signature(item).parameters.values())
    if len(params) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in params):
        raise MiddlewareError(
            f"Middleware function must have at least 2 parameters (context, call_next), but {name} has {len(params)}"
        )
    try:
        hints = get_type_hints(target)
    except Exception:
        hints = {}
    first = hints.get(params[0].name) if params else None
    annotated = _KIND_OF_CONTEXT.get(first) if isinstance(first, type) else None
    marked: object = getattr(item, "_middleware_type", None)
    declared = declared or (marked if isinstance(marked, MiddlewareType) else None)
    if declared is not None and annotated is not None and declared is not annotated:
        raise MiddlewareError(
            f"MiddlewareTypes type mismatch: decorator indicates {declared.value!r} but parameter type "
            f"indicates {annotated.value!r} for function {name}"
        )
    kind = declared or annotated
    if kind is None:
        raise MiddlewareError(
            f"Cannot determine middleware type for function {name}: subclass AgentMiddleware / ChatMiddleware / "
            "FunctionMiddleware, use @agent_middleware / @chat_middleware / @function_middleware, or annotate the "
            "first parameter with AgentContext, ChatContext or FunctionInvocationContext."
        )
    return kind


_KIND_OF_CONTEXT: dict[type, MiddlewareType] = {
    AgentContext: MiddlewareType.AGENT,
    ChatContext: MiddlewareType.CHAT,
    FunctionInvocationContext: MiddlewareType.FUNCTION,
}
_WRAPPERS: dict[MiddlewareType, Callable[[Any], Any]] = {
    MiddlewareType.AGENT: _AgentFunctionMiddleware,
    MiddlewareType.CHAT: _ChatFunctionMiddleware,
    MiddlewareType.FUNCTION: _FunctionFunctionMiddleware,
}


def _classify(item: Any) -> Any:
    if isinstance(item, (AgentMiddleware, ChatMiddleware, FunctionMiddleware)):
        return item
    if callable(item):
        return _WRAPPERS[_kind_of(cast("Callable[..., Any]", item), None)](item)
    raise MiddlewareError(
        f"Cannot tell what kind of middleware {item!r} is; subclass AgentMiddleware / ChatMiddleware / "
        "FunctionMiddleware, use @agent_middleware / @chat_middleware / @function_middleware, or annotate the "
        "first parameter with AgentContext, ChatContext or FunctionInvocationContext."
    )


class MiddlewareBundle:
    """Middleware that only works together (one feature over the agent turn, model calls and tool calls).

    Pass the bundle where middleware goes (``Agent(middleware=[bundle])``, ``agent.run(middleware=[bundle])``):
    its members are sorted by kind like any middleware, in their order, and are always installed all together.
    It is not a sequence, so it cannot be sliced apart; a place that cannot run one of its kinds (a chat
    client's ``middleware=`` runs no agent middleware) raises ``MiddlewareError`` instead of dropping a member.

    Args:
        middleware: The members: middleware objects, or functions whose kind can be told (see
            :func:`split_middleware`). A bundle inside a bundle is refused.

    Raises:
        MiddlewareError: A member is a bundle, or not middleware of a kind that can be told.
    """

    def __init__(self, middleware: Sequence[Any]) -> None:
        members: list[Any] = []
        for member in middleware:
            if isinstance(member, MiddlewareBundle):
                raise MiddlewareError(
                    "MiddlewareBundle members must be middleware objects; nesting a MiddlewareBundle inside "
                    "another bundle is not supported."
                )
            if not isinstance(member, (AgentMiddleware, ChatMiddleware, FunctionMiddleware)) and not callable(member):
                raise MiddlewareError(
                    "MiddlewareBundle members must be agent, function, or chat middleware; got "
                    f"{type(member).__name__}."
                )
            members.append(_classify(member))  # a function of unknown kind raises here
        self._members = tuple(members)

    @property
    def members(self) -> tuple[Any, ...]:
        """The members, in order (each a middleware object)."""
        return self._members

    def __repr__(self) -> str:
        return f"MiddlewareBundle({', '.join(type(m).__name__ for m in self._members)})"


def split_middleware(
    items: Sequence[Any] | Any | None,
    *,
    supported: tuple[MiddlewareType, ...] | None = None,
) -> tuple[list[AgentMiddleware], list[ChatMiddleware], list[FunctionMiddleware]]:
    """Sort a mixed middleware list into agent, chat and function middleware, keeping their order.

    A :class:`MiddlewareBundle` adds its members in place. With ``supported`` (the kinds the caller runs), a
    bundle member of another kind raises ``MiddlewareError``: a bundle is never installed in part.
    """
    agent: list[AgentMiddleware] = []
    chat: list[ChatMiddleware] = []
    function: list[FunctionMiddleware] = []
    if items is None:
        return agent, chat, function
    for item in items if is_list_or_tuple(items) else [items]:
        if isinstance(item, MiddlewareBundle):
            _split_bundle(item, supported, agent, chat, function)
            continue
        mw = _classify(item)
        if isinstance(mw, AgentMiddleware):
            agent.append(mw)
        elif isinstance(mw, ChatMiddleware):
            chat.append(mw)
        else:
            function.append(mw)
    return agent, chat, function


def _split_bundle(
    bundle: MiddlewareBundle,
    supported: tuple[MiddlewareType, ...] | None,
    agent: list[AgentMiddleware],
    chat: list[ChatMiddleware],
    function: list[FunctionMiddleware],
) -> None:
    for member in bundle.members:
        if isinstance(member, AgentMiddleware):
            kind, into = MiddlewareType.AGENT, cast("list[Any]", agent)
        elif isinstance(member, ChatMiddleware):
            kind, into = MiddlewareType.CHAT, cast("list[Any]", chat)
        else:
            kind, into = MiddlewareType.FUNCTION, cast("list[Any]", function)
        if supported is not None and kind not in supported:
            raise MiddlewareError(
                f"MiddlewareBundle member {type(member).__name__} is {kind.value} middleware, but this middleware "
                f"seam supports only {', '.join(k.value for k in supported)} middleware. A bundle is one "
                "indivisible feature and cannot be partially installed; pass the bundle to the agent instead "
                "(Agent(middleware=[...]) or agent.run(middleware=[...]))."
            )
        into.append(member)


async def run_pipeline(
    middleware: Sequence[_Middleware[Any]], context: Any, final: Callable[[Any], Awaitable[None]]
) -> None:
    """Run ``final(context)`` inside the middleware, outermost first.

    ``MiddlewareTermination`` raised by a middleware ends the chain; its ``result`` (if any) becomes the
    context's result. Raised around a tool call it also ends the tool loop (``terminate``), as in the
    reference: the model is not called again with that result.
    """
    if not middleware:
        await final(context)
        return

    async def call(index: int) -> None:
        if index == len(middleware):
            await final(context)
            return
        await middleware[index].process(context, lambda: call(index + 1))

    try:
        await call(0)
    except MiddlewareTermination as e:
        if e.result is not None:
            context.result = e.result
        if isinstance(context, FunctionInvocationContext):
            context.terminate = True
