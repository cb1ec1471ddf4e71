"""Pause Python's cyclic garbage collector while a bulk read builds many small objects.

A bulk read of 100,000 runs allocates about a million dicts, lists and strings. With the collector on, every
generation-2 pass walks all of them again (and everything else alive), which can cost more than the read;
nothing such a read builds forms a cycle, so reference counting frees it all the same.

Pausing allocates nothing: a collection owed by allocations made before the block (someone else's garbage)
is not set off by entering it, and is paid after the block as it would have been without it.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

__all__ = ["gc_paused"]


class _Pause:
    """The collector off while any thread is inside a pause; on again (if it was) when the last one leaves."""

    __slots__ = ("depth", "lock", "was_enabled")

    def __init__(self) -> None:
        self.depth = 0
        self.was_enabled = False
        self.lock = threading.Lock()

    def __enter__(self) -> None:
        with self.lock:
            if not self.depth:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.depth += 1

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        with self.lock:
            self.depth -= 1
            if not self.depth and self.was_enabled:
                gc.enable()


_PAUSE = _Pause()


def gc_paused() -> _Pause:
    """Turn the cyclic collector off for the block (if it was on) and back on after it.

    Reentrant and shared by threads: one process-wide pause, so entering allocates no object (an allocation
    could set off the collection the pause is there to avoid).
    """
    return _PAUSE
