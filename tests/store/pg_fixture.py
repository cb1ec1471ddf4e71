"""PostgreSQL fixtures any test can use (registered in ``tests/conftest.py``).

- ``postgres_server`` (session): a running :class:`~tests.store.pg_server.PostgresServer`; started on first
  use, stopped and deleted at the end.
- ``pg_url`` (function): a URL to a fresh, empty schema on that server (so tests never see each other's
  rows), with a password, e.g. ``postgresql://agentnb:...@127.0.0.1:PORT/agentnb?options=-csearch_path%3Dt_...``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store.pg_server import PASSWORD, PostgresServer, free_port, running_postgres

__all__ = ["PASSWORD", "PostgresServer", "free_port", "pg_url", "postgres_server", "running_postgres"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> str:
    return postgres_server.url(schema=postgres_server.fresh_schema())
