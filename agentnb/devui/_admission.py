"""Who may talk to the DevUI: loopback clients, or anyone once an auth provider is configured.

The DevUI runs agents and tools with the user's credentials and answers approval requests, so a network
client is as powerful as the user. ``panel serve`` binds every interface unless told otherwise; this check
keeps such a server closed to other machines until Panel basic auth or OAuth is configured.

It runs twice per client, both before any agent code: as the app's ``process_request`` hook (Bokeh calls it
for the HTTP page request and again when the websocket opens, so a refused client never gets a session),
and when a page is built (:func:`refusal_for_session`), for servers started without the hook.
"""

from __future__ import annotations

import ipaddress
from typing import Any

__all__ = [
    "admit",
    "auth_configured",
    "is_loopback_client",
    "process_request",
    "refusal",
    "refusal_for_session",
    "refusal_page",
]

HOW_TO_FIX = (
    "Serve it on this machine only (panel serve devui --address 127.0.0.1, or python -m agentnb.devui), "
    "or configure authentication (panel serve ... --basic-auth PASSWORD --cookie-secret SECRET, or --oauth-provider)."
)


def is_loopback_client(remote_ip: str | None) -> bool:
    """Tell whether a client address is this machine (``127.0.0.0/8``, ``::1``, IPv4-mapped loopback)."""
    if not remote_ip:
        return False
    try:
        address = ipaddress.ip_address(remote_ip.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def auth_configured() -> bool:
    """Tell whether the running Panel server has an auth provider (basic auth or OAuth) configured."""
    try:
        from panel.config import config
    except ImportError:  # pragma: no cover - panel is part of the devui extra
        return False
    return bool(config.basic_auth or config.oauth_provider)


def refusal(remote_ip: str | None, *, authenticated: bool) -> str | None:
    """The reason to refuse a client at ``remote_ip``, or ``None`` to admit it."""
    if authenticated or is_loopback_client(remote_ip):
        return None
    return (
        f"The agentnb DevUI refuses the non-loopback client {remote_ip or '(unknown)'}: no authentication is "
        f"configured, and the DevUI runs agents and tools with its user's credentials. {HOW_TO_FIX}"
    )


def admit(request: Any, *, authenticated: bool | None = None) -> None:
    """Raise HTTP 403 (with the reason and the fix) unless the request may reach the DevUI."""
    if authenticated is None:
        authenticated = auth_configured()
    reason = refusal(getattr(request, "remote_ip", None), authenticated=authenticated)
    if reason is not None:
        from tornado.web import HTTPError

        # The reason phrase is the page text tornado shows, so the refused user sees how to fix it.
        raise HTTPError(403, reason, reason=reason)


def process_request(request: Any) -> dict[str, Any]:
    """Bokeh's per-app request hook: refuse before a session exists (page request and websocket open)."""
    admit(request)
    return {}


def refusal_for_session(*, authenticated: bool | None = None) -> str | None:
    """The refusal for the client of the Panel session being built now, or ``None`` to build the DevUI."""
    import panel as pn

    context = getattr(pn.state.curdoc, "session_context", None)
    request = getattr(context, "request", None)
    if request is None:  # not served (a notebook cell, a test building the layout): nobody remote
        return None
    if authenticated is None:
        authenticated = auth_configured()
    return refusal(getattr(request, "remote_ip", None), authenticated=authenticated)


def refusal_page(reason: str) -> Any:
    """The page a refused client sees instead of the DevUI."""
    from html import escape

    import panel as pn

    return pn.pane.HTML(
        f"<div class='anb-card anb-error anb-refused'><b>Access refused.</b> {escape(reason)}</div>",
        sizing_mode="stretch_width",
    )
