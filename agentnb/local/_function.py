"""A model that is a Python function: write the model's behaviour as code, for tests and demos."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, cast

from .._clients import BaseChatClient
from .._types import ChatResponse, ChatResponseUpdate, Content, Message
from ._scripted import estimate_usage, reply_to_contents, stream_response

__all__ = ["FunctionChatClient"]


def _as_response(reply: Any, messages: list[Message], model_id: str | None) -> ChatResponse:
    if isinstance(reply, ChatResponse):
        return cast(ChatResponse, reply)
    contents = reply_to_contents(reply)
    has_calls = any(c.type == "function_call" for c in contents)
    return ChatResponse(
        messages=[Message("assistant", contents)],
        # Each answer gets its own id, as a hosted model's does (stream readers tell replies apart by it).
        response_id=f"resp_{uuid.uuid4().hex[:12]}",
        model_id=model_id,
        finish_reason="tool_calls" if has_calls else "stop",
        usage_details=estimate_usage(messages, contents),
    )


def _as_update(piece: Any) -> ChatResponseUpdate:
    if isinstance(piece, ChatResponseUpdate):
        return piece
    if isinstance(piece, str):
        return ChatResponseUpdate(contents=[Content.from_text(piece)])
    return ChatResponseUpdate(contents=reply_to_contents(piece))


class FunctionChatClient(BaseChatClient):
    """Calls ``func(messages, options)`` as the model.

    ``func`` may be sync or async and return what a scripted reply may be (text, contents, a Message,
    a ChatResponse, a pydantic model); or it may be an async generator yielding text chunks or
    ``ChatResponseUpdate``s, which then stream.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import FunctionChatClient

        def shout(messages, options):
            return messages[-1].text.upper()

        (await Agent(FunctionChatClient(shout)).run("hello")).text  # 'HELLO'
        ```
    """

    OTEL_PROVIDER_NAME = "agentnb.local"

    def __init__(self, func: Callable[..., Any], *, model_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(model_id=model_id or f"function:{getattr(func, '__name__', 'model')}", **kwargs)
        self.func = func
        self._is_generator = inspect.isasyncgenfunction(func)

    async def _call(self, messages: list[Message], options: dict[str, Any]) -> Any:
        result = self.func(messages, options)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        if self._is_generator:
            updates = [_as_update(piece) async for piece in self.func(messages, options)]
            response = ChatResponse.from_updates(updates)
            response.model_id = response.model_id or self.model_id
            return response
        return _as_response(await self._call(messages, options), messages, self.model_id)

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        if self._is_generator:
            async with aclosing(self.func(messages, options)) as pieces:
                async for piece in pieces:
                    update = _as_update(piece)
                    update.model_id = update.model_id or self.model_id
                    yield update
            return
        response = _as_response(await self._call(messages, options), messages, self.model_id)
        for update in stream_response(response):
            yield update
