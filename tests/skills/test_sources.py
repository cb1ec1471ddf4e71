"""Skill sources and decorators: composition, per-context filtering, and the single-flight cache."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from agentnb import (
    AggregatingSkillsSource,
    CachingSkillsSource,
    DeduplicatingSkillsSource,
    FilteringSkillsSource,
    InlineSkill,
    InMemorySkillsSource,
    Skill,
    SkillFrontmatter,
    SkillsSource,
    SkillsSourceContext,
)


def skill(name: str, description: str = "d") -> InlineSkill:
    return InlineSkill(frontmatter=SkillFrontmatter(name=name, description=description), instructions="i")


def names(skills: list[Skill]) -> list[str]:
    return [s.frontmatter.name for s in skills]


class Counting(SkillsSource):
    """A source that counts fetches, can be held open, and can fail on demand."""

    def __init__(self) -> None:
        self.calls = 0
        self.gate: asyncio.Event | None = None
        self.fail = False
        self.version = 0

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise RuntimeError("backend down")
        return [skill(f"v{self.version}-{context.agent or 'any'}")]


async def test_aggregate_dedupe_and_filter_by_context() -> None:
    a = InMemorySkillsSource([skill("one", "first"), skill("two")])
    b = InMemorySkillsSource([skill("one", "second"), skill("three")])
    source = DeduplicatingSkillsSource(
        FilteringSkillsSource(
            AggregatingSkillsSource([a, b]),
            predicate=lambda s, ctx: ctx.agent == "admin" or s.frontmatter.name != "three",
        )
    )
    user = await source.get_skills(SkillsSourceContext(agent="user"))
    admin = await source.get_skills(SkillsSourceContext(agent="admin"))
    assert names(user) == ["one", "two"] and user[0].frontmatter.description == "first"
    assert names(admin) == ["one", "two", "three"]
    with pytest.raises(TypeError):
        InMemorySkillsSource(["not a skill"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        DeduplicatingSkillsSource([a])  # type: ignore[arg-type]


async def test_concurrent_callers_share_one_fetch() -> None:
    inner = Counting()
    inner.gate = asyncio.Event()
    cached = CachingSkillsSource(inner)
    ctx = SkillsSourceContext(agent=None)
    tasks = [asyncio.create_task(cached.get_skills(ctx)) for _ in range(5)]
    while inner.calls == 0:
        await asyncio.sleep(0)
    for _ in range(5):
        await asyncio.sleep(0)  # every caller is now waiting on the one fetch
    inner.gate.set()
    results = await asyncio.gather(*tasks)
    assert inner.calls == 1 and all(r is results[0] for r in results)
    assert await cached.get_skills(ctx) is results[0] and inner.calls == 1


async def test_a_failed_first_fetch_leaves_nothing_cached_and_retries() -> None:
    inner = Counting()
    inner.fail = True
    cached = CachingSkillsSource(inner)
    ctx = SkillsSourceContext(agent=None)
    with pytest.raises(RuntimeError, match="backend down"):
        await cached.get_skills(ctx)
    inner.fail = False
    assert names(await cached.get_skills(ctx)) == ["v0-any"] and inner.calls == 2


async def test_refresh_interval_and_a_failed_refresh_keeps_the_old_list() -> None:
    inner = Counting()
    ctx = SkillsSourceContext(agent=None)
    always_stale = CachingSkillsSource(inner, refresh_interval=timedelta(0))
    await always_stale.get_skills(ctx)
    inner.version = 1
    assert names(await always_stale.get_skills(ctx)) == ["v1-any"]
    inner.fail = True
    with pytest.raises(RuntimeError):
        await always_stale.get_skills(ctx)
    assert names(always_stale.cached() or []) == ["v1-any"]  # the previous list is kept
    inner.fail = False
    inner.version = 2
    assert names(await always_stale.get_skills(ctx)) == ["v2-any"]

    fresh = CachingSkillsSource(Counting(), refresh_interval=timedelta(hours=1))
    first = await fresh.get_skills(ctx)
    assert await fresh.get_skills(ctx) is first
    with pytest.raises(TypeError, match="timedelta"):
        CachingSkillsSource(inner, refresh_interval=5)  # type: ignore[arg-type]


async def test_isolation_keys_cache_per_agent() -> None:
    inner = Counting()
    cached = CachingSkillsSource(inner, cache_isolation_key_selector=lambda ctx: ctx.agent)
    assert names(await cached.get_skills(SkillsSourceContext(agent="a"))) == ["v0-a"]
    assert names(await cached.get_skills(SkillsSourceContext(agent="b"))) == ["v0-b"]
    assert names(await cached.get_skills(SkillsSourceContext(agent="a"))) == ["v0-a"]
    assert names(await cached.get_skills(SkillsSourceContext(agent=None))) == ["v0-any"]  # None: shared bucket
    assert inner.calls == 3


async def test_a_cancelled_fetch_lets_the_next_caller_fetch() -> None:
    inner = Counting()
    inner.gate = asyncio.Event()
    cached = CachingSkillsSource(inner)
    ctx = SkillsSourceContext(agent=None)
    owner = asyncio.create_task(cached.get_skills(ctx))
    while inner.calls == 0:
        await asyncio.sleep(0)
    waiter = asyncio.create_task(cached.get_skills(ctx))
    await asyncio.sleep(0)
    owner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await owner
    inner.gate.set()
    assert names(await waiter) == ["v0-any"] and inner.calls == 2
