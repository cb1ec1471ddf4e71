"""Background responses on the Responses API: start, poll with the continuation token, resume a dropped stream
from the last event received; over real HTTP against the local server, which keeps background responses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentnb import Agent, AgentResponseUpdate, tool
from agentnb.exceptions import ServiceError
from agentnb.openai import OpenAIChatClient, OpenAIChatOptions, OpenAIContinuationToken
from tests.openai_server import OpenAIServer, Reply, ToolCall

TEXT = "Regular exercise strengthens the heart, lifts the mood and builds bone."


def _methods(server: OpenAIServer) -> list[str]:
    return [
        "GET" + ("-stream" if r.body.get("stream") == "true" else "") if r.body.get("method") == "GET" else "POST"
        for r in server.requests
    ]


async def test_poll_a_background_response_until_it_completes(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text=TEXT, polls=2))
    agent = Agent(responses_client, name="researcher", instructions="Be concise.")
    session = agent.create_session()
    response = await agent.run("Explain exercise.", session=session, options=OpenAIChatOptions(background=True))
    assert response.continuation_token is not None and response.text == ""
    assert response.finish_reason is None
    token = response.continuation_token
    assert json.loads(json.dumps(token)) == token  # plain JSON: it can be stored and restored

    polls = 0
    while response.continuation_token is not None:
        polls += 1
        response = await agent.run(
            session=session,
            options=OpenAIChatOptions(continuation_token=OpenAIContinuationToken(**response.continuation_token)),
        )
    assert polls == 3  # two polls see it running, the third gets the answer
    assert response.text == TEXT and response.finish_reason == "stop"
    assert _methods(server) == ["POST", "GET", "GET", "GET"]
    assert server.requests[0].body["background"] is True
    assert all(r.path == f"/v1/responses/{token['response_id']}" for r in server.requests[1:])
    # The conversation holds the question and, once complete, the answer.
    assert [(m.role, m.text) for m in session.messages] == [("user", "Explain exercise."), ("assistant", TEXT)]


async def test_a_completed_background_response_with_tool_calls_continues_with_new_requests(
    server: OpenAIServer, responses_client: OpenAIChatClient
):
    ran: list[str] = []

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        ran.append(topic)
        return f"facts about {topic}"

    server.script(Reply(tool_calls=[ToolCall("lookup", {"topic": "heart"})], polls=0), Reply(text="Done.", polls=0))
    agent = Agent(responses_client, tools=[lookup])
    first = await agent.run("go", options={"background": True})
    assert first.continuation_token is not None
    done = await agent.run(options={"background": True, "continuation_token": first.continuation_token})
    # Polling delivered the tool call; the tool ran once and its result went out in a new background request
    # (not another poll of the finished response).
    assert ran == ["heart"]
    assert _methods(server) == ["POST", "GET", "POST"]
    follow_up = server.requests[2].body
    assert follow_up["background"] is True
    assert any(item.get("type") == "function_call_output" for item in follow_up["input"])
    assert done.continuation_token is not None  # the follow-up runs in the background too
    final = await agent.run(options={"continuation_token": done.continuation_token})
    assert final.text == "Done." and final.continuation_token is None


async def test_resume_a_stream_after_the_reader_stops(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text=TEXT, chunk_size=8))
    agent = Agent(responses_client)
    session = agent.create_session()
    first: list[str] = []
    last_token = None
    stream = agent.run("List benefits.", stream=True, session=session, options={"background": True})
    async for update in stream:
        last_token = update.continuation_token
        if update.text:
            first.append(update.text)
        if len(first) == 3:
            break  # a simulated interruption
    await stream.aclose()
    assert last_token is not None and "sequence_number" in last_token

    resumed: list[str] = []
    tokens: list[object] = []
    again = agent.run(stream=True, session=session, options={"continuation_token": last_token})
    async for update in again:
        tokens.append(update.continuation_token)
        if update.text:
            resumed.append(update.text)
    final = await again.get_final_response()
    # Nothing twice, nothing lost: the resumed stream starts after the last event read.
    assert "".join(first) + "".join(resumed) == TEXT
    assert final.text == "".join(resumed) and final.continuation_token is None
    assert tokens[-1] is None
    (get,) = [r for r in server.requests if r.body.get("method") == "GET"]
    assert get.body == {"stream": "true", "starting_after": str(last_token["sequence_number"]), "method": "GET"}


async def test_resume_a_stream_the_connection_dropped(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text=TEXT, chunk_size=8, cut_after=6))
    received: list[AgentResponseUpdate] = []
    agent = Agent(responses_client)
    with pytest.raises(ServiceError):
        async for update in agent.run("List benefits.", stream=True, options={"background": True}):
            received.append(update)
    token = received[-1].continuation_token
    assert token is not None
    rest = [u.text async for u in agent.run(stream=True, options={"continuation_token": token})]
    assert "".join(u.text for u in received) + "".join(rest) == TEXT


async def test_a_stream_without_background_carries_no_token(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text="hi"))
    updates = [u async for u in responses_client.get_response("x", stream=True)]
    assert all(u.continuation_token is None for u in updates)


async def test_a_malformed_token_is_refused_before_any_request(
    server: OpenAIServer, responses_client: OpenAIChatClient
):
    with pytest.raises(ValueError, match="response_id"):
        await responses_client.get_response("x", options={"continuation_token": {"id": "resp_1"}})
    assert server.requests == []


async def test_polling_an_unknown_response_is_a_typed_error(server: OpenAIServer, responses_client: OpenAIChatClient):
    with pytest.raises(ServiceError) as info:
        await responses_client.get_response([], options={"continuation_token": {"response_id": "resp_nope"}})
    assert info.value.status_code == 404


def _original_with_agentnb_imports(rel: str) -> str:
    """The reference's sample as it is, but for ``agent_framework`` imports (restored from its parity port)."""
    import sys
    from pathlib import Path

    parity = Path(__file__).resolve().parents[1] / "parity"
    sys.path.insert(0, str(parity))
    try:
        import regenerate
    finally:
        sys.path.remove(str(parity))
    entry = json.loads((parity / "manifest.json").read_text(encoding="utf-8"))["samples"][rel]
    original = regenerate.restore((parity / "samples" / rel).read_text(encoding="utf-8"), entry["hunks"])
    assert regenerate.sha256(original) == entry["sha256"]
    text = original.replace("from agent_framework.openai import", "from agentnb.openai import")
    return "".join(regenerate._rewrite_imports(line) for line in text.splitlines(keepends=True))


