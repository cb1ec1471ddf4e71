"""Behaviour the reference's own tests pin down: how failures surface, and a workflow run as an agent."""

from __future__ import annotations

import pickle
from typing import Any, TypeVar
from typing import Generic as Generic_

import pytest
from typing_extensions import Never

from agentnb import Agent, AgentSession, Message, tool
from agentnb.exceptions import (
    CheckpointMismatchError,
    EdgeDuplicationError,
    ExecutorInputError,
    GraphConnectivityError,
    HandlerSignatureError,
    WorkflowRunError,
    WorkflowValidationError,
)
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import (
    AgentExecutor,
    Edge,
    Executor,
    InMemoryCheckpointStorage,
    Workflow,
    WorkflowBuilder,
    WorkflowCheckpoint,
    WorkflowContext,
    WorkflowEvent,
    WorkflowEventSource,
    WorkflowExecutor,
    executor,
    handler,
    response_handler,
    validate_workflow_graph,
    workflow,
)


class QuotaError(Exception):
    """An exception of the caller's own, with an attribute the handler sets."""

    def __init__(self, remaining: int) -> None:
        super().__init__(f"quota left: {remaining}")
        self.remaining = remaining


async def test_an_executor_error_leaves_run_as_its_own_type_and_as_workflow_run_error() -> None:
    @executor(id="charge")
    async def charge(amount: int, ctx: WorkflowContext[Never, int]) -> None:
        raise QuotaError(3)

    wf = WorkflowBuilder(start_executor=charge, name="billing").build()
    with pytest.raises(QuotaError, match="quota left: 3") as info:
        await wf.run(5)
    error = info.value
    assert isinstance(error, WorkflowRunError)  # agentnb's catch-all still catches it
    assert error.remaining == 3  # the original's attributes are readable
    assert "'charge' failed in superstep 1 of workflow 'billing'" in str(error)
    assert type(error.__cause__) is QuotaError and error.__cause__.remaining == 3
    # The combined class lives only in this process: pickled, it travels as a plain WorkflowRunError.
    copied = pickle.loads(pickle.dumps(error))
    assert type(copied) is WorkflowRunError and str(copied) == str(error)


async def test_builtin_errors_from_nested_workflows_and_functional_workflows_keep_their_type() -> None:
    @executor(id="lookup")
    async def lookup(key: str, ctx: WorkflowContext[Never, str]) -> None:
        raise KeyError(key)

    inner = WorkflowBuilder(start_executor=lookup, name="inner").build()
    outer = WorkflowBuilder(start_executor=WorkflowExecutor(inner, id="sub"), name="outer").build()
    with pytest.raises(KeyError) as info:
        await outer.run("missing")
    assert isinstance(info.value, WorkflowRunError)
    assert "'sub' failed" in str(info.value) and "'lookup' failed" in str(info.value)

    @workflow
    async def divide(n: int) -> float:
        return 1 / n

    with pytest.raises(ZeroDivisionError, match="failed in its own code"):
        await divide.build().run(0)


async def test_workflow_agent_keeps_history_in_the_session() -> None:
    seen: list[list[str]] = []

    def reply(messages: list[Message], options: dict[str, Any]) -> str:
        seen.append([m.text for m in messages])
        return f"answer {len(seen)}"

    inner = Agent(FunctionChatClient(reply), name="inner")
    agent = WorkflowBuilder(start_executor=inner).build().as_agent(name="outer")
    session = AgentSession()
    assert (await agent.run("my name is Ada", session=session)).text == "answer 1"
    assert (await agent.run("what is my name?", session=session)).text == "answer 2"
    assert seen[1] == ["my name is Ada", "answer 1", "what is my name?"]
    stream = agent.run("and again?", stream=True, session=session)
    _ = [u async for u in stream]
    assert seen[2] == ["my name is Ada", "answer 1", "what is my name?", "answer 2", "and again?"]
    # Without a session each turn starts afresh.
    await agent.run("alone")
    assert seen[3] == ["alone"]


async def test_workflow_agent_shows_an_inner_approval_request_as_itself() -> None:
    calls: list[str] = []

    @tool(approval_mode="always_require")
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        calls.append(env)
        return f"deployed to {env}"

    client = ScriptedChatClient([ScriptedChatClient.call("deploy", env="prod"), "Done: deployed to prod."])
    ops = Agent(client, name="ops", tools=[deploy])
    agent = WorkflowBuilder(start_executor=ops).build().as_agent(name="pipeline")
    paused = await agent.run("ship it")
    (request,) = paused.user_input_requests
    assert request.type == "function_approval_request"
    assert request.function_call is not None
    assert request.function_call.name == "deploy"
    assert request.function_call.parse_arguments() == {"env": "prod"}
    assert calls == []
    done = await agent.run(Message("user", [request.to_function_approval_response(True)]))
    assert calls == ["prod"]
    assert done.text == "Done: deployed to prod."


