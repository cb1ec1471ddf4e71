"""JSON with type tags: how sessions, checkpoints and the run store persist Python values without pickle.

Plain JSON values pass through unchanged. Everything else becomes a small tagged object
(``{"__agentnb__": "<tag>", ...}``) that names its class by a stable registered id or by its import path.

Loading treats the data as untrusted (a checkpoint or cassette may come from someone else's pull request):

- it never imports a module: a type tag resolves only against registered types, agentnb's own types and
  classes of modules the program has already imported, so a crafted file cannot run any module's
  import-time code;
- it only *constructs* the allowed kinds (pydantic models, dataclasses, enums, and ``from_dict`` classes
  that are registered or agentnb's own); it never calls arbitrary callables, as a pickle would;
- nesting is bounded, so a deeply nested file is a :class:`SerializationError`, never a ``RecursionError``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import enum
import importlib
import json
import sys
import uuid
import warnings
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from ._json import is_list_or_tuple
from .exceptions import SerializationError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "MAX_DEPTH",
    "decode",
    "dumps",
    "encode",
    "loads",
    "parse_json",
    "register_state_type",
    "register_type",
    "resolve_type",
    "type_id",
]

TAG = "__agentnb__"

MAX_DEPTH = 200
"""How deeply tagged JSON may nest; deeper data is refused with a :class:`SerializationError`."""

# agentnb packages a loader may import to find agentnb's own types: they are part of the trusted program and
# register stable ids for their classes on import. Nothing else is ever imported while loading.
_OWN_PACKAGES = ("agentnb.workflows",)

_REGISTRY: dict[str, type] = {}
_REGISTERED_IDS: dict[type, str] = {}
_CODECS: dict[type, tuple[Callable[[Any], Mapping[str, Any]], Callable[[Mapping[str, Any]], Any]]] = {}


def register_type(
    cls: type,
    type_id: str | None = None,
    *,
    encoder: Callable[[Any], Mapping[str, Any]] | None = None,
    decoder: Callable[[Mapping[str, Any]], Any] | None = None,
) -> type:
    """Register ``cls`` so saved data can name it by a stable id and loading may restore it.

    Registration is what lets a checkpoint, session or run-store row bring back a value of ``cls`` in a
    process that has not imported the module defining it yet; it is also the only way a class restored
    through ``from_dict`` (rather than as a pydantic model, dataclass or enum) is allowed to load.
    ``encoder``/``decoder`` (both or neither) turn any other class into a JSON mapping and back.
    Ids must be unique; re-registering the same class is harmless. Usable as a decorator.

    Example:
        ```python
        from pydantic import BaseModel
        import agentnb

        class Plan(BaseModel):
            steps: list[str]

        agentnb.register_type(Plan, "myproject.Plan")
        ```
    """
    if (encoder is None) != (decoder is None):
        raise ValueError(f"Pass both encoder= and decoder= for {cls.__qualname__}, or neither.")
    key = type_id or f"{cls.__module__}:{cls.__qualname__}"
    existing = _REGISTRY.get(key)
    if existing is not None and existing is not cls:
        raise ValueError(f"Type id {key!r} is already registered for {existing!r}; pick another id.")
    _REGISTRY[key] = cls
    _REGISTERED_IDS[cls] = key
    if encoder is not None and decoder is not None:
        _CODECS[cls] = (encoder, decoder)
    return cls


register_state_type = register_type
"""The reference's name for :func:`register_type` (``register_state_type(cls, type_id=..., ...)``)."""


def type_id(cls: type) -> str:
    """The id a class is written under: its registered id, else ``module:qualname``."""
    return _REGISTERED_IDS.get(cls) or f"{cls.__module__}:{cls.__qualname__}"


def _is_own(module_name: str) -> bool:
    return module_name == "agentnb" or module_name.startswith("agentnb.")


def _loaded_module(module_name: str) -> Any:
    """The already-imported module ``module_name``, or ``None``; only agentnb's own packages may be imported."""
    module = sys.modules.get(module_name)
    if module is None:
        for package in _OWN_PACKAGES:
            if module_name == package or module_name.startswith(package + "."):
                importlib.import_module(package)
                module = sys.modules.get(module_name)
                break
    return module


