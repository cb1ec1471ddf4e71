"""Plain JSON views of arbitrary values, for people and for wire formats that carry no Python types.

The DevUI shows them and the served Responses API sends them, so both live here, below either.
:func:`jsonable` keeps enough to rebuild a value (agentnb's type tags); :func:`readable` drops the tags;
:func:`value_text` is the one way every view turns an arbitrary value into text for people.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Iterable
from typing import Any, cast

__all__ = ["jsonable", "readable", "type_label", "value_text"]


def jsonable(value: Any) -> Any:
    """Turn any value into plain JSON data for display (tagged JSON for custom types, ``repr`` as a last resort)."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        pass
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump(mode="json")
        except Exception:  # a broken model still gets shown
            return repr(value)
    if hasattr(value, "to_dict"):
        try:
            return jsonable(value.to_dict())
        except Exception:
            return repr(value)
    try:
        from ._serialization import encode

        return encode(value)
    except Exception:
        return repr(value)


def readable(value: Any, _depth: int = 0) -> Any:
    """Turn a value into plain JSON for people: fields of models and dataclasses, never internal type tags.

    :func:`jsonable` keeps enough to rebuild a value (tags naming its class); this drops them, for summaries
    in logs, request cards and the API. Past 12 levels a value shows as its text.
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if _depth > 12:
        return str(value)
    if isinstance(value, enum.Enum):
        return readable(value.value, _depth + 1)
    if isinstance(value, dict):
        return {str(k): readable(v, _depth + 1) for k, v in cast("dict[Any, Any]", value).items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [readable(v, _depth + 1) for v in cast("Iterable[Any]", value)]
    if hasattr(value, "model_dump"):
        try:
            return readable(value.model_dump(mode="json"), _depth + 1)
        except Exception:  # a broken model still gets shown
            return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: readable(getattr(value, f.name), _depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)


def value_text(value: Any, limit: int | None = None) -> str:
    """A value as text for people, cut to ``limit`` characters (with an ellipsis) when given.

    Strings are shown as they are, messages and responses by their text, anything else as readable JSON
    (fields of models and dataclasses, no type tags; see :func:`readable`).
    """
    from ._html import shorten
    from ._types import AgentResponse, ChatResponse, Message

    if isinstance(value, str):
        text = value
    elif isinstance(value, (AgentResponse, ChatResponse, Message)):
        text = value.text
    else:
        text = json.dumps(readable(value), ensure_ascii=False)
    return text if limit is None else shorten(text, limit)


def type_label(tp: Any) -> str:
    """A short readable name for a type hint."""
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")