T = TypeVar("T")


def test_handlers_the_reference_refuses_are_refused_where_the_class_is_written() -> None:
    with pytest.raises(HandlerSignatureError, match="unresolved TypeVar"):

        class Generic(Executor, Generic_[T]):
            @handler
            async def take(self, message: T, ctx: WorkflowContext[T]) -> None:
                await ctx.send_message(message)

    with pytest.raises(ValueError, match="invalid type entry: \\[123\\]"):

        class NotAType(Executor):
            @handler
            async def take(self, message: str, ctx: WorkflowContext[123]) -> None:  # type: ignore[valid-type]
                return None

    with pytest.raises(TypeError, match="must have a WorkflowContext"):

        class Unannotated(Executor):
            @handler
            async def take(self, message: str, ctx) -> None:  # type: ignore[no-untyped-def]
                return None

    # What the decorator states explicitly needs no hint, as in the reference.
    class Explicit(Executor):
        @handler(input=str, output=str, workflow_output=str)
        async def take(self, message, ctx) -> None:  # type: ignore[no-untyped-def]
            await ctx.yield_output(message)

    assert WorkflowBuilder(start_executor=Explicit("e")).build().executors["e"].input_types == [str]


async def test_an_input_the_start_executor_cannot_take_is_refused_before_the_run() -> None:
    @executor(id="words")
    async def words(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    wf = WorkflowBuilder(start_executor=words).build()
    with pytest.raises(RuntimeError, match="cannot handle input of type 'int'") as info:
        await wf.run(3)
    assert isinstance(info.value, ExecutorInputError) and info.value.accepted == ["str"]
    assert wf.state is None


def test_output_from_must_name_executors_in_the_graph() -> None:
    @executor(id="start")
    async def start(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    @executor(id="elsewhere")
    async def elsewhere(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    with pytest.raises(
        WorkflowValidationError, match="Output executor 'elsewhere' is not present in the workflow graph"
    ):
        WorkflowBuilder(start_executor=start, output_from=[elsewhere]).build()
    with pytest.raises(WorkflowValidationError, match="Intermediate executor 'ghost' is not present"):
        WorkflowBuilder(start_executor=start, intermediate_output_from=["ghost"]).build()
    assert WorkflowBuilder(start_executor=start, output_from=[start]).build().get_output_executors()[0].id == "start"


async def test_a_checkpoint_does_not_resume_over_a_changed_nested_workflow() -> None:
    class Ask(Executor):
        @handler
        async def ask(self, text: str, ctx: WorkflowContext) -> None:
            await ctx.request_info(request_data=text, response_type=str)

        @response_handler
        async def answered(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(answer)

    @executor(id="polish")
    async def polish(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text.title())

    def outer(inner_chain: bool) -> Workflow:
        inner = WorkflowBuilder(start_executor=Ask("ask"), name="inner")
        if inner_chain:
            inner = WorkflowBuilder(start_executor=Ask("ask"), name="inner", output_from=["ask"])
            inner.add_edge("ask", polish)
        return WorkflowBuilder(start_executor=WorkflowExecutor(inner.build(), id="sub"), name="outer").build()

    storage = InMemoryCheckpointStorage()
    first = outer(False)
    paused = await first.run("name?", checkpoint_storage=storage)
    assert paused.checkpoint_id is not None
    assert outer(False).graph_signature == first.graph_signature  # rebuilt the same: resumable
    with pytest.raises(CheckpointMismatchError):
        await outer(True).run(checkpoint_id=paused.checkpoint_id, checkpoint_storage=storage)


async def test_edges_and_graph_validation_under_the_reference_names() -> None:
    @executor(id="src")
    async def src(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    @executor(id="dst")
    async def dst(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    async def is_long(text: Any) -> bool:
        return len(text) > 3

    edge = Edge("src", "dst", condition=is_long)
    assert (edge.id, edge.has_condition, edge.condition_name) == ("src->dst", True, "is_long")
    assert await edge.should_route("long text") and not await edge.should_route("no")
    assert await Edge("a", "b").should_route(None)
    with pytest.raises(ValueError, match="source_id"):
        Edge("", "b")

    wf = WorkflowBuilder(start_executor=src).add_edge(src, dst, condition=is_long).build()
    assert [e.id for g in wf.edge_groups for e in g.edges] == ["src->dst"]
    executors = wf.executors
    validate_workflow_graph(wf.edge_groups, executors, executors["src"], ["dst"])
    with pytest.raises(EdgeDuplicationError, match=r"Duplicate edge detected: src->dst"):
        validate_workflow_graph([*wf.edge_groups, *wf.edge_groups], executors, executors["src"], [])
    with pytest.raises(GraphConnectivityError, match=r"unreachable from the start executor 'src': \['dst'\]"):
        validate_workflow_graph([], executors, executors["src"], [])
    with pytest.raises(WorkflowValidationError, match="Output executor 'nowhere' is not present"):
        validate_workflow_graph(wf.edge_groups, executors, executors["src"], ["nowhere"])
    with pytest.raises(WorkflowValidationError, match="both output and intermediate"):
        validate_workflow_graph(wf.edge_groups, executors, executors["src"], ["dst"], ["dst"])


async def test_an_edge_the_hints_cannot_check_still_runs() -> None:
    # The reference's shape: a handler that sends with a bare WorkflowContext hint.
    @executor(id="loose")
    async def loose(text: str, ctx: WorkflowContext) -> None:
        await ctx.send_message(text.upper())  # type: ignore[arg-type]

    @executor(id="sink")
    async def sink(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text + "!")

    wf = WorkflowBuilder(start_executor=loose).add_edge(loose, sink).build()
    assert wf.executors["loose"].output_types == []
    assert (await wf.run("hey")).get_outputs() == ["HEY!"]


async def test_event_origin_says_whether_the_runner_or_an_executor_emitted_it() -> None:
    @executor(id="say")
    async def say(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.add_event(WorkflowEvent("note", text))
        await ctx.yield_output(text)

    result = await WorkflowBuilder(start_executor=say).build().run("hi")
    origins = {e.type: e.origin for e in result}
    assert "started" not in origins and "status" not in origins  # streamed only / in status_timeline()
    assert origins["superstep_started"] is WorkflowEventSource.FRAMEWORK
    assert origins["executor_invoked"] is WorkflowEventSource.FRAMEWORK
    assert origins["note"] is WorkflowEventSource.EXECUTOR
    assert origins["output"] is WorkflowEventSource.EXECUTOR


async def test_agent_executor_context_mode_chooses_what_the_previous_agent_passes_on() -> None:
    def conversation_of(name: str, seen: dict[str, list[str]]) -> Agent[Any]:
        def reply(messages: list[Message], options: dict[str, Any]) -> str:
            seen[name] = [m.text for m in messages]
            return f"{name} done"

        return Agent(FunctionChatClient(reply), name=name)

    async def run(**mode: Any) -> list[str]:
        seen: dict[str, list[str]] = {}
        first = AgentExecutor(conversation_of("first", seen))
        second = AgentExecutor(conversation_of("second", seen), **mode)
        await WorkflowBuilder(start_executor=first).add_edge(first, second).build().run("task")
        return seen["second"]

    assert await run() == ["task", "first done"]
    assert await run(context_mode="last_agent") == ["first done"]
    assert await run(context_mode="custom", context_filter=lambda msgs: msgs[:1]) == ["task"]
    with pytest.raises(ValueError, match="context_filter must be provided"):
        AgentExecutor(conversation_of("x", {}), context_mode="custom")
    with pytest.raises(ValueError, match="context_mode must be one of"):
        AgentExecutor(conversation_of("x", {}), context_mode="everything")  # type: ignore[arg-type]


def test_a_checkpoint_takes_the_references_field_names() -> None:
    cp = WorkflowCheckpoint(
        workflow_name="demo",
        graph_signature_hash="abc",
        previous_checkpoint_id="p1",
        iteration_count=3,
        timestamp="2026-01-01T00:00:00+00:00",
    )
    assert (cp.graph_signature, cp.parent_id, cp.step, cp.created_at) == ("abc", "p1", 3, "2026-01-01T00:00:00+00:00")
    assert cp.graph_signature_hash == "abc" and cp.checkpoint_id  # a fresh id when none is given
    assert WorkflowCheckpoint.from_json(cp.to_json()) == cp
    assert cp.copy(step=4).iteration_count == 4
    with pytest.raises(ValueError, match="both given"):
        WorkflowCheckpoint(workflow_name="demo", graph_signature="a", graph_signature_hash="b")
    with pytest.raises(TypeError, match="needs graph_signature"):
        WorkflowCheckpoint(workflow_name="demo")
