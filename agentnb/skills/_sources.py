"""Where skills come from, and the decorators that combine, filter, deduplicate and cache sources.

A source answers one question, "which skills does this agent have now?", given the invoking agent and
session; decorators wrap sources, so a pipeline is built like ``Deduplicating(Caching(File(...)))``.
A source is a trust boundary: what it returns is put in the model's context, and file sources' scripts can
run (under approval).
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, cast

from ._model import Skill

__all__ = [
    "AggregatingSkillsSource",
    "CachingSkillsSource",
    "DeduplicatingSkillsSource",
    "DelegatingSkillsSource",
    "FilteringSkillsSource",
    "InMemorySkillsSource",
    "SkillsSource",
    "SkillsSourceContext",
]

logger = logging.getLogger("agentnb.skills")


@dataclass(frozen=True)
class SkillsSourceContext:
    """Who is asking for skills: the invoking agent and, when there is one, its session.

    Sources and decorators use it for per-agent filtering (:class:`FilteringSkillsSource`) and per-key
    caching (:class:`CachingSkillsSource`); :class:`SkillsProvider` builds it for every run.
    """

    agent: Any
    session: Any = None


class SkillsSource(ABC):
    """Where skills come from; subclass it for custom origins (a database, a service, ...).

    What a source returns reaches the model's context (names, descriptions, bodies), and for file skills
    its scripts can run under approval: register only sources you trust.
    """

    @abstractmethod
    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        """The skills available to ``context``'s agent."""

    @property
    def label(self) -> str:
        """A short description of the source for views (``FileSkillsSource(./skills)``)."""
        return type(self).__name__

    @property
    def inner_sources(self) -> list[SkillsSource]:
        """The sources this one reads from (empty for a leaf), so views can draw the pipeline."""
        return []

    def _repr_html_(self) -> str:
        from ._display import source_html

        return source_html(self)

    def __repr__(self) -> str:
        return self.label


class InMemorySkillsSource(SkillsSource):
    """Skills built in code, held as given.

    Example:
        ```python
        from agentnb import InlineSkill, InMemorySkillsSource, SkillFrontmatter, SkillsSourceContext

        skill = InlineSkill(frontmatter=SkillFrontmatter(name="hi", description="Says hi."), instructions="Hi.")
        await InMemorySkillsSource([skill]).get_skills(SkillsSourceContext(agent=None))  # [InlineSkill(name='hi')]
        ```
    """

    def __init__(self, skills: Sequence[Skill]) -> None:
        items = list(skills)
        for item in items:
            if not isinstance(cast(object, item), Skill):
                raise TypeError(f"InMemorySkillsSource holds Skill objects, got {type(item).__name__}.")
        self._skills = items

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        return self._skills

    @property
    def label(self) -> str:
        return f"InMemorySkillsSource({len(self._skills)} skills)"


class DelegatingSkillsSource(SkillsSource, ABC):
    """Base of decorators: wraps ``inner_source`` and, unless overridden, returns what it returns."""

    def __init__(self, inner_source: SkillsSource) -> None:
        if not isinstance(cast(object, inner_source), SkillsSource):
            raise TypeError(f"inner_source must be a SkillsSource, got {type(inner_source).__name__}.")
        self._inner_source = inner_source

    @property
    def inner_source(self) -> SkillsSource:
        """The wrapped source."""
        return self._inner_source

    @property
    def inner_sources(self) -> list[SkillsSource]:
        return [self._inner_source]

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        return await self._inner_source.get_skills(context)


class DeduplicatingSkillsSource(DelegatingSkillsSource):
    """Keeps the first skill of each name (case-insensitive); later ones are dropped with a warning log."""

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        skills = await self._inner_source.get_skills(context)
        seen: dict[str, Skill] = {}
        kept: list[Skill] = []
        for skill in skills:
            key = skill.frontmatter.name.lower()
            if key in seen:
                logger.warning(
                    "Duplicate skill name %r: the one from %s is skipped in favour of the one from %s.",
                    skill.frontmatter.name,
                    skill.origin,
                    seen[key].origin,
                )
                continue
            seen[key] = skill
            kept.append(skill)
        return kept


