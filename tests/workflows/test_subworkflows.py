"""Sub-workflows: a workflow as a node, its outputs routed on, its requests answered from outside."""

from __future__ import annotations

from pathlib import Path

from typing_extensions import Never

from agentnb.workflows import (
    Executor,
    FileCheckpointStorage,
    SubWorkflowRequest,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutor,
    executor,
    handler,
    response_handler,
)


@executor(id="shout")
async def shout(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(text.upper())
    await ctx.yield_output(text.upper() + "!")


@executor(id="collect")
async def collect(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(f"got {text}")


class Confirm(Executor):
    def __init__(self) -> None:
        super().__init__("confirm")
        self.asked = 0

    @handler
    async def ask(self, text: str, ctx: WorkflowContext) -> None:
        self.asked += 1
        await ctx.request_info(request_data=f"ok to send {text}?", response_type=bool)

    @response_handler
    async def answered(self, question: str, ok: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{question} {ok} (asked {self.asked}x)")

    def on_checkpoint_save(self) -> dict[str, int]:
        return {"asked": self.asked}

    def on_checkpoint_restore(self, state: dict[str, int]) -> None:
        self.asked = state["asked"]


async def test_inner_outputs_flow_on_or_out() -> None:
    inner = WorkflowBuilder(start_executor=shout, name="shouter").build()
    node = WorkflowExecutor(inner)
    assert node.id == "shouter" and node.input_types == [str]
    chained = WorkflowBuilder(start_executor=node).add_edge(node, collect).build()
    assert (await chained.run("hi")).get_outputs() == ["got HI", "got HI!"]
    alone = WorkflowBuilder(start_executor=WorkflowExecutor(inner, id="solo")).build()
    assert (await alone.run("yo")).get_outputs() == ["YO", "YO!"]


def build(storage: FileCheckpointStorage) -> Workflow:
    inner = WorkflowBuilder(start_executor=Confirm(), name="confirm-flow").build()
    return WorkflowBuilder(start_executor=WorkflowExecutor(inner), checkpoint_storage=storage, name="outer").build()


async def test_inner_requests_are_answered_from_outside_also_after_restart(tmp_path: Path) -> None:
    storage = FileCheckpointStorage(tmp_path)
    paused = await build(storage).run("mail")
    (request,) = paused.get_request_info_events()
    assert isinstance(request.data, SubWorkflowRequest)
    assert request.data.request_data == "ok to send mail?" and request.response_type is bool
    # A fresh outer and inner workflow (as after a restart) continue from the checkpoint.
    done = await build(storage).run(checkpoint_id=paused.checkpoint_id, responses={request.request_id: True})
    assert done.get_outputs() == ["ok to send mail? True (asked 1x)"]
