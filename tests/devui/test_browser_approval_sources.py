"""In headless Chromium: "always allow" in the DevUI chat covers one source's tool, not a same-named one.

The DevUI is served in this process (as ``%agentnb devui`` serves it from a notebook), so the test can do what a
notebook sharing the agent can: re-point the agent at another server while the page is open. The other
server's ``search`` has the same name; the standing rule the first click made must not answer for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, FunctionTool
from agentnb.devui import serve, stop
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore
from tests.devui.devui_harness import WAIT, send_chat, text

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

call = ScriptedChatClient.call


def _search_from(server: str, ran: list[str]) -> FunctionTool:
    """A ``search`` tool labelled with its source, the way an MCP server's tools are."""

    def search(query: str) -> str:
        ran.append(f"{server}:{query}")
        return f"{server} found {query}"

    return FunctionTool(
        search,
        name="search",
        description="Search.",
        approval_mode="always_require",
        additional_properties={"server_label": server},
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Agent, list[str]]]:
    ran: list[str] = []
    client = ScriptedChatClient([call("search", query="a"), "docs one", call("search", query="b"), "mail one"])
    agent = Agent(client, name="finder", description="Searches one server", tools=[_search_from("docs", ran)])
    url = serve([agent], background=True, store=RunStore(tmp_path / "devui.db"), tracing=False)
    try:
        yield url, agent, ran
    finally:
        stop(url)


def test_always_allow_does_not_approve_a_same_named_tool_of_another_source(
    served: tuple[str, Agent, list[str]], browser: Any
) -> None:
    url, agent, ran = served
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(url)
        page.locator(".anb-entity-finder button").click()
        page.get_by_text("Searches one server").first.wait_for(timeout=WAIT)
        send_chat(page, "finder", "Search the docs")
        page.get_by_text("Approval needed").first.wait_for(timeout=WAIT)
        always = page.locator(".anb-always").first
        label = text(always)
        always.locator("input").check()
        page.locator(".anb-approve button").click()
        page.locator(".anb-msg.anb-assistant", has_text="docs one").wait_for(timeout=WAIT)
        assert ran == ["docs:a"]

        agent.tools = [_search_from("mail", ran)]  # the same name, now from the mail server
        send_chat(page, "finder", "Search the mail")
        waiting = page.locator(".anb-approve button:not([disabled])")
        waiting.wait_for(timeout=WAIT)  # a card asks: the docs rule did not answer for the mail server
        assert ran == ["docs:a"]
        assert page.get_by_text("approved automatically").count() == 0
        # Each card says which source its "always allow" would cover.
        assert "Always allow search from docs" in label
        assert "Always allow search from mail" in text(page.locator(".anb-always").last)
        waiting.click()
        page.locator(".anb-msg.anb-assistant", has_text="mail one").wait_for(timeout=WAIT)
        assert ran == ["docs:a", "mail:b"]
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
