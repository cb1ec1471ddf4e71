"""AgentRun: streaming turns, approvals as data on the session, policies, Stop and failures."""

from __future__ import annotations

import asyncio

import pytest

from agentnb import Agent, AgentSession, Message, ToolApprovalRule
from agentnb.exceptions import ApprovalError
from agentnb.local import FunctionChatClient, ScriptedChatClient, ToolCallingChatClient
from agentnb.notebook import ALWAYS_ALLOW_KEY, AUTO_APPROVE_ENV, AgentRun
from tests.notebook.nb_helpers import delete_file, get_weather, ops_agent, slow_agent


def _types(messages: list[Message]) -> list[tuple[str, list[str]]]:
    return [(m.role, [c.type for c in m.contents]) for m in messages]


async def test_streams_a_turn_and_reports_each_change() -> None:
    seen: list[str] = []
    run = AgentRun(Agent(ScriptedChatClient(["Hello there, friend"])), on_change=lambda r: seen.append(r.status))
    response = await run.run("Hi")
    assert response.text == "Hello there, friend"
    assert run.status == "done" and run.error is None
    assert seen.count("running") >= 3  # one change per streamed token (at least)
    assert _types(run.messages) == [("user", ["text"]), ("assistant", ["text"])]
    assert run.live_updates == []


async def test_approval_waits_then_resumes_on_the_same_session() -> None:
    run = AgentRun(ops_agent())
    await run.run("Delete Notes")
    assert run.status == "waiting"
    [request] = run.pending
    assert request.function_call.name == "delete_file"
    run.answer(request, True, reason="fine")
    response = await run.wait()
    assert run.status == "done" and run.pending == []
    assert "deleted Notes" in response.text
    # The answer went through the session as a function_approval_response: the one approval mechanism.
    history = run.session.messages
    answers = [c for m in history for c in m.contents if c.type == "function_approval_response"]
    assert len(answers) == 1 and answers[0].approved and answers[0].reason == "fine"


async def test_denied_call_never_runs() -> None:
    calls: list[str] = []

    from agentnb import tool

    @tool(approval_mode="always_require")
    def launch(target: str) -> str:
        """Launch."""
        calls.append(target)
        return "launched"

    run = AgentRun(Agent(ToolCallingChatClient(), tools=[launch]))
    await run.run("Launch Mars")
    run.answer(run.pending[0].id, False, reason="no")
    response = await run.wait()
    assert calls == []
    assert "rejected by user" in response.text


async def test_answer_to_unknown_request_is_a_typed_error() -> None:
    run = AgentRun(ops_agent())
    await run.run("Delete Notes")
    with pytest.raises(ApprovalError, match="No pending approval request 'nope'"):
        run.answer("nope", True)
    assert run.status == "waiting" and len(run.pending) == 1  # nothing lost


@pytest.mark.parametrize(
    ("policy", "expected"),
    [(True, "deleted Notes"), (False, "rejected by user"), (["delete_file"], "deleted Notes")],
)
async def test_policies_answer_without_a_person(policy: object, expected: str) -> None:
    run = AgentRun(ops_agent(), auto_approve=policy)  # type: ignore[arg-type]
    response = await run.run("Delete Notes")
    assert run.status == "done"
    assert expected in response.text


async def test_policy_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(AUTO_APPROVE_ENV, "all")
    run = AgentRun(ops_agent())
    assert "deleted Notes" in (await run.run("Delete Notes")).text
    monkeypatch.setenv(AUTO_APPROVE_ENV, "get_weather")
    run = AgentRun(ops_agent())
    await run.run("Delete Notes")
    assert run.status == "waiting"  # delete_file is not in the list: a person decides


async def test_auto_approve_values_are_one_policy() -> None:
    # A callable decides (None asks), a bare string is refused: the notebook's values read as ApprovalPolicy.
    run = AgentRun(ops_agent(), auto_approve=lambda r: r.function_call.name == "delete_file")
    await run.run("Delete Notes")
    assert run.status == "done" and "deleted Notes" in run.response.text
    for value, error in (("delete_file", "collection of tool names"), (lambda r: "yes", "True, False or None")):
        failing = AgentRun(ops_agent(), auto_approve=value)  # type: ignore[arg-type]
        await failing.run("Delete Notes")
        assert failing.status == "error" and error in str(failing.error)


async def test_always_allow_is_remembered_in_the_session() -> None:
    agent = ops_agent()
    run = AgentRun(agent)
    await run.run("Delete Notes")
    run.answer(run.pending[0], True, always=True)
    await run.wait()
    assert run.always_allowed == ["delete_file"]
    assert run.session.state[ALWAYS_ALLOW_KEY].rules == [ToolApprovalRule("delete_file")]
    # The session survives a save/restore; the next request for that tool is approved without asking.
    restored = AgentSession.from_dict(run.session.to_dict())
    again = AgentRun(agent, session=restored)
    await again.run("Delete Drafts")
    assert again.status == "done" and "deleted Drafts" in again.response.text


async def test_stop_cancels_cleanly_and_keeps_the_partial_reply() -> None:
    run = AgentRun(slow_agent())
    task = run.start("go")
    while len(run.live_updates) < 3:
        await asyncio.sleep(0.01)
    run.stop()
    await run.wait()
    assert task.done() and not task.cancelled()  # the task ended on its own terms
    assert run.status == "stopped"
    partial = run.messages[-1]
    assert partial.role == "assistant" and partial.text.startswith("tok0 tok1 tok2")
    assert "tok199" not in partial.text
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


async def test_model_failure_is_reported_not_raised() -> None:
    def broken(messages: list[Message], options: dict) -> str:
        raise RuntimeError("model exploded")

    run = AgentRun(Agent(FunctionChatClient(broken)))
    assert await run.run("hi") is None
    assert run.status == "error" and "model exploded" in str(run.error)


async def test_second_start_while_running_is_refused() -> None:
    run = AgentRun(slow_agent(chunks=20))
    run.start("a")
    with pytest.raises(RuntimeError, match="already running"):
        run.start("b")
    run.stop()
    await run.wait()


def test_start_without_a_loop_explains_itself() -> None:
    run = AgentRun(Agent(ScriptedChatClient(["x"])))
    with pytest.raises(RuntimeError, match="needs a running event loop"):
        run.start("hi")


async def test_non_streaming_mode_uses_the_plain_run() -> None:
    run = AgentRun(Agent(ToolCallingChatClient(), tools=[get_weather]), stream=False)
    response = await run.run("Weather in Oslo")
    assert run.status == "done" and "Sunny in Oslo." in response.text
    assert delete_file.name == "delete_file"


@pytest.mark.parametrize(("method", "expected"), [("approve_all", "deleted Notes"), ("deny_all", "rejected by user")])
async def test_answer_every_pending_request_at_once(method: str, expected: str) -> None:
    run = AgentRun(ops_agent())
    await run.run("Delete Notes")
    getattr(run, method)(reason="batch")
    response = await run.wait()
    assert run.status == "done" and expected in response.text
    answers = [c for m in run.session.messages for c in m.contents if c.type == "function_approval_response"]
    assert [a.reason for a in answers] == ["batch"]
