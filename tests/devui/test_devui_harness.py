"""The DevUI's harness panel: beside the chat for a harness agent, live during a turn, back with a stored session."""

from __future__ import annotations

import pytest

from agentnb import Agent
from agentnb.devui import Catalog
from agentnb.devui._chat import ChatView
from agentnb.harness import InMemoryAgentFileStore, create_harness_agent
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore

call = ScriptedChatClient.call
EVIL = "<script>alert(1)</script>"


@pytest.fixture
def store() -> RunStore:
    return RunStore(":memory:")


def _side_classes(view: ChatView) -> list[str]:
    import panel as pn

    return [c for card in view.panel().select(pn.Card) for c in card.css_classes]


async def test_a_harness_agent_gets_the_panel_and_a_plain_agent_does_not(store: RunStore) -> None:
    memory = InMemoryAgentFileStore()
    client = ScriptedChatClient(
        [
            [call("todos_add", todos=[{"title": f"Read {EVIL}"}, {"title": "Summarize"}])],
            [
                call("todos_complete", items=[{"id": 1, "reason": "read"}]),
                call("file_memory_write", file_name="notes.md", content="found 3", description="Findings"),
            ],
            "Halfway there.",
        ]
    )
    agent = create_harness_agent(client, name="worker", file_memory_store=memory)
    view = ChatView(Catalog().add(agent), store=store)
    assert view.is_harness and "anb-side-harness" in _side_classes(view)
    await view.send("Research this")
    panel = str(view.harness_info.object)
    assert "1/2 done" in panel and "notes.md" in panel and "Findings" in panel and "found 3" in panel
    assert EVIL not in panel and "&lt;script&gt;" in panel

    # A stored harness session reopens with its todos and memories.
    assert view._current is not None
    session_id = view._current.session.session_id
    reopened = ChatView(Catalog().add(agent), store=store)
    await reopened.resume(session_id)
    again = str(reopened.harness_info.object)
    assert "1/2 done" in again and "notes.md" in again and "Read &lt;script&gt;" in again

    plain = ChatView(Catalog().add(Agent(ScriptedChatClient([]), name="plain")), store=store)
    assert not plain.is_harness and "anb-side-harness" not in _side_classes(plain)


async def test_background_tasks_of_a_stored_session_come_back_as_lost_or_finished(store: RunStore) -> None:
    import warnings

    from agentnb.harness import ExperimentalWarning

    helper = Agent(ScriptedChatClient(["helper result"]), name="helper")
    client = ScriptedChatClient(
        [
            call("background_agents_start_task", agent_name="helper", input="go", description="Side job"),
            call("background_agents_wait_for_first_completion", task_ids=[1]),
            "Done.",
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        agent = create_harness_agent(client, name="boss", disable_file_memory=True, background_agents=[helper])
    view = ChatView(Catalog().add(agent), store=store)
    await view.send("Delegate")
    assert "completed" in str(view.harness_info.object) and "helper result" in str(view.harness_info.object)
    assert view._current is not None
    reopened = ChatView(Catalog().add(agent), store=store)
    await reopened.resume(view._current.session.session_id)
    assert "Side job" in str(reopened.harness_info.object) and "completed" in str(reopened.harness_info.object)
