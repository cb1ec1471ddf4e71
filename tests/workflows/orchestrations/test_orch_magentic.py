"""Magentic: plan and progress ledgers, delegation, stalls and re-planning, limits, plan review."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, Message
from agentnb.exceptions import WorkflowRunError
from agentnb.local import FunctionChatClient
from agentnb.workflows import (
    MagenticBuilder,
    MagenticContext,
    MagenticManagerBase,
    MagenticOrchestratorEvent,
    MagenticOrchestratorEventType,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
    MagenticTaskLedger,
    StandardMagenticManager,
)
from tests.workflows.orchestrations.orch_scenarios import magentic, magentic_agents, summary


async def test_manager_plans_delegates_and_answers() -> None:
    result = await magentic().run("Chart our sales growth")
    (conversation,) = result.get_outputs()
    assert summary(conversation) == [
        ["user", None, "Chart our sales growth", ["text"]],
        ["user", "manager", "Gather the numbers.", ["text"]],
        ["assistant", "researcher", "Sales: 100, 110, 121.", ["text"]],
        ["user", "manager", "Plot them.", ["text"]],
        ["assistant", "coder", "Saved chart.png.", ["text"]],
        ["assistant", "manager", "Sales grew 10% a year; the chart is in chart.png.", ["text"]],
    ]
    assert conversation[-1].additional_properties == {"stop_reason": "done"}
    (plan,) = [e.data for e in result.get_events("magentic_plan")]
    assert isinstance(plan, MagenticTaskLedger) and plan.plan == ["researcher: gather numbers", "coder: plot them"]
    progress = [e.data for e in result.get_events("magentic_progress")]
    assert [p.next_speaker for p in progress] == ["researcher", "coder", None]
    assert [p.is_request_satisfied for p in progress] == [False, False, True]
    assert result.get_events("magentic_completed")[0].data == {"reason": "done", "rounds": 2, "resets": 0}
    assert [r.text for r in result.get_intermediate_outputs()] == ["Sales: 100, 110, 121.", "Saved chart.png."]


async def test_what_the_manager_and_participants_are_sent() -> None:
    sent: dict[str, list[list[Message]]] = {}
    manager_calls: list[tuple[Any, list[Message]]] = []

    def manager(messages: list[Message], options: dict) -> Any:
        manager_calls.append((options.get("response_format"), list(messages)))
        fmt = options.get("response_format")
        if fmt is MagenticTaskLedger:
            return MagenticTaskLedger(facts="F", plan=["worker: do it"])
        if fmt is MagenticProgressLedger:
            done = any(m.author_name == "worker" for m in messages)
            return MagenticProgressLedger(is_request_satisfied=done, next_speaker="worker", instruction="Do step 1.")
        return "All done."

    def worker(messages: list[Message], options: dict) -> str:
        sent.setdefault("worker", []).append(list(messages))
        return "Step 1 done."

    workflow = MagenticBuilder(
        participants=[Agent(FunctionChatClient(worker), name="worker", description="Does the work.")],
        manager_agent=Agent(FunctionChatClient(manager), name="boss"),
    ).build()
    await workflow.run("The task")
    kinds = [fmt.__name__ if fmt else "final" for fmt, _ in manager_calls]
    assert kinds == ["MagenticTaskLedger", "MagenticProgressLedger", "MagenticProgressLedger", "final"]
    plan_prompt = manager_calls[0][1][-1].text
    assert "- worker: Does the work." in plan_prompt
    progress_prompt = manager_calls[1][1][-1].text
    assert "Facts: F" in progress_prompt and "1. worker: do it" in progress_prompt
    (worker_input,) = sent["worker"]
    assert [(m.role, m.author_name, m.text) for m in worker_input] == [
        ("user", None, "The task"),
        ("user", "boss", "Do step 1."),
    ]


def _stalling_manager(plans: list[str]) -> Agent:
    def manager(messages: list[Message], options: dict) -> Any:
        fmt = options.get("response_format")
        if fmt is MagenticTaskLedger:
            plans.append(messages[-1].text)
            return MagenticTaskLedger(facts=f"facts v{len(plans)}", plan=[f"researcher: try #{len(plans)}"])
        if fmt is MagenticProgressLedger:
            return MagenticProgressLedger(
                is_request_satisfied=False,
                is_progress_being_made=False,
                next_speaker="researcher",
                instruction="Again.",
            )
        raise AssertionError("no final answer expected")

    return Agent(FunctionChatClient(manager), name="manager")


async def test_stalls_trigger_replanning_until_the_reset_limit() -> None:
    plans: list[str] = []
    workflow = MagenticBuilder(
        participants=magentic_agents(),
        manager_agent=_stalling_manager(plans),
        max_stall_count=1,
        max_reset_count=2,
        max_round_count=50,
    ).build()
    result = await workflow.run("An impossible task")
    # Two stalled ledgers in a row (more than max_stall_count=1) force a re-plan; the third reset is one too many.
    assert len(plans) == 3
    assert "You lead a team" in plans[0]
    assert "not making progress" in plans[1] and "facts v1" in plans[1] and "researcher: try #1" in plans[1]
    assert "facts v2" in plans[2]
    assert [e.data for e in result.get_events("magentic_replan")] == [
        {"resets": 1, "round": 1},
        {"resets": 2, "round": 2},
    ]
    (conversation,) = result.get_outputs()
    assert conversation[-1].additional_properties == {"stop_reason": "max_reset_count"}
    assert conversation[-1].text == "Stopped before the task was complete: the plan was reset 2 times without progress."
    assert result.get_events("magentic_completed")[0].data == {"reason": "max_reset_count", "rounds": 3, "resets": 3}


async def test_round_limit_stops_the_team() -> None:
    workflow = MagenticBuilder(
        participants=magentic_agents(),
        manager_agent=_stalling_manager([]),
        max_round_count=3,
        max_stall_count=10,
    ).build()
    (conversation,) = (await workflow.run("Loop forever")).get_outputs()
    assert sum(m.author_name == "researcher" for m in conversation) == 3
    assert conversation[-1].additional_properties == {"stop_reason": "max_round_count"}


async def test_plan_review_revise_then_approve_with_an_edited_plan() -> None:
    prompts: list[str] = []

    def manager(messages: list[Message], options: dict) -> Any:
        prompts.append(messages[-1].text)
        fmt = options.get("response_format")
        if fmt is MagenticTaskLedger:
            return MagenticTaskLedger(facts="F", plan=[f"researcher: plan {len(prompts)}"])
        if fmt is MagenticProgressLedger:
            done = any(m.author_name == "coder" for m in messages)
            return MagenticProgressLedger(is_request_satisfied=done, next_speaker="coder", instruction="Code it.")
        return "Done."

    workflow = (
        MagenticBuilder(participants=magentic_agents(), manager_agent=Agent(FunctionChatClient(manager), name="boss"))
        .with_plan_review()
        .build()
    )
    result = await workflow.run("Build it")
    (request,) = result.get_request_info_events()
    assert isinstance(request.data, MagenticPlanReviewRequest)
    assert (request.data.task, request.data.steps, request.data.revision) == ("Build it", ["researcher: plan 1"], 1)
    assert request.data.plan.role == "assistant" and request.data.plan.author_name == "boss"
    assert "1. researcher: plan 1" in request.data.plan.text and "Build it" in request.data.plan.text
    assert (request.data.current_progress, request.data.is_stalled) == (None, False)
    result = await workflow.run(responses={request.request_id: request.data.revise("Use the coder.")})
    (request,) = result.get_request_info_events()
    assert "Feedback on the previous plan: Use the coder." in prompts[-1]
    assert request.data.revision == 2
    result = await workflow.run(
        responses={request.request_id: MagenticPlanReviewResponse.approve(plan=["coder: write the code"])}
    )
    assert "1. coder: write the code" in prompts[2]
    (conversation,) = result.get_outputs()
    assert [m.author_name for m in conversation] == [None, "boss", "coder", "boss"]
    assert conversation[-1].text == "Done."


async def test_unknown_next_speaker_fails_clearly() -> None:
    def manager(messages: list[Message], options: dict) -> Any:
        if options.get("response_format") is MagenticTaskLedger:
            return MagenticTaskLedger(facts="", plan=[])
        return MagenticProgressLedger(is_request_satisfied=False, next_speaker="intern")

    workflow = MagenticBuilder(
        participants=magentic_agents(), manager_agent=Agent(FunctionChatClient(manager), name="boss")
    ).build()
    with pytest.raises(WorkflowRunError, match=r"chose 'intern'.*participants: \['researcher', 'coder'\]"):
        await workflow.run("x")


def test_builder_validation() -> None:
    agents = magentic_agents()
    boss = Agent(FunctionChatClient(lambda m, o: ""), name="boss")
    with pytest.raises(ValueError, match="needs its own name"):
        MagenticBuilder(participants=agents, manager_agent=Agent(FunctionChatClient(lambda m, o: ""), name="coder"))
    with pytest.raises(ValueError, match="max_round_count"):
        MagenticBuilder(participants=agents, manager_agent=boss, max_round_count=0)
    with pytest.raises(ValueError, match="max_stall_count"):
        MagenticBuilder(participants=agents, manager_agent=boss, max_stall_count=-1)
    with pytest.raises(ValueError, match="max_reset_count"):
        MagenticBuilder(participants=agents, manager_agent=boss, max_reset_count=-1)
    with pytest.raises(ValueError, match="needs a name"):
        MagenticBuilder(participants=agents, manager_agent=Agent(FunctionChatClient(lambda m, o: "")))


async def test_a_stall_replan_is_reviewed_with_the_progress_that_caused_it() -> None:
    calls = {"progress": 0}

    def manager(messages: list[Message], options: dict) -> Any:
        fmt = options.get("response_format")
        if fmt is MagenticTaskLedger:
            return MagenticTaskLedger(facts="F", plan=["researcher: look"])
        if fmt is MagenticProgressLedger:
            calls["progress"] += 1
            if calls["progress"] == 1:
                return MagenticProgressLedger(
                    is_request_satisfied=False, is_progress_being_made=False, next_speaker="researcher", reason="stuck"
                )
            return MagenticProgressLedger(is_request_satisfied=True)
        return "Done."

    workflow = MagenticBuilder(
        participants=magentic_agents(),
        manager_agent=Agent(FunctionChatClient(manager), name="boss"),
        enable_plan_review=True,
        max_stall_count=0,
    ).build()
    result = await workflow.run("Build it")
    (first,) = result.get_request_info_events()
    assert first.request_type is MagenticPlanReviewRequest
    result = await workflow.run(responses={first.request_id: first.data.approve()})
    (replan,) = result.get_request_info_events()
    assert replan.data.is_stalled and replan.data.revision == 2
    assert replan.data.current_progress is not None
    assert replan.data.current_progress.to_dict()["reason"] == "stuck"
    # Feedback on a stall re-plan keeps the request marked as stalled.
    result = await workflow.run(responses={replan.request_id: MagenticPlanReviewResponse.revise(["Try", "harder"])})
    (again,) = result.get_request_info_events()
    assert again.data.is_stalled and again.data.revision == 3
    result = await workflow.run(responses={again.request_id: True})
    assert result.get_outputs()[0][-1].text == "Done."


def test_plan_review_responses_in_the_reference_shape() -> None:
    assert MagenticPlanReviewResponse(review=[]).approved
    revised = MagenticPlanReviewResponse.revise(Message("user", ["Shorter."]))
    assert (revised.approved, revised.feedback, revised.review[0].role) == (False, "Shorter.", "user")
    assert MagenticPlanReviewResponse.approve(plan=["a: b"]).plan == ["a: b"]
    with pytest.raises(ValueError, match="needs feedback"):
        MagenticPlanReviewResponse.revise([])


class _CountingManager(MagenticManagerBase):
    """A manager without a model: one round per participant in turn, then it answers from the conversation."""

    def __init__(self, **limits: Any) -> None:
        super().__init__(**limits)
        self.seen: list[MagenticContext] = []

    async def plan(self, magentic_context: MagenticContext) -> Message:
        return Message("assistant", ["1. everyone speaks once"], author_name=self.name)

    async def replan(self, magentic_context: MagenticContext) -> Message:
        return await self.plan(magentic_context)

    async def create_progress_ledger(self, magentic_context: MagenticContext) -> MagenticProgressLedger:
        self.seen.append(MagenticContext.from_dict(magentic_context.to_dict()))
        names = list(magentic_context.participant_descriptions)
        done = magentic_context.round_count >= len(names)
        speaker = None if done else names[magentic_context.round_count]
        return MagenticProgressLedger(is_request_satisfied=done, next_speaker=speaker, instruction="Your turn.")

    async def prepare_final_answer(self, magentic_context: MagenticContext) -> Message:
        said = [m.text for m in magentic_context.chat_history if m.role == "assistant"]
        return Message("assistant", [" + ".join(said)])


def _echo(name: str) -> Agent[Any]:
    return Agent(FunctionChatClient(lambda messages, options: f"{name} says hi"), name=name, description=f"The {name}.")


async def test_a_manager_of_ones_own_drives_the_team() -> None:
    manager = _CountingManager()
    workflow = MagenticBuilder(participants=[_echo("ann"), _echo("bob")], manager=manager).build()
    result = await workflow.run("Say hi, everyone")
    (conversation,) = result.get_outputs()
    assert conversation[-1].text == "ann says hi + bob says hi"
    assert conversation[-1].author_name == "magentic_manager"  # the reference's MAGENTIC_MANAGER_NAME
    assert conversation[-1].additional_properties["stop_reason"] == "done"
    assert [c.round_count for c in manager.seen] == [0, 1, 2]
    first, _, last = manager.seen
    assert first.task == "Say hi, everyone" and first.participant_descriptions == {"ann": "The ann.", "bob": "The bob."}
    assert [m.text for m in last.chat_history] == ["Your turn.", "ann says hi", "Your turn.", "bob says hi"]
    # The plan a manager without a task ledger returns is what the plan event carries.
    (plan,) = result.get_events("magentic_plan")
    assert isinstance(plan.data, Message) and plan.data.text == "1. everyone speaks once"


async def test_a_managers_own_limits_win_and_the_builder_wants_exactly_one_manager() -> None:
    workflow = MagenticBuilder(participants=[_echo("ann"), _echo("bob")], manager=_CountingManager(max_round_count=1))
    (conversation,) = (await workflow.build().run("Say hi")).get_outputs()
    assert conversation[-1].additional_properties["stop_reason"] == "max_round_count"
    with pytest.raises(ValueError, match="exactly one of manager_agent"):
        MagenticBuilder(participants=[_echo("ann")])
    with pytest.raises(ValueError, match="exactly one of manager_agent"):
        MagenticBuilder(participants=[_echo("ann")], manager=_CountingManager(), manager_agent=_echo("boss"))


def test_the_standard_manager_wraps_an_agent_and_keeps_its_ledger_in_checkpoints() -> None:
    agent = _echo("boss")
    manager = StandardMagenticManager(agent, max_stall_count=1, progress_ledger_prompt="Judge: {names}")
    assert (manager.name, manager.max_stall_count, manager.progress_ledger_prompt) == ("boss", 1, "Judge: {names}")
    manager.task_ledger = MagenticTaskLedger(facts="F", plan=["ann: hi"])
    state = manager.on_checkpoint_save()
    fresh = StandardMagenticManager(agent)
    fresh.on_checkpoint_restore(state)
    assert fresh.task_ledger == manager.task_ledger
    fresh.reset()
    assert fresh.task_ledger is None
    context = MagenticContext(task="T", chat_history=[Message("user", ["x"])])
    context.reset()
    assert (context.chat_history, context.reset_count) == ([], 1)


async def test_plans_and_ledgers_also_come_as_the_references_orchestrator_events() -> None:
    result = await magentic().run("Chart our sales growth")
    events = [e.data for e in result.get_events("magentic_orchestrator")]
    assert all(isinstance(e, MagenticOrchestratorEvent) for e in events)
    assert [e.event_type for e in events] == [
        MagenticOrchestratorEventType.PLAN_CREATED,
        *[MagenticOrchestratorEventType.PROGRESS_LEDGER_UPDATED] * 3,
    ]
    plan, *ledgers = events
    assert isinstance(plan.content, Message) and "1. researcher: gather numbers" in plan.content.text
    assert [ledger.content for ledger in ledgers] == [e.data for e in result.get_events("magentic_progress")]
