from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid

import pytest
from pydantic import BaseModel

from agentnb import Message
from agentnb._serialization import decode, dumps, encode, loads, register_type
from agentnb.exceptions import SerializationError


class Color(enum.Enum):
    RED = "red"


class Point(BaseModel):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    label: str
    corners: tuple[int, int]
    color: Color
    extra: dict[int, bytes] = dataclasses.field(default_factory=dict)


def test_round_trips_keep_types() -> None:
    value = {
        "point": Point(x=1, y=2),
        "box": Box("b", (1, 2), Color.RED, {1: b"\x00\xff"}),
        "when": dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc),
        "day": dt.date(2026, 1, 2),
        "id": uuid.UUID(int=5),
        "set": {3, 1, 2},
        "frozen": frozenset({"a"}),
        "tuple": (1, "x"),
        "nan": float("inf"),
        "message": Message("user", ["hi"]),
        "nested": [{"__agentnb__": "not a tag"}],
    }
    restored = loads(dumps(value))
    assert restored == value
    assert isinstance(restored["box"].corners, tuple)
    assert isinstance(restored["point"], Point)
    assert isinstance(restored["message"], Message)


def test_encoding_is_plain_json() -> None:
    text = dumps({"p": Point(x=1, y=2)})
    data = json.loads(text)
    assert data["p"]["__agentnb__"] == "pydantic"
    assert "Point" in data["p"]["type"]


def test_unknown_values_raise_a_clear_error() -> None:
    with pytest.raises(SerializationError, match=r"Cannot serialize a value of type builtins\.object"):
        encode(object())


def test_decoding_refuses_non_model_classes_and_missing_types() -> None:
    # A hostile file naming an arbitrary callable must not be able to call it.
    with pytest.raises(SerializationError, match="is not a class"):
        decode({"__agentnb__": "pydantic", "type": "os:system", "data": "echo hacked"})
    with pytest.raises(SerializationError, match="has no from_dict"):
        decode({"__agentnb__": "object", "type": "subprocess:Popen", "data": {}})
    with pytest.raises(SerializationError, match="Cannot restore type"):
        decode({"__agentnb__": "dataclass", "type": "nowhere.module:Thing", "fields": {}})
    with pytest.raises(SerializationError, match="Unknown type tag"):
        decode({"__agentnb__": "pickle", "data": "..."})
    with pytest.raises(SerializationError, match="Malformed JSON"):
        loads("{not json")


def test_registered_ids_are_stable_and_unique() -> None:
    class Renamed(BaseModel):
        v: int

    register_type(Renamed, "tests.Renamed")
    data = encode(Renamed(v=1))
    assert data["type"] == "tests.Renamed"
    assert decode(data) == Renamed(v=1)
    register_type(Renamed, "tests.Renamed")  # same class again is harmless
    with pytest.raises(ValueError, match="already registered"):
        register_type(Point, "tests.Renamed")
