"""``OpenAIChatCompletionClient``: agentnb over the OpenAI Chat Completions API (``/v1/chat/completions``).

This is the API nearly every OpenAI-compatible server speaks (Ollama, vLLM, llama.cpp, LM Studio), so it
is the client to use for local models.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from .._annotations import Annotation, TextSpanRegion
from .._json import is_json_array, is_json_object
from .._types import ChatResponse, ChatResponseUpdate, Content, Message
from ._base import OpenAIClientBase
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
    tool_choice_param,
    tool_specs,
    unsupported,
    usage_details,
)
from ._validate import checked_create, checked_events

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessage
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

__all__ = ["OpenAIChatCompletionClient", "OpenAIChatMessagePreparer", "OpenAIChatResponseContentsParser"]

OpenAIChatResponseContentsParser: TypeAlias = Callable[
    ["ChatCompletionMessage | ChoiceDelta", list[Content]], list[Content]
]
"""A hook that reads what a server sends outside the standard fields: ``(message_or_delta, contents) -> contents``.

Called with the SDK's ``ChatCompletionMessage`` (a whole answer) or ``ChoiceDelta`` (each streamed delta) and
the contents the client parsed from it, it returns the contents to use. Provider fields are attributes of the
SDK object (``getattr(message, "thinking", None)``). Returning the list unchanged changes nothing.
The client already reads ``reasoning_content`` and ``reasoning`` as reasoning text, and keeps
``reasoning_details`` as the reasoning's protected data (sent back with the turn it came with).
"""

OpenAIChatMessagePreparer: TypeAlias = Callable[[Message, list[dict[str, Any]]], list[dict[str, Any]]]
"""A hook that shapes what is sent for each message: ``(message, dicts) -> dicts``.

