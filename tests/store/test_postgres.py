"""What only the PostgreSQL store has to prove: migrations, refusals, secrets kept out of sight, live changes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from agentnb.exceptions import StoreError
from agentnb.store import Store, open_store
from agentnb.store import _schema as schema
from tests.store.pg_fixture import PASSWORD, PostgresServer, free_port


@pytest.fixture
def pg(pg_url: str) -> Iterator[Store]:
    store = open_store(pg_url)
    yield store
    store.close()


def test_the_url_opens_a_postgres_store_that_hides_its_password(pg: Store, pg_url: str) -> None:
    assert pg.backend == "postgresql"
    assert PASSWORD not in repr(pg) and PASSWORD not in pg.url
    assert pg.url.startswith("postgresql://agentnb:***@127.0.0.1:")
    assert pg.schema_version == schema.SCHEMA_VERSION


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    open_store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = %s", (schema.SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match=rf"schema version {schema.SCHEMA_VERSION + 1}.*upgrade agentnb") as info:
        open_store(pg_url)
    assert PASSWORD not in str(info.value)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_opening_an_older_store_applies_the_missing_steps(
    backend: str, request: pytest.FixtureRequest, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = request.getfixturevalue("pg_url") if backend == "postgresql" else f"sqlite://{tmp_path.as_posix()}/m.db"
    with open_store(url) as old:
        old.start_run("kept", kind="agent", name="a")
    step = schema.Migration(
        sqlite="CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); CREATE INDEX notes_text ON notes (text)",
        postgresql="CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, text TEXT); CREATE INDEX notes_text ON notes (text)",
    )
    monkeypatch.setattr(schema, "MIGRATIONS", {**schema.MIGRATIONS, schema.SCHEMA_VERSION + 1: step})
    monkeypatch.setattr("agentnb.store._backend.MIGRATIONS", schema.MIGRATIONS)
    monkeypatch.setattr("agentnb.store._backend.SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    with open_store(url) as new:
        assert new.schema_version == schema.SCHEMA_VERSION + 1
        assert new.get_run("kept") is not None
        assert new._read("SELECT COUNT(*) FROM notes") == [(0,)]


def test_a_wrong_password_names_host_and_database_but_not_the_password(postgres_server: PostgresServer) -> None:
    url = postgres_server.url(password="Wr0ng-and-Secret")
    with pytest.raises(StoreError) as info:
        open_store(url)
    text = str(info.value)
    assert "Wr0ng-and-Secret" not in text and PASSWORD not in text
    assert "'agentnb' on host '127.0.0.1'" in text and "password authentication failed" in text
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no driver error carrying the URL


def test_an_unreachable_server_is_a_clear_error(postgres_server: PostgresServer) -> None:
    url = postgres_server.url(port=free_port(), database="teamruns")
    started = time.perf_counter()
    with pytest.raises(
        StoreError, match=r"Cannot open the PostgreSQL run store \(database 'teamruns' on host '127.0.0.1'"
    ):
        open_store(url, timeout=2)
    assert time.perf_counter() - started < 10


def test_writes_from_another_connection_are_heard_without_polling(pg: Store, pg_url: str) -> None:
    first = pg.watermark()
    assert pg.watermark() == first  # from memory: nothing changed
    with open_store(pg_url) as other:
        other.start_run("elsewhere", kind="workflow", name="flow")
        assert pg.wait_for_change(5)  # type: ignore[attr-defined]
        deadline = time.monotonic() + 5
        while pg.watermark()["runs"] == first["runs"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pg.watermark()["runs"] > first["runs"]
        other.put_checkpoint("c1", run_id="elsewhere", workflow_name="flow", parent_id=None, step=0, data="{}")
        deadline = time.monotonic() + 5
        while pg.watermark()["checkpoints"] is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pg.watermark()["checkpoints"] is not None


def test_concurrent_run_writers_get_distinct_revisions(pg: Store) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                pg.start_run(f"r{n}-{i}", kind="agent", name="a")
        except BaseException as e:  # asserted below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    revs = [r["rev"] for r in pg.list_runs()]
    assert len(revs) == 80 and len(set(revs)) == 80


def test_a_pool_with_no_free_connection_says_it_cannot_reach_the_store(pg_url: str) -> None:
    # One connection, held by another thread: the pool's wait runs out, which is not a failed read or write.
    store = open_store(pg_url, min_size=1, max_size=1, timeout=1)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with store._pool.connection():  # pyright: ignore[reportAttributeAccessIssue]
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        with pytest.raises(StoreError, match=r"^Cannot reach the PostgreSQL run store"):
            store.list_runs()
        with pytest.raises(StoreError, match=r"^Cannot reach the PostgreSQL run store"):
            store.start_run("r", kind="agent", name="helper")
    finally:
        release.set()
        holder.join()
        store.close()


async def test_an_async_pool_with_no_free_connection_says_it_cannot_reach_the_store(pg_url: str) -> None:
    store = open_store(pg_url, min_size=1, max_size=1, timeout=1)
    try:
        pool = await store._async_pool()  # pyright: ignore[reportAttributeAccessIssue]
        async with pool.connection():
            with pytest.raises(StoreError, match=r"^Cannot reach the PostgreSQL run store"):
                await store.alist_checkpoints()
            with pytest.raises(StoreError, match=r"^Cannot reach the PostgreSQL run store"):
                await store.astart_run("r", kind="agent", name="helper")
    finally:
        await store.aclose()


def test_any_writer_is_heard_because_the_tables_announce_their_changes(pg: Store, pg_url: str) -> None:
    first = pg.watermark()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # not agentnb: plain SQL from some other tool
        conn.execute(
            "INSERT INTO checkpoints (checkpoint_id, created_at, data) "
            "VALUES ('raw', '2026-01-01T00:00:00+00:00', '{}')"
        )
    assert pg.wait_for_change(5)  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while pg.watermark()["checkpoints"] == first["checkpoints"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pg.watermark()["checkpoints"] == "2026-01-01T00:00:00+00:00"


def test_a_dollar_quoted_body_is_one_migration_statement() -> None:
    step = schema.Migration(sqlite="", postgresql="CREATE FUNCTION f() AS $$ a; b $$; SELECT 1;\nSELECT 'x'")
    assert step.statements("postgresql") == ["CREATE FUNCTION f() AS $$ a; b $$", "SELECT 1", "SELECT 'x'"]
    assert step.statements("sqlite") == []


def test_the_server_summarizes_spans_whoever_inserts_them(pg: Store, pg_url: str) -> None:
    schema_name = pg_url.rsplit("%3D", 1)[1]
    pg.add_spans([{"trace_id": "t", "span_id": "root", "name": "invoke_agent bot", "start_ns": 10, "end_ns": 90}])
    # Plain SQL from another tool, on the default search_path: the trigger still keeps this store's summary.
    with psycopg.connect(pg_url.split("?", 1)[0], autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO {schema_name}.spans (trace_id, span_id, parent_id, name, start_ns, end_ns, status_code) "
            "VALUES ('t', 'a', 'root', 'chat', 5, 95, 'ERROR'), ('t', 'root', NULL, 'again', 1, 2, 'OK') "
            "ON CONFLICT (trace_id, span_id) DO NOTHING"  # the stored root is skipped, and not counted
        )
    (trace,) = pg.list_traces()
    assert (trace["start_ns"], trace["end_ns"], trace["spans"], trace["errors"]) == (5, 95, 2, 1)
    assert trace["root"] == "invoke_agent bot"
