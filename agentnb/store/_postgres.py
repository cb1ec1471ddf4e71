"""The PostgreSQL store: the same runs, events, spans, checkpoints and sessions, shared across machines.

Every method comes from :class:`~agentnb.store.Store`; this module supplies the connections. A
``psycopg_pool`` pool hands each call its own connection, so threads never wait on one another's queries.
Coroutines (``await store.aput_checkpoint(...)``, what workflows and checkpoint storage call) run on
``psycopg``'s async connections instead, from an async pool per event loop, so the loop keeps running while
the server works; that pool closes when its loop shuts down (``asyncio.run`` cancels its tasks) or when the
store closes.
Writes that need ids in commit order (runs, events, spans) take a transaction-scoped advisory lock, and
every write sends a ``NOTIFY`` when it commits: :meth:`PostgresStore.watermark` listens for those on a
connection of its own and answers from memory until something changes, so a DevUI polling it costs the
server nothing while nothing happens, whichever machine writes.

The URL's password (or libpq's ``PGPASSWORD`` / password file) is used to connect and nowhere else: ``repr``,
:attr:`PostgresStore.url` and every error show the URL with ``***`` in its place.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import psycopg
import psycopg.conninfo
from psycopg_pool import ConnectionPool, PoolTimeout
from typing_extensions import LiteralString

from ..exceptions import StoreError
from ._base import SPAN_COLUMNS, Store, Watermark
from ._loop_pool import LoopPool
from ._open import redact_url
from ._program import Program, Statement, adrive, drive, perform

__all__ = ["PostgresStore"]

logger = logging.getLogger("agentnb.store")

CHANNEL = "agentnb_store"
"""The ``LISTEN``/``NOTIFY`` channel; each notification's payload names the table that changed."""

# pg_advisory_xact_lock(key1, key2): key1 marks agentnb's locks, key2 the table whose writers take turns.
_LOCK_SPACE = 0x61676E62  # "agnb"
_LOCK_KEYS = {"schema": 0, "runs": 1, "events": 2, "spans": 3, "checkpoints": 4, "sessions": 5, "experiments": 6}
_ORDERED = frozenset({"runs", "events", "spans", "experiments"})

_SPAN_LIST = ", ".join(SPAN_COLUMNS[1:])  # every column but the serial id
# A batch goes straight into ``spans``; the table's trigger keeps ``traces`` (schema version 5).
_COPY_SQL = f"COPY spans ({_SPAN_LIST}) FROM STDIN"
# A batch with spans stored before (the span store wrote it again after a failed flush) takes the slow path:
# a per-connection staging table (emptied by every commit), then a move that skips the stored ones.
_STAGE_SQL = (
    "CREATE TEMP TABLE IF NOT EXISTS agentnb_span_batch ON COMMIT DELETE ROWS "
    f"AS SELECT {_SPAN_LIST} FROM spans WITH NO DATA"
)
_STAGE_COPY_SQL = f"COPY agentnb_span_batch ({_SPAN_LIST}) FROM STDIN"
_MOVE_SQL = (
    f"INSERT INTO spans ({_SPAN_LIST}) SELECT {_SPAN_LIST} FROM agentnb_span_batch "
    "ON CONFLICT (trace_id, span_id) DO NOTHING"
)


def _turn_statements(table: str) -> tuple[Statement, ...]:
    key = (_LOCK_SPACE, _LOCK_KEYS[table])
    if table == "spans":
        # Spans are telemetry written in batches off the hot path: their commits skip the wait for the disk
        # flush (a server crash may drop the last fraction of a second of spans, never corrupt).
        return (Statement("SELECT pg_advisory_xact_lock(?, ?), set_config('synchronous_commit', 'off', true)", key),)
    if table in _ORDERED:
        return (Statement("SELECT pg_advisory_xact_lock(?, ?)", key),)
    return ()


# Writers of tables whose ids or revisions pollers follow take turns (ids then grow in commit order, so a
# poller asking for "after id N" never skips a row). The NOTIFY that tells listeners comes from the tables'
# statement triggers (schema version 4), so other tables need no statement before their write.
_TURNS = {table: _turn_statements(table) for table in _LOCK_KEYS if table != "schema"}


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> LiteralString:
    """Turn the shared ``?`` placeholders into psycopg's ``%s`` (escaping literal ``%``)."""
    return _statement(sql.replace("%", "%%").replace("?", "%s"))


