"""The store's value conventions: times as fixed-width ISO 8601 UTC text or integer nanoseconds, values as JSON text.

Every kind of row the store keeps goes through these, so a time or a value given in any accepted form is stored
the same way on SQLite and PostgreSQL.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from .._serialization import dumps as tagged_dumps

__all__ = ["fast_json", "json_text", "now_iso", "plain_json", "tagged_dumps", "to_iso", "to_ns"]


def now_iso() -> str:
    """The current time as the store writes it."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def to_iso(value: Any) -> str:
    """Normalize a time to a fixed-width ISO 8601 UTC string (so text order is time order).

    Accepts aware or naive datetimes (naive means local time, as everywhere in Python), epoch seconds and
    ISO 8601 strings; ``None`` means now.
    """
    if value is None:
        return now_iso()
    if isinstance(value, _dt.datetime):
        moment = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        moment = _dt.datetime.fromtimestamp(value, _dt.timezone.utc)
    elif isinstance(value, str):
        try:
            moment = _dt.datetime.fromisoformat(value)
        except ValueError as e:
            raise ValueError(f"Expected an ISO 8601 time, got {value!r}.") from e
    else:
        raise TypeError(f"Expected a datetime, epoch seconds or ISO 8601 string, got {type(value).__name__}.")
    return moment.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


def to_ns(value: Any) -> int:
    """Convert a datetime, epoch seconds or ISO 8601 string to integer nanoseconds since the epoch."""
    if isinstance(value, _dt.datetime):
        moment = value.astimezone(_dt.timezone.utc)
        delta = moment - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value * 1_000_000_000)
    if isinstance(value, str):
        return to_ns(_dt.datetime.fromisoformat(to_iso(value)))
    raise TypeError(f"Expected a datetime, epoch seconds or ISO 8601 string, got {type(value).__name__}.")


def json_text(value: Any, *, what: str) -> str:
    """Return JSON text: strings are taken as JSON already (and checked), anything else is encoded."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError as e:
            raise ValueError(f"{what} must be JSON text or a JSON-serializable value; got invalid JSON: {e}") from e
        return value
    return tagged_dumps(value)


def plain_json(value: Any, default: str) -> str:
    """JSON text for a value given as text already, as plain data, or ``None`` (then ``default``)."""
    if value is None:
        return default
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def fast_json(value: Any) -> str:
    """JSON text for a value that is usually plain data: the C encoder first, tagged JSON when it must."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return tagged_dumps(value)
