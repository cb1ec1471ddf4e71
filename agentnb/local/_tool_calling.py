"""A test model that exercises every tool it is offered, then reports what the tools returned."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from .._clients import BaseChatClient
from .._json import is_json_array
from .._tools import FunctionTool, result_to_text
from .._types import ChatResponse, ChatResponseUpdate, Content, Message
from ._scripted import estimate_usage, stream_response

__all__ = ["ToolCallingChatClient", "example_arguments"]

_CAPITALIZED = re.compile(r"\b[A-Z][a-zA-Z-]+\b")


def _hint(messages: list[Message]) -> str | None:
    """A word from the user's request to use as a string argument (the last capitalized one)."""
    for message in reversed(messages):
        if message.role == "user" and message.text:
            words = _CAPITALIZED.findall(message.text)
            return words[-1] if len(words) > 1 or (words and not message.text.startswith(words[0])) else None
    return None


def example_arguments(schema: dict[str, Any], hint: str | None = None) -> dict[str, Any]:
    """Arguments that satisfy a JSON schema: defaults where given, else the first enum value or a sample."""
    defs = schema.get("$defs", {})

    def sample(node: dict[str, Any], name: str = "") -> Any:
        if "$ref" in node:
            return sample(defs.get(node["$ref"].rsplit("/", 1)[-1], {}), name)
        if "default" in node:
            return node["default"]
        if "const" in node:
            return node["const"]
        if node.get("enum"):
            return node["enum"][0]
        for key in ("anyOf", "oneOf", "allOf"):
            if node.get(key):
                options = [o for o in node[key] if o.get("type") != "null"] or node[key]
                return sample(options[0], name)
        kind = node.get("type")
        if is_json_array(kind):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object" or "properties" in node:
            props = node.get("properties", {})
            required = node.get("required", list(props))
            return {k: sample(v, k) for k, v in props.items() if k in required}
        if kind == "array":
            return [sample(node.get("items", {}), name)] * max(1, node.get("minItems", 1))
        if kind == "integer":
            return max(1, node.get("minimum", 1))
        if kind == "number":
            return float(max(1, node.get("minimum", 1)))
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        if node.get("format") == "date":
            return "2026-01-01"
        if node.get("format") == "date-time":
            return "2026-01-01T00:00:00Z"
        return hint or name or "a"

    return sample(schema) or {}


class ToolCallingChatClient(BaseChatClient):
    """A deterministic test model: calls each offered tool once with schema-valid arguments, then summarizes.

    String arguments take the last capitalized word of the request (so "weather in Paris" calls
    ``get_weather(city="Paris")``); other types take defaults, the first enum value, or small samples.
    With ``response_format`` set it answers with a schema-valid JSON value. No network, no randomness.

    Example:
        ```python
        from agentnb import Agent, tool
        from agentnb.local import ToolCallingChatClient

        @tool
        def get_weather(city: str) -> str:
            return f"Sunny in {city}."

        response = await Agent(ToolCallingChatClient(), tools=[get_weather]).run("Weather in Paris?")
        response.text  # 'get_weather: Sunny in Paris.'
        ```
    """

    OTEL_PROVIDER_NAME = "agentnb.local"

    def __init__(self, *, model_id: str = "tool-calling-test-model", **kwargs: Any) -> None:
        super().__init__(model_id=model_id, **kwargs)
        self._counter = 0

    def _reply(self, messages: list[Message], options: dict[str, Any]) -> ChatResponse:
        start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
        since = messages[start + 1 :]
        called = {c.name for m in since for c in m.contents if c.type == "function_call"}
        # tool_choice "none" declares the tools but forbids calling them (the loop's last call over budget).
        tools: list[FunctionTool] = [] if options.get("tool_choice") == "none" else list(options.get("tools") or [])
        hint = _hint(messages)
        pending = [t for t in tools if t.name not in called]
        contents: list[Content]
        if pending:
            contents = []
            for tool in pending:
                self._counter += 1
                args = example_arguments(tool.parameters(), hint)
                contents.append(Content.from_function_call(f"call_{self._counter}", tool.name, json.dumps(args)))
        else:
            contents = [Content.from_text(self._summary(since, messages, options))]
        self._counter += 1
        return ChatResponse(
            messages=[Message("assistant", contents, message_id=f"msg_{self._counter}")],
            response_id=f"resp_{self._counter}",
            model_id=self.model_id,
            finish_reason="tool_calls" if pending else "stop",
            usage_details=estimate_usage(messages, contents),
        )

    def _summary(self, since: list[Message], messages: list[Message], options: dict[str, Any]) -> str:
        response_format = options.get("response_format")
        if response_format is not None:
            from pydantic import TypeAdapter

            schema = TypeAdapter(response_format).json_schema()
            return json.dumps(example_arguments(schema, _hint(messages)))
        names = {c.call_id: c.name for m in since for c in m.contents if c.type == "function_call"}
        lines = [
            f"{names.get(c.call_id, 'tool')}: {c.exception or result_to_text(c.result)}"
            for m in since
            for c in m.contents
            if c.type == "function_result"
        ]
        if lines:
            return "\n".join(lines)
        last = next((m.text for m in reversed(messages) if m.role == "user"), "")
        return f"You said: {last}" if last else "Hello! How can I help?"

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        return self._reply(messages, options)

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        for update in stream_response(self._reply(messages, options)):
            yield update
