"""Properties over random conversations: what every strategy must keep true of what the model is sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agentnb import Agent, AgentSession, Content, Message
from agentnb.compaction import (
    CharacterEstimatorTokenizer,
    CompactionStrategy,
    ContextWindowCompactionStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    annotate_message_groups,
    apply_compaction,
)
from agentnb.local import FunctionChatClient

TOKENIZER = CharacterEstimatorTokenizer()


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A system prompt, then turns: a user message, tool rounds (some reasoning, some parallel), an answer."""
    messages = [Message("system", ["You are careful."])]
    next_id = 0
    for turn in range(draw(st.integers(1, 8))):
        messages.append(Message("user", [f"question {turn} " + "q" * draw(st.integers(0, 80))]))
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                messages.append(Message("assistant", [Content("text_reasoning", text="thinking")]))
            ids = [f"call_{next_id + i}" for i in range(draw(st.integers(1, 3)))]
            next_id += len(ids)
            messages.append(
                Message("assistant", [Content.from_function_call(i, "search", arguments="{}") for i in ids])
            )
            for call_id in ids:
                messages.append(
                    Message("tool", [Content.from_function_result(call_id, result="r" * draw(st.integers(0, 300)))])
                )
        messages.append(Message("assistant", [f"answer {turn}"]))
    return messages


STRATEGIES = st.sampled_from(
    [
        lambda: TruncationStrategy(max_n=6, compact_to=3),
        lambda: TruncationStrategy(max_n=200, compact_to=100, tokenizer=TOKENIZER),
        lambda: SlidingWindowStrategy(keep_last_groups=2),
        lambda: SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1),
        lambda: ToolResultCompactionStrategy(keep_last_tool_call_groups=0),
        lambda: TokenBudgetComposedStrategy(
            token_budget=150,
            tokenizer=TOKENIZER,
            strategies=[
                ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
                SlidingWindowStrategy(keep_last_groups=3),
            ],
        ),
        lambda: ContextWindowCompactionStrategy(max_context_window_tokens=900, max_output_tokens=100),
    ]
)


def no_orphans(sent: list[Message]) -> None:
    calls = {c.call_id for m in sent for c in m.contents if c.type == "function_call"}
    results = {c.call_id for m in sent for c in m.contents if c.type == "function_result"}
    assert calls == results, (
        f"orphans: calls without results {calls - results}, results without calls {results - calls}"
    )


@given(conversations(), STRATEGIES)
def test_groups_stay_whole_and_compaction_is_idempotent(messages: list[Message], make: Any) -> None:
    strategy: CompactionStrategy = make()
    sent = asyncio.run(apply_compaction(messages, strategy=strategy, tokenizer=TOKENIZER))
    no_orphans(sent)
    assert sent[0].role == "system"
    # A group is all in or all out.
    state: dict[str, set[bool]] = {}
    for message in messages:
        group = message.additional_properties["_group"]["id"]
        state.setdefault(group, set()).add(bool(message.additional_properties["_excluded"]))
    assert all(len(v) == 1 for v in state.values())
    # Running the strategy again on its own output changes nothing (a new summary's token count aside).
    before = [inclusion(m) for m in messages]
    again = asyncio.run(apply_compaction(messages, strategy=strategy, tokenizer=TOKENIZER))
    assert [inclusion(m) for m in messages] == before
    assert [inclusion(m) for m in again] == [inclusion(m) for m in sent]


def inclusion(message: Message) -> tuple[str | None, bool, str | None, list[dict[str, Any]]]:
    props = message.additional_properties
    return (
        message.message_id,
        bool(props.get("_excluded")),
        props.get("_exclude_reason"),
        [c.to_dict() for c in message.contents],
    )


@given(conversations())
def test_incremental_annotation_equals_annotating_at_once(messages: list[Message]) -> None:
    whole = [Message.from_dict(m.to_dict()) for m in messages]
    annotate_message_groups(whole, tokenizer=TOKENIZER)
    grown: list[Message] = []
    for message in messages:
        grown.append(message)
        annotate_message_groups(grown, tokenizer=TOKENIZER)
    assert [m.to_dict() for m in grown] == [m.to_dict() for m in whole]


@given(st.data(), STRATEGIES)
def test_an_agent_sends_the_newest_turn_no_orphans_and_the_same_input_after_reload(
    data: st.DataObject, make: Any
) -> None:
    questions = data.draw(
        st.builds(lambda n: [f"question {i} " + "z" * (17 * i % 90) for i in range(n)], st.integers(2, 5))
    )
    calls_per_turn = data.draw(st.lists(st.integers(0, 2), min_size=len(questions), max_size=len(questions)))

    async def scenario() -> None:
        sent: list[list[Message]] = []
        plan: dict[str, int] = {}

        def model(messages: list[Message], options: dict[str, Any]) -> Any:
            sent.append(list(messages))
            question = next(m.text for m in reversed(messages) if m.role == "user")
            done = plan.get(question, 0)
            if done < calls_per_turn[int(question.split()[1])]:
                plan[question] = done + 1
                return Content.from_function_call(f"{question[:11]}-{done}", "lookup", arguments="{}")
            return f"answer to {question[:11]}"

        from agentnb import tool

        @tool
        def lookup() -> str:
            """Look something up."""
            return "found " + "f" * 200

        agent = Agent(FunctionChatClient(model), "Be careful.", tools=[lookup], compaction_strategy=make())
        session = agent.create_session()
        for question in questions[:-1]:
            await agent.run(question, session=session)
            for request in sent:
                no_orphans(request[1:])
                assert request[0].role == "system" and request[0].text == "Be careful."
            assert any(m.role == "user" and m.text == question for m in sent[-1])
        restored = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
        plan_before = dict(plan)
        await agent.run(questions[-1], session=session)
        first = [m.to_dict() for m in sent[-1]]
        plan.clear()
        plan.update(plan_before)
        await agent.run(questions[-1], session=restored)
        assert [m.to_dict() for m in sent[-1]] == first

    asyncio.run(scenario())
