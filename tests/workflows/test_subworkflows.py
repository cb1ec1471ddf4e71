"""Sub-workflows: a workflow as a node, its outputs routed on, its requests answered from outside."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from typing_extensions import Never

from agentnb import _serialization as ser
from agentnb.exceptions import WorkflowRunError
from agentnb.workflows import (
    Executor,
    FileCheckpointStorage,
    SubWorkflowRequest,
    SubWorkflowRequestMessage,
    SubWorkflowResponseMessage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
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
    assert node.id == "shouter" and node.input_types == [str, SubWorkflowResponseMessage]  # as in the reference
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


@dataclass
class Mail:
    text: str


class Interceptor(Executor):
    """Answers the sub-workflow's confirmations itself: yes for mail, a wrong type for 'bad'."""

    def __init__(self) -> None:
        super().__init__("interceptor")
        self.seen: list[str] = []

    @handler
    async def start(self, mail: Mail, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(mail.text)

    @handler
    async def intercept(
        self, request: SubWorkflowRequestMessage, ctx: WorkflowContext[SubWorkflowResponseMessage]
    ) -> None:
        self.seen.append(request.source_event.data)
        if "bad" in request.source_event.data:
            request.create_response("not a bool")  # raises TypeError: the request wants a bool
        await ctx.send_message(request.create_response(True), target_id=request.source_executor_id)

    @handler
    async def done(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)


def _intercepted(propagate_request: bool | None = None) -> Workflow:
    inner = WorkflowBuilder(start_executor=Confirm(), name="confirm-flow").build()
    node = WorkflowExecutor(inner, id="sub", propagate_request=propagate_request)
    front = Interceptor()
    return WorkflowBuilder(start_executor=front).add_edge(front, node).add_edge(node, front).build()


async def test_an_outer_executor_intercepts_and_answers_the_inner_request() -> None:
    result = await _intercepted().run(Mail("mail"))
    assert result.get_request_info_events() == []  # answered inside, nothing reached the caller
    assert result.get_outputs() == ["ok to send mail? True (asked 1x)"]
    with pytest.raises(WorkflowRunError, match="TypeError"):
        await _intercepted().run(Mail("bad"))
    # propagate_request=True: the request goes to the caller even though an executor could intercept it.
    propagated = await _intercepted(propagate_request=True).run(Mail("mail"))
    (request,) = propagated.get_request_info_events()
    assert isinstance(request.data, SubWorkflowRequest) and request.data.request_data == "ok to send mail?"


def test_create_response_checks_the_type_and_the_messages_survive_a_checkpoint() -> None:
    event = WorkflowEvent("request_info", "ok?", executor_id="confirm", request_id="r1", response_type=bool)
    message = SubWorkflowRequestMessage(event, executor_id="sub")
    with pytest.raises(TypeError, match="does not match the expected type bool"):
        message.create_response("yes")
    back = ser.loads(ser.dumps(message))
    assert isinstance(back, SubWorkflowRequestMessage) and back.executor_id == "sub"
    assert (back.source_event.data, back.source_event.request_id, back.source_event.response_type) == (
        "ok?",
        "r1",
        bool,
    )
    answer = ser.loads(ser.dumps(back.create_response(True)))
    assert isinstance(answer, SubWorkflowResponseMessage) and answer.data is True
    assert answer.source_event.request_id == "r1"


async def test_allow_direct_output_yields_even_with_outgoing_edges() -> None:
    inner = WorkflowBuilder(start_executor=shout, name="shouter").build()
    node = WorkflowExecutor(inner, id="direct", allow_direct_output=True)
    workflow = WorkflowBuilder(start_executor=node).add_edge(node, collect).build()
    assert (await workflow.run("hi")).get_outputs() == ["HI", "HI!"]


@executor(id="fan")
async def fan(texts: list[str], ctx: WorkflowContext[str]) -> None:
    for text in texts:
        await ctx.send_message(text)


async def test_several_inputs_pause_the_sub_workflow_apart_and_each_answer_continues_its_run(tmp_path: Path) -> None:
    def build_fanned() -> Workflow:
        inner = WorkflowBuilder(start_executor=Confirm(), name="confirm-flow").build()
        node = WorkflowExecutor(inner, id="sub")
        return (
            WorkflowBuilder(start_executor=fan, checkpoint_storage=FileCheckpointStorage(tmp_path))
            .add_edge(fan, node)
            .build()
        )

    paused = await build_fanned().run(["mail", "fax", "memo"])
    requests = paused.get_request_info_events()
    assert sorted(r.data.request_data for r in requests) == ["ok to send fax?", "ok to send mail?", "ok to send memo?"]
    # A fresh graph (as after a restart) answers them all: each continues the inner run that asked.
    answers = {r.request_id or "": r.data.request_data != "ok to send fax?" for r in requests}
    done = await build_fanned().run(checkpoint_id=paused.checkpoint_id, responses=answers)
    assert sorted(done.get_outputs()) == [
        "ok to send fax? False (asked 3x)",
        "ok to send mail? True (asked 3x)",
        "ok to send memo? True (asked 3x)",
    ]
