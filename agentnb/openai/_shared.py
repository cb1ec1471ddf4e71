"""What both OpenAI clients share: configuration, the SDK client, error mapping, tools, formats and usage.

The ``openai`` package is imported lazily (it takes about a second), so ``import agentnb.openai`` stays
cheap; the SDK loads when the first client is created.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any, Literal, NoReturn, cast

from .._json import is_json_array, is_json_object
from .._provider_wire import (
    arguments_text,
    error_code,
    function_result_text,
    is_image,
    retry_after,
    service_error,
    usage_details,
)
from .._types import Content
from ..exceptions import (
    ContentFilterError,
    ServiceConnectionError,
    ServiceTimeoutError,
)

__all__ = [
    "arguments_text",
    "content_filter_error",
    "function_result_text",
    "is_image",
    "map_openai_error",
    "response_format_schema",
    "retry_after",
    "service_error",
    "strict_tool_schema",
    "tool_specs",
    "usage_details",
]


# --- errors -------------------------------------------------------------------------------------------


def _server_message(error: Any) -> str:
    body = getattr(error, "body", None)
    if is_json_object(body):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    return str(getattr(error, "message", None) or error)


def map_openai_error(error: BaseException, *, api: str, partial_text: str | None = None) -> NoReturn:
    """Raise the ``agentnb.exceptions`` error for an ``openai`` SDK exception, keeping status and message.

    ``partial_text`` is the text a stream had delivered when the error came (``None`` before the server
    answered at all): a connection error then means the connection dropped mid-response, not that the
    server could not be reached.
    """
    import openai

    where = f"OpenAI {api} request"
    if isinstance(error, openai.APITimeoutError):
        raise ServiceTimeoutError(
            f"{where} timed out; raise timeout=... on the client if the model is slow."
        ) from error
    if isinstance(error, openai.APIConnectionError):
        url = getattr(getattr(error, "request", None), "url", None) or "the server"
        if partial_text is not None:
            raise ServiceConnectionError(
                f"{where}: the connection to {url} dropped mid-response, after {len(partial_text)} characters "
                "of text had arrived (kept on the error as partial_text). Retry the request; if it keeps "
                "happening, check the server's or proxy's logs and timeouts.",
                partial_text=partial_text,
            ) from error
        detail = str(error).rstrip(".")
        raise ServiceConnectionError(
            f"{where} could not reach {url}: {detail}. Check base_url / OPENAI_BASE_URL and that the server is running."
        ) from error
    if isinstance(error, openai.ContentFilterFinishReasonError):
        raise ContentFilterError(f"{where} was blocked by the content filter.") from error
    if isinstance(error, openai.APIError):
        status = getattr(error, "status_code", None)
        message = _server_message(error)
        text = f"{where} failed with HTTP {status}: {message}" if status else f"{where} failed: {message}"
        raise service_error(
            text,
            status=status,
            code=error_code(error),
            body=getattr(error, "body", None),
            retry_after=retry_after(error),
        ) from error
    raise error


def content_filter_error(api: str, *, partial_text: str, body: Any = None) -> ContentFilterError:
    """The error for a reply the provider cut off with finish reason ``content_filter``."""
    return ContentFilterError(
        f"OpenAI {api} reply was stopped by the provider's content filter"
        + (f" after {partial_text[:80]!r}" if partial_text else ""),
        body=body if body is not None else {"finish_reason": "content_filter", "partial_text": partial_text},
    )


# --- usage --------------------------------------------------------------------------------------------


# --- tools and formats --------------------------------------------------------------------------------


def strict_tool_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``schema`` in OpenAI's strict form, or ``None`` when strict mode would change its meaning.

    Strict mode needs every object to list all its properties as required and forbid others. A schema
    with optional parameters (defaults) is sent non-strict instead of silently making them mandatory.
    """
    result = copy.deepcopy(dict(schema))

    def visit(node: Any) -> bool:
        if is_json_array(node):
            return all(visit(item) for item in node)
        if not isinstance(node, dict):
            return True
        node = cast("dict[str, Any]", node)
        if node.get("type") == "object" or "properties" in node:
            props: dict[str, Any] = node.get("properties") or {}
            if set(node.get("required") or []) != set(props):
                return False
            extra = node.get("additionalProperties")
            if extra not in (None, False):
                return False
            node["additionalProperties"] = False
            node.setdefault("properties", {})
            node["required"] = list(props)
        return all(visit(v) for k, v in node.items() if k not in ("enum", "const", "default", "examples"))

    return result if visit(result) else None