def resolve_type(key: object) -> type:
    """The class a type id names, without importing anything the program has not imported itself."""
    if not isinstance(key, str):  # read from stored JSON, where it may be anything
        raise SerializationError(f"Malformed type id {key!r}; expected 'module:QualName'.")
    cls = _REGISTRY.get(key)
    if cls is not None:
        return cls
    module_name, _, qualname = key.partition(":")
    if not module_name or not qualname:
        raise SerializationError(
            f"Unknown type id {key!r}: no class is registered under it. Register the class with "
            f"agentnb.register_type(cls, {key!r}) (alias register_state_type) before loading.",
            tag=key,
        )
    obj: Any = _loaded_module(module_name)
    if obj is None:
        raise SerializationError(
            f"Cannot restore type {key!r}: its module {module_name!r} is not imported and the type is not "
            f"registered. Loading never imports modules; import {module_name} first, or register the class "
            "with agentnb.register_type(cls) (alias register_state_type).",
            tag=key,
        )
    # Look names up statically: a module's lazy __getattr__ or a class's descriptors could run code.
    for part in qualname.split("."):
        namespace = _namespace(obj)
        if part not in namespace:
            raise SerializationError(
                f"Cannot find type {key!r} to restore a value: {module_name!r} has no {qualname!r}. "
                "Import the module that defines it, or register it with agentnb.register_type().",
                tag=key,
            )
        obj = namespace[part]
    if not isinstance(obj, type):
        raise SerializationError(f"{key!r} is not a class; refusing to restore it.")
    return obj


def _namespace(obj: object) -> Mapping[str, Any]:
    return vars(obj) if hasattr(obj, "__dict__") else {}


def _is_pydantic_model(value: object) -> bool:
    model_dump = getattr(type(value), "model_dump", None)
    return callable(model_dump) and hasattr(type(value), "model_validate")


_type_of: Callable[[object], type[Any]] = type
"""``type()``, typed for the checker as returning a class of Any (no ``cast()`` call on the hot path)."""


_LENIENT: ContextVar[bool] = ContextVar("agentnb_lenient_encode", default=False)


def encode(value: Any, *, lenient: bool = False) -> Any:
    """Turn ``value`` into JSON-compatible data with type tags where plain JSON would lose the type.

    ``lenient`` applies the reference's ``AgentSession.to_dict`` rules to what agentnb cannot restore, instead of
    raising :class:`SerializationError`: an object with ``to_dict()`` but no ``from_dict()`` (or a dict subclass
    with ``to_dict()``) is written as its ``to_dict()`` mapping and comes back as that mapping; a non-finite float
    stays a float; a pydantic model defined inside a function is registered, with a ``DeprecationWarning`` (it
    cannot be found by its import path after a restart); anything else is left as it is, with a
    ``RuntimeWarning`` (a durable store refuses it).
    """
    if lenient and not _LENIENT.get():
        token = _LENIENT.set(True)
        try:
            return encode(value)
        finally:
            _LENIENT.reset(token)
    cls = _type_of(value)
    if cls is str or cls is int or cls is bool or value is None:
        return value  # a JSON scalar, without the nested call
    if not value and (cls is dict or cls is list):
        return {} if cls is dict else []  # most of a checkpoint's states are empty: no nested call either
    try:
        return _encode(value, 0)
    except RecursionError as e:
        raise SerializationError(
            f"Cannot serialize a value nested more than {MAX_DEPTH} levels deep (or cyclic)."
        ) from e


