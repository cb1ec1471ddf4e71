"""A model that answers from a script: deterministic replies for tests, demos and notebooks."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any, cast

from .._clients import BaseChatClient
from .._json import is_list_or_tuple
from .._types import ChatResponse, ChatResponseUpdate, Content, Message, UsageDetails
from ..exceptions import ChatClientError

__all__ = ["ScriptedChatClient", "estimate_usage", "reply_to_contents", "split_chunks", "stream_response"]

_WORDS = re.compile(r"\S+\s*|\s+")


def split_chunks(text: str, chunk_size: int | None = None) -> list[str]:
    """Split text the way a model streams it: word by word (or every ``chunk_size`` characters)."""
    if not text:
        return []
    if chunk_size:
        return [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)]
    return _WORDS.findall(text)


def estimate_usage(messages: Sequence[Message], reply: Iterable[Content]) -> UsageDetails:
    """Deterministic token counts (one token per word) so usage shows up offline too."""

    def count(contents: Iterable[Content]) -> int:
        total = 0
        for c in contents:
            if c.text:
                total += len(c.text.split())
            elif c.type == "function_call":
                total += 1 + len(str(c.arguments or "").split())
            elif c.type == "function_result":
                total += len(str(c.result or c.exception or "").split())
        return total

    prompt = sum(count(m.contents) for m in messages)
    completion = count(reply)
    return {"input_token_count": prompt, "output_token_count": completion, "total_token_count": prompt + completion}


def reply_to_contents(reply: Any) -> list[Content]:
    """The contents of one scripted reply: text, a Content, a Message, or a list of them."""
    if isinstance(reply, str):
        return [Content.from_text(reply)]
    if isinstance(reply, Content):
        return [reply]
    if isinstance(reply, Message):
        return list(reply.contents)
    if is_list_or_tuple(reply) and all(isinstance(r, (Content, str)) for r in reply):
        return [Content.from_text(r) if isinstance(r, str) else r for r in reply]
    dump = getattr(reply, "model_dump_json", None)
    if callable(dump):
        return [Content.from_text(str(dump()))]
    if isinstance(reply, (dict, list)):
        return [Content.from_text(json.dumps(reply))]
    raise TypeError(
        f"Cannot use a {type(reply).__name__} as a scripted reply; use str, Content, a list of Content, Message, "
        "ChatResponse, a pydantic model, a dict, or an exception to raise."
    )


class ScriptedChatClient(BaseChatClient):
    """Answers each model call with the next scripted reply; fails loudly when the script runs out.

    A reply is text, a ``Content`` (such as ``ScriptedChatClient.call("tool", x=1)``), a list of contents,
    a ``Message`` or ``ChatResponse``, a pydantic model or dict (sent as JSON, for structured output), or
    an exception instance (raised, to simulate a failing provider).

    Example:
        ```python
        from agentnb import Agent, tool
        from agentnb.local import ScriptedChatClient

        @tool
        def add(a: int, b: int) -> int:
            return a + b

        client = ScriptedChatClient([ScriptedChatClient.call("add", a=2, b=3), "2 + 3 = 5"])
        response = await Agent(client, tools=[add]).run("What is 2 + 3?")
        response.text  # '2 + 3 = 5'
        ```
    """

    OTEL_PROVIDER_NAME = "agentnb.local"

    def __init__(
        self,
        replies: Sequence[Any],
        *,
        model_id: str = "scripted",
        chunk_size: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model_id=model_id, **kwargs)
        self.replies = list(replies)
        self.chunk_size = chunk_size
        self.calls: list[list[Message]] = []
        self.call_options: list[dict[str, Any]] = []

    @staticmethod
    def call(name: str, /, call_id: str | None = None, **arguments: Any) -> Content:
        """A scripted tool call, for use as (part of) a reply."""
        return Content.from_function_call(call_id or f"call_{uuid.uuid4().hex[:8]}", name, json.dumps(arguments))

    @property
    def remaining(self) -> int:
        """Replies not used yet."""
        return len(self.replies) - len(self.calls)

    def assert_all_used(self) -> None:
        """Raise if the script has replies no model call consumed."""
        if self.remaining:
            raise AssertionError(f"{self.remaining} scripted repl{'y' if self.remaining == 1 else 'ies'} unused.")

    def _next(self, messages: list[Message], options: dict[str, Any]) -> ChatResponse:
        index = len(self.calls)
        if index >= len(self.replies):
            raise ChatClientError(
                f"ScriptedChatClient has no reply for model call #{index + 1}: the script holds {len(self.replies)}. "
                f"Last message: {messages[-1].text[:200] if messages else ''!r}"
            )
        self.calls.append(list(messages))
        self.call_options.append(dict(options))
        reply = self.replies[index]
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, ChatResponse):
            return cast(ChatResponse, reply)
        contents = reply_to_contents(reply)
        has_calls = any(c.type == "function_call" for c in contents)
        return ChatResponse(
            messages=[Message("assistant", contents, message_id=f"msg_{index + 1}")],
            response_id=f"resp_{index + 1}",
            model_id=self.model_id,
            finish_reason="tool_calls" if has_calls else "stop",
            usage_details=estimate_usage(messages, contents),
        )

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        return self._next(messages, options)

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        response = self._next(messages, options)
        for update in stream_response(response, self.chunk_size):
            yield update


def stream_response(response: ChatResponse, chunk_size: int | None = None) -> list[ChatResponseUpdate]:
    """Cut a whole response into the updates a streaming model would send (text word by word)."""
    updates: list[ChatResponseUpdate] = []
    common: dict[str, Any] = {"response_id": response.response_id, "model_id": response.model_id}
    for message in response.messages:
        for content in message.contents:
            if content.type in ("text", "text_reasoning") and content.text:
                factory = Content.from_text if content.type == "text" else Content.from_reasoning
                updates.extend(
                    ChatResponseUpdate(
                        contents=[factory(piece)], role=message.role, message_id=message.message_id, **common
                    )
                    for piece in split_chunks(content.text, chunk_size)
                )
            else:
                updates.append(
                    ChatResponseUpdate(contents=[content], role=message.role, message_id=message.message_id, **common)
                )
    tail = ChatResponseUpdate(contents=[], role=None, finish_reason=response.finish_reason, **common)
    if response.usage_details:
        tail.contents.append(Content.from_usage(response.usage_details))
    updates.append(tail)
    return updates
