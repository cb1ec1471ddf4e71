"""Run coroutines side by side, making a task only for those that actually wait.

Most executor handlers never suspend (they compute and send), yet ``asyncio.gather`` makes a task for each and
pays a trip through the event loop per task. Here each coroutine takes its first step at once, in a copy of
the current context as a task would; one that finishes there costs no task, one that waits continues as a
task in (a copy of) that context. Results keep the order of the coroutines.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Generator, Sequence
from typing import Any, Generic, TypeVar

_T = TypeVar("_T")


class _Continuation(Generic[_T]):
    """Awaiting it resumes a coroutine that already yielded ``first`` (PEP 380's delegation, written out)."""

    def __init__(self, coro: Coroutine[Any, Any, _T], first: Any) -> None:
        self.coro = coro
        self.first = first

    def __await__(self) -> Generator[Any, Any, _T]:
        coro, yielded = self.coro, self.first
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # a cancellation or an error thrown in by the task: pass it on
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _resume(continuation: _Continuation[_T]) -> _T:
    return await continuation


async def gather_eagerly(coros: Sequence[Coroutine[Any, Any, _T]]) -> list[_T]:
    """``await asyncio.gather(*coros)`` for coroutines that mostly finish without waiting.

    If one raises, the others still run to their end before the first error is raised (none is left running
    unobserved).
    """
    results: list[Any] = [None] * len(coros)
    waiting: list[tuple[int, asyncio.Task[_T]]] = []
    error: BaseException | None = None
    for index, coro in enumerate(coros):
        context = contextvars.copy_context()
        try:
            first = context.run(coro.send, None)
        except StopIteration as stop:
            results[index] = stop.value
        except BaseException as e:
            error = error or e
        else:
            # Made inside the context, the task runs in a copy of it: what the first step set is still there.
            task: asyncio.Task[_T] = context.run(asyncio.ensure_future, _resume(_Continuation(coro, first)))
            waiting.append((index, task))
    if waiting:
        outcomes = await asyncio.gather(*(task for _, task in waiting), return_exceptions=True)
        for (index, _), outcome in zip(waiting, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                error = error or outcome
            else:
                results[index] = outcome
    if error is not None:
        raise error
    return results
