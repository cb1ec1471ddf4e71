"""The connection and statement layer every kind of row shares: one transaction per write, one query per read.

A backend (:class:`~agentnb.store.RunStore` for SQLite, :class:`~agentnb.store.PostgresStore`) supplies only
connections and transactions: ``_write()`` yields a connection for one transaction, ``_read()`` runs one
query. Statements use ``?`` placeholders and portable SQL (upserts as ``ON CONFLICT ... DO``), so a method
written once in a kind's module (:mod:`._runs`, :mod:`._spans`, :mod:`._checkpoints`, :mod:`._sessions`,
:mod:`._experiments`) works on both backends.

The operations that async code awaits (checkpoints, run mirroring) are written as programs
(:mod:`agentnb.store._program`): the blocking method and its ``a``-prefixed coroutine twin run the same
program, so their SQL exists once. A backend with async connections runs them on those; the others run the
blocking method in a worker thread.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from ..exceptions import StoreError
from ._program import Program, Statement, drive, perform
from ._schema import MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE

__all__ = ["MEMORY", "Backend"]

T = TypeVar("T")

MEMORY = ":memory:"
"""Pass as ``path`` for a store that lives only in this process (tests, nothing on disk)."""


class Backend(abc.ABC):
    """What a store backend supplies (connections, transactions, migration) and what every kind of row uses."""

    backend: str = ""
    """``"sqlite"`` or ``"postgresql"``."""

    path: Path | None = None
    """The SQLite database file (``None`` for in-memory and PostgreSQL stores)."""

    # Orders checkpoints written in the same microsecond by insertion (SQLite's rowid, a serial in Postgres).
    _insert_order: str = "rowid"
    # Exceptions a backend raises when a UNIQUE constraint fails.
    _integrity_errors: tuple[type[BaseException], ...] = ()
    # The column that ties spans to their row in ``traces`` (and leads the spans' unique key).
    _trace_key: str = "trace_no"

    # ------------------------------------------------------------------ plumbing (per backend)

    @abc.abstractmethod
    def _write(self) -> AbstractContextManager[Any]:
        """Return a context manager that yields a connection for one short write transaction."""

    @abc.abstractmethod
    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one query and return its rows."""

    def _turn(self, table: str) -> tuple[Statement, ...]:
        """The statements that open a write transaction changing ``table`` (none by default).

        A backend may make writers of the table take turns (so ids and revisions grow in commit order and a
        poller asking for "after N" never skips a row) and tell watchers when the transaction commits.
        SQLite's ``BEGIN IMMEDIATE`` already serializes writers; PostgreSQL takes an advisory lock and
        sends a ``NOTIFY``. Programs open with ``yield from self._turn(table)`` (the statements return nothing).
        """
        return ()

    def _serialize(self, conn: Any, table: str) -> None:
        """Run :meth:`_turn`'s statements, first thing in the write transaction on ``conn``."""
        for statement in self._turn(table):
            perform(conn, statement)

    def _transact(self, program: Program[T]) -> T:
        """Run a program that writes, in one transaction."""
        with self._write() as conn:
            return drive(program, lambda statement: perform(conn, statement))

    def _query(self, program: Program[T]) -> T:
        """Run a program that only reads (each statement's result is its rows)."""
        return drive(program, lambda statement: self._read(statement.sql, statement.params))

    async def _atransact(self, program: Program[T]) -> T:
        """Await a writing program; this default runs it on a worker thread (sqlite3 has no async API)."""
        return await asyncio.to_thread(self._transact, program)

    async def _aquery(self, program: Program[T]) -> T:
        """Await a reading program; this default runs it on a worker thread."""
        return await asyncio.to_thread(self._query, program)

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection(s); closing twice is harmless."""

    async def aclose(self) -> None:
        """Close the store from async code (a backend with async connections waits for them to close)."""
        await asyncio.to_thread(self.close)

    @property
    @abc.abstractmethod
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """Where the store lives, as a URL without any password (safe to log and show)."""

    def _migrate(self, conn: Any, *, fresh: bool) -> None:
        """Bring the schema to :data:`SCHEMA_VERSION` inside the caller's transaction, or refuse a newer one."""
        if fresh:
            conn.execute(VERSION_TABLE)
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
            version = 0
        else:
            version = int(conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] or 0)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"The run store at {self._where()} has schema version {version}, but this agentnb reads "
                f"up to version {SCHEMA_VERSION}; upgrade agentnb, or use another store URL or AGENTNB_HOME."
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target].statements(self.backend):
                conn.execute(statement)
        if version < SCHEMA_VERSION:
            conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    def _where(self) -> str:
        return repr(self.url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self._read("SELECT MAX(version) FROM schema_version")[0][0])
