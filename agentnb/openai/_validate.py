"""Check what an OpenAI-compatible endpoint sent with HTTP 200 before the clients use it.

A misconfigured ``base_url`` (a login page, a proxy's HTML, a different API) or a broken gateway can answer
200 with something that is not a Chat Completions / Responses reply. The SDK then hands back a plain string,
an empty model or a stream with no events, which would surface as an ``AttributeError`` or, worse, as a
silent empty answer. These helpers turn each case into a :class:`ServiceResponseError` that names the
endpoint and quotes the first bytes of what came back.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from .._json import is_json_object
from ..exceptions import ServiceResponseError

__all__ = ["checked_create", "checked_events", "invalid_response"]

QUOTE_BYTES = 200


def _is_chat(api: str) -> bool:
    """Chat Completions (a reply carries ``choices``) rather than Responses (a reply carries ``output``)."""
    return "chat" in api.lower()


def _first_bytes(body: bytes | str | None) -> str:
    if body is None:
        return ""
    text = body if isinstance(body, str) else body[:QUOTE_BYTES].decode("utf-8", errors="replace")
    return text[:QUOTE_BYTES]


def invalid_response(api: str, url: Any, problem: str, body: bytes | str | None) -> ServiceResponseError:
    """The error for a 200 answer that is not a valid reply: names the endpoint, quotes the first bytes."""
    first = _first_bytes(body)
    return ServiceResponseError(
        f"OpenAI {api} request to {url} got HTTP 200 but {problem}; the body starts with {first!r}. Check that "
        "base_url / OPENAI_BASE_URL points at an OpenAI-compatible API (a proxy or login page answers with HTML).",
        status_code=200,
        body=first,
    )


async def checked_create(resource: Any, params: dict[str, Any], *, api: str) -> Any:
    """``resource.create(**params)``, refusing a 200 answer that is not a reply (or not an event stream).

    Errors the SDK raises (HTTP errors, timeouts) propagate unchanged for the caller's error mapping.
    """
    raw = await resource.with_raw_response.create(**params)
    http = raw.http_response
    url = http.url
    if params.get("stream"):
        content_type = http.headers.get("content-type", "")
        if "text/event-stream" not in content_type:
            body = await http.aread()
            await http.aclose()
            problem = f"a streamed request got {content_type or 'no content type'} instead of an event stream"
            raise invalid_response(api, url, problem, body)
        return raw.parse()
    body = http.content
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise invalid_response(api, url, "the body is not JSON", body) from None
    key = "choices" if _is_chat(api) else "output"
    if not is_json_object(data) or not isinstance(data.get(key), list):
        raise invalid_response(api, url, f"the JSON has no {key!r} list", body)
    if _is_chat(api) and not data[key]:
        raise invalid_response(api, url, "'choices' is empty (no answer at all)", body)
    try:
        return raw.parse()
    except Exception as e:  # the SDK's own model parsing of a reply with fields of the wrong shape
        raise invalid_response(api, url, f"the reply does not parse ({type(e).__name__}: {e})", body) from e


async def checked_events(stream: Any, *, api: str) -> AsyncIterator[Any]:
    """Iterate ``stream``'s events, turning garbage (unparseable or shapeless events) into a typed error."""
    url = getattr(getattr(stream, "response", None), "url", "the endpoint")
    iterator = stream.__aiter__()
    while True:
        try:
            event = await iterator.__anext__()
        except StopAsyncIteration:
            return
        except (ValueError, RecursionError) as e:  # the SDK's json.loads of a `data:` line that is not JSON
            raise invalid_response(api, url, "an event is not JSON", getattr(e, "doc", None)) from e
        if _is_chat(api):
            valid = isinstance(getattr(event, "choices", None), list)
        else:
            valid = isinstance(getattr(event, "type", None), str)
        if not valid:
            problem = "an event has no 'choices'" if _is_chat(api) else "an event has no type"
            raise invalid_response(api, url, problem, _event_text(event))
        yield event


def _event_text(event: Any) -> str:
    try:
        return json.dumps(event.model_dump() if hasattr(event, "model_dump") else event, default=str)
    except (TypeError, ValueError):
        return repr(event)
