"""Agents in workflows (AgentExecutor) and workflows as agents (WorkflowAgent), on offline models."""

from __future__ import annotations

from typing import Any

from typing_extensions import Never

from agentnb import Agent, AgentResponse, AgentResponseUpdate, Content, Message, tool
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import (
    AgentExecutor,
    AgentExecutorRequest,
    AgentExecutorResponse,
    InMemoryCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    merge_streamed_outputs,
)


def _echo_client(prefix: str) -> FunctionChatClient:
    def reply(messages: list[Message], options: dict[str, Any]) -> str:
        return f"{prefix}({messages[-1].text})"

    return FunctionChatClient(reply)


async def test_agents_placed_directly_form_a_conversation_chain() -> None:
    writer = Agent(_echo_client("draft"), name="writer")
    editor = Agent(_echo_client("edit"), name="editor")
    workflow = WorkflowBuilder(start_executor=writer).add_edge(writer, editor).build()
    assert isinstance(workflow.executors["writer"], AgentExecutor)
    result = await workflow.run("a haiku")
    # As in the reference, every agent yields its response; the last one sends nothing into the void.
    draft, response = result.get_outputs()
    assert result.get_events("warning") == []
    assert isinstance(draft, AgentResponse) and isinstance(response, AgentResponse)
    assert [e.executor_id for e in result.get_events("output")] == ["writer", "editor"]
    assert draft.text == "draft(a haiku)"
    assert response.text == "edit(draft(a haiku))"
    editor_exec = workflow.executors["editor"]
    assert isinstance(editor_exec, AgentExecutor)
    assert [m.text for m in editor_exec.conversation] == ["a haiku", "draft(a haiku)", "edit(draft(a haiku))"]


async def test_agent_executor_accepts_messages_and_fan_in_responses() -> None:
    a = Agent(_echo_client("A"), name="a")
    b = Agent(_echo_client("B"), name="b")
    judge = Agent(FunctionChatClient(lambda messages, options: " | ".join(m.text for m in messages)), name="judge")

    @executor(id="ask")
    async def ask(text: str, ctx: WorkflowContext[list[Message]]) -> None:
        await ctx.send_message([Message("user", [text])])

    workflow = (
        WorkflowBuilder(start_executor=ask, output_from=[judge])
        .add_fan_out_edges(ask, [a, b])
        .add_fan_in_edges([a, b], judge)
        .build()
    )
    (response,) = (await workflow.run("q")).get_outputs()  # output_from names the agent whose answer is output
    assert response.text == "A(q) | B(q)"


async def test_agent_executor_output_response_false_only_sends_on() -> None:
    writer = AgentExecutor(Agent(_echo_client("draft"), name="writer"), output_response=False)
    editor = Agent(_echo_client("edit"), name="editor")
    workflow = WorkflowBuilder(start_executor=writer).add_edge(writer, editor).build()
    assert [o.text for o in (await workflow.run("x")).get_outputs()] == ["edit(draft(x))"]
    streamed = [e async for e in workflow.run("y", stream=True) if e.type == "output"]
    assert {e.executor_id for e in streamed} == {"editor"}


async def test_streaming_workflow_streams_agent_updates() -> None:
    agent = Agent(ScriptedChatClient(["Hello there, streaming world", "Once more"], chunk_size=5), name="talker")
    workflow = WorkflowBuilder(start_executor=agent).build()
    updates = [e async for e in workflow.run("hi", stream=True) if e.type == "output"]
    # The reference's shape: one output event per update (not one more with the whole response).
    assert len(updates) > 2
    assert all(isinstance(e.data, AgentResponseUpdate) and e.executor_id == "talker" for e in updates)
    assert {e.data.author_name for e in updates} == {"talker"}
    assert "".join(e.data.text for e in updates) == "Hello there, streaming world"
    (merged,) = merge_streamed_outputs(e.data for e in updates)
    assert isinstance(merged, AgentResponse) and merged.text == "Hello there, streaming world"
    # Not streamed, the same workflow yields the whole response once.
    (response,) = (await workflow.run("again")).get_outputs()
    assert isinstance(response, AgentResponse)


