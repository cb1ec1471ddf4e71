"""MCP long-running tasks: a tool the server runs as a task is submitted once, polled, then fetched.

The MCP 2025-11-25 revision lets a server mark a tool ``execution.taskSupport == "required"``: the client sends
``tools/call`` with a ``task`` field, the server answers at once with a task (``CreateTaskResult``), and the
client polls ``tasks/get`` until the task is terminal, then reads the tool's result with ``tasks/result``
(``tasks/cancel`` stops it). :class:`MCPTaskOptions` tunes that lifecycle per tool object; :class:`TaskLifecycle`
drives it over the tool's session.

The ``mcp`` SDK validates every ``tools/call`` response as a ``CallToolResult``, so it refuses the
``CreateTaskResult`` a task server answers with; :func:`mark_created_task` rewrites that one response as it
arrives (in the tool's own transport wrapper) into an empty ``CallToolResult`` that carries the task under
:data:`CREATED_TASK_META`. Only task-augmented calls get a ``CreateTaskResult``, and only this module sends them.

Policies (the reference's): the augmented call is never sent twice, since a server that accepted it before the
connection dropped would start the work again; once a task id exists, a lost connection is reconnected once
and the same request retried. A task that may still be running when the client gives up (``max_task_wait``,
local cancellation, a poll the server refuses, a second connection loss) gets a best-effort ``tasks/cancel``;
a task the server ended (failed, cancelled, completed with an error) does not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agentnb.exceptions import MCPConnectionError, MCPError, MCPTimeoutError, ToolExecutionError

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client
    from pydantic import BaseModel

logger = logging.getLogger("agentnb.mcp")

__all__ = ["CREATED_TASK_META", "MCPTaskOptions", "TaskLifecycle", "mark_created_task", "task_support"]

CREATED_TASK_META = "agentnb.mcp/created-task"
"""``_meta`` key under which :func:`mark_created_task` keeps the task of a ``CreateTaskResult``."""

_TERMINAL = frozenset({"completed", "failed", "cancelled", "input_required"})
# Polling bounds: a server's pollInterval is followed within these; none given means the default.
_MIN_POLL = 0.01
_MAX_POLL = 5.0
_DEFAULT_POLL = 0.5
# How long a best-effort tasks/cancel may take (including a reconnect) before it is given up.
_CANCEL_TIMEOUT = 5.0
# Sends per tasks/get or tasks/result: the first try and one retry after reconnecting.
_ATTEMPTS = 2
_T = TypeVar("_T")
_Model = TypeVar("_Model", bound="BaseModel")


@dataclass(frozen=True)
class MCPTaskOptions:
    """How an MCP tool drives the tools its server runs as long-running tasks (``taskSupport == "required"``).

    Frozen: to change a tool's options assign a new object (``tool.task_options = MCPTaskOptions(...)``).

    Args:
        default_ttl: How long the server keeps the task's record after it ends (sent as ``task.ttl`` in
            milliseconds), so its result can still be fetched; ``None`` leaves it to the server. It does not
            limit how long the task runs.
        cancel_remote_task_on_local_cancellation: Send ``tasks/cancel`` when the local call is cancelled (a
            cell interrupted, a run cancelled). Giving up for other reasons always cancels.
        max_task_wait: The longest the client waits for a submitted task, polls, reconnects and the result
            fetch included; past it the task is cancelled and the call fails with
            :class:`~agentnb.exceptions.MCPTimeoutError`. ``None``: no bound (each request still has the tool's
            ``request_timeout``).

    Raises:
        ValueError: A duration that is zero or negative.
    """

    default_ttl: timedelta | None = None
    cancel_remote_task_on_local_cancellation: bool = True
    max_task_wait: timedelta | None = None

    def __post_init__(self) -> None:
        for field in ("default_ttl", "max_task_wait"):
            value: timedelta | None = getattr(self, field)
            if value is not None and value.total_seconds() <= 0:
                raise ValueError(f"MCPTaskOptions.{field} must be positive, got {value}")

    @property
    def ttl_ms(self) -> int | None:
        """``default_ttl`` in whole milliseconds, as the protocol sends it."""
        return None if self.default_ttl is None else int(self.default_ttl.total_seconds() * 1000)


def task_support(tool: mcp_types.Tool | None) -> str | None:
    """The ``execution.taskSupport`` a listed tool declares (``None`` when it declares none)."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None)


