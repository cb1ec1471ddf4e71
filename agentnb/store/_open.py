"""Choosing a store by URL: ``AGENTNB_STORE_URL`` picks the backend for every part of agentnb at once.

``sqlite:///abs/path.db`` (or a plain path) opens the SQLite store, ``sqlite:///:memory:`` an in-process one,
and ``postgresql://user@host:5432/db?sslmode=require`` the PostgreSQL store (libpq's parameters, environment
variables and service files apply). Unset, the default is SQLite at :func:`default_store_path`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..exceptions import StoreError
from ._base import MEMORY, Store
from ._run_store import RunStore, default_store_path

__all__ = [
    "STORE_URL_ENV",
    "default_store",
    "default_store_url",
    "open_store",
    "redact_url",
    "store_backend",
    "store_exists",
    "store_file",
    "store_key",
]

STORE_URL_ENV = "AGENTNB_STORE_URL"
"""The environment variable that selects the default store."""

_POSTGRES_SCHEMES = ("postgresql", "postgres")
_SECRET_PARAMS = {"password", "passfile", "sslpassword"}


def default_store_url() -> str:
    """Return the default store's URL: ``$AGENTNB_STORE_URL``, else SQLite at :func:`default_store_path`."""
    url = os.environ.get(STORE_URL_ENV, "").strip()
    if url:
        return url
    return f"sqlite://{default_store_path().expanduser().resolve().as_posix()}"


def store_backend(url: str) -> str:
    """Return ``"sqlite"`` or ``"postgresql"`` for a store URL (a plain path means SQLite).

    Raises:
        ValueError: The URL names another database.
    """
    scheme = urlsplit(url).scheme.lower() if "://" in url or url.startswith("sqlite:") else ""
    if scheme in _POSTGRES_SCHEMES:
        return "postgresql"
    if scheme in ("", "sqlite"):
        return "sqlite"
    raise ValueError(f"Unsupported store URL scheme {scheme!r}: use sqlite:///path/to.db or postgresql://user@host/db.")


def sqlite_path(url: str) -> str:
    """Return the file (or ``":memory:"``) a SQLite URL or plain path names.

    ``sqlite:///abs/x.db`` is ``/abs/x.db``; ``sqlite:rel/x.db`` is relative to the working directory.
    """
    if not url.startswith("sqlite:"):
        return url
    rest = url[len("sqlite:") :]
    if rest.startswith("//"):
        rest = rest[2:]  # the empty host of sqlite:///path
    if rest in ("", "/", MEMORY, "/" + MEMORY):
        return MEMORY
    return rest


def store_file(url: str) -> Path | None:
    """Return the database file a store URL names on this machine (``None`` for in-memory and server stores).

    What another process of this machine opens to share the store; the path is absolute.
    """
    if store_backend(url) != "sqlite":
        return None
    path = sqlite_path(url)
    return None if path == MEMORY else Path(path).expanduser().resolve()


def store_key(url: str) -> str:
    """Return what identifies the data a store URL reaches: its database file, else the URL itself.

    Two spellings of one SQLite file (relative, ``sqlite:///``, ``~``) give the same key.
    """
    path = store_file(url)
    return url if path is None else str(path)


def store_exists(url: str) -> bool:
    """Whether a store URL reaches stored data without creating it: an existing SQLite file, or a server.

    A reader asks this first, so that reading never leaves an empty database file behind; an in-memory URL
    holds nothing another store could read.
    """
    if store_backend(url) != "sqlite":
        return True
    path = store_file(url)
    return path is not None and path.exists()


def redact_url(url: str) -> str:
    """Return ``url`` with any password replaced by ``***`` (safe for logs, errors and the DevUI)."""
    if store_backend(url) != "postgresql" or "://" not in url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostinfo = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{hostinfo}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def open_store(url: str | os.PathLike[str] | None = None, **options: Any) -> Store:
    """Open the store a URL names: SQLite (a :class:`RunStore`) or PostgreSQL (a ``PostgresStore``).

    Args:
        url: ``sqlite:///path/to.db``, ``sqlite:///:memory:``, a plain path, or
            ``postgresql://user:pass@host:port/db?sslmode=...``; ``None`` means :func:`default_store_url`.
        options: Passed to the backend (e.g. ``timeout`` for SQLite, ``min_size``/``max_size`` of the
            PostgreSQL connection pool).

    Raises:
        StoreError: The store cannot be opened (the message names host and database, never a password).

    Example:
        ```python
        from agentnb.store import open_store

        store = open_store("sqlite:///:memory:")
        store.start_run("run-1", kind="agent", name="helper")
        print(store.list_runs()[0]["status"])  # running
        ```
    """
    text = default_store_url() if url is None else os.fspath(url)
    if store_backend(text) == "sqlite":
        return RunStore(sqlite_path(text), **options)
    try:
        from ._postgres import PostgresStore
    except ImportError as e:
        raise StoreError(
            f"{redact_url(text)} needs the PostgreSQL driver: pip install 'agentnb[postgres]' ({e})."
        ) from e
    return PostgresStore(text, **options)


_defaults: dict[tuple[int, str], Store] = {}
_defaults_lock = threading.Lock()


def _default_key() -> tuple[int, str]:
    url = default_store_url()
    if store_backend(url) == "sqlite" and sqlite_path(url) == MEMORY:
        return (os.getpid(), MEMORY)
    return (os.getpid(), store_key(url))


def default_store() -> Store:
    """Return this process's shared default store (:func:`default_store_url`), opened on first use.

    The store is keyed by process id and URL, so a forked child or a changed ``AGENTNB_STORE_URL`` /
    ``AGENTNB_HOME`` gets its own connection instead of sharing one it must not use.
    """
    key = _default_key()
    with _defaults_lock:
        store = _defaults.get(key)
        if store is None or store.closed:
            store = _defaults[key] = open_store(key[1])
        return store