async def test_streamed_agents_in_one_superstep_stay_apart_and_tool_updates_name_their_agent() -> None:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: sunny"

    a = Agent(
        ScriptedChatClient([ScriptedChatClient.call("lookup", city="Oslo"), "Oslo is sunny"]), name="a", tools=[lookup]
    )
    b = Agent(ScriptedChatClient(["B speaks at length"], chunk_size=3), name="b")

    @executor(id="ask")
    async def ask(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    workflow = WorkflowBuilder(start_executor=ask).add_fan_out_edges(ask, [a, b]).build()
    outputs = [e async for e in workflow.run("go", stream=True) if e.type == "output"]
    assert all(e.data.author_name == e.executor_id for e in outputs)  # tool-result updates included
    assert any(c.type == "function_result" for e in outputs for c in e.data.contents)
    merged = {r.messages[-1].author_name: r.text for r in merge_streamed_outputs(e.data for e in outputs)}
    assert merged == {"a": "Oslo is sunny", "b": "B speaks at length"}


async def test_tool_approval_inside_a_workflow_becomes_request_info() -> None:
    calls: list[str] = []

    @tool(approval_mode="always_require")
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        calls.append(env)
        return f"deployed to {env}"

    client = ScriptedChatClient([ScriptedChatClient.call("deploy", env="prod"), "Done: deployed to prod."])
    agent = Agent(client, name="ops", tools=[deploy])
    storage = InMemoryCheckpointStorage()
    workflow = WorkflowBuilder(start_executor=agent, checkpoint_storage=storage, name="ops").build()
    paused = await workflow.run("ship it")
    (request,) = paused.get_request_info_events()
    assert request.data.type == "function_approval_request"
    assert request.data.function_call.name == "deploy"
    assert request.request_id == request.data.id  # asked under the approval's own id, as the reference does
    assert calls == []  # nothing ran without an approving answer
    # Answer from a fresh graph (as after a restart) with the approval content.
    agent2 = Agent(ScriptedChatClient(["Done: deployed to prod."]), name="ops", tools=[deploy])
    rebuilt = WorkflowBuilder(start_executor=agent2, checkpoint_storage=storage, name="ops").build()
    done = await rebuilt.run(
        checkpoint_id=paused.checkpoint_id,
        responses={request.request_id: request.data.to_function_approval_response(True)},
    )
    assert calls == ["prod"]
    assert done.get_outputs()[0].text == "Done: deployed to prod."


async def test_workflow_as_agent_runs_and_streams() -> None:
    @executor(id="shout")
    async def shout(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text.upper())

    agent = WorkflowBuilder(start_executor=shout, name="shouter").build().as_agent()
    response = await agent.run("hello")
    assert response.text == "HELLO" and response.agent_id == agent.id and agent.name == "shouter"
    stream = agent.run("again", stream=True)
    texts = [u.text async for u in stream]
    assert texts == ["AGAIN"]
    assert (await stream.get_final_response()).text == "AGAIN"


async def test_workflow_agent_streams_inner_agent_updates_once() -> None:
    inner = Agent(ScriptedChatClient(["one two three four", "five six"], chunk_size=4), name="inner")
    agent = WorkflowBuilder(start_executor=inner).build().as_agent(name="outer")
    updates = [u async for u in agent.run("go", stream=True)]
    assert len(updates) > 1
    assert "".join(u.text for u in updates) == "one two three four"  # not duplicated by the final output
    response = await agent.run("go again")  # non-streaming: the inner agent's final response
    assert response.text == "five six"


async def test_workflow_agent_turns_requests_into_approval_requests() -> None:
    from agentnb.workflows import Executor, handler, response_handler

    class Gate(Executor):
        @handler
        async def start(self, text: str, ctx: WorkflowContext) -> None:
            await ctx.request_info(request_data=f"allow {text}?", response_type=bool)

        @response_handler
        async def done(self, question: str, ok: bool, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(f"{question} {'granted' if ok else 'denied'}")

    agent = WorkflowBuilder(start_executor=Gate("gate")).build().as_agent(name="gatekeeper")
    first = await agent.run("access")
    (request,) = first.user_input_requests
    assert request.type == "function_approval_request"
    second = await agent.run(Message("user", [request.to_function_approval_response(True)]))
    assert second.text == "allow access? granted"
    # Any value can be sent back as a function result with the request id as call id.
    (request,) = (await agent.run("files")).user_input_requests
    third = await agent.run(Message("user", [Content.from_function_result(request.id, result=False)]))
    assert third.text == "allow files? denied"


async def test_a_request_replaying_the_conversation_adds_only_the_new_messages() -> None:
    writer = Agent(_echo_client("draft"), name="writer")
    rounds: list[list[str]] = []

    @executor(id="reviewer")
    async def reviewer(response: AgentExecutorResponse, ctx: WorkflowContext[AgentExecutorRequest, list[str]]) -> None:
        conversation = list(response.full_conversation or [])
        rounds.append([m.text for m in conversation])
        if len(rounds) == 1:  # loop back once with the whole conversation and feedback
            await ctx.send_message(AgentExecutorRequest([*conversation, Message("user", ["shorter"])]))
            return
        await ctx.yield_output(rounds[-1])

    workflow = (
        WorkflowBuilder(start_executor=writer, output_from=[reviewer])
        .add_edge(writer, reviewer)
        .add_edge(reviewer, writer)
        .build()
    )

    (conversation,) = (await workflow.run("a poem")).get_outputs()

    assert conversation == ["a poem", "draft(a poem)", "shorter", "draft(shorter)"]


def test_agent_executor_response_round_trips_through_json() -> None:
    from agentnb import _serialization

    value = AgentExecutorResponse("w", AgentResponse(text="hi"), [Message("user", ["q"])])
    back = _serialization.loads(_serialization.dumps(value))
    assert isinstance(back, AgentExecutorResponse)
    assert back.agent_response.text == "hi" and back.full_conversation[0].text == "q"  # type: ignore[index]


async def test_an_orchestration_as_an_agent_answers_with_the_final_reply_only() -> None:
    from agentnb.workflows import SequentialBuilder

    def team() -> list[Agent]:
        return [
            Agent(ScriptedChatClient(["A draft."], chunk_size=3), name="writer"),
            Agent(ScriptedChatClient(["Reviewed: fine."], chunk_size=3), name="reviewer"),
        ]

    agent = SequentialBuilder(participants=team()).build().as_agent(name="pair")
    response = await agent.run("write")
    assert [(m.author_name, m.text) for m in response.messages] == [("reviewer", "Reviewed: fine.")]
    streamed = SequentialBuilder(participants=team()).build().as_agent(name="pair")
    stream = streamed.run("write", stream=True)
    updates = [u async for u in stream]
    assert len(updates) > 1 and {u.author_name for u in updates} == {"reviewer"}
    assert (await stream.get_final_response()).text == "Reviewed: fine."
    # Earlier turns selected as intermediate come first, as they are (the release forwards them as text).
    progress = SequentialBuilder(participants=team(), intermediate_output_from=["writer"]).build().as_agent()
    response = await progress.run("write")
    assert [(m.author_name, m.text) for m in response.messages] == [
        ("writer", "A draft."),
        ("reviewer", "Reviewed: fine."),
    ]
    assert not [c for m in response.messages for c in m.contents if c.type == "text_reasoning"]