def _tool_parts(tool: Any) -> tuple[str, str, dict[str, Any]]:
    name = tool.name
    description = getattr(tool, "description", None) or ""
    parameters: Mapping[str, Any] | None = tool.parameters() if callable(getattr(tool, "parameters", None)) else None
    return name, description, dict(parameters or {"type": "object", "properties": {}})


def tool_specs(tools: Any, api: Literal["chat", "responses"]) -> list[dict[str, Any]]:
    """Turn agentnb tools (and raw dicts, passed through) into the API's tool list."""
    specs: list[dict[str, Any]] = []
    for tool in tools or ():
        if is_json_object(tool):
            specs.append(dict(tool))
            continue
        if not hasattr(tool, "name"):
            raise TypeError(f"Cannot send {tool!r} to OpenAI as a tool; use @tool functions or a tool dict.")
        name, description, parameters = _tool_parts(tool)
        strict = strict_tool_schema(parameters)
        function: dict[str, Any] = {"name": name, "parameters": strict or parameters, "strict": strict is not None}
        if description:
            function["description"] = description
        specs.append({"type": "function", "function": function} if api == "chat" else {"type": "function", **function})
    return specs


def tool_choice_param(choice: Any, api: Literal["chat", "responses"]) -> Any:
    """Map ``tool_choice`` (``"auto"``/``"none"``/``"required"`` or a named function) to the API's shape."""
    if choice is None or isinstance(choice, str):
        if choice in (None, "auto", "none", "required"):
            return choice
        name = choice
    elif is_json_object(choice):
        function = choice.get("function")
        name = (
            choice.get("required_function_name")
            or choice.get("name")
            or (function.get("name") if is_json_object(function) else None)
        )
        if not name:
            mode = choice.get("mode")
            if mode in ("auto", "none", "required"):
                return mode
            raise ValueError(f"tool_choice {dict(choice)!r} names no function; use 'auto', 'none', 'required'.")
    else:
        raise TypeError(f"tool_choice must be a string or dict, got {type(choice).__name__}")
    return {"type": "function", "function": {"name": name}} if api == "chat" else {"type": "function", "name": name}


def response_format_schema(response_format: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, strict JSON schema)`` for a pydantic model or dataclass type, else ``None``."""
    if not isinstance(response_format, type):
        return None
    from pydantic import BaseModel, TypeAdapter

    try:
        # The SDK's own strict-schema helper, the one its ``.parse()`` methods use.
        from openai.lib._pydantic import to_strict_json_schema
    except ImportError:  # pragma: no cover - older or newer SDK layouts
        to_strict_json_schema = None
    kind = cast("type[Any]", response_format)
    target: type[BaseModel] | TypeAdapter[Any] = kind if issubclass(kind, BaseModel) else TypeAdapter(kind)
    if to_strict_json_schema is not None:
        schema = to_strict_json_schema(target)
    else:  # pragma: no cover
        schema = target.model_json_schema() if isinstance(target, type) else target.json_schema()
    return kind.__name__, schema


# --- messages -----------------------------------------------------------------------------------------


def data_uri(content: Content) -> str:
    uri = content.uri_or_data_uri
    if not uri:
        raise ValueError(f"{content!r} has no data or URI to send.")
    return uri


def unsupported(content: Content, role: str, api: str) -> ValueError:
    return ValueError(
        f"OpenAI {api} cannot take a {content.type!r} content"
        + (f" of type {content.media_type!r}" if content.media_type else "")
        + f" in a {role} message; send images (data or URL), PDFs, audio (wav/mp3) or text."
    )


# ChatOptions keys both clients translate themselves; any other key that names a ``create()`` parameter
# (frequency_penalty, logit_bias, metadata, store, ...) is passed through unchanged.
TRANSLATED_OPTIONS = frozenset(
    {
        "model_id",
        "temperature",
        "top_p",
        "max_tokens",
        "stop",
        "seed",
        "tools",
        "tool_choice",
        "response_format",
        "instructions",
        "allow_multiple_tool_calls",
        "user",
        "reasoning_effort",
        "conversation_id",
        "additional_properties",
        "stream",
        "model",
    }
)
_CREATE_PARAMETERS: dict[str, frozenset[str]] = {}


def passthrough_options(options: Mapping[str, Any], create: Any, *, translated: frozenset[str]) -> dict[str, Any]:
    """Options that name a parameter of the SDK's ``create`` and that the client does not translate itself."""
    key = getattr(create, "__qualname__", repr(create))
    allowed = _CREATE_PARAMETERS.get(key)
    if allowed is None:
        allowed = _CREATE_PARAMETERS[key] = frozenset(inspect.signature(create).parameters)
    return {k: v for k, v in options.items() if k not in translated and k in allowed and v is not None}