def _encode(value: Any, depth: int) -> Any:
    # Values of the exact JSON types are told apart by identity first: most of a checkpoint is plain dicts,
    # lists, strings and numbers, and a failing isinstance() is costly (it also looks up __class__). Every
    # other value takes the general path below, in the order that decides what it becomes.
    cls = _type_of(value)
    if cls is str or cls is int or cls is bool or value is None:
        return value
    plain = cls is dict or cls is list
    if not plain:
        if isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            if (value != value or value in (float("inf"), float("-inf"))) and not _LENIENT.get():
                return {TAG: "float", "value": repr(value)}
            return value
    depth += 1
    if depth > MAX_DEPTH:
        raise _too_deep_to_write()
    codec = _CODECS.get(cls)
    if codec is not None:
        return {TAG: "codec", "type": type_id(cls), "data": _encode(dict(codec[0](value)), depth)}
    if plain:  # as the dict and list branches below would; ``value`` stays Any, so no cast() is needed
        if cls is list:
            return [_encode(v, depth) for v in value]
        if all(isinstance(k, str) for k in value) and TAG not in value:
            return {k: _encode(v, depth) for k, v in value.items()}
        return {TAG: "dict", "items": [[_encode(k, depth), _encode(v, depth)] for k, v in value.items()]}
    if isinstance(value, enum.Enum):
        return {TAG: "enum", "type": type_id(cls), "value": _encode(value.value, depth)}
    if isinstance(value, dict):
        mapping = cast("dict[Any, Any]", value)
        if _LENIENT.get() and callable(getattr(mapping, "to_dict", None)):  # a dict subclass that says how to save it
            return _encode_by_to_dict(mapping, cls, depth)
        if all(isinstance(k, str) for k in mapping) and TAG not in mapping:
            return {k: _encode(v, depth) for k, v in mapping.items()}
        return {TAG: "dict", "items": [[_encode(k, depth), _encode(v, depth)] for k, v in mapping.items()]}
    if is_list_or_tuple(value):
        items = [_encode(v, depth) for v in value]
        return items if isinstance(value, list) else {TAG: "tuple", "items": items}
    if isinstance(value, (set, frozenset)):
        items = [_encode(v, depth) for v in cast("set[Any] | frozenset[Any]", value)]
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
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and callable(getattr(cls, "from_dict", None)):
        return {TAG: "object", "type": type_id(cls), "data": _encode(to_dict(), depth)}
    if _is_pydantic_model(value):
        if _LENIENT.get() and "<locals>" in cls.__qualname__ and cls not in _REGISTERED_IDS:
            _register_local_model(cls)
        return {TAG: "pydantic", "type": type_id(cls), "data": value.model_dump(mode="json")}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _encode(getattr(value, f.name), depth) for f in dataclasses.fields(value)}
        return {TAG: "dataclass", "type": type_id(cls), "fields": fields}
    if _LENIENT.get():
        if callable(to_dict):
            return _encode_by_to_dict(value, cls, depth)
        warnings.warn(
            f"AgentSession state holds a value of unsupported type {cls.__qualname__!r}; AgentSession.to_dict() is "
            "leaving it unchanged for compatibility, but durable session stores will reject it. Call "
            "register_state_type() with an encoder and decoder.",
            RuntimeWarning,
            stacklevel=2,
        )
        return value
    raise SerializationError(
        f"Cannot serialize a value of type {cls.__module__}.{cls.__qualname__}; use JSON types, "
        "a pydantic model, a dataclass, an Enum, a class with to_dict()/from_dict(), "
        "or register_type(cls, encoder=..., decoder=...)."
    )


def _encode_by_to_dict(value: Any, cls: type[Any], depth: int) -> Any:
    """``value`` by its ``to_dict()``: tagged when ``from_dict()`` restores it, else the plain mapping (lenient)."""
    payload: object = value.to_dict()
    if not isinstance(payload, Mapping):
        raise TypeError(f"{cls.__qualname__}.to_dict() must return a mapping.")
    if callable(getattr(cls, "from_dict", None)):
        return {TAG: "object", "type": type_id(cls), "data": _encode(dict(cast("Mapping[Any, Any]", payload)), depth)}
    return {str(k): _encode(v, depth) for k, v in cast("Mapping[Any, Any]", payload).items()}


def _register_local_model(cls: type[Any]) -> None:
    """Register a pydantic model defined in a function, which loading could not find by its import path."""
    warnings.warn(
        f"Implicit registration of pydantic AgentSession state type {cls.__qualname__!r} is deprecated; call "
        "register_state_type() at module import time. Cold-start deserialization is not guaranteed without "
        "explicit registration.",
        DeprecationWarning,
        stacklevel=4,
    )
    register_type(cls)


def _decode_tagged(data: dict[str, Any], depth: int) -> Any:
    tag = data[TAG]
    decoder = _DECODERS.get(tag) if isinstance(tag, str) else None
    if decoder is None:
        raise SerializationError(
            f"Unknown type tag {tag!r}; the data was written by a newer or foreign program.", tag=str(tag)
        )
    try:
        return decoder(data, depth)
    except SerializationError:
        raise
    except RecursionError as e:
        raise _too_deep() from e
    except Exception as e:
        raise SerializationError(f"Cannot restore a {tag!r} value: {e}", tag=str(data.get("type", tag))) from e


def _decode_pydantic(data: dict[str, Any], depth: int) -> Any:
    cls = resolve_type(data["type"])
    if not hasattr(cls, "model_validate"):
        raise SerializationError(f"{data['type']!r} is not a pydantic model; refusing to restore it.")
    return cast("type[BaseModel]", cls).model_validate(data["data"])


def _decode_dataclass(data: dict[str, Any], depth: int) -> Any:
    cls = resolve_type(data["type"])
    if not dataclasses.is_dataclass(cls):
        raise SerializationError(f"{data['type']!r} is not a dataclass; refusing to restore it.")
    fields = {name: _decode(v, depth) for name, v in data["fields"].items()}
    init_fields = {f.name for f in dataclasses.fields(cls) if f.init}
    obj = cls(**{k: v for k, v in fields.items() if k in init_fields})
    for k, v in fields.items():
        if k not in init_fields:
            object.__setattr__(obj, k, v)
    return obj


