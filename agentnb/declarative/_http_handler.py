"""DefaultHttpRequestHandler: a ready-made ``http_request_handler`` for declarative workflows, over httpx.

Nothing is enabled by default: a workflow reaches HTTP only through a handler the caller passes to
``WorkflowFactory``. This is the one to pass when plain httpx is what is wanted, with the guards a handler
facing workflow-authored URLs needs: absolute http(s) URLs only, a response-body cap that also holds after
gzip/deflate decoding (a small compressed "bomb" cannot expand into memory), no cookies carried from one
workflow's response into another's request, and ``allowed_urls`` to say where the workflow may go at all.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Awaitable, Callable, Iterable
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ..exceptions import DeclarativeActionError, ServiceConnectionError, ServiceTimeoutError
from ._actions import HttpRequestInfo, HttpRequestResult
from ._allowlist import UrlAllowlist

if TYPE_CHECKING:
    import httpx

__all__ = ["DefaultHttpRequestHandler", "HttpClientProvider"]

#: Picks the ``httpx.AsyncClient`` for one request (``None``: use the handler's own client).
HttpClientProvider = Callable[[HttpRequestInfo], Awaitable["httpx.AsyncClient | None"]]

_DEFAULT_LIMIT = 10 * 1024 * 1024
_MAX_ENCODING_STAGES = 4
# Characters a query may hold as written: RFC 3986 sub-delims, ``:@/?``, brackets and ``%`` (so escapes the
# author wrote are not escaped twice). Only bytes that cannot appear in a URL are percent-encoded.
_QUERY_SAFE = "!$&'()*+,;=:@/?%[]~"


class DefaultHttpRequestHandler:
    """Send a declarative workflow's HttpRequestAction with httpx; pass it as ``http_request_handler``.

    Which client sends a request:

    - ``DefaultHttpRequestHandler()``: the handler's own ``httpx.AsyncClient``, made on the first request,
      which keeps no cookies between requests; :meth:`aclose` closes it.
    - ``client=``: your client (its cookies, auth, redirects, proxies); never closed by the handler.
    - ``client_provider=``: an async function picking a client per request (for example by host); it sees
      the request with its query already in ``url``; returning ``None`` falls back to ``client``, then to the
      handler's own client. Its clients are never closed by the handler.

    A non-2xx answer is a result (``status_code``), not an error; a body that is JSON becomes data, other
    text stays text. Response bodies above ``max_response_body_bytes`` (10 MiB) on the wire or after any
    gzip/deflate stage are refused; other content encodings are refused.

    Use ``allowed_urls`` in production: a list of URL prefixes (``"https://api.example.com/v1/"``) the
    workflow may reach, checked before the request is sent and again for every redirect the client follows.
    Without it the handler sends to any http(s) URL the workflow computes, loopback and metadata endpoints
    included.

    Raises (from a call):
        ValueError: The URL is not an absolute http(s) URL, or the method is empty.
        DeclarativeActionError: The URL is not under ``allowed_urls`` (the message names it), or the response
            is over the size limit or uses an encoding the handler does not decode.
        ServiceConnectionError / ServiceTimeoutError: The server could not be reached, or did not answer in time.

    Example:
        ```python
        from agentnb.declarative import DefaultHttpRequestHandler, WorkflowFactory

        async with DefaultHttpRequestHandler(allowed_urls=["https://api.github.com/repos/"]) as http:
            workflow = WorkflowFactory(http_request_handler=http).create_workflow_from_yaml(text)
            result = await workflow.run({"repo": "octocat/hello-world"})
        ```
    """

    def __init__(
        self,
        *,
        client: httpx.AsyncClient | None = None,
        client_provider: HttpClientProvider | None = None,
        max_response_body_bytes: int = _DEFAULT_LIMIT,
        allowed_urls: Iterable[str] | None = None,
    ) -> None:
        limit = cast(object, max_response_body_bytes)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise ValueError("max_response_body_bytes must be a positive integer")
        self.max_response_body_bytes = max_response_body_bytes
        self.allowed_urls = UrlAllowlist(allowed_urls) if allowed_urls is not None else None
        self._client = client
        self._client_provider = client_provider
        self._owned: httpx.AsyncClient | None = None
        self._owned_lock = asyncio.Lock()

    async def __call__(self, request: HttpRequestInfo, /) -> HttpRequestResult:
        """Send ``request``; what ``WorkflowFactory`` calls."""
        return await self.send(request)

    async def send(self, info: HttpRequestInfo) -> HttpRequestResult:
        """Send ``info`` and return the status, headers (lower-case names, repeats joined) and body."""
        import httpx

        if not info.method:
            raise ValueError("HttpRequestInfo.method must not be empty")
        url_text = _with_query(info)
        url = httpx.URL(url_text)
        if self.allowed_urls is not None:
            # Both the URL as written and as httpx will send it: a parser disagreement cannot slip past.
            self.allowed_urls.check(url_text, what="DefaultHttpRequestHandler")
            self.allowed_urls.check(str(url), what="DefaultHttpRequestHandler")
        snapshot = HttpRequestInfo(
            method=info.method,
            url=str(url),
            headers=dict(info.headers),
            body=info.body,
            timeout_ms=info.timeout_ms,
        )
        client = await self._pick_client(snapshot)
        url = _with_client_params(url, client)
        content, content_type = _encode_body(info.body)
        headers = dict(info.headers)
        names = {name.lower() for name in headers}
        if content is not None and "content-type" not in names:
            headers["Content-Type"] = content_type
        if "accept-encoding" not in names and not _decodable(client.headers.get("accept-encoding")):
            headers["Accept-Encoding"] = "gzip, deflate"  # only what the bounded reader decodes
        timeout: Any = httpx.Timeout(info.timeout_ms / 1000) if info.timeout_ms else httpx.USE_CLIENT_DEFAULT
        outgoing = client.build_request(
            info.method.upper(), url.copy_with(query=None), headers=headers, content=content, timeout=timeout
        )
        outgoing.url = url  # the query exactly as composed, not re-encoded from client params
        try:
            response, body = await self._exchange(client, outgoing)
        except httpx.TimeoutException as exc:
            raise ServiceTimeoutError(f"HTTP {info.method} {url_text!r} timed out: {exc}") from exc
        except httpx.HTTPError as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise ServiceConnectionError(f"HTTP {info.method} {url_text!r} failed: {detail}") from exc
        headers_out: dict[str, str] = {}
        for name, value in response.headers.multi_items():
            key = name.lower()
            headers_out[key] = f"{headers_out[key]}, {value}" if key in headers_out else value
        text = _decode(body, response.charset_encoding)
        return HttpRequestResult(status_code=response.status_code, body=_parse(text), headers=headers_out, text=text)

    async def _exchange(self, client: httpx.AsyncClient, request: httpx.Request) -> tuple[httpx.Response, bytes]:
        """Send, following redirects only as the client says, each hop checked and read within the limit."""
        hops = 0
        while True:
            response = await client.send(request, stream=True, follow_redirects=False)
            body = await _read_bounded(response, self.max_response_body_bytes)
            following = response.next_request if client.follow_redirects else None
            if following is None:
                return response, body
            hops += 1
            if hops > client.max_redirects:
                raise DeclarativeActionError(
                    f"HTTP request to {str(request.url)!r} exceeded {client.max_redirects} redirects"
                )
            if self.allowed_urls is not None:
                self.allowed_urls.check(str(following.url), what="DefaultHttpRequestHandler (redirect)")
            request = following

    async def _pick_client(self, info: HttpRequestInfo) -> httpx.AsyncClient:
        if self._client_provider is not None:
            provided = await self._client_provider(info)
            if provided is not None:
                return provided
        if self._client is not None:
            return self._client
        async with self._owned_lock:  # two first requests at once must not make (and leak) two clients
            if self._owned is None:
                import httpx

                # A policy that accepts no domain: Set-Cookie stays visible in the result but is never replayed.
                self._owned = httpx.AsyncClient(cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])))
            return self._owned

    async def aclose(self) -> None:
        """Close the handler's own client; clients you passed are left open."""
        owned, self._owned = self._owned, None
        if owned is not None:
            await owned.aclose()

    async def __aenter__(self) -> DefaultHttpRequestHandler:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _with_query(info: HttpRequestInfo) -> str:
    """``info.url`` with ``query_parameters`` appended, the authored query kept byte for byte."""
    try:
        split = urlsplit(info.url)
    except ValueError as exc:
        raise ValueError(f"HttpRequestInfo.url {info.url!r} is not a valid URL: {exc}") from exc
    if split.scheme.lower() not in ("http", "https") or not split.netloc:
        raise ValueError(f"HttpRequestInfo.url must be an absolute http:// or https:// URL, got {info.url!r}")
    query = split.query
    extra = [(key, value) for key, value in info.query_parameters.items() if key]
    if extra:
        query += ("&" if query else "") + urlencode(extra, quote_via=quote)
    base = info.url.split("#", 1)[0].split("?", 1)[0]
    return base + ("?" + quote(query, safe=_QUERY_SAFE) if query else "")


