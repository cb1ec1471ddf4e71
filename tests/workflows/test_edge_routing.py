"""Edge groups route their own messages: the runner only hands them a Router."""

from __future__ import annotations

from typing import Any

from agentnb.workflows import FanInEdgeGroup, FanOutEdgeGroup, SingleEdgeGroup, SwitchCaseEdgeGroup
from agentnb.workflows._edges import EdgeGroup, Router


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


async def test_each_kind_routes_by_its_own_rule() -> None:
    rec = Recorder({"a": int, "b": str, "j": list})
    router: Router = rec  # what the runner passes: the group needs nothing else
    assert await SingleEdgeGroup("s", "x", "a", lambda n: n > 0).route(1, "x", None, router)
    assert not await SingleEdgeGroup("s", "x", "a", lambda n: n > 0).route(-1, "x", None, router)
    assert await FanOutEdgeGroup("f", "x", ["a", "b"]).route("hi", "x", None, router)  # only b takes a str
    switch = SwitchCaseEdgeGroup("w", "x", [("a", lambda v: isinstance(v, int))], "b")
    assert await switch.route("text", "x", None, router)
    join = FanInEdgeGroup("j", ["x", "y"], "j")
    assert await join.route(1, "x", None, router) and await join.route(2, "y", None, router)
    assert rec.delivered == [("a", "x", 1), ("b", "x", "hi"), ("b", "x", "text"), ("j", None, [1, 2])]
    assert rec.buffers["j"] == {}  # emptied on delivery


async def test_a_new_edge_kind_is_a_subclass() -> None:
    class EveryOther(EdgeGroup):
        """Alternates between its targets."""

        kind = "every_other"
        __slots__ = ("turn",)

        def __init__(self, id: str, source: str, targets: list[str]) -> None:
            super().__init__(id, [source], targets)
            self.turn = 0

        async def route(self, data: Any, source: str, target: str | None, router: Router) -> bool:
            chosen = self.targets[self.turn % len(self.targets)]
            self.turn += 1
            router.deliver(chosen, source, data)
            return True

    rec = Recorder({"a": int, "b": int})
    group = EveryOther("e", "x", ["a", "b"])
    for n in range(3):
        await group.route(n, "x", None, rec)
    assert [t for t, _, _ in rec.delivered] == ["a", "b", "a"]


def test_may_take_is_the_static_check_for_edited_messages() -> None:
    accepts = {"a": int, "b": str, "j": list}

    def can(target: str, data: Any) -> bool:
        return isinstance(data, accepts[target])

    assert SingleEdgeGroup("s", "x", "a", lambda n: False).may_take(1, None, can)  # conditions aside
    assert not FanOutEdgeGroup("f", "x", ["a"]).may_take("text", None, can)
    assert FanInEdgeGroup("j", ["x", "y"], "j").may_take(1, None, can)  # buffered, joined later
    assert not FanInEdgeGroup("j", ["x", "y"], "j").may_take(1, "a", can)