def mark_created_task(message: Any) -> Any:
    """Rewrite a ``CreateTaskResult`` response into a ``CallToolResult`` the SDK accepts; pass others through.

    Called on every message the client receives. A ``CreateTaskResult`` is recognised by its ``task`` object
    with a ``taskId`` and no ``content``; its task moves to ``_meta[CREATED_TASK_META]``.
    """
    from mcp.shared.message import SessionMessage
    from mcp_types.jsonrpc import JSONRPCResponse

    if not isinstance(message, SessionMessage) or not isinstance(message.message, JSONRPCResponse):
        return message
    result = message.message.result
    task: object = result.get("task")
    if not isinstance(task, dict) or "content" in result:
        return message
    if not isinstance(cast("dict[str, Any]", task).get("taskId"), str):
        return message
    meta = dict(result.get("_meta") or {})
    meta[CREATED_TASK_META] = task
    response = JSONRPCResponse(jsonrpc="2.0", id=message.message.id, result={"content": [], "_meta": meta})
    return SessionMessage(response, metadata=message.metadata)


class _Abandoned(Exception):
    """The client gives up on a task that may still be running: cancel it, then raise ``error``."""

    def __init__(self, error: MCPError) -> None:
        super().__init__(str(error))
        self.error = error


_Send = Callable[[str, Callable[["Client"], Awaitable[Any]]], Awaitable[Any]]
"""The tool's request runner: ``send(what, request)`` runs one request with the tool's error translation."""