Called once per :class:`Message` of the request (system messages included) with the Chat Completions message
dicts the client built from it, it returns the dicts to send: the way to echo a provider's reasoning field back
on later turns, as some servers require. Returning the list unchanged changes nothing.
"""

_API = "chat completions"
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
# ChatOptions keys this client translates itself; any other key that names a ``create()`` parameter
# (frequency_penalty, logit_bias, metadata, store, ...) is passed through unchanged.
_HANDLED = TRANSLATED_OPTIONS | {"messages"}


def _url_citation(raw: Any) -> Annotation | None:
    """A Chat Completions ``url_citation`` annotation as an :class:`Annotation`."""
    citation = getattr(raw, "url_citation", None)
    if citation is None:
        return None
    return Annotation(
        type="citation",
        title=citation.title,
        url=citation.url,
        annotated_regions=[
            TextSpanRegion(type="text_span", start_index=citation.start_index, end_index=citation.end_index)
        ],
    )


class OpenAIChatCompletionClient(OpenAIClientBase):
    """A chat client for the OpenAI Chat Completions API, or any server that speaks it.

    Configuration comes from the arguments, then the environment: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
    ``OPENAI_MODEL`` (default ``gpt-4o-mini``), ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT``. A base URL
    without a key works (local servers ignore the key). Retries and timeouts follow the SDK's settings.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.openai import OpenAIChatCompletionClient

        # Ollama: OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2
        agent = Agent(OpenAIChatCompletionClient(), instructions="Be brief.")
        print((await agent.run("Say hello.")).text)
        ```

    Args:
        model: The model name (``OPENAI_MODEL`` when omitted).
        api_key: The API key (``OPENAI_API_KEY`` when omitted).
        base_url: The API root, e.g. ``http://localhost:11434/v1`` (``OPENAI_BASE_URL`` when omitted).
        org_id: The OpenAI organization (``OPENAI_ORG_ID``).
        project: The OpenAI project (``OPENAI_PROJECT``).
        default_headers: Headers sent with every request.
        async_client: A configured ``openai.AsyncOpenAI`` to use instead of building one.
        timeout: Seconds to wait for an answer (the SDK's default when omitted).
        max_retries: Retries on connection errors, 408/409/429 and 5xx (the SDK's default, 2, when omitted).
        instruction_role: The role system messages are sent with (``"developer"`` for o-series models).
        response_parser: Reshapes the contents parsed from each answer or streamed delta
            (:data:`OpenAIChatResponseContentsParser`), e.g. to surface a provider's own fields.
        message_preparer: Reshapes the message dicts sent for each message (:data:`OpenAIChatMessagePreparer`),
            e.g. to echo a provider's reasoning field back.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        response_parser: OpenAIChatResponseContentsParser | None = None,
        message_preparer: OpenAIChatMessagePreparer | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model, **kwargs)
        self.response_parser = response_parser
        self.message_preparer = message_preparer

    @staticmethod
    def get_web_search_tool(*, web_search_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Web search for search-capable models: sent as ``web_search_options``, cited as ``url_citation``s."""
        return {"type": "web_search", **dict(web_search_options or {})}

    # -- request -----------------------------------------------------------------------------------------

    def _request(self, messages: list[Message], options: Mapping[str, Any], *, stream: bool) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": options.get("model_id") or self.model_id,
            "messages": self._messages(messages),
        }
        for key in ("temperature", "top_p", "seed", "stop", "user", "reasoning_effort"):
            if options.get(key) is not None:
                params[key] = options[key]
        if options.get("max_tokens") is not None:
            params["max_completion_tokens"] = options["max_tokens"]
        # Chat Completions takes web search as a request parameter, not as a tool.
        tools = [t for t in tool_specs(options.get("tools"), "chat") if t.get("type") != "web_search"]
        search = next(
            (t for t in options.get("tools") or () if is_json_object(t) and t.get("type") == "web_search"), None
        )
        if search is not None:
            params["web_search_options"] = {k: v for k, v in search.items() if k != "type"}
        if tools:
            params["tools"] = tools
            if options.get("tool_choice") is not None:
                params["tool_choice"] = tool_choice_param(options["tool_choice"], "chat")
            if options.get("allow_multiple_tool_calls") is not None:
                params["parallel_tool_calls"] = bool(options["allow_multiple_tool_calls"])
        response_format = options.get("response_format")
        if response_format is not None:
            schema = response_format_schema(response_format)
            if schema is not None:
                name, json_schema = schema
                params["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": json_schema, "strict": True},
                }
            elif is_json_object(response_format):
                params["response_format"] = dict(response_format)
            else:
                raise TypeError(
                    f"response_format must be a pydantic model, a dataclass or a dict, got {response_format!r}"
                )
        params.update(passthrough_options(options, self.client.chat.completions.create, translated=_HANDLED))
        if stream:
            params["stream"] = True
            params.setdefault("stream_options", {"include_usage": True})
        extra = options.get("additional_properties")
        if extra:
            params["extra_body"] = dict(extra)
        return params

    def _messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        wire: list[dict[str, Any]] = []
        preparer = self.message_preparer
        for message in messages:
            dicts = self._message_dicts(message)
            wire.extend(dicts if preparer is None else preparer(message, dicts))
        return wire

    def _message_dicts(self, message: Message) -> list[dict[str, Any]]:
        """The Chat Completions messages one :class:`Message` becomes (none, one, or several)."""
        role = message.role
        results = [c for c in message.contents if c.type == "function_result"]
        others = [c for c in message.contents if c.type != "function_result"]
        dicts: list[dict[str, Any]] = []
        if role == "system":
            dicts.append({"role": self.instruction_role, "content": message.text})
        elif role == "assistant":
            dicts.extend(self._assistant(message, others))
        elif role == "user":
            parts = self._user_parts(others)
            if parts is not None:
                entry: dict[str, Any] = {"role": "user", "content": parts}
                if message.author_name:
                    entry["name"] = _wire_name(message.author_name)
                dicts.append(entry)
        # Tool results are their own messages, whatever message carried them.
        for result in results:
            dicts.append(
                {"role": "tool", "tool_call_id": result.call_id or "", "content": function_result_text(result)}
            )
        return dicts

    def _assistant(self, message: Message, contents: list[Content]) -> list[dict[str, Any]]:
        text = "".join(c.text or "" for c in contents if c.type == "text")
        calls = [
            {
                "id": c.call_id or "",
                "type": "function",
                "function": {"name": c.name or "", "arguments": arguments_text(c.arguments)},
            }
            for c in contents
            if c.type == "function_call"
        ]
        if not text and not calls:
            return []
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            entry["tool_calls"] = calls
        details = _sent_reasoning_details(contents)
        if details:
            # Providers that send reasoning_details (OpenRouter, ...) want them back with the turn they came
            # with; some refuse the tool results of a reasoning turn without them.
            entry["reasoning_details"] = details
        if message.author_name:
            entry["name"] = _wire_name(message.author_name)
        return [entry]

    def _user_parts(self, contents: list[Content]) -> str | list[dict[str, Any]] | None:
        sendable = [c for c in contents if c.type in ("text", "data", "uri")]
        if not sendable:
            return None
        if all(c.type == "text" for c in sendable):
            return "".join(c.text or "" for c in sendable)
        parts: list[dict[str, Any]] = []
        for content in sendable:
            if content.type == "text":
                parts.append({"type": "text", "text": content.text or ""})
            elif is_image(content):
                parts.append({"type": "image_url", "image_url": {"url": data_uri(content)}})
            elif content.type == "data" and content.media_type in _AUDIO_FORMATS:
                encoded = data_uri(content).partition(";base64,")[2]
                parts.append(
                    {
                        "type": "input_audio",
                        "input_audio": {"data": encoded, "format": _AUDIO_FORMATS[content.media_type]},
                    }
                )
            elif content.type == "data" and content.media_type == "application/pdf":
                filename = str(content.additional_properties.get("filename", "document.pdf"))
                parts.append({"type": "file", "file": {"file_data": data_uri(content), "filename": filename}})
            else:
                raise unsupported(content, "user", _API)
        return parts

    # -- calls -------------------------------------------------------------------------------------------

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        import openai

        params = self._request(messages, options, stream=False)
        try:
            completion = await checked_create(self.client.chat.completions, params, api=_API)
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API)
        return self._parse_completion(completion, options)

    def _parse_completion(self, completion: Any, options: Mapping[str, Any]) -> ChatResponse:
        contents: list[Content] = []
        finish_reason: str | None = None
        if completion.choices:
            choice = completion.choices[0]
            finish_reason = _finish_reason(choice.finish_reason)
            message = choice.message
            reasoning = _reasoning_of(message)
            details = _reasoning_details_of(message)
            if reasoning or details:
                contents.append(
                    Content.from_reasoning(reasoning, protected_data=json.dumps(details) if details else None)
                )
            # Text only: a list of typed parts (Mistral's reasoning models) is left to a response_parser.
            if isinstance(message.content, str) and message.content:
                annotations = [a for raw in message.annotations or () if (a := _url_citation(raw)) is not None]
                contents.append(
                    Content.from_text(message.content, annotations=annotations or None, raw_representation=message)
                )
            if message.refusal:
                contents.append(Content.from_text(message.refusal, additional_properties={"refusal": True}))
            for call in message.tool_calls or ():
                function = getattr(call, "function", None)
                if function is None:  # custom (non-function) tool calls have no agentnb equivalent
                    continue
                contents.append(
                    Content.from_function_call(call.id, function.name, function.arguments, raw_representation=call)
                )
            if self.response_parser is not None:
                contents = list(self.response_parser(message, contents))
        usage = _usage(completion.usage)
        if finish_reason == "content_filter":
            raise content_filter_error(_API, partial_text="".join(c.text or "" for c in contents if c.type == "text"))
        return ChatResponse(
            messages=[Message("assistant", contents, message_id=completion.id)],
            response_id=completion.id,
            model_id=completion.model,
            created_at=float(completion.created) if completion.created else None,
            finish_reason=finish_reason,
            usage_details=usage,
            response_format=_value_format(options),
            raw_representation=completion,
        )

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        import openai
        from openai.types.chat.chat_completion_chunk import ChoiceDelta

        params = self._request(messages, options, stream=True)
        try:
            stream = await checked_create(self.client.chat.completions, params, api=_API)
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API)
        # Tool-call fragments arrive by index (and parallel calls may interleave): assemble each call
        # whole and emit it when the choice finishes, so arguments are never split across contents.
        calls: dict[int, dict[str, str]] = {}
        details: list[dict[str, Any]] = []  # reasoning_details fragments, joined when the choice finishes
        finish_reason: str | None = None
        text: list[str] = []
        response_id = model_id = None
        created_at: float | None = None
        try:
            async for chunk in checked_events(stream, api=_API):
                response_id = chunk.id or response_id
                model_id = chunk.model or model_id
                created_at = created_at or (float(chunk.created) if chunk.created else None)
                contents: list[Content] = []
                chunk_finish: str | None = None
                for choice in chunk.choices[:1]:
                    delta = choice.delta
                    # Azure and some gateways send "delta": null on the finish chunk; the SDK does not check.
                    if delta is None:  # pyright: ignore[reportUnnecessaryComparison]
                        delta = ChoiceDelta()
                    reasoning = _reasoning_of(delta)
                    if reasoning:
                        contents.append(Content.from_reasoning(reasoning))
                    details.extend(_reasoning_details_of(delta))
                    if isinstance(delta.content, str) and delta.content:
                        text.append(delta.content)
                        contents.append(Content.from_text(delta.content))
                    if delta.refusal:
                        contents.append(Content.from_text(delta.refusal, additional_properties={"refusal": True}))
                    for fragment in delta.tool_calls or ():
                        call = calls.setdefault(fragment.index, {"id": "", "name": "", "arguments": ""})
                        call["id"] = fragment.id or call["id"]
                        if fragment.function is not None:
                            call["name"] = fragment.function.name or call["name"]
                            call["arguments"] += fragment.function.arguments or ""
                    if choice.finish_reason:
                        chunk_finish = finish_reason = _finish_reason(choice.finish_reason)
                        contents.extend(_flush_details(details))
                        contents.extend(_flush(calls))
                    if self.response_parser is not None:
                        contents = list(self.response_parser(delta, contents))
                if chunk.usage is not None:
                    contents.append(Content.from_usage(_usage(chunk.usage) or {}))
                if contents or chunk_finish:
                    yield ChatResponseUpdate(
                        contents=contents,
                        role="assistant",
                        response_id=response_id,
                        message_id=response_id,
                        model_id=model_id,
                        created_at=created_at,
                        finish_reason=chunk_finish,
                        raw_representation=chunk,
                    )
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API, partial_text="".join(text))
        finally:
            # Closing releases the HTTP stream: a cancelled or abandoned run hangs up on the server.
            await stream.close()
        leftover = [*_flush_details(details), *_flush(calls)]
        if leftover:  # servers that end the stream without a finish reason
            yield ChatResponseUpdate(
                contents=leftover, role="assistant", response_id=response_id, message_id=response_id
            )
        if finish_reason == "content_filter":
            raise content_filter_error(_API, partial_text="".join(text))


def _wire_name(name: str) -> str:
    """An author name as the API accepts it (``^[a-zA-Z0-9_-]{1,64}$``): agent names may contain spaces."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "_"


def _flush(calls: dict[int, dict[str, str]]) -> list[Content]:
    contents = [
        Content.from_function_call(call["id"], call["name"], call["arguments"]) for _, call in sorted(calls.items())
    ]
    calls.clear()
    return contents


def _reasoning_of(message: Any) -> str | None:
    """Reasoning text from the extensions servers use (vLLM/DeepSeek ``reasoning_content``, others ``reasoning``)."""
    extra: Mapping[str, Any] = getattr(message, "model_extra", None) or {}
    for key in ("reasoning_content", "reasoning"):
        value = extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _reasoning_details_of(message: Any) -> list[dict[str, Any]]:
    """The ``reasoning_details`` entries some providers (OpenRouter, ...) add to a message or delta."""
    extra: Mapping[str, Any] = getattr(message, "model_extra", None) or {}
    value = extra.get("reasoning_details")
    if not is_json_array(value):
        return []
    return [dict(entry) for entry in value if is_json_object(entry)]


def _flush_details(fragments: list[dict[str, Any]]) -> list[Content]:
    """Streamed ``reasoning_details`` fragments as one reasoning content that keeps them (joined by index)."""
    if not fragments:
        return []
    joined: dict[Any, dict[str, Any]] = {}
    for position, fragment in enumerate(fragments):
        key = fragment.get("index", f"at {position}")
        entry = joined.setdefault(key, {})
        for field, value in fragment.items():
            previous = entry.get(field)
            if field in ("text", "summary") and isinstance(previous, str) and isinstance(value, str):
                entry[field] = previous + value
            elif value is not None:
                entry[field] = value
    fragments.clear()
    return [Content.from_reasoning(None, protected_data=json.dumps(list(joined.values())))]


def _sent_reasoning_details(contents: list[Content]) -> list[Any]:
    """The ``reasoning_details`` kept in an assistant turn's reasoning contents (other providers' data skipped)."""
    details: list[Any] = []
    for content in contents:
        if content.type != "text_reasoning" or not content.protected_data:
            continue
        try:
            value = json.loads(content.protected_data)
        except ValueError:  # a signature or encrypted reasoning from another API
            continue
        if is_json_array(value):
            details.extend(value)
    return details


def _finish_reason(reason: str | None) -> str | None:
    return "tool_calls" if reason == "function_call" else reason


def _usage(usage: Any) -> Any:
    if usage is None:
        return None
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return usage_details(
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        cached_tokens=getattr(prompt_details, "cached_tokens", None),
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None),
    )


def _value_format(options: Mapping[str, Any]) -> Any:
    response_format = options.get("response_format")
    return response_format if isinstance(response_format, type) else None