@pytest.mark.slow
def test_the_reference_sample_polls_and_resumes_against_the_local_server(server: OpenAIServer, tmp_path: Any) -> None:
    """``background_responses.py`` unchanged but for its imports, with ``OPENAI_*`` pointing at the local server."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    relativity = "Special relativity fixes the speed of light; general relativity makes gravity curved spacetime."
    server.script(Reply(text=relativity, polls=1), Reply(text=TEXT, chunk_size=6))
    script = tmp_path / "background_responses.py"
    script.write_text(_original_with_agentnb_imports("02-agents/background_responses.py"))
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": server.base_url,
    }
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Initial status: continuation_token=set" in out
    assert "  Poll 1: continuation_token=set" in out and "  Poll 2: continuation_token=None" in out
    assert f"Result (2 poll(s)):\n{relativity}" in out
    # The first stream stops after three updates; the resumed one delivers the rest, nothing twice.
    first = out.split("First stream (before interruption):\n", 1)[1].split("\n  [simulated interruption]", 1)[0]
    resumed = out.split("Resumed stream:\n", 1)[1].strip()
    assert first + resumed == TEXT and resumed
    assert _methods(server) == ["POST", "GET", "GET", "POST", "GET-stream"]
    assert all(r.body["model"] == "o3" for r in server.requests if r.body.get("method") != "GET")
