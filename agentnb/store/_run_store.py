"""The SQLite run store: one file (WAL mode) that notebooks, workflows and the DevUI share on one machine."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from .._files import create_private_file
from ..exceptions import StoreError
from ._base import MEMORY, SPAN_COLUMNS, Store
from ._spans import SpanFilter, SpanFilterArgs

__all__ = ["MEMORY", "SPAN_COLUMNS", "RunStore", "default_store_path"]


# SQLite's result code for a full disk; the sqlite3 module names it only from Python 3.11 on.
_SQLITE_FULL = 13


def _cause(error: sqlite3.Error) -> str:
    """The error's message with its plain cause first: disk full and I/O errors say so."""
    code = getattr(error, "sqlite_errorcode", None)
    name = getattr(error, "sqlite_errorname", "") or ""
    if code == _SQLITE_FULL or "disk is full" in str(error):
        return f"the disk is full ({error}); free some space and retry - what was committed before is intact"
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in str(error):
        return f"an I/O error ({name or error}: {error}); check the disk - what was committed before is intact"
    return str(error)


def _bind_none_without_adapting() -> None:
    """Let sqlite3 bind ``None`` without its failed adapter lookup.

    Python 3.11's sqlite3 runs its adaptation protocol for every parameter that is not an int, float, str or
    bytes; for ``None``, which no adapter handles, the lookup ends in attribute errors raised and cleared, about
    0.4 µs a parameter (measured), and a span row binds several (no parent, no status message, no tokens...).
    An adapter registered for ``NoneType`` is found at once and returns ``None``, which binds as NULL just
    as before; ``{}.get`` is that adapter as one C call. Nothing is registered when someone else already
    registered an adapter for ``None``.
    """
    if (type(None), sqlite3.PrepareProtocol) not in sqlite3.adapters:
        nothing: dict[None, None] = {}
        sqlite3.register_adapter(type(None), nothing.get)


_bind_none_without_adapting()


def default_store_path() -> Path:
    """Return where the default SQLite store lives: ``$AGENTNB_HOME/agentnb.db``, else ``./.agentnb/agentnb.db``.

    This is the default when ``AGENTNB_STORE_URL`` is unset; :func:`agentnb.store.default_store_url` says
    which store is really the default.
    """
    home = os.environ.get("AGENTNB_HOME")
    base = Path(home).expanduser() if home else Path.cwd() / ".agentnb"
    return base / "agentnb.db"


class RunStore(Store):
    """The SQLite store: thread-safe, shared by notebooks, workflows and the DevUI across processes of one machine.

    The database runs in WAL mode with a busy timeout, and every method is one short transaction, so a
    notebook can write while the DevUI reads (or writes) from another process. For a store several
    machines share, open a PostgreSQL URL with :func:`agentnb.store.open_store`.

    Args:
        path: The database file; ``None`` means :func:`default_store_path`, ``":memory:"`` keeps
            everything in this process.
        timeout: Seconds to wait for another writer before giving up with :class:`StoreError`.

    Example:
        ```python
        from agentnb.store import RunStore

        store = RunStore(":memory:")
        store.start_run("run-1", kind="agent", name="helper", started_at=None)
        store.add_events("run-1", [{"type": "started", "data": {"input": "hi"}}])
        store.finish_run("run-1", status="completed", ended_at=None)
        print(store.get_run("run-1")["status"], len(store.list_events("run-1")))
        ```
    """

    backend = "sqlite"
    _insert_order = "rowid"
    _integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 10.0) -> None:
        if path is None:
            path = default_store_path()
        self._memory = str(path) == MEMORY
        self.path: Path | None = None if self._memory else Path(path).expanduser().resolve()
        self._lock = threading.RLock()
        self._closed = False
        try:
            if self.path is not None:
                # Created 0600 in a 0700 directory; SQLite gives the -wal and -shm files the same mode.
                create_private_file(self.path)
            self._conn = sqlite3.connect(
                MEMORY if self.path is None else str(self.path),
                timeout=timeout,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves: explicit, short transactions
                check_same_thread=False,  # guarded by self._lock
            )
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"Cannot open the run store at {self._where()}: {e}") from e
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode = WAL").fetchone()
                # WAL with NORMAL sync survives application crashes; only power loss can drop the last commit.
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._init_schema()
        except sqlite3.DatabaseError as e:
            self._conn.close()
            raise StoreError(f"{self._where()} is not a readable agentnb run store: {e}") from e
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ plumbing

    @property
    def url(self) -> str:
        """``sqlite:///<absolute path>``, or ``sqlite:///:memory:``."""
        return f"sqlite:///{MEMORY}" if self.path is None else f"sqlite://{self.path.as_posix()}"

    def _where(self) -> str:
        return "an in-memory database" if self.path is None else repr(str(self.path))

    def __repr__(self) -> str:
        return f"RunStore({':memory:' if self.path is None else str(self.path)!r})"

    def _init_schema(self) -> None:
        with self._write() as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            fresh = "schema_version" not in tables
            foreign = tables - {"sqlite_sequence"}
            if fresh and foreign:
                raise StoreError(
                    f"{self._where()} is a SQLite database but not an agentnb run store "
                    f"(it has tables {sorted(foreign)}); choose another path or AGENTNB_HOME."
                )
            self._migrate(conn, fresh=fresh)

    def _check_open(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"The run store at {self._where()} is closed; open a new RunStore.")
        return self._conn

    @contextmanager
    def _write(self) -> Generator[sqlite3.Connection, None, None]:
        """Run one short write transaction; IMMEDIATE takes the write lock up front so it never deadlocks."""
        with self._lock:
            conn = self._check_open()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:
                raise StoreError(f"The run store at {self._where()} is busy or locked: {e}") from e
            try:
                yield conn
            except BaseException as e:
                self._rollback(conn)
                if isinstance(e, sqlite3.Error):
                    raise StoreError(f"Cannot write to the run store at {self._where()}: {_cause(e)}") from e
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as e:
                self._rollback(conn)
                raise StoreError(f"Cannot commit to the run store at {self._where()}: {_cause(e)}") from e

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        # After SQLITE_FULL or an I/O error SQLite may already have rolled back; a second ROLLBACK would then
        # fail with "cannot rollback - no transaction is active" and hide the real cause.
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            conn = self._check_open()
            try:
                return conn.execute(sql, params).fetchall()
            except sqlite3.Error as e:
                raise StoreError(f"Cannot read the run store at {self._where()}: {e}") from e

    def select_span_columns(
        self, columns: Sequence[str], where: SpanFilter | None = None, **filters: Unpack[SpanFilterArgs]
    ) -> dict[str, Any] | None:
        """Return chosen span columns as pyarrow arrays, in id order, or ``None`` (see the base method).

        Each column of a chunk of rows travels as one text (:mod:`agentnb.store._columns`); the chunks are read
        in one read transaction, so they see one committed state of the store.
        """
        from ._columns import read_span_columns

        conditions, params = SpanFilter.of(where, filters).conditions(self._trace_key)
        with self._lock:
            conn = self._check_open()
            try:
                conn.execute("BEGIN")
                try:
                    return read_span_columns(conn, columns, conditions, params)
                finally:
                    conn.execute("COMMIT")  # nothing was written: this ends the read transaction
            except sqlite3.Error as e:
                self._rollback(conn)
                raise StoreError(f"Cannot read the run store at {self._where()}: {e}") from e

    def close(self) -> None:
        """Close the database connection; closing twice is harmless."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    def __enter__(self) -> RunStore:
        return self
