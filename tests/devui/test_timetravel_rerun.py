"""Re-run one executor in the DevUI's time-travel view: through its Python API and in headless Chromium."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import panel as pn
import pytest

from agentnb.devui._timetravel import TimeTravelView
from agentnb.devui._workflow import WorkflowView
from agentnb.devui.demos import demo_catalog
from agentnb.store import RunStore
from tests.devui.devui_harness import DOCS, WAIT, DevUIServer, dark_page, text


async def _travel_at_step(store: RunStore, step: int) -> TimeTravelView:
    catalog = demo_catalog()
    view = WorkflowView(catalog.get("greeting-pipeline"), store=store)
    await view.run(message=view.form.value())
    travel = TimeTravelView(store, catalog)
    travel.panel()
    travel.select_checkpoint(travel._chain[step].checkpoint_id)
    await travel.offer_rerun()
    return travel


def _html(pane: Any) -> str:
    return str(pane.object)


async def test_rerun_in_the_time_travel_view_compares_and_continues() -> None:
    store = RunStore(":memory:")
    travel = await _travel_at_step(store, 1)  # after "prepare": "shout" is due with "hello Ada"
    assert travel.rerun_executor.options == ["prepare", "shout", "decorate"]
    assert travel.rerun_executor.value == "shout" and travel.rerun_input.value == '"hello Ada"'
    checkpoints, events = (
        len(store.list_checkpoints()),
        sum(len(store.list_events(r["run_id"])) for r in store.list_runs()),
    )

    await travel._on_rerun()
    assert travel.rerun_result.is_unchanged and "same as the original" in _html(travel.rerun_out)

    travel.rerun_input.value = json.dumps("<b>hello Grace</b>")
    await travel._on_rerun()
    assert travel.rerun_result.sent_by_edge() == {"shout → decorate": ["<B>HELLO GRACE</B>"]}
    shown = _html(travel.rerun_out)
    assert "&lt;B&gt;HELLO GRACE&lt;/B&gt;" in shown and "<B>HELLO" not in shown and "anb-rerun-changed" in shown
    assert len(store.list_checkpoints()) == checkpoints  # nothing written
    assert sum(len(store.list_events(r["run_id"])) for r in store.list_runs()) == events

    travel.rerun_input.value = "7"
    await travel._on_rerun()
    assert travel.rerun_result is None and travel.continue_button.disabled
    assert "ExecutorInputError" in _html(travel.rerun_out) and "takes str" in _html(travel.rerun_out)

    travel.rerun_input.value = '"hello Grace"'
    await travel._on_rerun()
    assert not travel.continue_button.disabled
    await travel._on_continue()
    result = "\n".join(str(p.object) for p in travel.action_result.select(pn.pane.HTML))
    assert "HELLO GRACE!" in result and "Continue from the re-run of shout" in result
    assert len(store.list_runs(kind="workflow")) == 2


async def test_a_stored_run_without_its_workflow_offers_no_rerun() -> None:
    store = RunStore(":memory:")
    travel = await _travel_at_step(store, 1)
    bare = TimeTravelView(store, pn_catalog_without_workflows())
    bare.panel()
    bare.select_checkpoint(travel._chain[1].checkpoint_id)
    await bare.offer_rerun()
    assert bare.rerun_button.disabled and bare.rerun_executor.disabled and bare.rerun_executor.options == []


def pn_catalog_without_workflows() -> Any:
    from agentnb.devui import Catalog

    return Catalog()


def _rerun_shout_on_an_edited_input(page: Any) -> None:
    """Run the greeting pipeline, open its checkpoint after step 1 and re-run "shout" on an edited input."""
    page.locator(".anb-entity-greeting-pipeline button").click()
    page.get_by_text("3 executors · start: prepare").first.wait_for(timeout=WAIT)
    done = page.locator(".anb-run-done")
    page.locator(".anb-run-workflow button").click()
    done.wait_for(timeout=WAIT)
    page.locator(".bk-tab", has_text="Time travel").click()
    page.locator(".anb-load-ms").wait_for(timeout=WAIT)
    page.locator(".anb-timeline .tabulator-row").nth(1).click()  # the checkpoint after step 1
    page.get_by_text("step 1", exact=True).wait_for(timeout=WAIT)
    editor = page.locator(".anb-rerun-input textarea")
    deadline = time.monotonic() + WAIT / 1000
    while editor.input_value() != '"hello Ada"' and time.monotonic() < deadline:
        time.sleep(0.1)
    assert editor.input_value() == '"hello Ada"'
    assert page.locator(".anb-rerun-executor select").input_value() == "shout"
    editor.fill('"hello <i>Grace</i>"')
    page.locator(".anb-rerun button").click()
    out = page.locator(".anb-rerun-out")
    out.get_by_text("changed", exact=True).first.wait_for(timeout=WAIT)
    shown = text(out)
    assert "HELLO <I>GRACE</I>" in shown and "HELLO ADA" in shown  # the escaped value shows as text
    assert page.locator(".anb-rerun-out i").count() == 0  # nothing from the input became markup
    page.locator(".anb-rerun-out .anb-rerun-table").scroll_into_view_if_needed()
    time.sleep(0.3)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_rerun_executor_in_chromium(devui_server: DevUIServer, page: Any) -> None:
    page.goto(devui_server.url)
    page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
    _rerun_shout_on_an_edited_input(page)
    page.screenshot(path=str(DOCS / "devui-rerun.png"))
    page.locator(".anb-rerun-continue button").click()
    page.locator(".anb-tt-result", has_text="HELLO <I>GRACE</I>!").wait_for(timeout=WAIT)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_rerun_executor_in_the_dark_theme(devui_server: DevUIServer, browser: Any) -> None:
    with dark_page(browser, devui_server.url) as page:
        _rerun_shout_on_an_edited_input(page)
        # The changed row keeps its highlight, in a shade the page's light text reads on.
        row = page.locator(".anb-rerun-out tr.anb-rerun-changed").first
        background = row.evaluate("el => getComputedStyle(el).backgroundColor")
        red, green, blue = (int(v) for v in re.findall(r"\d+", background)[:3])
        assert red + green + blue < 3 * 100 and (red, green, blue) != (0, 0, 0), background
        page.screenshot(path=str(DOCS / "devui-rerun-dark.png"))
