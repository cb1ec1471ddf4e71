"""The actions that only reshape the workflow's variables: several at once, reset, clear, parse, edit tables,
and start a new conversation record. None of them talks to anything outside the run.

They follow the reference's behaviour, including its leniency: removing an item that is not in a table, or
at an index past its end, leaves the table as it was. An operation the action does not know is an error.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..workflows import WorkflowContext
from ._actions import DeclarativeActionExecutor, Scopes
from ._expressions import ExpressionError

__all__ = [
    "ClearAllVariablesExecutor",
    "CreateConversationExecutor",
    "EditTableExecutor",
    "ParseValueExecutor",
    "ResetVariableExecutor",
    "SetMultipleVariablesExecutor",
]


def variable_path(spec: Mapping[str, Any], key: str = "variable") -> str | None:
    """The variable an action writes: ``variable: Local.x``, ``variable: {path: Local.x}``, or ``path: Local.x``."""
    variable = spec.get(key)
    if isinstance(variable, Mapping):
        variable = cast("Mapping[str, Any]", variable).get("path")
    if variable is None and key == "variable":
        variable = spec.get("path")
    return variable if isinstance(variable, str) and variable else None


class _DataAction(DeclarativeActionExecutor):
    def assign(self, scopes: Scopes, path: str, value: Any) -> None:
        try:
            scopes.set(path, value)
        except ExpressionError as e:
            raise self.fail(str(e)) from e

    def evaluate(self, scopes: Scopes, raw: Any, what: str) -> Any:
        try:
            return scopes.eval(raw)
        except ExpressionError as e:
            raise self.fail(f"{what}: {e}") from e


class SetMultipleVariablesExecutor(_DataAction):
    """SetMultipleVariables: each of ``assignments`` (``variable`` + ``value``) in order, later ones seeing earlier."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        assignments = self.spec.get("assignments")
        if not isinstance(assignments, Sequence) or isinstance(assignments, str):
            raise self.fail("assignments must be a list of {variable, value}")
        for index, assignment in enumerate(cast("Sequence[Any]", assignments)):
            if not isinstance(assignment, Mapping):
                raise self.fail(f"assignment {index} is not a mapping")
            item = cast("Mapping[str, Any]", assignment)
            path = variable_path(item)
            if path is None:
                raise self.fail(f"assignment {index} names no variable")
            self.assign(scopes, path, self.evaluate(scopes, item.get("value"), f"assignment {index}"))
        return self.next_id


class ResetVariableExecutor(_DataAction):
    """ResetVariable: the variable becomes blank."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        path = variable_path(self.spec)
        if path is None:
            raise self.fail("ResetVariable needs a variable")
        self.assign(scopes, path, None)
        return self.next_id


class ClearAllVariablesExecutor(_DataAction):
    """ClearAllVariables: every ``Local`` variable goes; inputs, outputs and ``System`` stay."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        scopes.data["Local"] = {}
        return self.next_id


