"""One live MCP client session, owned by a dedicated task.

The SDK's transports and ``mcp.Client`` are anyio context managers: each must be entered and exited in
the same task, inside properly nested cancel scopes. An agent, though, calls a tool from whatever task
happens to run the function-invocation loop (a notebook cell today, another cell tomorrow). So each
connection gets an owner task that enters the transport and the client, signals readiness, and waits to
be told to stop; every other task only sends requests over the already-running session, which the SDK
allows from any task on the same event loop.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, cast

import anyio

from agentnb.exceptions import MCPConnectionError, MCPError, MCPTimeoutError

from ._tasks import mark_created_task

if TYPE_CHECKING:
    from mcp import Client

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

logger = logging.getLogger("agentnb.mcp")

# Seconds a clean shutdown may take before the owner task is cancelled; the SDK's own stdio shutdown
# (close stdin, wait 2 s, SIGTERM, wait 2 s, SIGKILL) fits inside.
_CLOSE_GRACE = 8.0

__all__ = ["Connection", "WatchedTransport", "connection_error", "leaf_exception"]


class _WatchedReadStream:
    """Pass-through read stream that notices when the server side has gone away (and lets task results in)."""

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    @property
    def last_context(self) -> Any:
        # The dispatcher reads the sender's context from here to run handlers in it.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            # The SDK refuses a task server's CreateTaskResult; it arrives rewritten (see _tasks.py).
            return mark_created_task(await self._inner.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class WatchedTransport:
    """Wrap an SDK transport so the connection learns when the server hangs up.

    Args:
        inner: The SDK transport (``stdio_client(...)`` or ``streamable_http_client(...)``).
        on_eof: Called once the server's side of the stream ends (process exit, closed pipe).
    """

    def __init__(self, inner: AbstractAsyncContextManager[Any], on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    async def __aenter__(self) -> tuple[Any, Any]:
        read_stream, write_stream = await self._inner.__aenter__()
        return _WatchedReadStream(read_stream, self._on_eof), write_stream

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._inner.__aexit__(*exc_info)


class Connection:
    """An MCP ``Client`` entered and exited by its own owner task.

    Args:
        server_name: The tool's name, used in error messages.
        make_client: Builds a fresh, not yet entered ``mcp.Client`` (given the EOF callback for its transport).
        connect_timeout: Seconds to wait for the transport and the protocol handshake.
        describe_failure: Returns extra detail for errors (for example the tail of the server's stderr).
    """

    def __init__(
        self,
        *,
        server_name: str,
        make_client: Callable[[Callable[[], None]], Client],
        connect_timeout: float,
        describe_failure: Callable[[], str] = lambda: "",
    ) -> None:
        self.server_name = server_name
        self._make_client = make_client
        self._connect_timeout = connect_timeout
        self._describe_failure = describe_failure
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._stop: asyncio.Event | None = None
        self._eof = False
        self._broken = False
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def client(self) -> Client:
        """The connected SDK client; only valid while :attr:`alive` is true."""
        if self._client is None:
            raise MCPConnectionError(f"MCP server {self.server_name!r} is not connected.", server=self.server_name)
        return self._client

    @property
    def alive(self) -> bool:
        """Whether the session is up and its server has not hung up."""
        return (
            self._client is not None
            and not self._eof
            and not self._broken
            and self._task is not None
            and not self._task.done()
        )

    def mark_broken(self) -> None:
        """Remember that the transport failed, so the next use reconnects."""
        self._broken = True

    def _note_eof(self) -> None:
        self._eof = True

    async def open(self) -> None:
        """Start the owner task and wait until the session is initialized.

        Raises:
            MCPTimeoutError: The server did not finish the handshake within ``connect_timeout``.
            MCPConnectionError: The server could not be started or reached, or it hung up during startup.
        """
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Client] = loop.create_future()
        # After a timeout nobody awaits `ready`; retrieve its late exception so asyncio does not log it.
        ready.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        self._stop = asyncio.Event()
        self._eof = False
        self._broken = False
        self.loop = loop
        self._task = loop.create_task(self._own(ready), name=f"agentnb-mcp-{self.server_name}")
        try:
            self._client = await asyncio.wait_for(asyncio.shield(ready), self._connect_timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise MCPTimeoutError(
                f"MCP server {self.server_name!r} did not complete the handshake within "
                f"{self._connect_timeout:g} s; check the command/URL, or raise connect_timeout."
                + self._describe_failure(),
                server=self.server_name,
            ) from None
        except BaseException as exc:
            await self.close()
            if isinstance(exc, MCPError):
                raise
            if isinstance(exc, Exception):
                detail = self._describe_failure()
                raise connection_error(self.server_name, exc, during="connecting", detail=detail) from exc
            raise

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        """Enter the client, publish it, wait for the stop signal, then exit in this same task."""
        assert self._stop is not None
        stop = self._stop
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with self._make_client(self._note_eof) as client:
                    if not ready.done():
                        ready.set_result(client)
                    await stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                # The session died after it was handed out; callers will see it on their next request.
                logger.debug("MCP server %r: session ended with %s", self.server_name, type(exc).__name__)
        except BaseException:
            if not ready.done():
                ready.set_exception(
                    MCPConnectionError(
                        f"MCP server {self.server_name!r}: connection cancelled.", server=self.server_name
                    )
                )
            raise
        finally:
            if not ready.done():
                ready.set_exception(
                    MCPConnectionError(
                        f"MCP server {self.server_name!r}: connection closed during startup.", server=self.server_name
                    )
                )
            self._client = None

    async def close(self) -> None:
        """Ask the owner task to exit the client (ending a stdio subprocess) and wait for it."""
        task, self._task = self._task, None
        handshake_done = self._client is not None
        self._client = None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        if task.get_loop() is not asyncio.get_running_loop():
            # Closing from another event loop (e.g. after a new asyncio.run): that loop and its task are gone.
            return
        if not handshake_done and self._scope is not None:
            # Nothing waits on the stop event before the handshake finished: cancel the owner's scope instead.
            # The SDK shields its own shutdown (close stdin, terminate, kill), so a subprocess still ends.
            self._scope.cancel()
        done, _ = await asyncio.wait({task}, timeout=_CLOSE_GRACE)
        if not done and self._scope is not None:
            # A graceful exit is stuck (e.g. an HTTP DELETE to a server that stopped answering): cut it short.
            self._scope.cancel()
            await asyncio.wait({task})
        if task.done() and not task.cancelled():
            task.exception()  # retrieved here so asyncio does not log "exception was never retrieved"


def connection_error(server: str, exc: BaseException, *, during: str, detail: str = "") -> MCPConnectionError:
    """Describe a transport failure as an :class:`MCPConnectionError` that names the server."""
    leaf = leaf_exception(exc)
    reason = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
    return MCPConnectionError(f"MCP server {server!r} failed while {during}: {reason}.{detail}", server=server)


def leaf_exception(exc: BaseException) -> BaseException:
    """The first non-group exception inside (possibly nested) exception groups."""
    while True:
        if not isinstance(exc, BaseExceptionGroup):
            return exc
        group = cast("BaseExceptionGroup[BaseException]", exc)
        if not group.exceptions:
            return group
        exc = group.exceptions[0]
