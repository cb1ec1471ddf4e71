"""A safe YAML reader that remembers where each value came from, so errors can name the line.

Only plain YAML is accepted: mappings, sequences and the scalar types of the YAML core schema. Tags that
build Python objects (``!!python/object``), sets, ordered maps, merge keys and aliases are refused, so a
definition file can never construct anything but data, nor blow up by alias expansion.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import yaml

from ..exceptions import DeclarativeLoaderError

__all__ = ["YamlList", "YamlMap", "line_of", "load_yaml", "locate"]

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp", "binary")
)
_MAX_NODES = 100_000


class YamlMap(dict[str, Any]):
    """A mapping read from YAML; ``line`` is where it starts and ``key_lines`` where each key is (1-based)."""

    line: int | None = None
    source: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines: dict[str, int] = {}

    def line_of(self, key: str) -> int | None:
        """The line of ``key`` in the file, else the mapping's own line."""
        return self.key_lines.get(key, self.line)


class YamlList(list[Any]):
    """A sequence read from YAML; ``item_lines[i]`` is the line of item ``i`` (1-based)."""

    line: int | None = None
    source: str | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.item_lines: list[int] = []


def line_of(value: Any, key: str | int | None = None) -> int | None:
    """The line a value (or one of its keys/items) came from, when it was read by :func:`load_yaml`."""
    if isinstance(value, YamlMap):
        return value.line_of(key) if isinstance(key, str) else value.line
    if isinstance(value, YamlList):
        if isinstance(key, int) and 0 <= key < len(value.item_lines):
            return value.item_lines[key]
        return value.line
    return None


def locate(value: Any) -> str | None:
    """The source name a value was read from, if known."""
    return getattr(value, "source", None) if isinstance(value, YamlMap | YamlList) else None


class _Builder:
    def __init__(self, loader: yaml.SafeLoader, source: str) -> None:
        self.loader = loader
        self.source = source
        self.seen: set[int] = set()

    def fail(self, node: yaml.Node, message: str) -> DeclarativeLoaderError:
        return DeclarativeLoaderError(message, source=self.source, line=node.start_mark.line + 1)

    def build(self, node: yaml.Node, at: yaml.Node | None = None) -> Any:
        # compose() turns every alias into the anchored node itself: a node met twice is an alias.
        if id(node) in self.seen:
            raise self.fail(
                at or node, "YAML aliases (*name) are not allowed in definitions; repeat the value instead."
            )
        self.seen.add(id(node))
        if len(self.seen) > _MAX_NODES:
            raise self.fail(node, f"the definition has more than {_MAX_NODES} values.")
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                raise self.fail(node, f"the tag {node.tag!r} is not allowed; only plain mappings are.")
            result = YamlMap()
            result.line = node.start_mark.line + 1
            result.source = self.source
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self.fail(key_node, "merge keys (<<) are not allowed in definitions.")
                key = self.build(key_node)
                if not isinstance(key, str | int | float | bool):
                    raise self.fail(key_node, f"mapping keys must be strings, got {type(key).__name__}.")
                key = str(key)
                if key in result:
                    raise self.fail(key_node, f"the key {key!r} appears twice in this mapping.")
                result[key] = self.build(value_node, key_node)
                result.key_lines[key] = key_node.start_mark.line + 1
            return result
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                raise self.fail(node, f"the tag {node.tag!r} is not allowed; only plain sequences are.")
            items = YamlList()
            items.line = node.start_mark.line + 1
            items.source = self.source
            for item in node.value:
                items.append(self.build(item))
                items.item_lines.append(item.start_mark.line + 1)
            return items
        if isinstance(node, yaml.ScalarNode):
            if node.tag not in _SCALAR_TAGS:
                raise self.fail(node, f"the tag {node.tag!r} is not allowed; only plain scalars are.")
            return self.loader.construct_object(node, deep=True)  # pyright: ignore[reportUnknownMemberType]
        raise self.fail(node, f"unsupported YAML node {type(node).__name__}.")  # pragma: no cover


def load_yaml(text: str | bytes, *, source: str | None = None) -> Any:
    """Read one YAML document as plain data (``YamlMap``/``YamlList``/scalars), refusing anything else.

    Raises:
        DeclarativeLoaderError: invalid YAML or a construct that is not plain data; names the line.
    """
    name = source or "<yaml>"
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark is not None else None
            raise DeclarativeLoaderError(f"invalid YAML: {e.problem or e}", source=name, line=line) from e
        except yaml.YAMLError as e:
            raise DeclarativeLoaderError(f"invalid YAML: {e}", source=name) from e
        if node is None:
            return None
        try:
            return _Builder(loader, name).build(node)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark is not None else None
            raise DeclarativeLoaderError(f"invalid value: {e.problem or e}", source=name, line=line) from e
    finally:
        loader.dispose()


def read_definition(
    value: str | Path | Mapping[str, Any], *, what: str
) -> tuple[Mapping[str, Any], str | None, str | None]:
    """``value`` (a path, YAML text or a dict) as ``(mapping, yaml_text, source_name)``."""
    if isinstance(value, Mapping):
        return value, None, None
    if isinstance(value, Path):
        try:
            text = value.read_text(encoding="utf-8")
        except OSError as e:
            raise DeclarativeLoaderError(f"Cannot read the {what} file {str(value)!r}: {e}") from e
        source: str | None = str(value)
    else:
        text, source = value, None
    data = load_yaml(text, source=source)
    if not isinstance(data, Mapping):
        raise DeclarativeLoaderError(
            f"a {what} definition must be a YAML mapping, got {type(data).__name__}", source=source, line=1
        )
    return cast("Mapping[str, Any]", data), text, source