class CreateConversationExecutor(_DataAction):
    """CreateConversation: a new conversation record in ``System.conversations``, its id in ``conversationId``."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        conversation_id = str(uuid.uuid4())
        path = variable_path(self.spec, "conversationId")
        if path is not None:
            self.assign(scopes, path, conversation_id)
        system = cast(dict[str, Any], scopes.data.setdefault("System", {}))
        conversations = cast(dict[str, Any], system.setdefault("conversations", {}))
        conversations[conversation_id] = {"id": conversation_id, "messages": []}
        return self.next_id


_TRUE_WORDS = frozenset({"true", "yes", "1", "on"})


def _number(value: Any) -> int | float:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value) if "." in value or "e" in value.lower() else int(value)
        except ValueError:
            return 0
    return 0


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def convert(value: Any, value_type: str) -> Any:
    """``value`` as ``value_type`` (string, number, boolean, object/record, array/table), as the reference reads it."""
    kind = value_type.lower()
    if kind == "string":
        return "" if value is None else value if isinstance(value, str) else json.dumps(value)
    if kind in {"number", "int", "integer", "float", "decimal"}:
        return 0 if value is None else _number(value)
    if kind in {"boolean", "bool"}:
        if isinstance(value, str):
            return value.strip().lower() in _TRUE_WORDS
        return bool(value)
    if kind in {"object", "record"}:
        if value is None:
            return {}
        parsed = _parsed(value)
        return cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {"value": parsed}
    if kind in {"array", "table", "list"}:
        if value is None:
            return []
        parsed = _parsed(value)
        return cast("list[Any]", parsed) if isinstance(parsed, list) else [parsed]
    raise ValueError(f"unknown valueType {value_type!r}; use string, number, boolean, object or array")


class ParseValueExecutor(_DataAction):
    """ParseValue: evaluate ``value`` and store it in ``variable``, converted to ``valueType`` when one is given."""

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        path = variable_path(self.spec)
        if path is None:
            raise self.fail("ParseValue needs a variable")
        value = self.evaluate(scopes, self.spec.get("value"), "value")
        value_type = self.spec.get("valueType")
        if value_type:
            try:
                value = convert(value, str(value_type))
            except ValueError as e:
                raise self.fail(str(e)) from e
        self.assign(scopes, path, value)
        return self.next_id


_OPERATIONS = {
    "EditTable": frozenset({"add", "insert", "remove", "clear", "set", "update"}),
    "EditTableV2": frozenset({"add", "remove", "clear", "addorupdate", "update"}),
}


class EditTableExecutor(_DataAction):
    """EditTable / EditTableV2: add, insert, remove, clear or update items of a table variable.

    V2 also matches records by ``key`` (a field name): ``addOrUpdate`` replaces the record with the same key or
    adds it, ``remove`` and ``update`` find it by key. V2 names the value ``item`` (``value`` also works).
    """

    async def act(self, scopes: Scopes, ctx: WorkflowContext[Any, Any]) -> str | None:
        path = self.spec.get("table") or variable_path(self.spec)
        if not isinstance(path, str) or not path:
            raise self.fail(f"{self.kind} needs a table")
        operation = str(self.spec.get("operation") or "add").lower()
        if operation not in _OPERATIONS[self.kind]:
            raise self.fail(f"unknown operation {operation!r}; {self.kind} knows {sorted(_OPERATIONS[self.kind])}")
        current = self.evaluate(scopes, f"={path}", "table")
        table: list[Any] = (
            [] if current is None else list(cast("list[Any]", current)) if isinstance(current, list) else [current]
        )
        raw_item = self.spec.get("item") if self.kind == "EditTableV2" else None
        raw_item = raw_item if raw_item is not None else self.spec.get("value")
        key = self.spec.get("key") if self.kind == "EditTableV2" else None
        index = self._index(scopes)
        if operation == "clear":
            table = []
        elif operation in {"add", "insert"}:
            item = self.evaluate(scopes, raw_item, "value")
            table.insert(len(table) if index is None else index, item)
        elif operation == "remove":
            table = self._remove(scopes, table, raw_item, key, index)
        else:  # set / update / addorupdate
            item = self.evaluate(scopes, raw_item, "value")
            position = index if operation != "addorupdate" else None
            if position is None and key and isinstance(item, dict):
                position = _find(table, str(key), cast("dict[str, Any]", item).get(str(key)))
            if position is not None and 0 <= position < len(table):
                table[position] = item
            elif operation == "addorupdate":
                table.append(item)
        self.assign(scopes, path, table)
        return self.next_id

    def _index(self, scopes: Scopes) -> int | None:
        raw = self.spec.get("index")
        if raw is None:
            return None
        value = self.evaluate(scopes, raw, "index")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"index must be a number, got {value!r}")
        return int(value)

    def _remove(self, scopes: Scopes, table: list[Any], raw_item: Any, key: Any, index: int | None) -> list[Any]:
        if raw_item is not None:
            item = self.evaluate(scopes, raw_item, "value")
            if key and isinstance(item, dict):
                wanted = cast("dict[str, Any]", item).get(str(key))
                return [r for r in table if not (isinstance(r, dict) and cast("dict[str, Any]", r).get(key) == wanted)]
            if item in table:
                table.remove(item)
        elif index is not None and 0 <= index < len(table):
            table.pop(index)
        return table


def _find(table: list[Any], key: str, value: Any) -> int | None:
    for position, record in enumerate(table):
        if isinstance(record, dict) and cast("dict[str, Any]", record).get(key) == value:
            return position
    return None
