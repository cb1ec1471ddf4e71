"""The URL allowlist the default HTTP and MCP handlers take: which addresses a workflow file may reach.

A workflow file names its URLs in expressions, so whoever writes (or injects into) the inputs can point an
HttpRequestAction or InvokeMcpTool anywhere the process can reach: cloud metadata endpoints, services on
loopback. ``allowed_urls`` is the caller's statement of where the file may go. Entries are prefixes, compared
on parsed URLs rather than as strings so ``https://api.example.com`` does not admit
``https://api.example.com.evil.net`` or ``https://api.example.com@evil.net``: the scheme, host and port must
match exactly, and the path must equal the entry's path or continue it after a ``/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

from ..exceptions import DeclarativeActionError

__all__ = ["UrlAllowlist"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _parts(url: str) -> tuple[str, str, int, str] | None:
    """(scheme, host, port, path without dot segments) of an absolute http(s) URL, or ``None``."""
    try:
        split = urlsplit(url)
        port = split.port
    except ValueError:
        return None
    scheme = split.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not split.hostname:
        return None
    segments: list[str] = []
    for segment in split.path.split("/")[1:]:
        dots = unquote(segment)  # servers that decode ``%2e%2e`` before resolving it must not walk out either
        if dots == "..":
            if segments:
                segments.pop()
        elif dots != ".":
            segments.append(segment)
    path = "/" + "/".join(segments)
    return scheme, split.hostname.lower(), port or _DEFAULT_PORTS[scheme], path


class UrlAllowlist:
    """Prefixes of the URLs a handler may reach; ``check`` raises for any other URL.

    Raises:
        ValueError: An entry is not an absolute http(s) URL (checked when the handler is built).
    """

    def __init__(self, prefixes: Iterable[str]) -> None:
        if isinstance(prefixes, str):
            prefixes = [prefixes]
        self.prefixes = list(prefixes)
        self._entries: list[tuple[str, str, int, str]] = []
        for prefix in self.prefixes:
            parts = _parts(prefix)
            if parts is None:
                raise ValueError(f"allowed_urls entry {prefix!r} is not an absolute http:// or https:// URL")
            self._entries.append(parts)

    def allows(self, url: str) -> bool:
        """Whether ``url`` starts with one of the prefixes (compared by scheme, host, port and path)."""
        parts = _parts(url)
        if parts is None:
            return False
        for scheme, host, port, path in self._entries:
            if (scheme, host, port) != parts[:3]:
                continue
            base = path.rstrip("/")
            if not base or parts[3] == base or parts[3].startswith(base + "/"):
                return True
        return False

    def check(self, url: str, *, what: str) -> None:
        """Raise :class:`~agentnb.exceptions.DeclarativeActionError` naming ``url`` unless it is allowed."""
        if not self.allows(url):
            raise DeclarativeActionError(
                f"{what} refused {url!r}: it is not under any of allowed_urls={self.prefixes!r}"
            )
