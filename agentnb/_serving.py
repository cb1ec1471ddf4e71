"""What every server agentnb starts (A2A, MCP over HTTP) shares: one access rule and an in-loop runner.

Served agents run tools with the caller's credentials, so a request from another machine is refused unless
the server was given a token, and then every request must carry ``Authorization: Bearer <token>``. This is
the DevUI's rule, as plain ASGI middleware so any Starlette app can wear it. :class:`LoopbackServer` runs
such an app with uvicorn inside the current event loop, so a notebook cell can serve an agent and call it.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

__all__ = ["LoopbackOrTokenGuard", "LoopbackServer", "check_bind_address", "free_port", "is_loopback"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(address: str | None) -> bool:
    """Whether ``address`` (host name or IP) is this machine only."""
    if not address:
        return False
    if address in {"localhost", "localhost.localdomain"}:
        return True
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # a zone id ("fe80::1%eth0") is not part of the address
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)  # "::ffff:127.0.0.1", what a dual-stack socket reports
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


def check_bind_address(host: str, *, token: str | None, what: str) -> None:
    """Refuse to listen beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise ValueError(
            f"Refusing to serve {what} on {host!r} without authentication: it runs agents and tools with your "
            "credentials. Bind to 127.0.0.1 (the default), or pass token=... as well."
        )


class LoopbackOrTokenGuard:
    """ASGI middleware: with ``token``, every request needs ``Authorization: Bearer <token>``; without one,
    only loopback clients are served.

    Example:
        ```python
        from starlette.applications import Starlette
        from agentnb._serving import LoopbackOrTokenGuard

        app = LoopbackOrTokenGuard(Starlette(), token=None)  # loopback clients only
        ```
    """

    def __init__(self, app: ASGIApp, *, token: str | None = None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, text = refusal
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = ('{"error": "' + text + '"}').encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        if self.token:
            expected = f"Bearer {self.token}".encode()
            for name, value in scope.get("headers") or ():
                if name.lower() == b"authorization" and hmac.compare_digest(value, expected):
                    return None
            return 401, "A valid bearer token is required."
        client = scope.get("client")
        host = client[0] if client else None
        if not is_loopback(host):
            return 403, "Only clients on this machine are served; start the server with a token to allow others."
        return None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LoopbackServer:
    """Run an ASGI app with uvicorn in this event loop; ``async with`` starts and stops it.

    Args:
        app: The app (already wrapped in :class:`LoopbackOrTokenGuard`).
        host: Where to listen; beyond loopback only with ``token`` (checked by the caller).
        port: The port, or 0 for a free one.
        lifespan: Run the app's lifespan (the MCP session manager needs it).
    """

    def __init__(self, app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0, lifespan: bool = False) -> None:
        self.app = app
        self.host = host
        self.port = port or free_port(host)
        self.lifespan = lifespan
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        """``http://host:port`` (no trailing slash)."""
        netloc = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{netloc}:{self.port}"

    async def start(self) -> None:
        """Start listening; returns once the port accepts connections."""
        import uvicorn

        config = uvicorn.Config(
            self.app, host=self.host, port=self.port, log_level="warning", lifespan="on" if self.lifespan else "off"
        )
        server = uvicorn.Server(config)
        self._server = server
        self._task = asyncio.create_task(server.serve())
        while not server.started:
            if self._task.done():
                await self._task  # raises the start-up error
                raise RuntimeError(f"The server on {self.base_url} stopped while starting.")
            await asyncio.sleep(0.01)

    async def wait(self) -> None:
        """Wait until the server stops (after :meth:`request_stop`, or Ctrl+C in the main thread)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    def request_stop(self) -> None:
        """Ask the server to stop; :meth:`wait` returns once it has."""
        if self._server is not None:
            self._server.should_exit = True

    async def stop(self) -> None:
        """Stop listening and wait for the server to finish."""
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        self._server = None
        self._task = None
