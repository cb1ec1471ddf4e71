"""End to end: JupyterLab in headless Chromium, a WorkflowView, a click on "Re-run executor", the diff shows.

Saves the README's screenshot (docs/notebook-rerun.png) when AGENTNB_UPDATE_SCREENSHOTS is set.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests.notebook.test_notebook_jupyterlab import CHROMIUM_ARGS, SHOTS, JupyterLab

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

CELLS = [
    "%load_ext agentnb",
    """from agentnb.notebook import WorkflowView
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

@executor(id="draft")
async def draft(topic: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"A short note about {topic}.")

@executor(id="review")
async def review(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.replace("short", "clear, short"))

@executor(id="publish")
async def publish(text: str, ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output(f"PUBLISHED: {text}")

workflow = WorkflowBuilder(start_executor=draft, name="newsletter").add_chain([draft, review, publish]).build()""",
    'view = WorkflowView(workflow)\nview.run("rock pools")\nawait view.wait()\n_ = await view.select(1)',
]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[JupyterLab]:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nb, tmp_path / "rerun.ipynb")
    server = JupyterLab(tmp_path)
    try:
        server.start_kernel_for("rerun.ipynb")
        yield server
    finally:
        server.stop()


@pytest.mark.timeout(300)  # JupyterLab's front end alone takes tens of seconds to load on a busy 2-core machine
def test_rerun_executor_in_jupyterlab(lab: JupyterLab) -> None:
    from playwright.sync_api import expect, sync_playwright

    screenshot = SHOTS / "notebook-rerun.png"
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (apt-get install chromium); .ci/run installs it.")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.add_locator_handler(
                page.locator(".jp-Dialog", has_text="Select Kernel"),
                lambda dialog: dialog.locator("button.jp-mod-accept").click(),
            )
            page.goto(f"{lab.url}/lab/tree/rerun.ipynb?token={lab.token}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
            rerun = page.locator(".jupyter-widgets button", has_text="Re-run executor").last
            for attempt in range(4):  # as in the approval test: a run command fired too early is dropped
                expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_be_visible(
                    timeout=60_000
                )
                page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
                try:
                    expect(page.locator(".jupyter-widgets textarea").last).to_have_value(
                        '"A short note about rock pools."', timeout=45_000
                    )
                    break
                except AssertionError:
                    if attempt == 3:
                        raise
            expect(rerun).to_be_enabled(timeout=30_000)
            page.locator(".jupyter-widgets textarea").last.fill('"A long, <b>rambling</b> note about rock pools."')
            page.locator(".jupyter-widgets textarea").last.blur()  # the widget syncs its value on blur
            rerun.click()
            table = page.locator(".anb-rerun-table").last
            expect(table).to_contain_text("A long, <b>rambling</b> note about rock pools.", timeout=30_000)
            expect(table).to_contain_text("A clear, short note about rock pools.")
            assert page.locator(".anb-rerun-table b").count() == 0  # the input's markup stays text
            expect(page.locator(".anb-rerun .anb-badge", has_text="changed").last).to_be_visible()
            table.scroll_into_view_if_needed()
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.locator(".jp-NotebookPanel").screenshot(path=str(screenshot))
        except BaseException:
            page.screenshot(path=str(lab.root / "failure.png"))
            raise
        finally:
            browser.close()
    assert screenshot.stat().st_size > 10_000