def _with_client_params(url: httpx.URL, client: httpx.AsyncClient) -> httpx.URL:
    """``url`` with the client's default query params appended for keys the request does not set."""
    present = {key for key, _ in parse_qsl(url.query.decode("ascii"), keep_blank_values=True)}
    defaults = [(key, value) for key, value in client.params.multi_items() if key not in present]
    if not defaults:
        return url
    query = url.query + (b"&" if url.query else b"") + urlencode(defaults, quote_via=quote).encode("ascii")
    return url.copy_with(query=query)


def _decodable(accept_encoding: str | None) -> bool:
    """Whether a client's own Accept-Encoding asks only for encodings the bounded reader decodes."""
    if not accept_encoding:
        return False
    offered = {part.split(";", 1)[0].strip().lower() for part in accept_encoding.split(",")}
    return offered <= {"gzip", "x-gzip", "deflate", "identity"}


def _encode_body(body: Any) -> tuple[bytes | str | None, str]:
    """The bytes to send and their default content type: text as is, data as JSON."""
    if body is None:
        return None, ""
    if isinstance(body, bytes | bytearray):
        return bytes(body), "application/octet-stream"
    if isinstance(body, str):
        return body, "text/plain"
    return json.dumps(body, default=str), "application/json"


def _decode(body: bytes, charset: str | None) -> str:
    """The body as text in its declared charset (UTF-8 when none, or an unknown one, is declared)."""
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _parse(text: str) -> Any:
    """JSON first, as the reference's executor stores a response: data when it parses, the text otherwise."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _too_big(limit: int) -> DeclarativeActionError:
    return DeclarativeActionError(f"HTTP response body exceeds max_response_body_bytes={limit:,}")


async def _read_bounded(response: httpx.Response, limit: int) -> bytes:
    """The decoded body, refusing more than ``limit`` bytes on the wire or out of any decoding stage."""
    try:
        codings = [
            c.strip().lower()
            for c in response.headers.get("content-encoding", "").split(",")
            if c.strip() and c.strip().lower() != "identity"
        ]
        bodiless = response.request.method == "HEAD" or response.status_code in (204, 304)
        if bodiless:
            codings = []
        if len(codings) > _MAX_ENCODING_STAGES:
            raise DeclarativeActionError(f"HTTP response has {len(codings)} content-encoding stages; refused")
        decoders = [_Decoder(coding, limit) for coding in reversed(codings)]
        body = bytearray()
        received = 0
        async for chunk in response.aiter_raw():
            received += len(chunk)
            if received > limit:
                raise _too_big(limit)
            for decoder in decoders:
                chunk = decoder.feed(chunk)
            body.extend(chunk)
            if len(body) > limit:
                raise _too_big(limit)
        if not received:
            return b""  # an empty body needs no decoding, whatever its Content-Encoding says
        for index, decoder in enumerate(decoders):
            tail = decoder.finish()
            for later in decoders[index + 1 :]:
                tail = later.feed(tail)
            body.extend(tail)
        if len(body) > limit:
            raise _too_big(limit)
        return bytes(body)
    finally:
        await response.aclose()


class _Decoder:
    """One gzip or deflate stage whose output is capped at ``limit`` bytes."""

    def __init__(self, coding: str, limit: int) -> None:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise DeclarativeActionError(f"HTTP response content-encoding {coding!r} is not supported (gzip, deflate)")
        self.coding = coding
        self.limit = limit
        self.produced = 0
        self.pending = b""  # deflate: the first bytes, until the zlib header can be recognised
        self.finished = False
        self.inflater: Any = zlib.decompressobj(16 + zlib.MAX_WBITS) if coding != "deflate" else None

    def feed(self, data: bytes) -> bytes:
        if self.inflater is None:
            self.pending += data
            if len(self.pending) < 2:
                return b""
            data, self.pending = self.pending, b""
            wrapped = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self.inflater = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        if not data:
            return b""
        if self.inflater.eof:
            raise DeclarativeActionError(f"HTTP response has data after its {self.coding} stream ended")
        try:
            out: bytes = self.inflater.decompress(data, self.limit - self.produced + 1)
        except zlib.error as exc:
            raise DeclarativeActionError(f"HTTP response is not valid {self.coding}: {exc}") from exc
        self.produced += len(out)
        if self.produced > self.limit:
            raise _too_big(self.limit)
        if self.inflater.unused_data:
            raise DeclarativeActionError(f"HTTP response has data after its {self.coding} stream ended")
        return out

    def finish(self) -> bytes:
        if self.finished:
            return b""
        self.finished = True
        out = self.feed(b"") if self.inflater is not None else b""
        if self.pending:  # a deflate body shorter than two bytes
            raise DeclarativeActionError(f"HTTP response is not valid {self.coding}")
        if self.inflater is None:
            return out
        if not self.inflater.eof:
            raise DeclarativeActionError(f"HTTP response {self.coding} stream is incomplete")
        return out
