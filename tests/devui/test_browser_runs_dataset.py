"""The Runs view's "Add to dataset" in headless Chromium: one run, then several picked with Ctrl-click."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent
from agentnb.evals import dataset_from_runs, load_dataset, run_batch
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore
from tests.devui.devui_harness import WAIT, DevUIServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

QUESTIONS = ["alpha", "beta", "<b>gamma</b>"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("devui-runs-dataset")
    agent = Agent(FunctionChatClient(lambda m, o: m[-1].text.upper()), name="shouter")
    with RunStore(path / "agentnb.db") as store:
        asyncio.run(run_batch(agent, QUESTIONS, store=store, progress=False, concurrency=1))
    return path


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[DevUIServer]:
    server = DevUIServer(home)
    try:
        yield server
    finally:
        server.stop()


def _row(page: Any, run_id: str) -> Any:
    return page.locator(".anb-runs-table .tabulator-row", has_text=run_id).first


def test_add_one_run_then_several_selected_runs_to_a_dataset(server: DevUIServer, home: Path, page: Any) -> None:
    with RunStore(home / "agentnb.db") as store:
        by_question = {r["input"]: r["source_run"] for r in dataset_from_runs(agent="shouter", store=store)}
    page.goto(server.url)
    page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
    page.locator(".bk-tab", has_text="Runs").click()
    table = page.locator(".anb-runs-table")
    table.get_by_text("shouter").first.wait_for(timeout=WAIT)
    page.locator(".anb-runs-view input[placeholder='dataset name']").fill("picked")
    # One run: click its row, then the button.
    _row(page, by_question["alpha"]).click()
    page.locator(".anb-run-events").get_by_text("input").first.wait_for(timeout=WAIT)
    page.get_by_role("button", name="Add to dataset").click()
    page.locator(".anb-dataset-note").get_by_text("picked v1: 1 rows").wait_for(timeout=WAIT)
    # Two more at once: Ctrl-click adds rows to the selection; the button says how many it adds.
    _row(page, by_question["beta"]).click()
    # Wait until the server has taken the first pick (its events show), or a busy server's echo of it can
    # overwrite the Ctrl-click's selection.
    page.locator(".anb-run-events").get_by_text("beta").first.wait_for(timeout=WAIT)
    _row(page, by_question["<b>gamma</b>"]).click(modifiers=["Control"])
    page.get_by_role("button", name="Add 2 to dataset").click()
    page.locator(".anb-dataset-note").get_by_text("picked v2: 3 rows").wait_for(timeout=WAIT)

    with RunStore(home / "agentnb.db") as store:
        saved = load_dataset("picked", store=store)
    assert saved.version == 2
    assert {r["input"]: r["expected"] for r in saved.rows} == {q: q.upper() for q in QUESTIONS}
    assert saved.rows[0]["source_run"] == by_question["alpha"]
