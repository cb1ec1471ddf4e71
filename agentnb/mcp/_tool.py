"""MCPTool: a connection to one MCP server whose tools an agent can call like its own."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from agentnb._tools import ApprovalMode, FunctionTool
from agentnb._types import Content, Message
from agentnb.exceptions import AgentnbError, MCPConnectionError, MCPError, MCPTimeoutError, ToolExecutionError

from ._connection import Connection, WatchedTransport, connection_error, leaf_exception
from ._content import (
    contents_from_mcp,
    error_text,
    messages_from_prompt,
    resource_contents_to_content,
    tool_result_value,
)
from ._disclosure import ProgressiveDisclosure
from ._sampling import SamplingApprovalCallback, SamplingGate
from ._tasks import MCPTaskOptions, TaskLifecycle, task_support

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

logger = logging.getLogger("agentnb.mcp")

__all__ = ["ApprovalModeSetting", "MCPTool"]

ApprovalModeSetting = ApprovalMode | Collection[str] | Mapping[str, Any]
"""``"always_require"`` / ``"never_require"`` for every tool, a collection of tool names that need approval,
a mapping of tool name to mode, or ``{"always_require_approval": [...], "never_require_approval": [...]}``."""

_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME_LENGTH = 64
_T = TypeVar("_T")
_RESERVED_ARGUMENTS = frozenset({"_meta"})
# Extra seconds the caller waits beyond the SDK's own request timeout before giving up itself.
_TIMEOUT_SLACK = 2.0
# After a request times out, how long the server gets to answer a probe before it counts as hung.
_PING_TIMEOUT = 2.0


def _local_name(remote: str, prefix: str | None) -> str:
    """A function name every provider accepts: ``[A-Za-z0-9_-]{1,64}``, prefixed when asked."""
    name = _INVALID_NAME_CHARS.sub("_", remote)
    if prefix:
        name = f"{_INVALID_NAME_CHARS.sub('_', prefix)}_{name}"
    return name[:_MAX_NAME_LENGTH] or "tool"


class MCPTool:
    """Base class of the MCP tools: owns the session and exposes the server's tools as FunctionTools.

    Use a transport subclass (:class:`MCPStdioTool`, :class:`MCPStreamableHTTPTool`). The object connects on
    first use (``get_tools()``, a tool call, ``async with``), so it can go straight into
    ``Agent(tools=[...])``. Closing it (or leaving ``async with``) ends the session and any subprocess.

    Args:
        name: A label for this server; it names the server in errors, logs and approval metadata.
        allowed_tools: Remote tool names to expose (default: all).
        approval_mode: Which tools need a person's approval before each call (see ``ApprovalModeSetting``).
        tool_name_prefix: Prepended (with ``_``) to local tool names, to keep servers apart.
        additional_tool_argument_names: Argument names forwarded even when a tool's schema does not declare
            them: a list for every tool, or a mapping from remote tool name (``"*"`` for all) to names.
        request_timeout: Seconds to wait for any single request (tool call, listing) before
            :class:`~agentnb.exceptions.MCPTimeoutError`. A timed-out request is followed by a quick probe
            (a tool listing): a server that still answers keeps its session (the tool was slow); one that
            does not is hung, so it is stopped (a stdio server with its whole process group) and started
            afresh on next use.
        connect_timeout: Seconds to wait for the server to start and complete the handshake.
        max_result_bytes: The largest tool result accepted, in bytes of text and binary data; a bigger one
            is an :class:`~agentnb.exceptions.MCPError` instead of flooding the model's context.
        on_tool_error: ``"return"`` hands failures (server errors, crashes, timeouts) to the model as the tool
            result so the run continues; ``"raise"`` ends the run with the typed error.
        client: A chat client that answers the server's sampling requests once approved.
        sampling_approval_callback: Called with a :class:`SamplingRequest`; returns ``True`` to approve.
            Without it every sampling request is denied (and logged).
        sampling_max_requests: Sampling requests allowed per MCP session.
        sampling_max_tokens: Cap on ``max_tokens`` for each approved sampling request.
        description: A description of the server (informational).
        use_progressive_disclosure: Offer the model only three loader tools at first (``list_mcp_tools``,
            ``load_tool``, ``unload_tool``, prefixed like the server's tools) plus the ``always_load`` tools; the
            model lists the server's tools (names, descriptions, schemas) and loads the ones it needs, which
            it can call from its next iteration on. Keeps a large server's schemas out of every request.
        always_load: Tool names (remote or local) offered from the start under progressive disclosure.
        task_options: How tools the server runs as long-running tasks (``execution.taskSupport == "required"``)
            are driven: the call is submitted as a task, polled and its result fetched (see
            :class:`~agentnb.mcp.MCPTaskOptions`; default ``MCPTaskOptions()``). Assignable later.

    Example:
        ```python
        import sys
        from agentnb.mcp import MCPStdioTool

        async with MCPStdioTool("demo", sys.executable, args=["-m", "agentnb.mcp.demo_server"]) as demo:
            print(await demo.call_tool("add", {"a": 2, "b": 3}))  # 5
            print([p.name for p in await demo.list_prompts()])  # ['review']
            print((await demo.read_resource("demo://about"))[0].text)
        ```
    """

    def __init__(
        self,
        name: str,
        *,
        allowed_tools: Collection[str] | None = None,
        approval_mode: ApprovalModeSetting | None = None,
        tool_name_prefix: str | None = None,
        additional_tool_argument_names: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        request_timeout: float = 60.0,
        connect_timeout: float = 30.0,
        max_result_bytes: int = 4_000_000,
        on_tool_error: Literal["return", "raise"] = "return",
        client: Any = None,
        sampling_approval_callback: SamplingApprovalCallback | None = None,
        sampling_max_requests: int = 10,
        sampling_max_tokens: int = 1024,
        description: str | None = None,
        use_progressive_disclosure: bool = False,
        always_load: Collection[str] | None = None,
        task_options: MCPTaskOptions | None = None,
    ) -> None:
        if not name or not isinstance(cast(object, name), str):
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if request_timeout <= 0 or connect_timeout <= 0:
            raise ValueError(
                f"timeouts must be > 0, got request_timeout={request_timeout}, connect_timeout={connect_timeout}"
            )
        if max_result_bytes <= 0:
            raise ValueError(f"max_result_bytes must be > 0, got {max_result_bytes}")
        if on_tool_error not in ("return", "raise"):
            raise ValueError(f"on_tool_error must be 'return' or 'raise', got {on_tool_error!r}")
        if isinstance(allowed_tools, str):
            raise TypeError("allowed_tools must be a collection of tool names, not a single string")
        if isinstance(always_load, str):
            raise TypeError("always_load must be a collection of tool names, not a single string")
        self.name = name
        self.description = description or ""
        self.allowed_tools = frozenset(allowed_tools) if allowed_tools is not None else None
        self._approval_mode = approval_mode
        self._approval = _ApprovalPolicy(approval_mode)
        self.tool_name_prefix = tool_name_prefix
        self._extra_arguments = _ExtraArguments(additional_tool_argument_names)
        self.request_timeout = float(request_timeout)
        self.connect_timeout = float(connect_timeout)
        self.max_result_bytes = int(max_result_bytes)
        self.on_tool_error = on_tool_error
        self.sampling = SamplingGate(
            server=name,
            approval_callback=sampling_approval_callback,
            client=client,
            max_requests=sampling_max_requests,
            max_tokens=sampling_max_tokens,
        )
        self.task_options = task_options
        # Best-effort tasks/cancel requests still in flight; close() waits for them.
        self._task_cancels: set[asyncio.Task[None]] = set()
        self._connection: Connection | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._functions: list[FunctionTool] = []
        self._functions_key: tuple[Any, ...] | None = None
        self._remote_tools: dict[str, mcp_types.Tool] = {}
        self._listing_version = 0
        self._tools_stale = False
        self.connect_count = 0
        self.use_progressive_disclosure = use_progressive_disclosure
        self.always_load = frozenset(always_load or ())
        self._disclosure = (
            ProgressiveDisclosure(self, lambda base: _local_name(base, self.tool_name_prefix))
            if use_progressive_disclosure
            else None
        )

    @property
    def client(self) -> Any:
        """The chat client that answers the server's approved sampling requests (``None``: they are refused)."""
        return self.sampling.client

    @client.setter
    def client(self, value: Any) -> None:
        self.sampling.client = value

    async def sampling_callback(
        self, context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """Answer one ``sampling/createMessage`` request under the tool's sampling policy (the SDK calls this)."""
        return await self.sampling(context, params)

    async def message_handler(self, message: Any) -> None:
        """Handle a message the server sent outside a request: a tool-list change marks the tools for re-listing;
        an exception the session hands over is logged and dropped (the request that failed raises its own)."""
        if isinstance(message, Exception):
            logger.warning("MCP server %r: the session reported %s.", self.name, type(message).__name__)
            return
        await self._on_server_message(message)

    @property
    def task_options(self) -> MCPTaskOptions:
        """The options for tools the server runs as tasks; assigning applies from the next call."""
        return self._task_options

    @task_options.setter
    def task_options(self, value: MCPTaskOptions | None) -> None:
        if value is not None and not isinstance(cast(object, value), MCPTaskOptions):
            raise TypeError(f"task_options must be an MCPTaskOptions or None, got {type(value).__name__}")
        self._task_options = value if value is not None else MCPTaskOptions()

    @property
    def approval_mode(self) -> ApprovalModeSetting | None:
        """The approval setting; assigning a new one applies from the next ``get_tools()`` (the next run)."""
        return self._approval_mode

    @approval_mode.setter
    def approval_mode(self, value: ApprovalModeSetting | None) -> None:
        self._approval = _ApprovalPolicy(value)
        self._approval_mode = value
        self._functions_key = None

    # -- to be provided by transports ---------------------------------------------------------------------
    def _transport(self) -> AbstractAsyncContextManager[Any]:
        """The SDK transport to enter for one session (a fresh one each time)."""
        raise NotImplementedError

    def _failure_detail(self) -> str:
        """Extra text for connection errors (the stdio tool adds the server's last stderr lines)."""
        return ""

    # -- lifecycle ----------------------------------------------------------------------------------------
    @property
    def is_connected(self) -> bool:
        """Whether a session is up and the server has not hung up."""
        return self._connection is not None and self._connection.alive

    @property
    def functions(self) -> list[FunctionTool]:
        """The FunctionTools offered to the model (empty before the first ``get_tools()``).

        Under progressive disclosure: the loader tools, the ``always_load`` tools and the tools loaded so far.
        """
        if self._disclosure is not None:
            return self._disclosure.offered()
        return list(self._functions)

    @property
    def all_functions(self) -> list[FunctionTool]:
        """Every allowed tool of the server as a FunctionTool, offered or not (empty before ``get_tools()``)."""
        return list(self._functions)

    @property
    def output_schemas(self) -> dict[str, dict[str, Any]]:
        """The ``outputSchema`` each listed server tool declares, by its remote name (a copy; tools declaring none
        are left out; empty before ``get_tools()``): the shape of its structured result, which a FunctionTool's
        input schema cannot carry."""
        return {
            name: copy.deepcopy(dict(tool.output_schema))
            for name, tool in self._remote_tools.items()
            if tool.output_schema is not None
        }

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock = asyncio.Lock()
            self._lock_loop = loop
        return self._lock

    def _make_client(self, on_eof: Any) -> Client:
        from mcp import Client, Implementation

        return Client(
            WatchedTransport(self._transport(), on_eof),
            read_timeout_seconds=self.request_timeout,
            sampling_callback=self.sampling,
            client_info=Implementation(name="agentnb", version=_version()),
            message_handler=self.message_handler,
            # Tool listings must reflect the live server, e.g. after a restart.
            cache=None,
        )

    async def _on_server_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            # Re-list before the next use, so the model is offered what the server has now.
            self._tools_stale = True

    async def connect(self) -> None:
        """Start (or restart) the session and load the server's tools; a no-op when already connected.

        Raises:
            MCPConnectionError: The server could not be started or reached.
            MCPTimeoutError: The server did not complete the handshake within ``connect_timeout``.
            MCPError: The server's tools cannot be used (for example two map to the same local name).
        """
        async with self._get_lock():
            current = self._connection
            if current is not None and current.alive and current.loop is asyncio.get_running_loop():
                if self._tools_stale:
                    await self._load_tools(current)
                return
            if self._connection is not None:
                if self._connection.loop is asyncio.get_running_loop():
                    logger.info("MCP server %r: session lost; reconnecting.", self.name)
                await self._connection.close()
                self._connection = None
            connection = Connection(
                server_name=self.name,
                make_client=self._make_client,
                connect_timeout=self.connect_timeout,
                describe_failure=self._failure_detail,
            )
            self.sampling.new_session()
            # Load the SDK before the clock starts: connect_timeout is for the server, not for our imports.
            importlib.import_module("mcp.client.client")

            await connection.open()
            self._connection = connection
            self.connect_count += 1
            try:
                await self._load_tools(connection)
            except BaseException:
                await connection.close()
                self._connection = None
                raise

    async def close(self) -> None:
        """End the session; a stdio server process is stopped (stdin closed, then terminated if needed)."""
        if self._task_cancels:
            # Let the best-effort tasks/cancel requests reach the server first (each is time-bounded).
            await asyncio.gather(*self._task_cancels, return_exceptions=True)
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    async def __aenter__(self) -> MCPTool:
        try:
            await self.connect()
        except BaseException as exc:
            await self.close()
            if isinstance(exc, AgentnbError) or not isinstance(exc, Exception):
                raise
            raise ToolExecutionError(
                f"MCP server {self.name!r}: Failed to enter context manager: {type(exc).__name__}: {exc}"
            ) from exc
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def get_tools(self) -> list[FunctionTool]:
        """The server's tools as FunctionTools, connecting (or reconnecting) first if needed.

        Raises:
            MCPError: Two remote tools map to the same local name (the session stays up; fix ``allowed_tools``
                or ``tool_name_prefix`` and call again).
        """
        await self.connect()
        key = (self.allowed_tools, self.tool_name_prefix, self._listing_version)
        if key != self._functions_key:
            self._functions = self._build_functions()
            self._functions_key = key
        return self.functions

    # -- requests -----------------------------------------------------------------------------------------
    async def _request(self, what: str, send: Callable[[Client], Awaitable[_T]]) -> _T:
        """Run one request over a live session, translating SDK failures into typed, server-named errors."""
        import anyio
        from mcp.shared.exceptions import MCPError as SDKError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        await self.connect()
        connection = self._connection
        if connection is None:  # pragma: no cover - connect() either succeeds or raises
            raise MCPConnectionError(f"MCP server {self.name!r} is not connected.", server=self.name)
        try:
            with anyio.fail_after(self.request_timeout + _TIMEOUT_SLACK):
                return await send(connection.client)
        except SDKError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise await self._timed_out(connection, what) from exc
            if exc.code == CONNECTION_CLOSED or not connection.alive:
                await self._drop(connection)
                raise MCPConnectionError(
                    f"MCP server {self.name!r} closed the connection during {what}; it will be restarted on next "
                    f"use.{self._failure_detail()}",
                    server=self.name,
                ) from exc
            raise MCPError(f"MCP server {self.name!r} rejected {what}: {exc.message}", server=self.name) from exc
        except TimeoutError as exc:
            raise await self._timed_out(connection, what) from exc
        except MCPError:
            raise
        except Exception as exc:
            if _is_transport_failure(exc) or not connection.alive:
                await self._drop(connection)
                raise connection_error(self.name, exc, during=what, detail=self._failure_detail()) from exc
            # E.g. a result that breaks the tool's declared output schema, or a malformed message.
            raise MCPError(
                f"MCP server {self.name!r} failed {what}: {type(exc).__name__}: {exc}", server=self.name
            ) from exc

    async def _timed_out(self, connection: Connection, what: str) -> MCPTimeoutError:
        """The error for a timed-out request, after stopping the server if it no longer answers at all.

        A slow tool must not cost a healthy server its session, but a hung one must not make every later
        call wait out its own timeout: a quick second request tells the two apart.
        """
        import anyio

        message = f"MCP server {self.name!r} did not answer {what} within {self.request_timeout:g} s."
        try:
            with anyio.fail_after(_PING_TIMEOUT):
                # Listing tools is the lightest request every server answers (ping is legacy-only in MCP 2).
                await connection.client.list_tools()
        except Exception:  # no answer, or no session left: the server is hung or gone
            await self._drop(connection)
            message += " It no longer answers at all, so it was stopped; it restarts on next use."
        return MCPTimeoutError(message + self._failure_detail(), server=self.name)

    async def _drop(self, connection: Connection) -> None:
        """Close a session whose server went away, so no process or task outlives the error."""
        connection.mark_broken()
        if self._connection is connection:
            self._connection = None
        await connection.close()

    async def _load_tools(self, connection: Connection) -> None:
        """Fetch the server's full tool listing (all pages)."""
        self._tools_stale = False
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            page = await self._listing(connection, cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self._remote_tools = {t.name: t for t in tools}
        self._listing_version += 1

    def _build_functions(self) -> list[FunctionTool]:
        """FunctionTools for the listed tools that pass ``allowed_tools``, under their local names."""
        if self.allowed_tools is not None:
            unknown = sorted(self.allowed_tools - self._remote_tools.keys())
            if unknown:
                logger.warning(
                    "MCP server %r: allowed_tools names tools the server does not have: %s", self.name, unknown
                )
        functions: list[FunctionTool] = []
        owners: dict[str, str] = {}
        for remote in self._remote_tools.values():
            if self.allowed_tools is not None and remote.name not in self.allowed_tools:
                continue
            local = _local_name(remote.name, self.tool_name_prefix)
            if local in owners:
                raise MCPError(
                    f"MCP server {self.name!r}: tools {owners[local]!r} and {remote.name!r} both map to the local "
                    f"name {local!r}; exclude one with allowed_tools.",
                    server=self.name,
                )
            owners[local] = remote.name
            functions.append(self._function_for(remote, local))
        if self._disclosure is not None:
            self._disclosure.check_names(functions)
        return functions

    async def _listing(self, connection: Connection, cursor: str | None) -> Any:
        import anyio

        try:
            with anyio.fail_after(self.request_timeout + _TIMEOUT_SLACK):
                return await connection.client.list_tools(cursor=cursor)
        except TimeoutError as exc:
            raise MCPTimeoutError(
                f"MCP server {self.name!r} did not list its tools within {self.request_timeout:g} s.", server=self.name
            ) from exc
        except Exception as exc:
            raise connection_error(self.name, exc, during="listing tools", detail=self._failure_detail()) from exc

    def _function_for(self, remote: mcp_types.Tool, local: str) -> FunctionTool:
        schema = dict(remote.input_schema or {"type": "object", "properties": {}})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        declared = frozenset(schema.get("properties") or {})
        allowed = (declared | self._extra_arguments.for_tool(remote.name)) - _RESERVED_ARGUMENTS
        remote_name = remote.name

        async def call_remote_tool(**arguments: Any) -> Any:
            return await self.call_tool(remote_name, _filter_arguments(arguments, allowed))

        # A visible name for tracebacks and reprs; the schema comes from the server, not this signature.
        call_remote_tool.__name__ = local
        return FunctionTool(
            call_remote_tool,
            name=local,
            description=remote.description or remote.title or "",
            approval_mode=self._approval.mode_for(remote.name, local),
            input_model=schema,
            additional_properties={"server_label": self.name, "mcp_tool_name": remote.name},
        )

    async def call_tool(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call a remote tool by its remote name and return its result as the agent loop sees it.

        Text results return a string; results with images, audio or resources return a list of
        :class:`~agentnb.Content`. With ``on_tool_error="return"`` a failure raises an error whose text the
        model sees as the tool result; with ``"raise"`` connection and timeout errors end the run.

        A tool the server runs as a long-running task (``execution.taskSupport == "required"``) is submitted as
        a task, polled and its result fetched, as :attr:`task_options` says; the caller sees the same result.

        Raises:
            ToolExecutionError: The server reported ``isError``, or ended the tool's task as failed or cancelled
                (the model sees the server's message).
            MCPConnectionError: The server could not be reached or died during the call.
            MCPTimeoutError: No answer within ``request_timeout``, or a task outlived ``max_task_wait``.
        """
        args = {k: v for k, v in dict(arguments or {}).items() if k not in _RESERVED_ARGUMENTS}
        try:
            await self.connect()
            if task_support(self._remote_tools.get(tool_name)) == "required":
                result = await self._task_lifecycle().call(tool_name, args)
            else:
                result = await self._request(
                    f"the call to tool {tool_name!r}",
                    lambda client: client.call_tool(tool_name, args, read_timeout_seconds=self.request_timeout),
                )
        except MCPError as exc:
            if self.on_tool_error == "raise":
                exc.end_run = True  # end the agent run instead of reporting the failure to the model
            raise
        size = _result_size(result)
        if size > self.max_result_bytes:
            raise MCPError(
                f"Tool {tool_name!r} on MCP server {self.name!r} returned {size:,} bytes, more than "
                f"max_result_bytes={self.max_result_bytes:,}; ask for less, or raise max_result_bytes.",
                server=self.name,
            )
        contents = contents_from_mcp(result.content)
        if result.is_error:
            raise ToolExecutionError(f"Tool {tool_name!r} on MCP server {self.name!r} failed: {error_text(contents)}")
        return tool_result_value(contents, result.structured_content)

    def _task_lifecycle(self) -> TaskLifecycle:
        return TaskLifecycle(
            server=self.name,
            send=self._request,
            options=self.task_options,
            request_timeout=self.request_timeout,
            background=self._keep_task_cancel,
        )

    def _keep_task_cancel(self, cancel: asyncio.Task[None]) -> None:
        self._task_cancels.add(cancel)
        cancel.add_done_callback(self._task_cancels.discard)

    async def list_prompts(self) -> list[mcp_types.Prompt]:
        """The server's prompts (name, description, arguments)."""
        prompts: list[mcp_types.Prompt] = []
        cursor: str | None = None
        while True:
            page = await self._request("listing prompts", lambda client, c=cursor: client.list_prompts(cursor=c))
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if not cursor:
                return prompts

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> list[Message]:
        """Render one of the server's prompts as messages you can pass to ``agent.run``."""
        result = await self._request(
            f"getting prompt {name!r}",
            lambda client: client.get_prompt(name, dict(arguments) if arguments is not None else None),
        )
        return messages_from_prompt(result)

    async def list_resources(self) -> list[mcp_types.Resource]:
        """The server's resources (URI, name, media type)."""
        resources: list[mcp_types.Resource] = []
        cursor: str | None = None
        while True:
            page = await self._request("listing resources", lambda client, c=cursor: client.list_resources(cursor=c))
            resources.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                return resources

    async def read_resource(self, uri: str) -> list[Content]:
        """Read a resource: text parts become text contents, binary parts data contents (tagged with the URI)."""
        result = await self._request(f"reading resource {uri!r}", lambda client: client.read_resource(uri))
        return [resource_contents_to_content(item) for item in result.contents]

    def __repr__(self) -> str:
        state = "connected" if self.is_connected else "not connected"
        return f"{type(self).__name__}(name={self.name!r}, {state})"


def _filter_arguments(arguments: Mapping[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """Keep only the arguments the server declared (or the user allowed) and that can travel as JSON."""
    kept: dict[str, Any] = {}
    for key, value in arguments.items():
        if key not in allowed:
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            # A runtime-only object (a session, a client) that happens to share a declared name: never send it.
            logger.debug("Dropping non-JSON argument %r before an MCP call.", key)
            continue
        kept[key] = value
    return kept


class _ApprovalPolicy:
    """Turns the ``approval_mode`` setting into a mode per tool."""

    def __init__(self, setting: ApprovalModeSetting | None) -> None:
        self.default: ApprovalMode = "never_require"
        self.per_tool: dict[str, ApprovalMode] = {}
        if setting is None:
            return
        if isinstance(setting, str):
            if setting not in ("always_require", "never_require"):
                raise ValueError(f"approval_mode must be 'always_require' or 'never_require', got {setting!r}")
            self.default = setting  # type: ignore[assignment]
        elif isinstance(setting, Mapping):
            setting = cast("Mapping[str, Any]", setting)
            if set(setting) <= {"always_require_approval", "never_require_approval"}:
                for name in setting.get("always_require_approval", ()) or ():
                    self.per_tool[name] = "always_require"
                for name in setting.get("never_require_approval", ()) or ():
                    self.per_tool[name] = "never_require"
            else:
                for name, mode in setting.items():
                    if mode not in ("always_require", "never_require"):
                        raise ValueError(
                            f"approval_mode[{name!r}] must be 'always_require' or 'never_require', got {mode!r}"
                        )
                    self.per_tool[name] = mode
        else:
            self.per_tool = dict.fromkeys(setting, "always_require")

    def mode_for(self, remote: str, local: str) -> ApprovalMode:
        return self.per_tool.get(remote) or self.per_tool.get(local) or self.default


class _ExtraArguments:
    """The ``additional_tool_argument_names`` setting, resolved per tool."""

    def __init__(self, setting: Sequence[str] | Mapping[str, Sequence[str]] | None) -> None:
        if isinstance(setting, str):
            raise TypeError("additional_tool_argument_names must be a list of names or a mapping, not a string")
        if setting is None:
            self.common: frozenset[str] = frozenset()
            self.per_tool: dict[str, frozenset[str]] = {}
        elif isinstance(setting, Mapping):
            self.common = frozenset(setting.get("*", ()))
            self.per_tool = {k: frozenset(v) for k, v in setting.items() if k != "*"}
        else:
            self.common = frozenset(setting)
            self.per_tool = {}

    def for_tool(self, remote: str) -> frozenset[str]:
        return self.common | self.per_tool.get(remote, frozenset())


def _is_transport_failure(exc: BaseException) -> bool:
    import anyio

    try:
        import httpx2
    except ImportError:  # pragma: no cover
        httpx2 = None  # type: ignore[assignment]
    kinds: tuple[type[BaseException], ...] = (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
    if httpx2 is not None:
        kinds = (*kinds, httpx2.TransportError)
    return isinstance(leaf_exception(exc), kinds)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("agentnb")
    except Exception:
        return "0"


def _result_size(result: Any) -> int:
    """Bytes of text and data in a tool result (base64 data counted as sent), before it becomes contents."""
    import json

    size = 0  # the content blocks; structured content is an alternative form of the same result
    for block in result.content:
        for field in ("text", "data", "blob"):
            value = getattr(block, field, None)
            if isinstance(value, (str, bytes)):
                size += len(value)
        resource = getattr(block, "resource", None)
        for field in ("text", "blob"):
            value = getattr(resource, field, None)
            if isinstance(value, (str, bytes)):
                size += len(value)
    if result.structured_content is not None:
        size = max(size, len(json.dumps(result.structured_content, default=str)))
    return size
