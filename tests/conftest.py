"""Test-wide safety: no real model requests, no writes outside a temporary agentnb home."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Fixtures any test can use: `postgres_server` (a throwaway PostgreSQL cluster), `pg_url` (a fresh schema) and
# pytest's own `pytester` (a pytest run inside a test, for the pytest plugin agentnb ships).
pytest_plugins = ["tests.store.pg_fixture", "pytester"]

# Property tests run on a shared 2-core CI machine: no per-example deadline, a moderate example count.
settings.register_profile("agentnb", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("agentnb")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # Block real model traffic: a test that wants a provider points it at the loopback test server.
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AGENTNB_STORE_URL", raising=False)  # the default store is SQLite unless a test says so
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path_factory.mktemp("agentnb-home")))


@pytest.fixture(autouse=True)
def _instrumentation_switches_restored() -> Iterator[None]:
    """Each test leaves agentnb's instrumentation switches as it found them.

    The reference's ported tests reload ``agentnb.observability`` (which reads the switches from the
    environment anew) and swap ``OBSERVABILITY_SETTINGS``; without this, a later test would run traced.
    """
    from agentnb import _telemetry

    saved_state = dict(_telemetry._state)  # pyright: ignore[reportPrivateUsage]
    before = sys.modules.get("agentnb.observability")
    saved_settings = getattr(before, "OBSERVABILITY_SETTINGS", None)
    yield
    after = sys.modules.get("agentnb.observability")
    if after is not None and saved_settings is not None and after.OBSERVABILITY_SETTINGS is not saved_settings:
        after.OBSERVABILITY_SETTINGS = saved_settings  # makes them the active settings again
        _telemetry._state.update(saved_state)  # pyright: ignore[reportPrivateUsage]
