"""The DevUI's context panel gains a compaction view: the budget bar, left-out groups greyed in place,
summaries where they stood in, and every turn of a stored session replayable (driven through its Python API)."""

from __future__ import annotations

import json
from pathlib import Path

from agentnb import Agent, AgentSession, FileHistoryProvider, Message
from agentnb.compaction import (
    ContextWindowCompactionStrategy,
    SlidingWindowStrategy,
    compaction_view_html,
    session_compaction_log,
)
from agentnb.devui import Catalog
from agentnb.devui._chat import ChatView
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore


def answer(messages: list[Message], options: dict[str, object]) -> str:
    return f"answer <b>{len(messages)}</b>"


async def test_the_context_panel_shows_the_compaction_view_and_a_stored_session_replays() -> None:
    store = RunStore(":memory:")
    strategy = ContextWindowCompactionStrategy(max_context_window_tokens=700, max_output_tokens=100)
    agent = Agent(FunctionChatClient(answer), name="c", compaction_strategy=strategy)
    view = ChatView(Catalog().add(agent), store=store)
    for i in range(8):
        await view.send(f"question {i} <script>x</script> " + "words " * 30)
    panel_html = str(view.context_info.object)
    assert "Compaction (" in panel_html and "anb-budget-bar" in panel_html
    assert "anb-cmp-excluded" in panel_html and "(token_budget_fallback)" in panel_html
    assert "<script>x" not in panel_html and "&lt;script&gt;" in panel_html
    assert panel_html.count("turn ") >= 8  # each turn can be expanded and replayed
    # A stored session (saved to JSON and loaded again) replays the same views.
    assert view._current is not None
    session = AgentSession.from_dict(json.loads(json.dumps(view._current.session.to_dict())))
    log = session_compaction_log(session)
    assert len(log) == 8 and any(r.compacted for r in log)
    replay = compaction_view_html(session.messages[: log[-1].messages_total], log[-1])
    assert replay.count("anb-cmp-excluded") == log[-1].groups_excluded


async def test_a_summary_shows_in_place_of_what_it_replaced() -> None:
    from agentnb import Content
    from agentnb.compaction import CompactionReport, ToolResultCompactionStrategy, apply_compaction

    messages = [
        Message("user", ["look it up"]),
        Message("assistant", [Content.from_function_call("c1", "lookup", arguments="{}")]),
        Message("tool", [Content.from_function_result("c1", result="42")]),
        Message("assistant", ["It is 42."]),
    ]
    await apply_compaction(messages, strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=0))
    report = CompactionReport.from_messages(messages, strategy="tool results")
    originals = [m for m in messages if not (m.message_id or "").startswith("tool_summary")]
    html = compaction_view_html(originals, report)
    summary_at = html.index("anb-cmp-summary")
    assert html.index("look it up") < summary_at < html.index("(tool_result_compaction)")
    assert "[Tool results: lookup: 42]" in html


def test_no_view_without_compaction() -> None:
    agent = Agent(
        FunctionChatClient(answer), name="plain", compaction_strategy=SlidingWindowStrategy(keep_last_groups=3)
    )
    view = ChatView(Catalog().add(agent), store=RunStore(":memory:"))
    assert "Compaction (" not in str(view.context_info.object)


async def test_a_session_kept_in_a_file_shows_its_messages_in_the_compaction_view(tmp_path: Path) -> None:
    """The history lives in a FileHistoryProvider, not in the session's state: the panel reads the file."""
    history = FileHistoryProvider(tmp_path / "history")
    store = RunStore(":memory:")
    agent = Agent(
        FunctionChatClient(answer),
        name="f",
        context_providers=[history],
        compaction_strategy=SlidingWindowStrategy(keep_last_groups=3),
    )
    view = ChatView(Catalog().add(agent), store=store)
    for i in range(5):
        await view.send(f"question {i} <i>x</i>")
    assert view._current is not None
    assert view._current.session.messages == []  # nothing in the state: the file holds the history
    panel_html = str(view.context_info.object)
    newest = panel_html.split("<details")[1]  # the newest turn's view (open)
    # Message lines, the old ones greyed with their reason, the window's kept, all escaped.
    assert newest.count("anb-cmp-excluded") == 6 and "(sliding_window)" in newest
    assert newest.count("anb-cmp-kept") == 3
    assert "question 0 &lt;i&gt;x" in newest and "<i>x" not in panel_html
    assert "History by role" in panel_html and "<i>empty</i>" not in panel_html.split("History by role")[1][:200]

    # Resumed from the run store, the session shows its transcript and the same view.
    session_id = view._current.session.session_id
    again = ChatView(Catalog().add(agent), store=store)
    await again.resume(session_id)
    resumed_html = str(again.context_info.object)
    assert resumed_html.split("<details")[1].count("anb-cmp-excluded") == 6
    assert again._current is not None and len(again._current.transcript.objects) >= 10
