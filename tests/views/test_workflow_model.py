"""One workflow view model: the notebook's and the DevUI's views, and the DevUI's run list, read the same states."""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import Never

from agentnb.store import RunStore
from agentnb.views import WorkflowViewModel
from agentnb.workflows import (
    Executor,
    InMemoryCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)


@executor(id="upper")
async def upper(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.upper())


class Ask(Executor):
    @handler
    async def start(self, text: str, ctx: WorkflowContext) -> None:
        await ctx.request_info(request_data=f"ok to send {text}?", response_type=str)

    @response_handler
    async def got(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(answer)


def _workflow(store: RunStore) -> Any:
    return WorkflowBuilder(start_executor=upper, name="asking", run_store=store).add_edge(upper, Ask("ask")).build()


async def test_the_model_holds_nodes_edges_states_outputs_and_requests() -> None:
    store = RunStore(":memory:")
    workflow = _workflow(store)
    model = WorkflowViewModel(workflow)
    assert model.nodes == ["upper", "ask"] and model.edges == [("upper", "ask")]
    storage = InMemoryCheckpointStorage()
    async for event in workflow.run("hi", stream=True, checkpoint_storage=storage):
        model.apply(event)
    assert model.states == {"upper": "completed", "ask": "waiting"}  # completing does not hide the question
    (request,) = model.requests.values()
    assert request.data == "ok to send HI?" and model.last["ask"]["request"] == "ok to send HI?"
    assert model.last["upper"]["input"] == "hi"
    # The stored events replay to the same states (the DevUI's run list).
    assert WorkflowViewModel().replay(store.list_events(model.run_id or "")).states == model.states
    # A checkpoint before "ask" ran shows it as next.
    first = (await storage.list_checkpoints(workflow_name="asking"))[0]
    assert model.states_at(first) == {"upper": "next"}

    model.new_run(clear_states=False)
    async for event in workflow.run(stream=True, responses={request.request_id: "yes"}, checkpoint_storage=storage):
        model.apply(event)
    assert model.outputs == ["yes"] and model.states["ask"] == "completed" and not model.requests


@pytest.mark.parametrize("front_end", ["notebook", "devui"])
async def test_both_views_render_the_one_model(front_end: str) -> None:
    store = RunStore(":memory:")
    workflow = _workflow(store)
    if front_end == "notebook":
        from agentnb.notebook import WorkflowView

        view: Any = WorkflowView(workflow, run_store=store)
        view.run("hi", display=False)
        await view.wait()
    else:
        from agentnb.devui import Entity
        from agentnb.devui._workflow import WorkflowView as DevUIWorkflowView

        view = DevUIWorkflowView(Entity(id="asking", name="asking", kind="workflow", obj=workflow), store=store)
        await view.run(message="hi")
        assert view.graph.states == view.model.states
    assert isinstance(view.model, WorkflowViewModel)
    assert view.model.states == {"upper": "completed", "ask": "waiting"}
    assert view.model.run_id is not None and view.run_id == view.model.run_id


def test_one_value_to_text_for_every_view() -> None:
    from dataclasses import dataclass

    from agentnb import Message
    from agentnb._plain import value_text
    from agentnb.devui._runs import events_frame

    @dataclass
    class Order:
        id: int
        note: str

    assert value_text("plain words") == "plain words"
    assert value_text(Message("assistant", ["hello"])) == "hello"
    assert value_text(Order(7, "ünïcode")) == '{"id": 7, "note": "ünïcode"}'  # fields, no type tags
    assert value_text("x" * 50, 10) == "x" * 9 + "…"
    frame = events_frame([{"seq": 0, "type": "output", "data": {"order": Order(7, "n")}}])
    assert frame["data"][0] == '{"order": {"id": 7, "note": "n"}}'
