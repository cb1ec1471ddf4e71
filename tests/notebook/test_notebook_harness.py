"""The harness view: todos tick off, mode, loop, background tasks and memory files, escaped, updating live."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import ipywidgets.widgets.widget as widget_module
import pytest

from agentnb import Agent, AgentSession, tool
from agentnb.harness import (
    ExperimentalWarning,
    InMemoryAgentFileStore,
    create_harness_agent,
    harness_snapshot,
    todos_remaining,
    todos_remaining_message,
)
from agentnb.harness import _agent as harness_agent
from agentnb.local import ScriptedChatClient
from agentnb.notebook import HarnessView

call = ScriptedChatClient.call
EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_agent, "_warned", set())  # each test sees its own once-per-process warning


@pytest.fixture
def no_leaks() -> Iterator[None]:
    before = set(widget_module._instances)
    yield
    leaked = [widget_module._instances[k] for k in set(widget_module._instances) - before]
    assert leaked == [], f"{len(leaked)} widget(s) left open"


def _others() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]


async def test_the_panel_follows_the_run_and_escapes_model_text(no_leaks: None) -> None:
    seen: list[str] = []
    view_holder: dict[str, HarnessView] = {}

    @tool
    async def check_progress() -> str:
        """Let the test look at the panel mid-run."""
        await view_holder["view"].refresh()
        seen.append(view_holder["view"].panel.value)
        return "ok"

    client = ScriptedChatClient(
        [
            call("todos_add", todos=[{"title": f"Load {EVIL}"}, {"title": "Chart"}]),
            [call("todos_complete", items=[{"id": 1, "reason": "done"}]), call("check_progress")],
            call("file_memory_write", file_name="notes.md", content=f"secret {EVIL}", description=EVIL),
            call("todos_complete", items=[{"id": 2, "reason": "done"}]),
            "Finished.",
        ]
    )
    with pytest.warns(ExperimentalWarning):
        agent = create_harness_agent(
            client,
            tools=[check_progress],
            file_memory_store=InMemoryAgentFileStore(),
            loop_should_continue=todos_remaining(),
            loop_next_message=todos_remaining_message,
        )
    view = HarnessView(agent)
    view_holder["view"] = view
    view.run("Load and chart", display=False)
    await view.wait()
    assert view.text.endswith("Finished.")
    assert "1/2 done" in seen[0] and "☑" in seen[0] and "☐" in seen[0]
    final = view.panel.value
    assert "2/2 done" in final and "plan" in final and "notes.md" in final
    assert "iteration 1 of 10" in final
    assert EVIL not in final and "&lt;img src=x onerror=alert(1)&gt;" in final
    assert "secret &lt;img" in final  # the memory file's content, read on click
    assert EVIL not in view.to_html() and "2/2 done" in view.to_html()
    view.close()
    assert _others() == []


async def test_stop_ends_the_loop_and_the_turn(no_leaks: None) -> None:
    release = asyncio.Event()

    @tool
    async def long_step() -> str:
        """A step that waits."""
        await release.wait()
        return "done"

    client = ScriptedChatClient([call("long_step")] + ["more"] * 5)
    with pytest.warns(ExperimentalWarning):
        agent = create_harness_agent(
            client,
            tools=[long_step],
            disable_file_memory=True,
            loop_should_continue=lambda **_: True,
        )
    session = AgentSession()
    view = HarnessView(agent, session=session)
    view.run("Go", display=False)
    while not client.calls:
        await asyncio.sleep(0)
    view.stop()
    await view.wait()
    assert view.status == "stopped"
    assert session.state["agent_loop"]["running"] is False
    assert session.state["agent_loop"]["stop_requested"] is True
    view.close()
    assert _others() == []


async def test_background_tasks_show_with_their_status() -> None:
    helper = Agent(ScriptedChatClient(["found it"]), name="researcher")
    with pytest.warns(ExperimentalWarning):
        agent = create_harness_agent(ScriptedChatClient([]), disable_file_memory=True, background_agents=[helper])
    provider = agent.context_providers[-1]
    session = AgentSession()
    provider.start_task(session, "researcher", "look", f"Find {EVIL}")  # type: ignore[attr-defined]
    running = await harness_snapshot(agent, session)
    assert "running" in running.to_html() and EVIL not in running.to_html()
    await provider.wait(session)  # type: ignore[attr-defined]
    done = (await harness_snapshot(agent, session)).to_html()
    assert "completed" in done and "found it" in done


def test_snapshot_to_dict_is_json(tmp_path: Any) -> None:
    import json

    from agentnb.harness import HarnessSnapshot, TodoItem

    snap = HarnessSnapshot("s1", todos=[TodoItem(1, "a")], mode="plan")
    assert json.loads(json.dumps(snap.to_dict()))["todos"][0]["title"] == "a"


def test_an_agent_cell_gets_the_harness_view_for_a_harness_agent_only(no_leaks: None) -> None:
    from agentnb.notebook import AgentView
    from agentnb.notebook._magics import _prepare

    class Shell:
        def __init__(self) -> None:
            self.user_ns: dict[str, Any] = {
                "worker": create_harness_agent(ScriptedChatClient([]), file_memory_store=InMemoryAgentFileStore()),
                "plain": Agent(ScriptedChatClient([])),
            }

    shell = Shell()
    harness_view, prompt, _ = _prepare(shell, "worker", "Plan my week")
    plain_view, _, _ = _prepare(shell, "plain", "Hi")
    assert isinstance(harness_view, HarnessView) and prompt == "Plan my week"
    assert type(plain_view) is AgentView
    harness_view.close()
    plain_view.close()
