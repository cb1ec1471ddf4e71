"""Human input: request_info pauses a run; responses resume it (in process and from a checkpoint)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from typing_extensions import Never

from agentnb.workflows import (
    Executor,
    InMemoryCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    handler,
    response_handler,
)


@dataclass
class Question:
    text: str


class Guesser(Executor):
    """Asks for numbers until it hears 7; keeps count of guesses."""

    def __init__(self) -> None:
        super().__init__("guesser")
        self.tries = 0

    @handler
    async def start(self, prompt: str, ctx: WorkflowContext) -> None:
        await ctx.request_info(request_data=Question(prompt), response_type=int)

    @response_handler
    async def answered(self, question: Question, guess: int, ctx: WorkflowContext[Never, str]) -> None:
        self.tries += 1
        if guess == 7:
            await ctx.yield_output(f"found after {self.tries} tries")
        else:
            await ctx.request_info(request_data=Question(f"{guess} is wrong, again"), response_type=int)

    def on_checkpoint_save(self) -> dict[str, int]:
        return {"tries": self.tries}

    def on_checkpoint_restore(self, state: dict[str, int]) -> None:
        self.tries = state["tries"]


async def test_request_pauses_and_responses_resume_in_process() -> None:
    workflow = WorkflowBuilder(start_executor=Guesser()).build()
    first = await workflow.run("guess a number")
    assert first.get_final_state() == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    (request,) = first.get_request_info_events()
    assert request.data == Question("guess a number") and request.response_type is int
    assert request.executor_id == "guesser"
    assert [e.request_id for e in workflow.pending_requests] == [request.request_id]
    second = await workflow.run(responses={request.request_id: 3})
    (again,) = second.get_request_info_events()
    assert again.data == Question("3 is wrong, again")
    third = await workflow.run(responses={again.request_id: 7})
    assert third.get_outputs() == ["found after 2 tries"]
    assert third.get_final_state() == WorkflowRunState.IDLE
    assert workflow.pending_requests == []


async def test_bad_responses_change_nothing() -> None:
    workflow = WorkflowBuilder(start_executor=Guesser()).build()
    (request,) = (await workflow.run("go")).get_request_info_events()
    with pytest.raises(TypeError, match="must be int, got str"):
        await workflow.run(responses={request.request_id: "seven"})
    with pytest.raises(ValueError, match="No pending request 'nope'"):
        await workflow.run(responses={"nope": 7, request.request_id: 7})
    # The request is still pending and can be answered properly.
    assert (await workflow.run(responses={request.request_id: 7})).get_outputs() == ["found after 1 tries"]
    with pytest.raises(ValueError, match="no pending requests"):
        await workflow.run(responses={request.request_id: 7})


async def test_responses_after_restart_from_checkpoint() -> None:
    storage = InMemoryCheckpointStorage()
    paused = await WorkflowBuilder(start_executor=Guesser(), checkpoint_storage=storage).build().run("go")
    (request,) = paused.get_request_info_events()
    again = (
        await WorkflowBuilder(start_executor=Guesser(), checkpoint_storage=storage)
        .build()
        .run(checkpoint_id=paused.checkpoint_id, responses={request.request_id: 1})
    )
    (request2,) = again.get_request_info_events()
    # A fresh object again: the executor state (tries=1) comes back from the checkpoint.
    done = (
        await WorkflowBuilder(start_executor=Guesser(), checkpoint_storage=storage)
        .build()
        .run(checkpoint_id=again.checkpoint_id, responses={request2.request_id: 7})
    )
    assert done.get_outputs() == ["found after 2 tries"]


async def test_resuming_without_answers_announces_the_open_requests() -> None:
    storage = InMemoryCheckpointStorage()
    paused = await WorkflowBuilder(start_executor=Guesser(), checkpoint_storage=storage).build().run("go")
    resumed = (
        await WorkflowBuilder(start_executor=Guesser(), checkpoint_storage=storage)
        .build()
        .run(checkpoint_id=paused.checkpoint_id)
    )
    assert [e.request_id for e in resumed.get_request_info_events()] == [
        e.request_id for e in paused.get_request_info_events()
    ]
    assert resumed.get_final_state() == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS


async def test_request_without_matching_response_handler_fails_early() -> None:
    class Careless(Executor):
        @handler
        async def start(self, prompt: str, ctx: WorkflowContext) -> None:
            await ctx.request_info(request_data=prompt, response_type=int)

    from agentnb.exceptions import WorkflowRunError

    with pytest.raises(WorkflowRunError, match="no @response_handler taking"):
        await WorkflowBuilder(start_executor=Careless()).build().run("x")
