"""The reference's orchestration helper names: ledger items, the Magentic reset, the shared state shape."""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import Never

from agentnb import Agent, AgentResponse, Message
from agentnb.local import FunctionChatClient
from agentnb.orchestrations import (
    GroupChatRequestMessage,
    MagenticAgentExecutor,
    MagenticProgressLedger,
    MagenticProgressLedgerItem,
    MagenticResetSignal,
    OrchestrationState,
)
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor


def test_a_ledger_written_with_items_keeps_the_answers_and_their_reasons() -> None:
    ledger = MagenticProgressLedger(
        is_request_satisfied=MagenticProgressLedgerItem(answer=False, reason="Half done."),
        is_in_loop=MagenticProgressLedgerItem(answer=False, reason="New steps each round."),
        is_progress_being_made={"answer": True, "reason": "Half done."},
        next_speaker=MagenticProgressLedgerItem(answer="coder", reason="Code is next."),
        instruction_or_question=MagenticProgressLedgerItem(answer="Write the script.", reason=""),
    )

    assert (ledger.is_request_satisfied, ledger.is_progress_being_made, ledger.next_speaker) == (False, True, "coder")
    assert ledger.instruction == "Write the script."
    assert ledger.reason == "Half done. New steps each round. Code is next."
    assert MagenticProgressLedgerItem.from_dict({"answer": 3}).to_dict() == {"reason": "", "answer": ""}


async def test_a_magentic_agent_executor_forgets_its_conversation_on_a_reset() -> None:
    seen: list[int] = []

    def reply(messages: list[Message], options: dict[str, Any]) -> str:
        seen.append(len(messages))
        return "noted"

    participant = MagenticAgentExecutor(Agent(FunctionChatClient(reply), name="scribe"))

    @executor(id="driver")
    async def driver(text: str, ctx: WorkflowContext[str | MagenticResetSignal]) -> None:
        await ctx.send_message(text)

    @executor(id="resetter")
    async def resetter(response: Any, ctx: WorkflowContext[MagenticResetSignal | str, Never]) -> None:
        if seen == [1]:  # after the first answer: reset, then ask again
            await ctx.send_message(MagenticResetSignal())
            await ctx.send_message("again")

    workflow = (
        WorkflowBuilder(start_executor=driver, output_from=[participant])
        .add_edge(driver, participant)
        .add_edge(participant, resetter)
        .add_edge(resetter, participant)
        .build()
    )

    outputs = (await workflow.run("first")).get_outputs()

    assert [o.text for o in outputs if isinstance(o, AgentResponse)] == ["noted", "noted"]
    assert seen == [1, 1]  # the second turn saw only "again", not the forgotten first exchange


def test_orchestration_state_round_trips_through_json() -> None:
    state = OrchestrationState(
        [Message("user", ["Plan a trip"]), Message("assistant", ["Day 1: Rome"], author_name="planner")],
        round_index=3,
        orchestrator_name="group_chat_manager",
        metadata={"stalls": 1},
        task=Message("user", ["Plan a trip"]),
    )

    back = OrchestrationState.from_dict(json.loads(json.dumps(state.to_dict())))

    assert back == state
    assert "task" not in OrchestrationState().to_dict()
    assert GroupChatRequestMessage("Be brief.", {"round": 2}).additional_instruction == "Be brief."
