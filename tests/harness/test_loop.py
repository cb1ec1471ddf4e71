"""The agent loop: predicate and judge loops, the iteration cap, approval escape, progress, streaming."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, AgentResponse, tool
from agentnb.harness import (
    LOOP_STATE_KEY,
    AgentLoopMiddleware,
    JudgeVerdict,
    TodoProvider,
    request_loop_stop,
    todos_remaining,
    todos_remaining_message,
)
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call


def _until(marker: str) -> Any:
    return lambda *, last_result, **_: marker not in last_result.text


async def test_loops_until_the_predicate_stops_it_and_aggregates_the_transcript() -> None:
    client = ScriptedChatClient(["draft", "better", "DONE"])
    agent = Agent(client, middleware=[AgentLoopMiddleware(_until("DONE"))])
    response = await agent.run("Write it.")
    assert [m.text for m in response.messages] == [
        "draft",
        "Progress so far:\n- draft",
        "Continue working on the task. If it is complete, say so.",
        "better",
        "Progress so far:\n- draft\n- better",
        "Continue working on the task. If it is complete, say so.",
        "DONE",
    ]
    client.assert_all_used()


@pytest.mark.parametrize("cap", [1, 2, 3])
async def test_never_passes_max_iterations(cap: int) -> None:
    client = ScriptedChatClient(["again"] * 5)
    agent = Agent(
        client, middleware=[AgentLoopMiddleware(lambda **_: True, max_iterations=cap, return_final_only=True)]
    )
    session = agent.create_session()
    response = await agent.run("Go", session=session)
    assert len(client.calls) == cap and response.text == "again"
    assert session.state[LOOP_STATE_KEY] == {
        "iteration": cap,
        "max_iterations": cap,
        "running": False,
        "stop_requested": False,
    }


async def test_stops_at_once_when_an_iteration_waits_for_approval() -> None:
    @tool(approval_mode="always_require")
    def deploy() -> str:
        """Deploy."""
        return "deployed"

    client = ScriptedChatClient(["planning", call("deploy")])
    asked: list[int] = []

    def keep_going(*, iteration: int, **_: Any) -> bool:
        asked.append(iteration)
        return True

    agent = Agent(client, tools=[deploy], middleware=[AgentLoopMiddleware(keep_going)])
    session = agent.create_session()
    response = await agent.run("Ship it", session=session)
    assert [r.function_call.name for r in response.user_input_requests] == ["deploy"]
    assert asked == [1]  # the predicate never saw the iteration that asked
    client.assert_all_used()


async def test_feedback_next_message_and_record_feedback_get_the_loop_keywords() -> None:
    client = ScriptedChatClient(["v1", "v2"])
    seen: list[dict[str, Any]] = []

    def should_continue(*, iteration: int, **_: Any) -> tuple[bool, str]:
        return iteration < 2, f"fix #{iteration}"

    def next_message(*, feedback: str, progress: list[str], **_: Any) -> str:
        seen.append({"feedback": feedback, "progress": progress})
        return f"Please {feedback}"

    loop = AgentLoopMiddleware(
        should_continue,
        next_message=next_message,
        record_feedback=lambda *, last_result, **_: f"tried {last_result.text}",
        inject_progress=False,
    )
    agent = Agent(client, middleware=[loop])
    response = await agent.run("Task")
    assert seen == [{"feedback": "fix #1", "progress": ["tried v1"]}]
    assert client.calls[1][-1].text == "Please fix #1"
    assert [m.text for m in response.messages] == ["v1", "Please fix #1", "v2"]


async def test_fresh_context_restarts_from_the_task_and_the_session_baseline() -> None:
    client = ScriptedChatClient(["one", "two"])
    agent = Agent(client, middleware=[AgentLoopMiddleware(lambda *, iteration, **_: iteration < 2, fresh_context=True)])
    session = agent.create_session()
    await agent.run("Task", session=session)
    second = [m.text for m in client.calls[1]]
    assert second == ["Task", "Progress so far:\n- one", "Continue working on the task. If it is complete, say so."]


async def test_a_stop_request_ends_the_loop_after_the_current_iteration() -> None:
    client = ScriptedChatClient(["one", "two", "three"])

    def should_continue(*, session: Any, iteration: int, **_: Any) -> bool:
        if iteration == 1:
            request_loop_stop(session)  # as the notebook's Stop does while the loop runs
        return True

    agent = Agent(client, middleware=[AgentLoopMiddleware(should_continue)])
    session = agent.create_session()
    await agent.run("Go", session=session)
    assert len(client.calls) == 2  # asked during iteration 1's check: iteration 2 ran, then the loop stopped


async def test_streaming_yields_every_iteration_and_the_nudges() -> None:
    client = ScriptedChatClient(["a", "DONE"])
    agent = Agent(client, middleware=[AgentLoopMiddleware(_until("DONE"), inject_progress=False)])
    stream = agent.run("Go", stream=True)
    texts = [u.text async for u in stream if u.text]
    assert texts == ["a", "Continue working on the task. If it is complete, say so.", "DONE"]
    assert (await stream.get_final_response()).text == "DONE"


async def test_judge_loop_relays_reasoning_until_answered() -> None:
    judge = ScriptedChatClient(
        [
            JudgeVerdict(answered=False, reasoning="Missing the total."),
            JudgeVerdict(answered=True, reasoning="Complete."),
        ]
    )
    client = ScriptedChatClient(["Sales rose.", "Sales rose to 10."])
    loop = AgentLoopMiddleware.with_judge(judge, criteria=["Give the total"])
    agent = Agent(client, middleware=[loop])
    response = await agent.run("Summarize sales.")
    assert response.messages[-1].text == "Sales rose to 10."
    assert "Evaluator feedback: Missing the total." in client.calls[1][-1].text
    assert "Give the total" in client.calls[0][0].text  # the criteria reach the agent as a system message
    assert "Give the total" in judge.calls[0][0].text
    judge.assert_all_used()


async def test_judge_text_fallback_prefers_more_work() -> None:
    judge = ScriptedChatClient(["VERDICT: DONE or VERDICT: MORE", "VERDICT: DONE"])
    agent = Agent(ScriptedChatClient(["x", "y"]), middleware=[AgentLoopMiddleware.with_judge(judge)])
    await agent.run("Task")
    judge.assert_all_used()


async def test_todos_remaining_loops_until_the_list_is_done() -> None:
    todos = TodoProvider()
    client = ScriptedChatClient(
        [
            call("todos_add", todos=[{"title": "a"}, {"title": "b"}]),
            "added",
            call("todos_complete", items=[{"id": 1, "reason": "ok"}, {"id": 2, "reason": "ok"}]),
            "all done",
        ]
    )
    loop = AgentLoopMiddleware(todos_remaining(), next_message=todos_remaining_message, max_iterations=5)
    agent = Agent(client, context_providers=[todos], middleware=[loop])
    session = agent.create_session()
    response = await agent.run("Do a and b", session=session)
    assert "You still have 2 open todo item(s)" in client.calls[2][-1].text
    assert response.text.endswith("all done")
    assert session.state[LOOP_STATE_KEY]["iteration"] == 2


async def test_todos_remaining_respects_looping_modes() -> None:
    from agentnb import AgentSession
    from agentnb.harness import AgentModeProvider, set_agent_mode

    todos, modes = TodoProvider(), AgentModeProvider()
    agent = Agent(ScriptedChatClient([]), context_providers=[todos, modes])
    session = AgentSession()
    await todos.add_items(session, ["open"])
    predicate = todos_remaining(looping_modes=["execute"])
    assert await predicate(session=session, agent=agent) is False  # plan mode: stay interactive
    set_agent_mode(session, "execute")
    assert await predicate(session=session, agent=agent) is True
    with pytest.raises(ValueError, match="non-empty"):
        todos_remaining(looping_modes=[])


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        AgentLoopMiddleware(lambda **_: True, max_iterations=0)
    with pytest.raises(TypeError, match="callable"):
        AgentLoopMiddleware("yes")  # type: ignore[arg-type]


async def test_return_final_only_returns_the_last_iteration() -> None:
    agent = Agent(
        ScriptedChatClient(["one", "two"]),
        middleware=[AgentLoopMiddleware(lambda *, iteration, **_: iteration < 2, return_final_only=True)],
    )
    response = await agent.run("Go")
    assert isinstance(response, AgentResponse) and [m.text for m in response.messages] == ["two"]


async def test_streaming_also_stops_at_once_when_an_iteration_waits_for_approval() -> None:
    @tool(approval_mode="always_require")
    def deploy() -> str:
        """Deploy."""
        return "deployed"

    client = ScriptedChatClient([call("deploy")])
    asked: list[int] = []
    loop = AgentLoopMiddleware(lambda **_: asked.append(1) or True, max_iterations=5)
    agent = Agent(client, tools=[deploy], middleware=[loop])
    session = agent.create_session()
    stream = agent.run("Ship it", session=session, stream=True)
    updates = [u async for u in stream]
    final = await stream.get_final_response()
    assert [r.function_call.name for r in final.user_input_requests] == ["deploy"]
    assert asked == [] and not any(u.role == "user" for u in updates)  # no nudge, no second iteration
    assert session.state[LOOP_STATE_KEY]["running"] is False
