"""Grouping: what must reach the model together stays in one group, and annotation is incremental."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agentnb import Content, Message
from agentnb.compaction import (
    EXCLUDE_REASON_KEY,
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    GROUP_HAS_REASONING_KEY,
    GROUP_ID_KEY,
    GROUP_INDEX_KEY,
    GROUP_KIND_KEY,
    GROUP_TOKEN_COUNT_KEY,
    CharacterEstimatorTokenizer,
    annotate_message_groups,
    annotate_token_counts,
    append_compaction_message,
    exclude_group_ids,
    extend_compaction_messages,
    group_messages,
    included_messages,
    included_token_count,
    project_included_messages,
    set_excluded,
)
from agentnb.compaction._groups import serialize_message


def call(call_id: str, name: str = "lookup") -> Content:
    return Content.from_function_call(call_id, name, arguments="{}")


def result(call_id: str, value: str = "ok") -> Content:
    return Content.from_function_result(call_id, result=value)


def reasoning(text: str = "thinking") -> Content:
    return Content("text_reasoning", text=text)


def group_of(message: Message) -> str:
    return message.additional_properties[GROUP_ANNOTATION_KEY]["id"]


def test_kinds_and_spans_of_a_plain_conversation() -> None:
    messages = [
        Message("system", ["Be brief."]),
        Message("user", ["Weather?"]),
        Message("assistant", [call("c1", "get_weather")]),
        Message("tool", [result("c1", "sunny")]),
        Message("assistant", ["It is sunny."]),
    ]
    spans = group_messages(messages)
    assert [(s["kind"], s["start_index"], s["end_index"]) for s in spans] == [
        ("system", 0, 0),
        ("user", 1, 1),
        ("tool_call", 2, 3),
        ("assistant_text", 4, 4),
    ]
    assert [m.message_id for m in messages] == ["msg_0", "msg_1", "msg_2", "msg_3", "msg_4"]
    assert spans[2]["group_id"] == "group_msg_2"


def test_reasoning_before_and_after_a_call_joins_its_group() -> None:
    messages = [
        Message("user", ["go"]),
        Message("assistant", [reasoning()]),
        Message("assistant", [call("c1")]),
        Message("assistant", [reasoning("more")]),
        Message("tool", [result("c1")]),
        Message("assistant", [reasoning("alone")]),
        Message("assistant", ["done"]),
    ]
    spans = group_messages(messages)
    assert [(s["kind"], s["start_index"], s["end_index"], s["has_reasoning"]) for s in spans] == [
        ("user", 0, 0, False),
        ("tool_call", 1, 4, True),
        ("assistant_text", 5, 5, True),  # reasoning with no call after it stands alone
        ("assistant_text", 6, 6, False),
    ]


def test_a_late_result_links_back_to_its_call() -> None:
    messages = [
        Message("user", ["start"]),
        Message("assistant", [call("late")]),
        Message("user", ["meanwhile"]),
        Message("tool", [result("late")]),
    ]
    annotate_message_groups(messages)
    assert group_of(messages[1]) == group_of(messages[3])
    assert group_of(messages[2]) != group_of(messages[1])


def test_reused_call_ids_pair_by_order_and_ambiguous_ones_stay_apart() -> None:
    reused = [
        Message("assistant", [call("x")]),
        Message("tool", [result("x")]),
        Message("user", ["again"]),
        Message("assistant", [call("x")]),
        Message("user", ["interleaved"]),
        Message("tool", [result("x")]),
    ]
    annotate_message_groups(reused)
    # The second result pairs with the second call (the first was answered), not with the first.
    assert group_of(reused[5]) == group_of(reused[3]) != group_of(reused[0])

    ambiguous = [
        Message("assistant", [call("y")]),
        Message("user", ["a"]),
        Message("assistant", [call("y")]),
        Message("user", ["b"]),
        Message("tool", [result("y")]),
    ]
    annotate_message_groups(ambiguous)
    ids = {group_of(m) for m in (ambiguous[0], ambiguous[2], ambiguous[4])}
    assert len(ids) == 3


def test_incremental_annotation_matches_a_full_one() -> None:
    def conversation() -> list[Message]:
        return [
            Message("system", ["s"]),
            Message("user", ["u1"]),
            Message("assistant", [call("a")]),
            Message("tool", [result("a")]),
            Message("assistant", ["t1"]),
            Message("user", ["u2"]),
            Message("assistant", [call("b")]),
            Message("tool", [result("b")]),
            Message("tool", [result("a", "late duplicate")]),
            Message("assistant", ["t2"]),
        ]

    whole = conversation()
    annotate_message_groups(whole, tokenizer=CharacterEstimatorTokenizer())
    grown = conversation()
    built: list[Message] = []
    for message in grown[:3]:
        append_compaction_message(built, message, tokenizer=CharacterEstimatorTokenizer())
    extend_compaction_messages(built, grown[3:], tokenizer=CharacterEstimatorTokenizer())
    assert [m.to_dict() for m in built] == [m.to_dict() for m in whole]


def test_annotation_keeps_token_counts_and_foreign_fields() -> None:
    messages = [Message("user", ["hello there"]), Message("assistant", ["hi"])]
    annotate_token_counts(messages, tokenizer=CharacterEstimatorTokenizer())
    messages[0].additional_properties[GROUP_ANNOTATION_KEY]["note"] = "kept"
    counts = [m.additional_properties[GROUP_ANNOTATION_KEY][GROUP_TOKEN_COUNT_KEY] for m in messages]
    annotate_message_groups(messages, force_reannotate=True)
    assert [m.additional_properties[GROUP_ANNOTATION_KEY][GROUP_TOKEN_COUNT_KEY] for m in messages] == counts
    assert messages[0].additional_properties[GROUP_ANNOTATION_KEY]["note"] == "kept"
    assert included_token_count(messages) == sum(counts)


def test_exclusion_helpers() -> None:
    messages = [Message("user", ["a"]), Message("assistant", [call("c")]), Message("tool", [result("c")])]
    annotate_message_groups(messages)
    assert exclude_group_ids(messages, {group_of(messages[1])}, reason="test") is True
    assert exclude_group_ids(messages, {group_of(messages[1])}, reason="test") is False
    assert [m.text for m in included_messages(messages)] == ["a"]
    assert project_included_messages(messages) == included_messages(messages)
    assert messages[2].additional_properties[EXCLUDE_REASON_KEY] == "test"
    assert set_excluded(messages[1], excluded=False) is True
    assert messages[1].additional_properties[EXCLUDED_KEY] is False


def test_a_result_that_joins_a_half_excluded_group_brings_it_back() -> None:
    messages = [Message("user", ["a"]), Message("assistant", [call("c")]), Message("user", ["b"])]
    annotate_message_groups(messages)
    set_excluded(messages[1], excluded=True, reason="x")
    append_compaction_message(messages, Message("tool", [result("c")]))
    assert group_of(messages[3]) == group_of(messages[1])
    assert messages[1].additional_properties[EXCLUDED_KEY] is False


def test_ids_assigned_in_a_slice_do_not_collide_with_reserved_ones() -> None:
    messages = [Message("user", ["a"]), Message("user", ["b"])]
    group_messages(messages, id_offset=5, reserved_ids={"msg_5"})
    assert messages[0].message_id != "msg_5"
    assert messages[1].message_id == "msg_6"
    assert len({m.message_id for m in messages}) == 2


def test_the_annotation_uses_the_reference_keys() -> None:
    messages = [Message("user", ["hi"]), Message("assistant", [call("c1")]), Message("tool", [result("c1")])]
    annotate_message_groups(messages)
    for message in messages:
        assert set(message.additional_properties[GROUP_ANNOTATION_KEY]) == {
            GROUP_ID_KEY,
            GROUP_KIND_KEY,
            GROUP_INDEX_KEY,
            GROUP_HAS_REASONING_KEY,
            GROUP_TOKEN_COUNT_KEY,
        }
        assert message.additional_properties[EXCLUDED_KEY] is False


def test_reasoning_stays_with_a_hosted_tool_call() -> None:
    hosted = Content.from_mcp_server_tool_call(call_id="m1", tool_name="search", server_name="docs")
    messages = [Message("assistant", [reasoning()]), Message("assistant", [hosted]), Message("assistant", ["done"])]
    annotate_message_groups(messages)
    assert group_of(messages[0]) == group_of(messages[1]) != group_of(messages[2])
    assert messages[0].additional_properties[GROUP_ANNOTATION_KEY]["kind"] == "tool_call"


def test_a_function_result_does_not_answer_a_hosted_call_with_its_id() -> None:
    hosted = Content.from_mcp_server_tool_call(call_id="c1", tool_name="search", server_name="docs")
    messages = [Message("assistant", [hosted]), Message("user", ["next"]), Message("tool", [result("c1")])]
    annotate_message_groups(messages)
    assert group_of(messages[2]) != group_of(messages[0])


SHAPES = st.sampled_from(
    [
        lambda c: Message("system", ["s"]),
        lambda c: Message("user", ["u"]),
        lambda c: Message("user", [reasoning()]),
        lambda c: Message("assistant", ["a"]),
        lambda c: Message("assistant", [call(c)]),
        lambda c: Message("assistant", [reasoning(), call(c)]),
        lambda c: Message("assistant", [call(c), call(c + "x")]),
        lambda c: Message("assistant", [call(c), result(c)]),
        lambda c: Message("assistant", [reasoning()]),
        lambda c: Message("assistant", [Content.from_mcp_server_tool_call(call_id=c, tool_name="t", server_name="s")]),
        lambda c: Message("assistant", []),
        lambda c: Message("tool", [result(c)]),
        lambda c: Message("tool", [result(c), result(c + "x")]),
        lambda c: Message("tool", ["text"]),
    ]
)


@given(st.lists(st.tuples(SHAPES, st.sampled_from(["c0", "c1", "c2"]), st.integers(0, 12) | st.none()), max_size=14))
def test_the_one_pass_annotation_matches_the_general_one(shapes: list[tuple[Any, str, int | None]]) -> None:
    """Messages of every shape (late, reused and ambiguous results, clashing ids) group as the span rules say."""

    def build() -> list[Message]:
        messages = [make(call_id) for make, call_id, _ in shapes]
        for message, (_, _, number) in zip(messages, shapes, strict=True):
            if number is not None:
                message.message_id = f"msg_{number}"
        return messages

    one_pass, general = build(), build()
    annotate_message_groups(one_pass)
    spans = group_messages(general)
    numbers = {group_id: n for n, group_id in enumerate(dict.fromkeys(s["group_id"] for s in spans))}
    expected: list[tuple[str, str, int, bool]] = []
    for span in spans:
        reasoned = any(s["has_reasoning"] for s in spans if s["group_id"] == span["group_id"])
        for _ in range(span["start_index"], span["end_index"] + 1):
            expected.append((span["group_id"], span["kind"], numbers[span["group_id"]], reasoned))
    assert [m.message_id for m in one_pass] == [m.message_id for m in general]
    annotations = [m.additional_properties[GROUP_ANNOTATION_KEY] for m in one_pass]
    assert [(a["id"], a["kind"], a["index"], a["has_reasoning"]) for a in annotations] == expected


def plain_json(message: Message) -> str:
    """What token counting serializes, written the obvious way."""
    contents = [{"additional_properties": {}, **c.to_dict()} for c in message.contents]
    payload = {"role": message.role, "message_id": message.message_id, "contents": contents}
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)


@given(
    st.lists(
        st.one_of(
            st.text().map(Content.from_text),
            st.text().map(lambda t: Content.from_function_call("c1", "f", arguments={"q": t, "n": 1.5})),
            st.text().map(lambda t: Content.from_function_result("c1", result=t)),
            st.text().map(lambda t: Content("text_reasoning", text=t)),
        ),
        max_size=3,
    ),
    st.none() | st.text(),
    st.sampled_from(["system", "user", "assistant", "tool"]),
)
def test_a_message_serializes_as_its_json(contents: list[Content], message_id: str | None, role: str) -> None:
    message = Message(role, contents, message_id=message_id)
    assert serialize_message(message) == plain_json(message)


@given(st.lists(st.integers(0, 8) | st.none(), min_size=1, max_size=6), st.integers(1, 4))
def test_new_messages_get_ids_not_used_before_them(prefix_ids: list[int | None], new: int) -> None:
    """Ids given to appended messages skip the earlier ones, numbered as grouping the new ones alone says."""
    messages = [Message("user", [f"q{i}"]) for i in range(len(prefix_ids))]
    for message, number in zip(messages, prefix_ids, strict=True):
        if number is not None:
            message.message_id = f"msg_{number}"
    annotate_message_groups(messages)
    earlier = {m.message_id for m in messages if m.message_id}
    added = [Message("assistant", [f"a{i}"]) for i in range(new)]
    alone = [Message("assistant", [f"a{i}"]) for i in range(new)]
    extend_compaction_messages(messages, added)
    group_messages(alone, id_offset=len(prefix_ids), reserved_ids=earlier)
    assert [m.message_id for m in added] == [m.message_id for m in alone]
    new_ids = {m.message_id for m in added}
    assert len(new_ids) == new and not new_ids & earlier
