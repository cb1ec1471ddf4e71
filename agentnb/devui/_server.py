"""Serve the DevUI: in the background from a notebook, or in the foreground from the launcher.

The server binds to 127.0.0.1 unless told otherwise; a non-loopback address is refused unless the caller
also turns on authentication (``token=...``), because the DevUI runs arbitrary agents and tools. With a
token the page shows a login screen (served by the DevUI itself, like every other resource: nothing loads
from the internet) and the API wants ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._discovery import Catalog, discover

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["free_port", "is_loopback", "running_servers", "serve", "serving_url", "stop"]

_TEMPLATES = Path(__file__).parent / "templates"
_servers: dict[str, Any] = {}
_protocol_servers: dict[str, Any] = {}  # DevUI URL -> the AgentServer serving its entities (protocols=True)
_lock = threading.Lock()


def is_loopback(address: str) -> bool:
    """Tell whether ``address`` (host name or IP) only listens on this machine."""
    if address in {"localhost", "localhost.localdomain"}:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def free_port(address: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``address`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def check_address(address: str, *, token: str | None) -> None:
    """Refuse to expose the DevUI beyond this machine without authentication."""
    if not is_loopback(address) and not token:
        raise ValueError(
            f"Refusing to serve the DevUI on {address!r} without authentication: it runs agents and tools with "
            "your credentials. Bind to 127.0.0.1 (the default), or pass token=... (--token) as well."
        )


def read_token(token: str | None) -> str | None:
    """Return the access token: ``token`` itself, or the first line of the file it names."""
    if token and Path(token).is_file():
        token = Path(token).read_text(encoding="utf-8").strip()
    return token or None


def _catalog_from(entities: Any) -> Catalog:
    if entities is None:
        from .demos import demo_catalog

        return demo_catalog()
    if isinstance(entities, Catalog):
        return entities
    if isinstance(entities, (str, bytes)) or not hasattr(entities, "__iter__"):
        entities = [entities]
    return discover(entities, env=False)


def serve(
    entities: Any = None,
    *,
    port: int | None = None,
    address: str = "127.0.0.1",
    background: bool = True,
    show: bool = False,
    store: Store | None = None,
    token: str | None = None,
    basic_auth: str | None = None,
    title: str = "agentnb DevUI",
    tracing: bool | None = None,
    mode: Literal["developer", "user"] = "developer",
    protocols: bool = False,
) -> str:
    """Start a DevUI server for the given agents and workflows and return its URL.

    Args:
        entities: Agents, workflows, directories or module names (see :func:`~agentnb.devui.discover`);
            a :class:`~agentnb.devui.Catalog`; or ``None`` for the demos that ship with agentnb.
        port: The port; ``None`` picks a free one.
        address: The interface to bind; non-loopback addresses need ``token``.
        background: Serve from a daemon thread and return at once (notebooks); ``False`` blocks until
            the server stops (scripts, the launcher).
        show: Open a browser tab.
        store: The run store the UI reads and writes (default: the shared store at ``$AGENTNB_HOME``).
        token: An access token (or a file holding one): the page asks for it on a login screen, the API
            wants it as ``Authorization: Bearer <token>``.
        basic_auth: The older name of ``token``.
        title: The browser tab's title.
        tracing: Record spans into the store so the traces view shows runs made here; the default is on
            for a blocking server (the launcher) and off in the background (a notebook keeps its own setup).
        mode: ``"user"`` shows only the chat and workflow views (no runs, time travel or traces).
        protocols: Also serve the entities over the Responses API, A2A and MCP (:mod:`agentnb.serving`), on a
            second port of the same address behind the same token (the DevUI's Tornado server cannot host
            the ASGI apps A2A and MCP are); the header links to it and :func:`serving_url` returns it.

    Returns:
        The URL the DevUI is served at, such as ``"http://127.0.0.1:5006/"``.

    Raises:
        ValueError: ``address`` is not loopback and ``token`` is not set.
    """
    token = read_token(token or basic_auth)
    check_address(address, token=token)
    try:
        import panel as pn
    except ImportError as e:  # pragma: no cover - panel is part of the devui extra
        raise ImportError('agentnb.devui needs panel: pip install "agentnb[devui]"') from e

    from ._api import ResponsesAPI, api_routes
    from ._app import DevUI

    catalog = _catalog_from(entities)
    if store is None:
        from agentnb.store import default_store

        store = default_store()
    if port is None:
        port = free_port(address if is_loopback(address) else "0.0.0.0")
    host = "127.0.0.1" if address in {"0.0.0.0", "::"} else address
    url = f"http://{host}:{port}/"

    trace = (not background) if tracing is None else tracing

    protocol_server: Any = None
    if protocols:
        from agentnb.serving import AgentServer

        protocol_server = AgentServer(catalog, host=address, token=token, store=store)
        protocol_server.start_background()
    served_at = protocol_server.url + "/" if protocol_server is not None else None

    def page() -> Any:
        from ._admission import refusal_for_session, refusal_page

        reason = refusal_for_session(authenticated=bool(token))
        if reason is not None:
            return refusal_page(reason)
        return DevUI(catalog, store=store, tracing=trace, mode=mode, serving_url=served_at).panel()

    kwargs: dict[str, Any] = {
        "port": port,
        "address": address,
        "websocket_origin": [f"{host}:{port}", f"localhost:{port}"],
        "show": show,
        "title": title,
        "verbose": False,
        # The OpenAI-compatible API for the same entities (it checks the token itself: bearer, not cookie).
        "extra_patterns": api_routes(ResponsesAPI(catalog, token=token, store=store)),
    }
    if token:
        kwargs["basic_auth"] = token
        kwargs["cookie_secret"] = _cookie_secret()
        kwargs["login_template"] = str(_TEMPLATES / "login.html")
        kwargs["logout_template"] = str(_TEMPLATES / "logout.html")
    # Panel leaves serve()'s **kwargs unannotated (they go to Bokeh's server).
    if not background:
        try:
            pn.serve(page, threaded=False, **kwargs)  # pyright: ignore[reportUnknownMemberType]
        finally:
            if protocol_server is not None:
                protocol_server.stop_background()
        return url
    server = pn.serve(page, threaded=True, **kwargs)  # pyright: ignore[reportUnknownMemberType]
    with _lock:
        _servers[url] = server
        if protocol_server is not None:
            _protocol_servers[url] = protocol_server
    _wait_for_port(host, port)
    return url


def _cookie_secret() -> str:
    import secrets

    return secrets.token_hex(32)


def _wait_for_port(host: str, port: int, timeout: float = 15.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"The DevUI server did not start listening on {host}:{port} within {timeout:.0f} s.")


def serving_url(url: str) -> str | None:
    """Where the DevUI at ``url`` serves its entities over the Responses API, A2A and MCP (``protocols=True``)."""
    with _lock:
        server = _protocol_servers.get(url)
    return server.url + "/" if server is not None else None


def running_servers() -> list[str]:
    """Return the URLs of DevUI servers started in the background by this process."""
    with _lock:
        return list(_servers)


def stop(url: str | None = None) -> int:
    """Stop a background DevUI server (all of them when ``url`` is ``None``); return how many stopped."""
    with _lock:
        urls = [url] if url is not None else list(_servers)
        servers = [(u, _servers.pop(u)) for u in urls if u in _servers]
        protocol_servers = [_protocol_servers.pop(u) for u in urls if u in _protocol_servers]
    for _url, server in servers:
        server.stop()
        server.join(timeout=5)
    for protocol_server in protocol_servers:
        protocol_server.stop_background()
    return len(servers)