def _decode_enum(data: dict[str, Any], depth: int) -> Any:
    cls = resolve_type(data["type"])
    if not issubclass(cls, enum.Enum):
        raise SerializationError(f"{data['type']!r} is not an Enum; refusing to restore it.")
    return cls(_decode(data["value"], depth))


def _decode_object(data: dict[str, Any], depth: int) -> Any:
    cls = resolve_type(data["type"])
    from_dict = getattr(cls, "from_dict", None)
    if not callable(from_dict):
        raise SerializationError(f"{data['type']!r} has no from_dict(); refusing to restore it.")
    # from_dict is arbitrary code: only classes the program vouched for (registered, or agentnb's own) get it.
    if cls not in _REGISTERED_IDS and not _is_own(cls.__module__):
        raise SerializationError(
            f"{data['type']!r} restores through from_dict() but is not registered; register it with "
            "agentnb.register_type(cls) (alias register_state_type) to allow loading it.",
            tag=data["type"],
        )
    return from_dict(_decode(data["data"], depth))


def _decode_codec(data: dict[str, Any], depth: int) -> Any:
    cls = resolve_type(data["type"])
    codec = _CODECS.get(cls)
    if codec is None:
        raise SerializationError(
            f"{data['type']!r} was written with a registered decoder, but none is registered here; call "
            "agentnb.register_type(cls, encoder=..., decoder=...) before loading.",
            tag=data["type"],
        )
    return codec[1](_decode(data["data"], depth))


def _decode_items(data: dict[str, Any], depth: int) -> list[Any]:
    return [_decode(v, depth) for v in data["items"]]


_DECODERS: dict[str, Callable[[dict[str, Any], int], Any]] = {
    "float": lambda d, _: float(d["value"]),
    "dict": lambda d, depth: {_decode(k, depth): _decode(v, depth) for k, v in d["items"]},
    "tuple": lambda d, depth: tuple(_decode_items(d, depth)),
    "set": lambda d, depth: set(_decode_items(d, depth)),
    "frozenset": lambda d, depth: frozenset(_decode_items(d, depth)),
    "bytes": lambda d, _: base64.b64decode(d["b64"]),
    "datetime": lambda d, _: _dt.datetime.fromisoformat(d["value"]),
    "date": lambda d, _: _dt.date.fromisoformat(d["value"]),
    "uuid": lambda d, _: uuid.UUID(d["value"]),
    "enum": _decode_enum,
    "pydantic": _decode_pydantic,
    "dataclass": _decode_dataclass,
    "object": _decode_object,
    "codec": _decode_codec,
}


def _too_deep_to_write() -> SerializationError:
    return SerializationError(f"Cannot serialize a value nested more than {MAX_DEPTH} levels deep (or cyclic).")


def _too_deep() -> SerializationError:
    return SerializationError(f"Data nested more than {MAX_DEPTH} levels deep; refusing to load it.")


def _decode(data: Any, depth: int) -> Any:
    if isinstance(data, list):
        depth += 1
        if depth > MAX_DEPTH:
            raise _too_deep()
        return [_decode(v, depth) for v in cast("list[Any]", data)]
    if isinstance(data, dict):
        depth += 1
        if depth > MAX_DEPTH:
            raise _too_deep()
        obj = cast("dict[str, Any]", data)
        if TAG in obj:
            return _decode_tagged(obj, depth)
        return {k: _decode(v, depth) for k, v in obj.items()}
    return data


def decode(data: Any) -> Any:
    """Rebuild the value :func:`encode` produced, treating ``data`` as untrusted (see the module docstring)."""
    try:
        return _decode(data, 0)
    except RecursionError as e:
        raise _too_deep() from e


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Serialize ``value`` to a JSON string with type tags."""
    return json.dumps(encode(value), indent=indent, ensure_ascii=False, allow_nan=False)


def parse_json(text: str | bytes) -> Any:
    """``json.loads`` for untrusted text: every failure is a :class:`SerializationError`.

    Besides malformed JSON this covers what ``json`` raises outside ``JSONDecodeError``: a ``RecursionError``
    on deeply nested arrays and a ``ValueError`` on integers longer than Python's digit limit.
    """
    try:
        return json.loads(text)
    except RecursionError as e:
        raise SerializationError("Malformed JSON: nested too deeply to load.") from e
    except (ValueError, TypeError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise SerializationError(f"Malformed JSON: {e}") from e


def loads(text: str | bytes) -> Any:
    """Parse a JSON string written by :func:`dumps`; any malformed input raises :class:`SerializationError`."""
    return decode(parse_json(text))
