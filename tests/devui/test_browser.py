"""Drive `panel serve devui` (the demo entities, offline) in headless Chromium.

One server and one page serve the whole module (a page load costs seconds on a busy machine); each test
selects the entity it needs. Screenshots of every view are saved to docs/ for the README.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.devui.devui_harness import (
    BUDGET_SCALE,
    DOCS,
    WAIT,
    DevUIServer,
    send_chat,
    text,
    wait_for_dark_theme,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

# Collect the text of every assistant bubble every few ms, through shadow roots (Panel renders in them).
WATCH_STREAM = """
() => {
  window.__seen = [];
  const deepAll = (root, sel, out) => {
    root.querySelectorAll(sel).forEach(e => out.push(e));
    root.querySelectorAll('*').forEach(e => { if (e.shadowRoot) deepAll(e.shadowRoot, sel, out); });
    return out;
  };
  window.__watch = setInterval(() => {
    for (const e of deepAll(document, '.anb-msg.anb-assistant', [])) {
      const t = e.textContent;
      if (window.__seen[window.__seen.length - 1] !== t) window.__seen.push(t);
    }
  }, 20);
}
"""


@pytest.fixture(scope="module")
def app(devui_server: DevUIServer, browser: Any) -> Any:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(devui_server.url)
    page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def select_entity(page: Any, entity_id: str, ready_text: str) -> None:
    page.locator(f".anb-entity-{entity_id} button").click()
    page.get_by_text(ready_text).first.wait_for(timeout=WAIT)
    page.mouse.move(0, 0)  # off the entry, so its description's tooltip does not cover the view


def open_tab(page: Any, name: str) -> None:
    page.locator(".bk-tab", has_text=name).click()


def test_demo_page_says_it_is_offline_and_lists_the_demos(app: Any) -> None:
    banner = app.locator(".anb-offline").first
    banner.wait_for(timeout=WAIT)
    assert "offline models" in text(banner)
    for entity in ("assistant", "mailer", "planner", "greeting-pipeline", "human-review", "text-stats"):
        assert app.locator(f".anb-entity-{entity} button").count() == 1


def test_chat_streams_text_and_shows_tool_cards(app: Any) -> None:
    select_entity(app, "assistant", "Answers travel questions")
    app.evaluate(WATCH_STREAM)
    send_chat(app, "assistant", "What's the weather in Paris?")
    app.get_by_text("answered in").first.wait_for(timeout=WAIT)
    app.evaluate("clearInterval(window.__watch)")
    final = text(app.locator(".anb-bubble-assistant").last)
    assert "sunny, 21 °C" in final and "0.92 EUR" in final
    # (Each rendered paragraph ends its text with a newline, so a partial answer is compared without it.)
    seen = [t.rstrip() for t in app.evaluate("window.__seen") if t.strip()]
    # Streaming means the browser showed the answer growing: at least one strict, non-empty prefix of it.
    partial = [t for t in seen if len(t) < len(seen[-1]) and seen[-1].startswith(t)]
    assert partial, f"the answer appeared in one piece: {seen}"
    cards = app.locator(".anb-tool-card")
    assert cards.count() == 2
    cards.first.locator(".card-header").click()
    app.get_by_text("took").first.wait_for(timeout=WAIT)
    body = text(cards.first)
    assert "get_weather" in body and '"city": "Paris"' in body and "The weather in Paris is sunny" in body
    model = text(app.locator(".anb-model"))
    assert "tool-calling-test-model" in model and "offline" in model
    usage = text(app.locator(".anb-usage"))
    assert re.search(r"total [1-9]\d*", usage), usage
    # Exact counts under the messages, and the context inspector's rows adding up to the context.
    counts = [text(t) for t in app.locator(".anb-msg-tokens").all()]
    assert any(re.search(r"\d+ tokens with the instructions", c) for c in counts), counts
    assert any(re.search(r"\d+ tokens written \(model call 2\)", c) for c in counts), counts
    context = text(app.locator(".anb-context"))
    now = int(re.search(r"context now: (\d+) tokens", context).group(1))  # type: ignore[union-attr]
    rows = re.findall(r"(assistant|instructions \+ user|tool|user) (-?\d+) (?:output tokens|prompt growth)", context)
    assert rows and sum(int(n) for _, n in rows) == now, (rows, now)
    # The model-call table ends inside the side panel (scrolling sideways), not past its edge.
    calls = app.locator(".anb-context .anb-scroll-x").bounding_box()
    side = app.locator(".anb-side-panel").bounding_box()
    assert calls is not None and side is not None and calls["x"] + calls["width"] <= side["x"] + side["width"] + 1
    app.screenshot(path=str(DOCS / "devui-chat.png"))


def test_approval_runs_the_tool_only_after_approve(app: Any) -> None:
    select_entity(app, "mailer", "Sends emails, but only after you approve")
    send_chat(app, "mailer", "Email Bob the report")
    app.get_by_text("Approval needed").first.wait_for(timeout=WAIT)
    assert app.get_by_text("was queued").count() == 0  # the tool body has not run: no result anywhere
    assert "awaiting approval" in text(app.locator(".anb-tool-card").first)
    # The approval card sits docked under the conversation with its buttons on screen, not below the fold.
    button = app.locator(".anb-approve button").bounding_box()
    assert button is not None and button["y"] + button["height"] <= 1000, button
    app.screenshot(path=str(DOCS / "devui-approval.png"))
    app.locator(".anb-approve button").click()
    app.locator(".anb-msg.anb-assistant", has_text="was queued").wait_for(timeout=WAIT)
    assert "You approved send_email" in text(app.locator(".anb-approval").first)
    assert "done" in text(app.locator(".anb-tool-card").first)


def test_deny_sends_a_denial_and_the_agent_continues(app: Any) -> None:
    send_chat(app, "mailer", "Email Carol the numbers")
    deny = app.locator(".anb-deny button:not([disabled])")
    deny.wait_for(timeout=WAIT)
    deny.click()
    app.get_by_text("You denied send_email").first.wait_for(timeout=WAIT)
    app.locator(".anb-tool-card").last.get_by_text("denied", exact=True).wait_for(timeout=WAIT)
    # Only the call approved in the previous test ran.
    assert app.locator(".anb-msg.anb-assistant", has_text="was queued").count() == 1


def run_workflow(page: Any) -> None:
    """Press Run and wait for this run to finish (not for the status line a previous run left)."""
    done = page.locator(".anb-run-done")
    page.locator(".anb-run-workflow button").click()
    done.wait_for(state="detached", timeout=WAIT)
    done.wait_for(timeout=WAIT)


def workflow_fill(page: Any, executor_id: str) -> str:
    rect = page.locator(f'g.node[data-id="{executor_id}"] rect')
    return rect.evaluate("el => getComputedStyle(el).fill")


def test_a_harness_agent_shows_its_todos_mode_and_memory_beside_the_chat(app: Any) -> None:
    app.locator(".anb-entity-planner button").click()
    app.locator(".anb-side-harness").wait_for(timeout=WAIT)  # only a harness agent's chat has the card
    app.mouse.move(0, 0)
    send_chat(app, "planner", "Plan a picnic")
    app.locator(".anb-harness-info", has_text="3/3 done").wait_for(timeout=WAIT)
    shown = text(app.locator(".anb-harness-info"))
    assert "Understand: Plan a picnic" in shown and "Save a note to memory" in shown
    assert "mode" in shown and "plan" in shown and "notes.md" in shown and "The request" in shown
    assert "Done: I planned 'Plan a picnic'" in text(app.locator(".anb-bubble-assistant").last)
    app.screenshot(path=str(DOCS / "devui-harness.png"))


def test_a_stored_harness_session_reopens_with_its_todos_tasks_and_memory(
    devui_server: DevUIServer, browser: Any
) -> None:
    """A new browser session (a reload, another tab) resumes a stored planner session from the store."""
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = first.new_page()
    page.goto(devui_server.url)
    page.locator(".anb-entity-planner button").click()
    page.locator(".anb-side-harness").wait_for(timeout=WAIT)
    page.mouse.move(0, 0)
    send_chat(page, "planner", "Plan a hike")
    page.locator(".anb-harness-info", has_text="3/3 done").wait_for(timeout=WAIT)
    first.close()

    second = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = second.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(devui_server.url)
    page.locator(".anb-entity-planner button").click()
    page.locator(".anb-side-harness").wait_for(timeout=WAIT)
    page.mouse.move(0, 0)
    stored = page.locator(".anb-stored-sessions select")
    label = next(o for o in stored.locator("option").all_text_contents() if o.startswith("Plan a hike · planner"))
    stored.select_option(label=label)
    page.get_by_role("button", name="Resume").click()
    page.locator(".anb-harness-info", has_text="Research: Plan a hike").wait_for(timeout=WAIT)
    shown = text(page.locator(".anb-harness-info"))
    # All ticked (a busy page may have taken the message twice: then there are two of everything).
    assert re.search(r"todos (\d)/\1 done", shown) and "Understand: Plan a hike" in shown  # todos
    assert "researcher" in shown and "completed" in shown and "A fact, found offline" in shown  # the task
    assert "notes.md" in shown and "Asked: Plan a hike" in shown  # the memory file
    assert "Plan a hike" in text(page.locator(".anb-msg.anb-user").first)  # and the conversation itself
    second.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_workflow_run_turns_executors_complete_on_the_graph(app: Any) -> None:
    select_entity(app, "greeting-pipeline", "3 executors · start: prepare")
    idle = workflow_fill(app, "decorate")
    run_workflow(app)
    completed = "rgb(218, 251, 225)"  # STATE_COLOURS["completed"] fill
    assert idle != completed
    for executor_id in ("prepare", "shout", "decorate"):
        assert workflow_fill(app, executor_id) == completed, executor_id
    assert "HELLO ADA!!" in text(app.locator(".anb-wf-outputs"))
    assert "16 events" in text(app.locator(".anb-log-info"))
    app.screenshot(path=str(DOCS / "devui-workflow.png"))


def test_workflow_request_info_form_answers_the_run(app: Any) -> None:
    select_entity(app, "human-review", "2 executors · start: write_draft")
    app.locator(".anb-workflow-view .anb-text-input textarea").fill("agents")
    app.locator(".anb-run-workflow button").click()
    app.locator(".anb-answer-request button").wait_for(timeout=WAIT)
    banner = app.locator(".anb-hitl-banner")
    # The banner is its own pane: its text may arrive in a later message than the answer form's.
    app.locator(".anb-hitl-banner", has_text="waiting for your input").wait_for(timeout=WAIT)
    assert "waiting for your input" in text(banner)
    request = text(app.locator(".anb-request"))
    assert "draft" in request and "A short note about agents." in request
    assert "__agentnb__" not in request and "agentnb.devui.demos" not in request  # fields, not type tags
    app.screenshot(path=str(DOCS / "devui-request.png"))
    app.locator(".anb-wf-requests input[type=text]").fill("looks good")
    app.locator(".anb-answer-request button").click()
    app.locator(".anb-output", has_text="published: A short note about agents. (looks good)").wait_for(timeout=WAIT)
    assert not banner.is_visible()


def test_time_travel_inspect_and_fork_with_an_edited_value(app: Any) -> None:
    select_entity(app, "greeting-pipeline", "3 executors · start: prepare")
    run_workflow(app)
    open_tab(app, "Time travel")
    app.locator(".anb-load-ms").wait_for(timeout=WAIT)
    app.locator(".anb-timeline .tabulator-row").nth(1).click()  # the checkpoint after step 1
    app.get_by_text("step 1", exact=True).wait_for(timeout=WAIT)
    loaded_ms = float(re.search(r"loaded in (\d+) ms", text(app.locator(".anb-load-ms"))).group(1))
    assert loaded_ms < 200 * BUDGET_SCALE
    inspector = text(app.locator(".anb-inspector"))
    assert "pending_messages" in inspector and "shared_state" in inspector
    editor = app.locator(".anb-fork-editor textarea")
    original = editor.input_value()
    assert '"data": "hello Ada"' in original
    # An invalid edit is refused before anything runs.
    editor.fill(original.replace('"hello Ada"', "42"))
    app.locator(".anb-fork button").click()
    app.locator(".anb-fork-invalid").wait_for(timeout=WAIT)
    assert "no receiver accepts" in text(app.locator(".anb-fork-invalid"))
    editor.fill(original.replace("hello Ada", "hello Grace"))
    app.locator(".anb-fork button").click()
    app.locator(".anb-resume-done").wait_for(timeout=WAIT)
    app.locator(".anb-branch-b", has_text="HELLO GRACE!!").wait_for(timeout=WAIT)
    assert "HELLO ADA!!" in text(app.locator(".anb-branch-a"))
    assert "HELLO GRACE!!" in text(app.locator(".anb-tt-result"))
    assert app.locator(".anb-tree g.cp").count() >= 7  # the first run's 4 checkpoints plus the fork's branch
    # Two checkpoints diffed: the button is reachable (nothing drawn over it) and the diff names both steps.
    app.locator(".anb-diff button").click()
    app.locator(".anb-diff-out", has_text="→ step").wait_for(timeout=WAIT)
    time.sleep(0.5)
    app.screenshot(path=str(DOCS / "devui-timetravel.png"), full_page=True)


def test_runs_view_lists_every_run_and_traces_show_a_waterfall(app: Any) -> None:
    open_tab(app, "Runs")
    table = app.locator(".anb-runs-table")
    table.get_by_text("greeting-pipeline").first.wait_for(timeout=WAIT)
    listed = text(table)
    assert "mailer" in listed and "assistant" in listed and "completed" in listed
    table.locator(".tabulator-row", has_text="assistant").first.click()
    app.locator(".anb-run-events").get_by_text("message").first.wait_for(timeout=WAIT)
    app.screenshot(path=str(DOCS / "devui-runs.png"))
    app.get_by_role("button", name="Open trace").click()
    waterfall = app.locator(".anb-waterfall")
    waterfall.get_by_text("invoke_agent").first.wait_for(timeout=WAIT)
    assert "execute_tool" in text(waterfall)
    assert "spans" in text(app.locator(".anb-trace-totals"))
    waterfall.get_by_text("execute_tool").first.click()
    app.locator(".anb-span-details").wait_for(timeout=WAIT)
    app.screenshot(path=str(DOCS / "devui-traces.png"))


def test_the_dark_theme_follows_the_system(devui_server: DevUIServer, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    page = context.new_page()
    try:
        page.goto(devui_server.url)
        wait_for_dark_theme(page)
        page.locator(".anb-entity-assistant button").wait_for(timeout=WAIT)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        red, green, blue = (int(v) for v in re.findall(r"\d+", background)[:3])
        assert red + green + blue < 3 * 80, background
        select_entity(page, "assistant", "Answers travel questions")
        send_chat(page, "assistant", "What's the weather in Paris?")
        page.get_by_text("answered in").first.wait_for(timeout=WAIT)
        page.screenshot(path=str(DOCS / "devui-chat-dark.png"))
        select_entity(page, "mailer", "Sends emails, but only after you approve")
        send_chat(page, "mailer", "Email Bob the report")
        page.get_by_text("Approval needed").first.wait_for(timeout=WAIT)
        page.screenshot(path=str(DOCS / "devui-approval-dark.png"))
        select_entity(page, "human-review", "2 executors · start: write_draft")
        page.locator(".anb-workflow-view .anb-text-input textarea").fill("agents")
        page.locator(".anb-run-workflow button").click()
        page.locator(".anb-answer-request button").wait_for(timeout=WAIT)
        page.screenshot(path=str(DOCS / "devui-request-dark.png"))
        select_entity(page, "greeting-pipeline", "3 executors · start: prepare")
        run_workflow(page)
        page.screenshot(path=str(DOCS / "devui-workflow-dark.png"))
        open_tab(page, "Time travel")
        page.locator(".anb-timeline").first.wait_for(timeout=WAIT)
        page.wait_for_timeout(1000)
        page.screenshot(path=str(DOCS / "devui-timetravel-dark.png"))
        # As in the light pictures: a run's events, then its trace with a span opened.
        open_tab(page, "Runs")
        table = page.locator(".anb-runs-table")
        table.get_by_text("greeting-pipeline").first.wait_for(timeout=WAIT)
        table.locator(".tabulator-row", has_text="assistant").first.click()
        page.locator(".anb-run-events").get_by_text("message").first.wait_for(timeout=WAIT)
        page.screenshot(path=str(DOCS / "devui-runs-dark.png"))
        page.get_by_role("button", name="Open trace").click()
        waterfall = page.locator(".anb-waterfall")
        waterfall.get_by_text("execute_tool").first.click()
        page.locator(".anb-span-details").wait_for(timeout=WAIT)
        page.screenshot(path=str(DOCS / "devui-traces-dark.png"))
    finally:
        context.close()