def _statement(sql: str) -> LiteralString:
    """``sql`` as the literal statement psycopg's types ask for.

    Every statement here is assembled from this package's own constants (table and column names,
    placeholders); values always travel as parameters, never inside the text.
    """
    return cast(LiteralString, sql)


class _Connection:
    """The slice of a DB-API connection the shared store code uses, with ``?`` placeholders."""

    __slots__ = ("_conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The psycopg connection, for PostgreSQL-only statements (``%s`` placeholders)."""
        return self._conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        return self._conn.execute(_pg_sql(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> psycopg.Cursor[Any]:
        cur = self._conn.cursor()
        cur.executemany(_pg_sql(sql), rows)
        return cur


async def _aperform(conn: psycopg.AsyncConnection[Any], statement: Statement) -> Any:
    """Execute one program statement on an async connection (the async twin of ``_program.perform``)."""
    sql = _pg_sql(statement.sql)
    if statement.many:
        cursor = conn.cursor()
        await cursor.executemany(sql, statement.params)
    else:
        cursor = await conn.execute(sql, statement.params)
    if statement.result == "one":
        return await cursor.fetchone()
    if statement.result == "all":
        return await cursor.fetchall()
    if statement.result == "rowcount":
        return cursor.rowcount
    return None


def _describe(url: str) -> str:
    """Name the server and database a URL (plus libpq's environment) points at; never the password."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return repr(redact_url(url))
    host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "localhost"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    user = params.get("user") or os.environ.get("PGUSER")
    database = params.get("dbname") or os.environ.get("PGDATABASE") or user or "postgres"
    who = f" as user {user!r}" if user else ""
    return f"database {database!r} on host {host!r} port {port}{who}"


class PostgresStore(Store):
    """The run store on PostgreSQL: what several machines (workers, notebooks, a shared DevUI) read and write.

    Open it with :func:`agentnb.store.open_store` or ``AGENTNB_STORE_URL``; the schema is created or
    migrated on open (a newer one is refused). Tables live in the connection's ``search_path`` schema, so a
    team can keep several stores in one database (``?options=-csearch_path%3Dteam_a``).

    Args:
        url: ``postgresql://user:password@host:port/database`` with any libpq parameter (``sslmode``, ...).
            Missing parts come from libpq's environment (``PGHOST``, ``PGPASSWORD``, ...) and files.
        min_size: Connections the pool keeps open.
        max_size: Most connections the pool opens at once.
        timeout: Seconds to wait for a connection (or the server) before giving up with :class:`StoreError`.

    Example:
        ```python
        from agentnb.store import open_store

        store = open_store("postgresql://me@db.internal/agentnb")  # a PostgresStore
        store.start_run("run-1", kind="agent", name="helper")
        print(store.list_runs(limit=1)[0]["run_id"])
        ```
    """

    backend = "postgresql"
    _insert_order = "seq"
    _integrity_errors = (psycopg.errors.UniqueViolation,)
    _trace_key = "trace_id"  # spans keep UNIQUE (trace_id, span_id) here: COPY writes them as they come

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8, timeout: float = 10.0) -> None:
        self.__url = url  # name-mangled: the only place the password lives
        self._shown = redact_url(url)
        self._where_text = _describe(url)
        self._timeout = timeout
        self._closed = False
        self._marks: Watermark | None = None
        self._dirty = threading.Event()
        self._listener: threading.Thread | None = None
        self._listening = False
        self._listen_lock = threading.Lock()
        self._stop = threading.Event()
        self._max_size = max_size
        # Per event loop: its async connections and the task that closes them when the loop shuts down.
        self._loop_pools: dict[asyncio.AbstractEventLoop, tuple[LoopPool, asyncio.Task[None]]] = {}
        self._loop_pools_lock = threading.Lock()
        connect_timeout = max(1, round(timeout))
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout) as conn:
                self._init_schema(conn)
        except psycopg.Error as e:
            raise self._error("Cannot open", e) from None
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True, "connect_timeout": connect_timeout},
            check=ConnectionPool.check_connection,
            reconnect_timeout=timeout,
            name="agentnb-store",
            open=False,
        )
        self._pool.open(wait=False)

    # ------------------------------------------------------------------ plumbing

    @property
    def url(self) -> str:
        """The store's URL with any password replaced by ``***``."""
        return self._shown

    def _where(self) -> str:
        return self._where_text

    def __repr__(self) -> str:
        return f"PostgresStore({self._shown!r})"

    def _error(self, action: str, error: BaseException) -> StoreError:
        """A :class:`StoreError` that names host and database and carries the server's reason, minus secrets."""
        reason = str(error).strip() or type(error).__name__
        try:
            password = psycopg.conninfo.conninfo_to_dict(self.__url).get("password")
        except psycopg.Error:
            password = None
        if password:
            reason = reason.replace(str(password), "***")
        return StoreError(f"{action} the PostgreSQL run store ({self._where_text}): {reason}")

    def _init_schema(self, conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_SPACE, _LOCK_KEYS["schema"]))
            fresh = conn.execute("SELECT to_regclass('schema_version')").fetchone()[0] is None  # type: ignore[index]
            self._migrate(_Connection(conn), fresh=fresh)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"The PostgreSQL run store ({self._where_text}) is closed; open a new one.")

    @contextmanager
    def _errors(self, action: str) -> Generator[None, None, None]:
        """Turn driver errors into :class:`StoreError`: ``"<action> the PostgreSQL run store (...)"``."""
        # PoolTimeout first: it is a psycopg.Error too, but the store was not reached, nothing failed in it.
        try:
            yield
        except PoolTimeout as e:
            raise self._error("Cannot reach", e) from None
        except psycopg.Error as e:
            raise self._error(action, e) from None

    @contextmanager
    def _write(self) -> Generator[_Connection, None, None]:
        self._check_open()
        with self._errors("Cannot write to"), self._pool.connection() as conn, conn.transaction():
            yield _Connection(conn)

    def _transact(self, program: Program[Any]) -> Any:
        self._check_open()
        first = next(program)
        try:
            with self._pool.connection() as conn:
                execute = functools.partial(perform, _Connection(conn))
                if first.final:  # one statement: atomic on its own, one round trip instead of three
                    return drive(program, execute, first)
                with conn.transaction():
                    return drive(program, execute, first)
        except PoolTimeout as e:  # a psycopg.Error too: catch it first
            raise self._error("Cannot reach", e) from None
        except psycopg.Error as e:
            raise self._error("Cannot write to", e) from None

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._check_open()
        try:
            with self._pool.connection() as conn:
                return _Connection(conn).execute(sql, params).fetchall()
        except PoolTimeout as e:
            raise self._error("Cannot reach", e) from None
        except psycopg.Error as e:
            raise self._error("Cannot read", e) from None

    def _turn(self, table: str) -> tuple[Statement, ...]:
        return _TURNS[table]

    # ------------------------------------------------------------------ async connections

    async def _async_pool(self) -> LoopPool:
        """The running loop's async connections, made on first use and closed when the loop shuts down."""
        self._check_open()
        loop = asyncio.get_running_loop()
        with self._loop_pools_lock:
            entry = self._loop_pools.get(loop)
            if entry is not None:
                return entry[0]
            pool = LoopPool(self._aconnect, max_size=self._max_size, timeout=self._timeout, name="agentnb-store-async")
            keeper = loop.create_task(self._keep(loop, pool), name="agentnb-store-async-pool")
            self._loop_pools[loop] = (pool, keeper)
            return pool

    async def _aconnect(self) -> psycopg.AsyncConnection[Any]:
        return await psycopg.AsyncConnection.connect(
            self.__url, autocommit=True, connect_timeout=max(1, round(self._timeout))
        )

    async def _keep(self, loop: asyncio.AbstractEventLoop, pool: LoopPool) -> None:
        # Waits until cancelled: by asyncio.run() shutting the loop down, or by close(); then closes the
        # connections on their own loop, so none outlives it.
        try:
            await loop.create_future()
        finally:
            with self._loop_pools_lock:
                self._loop_pools.pop(loop, None)
            await pool.close()

    async def _atransact(self, program: Program[Any]) -> Any:
        pool = await self._async_pool()
        first = next(program)
        try:
            async with pool.connection() as conn:
                execute = functools.partial(_aperform, conn)
                if first.final:  # one statement: atomic on its own, one round trip instead of three
                    return await adrive(program, execute, first)
                async with conn.transaction():
                    return await adrive(program, execute, first)
        except PoolTimeout as e:  # a psycopg.Error too: catch it first
            raise self._error("Cannot reach", e) from None
        except psycopg.Error as e:
            raise self._error("Cannot write to", e) from None

    async def _aquery(self, program: Program[Any]) -> Any:
        pool = await self._async_pool()
        try:
            async with pool.connection() as conn:
                return await adrive(program, functools.partial(_aperform, conn))
        except PoolTimeout as e:  # a psycopg.Error too: catch it first
            raise self._error("Cannot reach", e) from None
        except psycopg.Error as e:
            raise self._error("Cannot read", e) from None

    def _highest_span_id(self, conn: Any) -> int | None:
        return None  # a BIGSERIAL never gives an id out twice, whatever is deleted

    def add_span_records(self, records: Sequence[Sequence[Any]]) -> int:
        """Write span tuples (see :meth:`Store.add_span_records`) with ``COPY``, the server's bulk path.

        A batch is copied straight into ``spans`` in one transaction; the table's trigger adds it to the
        ``traces`` summary. When some of its spans were stored before, that transaction rolls back and the
        batch goes through a session-local staging table and one ``INSERT ... SELECT`` that skips them.
        """
        if not records:
            return 0
        self._check_open()
        with self._errors("Cannot write to"), self._pool.connection() as conn:
            try:
                with conn.transaction():
                    self._copy(conn, _COPY_SQL, records)
                return len(records)
            except psycopg.errors.UniqueViolation:
                pass  # rolled back: nothing of this batch is stored yet
            with conn.transaction():
                conn.execute(_statement(_STAGE_SQL))
                self._copy(conn, _STAGE_COPY_SQL, records)
                return max(conn.execute(_statement(_MOVE_SQL)).rowcount, 0)

    def _copy(self, conn: psycopg.Connection[Any], sql: str, records: Sequence[Sequence[Any]]) -> None:
        for statement in _TURNS["spans"]:
            conn.execute(_pg_sql(statement.sql), statement.params)
        with conn.cursor().copy(_statement(sql)) as copy:
            write_row = copy.write_row
            for record in records:
                write_row(record)

    def close(self) -> None:
        """Close the pools and the listener; closing twice is harmless.

        An event loop's async pool closes on that loop, as soon as it runs again; ``await store.aclose()``
        from async code also waits for the running loop's pool to be closed.
        """
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        with self._loop_pools_lock:
            keepers = [(loop, keeper) for loop, (_, keeper) in self._loop_pools.items()]
        for loop, keeper in keepers:
            if not loop.is_closed():
                loop.call_soon_threadsafe(keeper.cancel)
        self._pool.close()
        if self._listener is not None:
            self._listener.join(timeout=self._timeout + 2)

    async def aclose(self) -> None:
        """Close the store from async code: :meth:`close`, then wait until this loop's connections are closed."""
        with self._loop_pools_lock:
            entry = self._loop_pools.get(asyncio.get_running_loop())
        await asyncio.to_thread(self.close)
        if entry is not None:
            await asyncio.wait([entry[1]])

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    def __enter__(self) -> PostgresStore:
        return self

    # ------------------------------------------------------------------ live changes

    def watermark(self) -> Watermark:
        """Return the change markers (see :meth:`Store.watermark`), from memory while nothing changed.

        The first call starts a listener thread (``LISTEN agentnb_store``); afterwards the markers are
        queried again only when a notification arrived, from any process on any machine. Without a working
        listener (e.g. while the server restarts) every call queries, as on SQLite.
        """
        self._ensure_listener()
        if self._listening and self._marks is not None and not self._dirty.is_set():
            return self._marks.copy()
        self._dirty.clear()
        marks = super().watermark()
        self._marks = marks
        return marks.copy()

    def wait_for_change(self, timeout: float) -> bool:
        """Block until another write is notified (``True``) or ``timeout`` seconds pass (``False``)."""
        self._ensure_listener()
        return self._dirty.wait(timeout)

    def _ensure_listener(self) -> None:
        with self._listen_lock:
            if self._listener is None and not self._closed:
                self._listener = threading.Thread(target=self._listen, name="agentnb-store-listen", daemon=True)
                self._listener.start()

    def _listen(self) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.__url, autocommit=True, connect_timeout=max(1, round(self._timeout))) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._listening = True
                    self._dirty.set()  # anything may have changed while nobody listened
                    backoff = 0.2
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=0.5, stop_after=64):
                            self._dirty.set()
            except psycopg.Error as e:
                if self._listening:
                    logger.warning("agentnb stopped hearing changes from %s: %s", self._where_text, e)
            finally:
                self._listening = False
                self._dirty.set()
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 5.0)

    # ------------------------------------------------------------------ diagnostics

    def ping(self) -> float:
        """Round-trip one trivial query and return the seconds it took (raises :class:`StoreError`)."""
        start = time.perf_counter()
        self._read("SELECT 1")
        return time.perf_counter() - start
