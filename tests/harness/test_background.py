"""Background agents: started, awaited, listed, continued, cancelled; failures are failed tasks, never hangs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentnb import Agent, AgentSession, Message
from agentnb.harness import BackgroundAgentsProvider, BackgroundTaskInfo, BackgroundTaskStatus
from agentnb.local import FunctionChatClient, ScriptedChatClient

call = ScriptedChatClient.call


def _helper(name: str, replies: list[Any]) -> Agent[Any]:
    return Agent(ScriptedChatClient(replies), name=name, description=f"The {name}.")


async def test_a_model_starts_waits_for_and_reads_a_task() -> None:
    provider = BackgroundAgentsProvider([_helper("researcher", ["Three sources."])])
    parent = ScriptedChatClient(
        [
            [
                call("background_agents_start_task", agent_name="Researcher", input="find", description="Find sources"),
            ],
            call("background_agents_wait_for_first_completion", task_ids=[1]),
            call("background_agents_get_task_results", task_id=1),
            "The researcher found three sources.",
        ]
    )
    agent = Agent(parent, context_providers=[provider])
    session = agent.create_session()
    response = await agent.run("Research this.", session=session)
    results = [c.result for m in response.messages for c in m.contents if c.type == "function_result"]
    assert results == [
        "Background task 1 started on agent 'researcher'.",
        "Task 1 finished with status: completed.",
        "Three sources.",
    ]
    assert provider.get_tasks(session) == [
        BackgroundTaskInfo(1, "researcher", "Find sources", BackgroundTaskStatus.COMPLETED, "Three sources.")
    ]


async def test_a_crashing_agent_is_a_failed_task_with_its_error() -> None:
    def boom(messages: list[Message], options: dict[str, Any]) -> str:
        raise RuntimeError("disk on fire")

    crasher = Agent(FunctionChatClient(boom), name="crasher")
    provider = BackgroundAgentsProvider([crasher])
    session = AgentSession()
    info = provider.start_task(session, "crasher", "go", "Will crash")
    finished = await asyncio.wait_for(provider.wait(session, [info.id]), timeout=10)
    assert finished is not None and finished.status is BackgroundTaskStatus.FAILED
    assert finished.error_text is not None and "disk on fire" in finished.error_text
    results = {t.name: t for t in provider.tools(session)}
    assert "Task failed" in await results["background_agents_get_task_results"].invoke_raw(arguments={"task_id": 1})


async def test_cancel_and_state_that_survives_a_save_and_load() -> None:
    release = asyncio.Event()

    async def slow(messages: list[Message], options: dict[str, Any]) -> str:
        await release.wait()
        return "late"

    slow_agent = Agent(FunctionChatClient(slow), name="slow")
    quick = _helper("quick", ["quick answer", "second answer"])
    provider = BackgroundAgentsProvider([slow_agent, quick])
    session = AgentSession()
    provider.start_task(session, "slow", "wait", "Slow job")
    provider.start_task(session, "quick", "go", "Quick job")
    done = await provider.wait(session, [2])
    assert done is not None and done.status is BackgroundTaskStatus.COMPLETED
    assert [t.status for t in provider.get_tasks(session)] == [
        BackgroundTaskStatus.RUNNING,
        BackgroundTaskStatus.COMPLETED,
    ]

    saved = session.to_dict()
    # In another process the running task has no runner any more: it is lost, the finished one keeps its result.
    elsewhere = BackgroundAgentsProvider([slow_agent, _helper("quick", ["continued elsewhere"])])
    reloaded = AgentSession.from_dict(saved)
    tasks = elsewhere.get_tasks(reloaded)
    assert [(t.status, t.result_text) for t in tasks] == [
        (BackgroundTaskStatus.LOST, None),
        (BackgroundTaskStatus.COMPLETED, "quick answer"),
    ]
    tools = {t.name: t for t in elsewhere.tools(reloaded)}
    assert "continued" in await tools["background_agents_continue_task"].invoke_raw(
        arguments={"task_id": 2, "text": "more"}
    )
    again = await elsewhere.wait(reloaded, [2])
    assert again is not None and again.result_text == "continued elsewhere"
    assert "lost" in await tools["background_agents_continue_task"].invoke_raw(arguments={"task_id": 1, "text": "x"})

    assert await provider.cancel_task(session, 1) is True
    cancelled = provider.get_tasks(session)[0]
    assert cancelled.status is BackgroundTaskStatus.FAILED and cancelled.error_text == "Task was cancelled."
    assert await provider.cancel_task(session, 1) is False


async def test_tools_report_unknown_agents_running_tasks_and_clearing() -> None:
    provider = BackgroundAgentsProvider([_helper("a", ["done"])])
    session = AgentSession()
    tools = {t.name: t for t in provider.tools(session)}
    assert "No background agent" in await tools["background_agents_start_task"].invoke_raw(
        arguments={"agent_name": "zed", "input": "x", "description": "y"}
    )
    await tools["background_agents_start_task"].invoke_raw(
        arguments={"agent_name": "a", "input": "x", "description": "y"}
    )
    assert "[running]" in await tools["background_agents_get_all_tasks"].invoke_raw(arguments={})
    assert "still running" in await tools["background_agents_clear_completed_task"].invoke_raw(arguments={"task_id": 1})
    await provider.wait(session)
    assert "cleared" in await tools["background_agents_clear_completed_task"].invoke_raw(arguments={"task_id": 1})
    assert await tools["background_agents_get_all_tasks"].invoke_raw(arguments={}) == "No tasks."


def test_agents_need_unique_names() -> None:
    with pytest.raises(ValueError, match="At least one"):
        BackgroundAgentsProvider([])
    with pytest.raises(ValueError, match="Duplicate"):
        BackgroundAgentsProvider([_helper("a", []), _helper("A", [])])
    with pytest.raises(ValueError, match="non-empty name"):
        BackgroundAgentsProvider([Agent(ScriptedChatClient([]))])
