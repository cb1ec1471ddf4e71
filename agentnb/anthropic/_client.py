"""A chat client for Anthropic's Messages API, over the official ``anthropic`` SDK.

It implements the single-method seam (``_inner_get_response(*, messages, stream, options)``), so the tool
loop, middleware, approval and telemetry are the same as for every other client. Thinking blocks come back
as reasoning content carrying their signature, and go back to the API in front of the tool calls they
belong to, as the API requires when extended thinking is on.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, NoReturn, TypedDict, cast

from typing_extensions import TypeVar

from .._clients import BaseChatClient
from .._json import is_json_object
from .._provider_wire import (
    arguments_text,
    function_result_text,
    is_image,
    retry_after,
    service_error,
    usage_details,
)
from .._types import ChatOptions, ChatResponse, ChatResponseUpdate, Content, Message, ResponseStream, UsageDetails
from ..exceptions import (
    ContentFilterError,
    ServiceConnectionError,
    ServiceInitializationError,
    ServiceTimeoutError,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.lib.bedrock import AsyncAnthropicBedrock
    from anthropic.lib.vertex import AsyncAnthropicVertex
    from anthropic.types import Message as AnthropicMessage

    # The SDK clients the Messages API is reached through: Anthropic's own, AWS Bedrock's, Google Vertex's.
    AnthropicSDKClient = AsyncAnthropic | AsyncAnthropicBedrock | AsyncAnthropicVertex

__all__ = [
    "ANTHROPIC_DEFAULT_MAX_TOKENS",
    "AnthropicChatOptions",
    "AnthropicClient",
    "ThinkingConfig",
    "given_or_built",
    "map_anthropic_error",
    "sdk_options",
]

ANTHROPIC_DEFAULT_MAX_TOKENS = 1024
_API = "Messages"

FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


class ThinkingConfig(TypedDict, total=False):
    """Extended thinking: ``{"type": "enabled", "budget_tokens": 2048}`` (the budget counts toward max_tokens)."""

    type: Literal["enabled", "disabled"]
    budget_tokens: int


ResponseModelT = TypeVar("ResponseModelT", default=Any)
SDKClientT = TypeVar("SDKClientT")


class AnthropicChatOptions(ChatOptions[ResponseModelT], Generic[ResponseModelT], total=False):
    """Options the Messages API adds to :class:`~agentnb.ChatOptions`.

    ``stop`` is sent as ``stop_sequences``, ``instructions`` as ``system``, ``user`` as ``metadata.user_id``;
    ``max_tokens`` defaults to 1024 (the API requires it); ``additional_beta_flags`` adds beta features to the
    client's for one request.
    """

    top_k: int
    service_tier: Literal["auto", "standard_only"]
    thinking: ThinkingConfig
    metadata: dict[str, Any]
    container: dict[str, Any]
    additional_beta_flags: list[str]


# ChatOptions keys translated below; other keys naming a ``messages.create`` parameter pass through.
_TRANSLATED = frozenset(
    {
        "model_id",
        "model",
        "max_tokens",
        "stop",
        "tools",
        "tool_choice",
        "response_format",
        "instructions",
        "allow_multiple_tool_calls",
        "user",
        "additional_properties",
        "stream",
        "seed",
        "conversation_id",
        "reasoning_effort",
        "additional_beta_flags",
    }
)
_PASSTHROUGH = frozenset({"temperature", "top_p", "top_k", "service_tier", "thinking", "metadata", "container"})


class AnthropicClient(BaseChatClient[AnthropicChatOptions]):
    """Talks to Claude through the Messages API (or any server that speaks it).

    Arguments win over the environment: ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` and
    ``ANTHROPIC_CHAT_MODEL``. A caller's ``anthropic_client`` is used as it is and never closed.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.anthropic import AnthropicClient

        agent = Agent(AnthropicClient(model="claude-sonnet-4-5"), "You are concise.")
        print((await agent.run("Name three primes.")).text)
        ```

    Args:
        model: The model name.
        api_key: The API key.
        base_url: The API root (``https://api.anthropic.com`` when omitted).
        anthropic_client: A configured ``anthropic.AsyncAnthropic`` to use instead of building one.
        timeout: Seconds to wait for an answer (the SDK's default when omitted).
        max_retries: Retries on connection errors, 408/409/429 and 5xx (the SDK's default, 2, when omitted).
        additional_beta_flags: Beta features to turn on for every request (the ``anthropic-beta`` header); a
            request adds its own with the ``additional_beta_flags`` option.
    """

    OTEL_PROVIDER_NAME: str = "anthropic"
    #: What an error tells the caller to check when the service refuses the credentials / cannot be reached.
    CREDENTIALS_HINT: ClassVar[str] = "ANTHROPIC_API_KEY / api_key=..."
    ENDPOINT_HINT: ClassVar[str] = "base_url / ANTHROPIC_BASE_URL"

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        anthropic_client: AnthropicSDKClient | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        additional_beta_flags: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        model = model or kwargs.pop("model_id", None) or os.environ.get("ANTHROPIC_CHAT_MODEL")
        if not model:
            raise ServiceInitializationError(
                f"{type(self).__name__} needs a model: pass model=... (e.g. 'claude-sonnet-4-5') or set "
                "ANTHROPIC_CHAT_MODEL."
            )
        super().__init__(model_id=model, **kwargs)
        self.additional_beta_flags: list[str] = list(additional_beta_flags or ())
        if anthropic_client is not None:
            if api_key is not None or base_url is not None:
                raise ValueError(
                    f"{type(self).__name__}: pass either anthropic_client=... or api_key/base_url, not both; "
                    "configure the SDK client itself."
                )
            self.anthropic_client = anthropic_client
            self._owns_client = False
        else:
            self.anthropic_client = _build_client(api_key, base_url, timeout, max_retries)
            self._owns_client = True
        self.base_url = str(self.anthropic_client.base_url)

    @property
    def model(self) -> str | None:
        """The reference's name for :attr:`model_id`."""
        return self.model_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, base_url={self.base_url!r})"

    def service_url(self) -> str | None:
        """The API root requests go to."""
        return self.base_url

    async def close(self) -> None:
        """Close the HTTP connections (only when this client created the SDK client)."""
        if self._owns_client:
            await self.anthropic_client.close()

    # -- the seam ----------------------------------------------------------------------------------------

    def _inner_get_response(  # pyright: ignore[reportIncompatibleMethodOverride]  # the single-method form
        self, *, messages: Sequence[Message], stream: bool = False, options: Mapping[str, Any], **kwargs: Any
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        params = self._request(messages, options)
        if stream:
            return ResponseStream(self._stream(params), ChatResponse.from_updates)
        return self._create(params, options)

    async def _create(self, params: dict[str, Any], options: Mapping[str, Any]) -> ChatResponse:
        import anthropic

        try:
            create = cast("Callable[..., Awaitable[AnthropicMessage]]", self.anthropic_client.messages.create)
            message = await create(**params)
        except anthropic.AnthropicError as e:
            self._raise_mapped(e)
        contents = [c for block in message.content if (c := _content_of(block)) is not None]
        finish_reason = FINISH_REASONS.get(message.stop_reason or "", message.stop_reason)
        if finish_reason == "content_filter":
            raise _refusal("".join(c.text or "" for c in contents if c.type == "text"))
        return ChatResponse(
            messages=[Message("assistant", contents, message_id=message.id)],
            response_id=message.id,
            model_id=message.model,
            finish_reason=finish_reason,
            usage_details=_usage(message.usage),
            response_format=options.get("response_format")
            if isinstance(options.get("response_format"), type)
            else None,
            raw_representation=message,
        )

    async def _stream(self, params: dict[str, Any]) -> AsyncIterator[ChatResponseUpdate]:
        import anthropic

        try:
            start = cast("Callable[..., Awaitable[Any]]", self.anthropic_client.messages.create)
            events = await start(**params, stream=True)
        except anthropic.AnthropicError as e:
            self._raise_mapped(e)
        blocks: dict[int, dict[str, Any]] = {}  # tool calls and thinking signatures, assembled per block
        text: list[str] = []
        message_id = model_id = None
        input_tokens = 0
        try:
            async for event in cast("AsyncIterable[Any]", events):
                update = ChatResponseUpdate(role="assistant", response_id=message_id, message_id=message_id)
                if event.type == "message_start":
                    message_id, model_id = event.message.id, event.message.model
                    input_tokens = event.message.usage.input_tokens or 0
                    continue
                if event.type == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        blocks[event.index] = {"kind": "tool_use", "id": block.id, "name": block.name, "json": ""}
                    elif block.type == "thinking":
                        blocks[event.index] = {"kind": "thinking", "signature": block.signature or None}
                    elif block.type == "redacted_thinking":
                        update.contents.append(_redacted(block.data))
                    elif block.type == "text" and block.text:
                        text.append(block.text)
                        update.contents.append(Content.from_text(block.text))
                elif event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        text.append(delta.text)
                        update.contents.append(Content.from_text(delta.text))
                    elif delta.type == "thinking_delta":
                        update.contents.append(Content.from_reasoning(delta.thinking))
                    elif delta.type == "signature_delta":
                        blocks.setdefault(event.index, {"kind": "thinking"})["signature"] = delta.signature
                    elif delta.type == "input_json_delta":
                        blocks.setdefault(event.index, {"kind": "tool_use", "id": "", "name": "", "json": ""})
                        blocks[event.index]["json"] += delta.partial_json
                elif event.type == "content_block_stop":
                    done = blocks.pop(event.index, None)
                    if done is not None and done["kind"] == "tool_use":
                        arguments = done["json"] or "{}"
                        update.contents.append(Content.from_function_call(done["id"], done["name"], arguments))
                    elif done is not None and done.get("signature"):
                        # The signature ends the block: it seals the thinking streamed before it.
                        update.contents.append(Content.from_reasoning("", protected_data=done["signature"]))
                elif event.type == "message_delta":
                    reason = event.delta.stop_reason
                    update.finish_reason = FINISH_REASONS.get(reason or "", reason)
                    update.model_id = model_id
                    usage = usage_details(input_tokens, event.usage.output_tokens, None)
                    update.contents.append(Content.from_usage(usage))
                    if update.finish_reason == "content_filter":
                        raise _refusal("".join(text))
                else:
                    continue
                if update.contents or update.finish_reason:
                    update.raw_representation = event
                    yield update
        except anthropic.AnthropicError as e:
            self._raise_mapped(e, partial_text="".join(text))
        except Exception as e:
            if not _is_transport_error(e):
                raise
            # The SDK lets a connection dropped mid-stream surface as its HTTP library's own error.
            url = self.base_url
            raise ServiceConnectionError(
                f"Anthropic {_API} request: the connection to {url} dropped mid-response, after {len(''.join(text))} "
                "characters of text had arrived (kept on the error as partial_text). Retry the request.",
                partial_text="".join(text),
            ) from e
        finally:
            # Closing releases the HTTP stream: a cancelled or abandoned run hangs up on the server.
            await events.close()

    def _raise_mapped(self, error: BaseException, *, partial_text: str | None = None) -> NoReturn:
        map_anthropic_error(
            error, partial_text=partial_text, key_hint=self.CREDENTIALS_HINT, endpoint_hint=self.ENDPOINT_HINT
        )

    # -- request -----------------------------------------------------------------------------------------

    def _request(self, messages: Sequence[Message], options: Mapping[str, Any]) -> dict[str, Any]:
        system = [m.text for m in messages if m.role == "system" and m.text]
        instructions = options.get("instructions")
        if instructions:
            system.insert(0, instructions if isinstance(instructions, str) else "\n\n".join(instructions))
        params: dict[str, Any] = {
            "model": options.get("model_id") or options.get("model") or self.model_id,
            "max_tokens": options.get("max_tokens") or ANTHROPIC_DEFAULT_MAX_TOKENS,
            "messages": _wire_messages([m for m in messages if m.role != "system"]),
        }
        if system:
            params["system"] = "\n\n".join(system)
        if options.get("stop") is not None:
            stop = options["stop"]
            params["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        params.update({k: v for k, v in options.items() if k in _PASSTHROUGH and v is not None})
        if options.get("user"):
            params["metadata"] = {"user_id": options["user"], **dict(params.get("metadata") or {})}
        tools = _tool_specs(options.get("tools"))
        if tools:
            params["tools"] = tools
            choice = _tool_choice(options.get("tool_choice"), options.get("allow_multiple_tool_calls"))
            if choice is not None:
                params["tool_choice"] = choice
        response_format = options.get("response_format")
        if response_format is not None:
            params["output_config"] = {"format": {"type": "json_schema", "schema": _schema_of(response_format)}}
        # Parameters this SDK version no longer names (sampling settings, newer API fields) still reach the API.
        accepted = _create_parameters(self.anthropic_client.messages.create)
        extra = {k: params.pop(k) for k in list(params) if k not in accepted}
        extra.update(options.get("additional_properties") or {})
        if extra:
            params["extra_body"] = extra
        betas = dict.fromkeys([*self.additional_beta_flags, *(options.get("additional_beta_flags") or ())])
        if betas:
            # The Bedrock SDK client moves this header into the body's ``anthropic_beta``, as Bedrock wants it.
            params["extra_headers"] = {"anthropic-beta": ",".join(betas)}
        return params


_CREATE_PARAMETERS: dict[str, frozenset[str]] = {}


def _create_parameters(create: Any) -> frozenset[str]:
    key = getattr(create, "__qualname__", repr(create))
    if key not in _CREATE_PARAMETERS:
        _CREATE_PARAMETERS[key] = frozenset(inspect.signature(create).parameters)
    return _CREATE_PARAMETERS[key]


def _build_client(
    api_key: str | None, base_url: str | None, timeout: float | None, max_retries: int | None
) -> AsyncAnthropic:
    key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
    if key is None:
        raise ServiceInitializationError(
            "AnthropicClient needs an API key: set ANTHROPIC_API_KEY (or pass api_key=...). To run without any "
            "model service, use the offline models in agentnb.local."
        )
    try:
        from anthropic import AsyncAnthropic
    except ImportError as e:  # pragma: no cover - the extra is installed in tests
        raise ImportError('agentnb.anthropic needs the anthropic SDK: pip install "agentnb[anthropic]"') from e
    kwargs: dict[str, Any] = {"api_key": key, **sdk_options(timeout, max_retries)}
    url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
    if url is not None:
        kwargs["base_url"] = url
    return AsyncAnthropic(**kwargs)


def given_or_built(
    owner: str, given: SDKClientT | None, connection: Mapping[str, object], build: Callable[[], SDKClientT]
) -> SDKClientT:
    """The SDK client passed in, or one ``build`` makes from the connection settings; both at once is an error,
    since the given client's own configuration would silently win."""
    if given is None:
        return build()
    named = [name for name, value in connection.items() if value is not None]
    if named:
        raise ValueError(
            f"{owner}: pass either anthropic_client=... or {', '.join(named)}, not both; "
            f"configure the {type(given).__name__} instance itself."
        )
    return given


def sdk_options(timeout: float | None, max_retries: int | None) -> dict[str, Any]:
    """The SDK client's ``timeout`` / ``max_retries`` keywords for the values given (the SDK's defaults otherwise)."""
    kwargs: dict[str, Any] = {}
    if timeout is not None:
        kwargs["timeout"] = timeout
    if max_retries is not None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        kwargs["max_retries"] = max_retries
    return kwargs


# -- errors ----------------------------------------------------------------------------------------------


# The error codes AWS Bedrock (``x-amzn-ErrorType``, stream exception frames) and Google Vertex (``status``) use, as
# the Messages API's error types, so one mapping types them all.
CLOUD_ERROR_TYPES: dict[str, str] = {
    "throttlingexception": "rate_limit_error",
    "servicequotaexceededexception": "rate_limit_error",
    "accessdeniedexception": "permission_error",
    "unrecognizedclientexception": "authentication_error",
    "expiredtokenexception": "authentication_error",
    "validationexception": "invalid_request_error",
    "resourcenotfoundexception": "not_found_error",
    "modeltimeoutexception": "timeout_error",
    "serviceunavailableexception": "overloaded_error",
    "modelnotreadyexception": "overloaded_error",
    "internalserverexception": "api_error",
    "resource_exhausted": "rate_limit_error",
    "unauthenticated": "authentication_error",
    "permission_denied": "permission_error",
    "invalid_argument": "invalid_request_error",
    "not_found": "not_found_error",
    "unavailable": "overloaded_error",
    "deadline_exceeded": "timeout_error",
}


def _error_detail(error: BaseException, body: Any) -> tuple[str | None, str | None]:
    """The error's type and message from the Messages API's body, AWS's ``{"message"}`` or Google's ``{"error"}``."""
    if isinstance(body, list):
        items = cast("list[Any]", body)
        body = items[0] if len(items) == 1 else None  # Vertex wraps some errors in a one-item list
    if not is_json_object(body):
        return None, None
    detail = body.get("error")
    if is_json_object(detail):
        code, message = detail.get("type") or detail.get("status"), detail.get("message")
    else:
        code, message = body.get("__type") or body.get("type"), body.get("message") or body.get("Message")
        response = getattr(error, "response", None)
        header = response.headers.get("x-amzn-ErrorType") if response is not None else None
        code = header.split(":")[0] if isinstance(header, str) and header else code
    code = str(code) if code else None
    if code is not None:
        code = CLOUD_ERROR_TYPES.get(code.lower(), code)
    return code, str(message) if message else None


def map_anthropic_error(
    error: BaseException,
    *,
    partial_text: str | None = None,
    key_hint: str = AnthropicClient.CREDENTIALS_HINT,
    endpoint_hint: str = AnthropicClient.ENDPOINT_HINT,
) -> NoReturn:
    """Raise the ``agentnb.exceptions`` error for an ``anthropic`` SDK exception, as the OpenAI clients do.

    The hints name what to check (credentials, endpoint settings) for the service the client talks to.
    """
    import anthropic

    where = f"Anthropic {_API} request"
    if isinstance(error, anthropic.APITimeoutError):
        raise ServiceTimeoutError(
            f"{where} timed out; raise timeout=... on the client if the model is slow."
        ) from error
    if isinstance(error, anthropic.APIConnectionError):
        url = getattr(getattr(error, "request", None), "url", None) or "the server"
        if partial_text is not None:
            raise ServiceConnectionError(
                f"{where}: the connection to {url} dropped mid-response, after {len(partial_text)} characters of "
                "text had arrived (kept on the error as partial_text). Retry the request.",
                partial_text=partial_text,
            ) from error
        raise ServiceConnectionError(
            f"{where} could not reach {url}: {str(error).rstrip('.')}. Check {endpoint_hint}."
        ) from error
    if isinstance(error, anthropic.APIStatusError | anthropic.APIError):
        status = getattr(error, "status_code", None)
        body = getattr(error, "body", None)
        code, message = _error_detail(error, body)
        message = message or str(getattr(error, "message", None) or error)
        text = f"{where} failed with HTTP {status}: {message}" if status else f"{where} failed: {message}"
        raise service_error(
            text,
            status=status,
            code=str(code) if code else None,
            body=body,
            retry_after=retry_after(error),
            key_hint=key_hint,
        ) from error
    raise error


def _is_transport_error(error: BaseException) -> bool:
    """An error of the HTTP stack under the SDK (``httpx`` / ``httpcore`` and their successors)."""
    return type(error).__module__.split(".")[0].rstrip("0123456789") in ("httpx", "httpcore", "h11")


def _refusal(partial_text: str) -> ContentFilterError:
    return ContentFilterError(
        f"Anthropic {_API} reply was a refusal" + (f" after {partial_text[:80]!r}" if partial_text else ""),
        body={"stop_reason": "refusal", "partial_text": partial_text},
    )


# -- replies ---------------------------------------------------------------------------------------------


def _redacted(data: str) -> Content:
    return Content.from_reasoning(None, protected_data=data, additional_properties={"redacted": True})


def _content_of(block: Any) -> Content | None:
    if block.type == "text":
        return Content.from_text(block.text, raw_representation=block)
    if block.type == "thinking":
        return Content.from_reasoning(block.thinking, protected_data=block.signature, raw_representation=block)
    if block.type == "redacted_thinking":
        return _redacted(block.data)
    if block.type == "tool_use":
        return Content.from_function_call(block.id, block.name, json.dumps(block.input), raw_representation=block)
    return None  # server tools' blocks have no agentnb content yet


def _usage(usage: Any) -> UsageDetails | None:
    if usage is None:
        return None
    return usage_details(
        usage.input_tokens, usage.output_tokens, None, cached_tokens=getattr(usage, "cache_read_input_tokens", None)
    )


# -- messages --------------------------------------------------------------------------------------------


def _wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as the API takes them: tool results in user turns, consecutive turns of one role merged."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for c in message.contents if (b := _block(c, role)) is not None]
        if role == "assistant":
            # Thinking blocks go first: the API checks that a tool call follows the thinking that led to it.
            blocks.sort(key=lambda b: b["type"] not in ("thinking", "redacted_thinking"))
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def _block(content: Content, role: str) -> dict[str, Any] | None:
    kind = content.type
    if kind == "text":
        return {"type": "text", "text": content.text or ""} if content.text else None
    if kind == "text_reasoning" and role == "assistant":
        if content.additional_properties.get("redacted"):
            return {"type": "redacted_thinking", "data": content.protected_data or ""}
        if content.protected_data is None:
            return None  # thinking without its signature cannot be sent back
        return {"type": "thinking", "thinking": content.text or "", "signature": content.protected_data}
    if kind == "function_call" and role == "assistant":
        arguments = json.loads(arguments_text(content.arguments))
        return {"type": "tool_use", "id": content.call_id or "", "name": content.name or "", "input": arguments}
    if kind == "function_result":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": content.call_id or "",
            "content": function_result_text(content),
        }
        if content.exception and content.result is None:
            block["is_error"] = True
        return block
    if kind in ("data", "uri") and role == "user":
        return _media_block(content)
    return None


def _media_block(content: Content) -> dict[str, Any]:
    media = content.media_type or ""
    document = media == "application/pdf"
    if not (is_image(content) or document):
        raise ValueError(
            f"The Anthropic {_API} API cannot take a {content.type!r} content of type {media!r}; send images or PDFs."
        )
    kind = "document" if document else "image"
    if content.type == "uri" and not (content.uri or "").startswith("data:"):
        return {"type": kind, "source": {"type": "url", "url": content.uri}}
    encoded = (content.uri_or_data_uri or "").partition(";base64,")[2]
    return {"type": kind, "source": {"type": "base64", "media_type": media, "data": encoded}}


def _tool_specs(tools: Any) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []
    for tool in tools or ():
        if is_json_object(tool):
            specs.append(dict(tool))
            continue
        if not hasattr(tool, "name"):
            raise TypeError(f"Cannot send {tool!r} to Anthropic as a tool; use @tool functions or a tool dict.")
        schema: Mapping[str, Any] | None = tool.parameters() if callable(getattr(tool, "parameters", None)) else None
        spec: dict[str, Any] = {"name": tool.name, "input_schema": dict(schema or {"type": "object", "properties": {}})}
        if getattr(tool, "description", None):
            spec["description"] = tool.description
        specs.append(spec)
    return specs


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    """``tool_choice`` in the API's shape: auto / any (required) / none / one named tool."""
    name: str | None = None
    mode = choice
    if is_json_object(choice):
        mode = choice.get("mode", "required")
        name = choice.get("required_function_name") or choice.get("name")
    elif isinstance(choice, str) and choice not in ("auto", "none", "required"):
        mode, name = "required", choice
    if mode is None and parallel is None:
        return None
    if name:
        out: dict[str, Any] = {"type": "tool", "name": name}
    else:
        out = {"type": {"auto": "auto", "required": "any", "none": "none", None: "auto"}[mode]}
    if parallel is False and out["type"] != "none":
        out["disable_parallel_tool_use"] = True
    return out


def _schema_of(response_format: Any) -> dict[str, Any]:
    """The JSON schema for structured output, with ``additionalProperties: false`` as the API requires."""
    if is_json_object(response_format):
        inner = response_format.get("json_schema")
        schema = dict(
            inner.get("schema", {}) if is_json_object(inner) else response_format.get("schema", response_format)
        )
    else:
        from pydantic import TypeAdapter

        schema = TypeAdapter(response_format).json_schema()
    _close_objects(schema)
    return schema


def _close_objects(node: Any) -> None:
    """Set ``additionalProperties: false`` on every object of a schema (nested models included)."""
    if isinstance(node, dict):
        schema = cast("dict[str, Any]", node)
        if schema.get("type") == "object":
            schema.setdefault("additionalProperties", False)
        for value in schema.values():
            _close_objects(value)
    elif isinstance(node, list):
        for item in cast("list[Any]", node):
            _close_objects(item)
