"""Fixtures for the DevUI browser tests: a real `panel serve devui` on a free port and headless Chromium."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.devui.devui_harness import CHROMIUM_ARGS, DevUIServer


@pytest.fixture(scope="module")
def devui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevUIServer]:
    server = DevUIServer(tmp_path_factory.mktemp("devui-home"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (apt-get install chromium); .ci/run installs it.")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _screenshot_on_failure(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # A failing browser test leaves a screenshot of the page next to the test's temporary files.
    yield
    if request.node.stash.get(_FAILED, False) and "app" in request.fixturenames:
        page = request.getfixturevalue("app")
        folder = Path(tempfile.gettempdir()) / "agentnb-devui-failures"
        folder.mkdir(exist_ok=True)
        path = folder / f"{request.node.name}.png"
        page.screenshot(path=str(path))
        print(f"screenshot of the failure: {path}")
