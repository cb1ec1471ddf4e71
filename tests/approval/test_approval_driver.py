"""ApprovalDriver: run, collect answers (policy or person), resume; with a session or with its own transcript."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, AgentResponse, AgentResponseUpdate, AgentSession, ApprovalPolicy, FunctionTool
from agentnb._approval_driver import ApprovalDriver, AutoAnswered, DriverEvent, TurnStarted
from agentnb.exceptions import ApprovalError
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call


def _search(server: str | None, ran: list[str]) -> FunctionTool:
    def search(query: str) -> str:
        ran.append(f"{server}:{query}")
        return f"found {query}"

    return FunctionTool(
        search,
        name="search",
        approval_mode="always_require",
        additional_properties={"server_label": server} if server is not None else None,
    )


async def _events(driver: ApprovalDriver, messages: Any = None, *, stream: bool = False) -> list[DriverEvent]:
    source = driver.resume(stream=stream) if messages is None else driver.run(messages, stream=stream)
    return [event async for event in source]


@pytest.mark.parametrize("stream", [False, True])
async def test_a_person_answers_and_the_run_resumes(stream: bool) -> None:
    ran: list[str] = []
    agent = Agent(ScriptedChatClient([call("search", query="a"), "Found it."]), tools=[_search(None, ran)])
    driver = ApprovalDriver(agent, session=agent.create_session())
    events = await _events(driver, "Search a", stream=stream)
    assert isinstance(events[0], TurnStarted) and isinstance(events[-1], AgentResponse)
    assert any(isinstance(e, AgentResponseUpdate) for e in events) is stream
    [request] = driver.pending
    assert not driver.complete and ran == []
    with pytest.raises(ApprovalError, match="no answer yet"):
        driver.take_answers()
    with pytest.raises(ApprovalError, match="No pending approval request"):
        driver.answer("nope", True)
    assert driver.answer(request, True) is True
    with pytest.raises(ApprovalError, match="already has an answer"):
        driver.answer(request, True)
    events = await _events(driver, stream=stream)
    assert isinstance(events[0], TurnStarted) and events[0].messages[0].contents[0].approved is True
    assert driver.pending == [] and driver.response is not None and driver.response.text == "Found it."
    assert ran == ["None:a"]


async def test_always_allow_makes_a_session_rule_bounded_by_the_source() -> None:
    ran: list[str] = []
    script = ScriptedChatClient([call("search", query="1"), "ok", call("search", query="2"), "ok again"])
    session = AgentSession()
    docs = Agent(script, tools=[_search("docs", ran)])
    mail = Agent(script, tools=[_search("mail", ran)])
    driver = ApprovalDriver(docs, session=session)
    await _events(driver, "Search docs")
    driver.answer(driver.pending[0], True, always=True)
    await _events(driver)
    assert ran == ["docs:1"]
    # The same session and tool name, another source: the docs rule does not answer for it.
    other = ApprovalDriver(mail, session=session)
    events = await _events(other, "Search mail")
    assert not any(isinstance(e, AutoAnswered) for e in events)
    assert [r.function_call.name for r in other.pending if r.function_call] == ["search"]
    assert ran == ["docs:1"]


async def test_the_policy_answers_and_resumes_without_a_session() -> None:
    ran: list[str] = []
    agent = Agent(
        ScriptedChatClient([call("search", query="a"), call("search", query="b"), "Both."]), tools=[_search(None, ran)]
    )
    driver = ApprovalDriver(agent, policy=ApprovalPolicy.parse("search"))
    events = await _events(driver, "Search twice")
    assert [type(e).__name__ for e in events].count("AutoAnswered") == 2
    assert driver.response is not None and driver.response.text == "Both."
    assert ran == ["None:a", "None:b"]


async def test_always_without_a_session_lasts_for_the_drivers_runs() -> None:
    ran: list[str] = []
    agent = Agent(
        ScriptedChatClient([call("search", query="a"), call("search", query="b"), "Both."]), tools=[_search(None, ran)]
    )
    driver = ApprovalDriver(agent)
    await _events(driver, "Search twice")
    driver.answer(driver.pending[0], True, always=True)
    events = await _events(driver)
    assert [type(e).__name__ for e in events].count("AutoAnswered") == 1
    assert ran == ["None:a", "None:b"]


async def test_the_driver_gives_up_after_its_automatic_rounds() -> None:
    ran: list[str] = []
    agent = Agent(
        ScriptedChatClient([call("search", query="a"), call("search", query="b"), "Both."]), tools=[_search(None, ran)]
    )
    driver = ApprovalDriver(agent, policy=True, max_auto_rounds=1)
    await _events(driver, "Search twice")
    assert driver.gave_up and len(driver.pending) == 1 and driver.complete and ran == ["None:a"]
    await _events(driver)  # the policy's answer was kept: resuming sends it
    assert ran == ["None:a", "None:b"] and driver.response is not None and driver.response.text == "Both."
    with pytest.raises(ValueError, match="max_auto_rounds"):
        ApprovalDriver(agent, max_auto_rounds=-1)
