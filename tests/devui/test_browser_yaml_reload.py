"""A declarative workflow saved while its page is open: the DevUI's YAML pane and graph follow the file.

A real `panel serve devui --args DIR` and Chromium; the file is rewritten on disk as an editor would, and the
page must show the new action in both the definition and the graph without the entity being reopened.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.devui.devui_harness import WAIT, DevUIServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

FIRST = """\
name: greeter
actions:
  - kind: SendActivity
    id: first_step
    activity:
      text: Hello
"""

SECOND = (
    FIRST
    + """\
  - kind: SendActivity
    id: added_step
    activity:
      text: Saved later
"""
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "entities").mkdir()
    (tmp_path / "entities" / "greeter.yaml").write_text(FIRST)
    return tmp_path / "entities"


@pytest.fixture
def server(folder: Path, tmp_path: Path) -> Iterator[DevUIServer]:
    home = tmp_path / "home"
    home.mkdir()
    running = DevUIServer(home, args=[str(folder)])
    try:
        yield running
    finally:
        running.stop()


def test_saving_the_yaml_updates_the_pane_and_the_graph(server: DevUIServer, folder: Path, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server.url)
        page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
        page.locator(".anb-entity-greeter button").click()
        page.locator(".anb-yaml", has_text="first_step").wait_for(timeout=WAIT)
        page.locator('g.node[data-id="first_step"]').wait_for(timeout=WAIT)
        assert page.locator('g.node[data-id="added_step"]').count() == 0

        path = folder / "greeter.yaml"
        before = path.stat().st_mtime_ns
        path.write_text(SECOND)
        if path.stat().st_mtime_ns == before:  # a coarse file-system clock: make the save visible
            os.utime(path, ns=(time.time_ns(), before + 1_000_000))

        page.locator(".anb-yaml", has_text="added_step").wait_for(timeout=WAIT)
        page.locator('g.node[data-id="added_step"]').wait_for(timeout=WAIT)
        assert page.locator('g.node[data-id="first_step"]').count() == 1
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
