# Copyright (c) Microsoft. All rights reserved.

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, cast



@dataclass
class SimpleDataclass:
    """A simple dataclass for testing encoding."""

    name: str
    value: int


@dataclass
class NestedDataclass:
    """A dataclass with nested dataclass field."""

    outer_name: str
    inner: SimpleDataclass


class ModelWithToDict:
    """A class that implements to_dict/from_dict protocol."""

    def __init__(self, data: str) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return {"data": self.data}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ModelWithToDict":
        return cls(data=d["data"])


class UnknownObject:
    """A class that doesn't support any serialization protocol."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __str__(self) -> str:
        return f"UnknownObject({self.value})"


# --- Tests for primitive encoding (pass-through) ---














# --- Tests for collection encoding ---




















# --- Tests for non-JSON-native types (pickled) ---
















# --- Tests for type marker ---






# --- Tests for JSON serializability ---




# --- Tests for mixed complex structures ---








