"""A2A over real HTTP on loopback: agentnb on both sides, and each side against the a2a-sdk's own peer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import Part, Role, SendMessageRequest, TaskState
from starlette.applications import Starlette

from agentnb import Agent, Content, Message, tool
from agentnb._serving import LoopbackOrTokenGuard, LoopbackServer
from agentnb.a2a import A2AAgent, A2AError, A2AServer, a2a_app, agent_card
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.notebook._display import to_html


async def test_agent_to_agent_non_streaming_and_streaming_share_one_conversation() -> None:
    client = ScriptedChatClient(["Hello from the server", "Second answer here"])
    served = Agent(client, name="Greeter", description="Greets people")
    async with A2AServer(served, stream=True) as server, A2AAgent(url=server.url) as remote:
        session = remote.create_session()
        first = await remote.run("Hi", session=session)
        assert first.text == "Hello from the server"
        assert remote.name == "Greeter"
        assert remote.description == "Greets people"

        stream = remote.run("Again", stream=True, session=session)
        chunks = [update.text async for update in stream]
        final = await stream.get_final_response()

    assert len([c for c in chunks if c]) > 1, "the answer should arrive in several chunks"
    assert "".join(chunks) == "Second answer here"
    assert final.text == "Second answer here"
    # One A2A context is one agentnb session on the server: the second turn saw the first.
    second_call = [m.text for m in client.calls[1]]
    assert second_call[-3:] == ["Hi", "Hello from the server", "Again"]
    assert session.service_session_id == session.state["a2a"]["context_id"]


async def test_remote_output_is_marked_untrusted_and_escaped_in_views() -> None:
    served = Agent(ScriptedChatClient(["<script>alert(1)</script>"]), name="Evil")
    async with A2AServer(served, stream=False) as server, A2AAgent(url=server.url) as remote:
        response = await remote.run("hi")
    (message,) = response.messages
    assert message.additional_properties["untrusted"] is True
    assert message.author_name == "Evil"
    html = to_html(response)
    assert html is not None
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


async def test_protocol_selection_uses_the_preferred_binding() -> None:
    seen: list[str] = []

    async def record(request: httpx.Request) -> None:
        seen.append(request.url.path)

    served = Agent(ScriptedChatClient(["over rest"]), name="R")
    async with A2AServer(served) as server:
        async with httpx.AsyncClient(event_hooks={"request": [record]}) as http:
            remote = A2AAgent(url=server.url, http_client=http, supported_protocol_bindings=["HTTP+JSON"])
            assert (await remote.run("hi")).text == "over rest"
        assert any(path.startswith("/rest/") for path in seen), seen

        card = agent_card(served, url=server.url, protocol_bindings=["JSONRPC"])
        async with A2AAgent(agent_card=card, supported_protocol_bindings=["GRPC"]) as grpc_only:
            with pytest.raises(A2AError, match="none of \\['GRPC'\\]"):
                await grpc_only.run("hi")


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _approval_agent() -> Agent[Any]:
    client = ScriptedChatClient(
        [Content.from_function_call("c1", "delete_file", {"path": "notes.txt"}), "Done: the file is gone."]
    )
    return Agent(client, name="Janitor", tools=[delete_file])


async def test_approvals_cross_a2a_as_input_required() -> None:
    async with A2AServer(_approval_agent()) as server, A2AAgent(url=server.url) as remote:
        session = remote.create_session()
        first = await remote.run("Delete notes.txt", session=session)
        (request,) = first.user_input_requests
        assert request.function_call is not None
        assert request.function_call.name == "delete_file"
        assert request.function_call.parse_arguments() == {"path": "notes.txt"}
        assert session.state["a2a"]["task_state"] == TaskState.TASK_STATE_INPUT_REQUIRED

        second = await remote.run(Message("user", [request.to_function_approval_response(True)]), session=session)

    assert second.text == "Done: the file is gone."
    assert session.state["a2a"]["task_state"] == TaskState.TASK_STATE_COMPLETED


async def test_the_sdk_client_answers_an_approval_with_text() -> None:
    async with A2AServer(_approval_agent(), stream=False) as server, httpx.AsyncClient() as http:
        card = agent_card(_approval_agent(), url=server.url)
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        events = [
            e
            async for e in client.send_message(
                SendMessageRequest(message=new_text_message("Delete it", role=Role.ROLE_USER))
            )
        ]
        task = events[-1].task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert "Approval needed to call delete_file" in task.status.message.parts[0].text

        answer = new_text_message("yes", context_id=task.context_id, task_id=task.id, role=Role.ROLE_USER)
        events = [e async for e in client.send_message(SendMessageRequest(message=answer))]
        done = events[-1].task
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[-1]) == "Done: the file is gone."


async def test_denied_approval_does_not_run_the_tool() -> None:
    ran: list[str] = []

    @tool(approval_mode="always_require")
    def launch(target: str) -> str:
        """Launch something."""
        ran.append(target)
        return "launched"

    client = ScriptedChatClient([Content.from_function_call("c1", "launch", {"target": "x"}), "Not launched."])
    async with A2AServer(Agent(client, tools=[launch])) as server, A2AAgent(url=server.url) as remote:
        session = remote.create_session()
        await remote.run("go", session=session)
        final = await remote.run("no", session=session)
    assert ran == []
    assert final.text == "Not launched."


class _Gate:
    """A model that answers only once the test opens the gate (a long-running remote task)."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.started = asyncio.Event()

    async def model(self, messages: list[Message], options: dict[str, Any]) -> str:
        self.started.set()
        await self.open.wait()
        return "the long answer, finally"


