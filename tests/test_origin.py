"""A response remembers its agent weakly (its session too, unless it waits for approval) and saves neither."""

from __future__ import annotations

import gc

from agentnb import Agent, AgentResponse
from agentnb._origin import origin_of, session_origin
from agentnb.local import ScriptedChatClient


async def test_a_response_knows_its_agent_session_and_input() -> None:
    agent = Agent(ScriptedChatClient(["Hi!"]), name="greeter")
    session = agent.create_session()
    response = await agent.run("Hello", session=session)
    origin = origin_of(response)
    assert origin is not None and origin.agent is agent and origin.session is session and origin.alive
    assert [m.text for m in origin.messages] == ["Hello"]
    assert session_origin(session) is origin
    assert origin_of(AgentResponse.from_dict(response.to_dict())) is None  # loaded data knows no agent


async def test_streamed_and_sessionless_runs_have_an_origin_too() -> None:
    agent = Agent(ScriptedChatClient(["One", "Two"]))
    stream = agent.run("a", stream=True)
    async for _ in stream:
        pass
    streamed = await stream.get_final_response()
    plain = await agent.run("b")
    for response in (streamed, plain):
        origin = origin_of(response)
        assert origin is not None and origin.agent is agent and origin.session is None and origin.alive


async def test_the_origin_does_not_keep_the_agent_or_session_alive() -> None:
    agent = Agent(ScriptedChatClient(["Hi!"]))
    session = agent.create_session()
    response = await agent.run("Hello", session=session)
    origin = origin_of(response)
    assert origin is not None
    del agent, session
    gc.collect()
    assert origin.agent is None and origin.session is None and not origin.alive


async def test_a_response_that_waits_for_approval_keeps_its_session() -> None:
    from agentnb import tool

    @tool(approval_mode="always_require")
    def delete(path: str) -> str:
        """Delete a file."""
        return path

    agent = Agent(ScriptedChatClient([ScriptedChatClient.call("delete", path="a")]), tools=[delete])
    # The session is made inline: the response is the only handle on it, and the answers must go there.
    response = await agent.run("Delete a", session=agent.create_session())
    gc.collect()
    origin = origin_of(response)
    assert response.user_input_requests and origin is not None and origin.alive
    session = origin.session
    assert session is not None and session_origin(session) is not None
