"""Orchestration scenarios on the offline models, shared by the tests and the fresh-process driver.

Every model here is a ``FunctionChatClient`` whose answer depends only on the messages it is given, so
the same scenario built in another process continues a checkpoint exactly where it stopped.
"""

from __future__ import annotations

from typing import Any

from agentnb import Agent, AgentResponse, Content, Message, tool
from agentnb.local import FunctionChatClient
from agentnb.workflows import (
    CheckpointStorage,
    ConcurrentBuilder,
    GroupChatBuilder,
    GroupChatDecision,
    HandoffBuilder,
    MagenticBuilder,
    MagenticProgressLedger,
    MagenticTaskLedger,
    SequentialBuilder,
    Workflow,
)

DEPLOYS: list[str] = []


def summary(conversation: list[Message] | AgentResponse) -> list[list[Any]]:
    """A comparable form of a conversation (or a response's messages): role, author, text and content types."""
    messages = conversation.messages if isinstance(conversation, AgentResponse) else conversation
    return [[m.role, m.author_name, m.text, [c.type for c in m.contents]] for m in messages]


def _last_user(messages: list[Message]) -> str:
    return next((m.text for m in reversed(messages) if m.role == "user" and m.text), "")


def _tool_names(options: dict[str, Any]) -> list[str]:
    return [t.name for t in options.get("tools") or []]


def _call(name: str, messages: list[Message], **arguments: Any) -> Content:
    # Deterministic ids: the same conversation gives the same call in every process.
    return Content.from_function_call(f"call_{name}_{len(messages)}", name, arguments)


# -- sequential -------------------------------------------------------------------------------------------
def sequential(storage: CheckpointStorage | None = None, **options: Any) -> Workflow:
    writer = Agent(FunctionChatClient(lambda m, o: f"Draft about {_last_user(m)}."), name="writer")
    reviewer = Agent(
        FunctionChatClient(lambda m, o: f"Reviewed {len(m)} messages; last was {m[-1].author_name}."),
        name="reviewer",
    )
    editor = Agent(FunctionChatClient(lambda m, o: f"Final: {m[-2].text.upper()}"), name="editor")
    return SequentialBuilder(participants=[writer, reviewer, editor], checkpoint_storage=storage, **options).build()


# -- concurrent -------------------------------------------------------------------------------------------
def concurrent_agents() -> list[Agent]:
    return [
        Agent(FunctionChatClient(lambda m, o: f"Research on {_last_user(m)}: 3 sources."), name="researcher"),
        Agent(FunctionChatClient(lambda m, o: f"Marketing angle for {_last_user(m)}."), name="marketer"),
        Agent(FunctionChatClient(lambda m, o: f"Legal risk for {_last_user(m)}: low."), name="legal"),
    ]


def concurrent(storage: CheckpointStorage | None = None) -> Workflow:
    return ConcurrentBuilder(participants=concurrent_agents(), checkpoint_storage=storage).build()


# -- handoff ----------------------------------------------------------------------------------------------
def _triage(messages: list[Message], options: dict[str, Any]) -> Any:
    text = _last_user(messages).lower()
    tools = _tool_names(options)
    if "refund" in text and "handoff_to_billing" in tools:
        return [Content.from_text("Let me get billing."), _call("handoff_to_billing", messages)]
    if "broken" in text and "handoff_to_tech" in tools:
        return _call("handoff_to_tech", messages)
    return "How can I help?"


def _billing(messages: list[Message], options: dict[str, Any]) -> Any:
    text = _last_user(messages).lower()
    if "broken" in text and "handoff_to_tech" in _tool_names(options):
        return _call("handoff_to_tech", messages)
    if "order" in text:
        number = "".join(ch for ch in text if ch.isdigit())
        return f"Refund for order {number} issued."
    return "Which order should I refund?"


def _tech(messages: list[Message], options: dict[str, Any]) -> Any:
    return f"Tech support: try restarting it ({len(messages)} messages so far)."


def handoff_agents() -> list[Agent]:
    return [
        Agent(FunctionChatClient(_triage), name="triage", description="Routes customers."),
        Agent(FunctionChatClient(_billing), name="billing", description="Refunds and invoices."),
        Agent(FunctionChatClient(_tech), name="tech", description="Broken devices."),
    ]


def handoff(storage: CheckpointStorage | None = None) -> Workflow:
    triage, billing, tech = handoff_agents()
    return (
        HandoffBuilder(participants=[triage, billing, tech], checkpoint_storage=storage)
        .with_start_agent(triage)
        .add_handoff(triage, [billing, tech])
        .add_handoff(billing, [tech])
        .build()
    )


# -- group chat -------------------------------------------------------------------------------------------
def _spoken(messages: list[Message], name: str) -> int:
    return sum(1 for m in messages if m.role == "assistant" and m.author_name == name)


def _moderator(messages: list[Message], options: dict[str, Any]) -> Any:
    assert options.get("response_format") is GroupChatDecision
    writer, critic = _spoken(messages, "writer"), _spoken(messages, "critic")
    if writer >= 2 and critic >= 1:
        return GroupChatDecision(terminate=True, reason="approved", final_message="The slogan is ready.")
    speaker = "writer" if writer <= critic else "critic"
    return GroupChatDecision(next_speaker=speaker, reason=f"{speaker} is next")


