"""Choosing the store by URL: open_store(), AGENTNB_STORE_URL and the users that follow it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentnb.exceptions import StoreError
from agentnb.store import (
    RunStore,
    Store,
    default_store,
    default_store_url,
    open_store,
    redact_url,
    store_backend,
    store_exists,
    store_file,
    store_key,
)
from agentnb.workflows import RunStoreCheckpointStorage


def test_sqlite_urls_and_plain_paths_open_the_sqlite_store(tmp_path: Path) -> None:
    target = tmp_path / "a.db"
    with open_store(f"sqlite://{target.as_posix()}") as s:
        assert isinstance(s, RunStore) and isinstance(s, Store)
        assert s.path == target.resolve()
        assert s.url == f"sqlite://{target.resolve().as_posix()}"
        s.start_run("r1", kind="agent", name="a")
    with open_store(str(target)) as again:
        assert again.get_run("r1")["name"] == "a"
    with open_store("sqlite:///:memory:") as memory:
        assert memory.path is None and memory.list_runs() == []


def test_the_url_environment_variable_picks_the_default_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENTNB_STORE_URL", raising=False)
    assert default_store_url() == f"sqlite://{(tmp_path / 'home' / 'agentnb.db').resolve().as_posix()}"
    chosen = tmp_path / "team.db"
    monkeypatch.setenv("AGENTNB_STORE_URL", f"sqlite://{chosen.as_posix()}")
    store = default_store()
    try:
        assert store.path == chosen.resolve()
        assert default_store() is store
        assert RunStoreCheckpointStorage().store is store
    finally:
        store.close()


def test_an_unknown_scheme_is_refused() -> None:
    with pytest.raises(ValueError, match="Unsupported store URL scheme 'mysql'"):
        open_store("mysql://u@h/db")
    assert store_backend("postgres://h/db") == "postgresql"
    assert store_backend("/some/file.db") == "sqlite"


def test_where_a_url_keeps_its_data_is_answered_by_the_store_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "a.db"
    assert store_file(f"sqlite://{target.as_posix()}") == target.resolve()
    assert store_file("a.db") == target.resolve() and store_key("a.db") == store_key(f"sqlite://{target}")
    assert store_file("sqlite:///:memory:") is None and store_file("postgresql://u@h/db") is None
    assert store_key("postgresql://u@h/db") == "postgresql://u@h/db"
    assert not store_exists("a.db") and not target.exists()  # asking creates nothing
    assert not store_exists("sqlite:///:memory:") and store_exists("postgresql://u@h/db")
    RunStore(target).close()
    assert store_exists("a.db")


def test_passwords_never_survive_redaction() -> None:
    url = "postgresql://alice:s3cret@db.example:5432/runs?sslmode=require&password=other"
    shown = redact_url(url)
    assert "s3cret" not in shown and "other" not in shown
    assert shown.startswith("postgresql://alice:***@db.example:5432/runs?")
    assert "sslmode=require" in shown


def test_a_newer_schema_is_refused_with_advice(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    with RunStore(path) as s:
        s._conn.execute("UPDATE schema_version SET version = 999")
    with pytest.raises(StoreError, match=r"schema version 999.*upgrade agentnb"):
        open_store(f"sqlite://{path.as_posix()}")
