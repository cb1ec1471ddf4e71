"""Drive `python -m agentnb.devui` (the launcher) in headless Chromium: login, first view, offline resources.

The launcher runs with an access token, so the page starts at its login screen. Every request the browser
makes goes through a route that lets loopback addresses through and aborts (and counts) everything else:
the DevUI serves its own stylesheets, scripts, fonts and logos, so the count must stay zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.devui.devui_harness import WAIT, LauncherServer, refuse_outside, text, wait_for_dark_theme

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

TOKEN = "launcher-test-token"


@pytest.fixture(scope="module")
def launcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LauncherServer]:
    server = LauncherServer(tmp_path_factory.mktemp("devui-launcher"), env={"AGENTNB_DEVUI_TOKEN": TOKEN})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def outside() -> list[str]:
    """Every non-loopback URL the browser tried to fetch (aborted)."""
    return []


@pytest.fixture(scope="module")
def app(launcher: LauncherServer, browser: Any, outside: list[str]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    refuse_outside(context, outside)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_the_page_asks_for_the_token_and_refuses_a_wrong_one(app: Any, launcher: LauncherServer) -> None:
    app.goto(launcher.url)
    app.locator("form.anb-login").wait_for(timeout=WAIT)
    app.locator("input[name=password]").fill("not-the-token")
    app.locator("button[type=submit]").click()
    app.locator(".error").wait_for(timeout=WAIT)
    assert app.locator(".anb-entity-greeting-pipeline").count() == 0


def test_the_first_workflow_view_renders_its_event_table(app: Any, launcher: LauncherServer) -> None:
    # The first page this server process makes must already carry Tabulator's script.
    app.locator("input[name=password]").fill(TOKEN)
    app.locator("button[type=submit]").click()
    app.locator(".anb-entity-greeting-pipeline button").click(timeout=WAIT)
    app.get_by_text("3 executors · start: prepare").first.wait_for(timeout=WAIT)
    app.locator(".anb-workflow-view .tabulator").first.wait_for(timeout=WAIT)
    assert "prepare" in text(app.locator(".anb-workflow-view").first)


def test_nothing_loads_from_the_internet(app: Any, launcher: LauncherServer, outside: list[str]) -> None:
    for entity in ("assistant", "mailer", "human-review", "text-stats"):
        app.locator(f".anb-entity-{entity} button").click()
        app.wait_for_timeout(300)
    for tab in ("Runs", "Time travel", "Traces", "Experiments", "Playground"):
        app.locator(".bk-tab", has_text=tab).click()
        app.wait_for_timeout(300)
    app.goto(launcher.url + "logout")
    app.get_by_text("signed out").wait_for(timeout=WAIT)
    assert outside == [], f"the page fetched from the internet: {outside}"
    log = Path(launcher.log).read_text(errors="replace")
    assert "Traceback" not in log, log


def test_nothing_loads_from_the_internet_in_the_dark_theme(launcher: LauncherServer, browser: Any) -> None:
    # The dark theme has stylesheets of its own (Panel's dark theme, Tabulator's "midnight"): local too.
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    fetched: list[str] = []
    outside: list[str] = []
    refuse_outside(context, outside, fetched)
    page = context.new_page()
    try:
        page.goto(launcher.url)
        page.locator("input[name=password]").fill(TOKEN)
        page.locator("button[type=submit]").click()
        wait_for_dark_theme(page)
        page.locator(".anb-entity-greeting-pipeline button").click(timeout=WAIT)
        page.locator(".anb-workflow-view .tabulator").first.wait_for(timeout=WAIT)
        for entity in ("assistant", "mailer", "human-review"):
            page.locator(f".anb-entity-{entity} button").click()
            page.wait_for_timeout(300)
        for tab in ("Runs", "Time travel", "Traces", "Experiments", "Playground"):
            page.locator(".bk-tab", has_text=tab).click()
            page.wait_for_timeout(300)
    finally:
        context.close()
    assert any("midnight" in url for url in fetched), "the dark page did not load Tabulator's dark theme"
    assert outside == [], f"the dark page fetched from the internet: {outside}"
