"""End to end: under JupyterLab a plain agent cell gets its meter line, and its run names the cell and notebook.

nbclient sends no cell ids and starts kernels outside Jupyter Server, so only a real JupyterLab shows the meter
on its own ("auto") and lets the kernel know the notebook's path and URL. Saves the README's screenshot
(docs/notebook-runs.png) when AGENTNB_UPDATE_SCREENSHOTS is set.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests.notebook.test_notebook_jupyterlab import CHROMIUM_ARGS, SHOTS, JupyterLab

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

CELLS = [
    "%load_ext agentnb",
    '''from agentnb import Agent, tool
from agentnb.local import ToolCallingChatClient

@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."

weather = Agent(ToolCallingChatClient(), name="weather", tools=[get_weather])''',
    "r = await weather.run('Weather in Paris?')\nr",
    "%agentnb runs",
]
NOTEBOOK = "cells.ipynb"


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JupyterLab]:
    # The kernel inherits the server's environment: its run store lives in the test's folder.
    monkeypatch.setenv("AGENTNB_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENTNB_STORE_URL", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nb, tmp_path / NOTEBOOK)
    server = JupyterLab(tmp_path)
    try:
        server.start_kernel_for(NOTEBOOK)
        yield server
    finally:
        server.stop()


@pytest.mark.timeout(300)  # JupyterLab's front end alone takes tens of seconds to load on a busy 2-core machine
def test_meter_and_runs_by_cell_in_jupyterlab(lab: JupyterLab) -> None:
    from playwright.sync_api import expect, sync_playwright

    from agentnb.store import default_store_url, open_store

    screenshot = SHOTS / "notebook-runs.png"
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (apt-get install chromium); .ci/run installs it.")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1700, "height": 900})  # room for the runs table
            page.add_locator_handler(
                page.locator(".jp-Dialog", has_text="Select Kernel"),
                lambda dialog: dialog.locator("button.jp-mod-accept").click(),
            )
            page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={lab.token}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
            table = page.locator(".jp-OutputArea-output table.dataframe").last
            for attempt in range(4):  # as in the approval test: a run command fired too early is dropped
                expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_be_visible(
                    timeout=60_000
                )
                page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
                try:
                    expect(table).to_contain_text("weather", timeout=45_000)
                    break
                except AssertionError:
                    if attempt == 3:
                        raise
            # The meter: JupyterLab sends cell ids, so "auto" shows the line under the response.
            meter = page.locator(".jp-OutputArea-output .anb-meter").last
            expect(meter).to_contain_text("2 model calls · 1 tool call · ")
            assert re.search(r"\d+ in / \d+ out tokens · model \d+ ms of \d+ ms", meter.inner_text()), (
                meter.inner_text()
            )
            # The runs of this notebook, by cell: the label the front end shows, and the notebook's path.
            row = table.locator("tbody tr").first
            expect(row).to_contain_text("r = await weather.run('Weather in Paris?')")
            # The kernel runs in the notebook's folder, so the notebook is named as it is there.
            assert row.locator("td").nth(8).inner_text() == NOTEBOOK, row.inner_text()
            count = page.locator(".jp-Cell").nth(2).locator(".jp-InputPrompt").inner_text()
            assert re.fullmatch(r"\[\d+\]:", count.strip()), count
            expect(row).to_contain_text(f"{count.strip().rstrip(':')} r = await weather.run(")
            table.scroll_into_view_if_needed()
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.locator(".jp-NotebookPanel").screenshot(path=str(screenshot))

            # The stored run links back to this notebook in this JupyterLab, and the link opens it.
            store = open_store(default_store_url())
            try:
                cells = [row["metadata"]["cell"] for row in store.summarize_runs(limit=None) if row.get("metadata")]
            finally:
                store.close()
            assert cells and cells[0]["notebook"] == str(lab.root / NOTEBOOK), cells
            assert cells[0]["notebook_url"] == f"{lab.url}/lab/tree/{NOTEBOOK}", cells
            page.goto(cells[0]["notebook_url"])
            expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_contain_text(
                "%load_ext agentnb", timeout=90_000
            )
        except BaseException:
            page.screenshot(path=str(lab.root / "failure.png"))
            raise
        finally:
            browser.close()
    assert screenshot.stat().st_size > 10_000
