"""Convert between agentnb contents and A2A parts (protobuf, a2a-sdk 1.x).

Text, files (bytes) and links map to the matching A2A part. Approval requests and answers travel as data
parts holding the content's JSON as a string (``google.protobuf.Value`` would turn integer arguments into
floats); on the way in only those two content types are rebuilt from data parts, everything else a remote
agent sends arrives as text, files or links.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

from a2a.types import Part
from google.protobuf.json_format import MessageToDict

from .._types import Content

__all__ = ["APPROVAL_KEY", "contents_to_parts", "parts_to_contents"]

#: The data-part key carrying an approval request or answer as JSON text.
APPROVAL_KEY = "agentnb_content"
_CARRIED_TYPES = frozenset({"function_approval_request", "function_approval_response"})


def contents_to_parts(contents: Iterable[Content]) -> list[Part]:
    """The A2A parts for ``contents``; tool calls, results, reasoning and usage stay home."""
    parts: list[Part] = []
    for content in contents:
        if content.type == "text" and content.text:
            parts.append(Part(text=content.text))
        elif content.type == "data" and content.data is not None:
            parts.append(Part(raw=content.data, media_type=content.media_type or "application/octet-stream"))
        elif content.type == "uri" and content.uri:
            parts.append(Part(url=content.uri, media_type=content.media_type or ""))
        elif content.type in _CARRIED_TYPES:
            part = Part(media_type="application/json")
            part.data.struct_value.update({APPROVAL_KEY: json.dumps(content.to_dict())})
            parts.append(part)
        elif content.type == "error" and content.message:
            parts.append(Part(text=content.message))
    return parts


def _data(part: Part) -> Any:
    return MessageToDict(part)["data"] if part.HasField("data") else None


def parts_to_contents(parts: Sequence[Part], *, accept: Iterable[str] = _CARRIED_TYPES) -> list[Content]:
    """Contents for A2A ``parts``; ``accept`` lists the content types data parts may rebuild."""
    allowed = frozenset(accept) & _CARRIED_TYPES
    contents: list[Content] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            contents.append(Content.from_text(part.text))
        elif kind == "url":
            contents.append(Content.from_uri(part.url, part.media_type or None))
        elif kind == "raw":
            contents.append(Content.from_data(part.raw, part.media_type or "application/octet-stream"))
        elif kind == "data":
            contents.append(_from_data(_data(part), allowed))
    return contents


def _from_data(data: Any, allowed: frozenset[str]) -> Content:
    if isinstance(data, dict) and isinstance(cast("dict[str, Any]", data).get(APPROVAL_KEY), str):
        try:
            raw = json.loads(cast("dict[str, Any]", data)[APPROVAL_KEY])
        except ValueError:
            raw = None
        if isinstance(raw, dict) and cast("dict[str, Any]", raw).get("type") in allowed:
            return Content.from_dict(cast("dict[str, Any]", raw))
    return Content.from_text(json.dumps(data, ensure_ascii=False))