class FilteringSkillsSource(DelegatingSkillsSource):
    """Keeps the skills for which ``predicate(skill, context)`` is true (so it can differ per agent).

    Example:
        ```python
        FilteringSkillsSource(source, predicate=lambda skill, context: skill.frontmatter.name != "internal")
        ```
    """

    def __init__(self, inner_source: SkillsSource, predicate: Callable[[Skill, SkillsSourceContext], bool]) -> None:
        super().__init__(inner_source)
        if not callable(predicate):
            raise TypeError(f"predicate must be callable (skill, context) -> bool, got {predicate!r}.")
        self._predicate = predicate

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        skills = await self._inner_source.get_skills(context)
        return [skill for skill in skills if self._predicate(skill, context)]


class AggregatingSkillsSource(SkillsSource):
    """The skills of several sources, in order (wrap it in :class:`DeduplicatingSkillsSource` for unique names)."""

    def __init__(self, sources: Sequence[SkillsSource]) -> None:
        items = list(sources)
        for item in items:
            if not isinstance(cast(object, item), SkillsSource):
                raise TypeError(f"AggregatingSkillsSource combines SkillsSource objects, got {type(item).__name__}.")
        self._sources = items

    @property
    def inner_sources(self) -> list[SkillsSource]:
        return list(self._sources)

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        result: list[Skill] = []
        for source in self._sources:
            result.extend(await source.get_skills(context))
        return result


class CachingSkillsSource(DelegatingSkillsSource):
    """Caches the inner source's list, fetching once per key however many callers ask at the same time.

    A failed fetch leaves the cache as it was (empty at first, the previous list on a refresh), so the next
    call retries. Freshness uses a monotonic clock.

    Args:
        inner_source: The source to cache.
        cache_isolation_key_selector: A low-cardinality key per context (an agent's name, a tenant) for
            context-aware inner sources; ``None`` (or a ``None`` key) uses one shared bucket.
        refresh_interval: How long a list stays fresh; ``None`` never expires; zero or less is always stale.

    Example:
        ```python
        from datetime import timedelta

        cached = CachingSkillsSource(source, refresh_interval=timedelta(minutes=5))
        ```
    """

    _SHARED: Final[str] = "__shared__"

    def __init__(
        self,
        inner_source: SkillsSource,
        *,
        cache_isolation_key_selector: Callable[[SkillsSourceContext], str | None] | None = None,
        refresh_interval: timedelta | None = None,
    ) -> None:
        super().__init__(inner_source)
        if refresh_interval is not None and not isinstance(cast(object, refresh_interval), timedelta):
            raise TypeError(f"refresh_interval must be a datetime.timedelta, got {type(refresh_interval).__name__}.")
        self._selector = cache_isolation_key_selector
        self._refresh_interval = refresh_interval
        self._cache: dict[str, tuple[list[Skill], float]] = {}
        self._in_flight: dict[str, asyncio.Future[list[Skill] | None]] = {}
        #: How many times the inner source was asked (views and tests read it).
        self.fetch_count = 0

    def _key(self, context: SkillsSourceContext) -> str:
        if self._selector is not None:
            key = self._selector(context)
            if key is not None:
                return key
        return self._SHARED

    def _fresh(self, key: str) -> list[Skill] | None:
        entry = self._cache.get(key)
        if entry is None:
            return None
        interval = self._refresh_interval
        if interval is not None and time.monotonic() - entry[1] >= interval.total_seconds():
            return None
        return entry[0]

    def cached(self, context: SkillsSourceContext | None = None) -> list[Skill] | None:
        """The cached list for ``context``'s key (the shared bucket without one), fresh or not; never fetches."""
        entry = self._cache.get(self._SHARED if context is None else self._key(context))
        return None if entry is None else list(entry[0])

    def clear(self) -> None:
        """Forget every cached list (the next call fetches again)."""
        self._cache.clear()

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        key = self._key(context)
        while True:
            cached = self._fresh(key)
            if cached is not None:
                return cached
            loop = asyncio.get_running_loop()
            pending = self._in_flight.get(key)
            if pending is None or pending.get_loop() is not loop:
                break
            # Another caller is fetching this key: share its result (shielded, so our cancellation is ours).
            shared = await asyncio.shield(pending)
            if shared is not None:
                return shared
            # ``None``: that fetch was cancelled; check the cache again and fetch ourselves.
        future: asyncio.Future[list[Skill] | None] = loop.create_future()
        self._in_flight[key] = future
        try:
            self.fetch_count += 1
            skills = await self._inner_source.get_skills(context)
        except asyncio.CancelledError:
            future.set_result(None)
            raise
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved here too: no "never retrieved" log when nobody waits
            raise
        finally:
            if self._in_flight.get(key) is future:
                del self._in_flight[key]
        self._cache[key] = (skills, time.monotonic())
        future.set_result(skills)
        return skills
