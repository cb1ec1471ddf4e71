"""Agents: a chat client plus instructions, tools, middleware and context providers, run turn by turn.

One turn: agent middleware wraps the turn; context providers add history and context; the chat
client's function-invocation loop calls the model and tools; providers store the result. The streaming
and non-streaming paths share every step except how the client's answer is consumed.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, cast, overload, runtime_checkable

from typing_extensions import Self, TypeVar

from ._call_history import PerServiceCallHistory, service_stores_history
from ._extensions import AGENT_MCP_SERVER
from ._json import is_list_or_tuple
from ._layers import AgentMiddlewareLayer, AgentTelemetryLayer
from ._listeners import AgentListener, current_listener, listening
from ._middleware import (
    AgentContext,
    AgentMiddleware,
    FunctionInvocationContext,
    MiddlewareBundle,
    agent_context,
    run_pipeline,
    split_middleware,
)
from ._origin import attach_origin
from ._sessions import AgentSession, ContextProvider, HistoryProvider, InMemoryHistoryProvider, SessionContext
from ._telemetry_layers import traced_agent_turn
from ._tools import ApprovalMode, FunctionTool
from ._types import (
    AgentResponse,
    AgentResponseUpdate,
    ChatOptions,
    ChatResponse,
    Message,
    MessagesLike,
    ResponseStream,
    normalize_messages,
    relabel_chat_update,
)
from .exceptions import ServiceResponseError, UserInputRequiredError

if TYPE_CHECKING:
    from ._clients import BaseChatClient
    from ._compaction_protocols import CompactionStrategy, TokenizerProtocol

__all__ = ["Agent", "BaseAgent", "SupportsAgentRun"]

logger = logging.getLogger(__name__)


@runtime_checkable
class SupportsAgentRun(Protocol):
    """Anything that can be run like an agent (an Agent, a workflow as an agent, a remote agent)."""

    id: str
    name: str | None
    description: str | None

    def run(
        self, messages: MessagesLike = None, *, stream: bool = False, session: AgentSession | None = None, **kwargs: Any
    ) -> Awaitable[AgentResponse] | ResponseStream[AgentResponseUpdate, AgentResponse]:
        """Run one turn."""
        ...

    def create_session(self, *, session_id: str | None = None) -> AgentSession:
        """Start a new conversation."""
        ...


def _tool_name(name: str) -> str:
    """An agent's name as a tool name the providers accept: ``"Invoice & Billing"`` -> ``"Invoice_Billing"``."""
    cleaned = re.sub(r"_+", "_", re.sub(r"[^a-zA-Z0-9_]", "_", name)).strip("_")
    if cleaned[:1].isdigit():
        cleaned = f"_{cleaned}"
    return cleaned or "agent"


