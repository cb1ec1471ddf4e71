"""Type-hint helpers: flatten unions, check values against hints, and compare hints for edge validation.

Handlers declare what they accept and what they send through ordinary type hints. The runner checks
values against those hints at run time (cheaply: plain classes use ``isinstance``; generic containers
check their origin and items), and the builder compares hints pairwise to reject edges that can never
carry a message.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn, Union, cast, get_args, get_origin

from typing_extensions import Never

__all__ = ["describe", "flatten", "is_compatible", "matches"]

_NEVER: tuple[Any, ...] = (Never, NoReturn)


def flatten(hint: Any) -> tuple[Any, ...]:
    """Split a union (``A | B``, ``Union[A, B]``, ``Optional[A]``) into its members; ``Never`` yields nothing."""
    if hint is None or hint is type(None):
        return (type(None),)
    if any(hint is n for n in _NEVER):
        return ()
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        out: list[Any] = []
        for arg in get_args(hint):
            out.extend(flatten(arg))
        return tuple(out)
    return (hint,)


def describe(hint: Any) -> str:
    """A short readable name for a type hint, for error messages."""
    if hint is Any:
        return "Any"
    if isinstance(hint, type) and get_origin(hint) is None:
        return hint.__qualname__
    return repr(hint).replace("typing.", "")


def _origin_class(hint: Any) -> Any:
    origin = get_origin(hint)
    return origin if origin is not None else hint


def matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits ``hint``; containers are checked item by item, one level deep per level."""
    if type(hint) is type:  # the common case (str, int, user classes): no typing machinery needed
        return hint is object or isinstance(value, hint)
    if hint is Any or hint is object:
        return True
    if hint is None or hint is type(None):
        return value is None
    if isinstance(hint, type) and get_origin(hint) is None:
        return isinstance(value, hint)
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(matches(value, h) for h in get_args(hint))
    if origin is typing.Literal:
        return value in get_args(hint)
    if origin is None:
        # TypeVars, NewType and other exotic hints: accept rather than guess wrong.
        return True
    if not isinstance(origin, type) or not isinstance(value, origin):
        return False
    args = get_args(hint)
    if not args:
        return True
    if isinstance(value, Mapping) and len(args) == 2:
        mapping = cast("Mapping[Any, Any]", value)
        return all(matches(k, args[0]) and matches(v, args[1]) for k, v in mapping.items())
    if isinstance(value, tuple):
        items = cast("tuple[Any, ...]", value)
        if len(args) == 2 and args[1] is Ellipsis:
            return all(matches(v, args[0]) for v in items)
        return len(args) == len(items) and all(matches(v, a) for v, a in zip(items, args, strict=True))
    if isinstance(value, (Sequence, set, frozenset)) and not isinstance(value, (str, bytes)) and len(args) == 1:
        return all(matches(v, args[0]) for v in cast("Iterable[Any]", value))
    return True


def is_compatible(source: Any, target: Any) -> bool:
    """Whether a value typed ``source`` can be accepted by a parameter typed ``target``."""
    if source is Any or target is Any or target is object:
        return True
    sources = flatten(source)
    targets = flatten(target)
    return any(_single_compatible(s, t) for s in sources for t in targets)


def _single_compatible(source: Any, target: Any) -> bool:
    if source is Any or target is Any or target is object:
        return True
    s_origin, t_origin = _origin_class(source), _origin_class(target)
    if get_origin(target) is typing.Literal:
        return get_origin(source) is typing.Literal and set(get_args(source)) <= set(get_args(target))
    if get_origin(source) is typing.Literal:
        return all(matches(v, target) for v in get_args(source))
    if not isinstance(s_origin, type) or not isinstance(t_origin, type):
        return True
    if not issubclass(s_origin, t_origin):
        return False
    s_args, t_args = get_args(source), get_args(target)
    if not s_args or not t_args or len(s_args) != len(t_args):
        return True
    return all(a is Ellipsis or b is Ellipsis or is_compatible(a, b) for a, b in zip(s_args, t_args, strict=True))