class TaskLifecycle:
    """Runs one tool call as an MCP task over a tool's session.

    Args:
        server: The tool's name, for error messages.
        send: The tool's request runner (connects first; raises agentnb's typed MCP errors).
        options: The tool's task options.
        request_timeout: The tool's per-request timeout, passed to each request.
        background: Called with each best-effort cancel task so the tool can wait for it on close.
    """

    def __init__(
        self,
        *,
        server: str,
        send: _Send,
        options: MCPTaskOptions,
        request_timeout: float,
        background: Callable[[asyncio.Task[None]], None],
    ) -> None:
        self.server = server
        self.send = send
        self.options = options
        self.request_timeout = request_timeout
        self.background = background

    async def call(self, tool_name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Submit the call as a task and return the tool's result once the task completes.

        A server that answers the augmented call with a plain result (it ignores the ``task`` field) gives that
        result; one that refuses the field (``METHOD_NOT_FOUND`` / ``INVALID_PARAMS``) gets a plain call.

        Raises:
            MCPConnectionError: The connection dropped before the server named the task (the call is not sent
                again: the server may have started it), or again after one reconnect.
            MCPTimeoutError: The task outlived ``max_task_wait`` (it was cancelled).
            ToolExecutionError: The server ended the task as failed, cancelled or needing input.
            MCPError: The server refused a request or answered one malformed.
        """
        created = await self._submit(tool_name, arguments)
        task: object = (created.meta or {}).get(CREATED_TASK_META)
        if not isinstance(task, dict):
            return created  # the server ran the tool without a task
        task_id = str(cast("dict[str, Any]", task)["taskId"])
        logger.debug("MCP server %r: tool %r runs as task %s.", self.server, tool_name, task_id)
        wait = self.options.max_task_wait
        try:
            if wait is None:
                return await self._track(tool_name, task_id)
            return await _within(self._track(tool_name, task_id), wait.total_seconds())
        except _Deadline:
            await self._cancel(task_id)
            raise MCPTimeoutError(
                f"MCP server {self.server!r}: task {task_id} of tool {tool_name!r} did not finish within "
                f"max_task_wait={wait}; it was cancelled.",
                server=self.server,
            ) from None
        except asyncio.CancelledError:
            if self.options.cancel_remote_task_on_local_cancellation:
                self._cancel_remote(task_id)
            raise
        except _Abandoned as abandoned:
            await self._cancel(task_id)
            raise abandoned.error from abandoned.error.__cause__

    async def _submit(self, tool_name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        import mcp_types
        from mcp.shared.exceptions import MCPError as SDKError

        request = mcp_types.CallToolRequest(
            params=mcp_types.CallToolRequestParams(
                name=tool_name, arguments=arguments, task=mcp_types.TaskMetadata(ttl=self.options.ttl_ms)
            )
        )
        what = f"the task-augmented call to tool {tool_name!r}"
        try:
            return await self.send(
                what,
                lambda client: client.session.send_request(
                    request, mcp_types.CallToolResult, request_read_timeout_seconds=self.request_timeout
                ),
            )
        except MCPConnectionError as exc:
            raise MCPConnectionError(
                f"{exc} The task's state is unknown, so the call was not sent again (the server may have started it).",
                server=self.server,
            ) from exc
        except MCPError as exc:
            cause = exc.__cause__
            if not isinstance(cause, SDKError) or cause.code not in (
                mcp_types.METHOD_NOT_FOUND,
                mcp_types.INVALID_PARAMS,
            ):
                raise
            # A server that does not know the task field: the plain call is what it can run.
            logger.debug("MCP server %r refused the task field (%s); calling %r plainly.", self.server, exc, tool_name)
            return await self.send(
                f"the call to tool {tool_name!r}",
                lambda client: client.call_tool(tool_name, arguments, read_timeout_seconds=self.request_timeout),
            )

    async def _track(self, tool_name: str, task_id: str) -> mcp_types.CallToolResult:
        """Poll until the task is terminal, then fetch its result (or raise the server's verdict)."""
        import mcp_types

        get = mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=task_id))
        while True:
            try:
                status = await self._send_tracked(f"polling task {task_id}", get, mcp_types.GetTaskResult)
            except MCPTimeoutError:
                # A slow poll is transient: ask again (max_task_wait bounds the whole wait).
                await asyncio.sleep(_DEFAULT_POLL)
                continue
            except MCPError as exc:
                raise _Abandoned(exc) from exc
            if status.status in _TERMINAL:
                break
            await asyncio.sleep(_poll_delay(status.poll_interval))
        if status.status != "completed":
            reason = status.status_message or {
                "input_required": "it needs input, which this client cannot give",
            }.get(status.status, "no reason given")
            raise ToolExecutionError(
                f"Tool {tool_name!r} on MCP server {self.server!r}: task {task_id} {status.status}: {reason}"
            )
        fetch = mcp_types.GetTaskPayloadRequest(params=mcp_types.GetTaskPayloadRequestParams(task_id=task_id))
        try:
            return await self._send_tracked(f"fetching the result of task {task_id}", fetch, mcp_types.CallToolResult)
        except _Abandoned as abandoned:
            # The task has ended; there is nothing left to cancel.
            raise abandoned.error from abandoned.error.__cause__

    async def _send_tracked(self, what: str, request: Any, result_type: type[_Model]) -> _Model:
        """Send a request about an existing task, reconnecting once if the connection drops."""
        for attempt in range(_ATTEMPTS):
            try:
                return await self.send(
                    what,
                    lambda client: client.session.send_request(
                        request, result_type, request_read_timeout_seconds=self.request_timeout
                    ),
                )
            except MCPConnectionError as exc:
                if attempt == _ATTEMPTS - 1:
                    raise _Abandoned(exc) from exc
                logger.info("MCP server %r: connection lost while %s; reconnecting once.", self.server, what)
        raise AssertionError("unreachable")  # pragma: no cover

    def _cancel_remote(self, task_id: str) -> None:
        """Send ``tasks/cancel`` in the background: the caller is being cancelled and cannot wait for it."""
        self.background(asyncio.get_running_loop().create_task(self._cancel(task_id)))

    async def _cancel(self, task_id: str) -> None:
        """Best-effort ``tasks/cancel`` (reconnecting if needed, time-bounded); a failure is only logged."""
        import mcp_types

        request = mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id))
        try:
            await asyncio.wait_for(
                self.send(
                    f"cancelling task {task_id}",
                    lambda client: client.session.send_request(
                        request, mcp_types.CancelTaskResult, request_read_timeout_seconds=_CANCEL_TIMEOUT
                    ),
                ),
                _CANCEL_TIMEOUT,
            )
        except Exception as exc:
            logger.warning("MCP server %r: could not cancel task %s: %s", self.server, task_id, exc)


class _Deadline(Exception):
    """``max_task_wait`` ran out (kept apart from timeouts raised inside the wait)."""


async def _within(awaitable: Awaitable[_T], seconds: float) -> _T:
    """Await with a deadline, raising :class:`_Deadline` only when the deadline itself fires."""
    inner = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({inner}, timeout=seconds)
    except BaseException:
        inner.cancel()
        await asyncio.gather(inner, return_exceptions=True)
        raise
    if inner in done:
        return inner.result()
    inner.cancel()
    await asyncio.gather(inner, return_exceptions=True)
    raise _Deadline


def _poll_delay(interval_ms: int | None) -> float:
    """Seconds to wait before the next poll: the server's ``pollInterval``, within sane bounds."""
    if interval_ms is None or interval_ms <= 0:
        return _DEFAULT_POLL
    return min(max(interval_ms / 1000, _MIN_POLL), _MAX_POLL)
