"""Read the declarative format's property schemas (``parameters``, ``outputSchema``) into JSON Schema and pydantic.

The format writes a property as ``{kind|type, description, required, enum, default, items, properties}``
and ``properties`` as a mapping by name or a list of ``{name, ...}``. Tools get a JSON schema (what the
model is shown); ``outputSchema`` becomes a pydantic model so ``response.value`` is parsed and typed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..exceptions import DeclarativeLoaderError
from ._yaml import line_of, locate

__all__ = ["output_model", "properties_to_json_schema"]

_PROPERTY_KEYS = frozenset(
    {"kind", "type", "name", "description", "required", "enum", "default", "example", "items", "properties"}
)
_SCHEMA_KEYS = frozenset({"kind", "type", "name", "description", "properties", "strict", "examples"})
_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "float": float,
    "boolean": bool,
    "bool": bool,
    "array": list,
    "object": dict,
}


def _fail(where: Any, key: str | int | None, message: str) -> DeclarativeLoaderError:
    return DeclarativeLoaderError(message, source=locate(where), line=line_of(where, key))


def _properties(schema: Mapping[str, Any], what: str) -> list[tuple[str, Mapping[str, Any]]]:
    raw = schema.get("properties")
    if raw is None:
        return []
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(raw, Mapping):
        for name, prop in cast("Mapping[str, Any]", raw).items():
            if not isinstance(prop, Mapping):
                raise _fail(raw, name, f"property {name!r} of {what} must be a mapping")
            found.append((name, cast("Mapping[str, Any]", prop)))
    elif isinstance(raw, Sequence) and not isinstance(raw, str):
        items = cast(Sequence[Any], raw)
        for i, prop in enumerate(items):
            if not isinstance(prop, Mapping) or not isinstance(cast("Mapping[str, Any]", prop).get("name"), str):
                raise _fail(raw, i, f"each property of {what} needs a name")
            mapping = cast("Mapping[str, Any]", prop)
            found.append((cast(str, mapping["name"]), mapping))
    else:
        raise _fail(schema, "properties", f"properties of {what} must be a mapping or a list")
    return found


def _kind(prop: Mapping[str, Any], name: str) -> str:
    kind = prop.get("kind", prop.get("type", "string"))
    if kind not in _TYPES:
        key = "kind" if "kind" in prop else "type"
        raise _fail(prop, key, f"property {name!r} has unknown type {kind!r}; use one of {sorted(_TYPES)}")
    return cast(str, kind)


def _check_keys(prop: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    for key in prop:
        if key not in allowed:
            raise _fail(prop, key, f"unknown key {key!r} in {what}; expected one of {sorted(allowed)}")


def _property_schema(prop: Mapping[str, Any], name: str) -> dict[str, Any]:
    _check_keys(prop, _PROPERTY_KEYS, f"property {name!r}")
    kind = _kind(prop, name)
    schema: dict[str, Any] = {"type": {"float": "number", "bool": "boolean"}.get(kind, kind)}
    if isinstance(prop.get("description"), str):
        schema["description"] = prop["description"]
    if "enum" in prop:
        schema["enum"] = list(cast(Sequence[Any], prop["enum"]))
    if "default" in prop:
        schema["default"] = prop["default"]
    if kind == "array" and isinstance(prop.get("items"), Mapping):
        schema["items"] = _property_schema(cast("Mapping[str, Any]", prop["items"]), f"{name}[]")
    if kind == "object" and "properties" in prop:
        schema.update(properties_to_json_schema(prop, what=f"property {name!r}"))
    return schema


def properties_to_json_schema(schema: Mapping[str, Any], *, what: str) -> dict[str, Any]:
    """A JSON schema object for a declarative property schema (``required: true`` marks required fields)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, prop in _properties(schema, what):
        properties[name] = _property_schema(prop, name)
        if prop.get("required") is True:
            required.append(name)
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    if schema.get("strict") is True:
        result["additionalProperties"] = False
    return result


def _annotation(prop: Mapping[str, Any], name: str, model_name: str) -> Any:
    kind = _kind(prop, name)
    if "enum" in prop:
        values = tuple(cast(Sequence[Any], prop["enum"]))
        return Literal[values]  # type: ignore[valid-type]
    if kind == "array":
        items = prop.get("items")
        inner = _annotation(cast("Mapping[str, Any]", items), name, model_name) if isinstance(items, Mapping) else Any
        return list[inner]
    if kind == "object" and "properties" in prop:
        return output_model(prop, name=f"{model_name}{name[:1].upper()}{name[1:]}")
    return _TYPES[kind]


def output_model(schema: Mapping[str, Any], *, name: str) -> type[BaseModel]:
    """A pydantic model for an ``outputSchema``, so the agent's ``response.value`` is parsed into it."""
    _check_keys(schema, _SCHEMA_KEYS | _PROPERTY_KEYS, "outputSchema")
    fields: dict[str, Any] = {}
    for prop_name, prop in _properties(schema, "outputSchema"):
        _check_keys(prop, _PROPERTY_KEYS, f"property {prop_name!r}")
        annotation = _annotation(prop, prop_name, name)
        description = prop.get("description") if isinstance(prop.get("description"), str) else None
        if prop.get("required") is True:
            fields[prop_name] = (annotation, Field(..., description=description))
        else:
            fields[prop_name] = (annotation | None, Field(prop.get("default"), description=description))
    model_name = "".join(ch for ch in name.title() if ch.isalnum()) or "Output"
    try:
        return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as e:  # pydantic rejects some field names (leading underscores)
        raise _fail(schema, "properties", f"outputSchema cannot be turned into a model: {e}") from e
