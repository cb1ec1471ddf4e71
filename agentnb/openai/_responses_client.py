"""``OpenAIChatClient``: agentnb over the OpenAI Responses API (``/v1/responses``).

The Responses API can keep the conversation on the server: with ``options={"store": True}`` each
response's id comes back as ``conversation_id``; pass it back as ``options["conversation_id"]`` (an agent
session does this for you) and only the new messages are sent, with ``previous_response_id``.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from .._json import is_json_object
from .._types import ChatResponse, ChatResponseUpdate, Content, Message
from ..exceptions import ServiceResponseError
from ._base import OpenAIClientBase
from ._hosted import HostedToolFactories, hosted_item_contents, openai_annotation
from ._options import OpenAIContinuationToken
from ._shared import (
    TRANSLATED_OPTIONS,
    arguments_text,
    content_filter_error,
    data_uri,
    function_result_text,
    is_image,
    map_openai_error,
    passthrough_options,
    response_format_schema,
    service_error,
    tool_choice_param,
    tool_specs,
    unsupported,
    usage_details,
)
from ._validate import checked_create, checked_events

if TYPE_CHECKING:
    pass

__all__ = ["OpenAIChatClient"]

_API = "responses"
_HANDLED = TRANSLATED_OPTIONS | {"input", "previous_response_id", "continuation_token"}
_RUNNING = ("queued", "in_progress")  # a background response's states before it ends


class OpenAIChatClient(HostedToolFactories, OpenAIClientBase):
    """A chat client for the OpenAI Responses API (reasoning summaries, server-side conversation state).

    Configuration comes from the arguments, then the environment: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
    ``OPENAI_MODEL`` (default ``gpt-4o-mini``), ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT``. For servers that
    only speak Chat Completions (most local ones), use :class:`OpenAIChatCompletionClient`.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.openai import OpenAIChatClient

        agent = Agent(OpenAIChatClient(model="gpt-4o-mini"), instructions="Be brief.")
        print((await agent.run("Say hello.")).text)
        ```

    Args:
        model: The model name (``OPENAI_MODEL`` when omitted).
        api_key: The API key (``OPENAI_API_KEY`` when omitted).
        base_url: The API root (``OPENAI_BASE_URL`` when omitted).
        org_id: The OpenAI organization (``OPENAI_ORG_ID``).
        project: The OpenAI project (``OPENAI_PROJECT``).
        default_headers: Headers sent with every request.
        async_client: A configured ``openai.AsyncOpenAI`` to use instead of building one.
        timeout: Seconds to wait for an answer (the SDK's default when omitted).
        max_retries: Retries on connection errors, 408/409/429 and 5xx (the SDK's default, 2, when omitted).
        instruction_role: The role system messages are sent with (``"system"`` or ``"developer"``).
    """

    _warned_ignored = False  # set on the instance after the first warning about stop/seed

    # -- request -----------------------------------------------------------------------------------------

    def _request(self, messages: list[Message], options: Mapping[str, Any], *, stream: bool) -> dict[str, Any]:
        messages, previous = _continuation(messages, options)
        params: dict[str, Any] = {"model": options.get("model_id") or self.model_id, "input": self._input(messages)}
        if previous:
            params["previous_response_id"] = previous
        ignored = [key for key in ("stop", "seed") if options.get(key) is not None]
        if ignored and not self._warned_ignored:
            self._warned_ignored = True
            warnings.warn(
                f"The Responses API has no {' or '.join(ignored)} parameter, so OpenAIChatClient ignores it; "
                "use OpenAIChatCompletionClient if you need it.",
                UserWarning,
                stacklevel=2,
            )
        for key in ("temperature", "top_p", "user"):
            if options.get(key) is not None:
                params[key] = options[key]
        if options.get("max_tokens") is not None:
            params["max_output_tokens"] = options["max_tokens"]
        if options.get("reasoning_effort") is not None:
            params["reasoning"] = {"effort": options["reasoning_effort"], "summary": "auto"}
            if options.get("store") is False:
                # Without server-side storage, reasoning can only continue from its encrypted form.
                params["include"] = ["reasoning.encrypted_content"]
        tools = tool_specs(options.get("tools"), "responses")
        if tools:
            params["tools"] = tools
            if options.get("tool_choice") is not None:
                params["tool_choice"] = tool_choice_param(options["tool_choice"], "responses")
            if options.get("allow_multiple_tool_calls") is not None:
                params["parallel_tool_calls"] = bool(options["allow_multiple_tool_calls"])
        response_format = options.get("response_format")
        if response_format is not None:
            params["text"] = {"format": _text_format(response_format)}
        params.update(passthrough_options(options, self.client.responses.create, translated=_HANDLED))
        if stream:
            params["stream"] = True
        extra = options.get("additional_properties")
        if extra:
            params["extra_body"] = dict(extra)
        return params

    def _input(self, messages: list[Message]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for message in messages:
            role = message.role
            if role == "system":
                items.append({"role": self.instruction_role, "content": message.text})
                continue
            parts: list[dict[str, Any]] = []
            for content in message.contents:
                if content.type == "function_result":
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": content.call_id or "",
                            "output": function_result_text(content),
                        }
                    )
                elif content.type == "function_call" and role == "assistant":
                    items.append(
                        {
                            "type": "function_call",
                            "call_id": content.call_id or "",
                            "name": content.name or "",
                            "arguments": arguments_text(content.arguments),
                        }
                    )
                elif content.type == "text_reasoning" and role == "assistant" and content.protected_data:
                    # Stateless reasoning: the model needs its encrypted reasoning back next to its calls.
                    items.append(
                        {
                            "type": "reasoning",
                            "id": str(content.additional_properties.get("item_id", "")),
                            "summary": [{"type": "summary_text", "text": content.text}] if content.text else [],
                            "encrypted_content": content.protected_data,
                        }
                    )
                elif content.type == "text" and role == "assistant":
                    items.append({"role": "assistant", "content": content.text or ""})
                elif role == "user" and content.type in ("text", "data", "uri"):
                    parts.append(self._user_part(content))
            if parts:
                # Plain text goes as a string, and items without "type": the SDK transforms every nested part and
                # tries each union member, which costs more than the rest of agentnb per call.
                text_only = all(p["type"] == "input_text" for p in parts)
                content: Any = "".join(p["text"] for p in parts) if text_only else parts
                items.append({"role": "user", "content": content})
        return items

    @staticmethod
    def _user_part(content: Content) -> dict[str, Any]:
        if content.type == "text":
            return {"type": "input_text", "text": content.text or ""}
        if is_image(content):
            return {"type": "input_image", "image_url": data_uri(content), "detail": "auto"}
        if content.type == "data" and content.media_type == "application/pdf":
            filename = str(content.additional_properties.get("filename", "document.pdf"))
            return {"type": "input_file", "file_data": data_uri(content), "filename": filename}
        if content.type == "uri" and content.media_type == "application/pdf":
            return {"type": "input_file", "file_url": content.uri}
        raise unsupported(content, "user", _API)

    # -- calls -------------------------------------------------------------------------------------------

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        import openai

        token = _token_of(options)
        params = self._request(messages, options, stream=False) if token is None else {}
        try:
            if token is None:
                response = await checked_create(self.client.responses, params, api=_API)
            else:
                # Poll a background response: the token names it, so nothing is sent again.
                response = await self.client.responses.retrieve(token["response_id"])
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API)
        contents: list[Content] = []
        for item in response.output or ():
            contents.extend(_item_contents(item))
        running = response.status in _RUNNING
        finish_reason = None if running else _finish(response, contents)
        return ChatResponse(
            messages=[Message("assistant", contents, message_id=response.id)],
            response_id=response.id,
            conversation_id=_conversation_id(response.id, params),
            model_id=response.model,
            created_at=float(response.created_at) if response.created_at else None,
            finish_reason=finish_reason,
            usage_details=_usage(response.usage),
            response_format=_value_format(options),
            raw_representation=response,
            continuation_token=OpenAIContinuationToken(response_id=response.id) if running else None,
        )

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        import openai

        token = _token_of(options)
        try:
            if token is None:
                params = self._request(messages, options, stream=True)
                stream = await checked_create(self.client.responses, params, api=_API)
            else:
                # Resume a background response's stream after the last event received (all of it without one).
                params = {"background": True}
                after = token.get("sequence_number")
                responses: Any = self.client.responses
                stream = await responses.retrieve(
                    token["response_id"], stream=True, **({"starting_after": after} if after is not None else {})
                )
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API)
        state = _StreamState(params)
        try:
            async for event in checked_events(stream, api=_API):
                update = state.handle(event)
                if update is not None:
                    yield update
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API, partial_text=state.text)
        finally:
            # Closing releases the HTTP stream: a cancelled or abandoned run hangs up on the server.
            await stream.close()
        if state.error is not None:
            raise state.error


class _StreamState:
    """Turns Responses stream events into updates, tracking what has been streamed per output item."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self.response_id: str | None = None
        self.model_id: str | None = None
        self.created_at: float | None = None
        self.calls: dict[str, dict[str, str]] = {}  # item id -> call id, name, arguments streamed so far
        self.texts: dict[tuple[str, int], str] = {}  # (item id, content index) -> text streamed so far
        self.contents: list[Content] = []
        self.reasoned: set[str] = set()  # reasoning items whose text streamed as deltas
        self.error: Exception | None = None
        # A background response can be resumed: each update carries where to resume from, until it ends.
        self.background = bool(params.get("background"))
        self.sequence_number: int | None = None
        self.done = False

    def update(self, contents: list[Content], raw: Any, **kwargs: Any) -> ChatResponseUpdate:
        self.contents.extend(contents)
        token = None
        if self.background and not self.done and self.response_id is not None:
            token = OpenAIContinuationToken(response_id=self.response_id)
            if self.sequence_number is not None:
                token["sequence_number"] = self.sequence_number
        return ChatResponseUpdate(
            contents=contents,
            role="assistant",
            response_id=self.response_id,
            message_id=self.response_id,
            model_id=self.model_id,
            created_at=self.created_at,
            raw_representation=raw,
            continuation_token=token,
            **kwargs,
        )

    def handle(self, event: Any) -> ChatResponseUpdate | None:
        kind = getattr(event, "type", "")
        sequence_number = getattr(event, "sequence_number", None)
        if isinstance(sequence_number, int):
            self.sequence_number = sequence_number
        if kind in ("response.created", "response.in_progress", "response.queued"):
            response = event.response
            self.response_id = response.id
            self.model_id = response.model
            self.created_at = float(response.created_at) if response.created_at else None
            # In the background the caller gets the token at once, before any content.
            return self.update([], event) if self.background and kind == "response.created" else None
        if kind == "response.output_text.delta":
            key = (event.item_id, event.content_index)
            self.texts[key] = self.texts.get(key, "") + event.delta
            return self.update([Content.from_text(event.delta)], event)
        if kind == "response.output_text.done":
            # Some servers send only the final text; emit whatever the deltas did not cover.
            key = (event.item_id, event.content_index)
            streamed = self.texts.get(key, "")
            if event.text.startswith(streamed) and len(event.text) > len(streamed):
                self.texts[key] = event.text
                return self.update([Content.from_text(event.text[len(streamed) :])], event)
            return None
        if kind == "response.output_text.annotation.added":
            annotation = openai_annotation(event.annotation)
            if annotation is None:
                return None
            # Empty text carrying the citation: streamed text coalesces, and so do its annotations.
            return self.update([Content.from_text("", annotations=[annotation])], event)
        if kind == "response.output_item.done" and (hosted := hosted_item_contents(event.item)) is not None:
            return self.update(hosted, event)
        if kind == "response.refusal.delta":
            return self.update([Content.from_text(event.delta, additional_properties={"refusal": True})], event)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self.reasoned.add(event.item_id)
            return self.update([Content.from_reasoning(event.delta)], event)
        if kind == "response.output_item.done" and getattr(event.item, "type", None) == "reasoning":
            # The encrypted reasoning (and any text no delta carried) arrives with the finished item.
            (content,) = _item_contents(event.item)
            if event.item.id in self.reasoned:
                content.text = None
            if content.text or content.protected_data:
                return self.update([content], event)
            return None
        if kind == "response.output_item.added" and getattr(event.item, "type", None) == "function_call":
            item = event.item
            self.calls[item.id or item.call_id] = {"call_id": item.call_id, "name": item.name, "arguments": ""}
            return self.update([Content.from_function_call(item.call_id, item.name, "")], event)
        if kind == "response.function_call_arguments.delta":
            call = self.calls.get(event.item_id)
            if call is None:
                return None
            call["arguments"] += event.delta
            return self.update([Content.from_function_call(call["call_id"], call["name"], event.delta)], event)
        if kind == "response.output_item.done" and getattr(event.item, "type", None) == "function_call":
            item = event.item
            call = self.calls.get(item.id or item.call_id)
            if call is None:
                call = {"call_id": item.call_id, "name": item.name, "arguments": ""}
                self.calls[item.id or item.call_id] = call
                rest = item.arguments or ""
                contents = [Content.from_function_call(item.call_id, item.name, rest)]
            else:
                streamed = call["arguments"]
                rest = item.arguments[len(streamed) :] if item.arguments.startswith(streamed) else ""
                contents = [Content.from_function_call(item.call_id, item.name, rest)] if rest else []
            call["arguments"] += rest
            return self.update(contents, event) if contents else None
        if kind in ("response.completed", "response.incomplete"):
            self.done = True
            response = event.response
            self.response_id = response.id
            self.model_id = response.model or self.model_id
            finish_reason: str | None
            try:
                finish_reason = _finish(response, self.contents)
            except Exception as e:  # a content filter: deliver the usage, then raise
                self.error = e
                finish_reason = "content_filter"
            contents = [Content.from_usage(u)] if (u := _usage(response.usage)) else []
            return self.update(
                contents,
                event,
                finish_reason=finish_reason,
                conversation_id=_conversation_id(response.id, self.params),
            )
        if kind == "response.failed":
            error = getattr(event.response, "error", None)
            message = getattr(error, "message", None) or "the response failed"
            code = getattr(error, "code", None)
            raise service_error(
                f"OpenAI {_API} request failed: {message}", code=code, body={"code": code, "message": message}
            )
        if kind == "error":
            raise service_error(
                f"OpenAI {_API} stream reported an error: {event.message}",
                code=event.code,
                body={"code": event.code, "message": event.message, "param": event.param},
            )
        return None

    @property
    def text(self) -> str:
        """The text streamed so far."""
        return "".join(self.texts.values())


def _item_contents(item: Any) -> list[Content]:
    kind = getattr(item, "type", None)
    if kind == "message":
        contents: list[Content] = []
        for part in item.content:
            if part.type == "output_text":
                annotations = [a for raw in part.annotations or () if (a := openai_annotation(raw)) is not None]
                contents.append(Content.from_text(part.text, annotations=annotations or None, raw_representation=part))
            elif part.type == "refusal":
                contents.append(Content.from_text(part.refusal, additional_properties={"refusal": True}))
        return contents
    if kind == "reasoning":
        texts: list[str | None] = [s.text for s in item.summary or ()] + [c.text for c in item.content or ()]
        return [
            Content.from_reasoning(
                "\n\n".join(t for t in texts if t),
                protected_data=item.encrypted_content,
                additional_properties={"item_id": item.id},
                raw_representation=item,
            )
        ]
    if kind == "function_call":
        return [Content.from_function_call(item.call_id, item.name, item.arguments, raw_representation=item)]
    return hosted_item_contents(item) or []


def _finish(response: Any, contents: list[Content]) -> str | None:
    status = getattr(response, "status", None)
    if status == "failed":
        error = getattr(response, "error", None)
        message = getattr(error, "message", None) or "the response failed"
        raise ServiceResponseError(
            f"OpenAI {_API} request failed: {message}", body={"code": getattr(error, "code", None), "message": message}
        )
    if status == "incomplete":
        reason = getattr(getattr(response, "incomplete_details", None), "reason", None)
        if reason == "content_filter":
            raise content_filter_error(_API, partial_text="".join(c.text or "" for c in contents if c.type == "text"))
        return "length" if reason == "max_output_tokens" else (reason or "length")
    return "tool_calls" if any(c.type == "function_call" for c in contents) else "stop"


def _token_of(options: Mapping[str, Any]) -> OpenAIContinuationToken | None:
    """The continuation token in ``options``, checked: a dict naming the response to poll or resume."""
    token = options.get("continuation_token")
    if token is None:
        return None
    if not is_json_object(token) or not isinstance(token.get("response_id"), str):
        raise ValueError(
            f"continuation_token must be a dict with a 'response_id', as a response's continuation_token is; "
            f"got {token!r}"
        )
    return cast(OpenAIContinuationToken, token)


def _continuation(messages: list[Message], options: Mapping[str, Any]) -> tuple[list[Message], str | None]:
    """What to send when the server keeps the conversation: the messages after its last answer, and that id.

    Continuation is on when ``conversation_id`` (or ``previous_response_id``) is given or ``store`` is true.
    An assistant message this client produced carries its response id as ``message_id``; the newest one
    wins over the given id, so tool-call rounds inside one request chain correctly too.
    """
    given = options.get("conversation_id") or options.get("previous_response_id")
    if not given and options.get("store") is not True:
        return messages, None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "assistant" and (message.message_id or "").startswith("resp"):
            return messages[index + 1 :], message.message_id
    return messages, given or None


def _value_format(options: Mapping[str, Any]) -> Any:
    response_format = options.get("response_format")
    return response_format if isinstance(response_format, type) else None


def _conversation_id(response_id: str | None, params: Mapping[str, Any]) -> str | None:
    """The response id doubles as the conversation id when the server keeps the conversation."""
    if params.get("store") is True or params.get("previous_response_id"):
        return response_id
    return None


def _text_format(response_format: Any) -> dict[str, Any]:
    schema = response_format_schema(response_format)
    if schema is not None:
        name, json_schema = schema
        return {"type": "json_schema", "name": name, "schema": json_schema, "strict": True}
    if is_json_object(response_format):
        fmt = dict(response_format)
        if fmt.get("type") == "json_schema" and is_json_object(fmt.get("json_schema")):
            # Accept the Chat Completions shape too.
            return {"type": "json_schema", **fmt["json_schema"]}
        return fmt
    raise TypeError(f"response_format must be a pydantic model, a dataclass or a dict, got {response_format!r}")


def _usage(usage: Any) -> Any:
    if usage is None:
        return None
    return usage_details(
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens,
        cached_tokens=getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", None),
        reasoning_tokens=getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", None),
    )