class BaseAgent(ABC):
    """What all agents share: identity, sessions, and being usable as a tool by another agent."""

    def __init__(
        self,
        *,
        id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        context_providers: Sequence[ContextProvider] | ContextProvider | None = None,
        middleware: Sequence[Any] | MiddlewareBundle | None = None,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        self._id = id
        self.name = name
        self.description = description
        if isinstance(context_providers, ContextProvider):
            context_providers = [context_providers]
        self.context_providers: list[ContextProvider] = list(context_providers or [])
        self.middleware = middleware or []
        self.additional_properties: dict[str, Any] = additional_properties or {}

    @property
    def middleware(self) -> list[Any]:
        """The agent's middleware; assigning a new list takes effect from the next run."""
        return self._middleware

    @middleware.setter
    def middleware(self, value: Sequence[Any] | MiddlewareBundle) -> None:
        self._middleware = [value] if isinstance(value, MiddlewareBundle) else list(value)
        # By kind: (agent middleware, chat and function middleware), sorted on the next run that needs it.
        self._sorted_middleware: tuple[tuple[AgentMiddleware, ...], tuple[Any, ...]] | None = (
            None if self._middleware else ((), ())
        )

    @property
    def id(self) -> str:
        """A unique id: the one given, else a UUID made on first use (agents built in bulk never pay for it)."""
        if not self._id:
            self._id = str(uuid.uuid4())
        return self._id

    @id.setter
    def id(self, value: str) -> None:
        self._id = value

    @property
    def display_name(self) -> str:
        """The name shown to people: the agent's name, else its id."""
        return self.name or self.id

    def create_session(self, *, session_id: str | None = None) -> AgentSession:
        """Start a new conversation with this agent."""
        return AgentSession(session_id=session_id)

    def get_session(self, service_session_id: str, *, session_id: str | None = None) -> AgentSession:
        """A session that continues a conversation the service keeps (its id, e.g. a response or thread id)."""
        return AgentSession(session_id=session_id, service_session_id=service_session_id)

    @abstractmethod
    def run(
        self,
        messages: MessagesLike = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse] | ResponseStream[AgentResponseUpdate, AgentResponse]:
        """Run one turn."""

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_name: str = "task",
        arg_description: str | None = None,
        approval_mode: ApprovalMode = "never_require",
        stream_callback: Callable[[AgentResponseUpdate], Awaitable[None] | None] | None = None,
        propagate_session: bool = False,
    ) -> FunctionTool:
        """Wrap this agent as a tool another agent can call with one text argument.

        Args:
            name: The tool's name; by default the agent's name made safe for providers.
            description: What the model reads about the tool; by default the agent's description.
            arg_name: The name of the text argument.
            arg_description: Its description (by default ``"Task for <tool name>"``).
            approval_mode: Whether each call waits for a person's approval.
            stream_callback: Called with each streamed update of the agent's run (sync or async).
            propagate_session: Run with a copy of the calling agent's session state and write the agent's
                changes back; its provider's conversation id (``service_session_id``) stays its own.

        Raises (when called):
            UserInputRequiredError: The agent asked for input (an approval or a consent) it cannot get here.
        """
        tool_name = name or _tool_name(self.name or "agent")
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {arg_name: {"type": "string", "description": arg_description or f"Task for {tool_name}"}},
            "required": [arg_name],
            "additionalProperties": False,
        }
        agent = self

        async def run_agent(ctx: FunctionInvocationContext | None = None, **kwargs: Any) -> str:
            # The calling run's tool kwargs reach the agent's own tools.
            forwarded = {"function_invocation_kwargs": dict(ctx.kwargs)} if ctx is not None and ctx.kwargs else {}
            parent = ctx.session if ctx is not None and propagate_session else None
            session = AgentSession(session_id=parent.session_id) if parent is not None else None
            if parent is not None and session is not None:
                session.state = dict(parent.state)
            try:
                # Streamed, as the reference runs it, so a stream callback sees the same run as the caller.
                stream = cast(
                    "ResponseStream[AgentResponseUpdate, AgentResponse]",
                    agent.run(str(kwargs.get(arg_name, "")), stream=True, session=session, **forwarded),
                )
                if stream_callback is not None:
                    async for update in stream:
                        outcome = stream_callback(update)
                        if inspect.isawaitable(outcome):
                            await outcome
                response = await stream.get_final_response()
            finally:
                if parent is not None and session is not None:
                    parent.state.update(session.state)
            consents = [c for m in response.messages for c in m.contents if c.type == "oauth_consent_request"]
            asked = [*response.user_input_requests, *consents]
            if asked:
                raise UserInputRequiredError(
                    f"Agent tool {tool_name!r} needs input it cannot ask for from inside another agent's call.",
                    contents=asked,
                )
            return response.text

        return FunctionTool(
            run_agent,
            name=tool_name,
            description=description or self.description or "",
            approval_mode=approval_mode,
            input_model=schema,
        )

    def as_mcp_server(
        self,
        *,
        server_name: str | None = None,
        version: str | None = None,
        instructions: str | None = None,
        expose: Literal["agent", "tools", "both"] = "agent",
        lifespan: Any = None,
        **kwargs: Any,
    ) -> Any:
        """This agent as an MCP server (the ``mcp`` SDK's low-level ``Server``): one tool that runs it.

        ``expose="tools"`` lists the agent's own function tools instead, ``"both"`` does both; tools that
        need approval are never exposed. Serve it with ``agentnb.mcp.serve_stdio`` (desktop assistants) or
        ``agentnb.mcp.MCPHTTPServer`` / ``mcp_http_app`` (streamable HTTP, loopback unless a token is set).
        """
        return AGENT_MCP_SERVER.get()(
            self,
            server_name=server_name,
            version=version,
            instructions=instructions,
            expose=expose,
            lifespan=lifespan,
            **kwargs,
        )


