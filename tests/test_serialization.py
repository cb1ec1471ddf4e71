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


def test_lenient_encoding_follows_the_reference_session_rules() -> None:
    class Legacy:  # to_dict() but no from_dict(): written as its mapping, read back as one
        def to_dict(self) -> dict[str, object]:
            return {"value": 1}

    class Mapping(dict[str, object]):
        def to_dict(self) -> dict[str, object]:
            return {"saved": True}

    class LocalModel(BaseModel):
        value: str

    class Opaque:
        pass

    assert encode({"a": [Legacy()], "m": Mapping(raw=True)}, lenient=True) == {
        "a": [{"value": 1}],
        "m": {"saved": True},
    }
    assert encode(float("inf"), lenient=True) == float("inf")
    with pytest.warns(DeprecationWarning, match="Cold-start deserialization"):
        data = encode({"m": LocalModel(value="x")}, lenient=True)
    assert decode(json.loads(json.dumps(data))) == {"m": LocalModel(value="x")}
    opaque = Opaque()
    with pytest.warns(RuntimeWarning, match="leaving it unchanged"):
        assert encode([opaque], lenient=True) == [opaque]
    with pytest.raises(SerializationError):  # strict by default: checkpoints and stores never lose a type
        encode(Legacy())
    assert encode(float("nan")) == {"__agentnb__": "float", "value": "nan"}
