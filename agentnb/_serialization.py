"""JSON with type tags: how sessions, checkpoints and the run store persist Python values without pickle.

Plain JSON values pass through unchanged. Everything else becomes a small tagged object
(``{"__agentnb__": "<tag>", ...}``) that names its class by a stable registered id or by its import path.
Decoding only ever *constructs* pydantic models, dataclasses, enums and classes with ``from_dict``; it
never calls arbitrary callables, so a hostile file cannot run code the way a pickle can.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import enum
import importlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from .exceptions import SerializationError

__all__ = ["decode", "dumps", "encode", "loads", "register_type", "type_id"]

TAG = "__agentnb__"

_REGISTRY: dict[str, type] = {}
_REGISTERED_IDS: dict[type, str] = {}


def register_type(cls: type, type_id: str | None = None) -> type:
    """Register ``cls`` under a stable id so renamed modules keep loading old data.

    Usable as a decorator. Ids must be unique; re-registering the same class is harmless.
    """
    key = type_id or f"{cls.__module__}:{cls.__qualname__}"
    existing = _REGISTRY.get(key)
    if existing is not None and existing is not cls:
        raise ValueError(f"Type id {key!r} is already registered for {existing!r}; pick another id.")
    _REGISTRY[key] = cls
    _REGISTERED_IDS[cls] = key
    return cls


def type_id(cls: type) -> str:
    """The id a class is written under: its registered id, else ``module:qualname``."""
    return _REGISTERED_IDS.get(cls) or f"{cls.__module__}:{cls.__qualname__}"


def _resolve(key: str) -> type:
    cls = _REGISTRY.get(key)
    if cls is not None:
        return cls
    module_name, _, qualname = key.partition(":")
    if not module_name or not qualname:
        raise SerializationError(f"Malformed type id {key!r}; expected 'module:QualName'.")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise SerializationError(
            f"Cannot find type {key!r} to restore a value; import the module that defines it, "
            "or register it with agentnb register_type()."
        ) from e
    if not isinstance(obj, type):
        raise SerializationError(f"{key!r} is not a class; refusing to restore it.")
    return obj


def _is_pydantic_model(value: Any) -> bool:
    model_dump = getattr(type(value), "model_dump", None)
    return callable(model_dump) and hasattr(type(value), "model_validate")


def encode(value: Any) -> Any:
    """Turn ``value`` into JSON-compatible data with type tags where plain JSON would lose the type."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {TAG: "float", "value": repr(value)}
        return value
    if isinstance(value, enum.Enum):
        return {TAG: "enum", "type": type_id(type(value)), "value": encode(value.value)}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and TAG not in value:
            return {k: encode(v) for k, v in value.items()}
        return {TAG: "dict", "items": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {TAG: "tuple", "items": [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [encode(v) for v in value]
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return {TAG: "frozenset" if isinstance(value, frozenset) else "set", "items": items}
    if isinstance(value, (bytes, bytearray)):
        return {TAG: "bytes", "b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, _dt.datetime):
        return {TAG: "datetime", "value": value.isoformat()}
    if isinstance(value, _dt.date):
        return {TAG: "date", "value": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return {TAG: "uuid", "value": str(value)}
    cls = type(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and callable(getattr(cls, "from_dict", None)):
        return {TAG: "object", "type": type_id(cls), "data": encode(to_dict())}
    if _is_pydantic_model(value):
        return {TAG: "pydantic", "type": type_id(cls), "data": value.model_dump(mode="json")}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {TAG: "dataclass", "type": type_id(cls), "fields": fields}
    raise SerializationError(
        f"Cannot serialize a value of type {cls.__module__}.{cls.__qualname__}; use JSON types, "
        "a pydantic model, a dataclass, an Enum, or a class with to_dict()/from_dict()."
    )


def _decode_tagged(data: dict[str, Any]) -> Any:
    tag = data[TAG]
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise SerializationError(f"Unknown type tag {tag!r}; the data was written by a newer or foreign program.")
    try:
        return decoder(data)
    except SerializationError:
        raise
    except Exception as e:
        raise SerializationError(f"Cannot restore a {tag!r} value: {e}") from e


def _decode_pydantic(data: dict[str, Any]) -> Any:
    cls = _resolve(data["type"])
    if not hasattr(cls, "model_validate"):
        raise SerializationError(f"{data['type']!r} is not a pydantic model; refusing to restore it.")
    return cls.model_validate(data["data"])  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


def _decode_dataclass(data: dict[str, Any]) -> Any:
    cls = _resolve(data["type"])
    if not dataclasses.is_dataclass(cls):
        raise SerializationError(f"{data['type']!r} is not a dataclass; refusing to restore it.")
    fields = {name: decode(v) for name, v in data["fields"].items()}
    init_fields = {f.name for f in dataclasses.fields(cls) if f.init}
    obj = cls(**{k: v for k, v in fields.items() if k in init_fields})
    for k, v in fields.items():
        if k not in init_fields:
            object.__setattr__(obj, k, v)
    return obj


def _decode_enum(data: dict[str, Any]) -> Any:
    cls = _resolve(data["type"])
    if not issubclass(cls, enum.Enum):
        raise SerializationError(f"{data['type']!r} is not an Enum; refusing to restore it.")
    return cls(decode(data["value"]))


def _decode_object(data: dict[str, Any]) -> Any:
    cls = _resolve(data["type"])
    from_dict = getattr(cls, "from_dict", None)
    if not callable(from_dict):
        raise SerializationError(f"{data['type']!r} has no from_dict(); refusing to restore it.")
    return from_dict(decode(data["data"]))


_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "float": lambda d: float(d["value"]),
    "dict": lambda d: {decode(k): decode(v) for k, v in d["items"]},
    "tuple": lambda d: tuple(decode(v) for v in d["items"]),
    "set": lambda d: {decode(v) for v in d["items"]},
    "frozenset": lambda d: frozenset(decode(v) for v in d["items"]),
    "bytes": lambda d: base64.b64decode(d["b64"]),
    "datetime": lambda d: _dt.datetime.fromisoformat(d["value"]),
    "date": lambda d: _dt.date.fromisoformat(d["value"]),
    "uuid": lambda d: uuid.UUID(d["value"]),
    "enum": _decode_enum,
    "pydantic": _decode_pydantic,
    "dataclass": _decode_dataclass,
    "object": _decode_object,
}


def decode(data: Any) -> Any:
    """Rebuild the value :func:`encode` produced."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, dict):
        if TAG in data:
            return _decode_tagged(data)
        return {k: decode(v) for k, v in data.items()}
    return data


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Serialize ``value`` to a JSON string with type tags."""
    return json.dumps(encode(value), indent=indent, ensure_ascii=False, allow_nan=False)


def loads(text: str | bytes) -> Any:
    """Parse a JSON string written by :func:`dumps`; malformed JSON raises :class:`SerializationError`."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SerializationError(f"Malformed JSON: {e}") from e
    return decode(data)