class _Turn:
    """The per-run state both run paths share: providers, prepared messages and options."""

    def __init__(
        self,
        agent: Agent[Any],
        context: AgentContext,
        tools: list[Any],
        chat_middleware: list[Any],
        providers: list[ContextProvider],
    ) -> None:
        self.agent = agent
        self.context = context
        self.tools = tools
        self.chat_middleware = chat_middleware
        self.providers = providers
        self.session_context: SessionContext | None = None
        self.compaction: dict[str, Any] = {}

    # Class-level defaults, so a plain turn pays nothing for them:
    # set when the agent saves history per model call (see agentnb._call_history);
    per_call: PerServiceCallHistory | None = None
    # what context providers added (SessionContext.extend_middleware).
    provider_middleware: Sequence[Any] = ()

    def _state(self, provider: ContextProvider) -> dict[str, Any]:
        session = self.context.session
        return session.state.setdefault(provider.source_id, {}) if session is not None else {}

    async def prepare(self) -> tuple[list[Message], dict[str, Any], list[Any]]:
        sc = self._session_context()
        session = self.context.session
        if self.agent.require_per_service_call_history_persistence:
            return await self._prepare_per_call(sc)
        for provider in self.providers:
            await provider.before_run(agent=self.agent, session=session, context=sc, state=self._state(provider))
        if sc.has_middleware:
            self._add_provider_middleware(sc)
        return self._request(sc)

    def _add_provider_middleware(self, sc: SessionContext) -> None:
        """The middleware providers added: inside the run's own (a repeated run of the turn replaces them)."""
        added = sc.get_middleware()
        earlier = self.provider_middleware
        self.chat_middleware = [*(m for m in self.chat_middleware if not any(m is e for e in earlier)), *added]
        self.provider_middleware = added

    async def _prepare_per_call(self, sc: SessionContext) -> tuple[list[Message], dict[str, Any], list[Any]]:
        """:meth:`prepare` when history is saved after each model call (the history providers save there)."""
        agent, session, options = self.agent, self.context.session, self.context.options
        history = [p for p in self.providers if isinstance(p, HistoryProvider)]
        stores = service_stores_history(agent.client, options)
        if session is not None and history:
            if not stores and (session.service_session_id or options.get("conversation_id")):
                raise ServiceResponseError(
                    "require_per_service_call_history_persistence cannot be used with an existing "
                    "service-managed conversation while the service is not storing history (store=False)."
                )
            if stores:
                for provider in history:
                    if provider.load_messages:
                        logger.warning(
                            "HistoryProvider '%s' has load_messages=True but the chat client stores history "
                            "server-side; skipping local history load and relying on the service-managed "
                            "conversation. Set store=False to load from the provider, or load_messages=False "
                            "to silence this warning.",
                            provider.source_id,
                        )
        for provider in self.providers:
            if stores and isinstance(provider, HistoryProvider):
                continue  # the service holds what the model reads
            await provider.before_run(agent=agent, session=session, context=sc, state=self._state(provider))
        if sc.has_middleware:
            self._add_provider_middleware(sc)
        if session is not None and history:
            earlier = self.per_call  # agent middleware may run the turn again: one saver per run of it
            self.per_call = PerServiceCallHistory(
                agent=agent, session=session, providers=history, context=sc, service_stores_history=stores
            )
            # Innermost, so each model call it sees is one the provider is really asked.
            self.chat_middleware = [*(m for m in self.chat_middleware if m is not earlier), self.per_call]
        return self._request(sc)

    def prepared(self) -> tuple[list[Message], dict[str, Any], list[Any]]:
        """:meth:`prepare` for a turn without context providers (nothing to await)."""
        return self._request(self._session_context())

    def _session_context(self) -> SessionContext:
        """A fresh session context for this run of the turn (agent middleware may run it more than once)."""
        ctx = self.context
        session = ctx.session
        sc = SessionContext(
            session_id=session.session_id if session else None,
            service_session_id=session.service_session_id if session else None,
            input_messages=ctx.messages,
            options=ctx.options,
        )
        self.session_context = sc
        return sc

    def _request(self, sc: SessionContext) -> tuple[list[Message], dict[str, Any], list[Any]]:
        """The messages, options and tools of the model request, once the providers have added theirs."""
        ctx = self.context
        session = ctx.session
        options = dict(ctx.options)
        instructions = [i for i in (self.agent.instructions, *sc.instructions, options.get("instructions")) if i]
        if instructions:
            options["instructions"] = "\n\n".join(instructions)
        if session is not None and session.service_session_id and "conversation_id" not in options:
            options["conversation_id"] = _conversation_handle(session.service_session_id)
        tools = [*self.agent.tools, *self.tools, *sc.tools]
        return sc.get_messages(include_input=True), options, tools

    def detached(self) -> _Turn:
        """This turn with a context of its own that holds no result, for a stream's finalizer to finish.

        The turn's context holds the streamed result, and that stream's finalizer finishes the turn: with the
        turn itself it would be a reference cycle holding the whole streamed run (every update), which only the
        cyclic garbage collector frees. The twin shares everything else (session, session context, providers).
        """
        twin = copy.copy(self)
        twin.context = copy.copy(self.context)
        twin.context.result = None
        return twin

    async def finish(self, chat: ChatResponse) -> AgentResponse:
        response = self._response(chat)
        sc = self._prepared_context()
        per_call = self.per_call
        if per_call is not None:
            await per_call.flush()  # the last model call's share; the history providers saved the rest already
            if not per_call.service_stores_history:
                response.response_id = None  # a model call's id is no handle to resume this history from
        gate = self.context.persistence_gate
        if gate is None:
            await self._after_run(sc)
        else:  # a guard judges the run's output first (see PersistenceGate)
            gate.hold(functools.partial(self._after_run, sc))
        self._continue_on(chat)
        return response

    async def _after_run(self, sc: SessionContext) -> None:
        """The context providers see the run's result (those the per-call saver covers saved already)."""
        agent, session, per_call = self.agent, self.context.session, self.per_call
        for provider in reversed(self.providers):
            if per_call is not None and isinstance(provider, HistoryProvider):
                continue
            await provider.after_run(agent=agent, session=session, context=sc, state=self._state(provider))

    def finished(self, chat: ChatResponse) -> AgentResponse:
        """:meth:`finish` for a turn without context providers (nothing to await)."""
        response = self._response(chat)
        self._continue_on(chat)
        return response

    def _response(self, chat: ChatResponse) -> AgentResponse:
        agent = self.agent
        response = AgentResponse.from_chat_response(chat, agent_id=agent.id, author_name=agent.name)
        self._prepared_context().response = response
        return response

    def _prepared_context(self) -> SessionContext:
        """The turn's session context (made by :meth:`prepared`, before any response)."""
        assert self.session_context is not None
        return self.session_context

    def _continue_on(self, chat: ChatResponse) -> None:
        """A service that keeps the conversation named it: the session continues it next turn."""
        session = self.context.session
        if session is not None and chat.conversation_id:
            session.service_session_id = chat.conversation_id