async def _poll_until_done(remote: A2AAgent, token: Any) -> Any:
    for _ in range(500):
        response = await remote.poll_task(token)
        if response.continuation_token is None:
            return response
        await asyncio.sleep(0.02)
    raise AssertionError("the task never finished")


async def test_background_task_is_polled_until_it_completes() -> None:
    gate = _Gate()
    async with (
        A2AServer(Agent(FunctionChatClient(gate.model)), stream=False) as server,
        A2AAgent(url=server.url) as remote,
    ):
        started = await remote.run("long job", background=True)
        token = started.continuation_token
        assert token is not None
        await gate.started.wait()
        still = await remote.poll_task(token)
        assert still.continuation_token == token
        gate.open.set()
        done = await _poll_until_done(remote, token)
    assert done.text == "the long answer, finally"


async def test_a_dropped_stream_is_rejoined_with_its_continuation_token() -> None:
    gate = _Gate()
    async with (
        A2AServer(Agent(FunctionChatClient(gate.model)), stream=True) as server,
        A2AAgent(url=server.url) as remote,
    ):
        stream = remote.run("long job", stream=True, background=True)
        iterator = stream.__aiter__()
        first = await iterator.__anext__()
        token = first.continuation_token
        assert token is not None
        await stream.aclose()  # the connection drops
        gate.open.set()
        rejoined = remote.run(continuation_token=token, stream=True)
        texts = [u.text async for u in rejoined]
        final = await rejoined.get_final_response()
    assert final.text == "the long answer, finally"
    assert final.continuation_token is None
    assert "".join(texts) == "the long answer, finally"


async def test_a_failing_remote_agent_raises_a2a_error() -> None:
    def broken(messages: list[Message], options: dict[str, Any]) -> str:
        raise RuntimeError("model exploded")

    async with A2AServer(Agent(FunctionChatClient(broken)), stream=False) as server, A2AAgent(url=server.url) as remote:
        with pytest.raises(A2AError, match=r"failed: .*model exploded"):
            await remote.run("hi")


