"""Message injection: messages queued while an agent works reach its next model call and its history."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentnb import Agent, AgentSession, Message, tool
from agentnb.exceptions import SessionError
from agentnb.harness import MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY, MessageInjectionMiddleware, enqueue_messages
from agentnb.local import FunctionChatClient, ScriptedChatClient

call = ScriptedChatClient.call


def _agent(client: Any, **kwargs: Any) -> Agent[Any]:
    return Agent(client, middleware=[MessageInjectionMiddleware()], **kwargs)


async def test_a_message_queued_during_a_tool_call_reaches_the_next_model_call_and_the_history() -> None:
    session = AgentSession()
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_inventory_lookup(item: str) -> str:
        """Look up inventory."""
        started.set()
        await release.wait()
        return f"{item} is in stock"

    client = ScriptedChatClient([call("slow_inventory_lookup", item="mug"), "In stock; pick up after 5 PM."])
    agent = _agent(client, tools=[slow_inventory_lookup])
    run = asyncio.ensure_future(agent.run("Can I pick up a mug?", session=session))
    await started.wait()
    enqueue_messages(session, "I can only come after 5 PM.")
    release.set()
    response = await run
    assert client.calls[1][-1].text == "I can only come after 5 PM."
    assert [m.role for m in response.messages] == ["assistant", "tool", "user", "assistant"]
    assert [m.text for m in session.messages][-2:] == ["I can only come after 5 PM.", "In stock; pick up after 5 PM."]
    assert session.state[MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY] == []


async def test_a_message_queued_during_the_final_model_call_gets_one_more_call() -> None:
    session = AgentSession()
    answers = iter(["First answer.", "Answer with the late note."])

    def model(messages: list[Message], options: dict[str, Any]) -> str:
        reply = next(answers)
        if reply == "First answer.":
            enqueue_messages(session, "One more thing!")
        return reply

    agent = _agent(FunctionChatClient(model))
    response = await agent.run("Hello", session=session)
    assert [m.text for m in response.messages] == ["First answer.", "One more thing!", "Answer with the late note."]


async def test_queued_before_the_run_and_streaming() -> None:
    session = AgentSession()
    enqueue_messages(session, ["note one", "note two"])
    client = ScriptedChatClient(["Got both notes."])
    agent = _agent(client)
    stream = agent.run("Hi", session=session, stream=True)
    updates = [u async for u in stream]
    assert [m.text for m in client.calls[0]][-3:] == ["Hi", "note one", "note two"]
    assert [u.role for u in updates if u.text][:2] == ["user", "user"]
    final = await stream.get_final_response()
    assert [m.text for m in final.messages] == ["note one", "note two", "Got both notes."]


async def test_with_an_empty_queue_it_changes_nothing() -> None:
    client = ScriptedChatClient(["again"])
    session = AgentSession()
    response = await _agent(client).run("Hi", session=session)
    assert [m.text for m in response.messages] == ["again"]
    assert MessageInjectionMiddleware().get_pending_messages(session) == []


@pytest.mark.parametrize("stream", [False, True])
async def test_without_a_session_it_refuses_before_calling_the_model(stream: bool) -> None:
    client = ScriptedChatClient(["never sent"])
    agent = _agent(client)
    with pytest.raises(SessionError, match=r"requires an AgentSession\. Pass session=\.\.\."):
        if stream:
            await agent.run("Hi", stream=True).get_final_response()
        else:
            await agent.run("Hi")
    assert client.calls == []
    # The same agent works once it is given a session: nothing about the refusal stuck.
    assert (await agent.run("Hi", session=agent.create_session())).text == "never sent"
