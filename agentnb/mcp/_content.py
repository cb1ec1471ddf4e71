"""Translate MCP content blocks, prompts and sampling messages to and from agentnb contents."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from typing import Any

from agentnb._json import is_json_array
from agentnb._types import Content, Message

__all__ = [
    "content_from_mcp",
    "contents_from_mcp",
    "messages_from_prompt",
    "messages_from_sampling",
    "resource_contents_to_content",
    "tool_result_value",
]


def _decode_base64(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        # Some servers send unpadded or URL-safe base64; accept it rather than lose the payload.
        return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def resource_contents_to_content(resource: Any) -> Content:
    """One ``TextResourceContents`` / ``BlobResourceContents`` as a text or data content tagged with its URI."""
    uri = str(resource.uri)
    media_type = getattr(resource, "mime_type", None)
    props: dict[str, Any] = {"uri": uri}
    if media_type:
        props["media_type"] = media_type
    text = getattr(resource, "text", None)
    if text is not None:
        return Content.from_text(text, additional_properties=props, raw_representation=resource)
    blob = getattr(resource, "blob", None) or ""
    return Content.from_data(
        _decode_base64(blob),
        media_type or "application/octet-stream",
        additional_properties=props,
        raw_representation=resource,
    )


def content_from_mcp(block: Any) -> Content:
    """One MCP content block (text, image, audio, embedded resource, resource link) as an agentnb content."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return Content.from_text(block.text, raw_representation=block)
    if kind in ("image", "audio"):
        return Content.from_data(_decode_base64(block.data), block.mime_type, raw_representation=block)
    if kind == "resource":
        return resource_contents_to_content(block.resource)
    if kind == "resource_link":
        props = {"name": block.name}
        if block.description:
            props["description"] = block.description
        return Content.from_uri(str(block.uri), block.mime_type, additional_properties=props, raw_representation=block)
    # A block type this version does not know: keep it visible to the model as JSON rather than drop it.
    dump = getattr(block, "model_dump_json", None)
    return Content.from_text(str(dump(by_alias=True, exclude_none=True)) if callable(dump) else str(block))


def contents_from_mcp(blocks: Iterable[Any]) -> list[Content]:
    """Several MCP content blocks as agentnb contents, in order."""
    return [content_from_mcp(block) for block in blocks]


def tool_result_value(contents: Sequence[Content], structured: Any = None) -> Any:
    """What a remote tool call returns to the function-invocation loop.

    Text-only results come back as one string (what models read best); results with images, audio or
    resources come back as the list of contents so nothing is flattened away. When a tool sends
    structured content but no content blocks, the structured value is returned.
    """
    if not contents:
        return structured if structured is not None else ""
    if all(c.type == "text" and not c.additional_properties for c in contents):
        return "\n".join(c.text or "" for c in contents)
    return list(contents)


def error_text(contents: Sequence[Content]) -> str:
    """The text of an ``isError`` result, for the error the model sees."""
    texts = [c.text for c in contents if c.type == "text" and c.text]
    return "\n".join(texts) if texts else "The tool reported an error without a message."


def messages_from_prompt(result: Any) -> list[Message]:
    """A ``GetPromptResult`` as agentnb messages, ready to pass to ``agent.run``."""
    return [
        Message(message.role, [content_from_mcp(message.content)], raw_representation=message)
        for message in result.messages
    ]


def messages_from_sampling(params: Any) -> list[Message]:
    """The messages of a sampling request (system prompt first) as agentnb messages."""
    messages: list[Message] = []
    if params.system_prompt:
        messages.append(Message("system", [params.system_prompt]))
    for message in params.messages:
        content: Any = message.content
        blocks: list[Any] = content if is_json_array(content) else [content]
        contents = [content_from_mcp(block) for block in blocks if getattr(block, "type", None) != "tool_use"]
        messages.append(Message(message.role, contents))
    return messages
