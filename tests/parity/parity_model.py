"""The model behind the ported samples: an ``agentnb.local`` model that answers from the running sample's script.

A ported sample calls ``model()`` where the original built a provider's client. The test running the sample
first sets the script with :func:`use`: a list of replies consumed in order, or a dict from a piece of an
agent's instructions to that agent's own list (for samples with several agents). A reply is what
``FunctionChatClient`` accepts (text, a tool call from :func:`call`, a pydantic model) or a function of
``(messages, options)`` returning one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agentnb import ChatResponse, ChatResponseUpdate, Content, Message
from agentnb.local import FunctionChatClient

__all__ = [
    "AzureCliCredential",
    "DefaultAzureCredential",
    "all_tool_results",
    "call",
    "last_tool_result",
    "model",
    "remaining",
    "sent_text",
    "use",
    "used",
]

Reply = Any
_script: dict[str, list[Reply]] = {}
_calls: list[list[Message]] = []


def use(script: Sequence[Reply] | dict[str, Sequence[Reply]]) -> None:
    """Set the replies for the next sample run (and forget the previous run's calls)."""
    _script.clear()
    _calls.clear()
    if isinstance(script, dict):
        _script.update({key: list(replies) for key, replies in script.items()})
    else:
        _script[""] = list(script)


def used() -> list[list[Message]]:
    """The messages of every model call of the last run, in order."""
    return list(_calls)


def remaining() -> dict[str, list[Reply]]:
    """Replies the last run did not use, by script key."""
    return {key: list(replies) for key, replies in _script.items()}


def call(name: str, /, **arguments: Any) -> Content:
    """A scripted tool call, its arguments as compact JSON (as OpenAI models send them)."""
    return Content.from_function_call(
        f"call_{uuid.uuid4().hex[:8]}", name, json.dumps(arguments, separators=(",", ":"))
    )


def last_tool_result(messages: list[Message]) -> str:
    """The result of the latest tool call in the conversation (for replies that report it)."""
    for message in reversed(messages):
        for content in message.contents:
            if content.type == "function_result":
                return str(content.result if content.exception is None else content.exception)
    raise AssertionError("the script expected a tool result, but no tool ran")


def all_tool_results(messages: list[Message]) -> str:
    """The results of the latest batch of tool calls, joined by `` | ``."""
    for message in reversed(messages):
        results = [
            str(c.result if c.exception is None else c.exception)
            for c in message.contents
            if c.type == "function_result"
        ]
        if results:
            return " | ".join(results)
    raise AssertionError("the script expected tool results, but no tool ran")


def sent_text(messages: list[Message], options: dict[str, Any]) -> str:
    """Everything the model was sent as text: instructions, messages and tool results."""
    parts = [str(options.get("instructions") or "")]
    for message in messages:
        for content in message.contents:
            if content.type == "function_result":
                parts.append(str(content.result if content.exception is None else content.exception))
            elif content.text:
                parts.append(content.text)
    return "\n".join(parts)


def _answer(messages: list[Message], options: dict[str, Any]) -> Reply:
    instructions = str(options.get("instructions") or "") + "".join(m.text for m in messages if m.role == "system")
    key = next((k for k in _script if k and k in instructions), "")
    replies = _script.get(key)
    if not replies:
        raise AssertionError(f"the sample's script has no reply left for {key or 'the model'!r}")
    _calls.append(list(messages))
    reply = replies.pop(0)
    if isinstance(reply, Callable):  # type: ignore[arg-type]
        reply = reply(messages, options)
    return reply


class _ScriptedService(FunctionChatClient):
    """The scripted model behind a service that keeps conversations when asked (``store=True``), as the
    providers the samples were written for do: the reply names the conversation, and a later request that
    names it is answered with the kept messages in front of its own.
    """

    def __init__(self) -> None:
        super().__init__(_answer, model_id="parity-scripted")
        self._kept: dict[str, list[Message]] = {}

    def _continued(self, messages: list[Message], options: dict[str, Any]) -> list[Message]:
        kept = self._kept.get(str(options.get("conversation_id") or ""), [])
        return [*kept, *(m for m in messages if not any(m is k for k in kept))]

    def _keep(self, sent: list[Message], response: ChatResponse, options: dict[str, Any]) -> ChatResponse:
        if options.get("store") is True:
            conversation_id = f"conv_{uuid.uuid4().hex[:8]}"
            self._kept[conversation_id] = [*sent, *response.messages]
            response.conversation_id = conversation_id
        return response

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        if options.get("store") is not True and not options.get("conversation_id"):
            return await super()._inner_get_response(messages=messages, options=options, **kwargs)
        sent = self._continued(messages, options)
        response = await super()._inner_get_response(messages=sent, options=options, **kwargs)
        return self._keep(sent, response, options)

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        if options.get("store") is not True and not options.get("conversation_id"):
            async for update in super()._inner_get_streaming_response(messages=messages, options=options, **kwargs):
                yield update
            return
        response = await self._inner_get_response(messages=messages, options=options, **kwargs)
        for update in response.to_updates():
            yield update


def model(*_args: Any, **_kwargs: Any) -> FunctionChatClient:
    """The sample's model client (the provider's settings it was given are ignored)."""
    return _ScriptedService()


class AzureCliCredential:
    """Stands in for the provider's credential (the scripted model needs none); usable with or without ``with``."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    async def __aenter__(self) -> AzureCliCredential:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        return None

    def __enter__(self) -> AzureCliCredential:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    async def close(self) -> None:
        return None


DefaultAzureCredential = AzureCliCredential


def __getattr__(name: str) -> Any:
    """A provider's client class a sample names in an annotation is the model's class."""
    if name.endswith("Client"):
        return FunctionChatClient
    raise AttributeError(f"module 'parity_model' has no attribute {name!r}")
