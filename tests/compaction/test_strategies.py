"""Strategies: which groups each one leaves out, summaries and their links, composition under a budget."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import ChatResponse, Content, Message
from agentnb.compaction import (
    EXCLUDE_REASON_KEY,
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    SUMMARIZED_BY_SUMMARY_ID_KEY,
    SUMMARY_OF_GROUP_IDS_KEY,
    SUMMARY_OF_MESSAGE_IDS_KEY,
    CharacterEstimatorTokenizer,
    ContextWindowCompactionStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
    included_token_count,
)
from agentnb.local import ScriptedChatClient


def history() -> list[Message]:
    return [
        Message("system", ["You are a helpful assistant."]),
        Message("user", ["Plan a data migration."]),
        Message("assistant", ["I will gather requirements."]),
        Message("assistant", [Content.from_function_call("call_1", "list_tables", arguments='{"db":"legacy"}')]),
        Message("tool", [Content.from_function_result("call_1", result="users, orders, events")]),
        Message("assistant", ["I found three core tables."]),
        Message("user", ["Estimate effort and risks."]),
        Message("assistant", ["Primary risk is schema drift."]),
    ]


def texts(messages: list[Message]) -> list[str]:
    return [m.text or ", ".join(c.type for c in m.contents) for m in messages]


async def test_truncation_drops_oldest_groups_and_keeps_the_system_anchor() -> None:
    kept = await apply_compaction(history(), strategy=TruncationStrategy(max_n=5, compact_to=4))
    assert texts(kept) == [
        "You are a helpful assistant.",
        "I found three core tables.",
        "Estimate effort and risks.",
        "Primary risk is schema drift.",
    ]


async def test_truncation_below_its_limit_changes_nothing() -> None:
    messages = history()
    assert await TruncationStrategy(max_n=50, compact_to=10)(messages) is False


async def test_sliding_window_keeps_the_last_groups_whole() -> None:
    messages = history()
    kept = await apply_compaction(messages, strategy=SlidingWindowStrategy(keep_last_groups=4))
    assert texts(kept) == [
        "You are a helpful assistant.",
        "function_call",
        "function_result",
        "I found three core tables.",
        "Estimate effort and risks.",
        "Primary risk is schema drift.",
    ]
    assert messages[1].additional_properties[EXCLUDE_REASON_KEY] == "sliding_window"


async def test_selective_tool_call_compaction_only_touches_tool_groups() -> None:
    kept = await apply_compaction(history(), strategy=SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0))
    assert "function_call" not in texts(kept) and "function_result" not in texts(kept)
    assert len(kept) == 6


async def test_tool_result_compaction_replaces_a_group_with_a_linked_summary() -> None:
    messages = history()
    kept = await apply_compaction(messages, strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=0))
    assert "[Tool results: list_tables: users, orders, events]" in texts(kept)
    summary = next(m for m in messages if m.message_id and m.message_id.startswith("tool_summary_"))
    links = summary.additional_properties[GROUP_ANNOTATION_KEY]
    assert links[SUMMARY_OF_MESSAGE_IDS_KEY] == ["msg_3", "msg_4"]
    assert links[SUMMARY_OF_GROUP_IDS_KEY] == ["group_msg_3"]
    for original in messages[4:6]:  # shifted by the inserted summary
        assert original.additional_properties[EXCLUDED_KEY] is True
        assert original.additional_properties[GROUP_ANNOTATION_KEY][SUMMARIZED_BY_SUMMARY_ID_KEY] == summary.message_id
    assert len(messages) == 9  # nothing deleted


def test_tool_result_summary_is_cut_to_its_limit() -> None:
    text = ToolResultCompactionStrategy.summary_text(["x" * 10_000])
    assert len(text) <= ToolResultCompactionStrategy.SUMMARY_MAX_CHARS
    assert text.endswith("... [truncated]]")


async def test_summarization_replaces_old_groups_and_links_both_ways() -> None:
    summarizer = ScriptedChatClient(["Migration planned; three tables found."])
    messages = history()
    kept = await apply_compaction(
        messages, strategy=SummarizationStrategy(client=summarizer, target_count=3, threshold=2)
    )
    assert texts(kept) == [
        "You are a helpful assistant.",
        "Migration planned; three tables found.",
        "I found three core tables.",
        "Estimate effort and risks.",
        "Primary risk is schema drift.",
    ]
    summary = kept[1]
    assert summary.message_id == "summary_8"
    assert summary.additional_properties[GROUP_ANNOTATION_KEY][SUMMARY_OF_MESSAGE_IDS_KEY] == [
        "msg_1",
        "msg_2",
        "msg_3",
        "msg_4",
    ]
    assert all(m.additional_properties[EXCLUDE_REASON_KEY] == "summarized" for m in messages[2:6])


class FailingClient:
    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self.calls += 1
        raise RuntimeError("summarizer down")


async def test_a_failed_summary_leaves_the_messages_alone(caplog: pytest.LogCaptureFixture) -> None:
    client = FailingClient()
    strategy = SummarizationStrategy(client=client, target_count=2, threshold=0)
    messages = history()
    for _ in range(3):
        assert await apply_compaction(messages, strategy=strategy) == messages
    assert client.calls == 3
    assert "failed 3 consecutive times" in caplog.text


async def test_token_budget_composition_falls_back_to_dropping_oldest_groups() -> None:
    tokenizer = CharacterEstimatorTokenizer()
    messages = history()
    strategy = TokenBudgetComposedStrategy(
        token_budget=150,
        tokenizer=tokenizer,
        strategies=[SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0)],
    )
    kept = await apply_compaction(messages, strategy=strategy, tokenizer=tokenizer)
    assert included_token_count(messages) <= 150
    assert kept[0].role == "system" and kept[-1].text == "Primary risk is schema drift."
    reasons = {
        m.additional_properties.get(EXCLUDE_REASON_KEY) for m in messages if m.additional_properties[EXCLUDED_KEY]
    }
    assert reasons == {"tool_call_compaction", "token_budget_fallback"}


async def test_context_window_strategy_evicts_tool_results_then_truncates() -> None:
    messages = [Message("system", ["sys"])]
    for i in range(30):
        messages.append(Message("user", [f"question {i} " + "x" * 200]))
        messages.append(Message("assistant", [Content.from_function_call(f"c{i}", "search", arguments="{}")]))
        messages.append(Message("tool", [Content.from_function_result(f"c{i}", result="y" * 400)]))
        messages.append(Message("assistant", [f"answer {i}"]))
    strategy = ContextWindowCompactionStrategy(max_context_window_tokens=6_000, max_output_tokens=1_000)
    kept = await apply_compaction(messages, strategy=strategy)
    assert included_token_count(messages) <= int(5_000 * 0.8)
    assert any(m.text.startswith("[Tool results: search:") for m in kept)
    assert kept[-1].text == "answer 29"


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: TruncationStrategy(max_n=0, compact_to=1), "max_n"),
        (lambda: TruncationStrategy(max_n=5, compact_to=6), "compact_to"),
        (lambda: SlidingWindowStrategy(keep_last_groups=0), "keep_last_groups"),
        (lambda: ToolResultCompactionStrategy(keep_last_tool_call_groups=-1), "keep_last_tool_call_groups"),
        (lambda: ContextWindowCompactionStrategy(max_context_window_tokens=10, max_output_tokens=10), "max_output"),
        (
            lambda: ContextWindowCompactionStrategy(
                max_context_window_tokens=10, max_output_tokens=1, truncation_threshold=0.2
            ),
            "truncation_threshold",
        ),
    ],
)
def test_impossible_settings_are_refused(factory: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()
