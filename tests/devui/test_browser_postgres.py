"""A DevUI on a PostgreSQL store shows, live, a run that another process (another machine) writes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.devui.devui_harness import REPO, WAIT, DevUIServer, text
from tests.store.pg_fixture import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

_WRITER = """
import sys
from agentnb.store import open_store

store = open_store(sys.argv[1])
if sys.argv[2] == "start":
    store.start_run("remote-1", kind="workflow", name="nightly-report", metadata={"host": "builder-7"})
else:
    store.finish_run("remote-1", status="completed")
store.close()
"""


@pytest.fixture
def pg_devui(pg_url: str, tmp_path: Path) -> Iterator[DevUIServer]:
    server = DevUIServer(tmp_path, env={"AGENTNB_STORE_URL": pg_url})
    try:
        yield server
    finally:
        server.stop()


def _write(pg_url: str, step: str) -> None:
    subprocess.run([sys.executable, "-c", _WRITER, pg_url, step], cwd=REPO, check=True, timeout=60)


def test_runs_written_elsewhere_appear_live(pg_devui: DevUIServer, pg_url: str, page: Any) -> None:
    page.goto(pg_devui.url)
    page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
    page.locator(".bk-tab", has_text="Runs").click()
    table = page.locator(".anb-runs-table")
    table.wait_for(timeout=WAIT)
    assert "nightly-report" not in text(table)

    _write(pg_url, "start")  # another process, sharing nothing with the DevUI but the server
    row = table.locator(".tabulator-row", has_text="nightly-report")
    row.first.wait_for(timeout=WAIT)
    assert "running" in text(row.first)

    _write(pg_url, "finish")
    table.locator(".tabulator-row", has_text="nightly-report").filter(has_text="completed").first.wait_for(timeout=WAIT)
    assert PASSWORD not in page.content()
    assert PASSWORD not in pg_devui.output()
