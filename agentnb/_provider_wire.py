"""What every provider's client does the same way: typed errors, retry hints, usage, tool calls as text.

The OpenAI and Anthropic clients (and any other provider) speak different wire formats but type a failure, read
a server's "retry after", report usage and send tool arguments and results the same way; those rules live here,
in the core, so no provider imports another.
"""

from __future__ import annotations

import json
from typing import Any, cast

from ._json import is_json_object
from ._tools import result_to_text
from ._types import Content, UsageDetails
from .exceptions import ContentFilterError, RateLimitError, ServiceAuthenticationError, ServiceResponseError

__all__ = [
    "AUTH_CODES",
    "CONTENT_FILTER_CODES",
    "RATE_LIMIT_CODES",
    "arguments_text",
    "error_code",
    "function_result_text",
    "is_image",
    "retry_after",
    "service_error",
    "usage_details",
]

# Error codes providers use when their content filter blocks a request.
CONTENT_FILTER_CODES = frozenset({"content_filter", "content_policy_violation", "content_filtered"})
# Error codes gateways and OpenAI-compatible servers send for the same failures as HTTP 401/403 and 429.
AUTH_CODES = frozenset(
    {"invalid_api_key", "authentication_error", "invalid_authentication", "permission_denied", "permission_error"}
)
RATE_LIMIT_CODES = frozenset({"rate_limit_exceeded", "rate_limit_error", "too_many_requests", "insufficient_quota"})


def error_code(error: Any) -> str | None:
    """The error code a provider's SDK error carries (on the error or in its JSON body), if any."""
    body = getattr(error, "body", None)
    code = getattr(error, "code", None) or (body.get("code") if is_json_object(body) else None)
    return str(code) if code else None


def retry_after(error: Any) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms`` or ``retry-after`` in seconds), if it said."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            import email.utils
            import time

            try:  # an HTTP date
                seconds = email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
            except (TypeError, ValueError):
                continue
        return max(0.0, seconds)
    return None


def service_error(
    text: str,
    *,
    status: int | None = None,
    code: str | None = None,
    body: Any = None,
    retry_after: float | None = None,
    key_hint: str = "OPENAI_API_KEY / api_key=...",
) -> ServiceResponseError:
    """The typed error for a provider's failure, by HTTP status or error code.

    One mapping for every path: an HTTP error, an error chunk inside a Chat Completions stream, and a
    ``response.failed`` / ``error`` event inside a Responses stream type the same failure the same way.
    """
    if code in CONTENT_FILTER_CODES:
        return ContentFilterError(text, status_code=status, body=body)
    if status in (401, 403) or code in AUTH_CODES:
        return ServiceAuthenticationError(text + f" (check {key_hint})", status_code=status, body=body)
    if status == 429 or code in RATE_LIMIT_CODES:
        return RateLimitError(text, status_code=status, body=body, retry_after=retry_after)
    return ServiceResponseError(text, status_code=status, body=body)


def usage_details(
    input_tokens: int | None,
    output_tokens: int | None,
    total_tokens: int | None,
    *,
    cached_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> UsageDetails:
    """Usage in agentnb's keys; cached and reasoning counts go in extra keys when reported."""
    details: dict[str, Any] = {}
    if input_tokens is not None:
        details["input_token_count"] = input_tokens
    if output_tokens is not None:
        details["output_token_count"] = output_tokens
    if total_tokens is None and input_tokens is not None and output_tokens is not None:
        total_tokens = input_tokens + output_tokens
    if total_tokens is not None:
        details["total_token_count"] = total_tokens
    if cached_tokens:
        details["cached_input_token_count"] = cached_tokens
    if reasoning_tokens:
        details["reasoning_token_count"] = reasoning_tokens
    return cast(UsageDetails, details)


def function_result_text(content: Content) -> str:
    """What the model sees for a tool result: the result as text; for a failed call without one, the error text.

    A failed call whose result is set (the loop's "tool failed" without the exception's detail, see
    ``include_detailed_errors``) sends only that result: the detail in ``exception`` is for the caller.
    """
    if content.exception and content.result is None:
        return f"Error: {content.exception}"
    return result_to_text(content.result)


def is_image(content: Content) -> bool:
    media = content.media_type or ""
    if media.startswith("image/"):
        return True
    return (
        content.type == "uri"
        and not media
        and (content.uri or "").split("?")[0].lower().endswith((".png", ".jpg", ".jpeg", ".gif", ".webp"))
    )


def arguments_text(arguments: Any) -> str:
    """Function-call arguments as the JSON text the API expects."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments or "{}"
    return json.dumps(arguments)