async def _no_updates() -> AsyncIterator[AgentResponseUpdate]:
    return
    yield


def _no_response(_updates: list[AgentResponseUpdate]) -> Any:
    """The final response of a streamed run a middleware ended without one (``None``, as ``await run()`` gives)."""
    return None


def _conversation_handle(service_session_id: object) -> str:
    """A session's service conversation id as a chat client takes it (a string, never a structured id)."""
    if isinstance(service_session_id, str):
        return service_session_id
    raise ServiceResponseError(
        "This agent expects a string service_session_id for provider conversation continuation; the session "
        f"holds {type(service_session_id).__name__} (a structured id belongs to the agent that made it, such as "
        "an A2A agent)."
    )


OptionsT = TypeVar("OptionsT", bound=Mapping[str, Any], default=ChatOptions)


class Agent(AgentMiddlewareLayer, AgentTelemetryLayer, BaseAgent, Generic[OptionsT]):
    """An LLM agent: a chat client with instructions, tools, middleware and context providers.

    ``async with Agent(...) as agent:`` enters the client and every tool that is an async context manager
    (MCP servers connect) and closes them on leaving, in reverse order.

    The constructor's docstring lists its arguments.

    Example:
        ```python
        from agentnb import Agent, tool
        from agentnb.local import ToolCallingChatClient

        @tool
        def get_weather(city: str) -> str:
            \"\"\"Return the weather for a city.\"\"\"
            return f"Sunny in {city}."

        agent = Agent(ToolCallingChatClient(), "You are helpful.", name="weather", tools=[get_weather])
        response = await agent.run("What's the weather in Paris?")
        ```
    """

    def __init__(
        self,
        client: BaseChatClient[Any],
        instructions: str | None = None,
        *,
        id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        tools: Any = None,
        default_options: dict[str, Any] | None = None,
        context_providers: Sequence[ContextProvider] | ContextProvider | None = None,
        middleware: Sequence[Any] | MiddlewareBundle | None = None,
        require_per_service_call_history_persistence: bool = False,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
        additional_properties: dict[str, Any] | None = None,
        otel_provider_name: str | None = None,
    ) -> None:
        """Make the agent.

        Args:
            client: The chat client to use for the agent. A provider such as ``OpenAIChatClient`` or an
                offline model.
            instructions: The system prompt.
            tools: Functions, ``FunctionTool``s, other agents (``agent.as_tool()``) or MCP tools.
            default_options: ``ChatOptions`` applied to every run (run ``options=`` override them).
            context_providers: Providers that add history or context to each run.
            middleware: List of middleware to intercept agent and function invocations. Agent, chat and
                function middleware, sorted by kind; they wrap run-level middleware.
            require_per_service_call_history_persistence: Save history after each model call rather than once
                per run, so what is stored matches what the model was sent (a tool result that a middleware
                ended the run on is not stored, as a service-side history would not have it).
            compaction_strategy: Compacts what each model call is sent (see :mod:`agentnb.compaction`); used
                instead of the client's own.
            tokenizer: Counts tokens for compaction (instead of the client's).
            otel_provider_name: The ``gen_ai.provider.name`` of this agent's ``invoke_agent`` spans and metrics
                (the client's ``OTEL_PROVIDER_NAME`` when unset); model-call spans keep the client's.
        """
        super().__init__(
            id=id,
            name=name,
            description=description,
            context_providers=context_providers,
            middleware=middleware,
            additional_properties=additional_properties,
        )
        self.client = client
        self.instructions = instructions
        self.tools: list[Any] = list(tools) if is_list_or_tuple(tools) else ([tools] if tools else [])
        self.default_options: dict[str, Any] = dict(default_options or {})
        model = getattr(client, "model", None)
        if isinstance(model, str) and "model" not in self.default_options:
            self.default_options["model"] = model  # a client naming its model by ``model`` (the reference's)
        # A client written for the reference may want to know the agent it serves (it keeps a name it has).
        update_name = getattr(client, "_update_agent_name_and_description", None)
        if callable(update_name):
            update_name(name, description)
        self.require_per_service_call_history_persistence = require_per_service_call_history_persistence
        self.compaction_strategy = compaction_strategy
        self.tokenizer = tokenizer
        self.otel_provider_name = otel_provider_name
        self._exit_stack: AsyncExitStack | None = None
        if self._sorted_middleware is None:
            self._sort_middleware()  # a middleware of unknown kind fails here, not on the first run

    def _sort_middleware(self) -> tuple[tuple[AgentMiddleware, ...], tuple[Any, ...]]:
        agent, chat, function = split_middleware(self.middleware)
        self._sorted_middleware = (tuple(agent), (*chat, *function))
        return self._sorted_middleware

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        try:
            for resource in (self.client, *self.tools):
                if isinstance(resource, AbstractAsyncContextManager):
                    await stack.enter_async_context(cast("AbstractAsyncContextManager[object]", resource))
        except BaseException:
            await stack.aclose()
            raise
        self._exit_stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._exit_stack = self._exit_stack, None
        if stack is not None:
            await stack.aclose()

    @property
    def model_id(self) -> str | None:
        """The model that answers, as the client reports it."""
        return self.default_options.get("model_id") or self.client.model_id

    def _options_set(self, options: dict[str, Any] | None) -> dict[str, Any]:
        """The run's options over the agent's, leaving out every ``None`` (unset, as in the reference)."""
        merged = {k: v for k, v in self.default_options.items() if v is not None}
        merged.update((k, v) for k, v in (options or {}).items() if v is not None)
        return merged

    def _providers_for(self, session: AgentSession | None, options: dict[str, Any]) -> list[ContextProvider]:
        """The run's context providers: with a session and no history that loads, the agent gains local history.

        Not when the service keeps the conversation (the session continues a service conversation, or
        ``store``/the client's ``STORES_BY_DEFAULT`` says it stores). As in the reference, the agent keeps the
        added ``InMemoryHistoryProvider`` (it holds nothing itself: the history lives in each session).
        """
        providers = self.context_providers
        if session is None or session.service_session_id:
            return providers
        for provider in providers:
            if isinstance(provider, HistoryProvider) and provider.load_messages:
                return providers
        if options.get("conversation_id") or service_stores_history(self.client, options):
            return providers
        providers.insert(0, InMemoryHistoryProvider())
        return providers

    @overload
    def run(
        self,
        messages: MessagesLike = None,
        *,
        stream: Literal[False] = False,
        session: AgentSession | None = None,
        middleware: Sequence[Any] | None = None,
        tools: Any = None,
        options: dict[str, Any] | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse]: ...

    @overload
    def run(
        self,
        messages: MessagesLike = None,
        *,
        stream: Literal[True],
        session: AgentSession | None = None,
        middleware: Sequence[Any] | None = None,
        tools: Any = None,
        options: dict[str, Any] | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse]: ...

    def run(
        self,
        messages: MessagesLike = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        middleware: Sequence[Any] | None = None,
        tools: Any = None,
        options: dict[str, Any] | None = None,
        compaction_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
        function_invocation_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse] | ResponseStream[AgentResponseUpdate, AgentResponse]:
        """Run the agent with the given messages and options.

        One turn: ``await agent.run(...)`` for the response, ``stream=True`` for a ``ResponseStream``.

        Args:
            messages: The new input: a string, Content, Message or a list of them.
            stream: Stream updates as they are produced.
            session: Continue this conversation (history is kept in it).
            middleware: Optional per-run agent, chat, and function middleware. It runs inside the agent's own.
            tools: Extra tools for this run.
            options: ``ChatOptions`` overriding the agent's ``default_options``.
            compaction_strategy: Compact this run's model calls with this (instead of the agent's or client's).
            tokenizer: Count tokens with this (instead of the agent's or client's).
            function_invocation_kwargs: Keyword arguments forwarded to tool invocation. This run's tools
                that accept ``**kwargs`` receive them.
        """
        run_agent_mw, run_chat_mw, run_function_mw = split_middleware(middleware)
        opts = {**self.default_options, **options} if options else {**self.default_options}
        if None in opts.values():  # a None is unset: the agent's value stays, and None is never sent
            opts = self._options_set(options)
        context = agent_context(
            self, normalize_messages(messages), session, opts, stream, kwargs, function_invocation_kwargs
        )
        run_tools = list(tools) if is_list_or_tuple(tools) else ([tools] if tools else [])
        own_agent_mw, own_client_mw = self._sorted_middleware or self._sort_middleware()
        chat_mw = [*own_client_mw, *run_chat_mw, *run_function_mw]
        turn = _Turn(self, context, run_tools, chat_mw, self._providers_for(session, context.options))
        turn.compaction = {
            "compaction_strategy": compaction_strategy or self.compaction_strategy,
            "tokenizer": tokenizer or self.tokenizer,
        }
        agent_mw: list[AgentMiddleware] = [*own_agent_mw, *run_agent_mw]
        listener = current_listener()
        if listener is not None:
            return self._listened(turn, agent_mw, listener, stream)
        if stream:
            return self._stream(turn, agent_mw)
        return self._run(turn, agent_mw)

    def _listened(
        self, turn: _Turn, agent_mw: list[AgentMiddleware], listener: AgentListener, stream: bool
    ) -> Awaitable[AgentResponse] | ResponseStream[AgentResponseUpdate, AgentResponse]:
        # A functional workflow is listening (see agentnb._listeners): it shows this turn's reply in its events.
        if stream:
            if listener.wants_updates:
                return self._stream(turn, agent_mw).with_transform_hook(listener.on_update)
            return self._stream(turn, agent_mw).with_result_hook(listener.on_response)

        async def observed() -> AgentResponse:
            with listening(None):  # turns nested in this one are part of its reply
                if not listener.wants_updates:
                    response = await self._run(turn, agent_mw)
                    listener.on_response(response)
                    return response
                updates = self._stream(turn, agent_mw)
                async for update in updates:
                    listener.on_update(update)
                return await updates.get_final_response()

        return observed()

    async def _run(self, turn: _Turn, agent_mw: list[AgentMiddleware]) -> AgentResponse:
        if agent_mw:
            await run_pipeline(agent_mw, turn.context, lambda ctx: self._run_core(turn))
        else:  # most agents have none: no pipeline coroutine per turn
            await self._run_core(turn)
        result: AgentResponse | ResponseStream[AgentResponseUpdate, AgentResponse] = turn.context.result
        if isinstance(result, ResponseStream):  # a middleware switched to streaming
            result = await result.get_final_response()
        attach_origin(result, self, turn.context.session, turn.context.messages)
        return result

    @traced_agent_turn
    async def _run_core(self, turn: _Turn) -> None:
        messages, options, tools = await turn.prepare() if turn.providers else turn.prepared()
        chat = await self.client.get_response(
            messages,
            options=options,
            tools=tools,
            middleware=turn.chat_middleware,
            session=turn.context.session,
            function_invocation_kwargs=turn.context.function_invocation_kwargs or None,
            **turn.compaction,
            **turn.context.kwargs,
        )
        turn.context.result = await turn.finish(chat) if turn.providers else turn.finished(chat)

    def _stream(
        self, turn: _Turn, agent_mw: list[AgentMiddleware]
    ) -> ResponseStream[AgentResponseUpdate, AgentResponse]:
        # The stream is handed out before the middleware runs (that is async): it opens on the first pull and
        # then passes the turn's stream through, so an update crosses no generator of its own here.
        async def opened() -> ResponseStream[AgentResponseUpdate, AgentResponse]:
            await run_pipeline(agent_mw, turn.context, lambda ctx: self._stream_core(turn))
            if turn.context.result is None:  # a middleware ended the run with nothing to send
                return ResponseStream(_no_updates(), _no_response)
            return turn.context.hooked_result(turn.context.result)

        def originated(final: AgentResponse) -> None:
            attach_origin(final, self, turn.context.session, turn.context.messages)

        stream = ResponseStream[AgentResponseUpdate, AgentResponse].from_awaitable(opened())
        return stream.with_result_hook(originated)

    @traced_agent_turn
    async def _stream_core(self, turn: _Turn) -> None:
        messages, options, tools = await turn.prepare() if turn.providers else turn.prepared()
        chat_stream = self.client.get_response(
            messages,
            stream=True,
            options=options,
            tools=tools,
            middleware=turn.chat_middleware,
            session=turn.context.session,
            function_invocation_kwargs=turn.context.function_invocation_kwargs or None,
            **turn.compaction,
            **turn.context.kwargs,
        )

        relabel = functools.partial(relabel_chat_update, self.id, self.name)  # one call per chunk
        ending = turn.detached()

        async def finish(_updates: list[AgentResponseUpdate]) -> AgentResponse:
            return await ending.finish(await chat_stream.get_final_response())

        turn.context.result = chat_stream.map(relabel, finish)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, client={self.client!r}, tools={len(self.tools)})"
