"""Edge groups route their own messages: the runner only hands them a Router."""

from __future__ import annotations

import inspect
from typing import Any

from agentnb.workflows import (
    FanInEdgeGroup,
    FanOutEdgeGroup,
    SingleEdgeGroup,
    SwitchCaseEdgeGroup,
)
from agentnb.workflows import SwitchCaseEdgeGroupCase as Case
from agentnb.workflows import SwitchCaseEdgeGroupDefault as Default
from agentnb.workflows._edges import EdgeGroup, Routed, Router


class Recorder:
    """A Router over executors that each accept one type."""

    def __init__(self, accepts: dict[str, type]) -> None:
        self.accepts = accepts
        self.delivered: list[tuple[str, str | None, Any]] = []
        self.buffers: dict[str, dict[str, list[Any]]] = {}
        self.warnings: list[str] = []

    def can_handle(self, target: str, data: Any) -> bool:
        return isinstance(data, self.accepts[target])

    def deliver(self, target: str, source: str | None, data: Any) -> None:
        self.delivered.append((target, source, data))

    def fan_in_buffer(self, group_id: str) -> dict[str, list[Any]]:
        return self.buffers.setdefault(group_id, {})

    def warn(self, text: str) -> None:
        self.warnings.append(text)


def sync(routed: Routed) -> bool:
    """The result of a route that needed no await: a plain bool, no coroutine made."""
    assert isinstance(routed, bool), routed
    return routed


async def awaited(routed: Routed) -> bool:
    """The result of a route that had to await an async condition."""
    assert inspect.isawaitable(routed), routed
    return await routed


def test_each_kind_routes_by_its_own_rule() -> None:
    rec = Recorder({"a": int, "b": str, "j": list})
    router: Router = rec  # what the runner passes: the group needs nothing else
    assert sync(SingleEdgeGroup("x", "a", lambda n: n > 0).route(1, "x", None, router))
    assert not sync(SingleEdgeGroup("x", "a", lambda n: n > 0).route(-1, "x", None, router))
    assert sync(FanOutEdgeGroup("x", ["a", "b"]).route("hi", "x", None, router))  # only b takes a str
    switch = SwitchCaseEdgeGroup("x", [Case(lambda v: isinstance(v, int), "a"), Default("b")])
    assert sync(switch.route("text", "x", None, router))
    join = FanInEdgeGroup(["x", "y"], "j", id="j")
    assert sync(join.route(1, "x", None, router)) and sync(join.route(2, "y", None, router))
    assert rec.delivered == [("a", "x", 1), ("b", "x", "hi"), ("b", "x", "text"), ("j", None, [1, 2])]
    assert rec.buffers["j"] == {}  # emptied on delivery


async def test_async_conditions_and_selection_are_awaited_in_order() -> None:
    rec = Recorder({"a": int, "b": int, "c": int})
    asked: list[str] = []

    async def positive(n: int) -> bool:
        asked.append("positive")
        return n > 0

    def even(n: int) -> bool:
        asked.append("even")
        return n % 2 == 0

    async def pick(n: int, targets: list[str]) -> list[str]:
        return [t for t in targets if t != "a"]

    assert await awaited(SingleEdgeGroup("x", "a", positive).route(1, "x", None, rec))
    assert not await awaited(SingleEdgeGroup("x", "a", positive).route(-1, "x", None, rec))
    # A target the message is not meant for is refused before its condition is asked.
    assert not sync(SingleEdgeGroup("x", "a", positive).route(1, "x", "b", rec))
    switch = SwitchCaseEdgeGroup("x", [Case(positive, "a"), Case(even, "b"), Default("c")])
    asked.clear()
    assert await awaited(switch.route(-2, "x", None, rec))  # not positive, even: b
    assert await awaited(switch.route(-3, "x", None, rec))  # neither: the default c
    assert asked == ["positive", "even", "positive", "even"]  # cases are asked in order, after the await
    assert await awaited(FanOutEdgeGroup("x", ["a", "b", "c"], pick).route(5, "x", None, rec))
    assert rec.delivered == [("a", "x", 1), ("b", "x", -2), ("c", "x", -3), ("b", "x", 5), ("c", "x", 5)]


async def test_a_new_edge_kind_is_a_subclass() -> None:
    class EveryOther(EdgeGroup):
        """Alternates between its targets."""

        kind = "every_other"
        __slots__ = ("turn",)

        def __init__(self, id: str, source: str, targets: list[str]) -> None:
            super().__init__([source], targets, id=id)
            self.turn = 0

        async def route(self, data: Any, source: str, target: str | None, router: Router) -> bool:
            chosen = self.targets[self.turn % len(self.targets)]
            self.turn += 1
            router.deliver(chosen, source, data)
            return True

    rec = Recorder({"a": int, "b": int})
    group = EveryOther("e", "x", ["a", "b"])
    for n in range(3):
        await awaited(group.route(n, "x", None, rec))  # an ``async def route`` is fine too
    assert [t for t, _, _ in rec.delivered] == ["a", "b", "a"]


def test_may_take_is_the_static_check_for_edited_messages() -> None:
    accepts = {"a": int, "b": str, "j": list}

    def can(target: str, data: Any) -> bool:
        return isinstance(data, accepts[target])

    assert SingleEdgeGroup("x", "a", lambda n: False).may_take(1, None, can)  # conditions aside
    assert not FanOutEdgeGroup("x", ["a", "j"]).may_take("text", None, can)
    assert FanInEdgeGroup(["x", "y"], "j", id="j").may_take(1, None, can)  # buffered, joined later
    assert not FanInEdgeGroup(["x", "y"], "j", id="j").may_take(1, "a", can)
