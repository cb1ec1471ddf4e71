"""Drive `panel serve devui --args DIR` with an agent that compacts its context, in Chromium.

The chat's Context card shows each turn's compaction: the budget bar, the groups left out greyed in place
with their reason, the summary where it stood in; older turns expand to replay their request, and a stored
session resumed from the run store replays the same way.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from tests.devui.devui_harness import DOCS, WAIT, DevUIServer, send_chat, text

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

AGENT = '''
from agentnb import Agent, Content, Message
from agentnb.compaction import CharacterEstimatorTokenizer, TokenBudgetComposedStrategy, ToolResultCompactionStrategy
from agentnb.local import FunctionChatClient


def lookup(item: str) -> str:
    """Look an item up."""
    return f"status of {item}: ok, " + "checked and recorded; " * 12


def model(messages: list[Message], options: dict[str, object]) -> object:
    if messages[-1].role == "user":
        n = sum(1 for m in messages if m.role == "user")
        call = Content.from_function_call(f"call_{n}", "lookup", arguments=f'{{"item": "item {n}"}}')
        return Message("assistant", [call])
    return "Item checked: <b>fine</b>."


strategy = TokenBudgetComposedStrategy(
    token_budget=450,
    tokenizer=CharacterEstimatorTokenizer(),
    strategies=[ToolResultCompactionStrategy(keep_last_tool_call_groups=1)],
)
agents = [
    Agent(
        FunctionChatClient(model),
        name="compacting",
        description="Looks items up and compacts its context.",
        tools=[lookup],
        compaction_strategy=strategy,
    )
]
'''
TURNS = 5


@pytest.fixture(scope="module")
def compaction_app(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("entities")
    (folder / "compacting.py").write_text(textwrap.dedent(AGENT))
    server = DevUIServer(tmp_path_factory.mktemp("devui-home-compaction"), args=[str(folder)])
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server.url)
        page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
        yield page
    finally:
        context.close()
        server.stop()
    assert not errors, f"JavaScript errors on the page: {errors}"


def newest_view(page: Any) -> Any:
    """The open (newest) turn's compaction view in the Context card."""
    return page.locator(".anb-side-context details[open] .anb-compaction-view").first


def test_the_context_card_shows_compaction_and_a_resumed_session_replays_it(compaction_app: Any) -> None:
    from playwright.sync_api import expect

    app = compaction_app
    app.locator(".anb-entity-compacting button").click()
    app.get_by_text("Looks items up and compacts its context.").first.wait_for(timeout=WAIT)
    for turn in range(1, TURNS + 1):
        send_chat(app, "compacting", f"check <i>item</i> {turn}")
        app.locator(".anb-side-context summary", has_text=f"turn {turn}:").wait_for(timeout=WAIT)

    card = app.locator(".anb-side-context")
    card.get_by_text(f"Compaction (3 of {TURNS} turn(s) compacted)").wait_for(timeout=WAIT)
    view = newest_view(app)
    # The budget bar, drawn to scale: 405 of 450 tokens sent.
    bar = view.locator(".anb-budget-bar").first
    assert bar.is_visible()
    assert "405" in text(view) and "450" in text(view)
    # The groups left out are greyed in place with their reason; the kept ones are not.
    excluded = view.locator(".anb-cmp-excluded")
    kept = view.locator(".anb-cmp-kept")
    assert excluded.count() == 13 and kept.count() == 7
    assert "(token_budget_fallback)" in text(view) and "(tool_result_compaction)" in text(view)
    grey = excluded.first.evaluate("e => getComputedStyle(e).opacity")
    plain = kept.first.evaluate("e => getComputedStyle(e).opacity")
    assert float(grey) < float(plain)
    # The summary stands where the tool group it replaced was: after that turn's question, before its lines.
    summary = view.locator(".anb-cmp-summary")
    assert summary.count() == 1 and "[Tool results: lookup: status of item" in text(summary)
    lines = view.locator(".anb-cmp-line").all_inner_texts()
    at = next(i for i, line in enumerate(lines) if "[Tool results:" in line)
    assert "check <i>item</i> 4" in lines[at - 1]  # the question of the turn whose tool group it replaced
    assert "(tool_result_compaction)" in lines[at + 1]
    # Message text is shown as text: no element came from it.
    assert view.locator("i", has_text="item").count() == 0 and view.locator("b", has_text="fine").count() == 0
    view.scroll_into_view_if_needed()
    app.screenshot(path=str(DOCS / "devui-compaction.png"))

    # An older turn expands and replays its own request: turn 3 left out 4 groups.
    card.locator("summary", has_text="turn 3:").click()
    turn3 = card.locator("details", has=app.locator("summary", has_text="turn 3:")).first
    turn3.locator(".anb-cmp-excluded").first.wait_for(timeout=WAIT)
    replay = turn3.locator(".anb-compaction-view").first
    # That request's 12 messages (its summary line aside), the old ones greyed.
    assert replay.locator(".anb-cmp-excluded").count() + replay.locator(".anb-cmp-kept").count() == 12
    assert replay.locator(".anb-cmp-summary").count() == 1

    # The session was saved to the run store: resumed, it replays the same views.
    stored = app.locator(".anb-stored-sessions select")
    labels = [t for t in stored.locator("option").all_inner_texts() if "check <i>item</i> 1" in t]
    assert labels, stored.locator("option").all_inner_texts()
    stored.select_option(label=labels[0])
    app.locator("button", has_text="Resume").click()
    expect(app.locator(".anb-session select")).to_have_value(re.compile("^resumed · "), timeout=WAIT)
    resumed = newest_view(app)
    resumed.locator(".anb-cmp-excluded").first.wait_for(timeout=WAIT)
    assert resumed.locator(".anb-cmp-excluded").count() == 13
    assert resumed.locator(".anb-cmp-summary").count() == 1
    assert card.locator("summary", has_text="turn 1:").count() == 1
