"""``Workflow.run(function_invocation_kwargs=..., client_kwargs=...)``: routed to the run's agents and their tools."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, ChatResponse, Message, tool
from agentnb.local import ScriptedChatClient
from agentnb.workflows import (
    AgentExecutor,
    SequentialBuilder,
    WorkflowBuilder,
    WorkflowExecutor,
    WorkflowInvocationKwargs,
)


def _agent(name: str, seen: list[tuple[str, dict[str, Any]]], *, ask_approval: bool = False) -> Agent:
    """An agent whose one tool records the kwargs it is given (tagged with the agent's name)."""

    @tool(name=f"lookup_{name}", approval_mode="always_require" if ask_approval else "never_require")
    def lookup(city: str, **kwargs: Any) -> str:
        seen.append((name, kwargs))
        return "sunny"

    script = [ScriptedChatClient.call(f"lookup_{name}", city="Oslo"), f"{name} done"]
    return Agent(ScriptedChatClient(script), name=name, tools=[lookup])


async def test_shared_kwargs_reach_every_agents_tools() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    workflow = SequentialBuilder(participants=[_agent("a", seen), _agent("b", seen)]).build()

    await workflow.run("go", function_invocation_kwargs={"user_id": "u-1"})

    assert seen == [("a", {"user_id": "u-1"}), ("b", {"user_id": "u-1"})]


async def test_keys_naming_executors_route_to_those_executors_only() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    workflow = SequentialBuilder(participants=[_agent("a", seen), _agent("b", seen)]).build()

    await workflow.run("go", function_invocation_kwargs={"b": {"token": "for-b"}})

    assert seen == [("a", {}), ("b", {"token": "for-b"})]


async def test_explicit_form_merges_shared_and_per_agent_values_by_agent_name() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    a, b = _agent("a", seen), AgentExecutor(_agent("b", seen), id="node_b")
    workflow = WorkflowBuilder(start_executor=a).add_edge(a, b).build()
    # "b" names the agent of executor "node_b".
    kwargs = WorkflowInvocationKwargs({"user_id": "u-1", "tier": "free"}, {"b": {"tier": "pro"}})

    await workflow.run("go", function_invocation_kwargs=kwargs)

    assert seen == [("a", {"user_id": "u-1", "tier": "free"}), ("b", {"user_id": "u-1", "tier": "pro"})]


async def test_a_fresh_run_forgets_the_previous_runs_kwargs() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    agent = _agent("a", seen)
    agent.client = ScriptedChatClient([ScriptedChatClient.call("lookup_a", city="Oslo"), "one"] * 2)
    workflow = WorkflowBuilder(start_executor=agent).build()

    await workflow.run("first", function_invocation_kwargs={"user_id": "u-1"})
    await workflow.run("second")

    assert seen == [("a", {"user_id": "u-1"}), ("a", {})]
    assert workflow.invocation_kwargs == {}


async def test_answering_a_request_keeps_the_runs_kwargs() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    agent = _agent("a", seen, ask_approval=True)
    workflow = WorkflowBuilder(start_executor=agent).build()

    paused = await workflow.run("go", function_invocation_kwargs={"user_id": "u-1"})
    [request] = paused.get_request_info_events()
    done = await workflow.run(responses={request.request_id or "": True})

    assert [o.text for o in done.get_outputs()] == ["a done"]
    assert seen == [("a", {"user_id": "u-1"})]


async def test_sub_workflow_agents_get_the_shared_and_their_own_entries() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    inner = SequentialBuilder(participants=[_agent("inner", seen)]).build()
    outer = SequentialBuilder(participants=[_agent("outer", seen), WorkflowExecutor(inner, id="sub")]).build()

    kwargs = {"outer": {"who": "outer"}, "inner": {"who": "inner"}}
    await outer.run("go", function_invocation_kwargs=kwargs)

    assert seen == [("outer", {"who": "outer"}), ("inner", {"who": "inner"})]


class _RecordingClient(ScriptedChatClient):
    """A scripted client that also records the provider-call keywords it is given."""

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies)
        self.provider_kwargs: list[dict[str, Any]] = []

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        self.provider_kwargs.append(kwargs)
        return await super()._inner_get_response(messages=messages, options=options)


async def test_client_kwargs_reach_the_chat_client_call() -> None:
    client = _RecordingClient(["hi", "bye"])
    a, b = Agent(client, name="a"), Agent(client, name="b")
    workflow = WorkflowBuilder(start_executor=a).add_edge(a, b).build()

    await workflow.run("go", client_kwargs={"a": {"seed": 7}})

    assert [k.get("seed") for k in client.provider_kwargs] == [7, None]


async def test_per_executor_entries_must_be_mappings() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    workflow = SequentialBuilder(participants=[_agent("a", seen)]).build()

    with pytest.raises(TypeError, match=r"function_invocation_kwargs\['other'\] must be a mapping"):
        await workflow.run("go", function_invocation_kwargs={"a": {"x": 1}, "other": 3})
    assert seen == []


async def test_an_agent_name_and_its_executor_id_cannot_both_be_given() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    agent = _agent("a", seen)
    workflow = WorkflowBuilder(start_executor=AgentExecutor(agent, id="node")).build()
    kwargs = WorkflowInvocationKwargs(executor_kwargs={"a": {"x": 1}, "node": {"x": 2}})

    with pytest.raises(ValueError, match="by both its ID and agent name"):
        await workflow.run("go", function_invocation_kwargs=kwargs)
