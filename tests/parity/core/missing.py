"""Stand-ins for reference names agentnb has no counterpart for, so a ported test file still imports.

A stand-in can be named in annotations, subscripted and subclassed (a module-level helper class built on it
still defines), but calling it, or reading an attribute from it, raises :class:`MissingReferenceName`: the
tests that use the name fail, and only those.
"""

from __future__ import annotations

from typing import Any, NoReturn


class MissingReferenceName(NotImplementedError):
    """A ported test used a reference name that agentnb does not have."""


class _Missing(type):
    reference: str

    def _fail(cls) -> NoReturn:
        raise MissingReferenceName(cls.reference)

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        cls._fail()

    def __getattr__(cls, name: str) -> NoReturn:
        if name.startswith("__"):
            raise AttributeError(name)
        cls._fail()

    def __getitem__(cls, item: object) -> _Missing:
        return cls

    def __or__(cls, other: object) -> Any:
        return Any

    def __ror__(cls, other: object) -> Any:
        return Any


def missing(reference: str) -> Any:
    """A stand-in for the reference's ``reference`` (a dotted name)."""
    return _Missing(reference.rsplit(".", 1)[1], (), {"reference": reference})
