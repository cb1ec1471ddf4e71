"""The kept group index and the per-group decision: the same result as the message path, at the cost of the tail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from agentnb import Agent, Content, Message
from agentnb.compaction import (
    CompactionReport,
    ContextWindowCompactionStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    annotate_message_groups,
    apply_compaction,
    included_messages,
    set_excluded,
)
from agentnb.compaction._index import GroupIndex, GroupView, NeedsMessages, compact_view
from agentnb.local import FunctionChatClient

from .test_invariants import TOKENIZER, conversations

VIEW_STRATEGIES = st.sampled_from(
    [
        lambda: TruncationStrategy(max_n=6, compact_to=3),
        lambda: TruncationStrategy(max_n=200, compact_to=100, tokenizer=TOKENIZER),
        lambda: TruncationStrategy(max_n=5, compact_to=2, preserve_system=False),
        lambda: SlidingWindowStrategy(keep_last_groups=1),
        lambda: SlidingWindowStrategy(keep_last_groups=3),
        lambda: SlidingWindowStrategy(keep_last_groups=2, preserve_system=False),
        lambda: SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1),
        lambda: SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0),
        lambda: TokenBudgetComposedStrategy(
            token_budget=150,
            tokenizer=TOKENIZER,
            strategies=[SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)],
        ),
        lambda: TokenBudgetComposedStrategy(
            token_budget=120,
            tokenizer=TOKENIZER,
            strategies=[
                ToolResultCompactionStrategy(keep_last_tool_call_groups=50),
                SlidingWindowStrategy(keep_last_groups=4),
            ],
            early_stop=False,
        ),
        lambda: TokenBudgetComposedStrategy(token_budget=60, tokenizer=TOKENIZER, strategies=[]),
        lambda: ContextWindowCompactionStrategy(max_context_window_tokens=900, max_output_tokens=100),
    ]
)


def copied(messages: list[Message]) -> list[Message]:
    return [Message.from_dict(m.to_dict()) for m in messages]


@given(conversations(), VIEW_STRATEGIES, st.integers(0, 3))
def test_the_view_decides_as_the_message_path_does(messages: list[Message], make: Any, systems: int) -> None:
    # Some system messages later in the conversation, which strategies preserve (or not).
    for k in range(systems):
        messages.insert(min(len(messages), 2 + 3 * k), Message("system", [f"note {k}"]))
    by_messages = copied(messages)
    sent = asyncio.run(apply_compaction(by_messages, strategy=make(), tokenizer=TOKENIZER))
    expected = CompactionReport.from_messages(by_messages, strategy="s").to_dict()

    index = GroupIndex.of(messages, TOKENIZER)
    view = GroupView(index)
    try:
        compact_view(make(), view)
    except NeedsMessages:
        # Only when the message path inserted summaries.
        assert any(m.message_id and m.message_id.startswith("tool_summary_") for m in by_messages)
        event("needs messages")
        return
    event("compacted" if len(sent) < len(messages) else "unchanged")
    assert [m.message_id for m in view.sent(messages)] == [m.message_id for m in sent]
    assert CompactionReport.from_view(view, messages, strategy="s").to_dict() == expected
    # The view wrote nothing on the messages.
    assert not any(m.additional_properties.get("_excluded") for m in messages)


def index_columns(index: GroupIndex) -> dict[str, Any]:
    return {
        "ids": index.ids,
        "kinds": index.kinds,
        "members": index.members,
        "tokens": index.tokens,
        "token_sums": index.token_sums,
        "message_sums": index.message_sums,
        "group_of": index.group_of,
        "systems": index.systems,
        "split": index.split,
        "message_ids": index.message_ids,
    }


@given(conversations(), st.data())
def test_an_index_grown_piece_by_piece_equals_one_built_at_once(messages: list[Message], data: st.DataObject) -> None:
    # Late results too: move some tool results after the next message.
    for _ in range(data.draw(st.integers(0, 2))):
        results = [i for i, m in enumerate(messages[:-1]) if m.role == "tool"]
        if results:
            i = data.draw(st.sampled_from(results))
            messages.insert(i + 1, messages.pop(i))
    whole = copied(messages)
    grown: list[Message] = []
    kept: GroupIndex | None = None
    position = 0
    while position < len(messages):
        step = data.draw(st.integers(1, 4))
        grown = [*grown, *messages[position : position + step]]  # a new list each turn, as a session builds
        position += step
        kept = GroupIndex.of(grown, TOKENIZER)
    assert kept is not None
    fresh = GroupIndex.of(whole, TOKENIZER)
    assert index_columns(kept) == index_columns(fresh)
    assert [m.to_dict() for m in grown] == [m.to_dict() for m in whole]


def test_the_index_is_kept_on_the_last_message_and_reused() -> None:
    history = [Message("system", ["Be brief."]), Message("user", ["one"]), Message("assistant", ["two"])]
    first = GroupIndex.of(history, TOKENIZER)
    assert history[-1]._compaction_cache is first  # pyright: ignore[reportPrivateUsage]
    later = GroupIndex.of([*history, Message("user", ["three"])], TOKENIZER)
    assert later is first
    assert history[-1]._compaction_cache is None  # pyright: ignore[reportPrivateUsage]  # it moved on


def test_an_exclusion_written_since_makes_a_new_index() -> None:
    history = [Message("user", [f"turn {i}"]) for i in range(4)]
    first = GroupIndex.of(history, TOKENIZER)
    assert not first.special
    set_excluded(history[1], excluded=True, reason="by hand")
    again = GroupIndex.of(history, TOKENIZER)
    assert again is not first
    assert list(again.out) == [0, 1, 0, 0]
    assert again.reason_names[again.out_why[1]] == "by hand"
    assert not again.special


def test_half_an_excluded_group_takes_the_message_path() -> None:
    history = [
        Message("user", ["weather?"]),
        Message("assistant", [Content.from_function_call("c1", "weather", arguments="{}")]),
        Message("tool", [Content.from_function_result("c1", result="sunny")]),
    ]
    GroupIndex.of(history, TOKENIZER)
    set_excluded(history[2], excluded=True, reason="by hand")  # the result, not its call
    assert GroupIndex.of(history, TOKENIZER).special == [2]


def test_a_changed_message_list_makes_a_new_index() -> None:
    history = [Message("user", [f"turn {i}"]) for i in range(4)]
    first = GroupIndex.of(history, TOKENIZER)
    edited = [history[0], Message("user", ["another"]), *history[2:]]
    assert GroupIndex.of(edited, TOKENIZER) is not first


def test_a_session_reads_only_new_messages_each_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-turn cost does not grow with the history: each request reads the messages it adds (and the
    group before them), never the whole conversation again."""
    read: list[int] = []
    original = GroupIndex.read

    def counting(self: GroupIndex, messages: Any, start: int) -> None:
        read.append(len(messages) - start)
        original(self, messages, start)

    monkeypatch.setattr(GroupIndex, "read", counting)
    client = FunctionChatClient(lambda messages, options: Message("assistant", ["ok"]))
    agent = Agent(client, instructions="Be brief.", compaction_strategy=SlidingWindowStrategy(keep_last_groups=4))
    session = agent.create_session()

    async def turns() -> list[list[str]]:
        sent: list[list[str]] = []
        for turn in range(40):
            response = await agent.run(f"question {turn}", session=session)
            report = response.additional_properties["compaction"][-1]
            sent.append([str(report["messages_sent"]), str(report["groups_excluded"])])
        return sent

    reports = asyncio.run(turns())
    assert read[0] <= 2
    assert max(read[1:]) <= 3, read  # the previous answer's group is read again with the new question
    assert reports[-1] == ["4", str(2 * 40 - 1 - 4)]


