"""Approvals in a real kernel: "always allow" is bounded by the tool's source, inline sessions resume, the
meter counts what a click ran, and the stored output shows the settled run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.notebook.kernel_harness import KernelSession, data, text

pytestmark = pytest.mark.kernel

DEFINE = '''
from agentnb import Agent, FunctionTool
from agentnb.local import ScriptedChatClient
from agentnb.notebook import last_view

ran = []
call = ScriptedChatClient.call

def search_from(server):
    """A "search" tool labelled with its source, as an MCP server's tools are."""
    def search(query: str) -> str:
        ran.append(f"{server}:{query}")
        return f"{server} found {query}"
    return FunctionTool(search, name="search", description="Search.", approval_mode="always_require",
                        additional_properties={"server_label": server})

docs_bot = Agent(ScriptedChatClient([call("search", query="a"), "docs one", call("search", query="c"), "docs two"]),
                 name="docs_bot", tools=[search_from("docs")])
mail_bot = Agent(ScriptedChatClient([call("search", query="b"), "mail one"]), name="mail_bot",
                 tools=[search_from("mail")])
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    session = KernelSession(tmp_path_factory.mktemp("approval-kernel"))
    try:
        session.run("%load_ext agentnb\n%agentnb meter on\n" + DEFINE)
        yield session
    finally:
        session.close()


def _printed(outputs: list[dict[str, object]]) -> list[str]:
    return [line for o in outputs if o.get("output_type") == "stream" for line in str(o.get("text")).splitlines()]


def test_always_allow_on_one_sources_tool_does_not_approve_anothers(kernel: KernelSession) -> None:
    kernel.run("%%agent docs_bot --session chat\nSearch the docs")
    clicked = kernel.run(
        "v = last_view(); card = v.cards[v.pending[0].id]\n"
        "print(card.always.description)\n"
        "card.always.value = True  # tick 'always allow', then Approve, as a person would\n"
        "card.approve_button.click()\nawait v.wait()\nprint(v.status, ran)"
    )
    label, approved = _printed(clicked)
    assert approved == "done ['docs:a']"
    # Another agent on the same session calls its own "search", from the mail server: it must ask.
    kernel.run("%%agent mail_bot --session chat\nSearch the mail")
    mail = kernel.run(
        "m = last_view()\nprint(m.status, [r.additional_properties['server_label'] for r in m.pending], ran)"
    )
    assert _printed(mail) == ["waiting ['mail'] ['docs:a']"]
    assert label == "Always allow search from docs"  # the card said what the rule would cover
    kernel.run("m.deny()\nawait m.wait()")
    # The docs server's search is still approved by the standing rule, without a card.
    kernel.run("%%agent docs_bot --session chat\nSearch the docs again")
    again = kernel.run("d = last_view()\nprint(d.status, d.pending, ran, chat.state['tool_approval'].rules)")
    assert _printed(again) == [
        "done [] ['docs:a', 'docs:c'] [ToolApprovalRule(tool_name='search', server_label='docs', arguments=None)]"
    ]


def test_a_response_on_an_inline_session_shows_cards_and_resumes(kernel: KernelSession) -> None:
    kernel.run(
        "inline_bot = Agent(ScriptedChatClient([call('search', query='i'), 'inline done']), name='inline_bot',\n"
        "                   tools=[search_from('web')])"
    )
    shown = kernel.run(
        "import gc\nr = await inline_bot.run('Search', session=inline_bot.create_session())\ngc.collect()\nr"
    )
    # The live view (a widget with Approve / Deny), not the static HTML of a response nobody can answer.
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in shown)  # type: ignore[operator]
    resumed = kernel.run(
        "v = last_view()\nprint(v.status, [r.function_call.name for r in v.pending])\n"
        "v.approve()\nawait v.wait()\nprint(v.status, v.text)"
    )
    assert _printed(resumed) == ["waiting ['search']", "done inline done"]
    assert "web:i" in _printed(kernel.run("print(ran)"))[0]


def test_the_meter_counts_the_calls_a_click_ran(kernel: KernelSession) -> None:
    kernel.run(
        "meter_bot = Agent(ScriptedChatClient([call('search', query='m'), 'metered']), name='meter_bot',\n"
        "                  tools=[search_from('files')])"
    )
    first = len(kernel.nb.cells)
    kernel.run("%%agent meter_bot\nSearch files")
    meter_before = [line for line in data(kernel.outputs(first), "text/plain") if "model call" in line]
    assert meter_before and meter_before[0].startswith("1 model call · 0 tool calls")
    kernel.run("v = last_view()\nv.approve()\nawait v.wait()")
    # The line under the %%agent cell now counts the continuation too: a second model call and the tool.
    meter = [line for line in data(kernel.outputs(first), "text/plain") if "model call" in line]
    assert meter and meter[0].startswith("2 model calls · 1 tool call"), meter


def test_the_stored_output_shows_the_run_settled_after_a_click(kernel: KernelSession) -> None:
    kernel.run(
        "import asyncio\nfrom agentnb.local import FunctionChatClient\n"
        "async def slow_model(messages, options):\n"
        "    if any(c.type == 'function_result' for m in messages for c in m.contents):\n"
        "        await asyncio.sleep(0.3)  # a model that takes its time: no refresh is left pending at the end\n"
        "        return 'settled'\n"
        "    return call('search', query='q')\n"
        "slow_bot = Agent(FunctionChatClient(slow_model), name='slow_bot', tools=[search_from('files')])"
    )
    first = len(kernel.nb.cells)
    kernel.run("%%agent slow_bot --no-stream\nSearch slowly")
    # A click, then nothing asks the view for its result (view.wait() would refresh the output itself).
    kernel.run("v = last_view()\nv.approve()\nawait v.controller.wait()\nawait asyncio.sleep(0)")
    outputs = kernel.outputs(first)
    views = [line for line in data(outputs, "text/plain") if "[user]" in line]
    # What a saved notebook keeps for the view is the settled run, not "waiting".
    assert views and views[-1].rstrip().splitlines()[-1].startswith("[done]"), views
    assert "settled" in text(outputs)
