"""One access rule for every server agentnb starts (A2A, MCP): loopback only, unless a token is required.

Served agents run tools with the caller's credentials, so a request from another machine is refused unless
the server was given a token, and then every request must carry ``Authorization: Bearer <token>``. This is
the DevUI's rule, as plain ASGI middleware so any Starlette app can wear it.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["LoopbackOrTokenGuard", "check_bind_address", "is_loopback"]

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
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


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
        from agentnb._asgi_guard import LoopbackOrTokenGuard

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
