"""Type guards for JSON data at the package's edges: HTTP bodies, JSON Schemas, stored rows, tool arguments.

Parsed JSON is ``Any`` to the type checker. An ``isinstance(value, Mapping)`` check proves the shape at run
time but leaves the key and value types unknown; these guards say what JSON guarantees (object keys are
strings), so code past the check is typed without a cast at every site.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import TypeIs

__all__ = ["is_json_array", "is_json_object", "is_list_or_tuple"]


def is_json_object(value: object) -> TypeIs[Mapping[str, Any]]:
    """Whether ``value`` is a JSON object (any mapping; its keys are taken to be strings, as JSON's are)."""
    return isinstance(value, Mapping)


def is_json_array(value: object) -> TypeIs[list[Any]]:
    """Whether ``value`` is a JSON array (a list)."""
    return isinstance(value, list)


def is_list_or_tuple(value: object) -> TypeIs[list[Any] | tuple[Any, ...]]:
    """Whether ``value`` is a list or a tuple: what encodes as a JSON array."""
    return isinstance(value, (list, tuple))