def test_a_strategy_that_inserts_summaries_falls_back_to_the_message_path() -> None:
    def reply(messages: list[Message], options: dict[str, Any]) -> Message:
        if messages[-1].role == "user":
            return Message("assistant", [Content.from_function_call(f"c{len(messages)}", "lookup", arguments="{}")])
        return Message("assistant", ["done"])

    seen: list[list[str]] = []

    def model(messages: list[Message], options: dict[str, Any]) -> Message:
        seen.append([m.text for m in messages])
        return reply(messages, options)

    def lookup() -> str:
        """Look it up."""
        return "found"

    agent = Agent(
        FunctionChatClient(model),
        tools=[lookup],
        compaction_strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=0),
    )
    session = agent.create_session()

    async def run() -> None:
        for turn in range(3):
            await agent.run(f"q{turn}", session=session)

    asyncio.run(run())
    assert any(text.startswith("[Tool results: lookup: found") for text in seen[-1])
    # The history keeps the originals, unmarked.
    assert not any(m.additional_properties.get("_excluded") for m in session.messages)


async def by_message_path(messages: list[Message], strategy: Any) -> list[Message]:
    """What ``apply_compaction`` did before the view: annotate, run the strategy on messages, project."""
    annotate_message_groups(messages, tokenizer=TOKENIZER)
    await strategy(messages)
    return included_messages(messages)


