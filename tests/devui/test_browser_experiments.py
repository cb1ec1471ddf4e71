"""The DevUI's Experiments view in headless Chromium: the list (live), one experiment, two compared."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent
from agentnb.evals import evaluate, scorers
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore
from tests.devui.devui_harness import DOCS, REPO, WAIT, DevUIServer, dark_page, text

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

HERE = Path(__file__).resolve().parent
CAPITALS = {"France": "Paris", "Italy": "Rome", "Spain": "Madrid", "Japan": "Tokyo"}
DATASET = [{"input": f"Capital of {c}?", "expected": city, "case_id": c.lower()} for c, city in CAPITALS.items()]


def _agent(wrong: str | None) -> Agent:
    def model(messages: list[Any], options: dict[str, Any]) -> str:
        text = messages[-1].text
        if wrong and wrong in text:
            return "<img src=x onerror=alert(1)>Lyon"
        return next(city for country, city in CAPITALS.items() if country in text)

    return Agent(FunctionChatClient(model), name="geo")


def _evaluate(home: Path, name: str, wrong: str | None) -> None:
    with RunStore(home / "agentnb.db") as store:
        checks = [scorers.exact_match(), scorers.contains()]
        asyncio.run(evaluate(_agent(wrong), DATASET, checks, name=name, store=store, progress=False))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("devui-experiments")
    _evaluate(path, "geo-v1", None)
    _evaluate(path, "geo-v2", "Italy")
    return path


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[DevUIServer]:
    server = DevUIServer(home)
    try:
        yield server
    finally:
        server.stop()


def test_experiments_list_detail_compare_and_live_updates(server: DevUIServer, home: Path, page: Any) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server.url)
    page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
    page.locator(".bk-tab", has_text="Experiments").click()
    page.get_by_text("2 in the store").first.wait_for(timeout=WAIT)
    # One experiment: summary, chart, the failing case first, model output escaped.
    page.locator(".anb-experiments-table .tabulator-row", has_text="geo-v2").first.click()
    page.get_by_text("Experiment geo-v2").first.wait_for(timeout=WAIT)
    detail = page.locator(".anb-experiment-detail").first
    detail.get_by_text("Cases (1 failing first)").wait_for(timeout=WAIT)
    shown = text(detail)
    assert shown.index("italy") < shown.index("france")
    assert "<img src=x onerror=alert(1)>Lyon" in shown  # shown as text, never as an element
    assert detail.locator("img").count() == 0 and detail.locator("svg.anb-score-chart").count() == 1
    page.screenshot(path=str(DOCS / "devui-experiments.png"))
    # Two experiments compared case by case, regressions first.
    page.locator(".bk-tab", has_text="Compare").click()
    page.locator(".anb-compare-button button").click()
    page.get_by_text("geo-v1 → geo-v2").first.wait_for(timeout=WAIT)
    page.get_by_text("1 regression").first.wait_for(timeout=WAIT)
    first_row = page.locator(".anb-compare-table .tabulator-row").first
    assert "italy" in text(first_row) and "regression" in text(first_row)
    assert re.search(r"exact_match\s*:\s*italy", text(page.locator(".anb-compare-info").first))  # worse, per scorer
    # The worst case side by side: both answers, the scores that dropped, the diff (model output as text).
    case = page.locator(".anb-compare-case").first
    case.get_by_text("geo-v2 (candidate)").wait_for(timeout=WAIT)
    shown = text(case)
    assert "geo-v1 (baseline)" in shown and "worse on exact_match, contains" in shown
    diff = text(case.locator(".anb-compare-diff"))
    assert "-Rome" in diff and "+<img src=x onerror=alert(1)>Lyon" in diff
    assert case.locator("img").count() == 0
    page.screenshot(path=str(DOCS / "devui-experiments-compare.png"))
    # Another row: the same answer on both sides.
    page.locator(".anb-compare-table .tabulator-row", has_text="france").first.click()
    case.get_by_text("Same answer.").wait_for(timeout=WAIT)
    # An evaluation finished in another process appears without a reload.
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_browser_experiments as t; "
        "from pathlib import Path; t._evaluate(Path(sys.argv[2]), 'geo-v3', 'Spain')"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", script, str(HERE), str(home)], check=True, env=env, timeout=120)
    page.get_by_text("3 in the store").first.wait_for(timeout=WAIT)
    assert not dialogs


def test_the_experiments_view_in_the_dark_theme(server: DevUIServer, browser: Any) -> None:
    with dark_page(browser, server.url) as page:
        page.locator(".bk-tab", has_text="Experiments").click()
        page.locator(".anb-experiments-table .tabulator-row", has_text="geo-v2").first.click()
        page.get_by_text("Cases (1 failing first)").first.wait_for(timeout=WAIT)
        # The selected tab's label reads on the dark tab colour (bokeh draws it dark grey otherwise).
        tab = page.locator(".bk-tab.bk-active", has_text="Experiments").first
        colour = tab.evaluate("el => getComputedStyle(el).color")
        red, green, blue = (int(v) for v in re.findall(r"\d+", colour)[:3])
        assert red + green + blue > 3 * 180, colour
        page.screenshot(path=str(DOCS / "devui-experiments-dark.png"))
