"""The async connections of one event loop: a small pool that runs no task of its own.

psycopg_pool's ``AsyncConnectionPool`` keeps worker tasks in the loop. When ``asyncio.run`` ends it cancels
every task at once, those workers included, and the pool can then no longer close its connections: they stay
open on the server until garbage collection. This pool has nothing to cancel. A caller takes an idle
connection or, when none is idle, opens one (at most ``max_size`` are in use at once); an intact connection
goes back for reuse; :meth:`LoopPool.close` closes the idle ones and marks the pool so that connections still
in use close when they come back.

A connection that broke (the server restarted, the network went away) is closed together with every idle
one, since those were opened before the break too: the next caller opens a fresh connection instead of
failing on a stale one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import PoolTimeout

__all__ = ["LoopPool"]

AsyncConnection = psycopg.AsyncConnection[Any]


class LoopPool:
    """Reusable async connections of the running event loop.

    Args:
        connect: Opens a new connection (autocommit, the store's URL and timeouts).
        max_size: Most connections in use at once; further callers wait for one to come back.
        timeout: Seconds a caller waits for a free slot before :class:`psycopg_pool.PoolTimeout`.
        name: Names the pool in errors.
    """

    def __init__(
        self, connect: Callable[[], Awaitable[AsyncConnection]], *, max_size: int, timeout: float, name: str
    ) -> None:
        self._connect = connect
        self._idle: list[AsyncConnection] = []
        self._slots = asyncio.Semaphore(max_size)
        self._timeout = timeout
        self._name = name
        self._closed = False

    @asynccontextmanager
    async def connection(self) -> AsyncGenerator[AsyncConnection, None]:
        """Lend a connection for one operation; it returns to the pool (or is closed) afterwards."""
        if self._slots.locked():  # all lent out: wait, but not forever
            try:
                await asyncio.wait_for(self._slots.acquire(), self._timeout)
            except TimeoutError:
                raise PoolTimeout(f"no connection of {self._name!r} was free within {self._timeout:g} s") from None
        else:
            await self._slots.acquire()  # free: returns at once (wait_for would start a task per call)
        try:
            if self._closed:
                raise psycopg.OperationalError(f"the connection pool {self._name!r} is closed")
            conn = self._idle.pop() if self._idle else await self._connect()
        except BaseException:
            self._slots.release()
            raise
        try:
            yield conn
        finally:
            self._slots.release()
            await self._give_back(conn)

    async def _give_back(self, conn: AsyncConnection) -> None:
        if conn.broken:
            stale, self._idle = self._idle, []
            for other in stale:
                await other.close()
        if self._closed or conn.closed or conn.broken or conn.info.transaction_status != TransactionStatus.IDLE:
            await conn.close()  # a cancelled query or failed rollback leaves it unusable: never lend it again
        else:
            self._idle.append(conn)

    async def close(self) -> None:
        """Close the idle connections now and the lent ones when they come back; closing twice is harmless."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()

    @property
    def idle(self) -> int:
        """How many open connections wait for reuse."""
        return len(self._idle)