def marks(messages: list[Message]) -> list[tuple[str | None, bool, str | None]]:
    return [
        (m.message_id, bool(m.additional_properties.get("_excluded")), m.additional_properties.get("_exclude_reason"))
        for m in messages
    ]


@given(conversations(), VIEW_STRATEGIES, st.data())
def test_apply_compaction_turn_after_turn_writes_what_the_message_path_writes(
    messages: list[Message], make: Any, data: st.DataObject
) -> None:
    """A list compacted again as it grows (exclusions of earlier calls stay on it) ends up marked the same."""
    fast: list[Message] = []
    slow: list[Message] = []
    fast_strategy, slow_strategy = make(), make()
    position = 0
    while position < len(messages):
        step = data.draw(st.integers(1, 5))
        piece = messages[position : position + step]
        position += step
        fast.extend(piece)
        slow.extend(copied(piece))
        sent_fast = asyncio.run(apply_compaction(fast, strategy=fast_strategy, tokenizer=TOKENIZER))
        sent_slow = asyncio.run(by_message_path(slow, slow_strategy))
        assert marks(fast) == marks(slow)
        assert [m.message_id for m in sent_fast] == [m.message_id for m in sent_slow]


def test_a_deep_copy_of_a_message_does_not_copy_the_index_it_holds() -> None:
    import copy

    history = [Message("user", [f"turn {i}"]) for i in range(50)]
    GroupIndex.of(history, TOKENIZER)
    assert history[-1]._compaction_cache is not None  # pyright: ignore[reportPrivateUsage]
    clone = copy.deepcopy(history[-1])
    assert clone._compaction_cache is None  # pyright: ignore[reportPrivateUsage]
    assert clone == history[-1]


@given(conversations(), st.sampled_from([60, 120, 400]), st.data())
def test_with_summaries_in_the_history_later_turns_still_decide_as_the_message_path_does(
    messages: list[Message], budget: int, data: st.DataObject
) -> None:
    """Summaries and the originals they replaced do not send a later turn back to the message path."""

    def make() -> TokenBudgetComposedStrategy:
        return TokenBudgetComposedStrategy(
            token_budget=budget,
            tokenizer=TOKENIZER,
            strategies=[
                ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
                SlidingWindowStrategy(keep_last_groups=3),
            ],
        )

    fast: list[Message] = []
    slow: list[Message] = []
    fast_strategy, slow_strategy = make(), make()
    position = 0
    while position < len(messages):
        step = data.draw(st.integers(1, 4))
        piece = messages[position : position + step]
        position += step
        fast.extend(copied(piece))
        slow.extend(copied(piece))
        sent_fast = asyncio.run(apply_compaction(fast, strategy=fast_strategy, tokenizer=TOKENIZER))
        sent_slow = asyncio.run(by_message_path(slow, slow_strategy))
        assert marks(fast) == marks(slow)
        assert [m.message_id for m in sent_fast] == [m.message_id for m in sent_slow]
    event("summaries" if any(m.message_id and m.message_id.startswith("tool_summary_") for m in fast) else "none")
