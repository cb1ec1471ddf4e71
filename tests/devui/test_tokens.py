"""Token counts in the chat: per message and per session, and the context inspector, all from usage reports.

The offline tool-calling model reports usage per model call like a real one (one token per word), so every
number shown can be checked against the calls' own reports: a message's footer, the turn totals, the
prompt growth between calls and the by-role rows, which must add up to the context exactly.
"""

from __future__ import annotations

import itertools

import panel as pn
import pytest

from agentnb import Agent, tool
from agentnb.devui import Catalog
from agentnb.devui._chat import ChatView
from agentnb.devui._tokens import TokenLedger
from agentnb.local import ToolCallingChatClient
from agentnb.store import RunStore


@tool
def get_weather(city: str) -> str:
    """Today's weather for a city."""
    return f"sunny in {city}"


@tool(approval_mode="always_require")
def send_note(to: str) -> str:
    """Send a note (needs approval)."""
    return f"note sent to {to}"


def footers(message: pn.chat.ChatMessage) -> str:
    return " | ".join(str(o.object) for o in message.footer_objects)


def chat_messages(view: ChatView) -> list[pn.chat.ChatMessage]:
    assert view._current is not None
    return list(view._current.transcript.objects)


async def test_every_count_comes_from_the_model_calls_and_adds_up() -> None:
    agent = Agent(ToolCallingChatClient(), name="weather", tools=[get_weather])
    view = ChatView(Catalog().add(agent), store=RunStore(":memory:"))
    await view.send("What is the weather in Paris?")
    await view.send("And in Rome?")
    session = view._current
    assert session is not None
    calls = session.ledger.calls
    # Each turn: one call that asks for the tool, one that answers with its result.
    assert [(c.turn, c.index) for c in calls] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert [c.added_by for c in calls] == ["instructions + user", "tool", "user", "tool"]
    # Per turn, the calls add up to the turn's usage as the agent summed it.
    for turn, (inp, out, total) in enumerate(session.turn_usage, start=1):
        mine = session.ledger.turn_calls(turn)
        assert (sum(c.input for c in mine), sum(c.output for c in mine)) == (inp, out)
        assert sum(c.total for c in mine) == total
    # Prompt growth is the next input minus the previous context, exactly.
    for before, after in itertools.pairwise(calls):
        assert after.added == after.input - before.total
    assert calls[0].added == calls[0].input
    # By role, the rows add up to the context after the last call.
    roles = session.ledger.by_role()
    assert roles["assistant"] == sum(c.output for c in calls)
    assert sum(roles.values()) == session.ledger.context == calls[-1].total
    # The messages carry their own counts.
    messages = chat_messages(view)
    users = [m for m in messages if m.user == "You"]
    tools = [m for m in messages if m.user.endswith("tool call")]
    answers = [m for m in messages if m.user == "weather"]
    assert f"{calls[0].added} tokens with the instructions" in footers(users[0])
    assert f"{calls[2].added} tokens added to the context" in footers(users[1])
    assert f"{calls[0].output} tokens written (model call 1)" in footers(tools[0])
    assert f"{calls[1].output} tokens written (model call 2)" in footers(answers[0])
    assert f"{calls[3].output} tokens written (model call 2)" in footers(answers[1])
    # The session header and the context inspector show the same numbers.
    inspector = str(view.context_info.object)
    assert f"context now: <b>{calls[-1].total}</b>" in inspector
    for c in calls:
        assert f"<td>{c.input}</td><td>{c.output}</td><td>{c.added}</td><td>{c.added_by}</td>" in inspector
    assert "≈" not in inspector  # nothing estimated
    total = sum(c.total for c in calls)
    assert f"total {total}" in str(view.usage_info.object)


async def test_a_turn_resumed_by_an_approval_counts_the_tool_result_as_what_was_added() -> None:
    agent = Agent(ToolCallingChatClient(), name="notes", tools=[send_note])
    view = ChatView(Catalog().add(agent), store=RunStore(":memory:"))
    await view.send("Send a note to Ada")
    session = view._current
    assert session is not None and session.driver.pending
    (request,) = session.driver.pending
    session.driver.answer(request, True)
    await view._maybe_resume(session)
    calls = session.ledger.calls
    assert [(c.turn, c.added_by) for c in calls] == [(1, "instructions + user"), (2, "tool")]
    assert calls[1].added == calls[1].input - calls[0].total > 0


def test_the_ledger_labels_the_first_call_and_keeps_negative_growth() -> None:
    ledger = TokenLedger()
    first = ledger.record({"input_token_count": 40, "output_token_count": 10}, turn=1, opened_by="user")
    assert (first.added, first.added_by) == (40, "instructions + user")
    # A history that shrank (a compaction) shows as negative growth, not as a made-up number.
    shrunk = ledger.record({"input_token_count": 30, "output_token_count": 5}, turn=2, opened_by="user")
    assert shrunk.added == -20 and ledger.context == 35
    assert sum(ledger.by_role().values()) == 35


@pytest.mark.parametrize("usage", [{}, {"input_token_count": None, "output_token_count": None}])
def test_missing_counts_are_zero_not_errors(usage: dict[str, object]) -> None:
    call = TokenLedger().record(usage, turn=1, opened_by="user")
    assert (call.input, call.output, call.added) == (0, 0, 0)
