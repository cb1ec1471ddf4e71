"""Compaction in the notebook: responses and sessions show what was sent and left out; the meter counts it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb import Agent, AgentSession
from agentnb.compaction import CompactionReport, SlidingWindowStrategy, compaction_reports, session_compaction_log
from agentnb.local import ScriptedChatClient
from agentnb.notebook import to_html
from tests.notebook.kernel_harness import KernelSession, text


async def compacted_session() -> tuple[Agent, AgentSession, object]:
    agent = Agent(
        ScriptedChatClient([f"answer {i}" for i in range(4)]),
        compaction_strategy=SlidingWindowStrategy(keep_last_groups=2),
    )
    session = agent.create_session()
    response = None
    for question in ["first", "second <script>alert(1)</script>", "third", "fourth"]:
        response = await agent.run(question, session=session)
    return agent, session, response


async def test_a_response_shows_each_calls_budget_and_excluded_groups_escaped() -> None:
    _, _, response = await compacted_session()
    html = to_html(response)
    assert html is not None
    assert "compaction" in html and "SlidingWindowStrategy" in html
    assert "sliding_window" in html and "Excluded groups" in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    report = compaction_reports(response)[-1]
    assert report.summary_line() in html.replace("&#x27;", "'")


async def test_a_session_shows_its_compaction_turn_by_turn() -> None:
    _, session, _ = await compacted_session()
    log = session_compaction_log(session)
    assert [r.messages_sent for r in log] == [1, 2, 2, 2]
    assert [r.groups_excluded for r in log] == [0, 1, 3, 5]
    html = to_html(session)
    assert html is not None
    assert "Compaction</b> (3 of 4 turn(s) compacted)" in html
    assert "turn 4:" in html
    # The log survives saving and loading the session.
    restored = AgentSession.from_dict(session.to_dict())
    assert [r.to_dict() for r in session_compaction_log(restored)] == [r.to_dict() for r in log]


def test_a_report_round_trips_and_lists_only_the_newest_groups() -> None:
    from agentnb import Message
    from agentnb.compaction import annotate_message_groups, set_excluded

    messages = [Message("user", [f"m{i}"]) for i in range(80)]
    annotate_message_groups(messages)
    for message in messages[:70]:
        set_excluded(message, excluded=True, reason="test")
    report = CompactionReport.from_messages(messages, strategy="test", budget=100)
    assert report.groups_excluded == 70 and len(report.excluded_groups) == 50
    assert report.excluded_groups[-1]["preview"] == "m69"
    assert "and 20 older group(s) left out" in report._repr_html_()
    assert CompactionReport.from_dict(report.to_dict()).to_dict() == report.to_dict()


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    home: Path = tmp_path_factory.mktemp("compaction-home")
    session = KernelSession(tmp_path_factory.mktemp("compaction"))
    try:
        session.run(f"import os\nos.environ['AGENTNB_HOME'] = {str(home)!r}")
        session.run(
            "%load_ext agentnb\n"
            "from agentnb import Agent\n"
            "from agentnb.compaction import SlidingWindowStrategy\n"
            "from agentnb.local import ScriptedChatClient\n"
            "window = SlidingWindowStrategy(keep_last_groups=1)\n"
            "agent = Agent(ScriptedChatClient(['a'] * 10), compaction_strategy=window)\n"
            "s = agent.create_session()"
        )
        yield session
    finally:
        session.close()


@pytest.mark.kernel
def test_the_meter_counts_compacted_model_calls(kernel: KernelSession) -> None:
    kernel.run("r = await agent.run('one', session=s)")
    last = "from agentnb.notebook._extension import cell_tracker\nprint(cell_tracker().meter.last)"
    assert "compacted" not in text(kernel.run(last))  # nothing to leave out on the first turn
    kernel.run("r = await agent.run('two', session=s)\nr = await agent.run('three', session=s)")
    assert text(kernel.run(last)).startswith("2 model calls · 0 tool calls · 2 compacted · ")