class _EchoExecutor(AgentExecutor):
    """An executor written with the SDK alone: answers with the user's text in capitals."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        from a2a.helpers import new_task_from_user_message

        assert context.message is not None
        task = new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.add_artifact([Part(text=context.get_user_input().upper())])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@pytest.fixture
async def sdk_server() -> AsyncIterator[str]:
    runner = LoopbackServer(LoopbackOrTokenGuard(Starlette()))  # the app is set once the URL is known
    url = runner.base_url + "/"
    card = agent_card(Agent(ScriptedChatClient([]), name="Echo"), url=url, protocol_bindings=["JSONRPC"])
    handler = DefaultRequestHandler(agent_executor=_EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card)
    runner.app = LoopbackOrTokenGuard(
        Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    )
    await runner.start()
    yield url
    await runner.stop()


async def test_a2a_agent_calls_an_sdk_only_server(sdk_server: str) -> None:
    async with A2AAgent(url=sdk_server) as remote:
        response = await remote.run("shout this")
    assert remote.name == "Echo"
    assert response.text == "SHOUT THIS"


async def test_token_auth_and_loopback_rule() -> None:
    served = Agent(ScriptedChatClient(["secret answer"]), name="S")
    async with A2AServer(served, token="t0ken") as server:
        async with httpx.AsyncClient() as http:
            refused = await http.get(server.url + ".well-known/agent-card.json")
            assert refused.status_code == 401
        async with A2AAgent(url=server.url, headers={"Authorization": "Bearer t0ken"}) as remote:
            assert (await remote.run("hi")).text == "secret answer"

    app = a2a_app(served, url="http://127.0.0.1:1/")
    remote_client = httpx.ASGITransport(app=app, client=("203.0.113.7", 5555))
    async with httpx.AsyncClient(transport=remote_client, base_url="http://127.0.0.1:1") as http:
        response = await http.get("/.well-known/agent-card.json")
    assert response.status_code == 403
    local_client = httpx.ASGITransport(app=app, client=("127.0.0.1", 5555))
    async with httpx.AsyncClient(transport=local_client, base_url="http://127.0.0.1:1") as http:
        assert (await http.get("/.well-known/agent-card.json")).json()["name"] == "S"

    with pytest.raises(ValueError, match="without authentication"):
        A2AServer(served, host="0.0.0.0")


def test_importing_agentnb_loads_neither_yaml_nor_a2a() -> None:
    import subprocess
    import sys

    names = "('yaml', 'a2a', 'agentnb.a2a', 'agentnb.declarative')"
    code = f"import sys, agentnb; print(sorted(m for m in {names} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_rejoining_a_task_that_already_finished_returns_its_result() -> None:
    gate = _Gate()
    async with (
        A2AServer(Agent(FunctionChatClient(gate.model)), stream=True) as server,
        A2AAgent(url=server.url) as remote,
    ):
        stream = remote.run("long job", stream=True, background=True)
        first = await stream.__aiter__().__anext__()
        token = first.continuation_token
        assert token is not None
        await stream.aclose()
        gate.open.set()
        await _poll_until_done(remote, token)  # the task ends while nobody listens
        rejoined = await remote.run(continuation_token=token)
    assert rejoined.text == "the long answer, finally"
    assert rejoined.continuation_token is None


async def test_a_declarative_workflow_asks_its_question_through_input_required() -> None:
    from agentnb.declarative import WorkflowFactory

    workflow = WorkflowFactory().create_workflow_from_yaml(
        "name: survey\nactions:\n"
        '  - kind: Question\n    question: {text: "What is your name?"}\n    variable: Local.name\n'
        "  - kind: SendActivity\n    activity: {text: '=Concat(\"Hello, \", Local.name)'}\n"
    )
    async with A2AServer(workflow, stream=False) as server, A2AAgent(url=server.url) as remote:
        session = remote.create_session()
        asked = await remote.run("start", session=session)
        assert asked.text == "What is your name?"
        assert session.state["a2a"]["task_state"] == TaskState.TASK_STATE_INPUT_REQUIRED
        answered = await remote.run("Ada", session=session)
    assert answered.text == "Hello, Ada"
    assert session.state["a2a"]["task_state"] == TaskState.TASK_STATE_COMPLETED