def group_chat_agents() -> list[Agent]:
    return [
        Agent(
            FunctionChatClient(lambda m, o: f"Slogan v{_spoken(m, 'writer') + 1}: Fresh every day."),
            name="writer",
            description="Writes slogans.",
        ),
        Agent(FunctionChatClient(lambda m, o: "Make it shorter."), name="critic", description="Critiques."),
    ]


def group_chat(storage: CheckpointStorage | None = None) -> Workflow:
    moderator = Agent(FunctionChatClient(_moderator), name="moderator")
    return GroupChatBuilder(
        participants=group_chat_agents(), orchestrator_agent=moderator, max_rounds=6, checkpoint_storage=storage
    ).build()


# -- magentic ---------------------------------------------------------------------------------------------
def _manager(messages: list[Message], options: dict[str, Any]) -> Any:
    fmt = options.get("response_format")
    if fmt is MagenticTaskLedger:
        return MagenticTaskLedger(
            facts="The task needs numbers and a chart.", plan=["researcher: gather numbers", "coder: plot them"]
        )
    if fmt is MagenticProgressLedger:
        if _spoken(messages, "researcher") == 0:
            return MagenticProgressLedger(
                is_request_satisfied=False, next_speaker="researcher", instruction="Gather the numbers."
            )
        if _spoken(messages, "coder") == 0:
            return MagenticProgressLedger(is_request_satisfied=False, next_speaker="coder", instruction="Plot them.")
        return MagenticProgressLedger(is_request_satisfied=True, reason="numbers and chart are done")
    return "Sales grew 10% a year; the chart is in chart.png."


def magentic_agents() -> list[Agent]:
    return [
        Agent(FunctionChatClient(lambda m, o: "Sales: 100, 110, 121."), name="researcher", description="Finds data."),
        Agent(FunctionChatClient(lambda m, o: "Saved chart.png."), name="coder", description="Writes code."),
    ]


def magentic(storage: CheckpointStorage | None = None, *, plan_review: bool = False) -> Workflow:
    manager = Agent(FunctionChatClient(_manager), name="manager")
    return MagenticBuilder(
        participants=magentic_agents(),
        manager_agent=manager,
        max_round_count=5,
        enable_plan_review=plan_review,
        checkpoint_storage=storage,
    ).build()


# -- a participant whose tool needs approval ----------------------------------------------------------------
@tool(approval_mode="always_require")
def deploy(version: str) -> str:
    """Deploy a version to production."""
    DEPLOYS.append(version)
    return f"version {version} is live"


def _ops(messages: list[Message], options: dict[str, Any]) -> Any:
    last = messages[-1]
    results = [c for c in last.contents if c.type == "function_result"]
    if last.role == "tool" and results:
        outcome = results[0].exception or results[0].result
        return f"Deploy finished: {outcome}"
    return _call("deploy", messages, version="1.2")


def ops_agent() -> Agent:
    return Agent(FunctionChatClient(_ops), name="ops", description="Deploys releases.", tools=[deploy])


def approval_workflow(kind: str, storage: CheckpointStorage | None = None) -> Workflow:
    """An orchestration of ``kind`` in which the ``ops`` participant asks to run the approval-gated tool."""
    ops = ops_agent()
    helper = Agent(FunctionChatClient(lambda m, o: "Release notes written."), name="helper")
    if kind == "sequential":
        return SequentialBuilder(participants=[helper, ops], checkpoint_storage=storage).build()
    if kind == "concurrent":
        return ConcurrentBuilder(participants=[ops, helper], checkpoint_storage=storage).build()
    if kind == "group_chat":
        return GroupChatBuilder(
            participants=[ops, helper],
            selection_func=lambda state: ["ops", "helper"][state.current_round],
            max_rounds=2,
            checkpoint_storage=storage,
        ).build()
    if kind == "handoff":
        return HandoffBuilder(participants=[ops, helper], checkpoint_storage=storage).with_start_agent(ops).build()
    if kind == "magentic":

        def manager(messages: list[Message], options: dict[str, Any]) -> Any:
            if options.get("response_format") is MagenticTaskLedger:
                return MagenticTaskLedger(facts="Version 1.2 is ready.", plan=["ops: deploy 1.2"])
            if options.get("response_format") is MagenticProgressLedger:
                done = _spoken(messages, "ops") > 0
                return MagenticProgressLedger(
                    is_request_satisfied=done, next_speaker=None if done else "ops", instruction="Deploy 1.2."
                )
            return "Release 1.2 handled."

        return MagenticBuilder(
            participants=[ops, helper],
            manager_agent=Agent(FunctionChatClient(manager), name="manager"),
            checkpoint_storage=storage,
        ).build()
    raise ValueError(kind)


# -- a person reviews the writer's turns ------------------------------------------------------------------
def _drafter(messages: list[Message], options: dict[str, Any]) -> str:
    feedback = [m.text for m in messages if m.role == "user"][1:]
    return f"Draft {len(feedback) + 1}" + (f" ({feedback[-1]})" if feedback else "")


def review(storage: CheckpointStorage | None = None) -> Workflow:
    writer = Agent(FunctionChatClient(_drafter), name="writer")
    editor = Agent(FunctionChatClient(lambda m, o: f"Edited: {m[-1].text}"), name="editor")
    return (
        SequentialBuilder(participants=[writer, editor], checkpoint_storage=storage)
        .with_request_info(agents=[writer])
        .build()
    )


SCENARIOS = {
    "review": review,
    "sequential": sequential,
    "concurrent": concurrent,
    "handoff": handoff,
    "group_chat": group_chat,
    "magentic": magentic,
}
