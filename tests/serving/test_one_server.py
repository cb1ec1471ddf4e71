"""One server, three protocols: the same agent over the Responses API, A2A and MCP, each driven by its SDK's own
client over loopback HTTP; one token guards all of them, and without one only this machine is served."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import mcp
import openai
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest, TaskState

from agentnb import Agent, tool
from agentnb.local import ScriptedChatClient
from agentnb.serving import AgentServer, serving_app
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

TARGETS = Path(__file__).parent / "targets"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _adder(replies: list[object]) -> Agent:
    return Agent(ScriptedChatClient(replies), name="Adder", description="Adds numbers.", tools=[add])


def _shouter() -> object:
    @executor(id="shout")
    async def shout(text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(text.upper())

    return WorkflowBuilder(start_executor=shout, name="Shouter").build()


async def test_openai_sdk_drives_an_agent_and_a_workflow_with_conversations() -> None:
    call = ScriptedChatClient.call("add", a=2, b=3)
    agent = _adder([call, "2 + 3 = 5", "Still 5."])
    async with (
        AgentServer([agent, _shouter()]) as server,
        openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="unused") as client,
    ):
        models = await client.models.list()
        assert {m.id for m in models.data} == {"Adder", "Shouter"}

        conversation = await client.conversations.create(metadata={"topic": "sums"})
        first = await client.responses.create(model="Adder", input="What is 2 + 3?", conversation=conversation.id)
        assert first.output_text == "2 + 3 = 5"
        kinds = [item.type for item in first.output]
        assert kinds == ["function_call", "function_call_output", "message"]
        assert first.output[1].output == "5"  # the tool ran here, on the server

        stream = await client.responses.create(
            model="Adder", input="And now?", conversation=conversation.id, stream=True
        )
        deltas = [event.delta async for event in stream if event.type == "response.output_text.delta"]
        assert "".join(deltas) == "Still 5."

        items = await client.conversations.items.list(conversation.id, order="asc")
        texts = [item.content[0].text for item in items.data if item.type == "message"]
        assert texts == ["What is 2 + 3?", "2 + 3 = 5", "And now?", "Still 5."]

        shouted = await client.responses.create(model="Shouter", input="quiet please")
        assert shouted.output_text == "QUIET PLEASE"

        with pytest.raises(openai.NotFoundError):
            await client.responses.create(model="Nobody", input="hi")


async def test_a2a_sdk_and_mcp_sdk_reach_the_same_server() -> None:
    agent = _adder(["over a2a", "over mcp"])
    async with AgentServer(agent) as server, httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, server.a2a_url).get_agent_card()
        assert card.name == "Adder"
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        request = SendMessageRequest(message=new_text_message("hi", role=Role.ROLE_USER))
        events = [e async for e in client.send_message(request)]
        task = events[-1].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert "".join(part.text for part in task.artifacts[-1].parts) == "over a2a"  # streamed in chunks

        async with mcp.Client(server.mcp_url) as session:
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == ["Adder"]
            result = await session.call_tool("Adder", {"task": "hi"})
        assert result.content[0].text == "over mcp"


async def test_one_token_guards_all_three_protocols() -> None:
    agent = _adder(["with the token"])
    async with AgentServer(agent, token="s3cret") as server:
        async with openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="wrong") as refused:
            with pytest.raises(openai.AuthenticationError):
                await refused.responses.create(model="Adder", input="hi")
        async with httpx.AsyncClient() as http:
            assert (await http.get(server.a2a_url + ".well-known/agent-card.json")).status_code == 401
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await http.post(server.mcp_url, json=ping)).status_code == 401
            assert (await http.get(server.url + "/")).status_code == 401
        async with openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="s3cret") as allowed:
            assert (await allowed.responses.create(model="Adder", input="hi")).output_text == "with the token"


async def test_clients_from_other_machines_need_the_token() -> None:
    """A client address is the peer's: another machine's is made by the ASGI transport, the one fault cause here."""
    open_app = serving_app(_adder([]), base_url="http://127.0.0.1:1")
    remote = httpx.ASGITransport(app=open_app, client=("203.0.113.7", 5555))
    async with httpx.AsyncClient(transport=remote, base_url="http://127.0.0.1:1") as http:
        for path in ("/v1/models", "/a2a/Adder/.well-known/agent-card.json", "/"):
            response = await http.get(path)
            assert response.status_code == 403, path
            assert "start the server with a token" in response.text
        assert (await http.post("/mcp/Adder", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})).status_code == 403
    local = httpx.ASGITransport(app=open_app, client=("::ffff:127.0.0.1", 5555))
    async with httpx.AsyncClient(transport=local, base_url="http://127.0.0.1:1") as http:
        assert (await http.get("/v1/models")).status_code == 200

    guarded = serving_app(_adder([]), base_url="http://127.0.0.1:1", token="tok")
    remote = httpx.ASGITransport(app=guarded, client=("203.0.113.7", 5555))
    async with httpx.AsyncClient(transport=remote, base_url="http://127.0.0.1:1") as http:
        assert (await http.get("/v1/models")).status_code == 401
        assert (await http.get("/v1/models", headers={"Authorization": "Bearer tok"})).status_code == 200
    with pytest.raises(ValueError, match="without authentication"):
        AgentServer(_adder([]), host="0.0.0.0")


def _serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentnb.serving", "serve", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the server prints its address (or the process dies)
    if not line.startswith("agentnb serving on "):
        proc.kill()
        raise AssertionError(f"no address: {line!r} {proc.communicate()[1]}")
    return proc, line.split(" on ", 1)[1].split("/ ", 1)[0]


def _stop(proc: subprocess.Popen[str]) -> int:
    """Ctrl+C, as a person stops the server; communicate() also closes the pipes."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
    return proc.returncode


def test_the_command_serves_a_python_file_and_a_yaml_agent(tmp_path: Path) -> None:
    (tmp_path / "helper.yaml").write_text(
        "kind: Prompt\nname: Helper\ninstructions: Be brief.\nmodel:\n  id: offline\n  provider: Local\n"
    )
    proc, url = _serve(str(TARGETS / "served.py"), str(tmp_path / "helper.yaml"))
    try:
        with openai.OpenAI(base_url=url + "/v1", api_key="unused") as client:
            assert {m.id for m in client.models.list().data} == {"Adder", "Shouter", "Helper"}
            assert client.responses.create(model="Adder", input="2 + 3?").output_text == "2 + 3 = 5"
            assert client.responses.create(model="Shouter", input="hey").output_text == "HEY"
            assert client.responses.create(model="Helper", input="hi").output_text
        index = httpx.get(url + "/").json()
        assert index["entities"][0]["mcp"] == url + "/mcp/Adder"
    finally:
        assert _stop(proc) == 0


def test_the_command_refuses_an_exposed_address_without_a_token_and_bad_targets() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    env.pop("AGENTNB_SERVE_TOKEN", None)
    exposed = subprocess.run(
        [sys.executable, "-m", "agentnb.serving", str(TARGETS / "served.py"), "--host", "0.0.0.0"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert exposed.returncode == 2
    assert "without authentication" in exposed.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "agentnb.serving", str(TARGETS / "served.py") + ":nothing"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert missing.returncode == 2
    assert "has no 'nothing'" in missing.stderr
