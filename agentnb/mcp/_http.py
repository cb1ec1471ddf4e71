"""MCPStreamableHTTPTool: an MCP server reached over the streamable HTTP transport."""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from ._tool import MCPTool

if TYPE_CHECKING:
    import httpx
    import httpx2

__all__ = ["MCPStreamableHTTPTool"]

# The SDK's defaults: 30 s for connect/write/pool, 5 minutes of read silence on a held-open SSE stream.
_CONNECT_TIMEOUT = 30.0
_SSE_READ_TIMEOUT = 300.0


class MCPStreamableHTTPTool(MCPTool):
    """Use the tools of an MCP server that speaks streamable HTTP.

    Args:
        name: A label for this server (errors, logs, approval metadata).
        url: The MCP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``.
        headers: Extra HTTP headers for every request (e.g. an ``Authorization`` header).
        http_client: Your own ``httpx.AsyncClient`` (auth, proxies, TLS, event hooks) or an ``httpx2.AsyncClient``
            (what the ``mcp`` SDK uses). It is not closed by this tool.
        terminate_on_close: Send the server an HTTP DELETE to end the MCP session when closing.
        **kwargs: Everything :class:`MCPTool` accepts (``allowed_tools``, ``approval_mode``, timeouts, sampling).

    Example:
        ```python
        # First, in a terminal: python -m agentnb.mcp.demo_server --http 8000
        from agentnb.mcp import MCPStreamableHTTPTool

        demo = MCPStreamableHTTPTool("demo", "http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer ..."})
        async with demo:
            print([tool.name for tool in await demo.get_tools()])
        ```
    """

    def __init__(
        self,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | httpx2.AsyncClient | None = None,
        terminate_on_close: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        if not isinstance(cast(object, url), str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http:// or https:// URL, got {url!r}")
        if http_client is not None and not _is_httpx_client(http_client) and not _is_httpx2_client(http_client):
            raise TypeError(
                f"http_client must be an httpx.AsyncClient or httpx2.AsyncClient, got {type(http_client).__name__}"
            )
        self.url = url
        self.headers = dict(headers or {})
        self.http_client = http_client
        self.terminate_on_close = terminate_on_close

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        return self._open_transport()

    @asynccontextmanager
    async def _open_transport(self) -> AsyncGenerator[Any, None]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with AsyncExitStack() as stack:
            given = self.http_client
            if isinstance(given, httpx2.AsyncClient) and not self.headers:
                client = given
            else:
                # Our own httpx2 client carries the extra headers; it relays through the user's client when one
                # was given, so that client's auth, hooks and transport still apply.
                client = httpx2.AsyncClient(
                    headers=self.headers,
                    timeout=httpx2.Timeout(_CONNECT_TIMEOUT, read=_SSE_READ_TIMEOUT),
                    transport=_relay(given) if given is not None else None,
                )
                await stack.enter_async_context(client)
            streams = await stack.enter_async_context(
                streamable_http_client(self.url, http_client=client, terminate_on_close=self.terminate_on_close)
            )
            yield streams

    def __repr__(self) -> str:
        state = "connected" if self.is_connected else "not connected"
        return f"MCPStreamableHTTPTool(name={self.name!r}, url={self.url!r}, {state})"


def _is_httpx2_client(client: Any) -> bool:
    try:
        import httpx2
    except ImportError:  # pragma: no cover
        return False
    return isinstance(client, httpx2.AsyncClient)


def _is_httpx_client(client: Any) -> bool:
    try:
        import httpx
    except ImportError:  # pragma: no cover
        return False
    return isinstance(client, httpx.AsyncClient)


@functools.cache
def _relay_classes() -> tuple[type, type]:
    """Build the relay's httpx2 subclasses on first use, so importing agentnb.mcp does not import httpx2."""
    import httpx2

    class RelayedBody(httpx2.AsyncByteStream):
        """An httpx2 response body that streams from the relayed client's response."""

        def __init__(self, response: Any) -> None:
            self._response = response

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._response.aiter_raw():
                yield chunk

        async def aclose(self) -> None:
            await self._response.aclose()

    class HttpxRelay(httpx2.AsyncBaseTransport):
        """An httpx2 transport that sends each request through another client (``httpx`` or ``httpx2``).

        The ``mcp`` SDK speaks ``httpx2``; users usually hold an ``httpx.AsyncClient`` configured with auth,
        event hooks or a custom transport. Relaying keeps all of that in effect, response bodies stream (the
        SDK reads server-sent events), and the timeouts the SDK sets per request are passed along.
        """

        def __init__(self, client: Any) -> None:
            self._client = client

        async def aclose(self) -> None:
            # The user's client belongs to the user: never closed here.
            return None

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            body = await request.aread()
            relayed = self._client.build_request(
                request.method, str(request.url), headers=list(request.headers.multi_items()), content=body
            )
            timeout = request.extensions.get("timeout")
            if timeout is not None:
                relayed.extensions["timeout"] = timeout
            try:
                response = await self._client.send(relayed, stream=True)
            except Exception as exc:
                raise _translate_error(exc, request) from exc
            return httpx2.Response(
                response.status_code,
                headers=list(response.headers.multi_items()),
                stream=RelayedBody(response),
                request=request,
            )

    return RelayedBody, HttpxRelay


def _relay(client: Any) -> Any:
    return _relay_classes()[1](client)


def _translate_error(exc: Exception, request: Any) -> Exception:
    """Map an ``httpx`` error to its ``httpx2`` twin so the SDK's own error handling recognises it."""
    import httpx2

    twin = getattr(httpx2, type(exc).__name__, None)
    if isinstance(twin, type) and issubclass(twin, httpx2.TransportError):
        return twin(str(exc), request=request)
    if isinstance(exc, OSError):
        return httpx2.ConnectError(str(exc), request=request)
    return exc
