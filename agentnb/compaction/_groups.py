"""Message groups: the units compaction keeps or drops whole, and the metadata it writes on messages.

A *group* is what must reach the model together or not at all: a system message, a user message, an
assistant text, or a tool-call group (an assistant's function calls, the reasoning bound to them, and their
results). Results that arrive later, after other messages, join their call's group when the pairing is
unambiguous: calls and results are read in transcript order, and a result links to a call only when exactly
one earlier call with its ``call_id`` is still unanswered (a reused id pairs with its latest open occurrence;
two open calls with one id stay apart).

Everything compaction knows lives in ``message.additional_properties`` under the keys below (the reference's
names and layout), so it saves with the session and reads back the same: ``_group`` holds the group's id,
kind, index, whether it has reasoning and the message's token count; ``_excluded`` and ``_exclude_reason``
say whether (and why) a message is left out of what the model is sent. Nothing is ever deleted.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from .._gc import gc_paused
from .._types import Content, Message

if TYPE_CHECKING:
    from ._tokenizers import TokenizerProtocol

__all__ = [
    "EXCLUDED_KEY",
    "EXCLUDE_REASON_KEY",
    "GROUP_ANNOTATION_KEY",
    "GROUP_HAS_REASONING_KEY",
    "GROUP_ID_KEY",
    "GROUP_INDEX_KEY",
    "GROUP_KIND_KEY",
    "GROUP_TOKEN_COUNT_KEY",
    "SUMMARIZED_BY_SUMMARY_ID_KEY",
    "SUMMARY_OF_GROUP_IDS_KEY",
    "SUMMARY_OF_MESSAGE_IDS_KEY",
    "GroupKind",
    "annotate_message_groups",
    "annotate_token_counts",
    "append_compaction_message",
    "exclude_group_ids",
    "extend_compaction_messages",
    "group_messages",
    "included_messages",
    "included_token_count",
    "project_included_messages",
    "serialize_message",
    "set_excluded",
]

GroupKind: TypeAlias = Literal["system", "user", "assistant_text", "tool_call"]
GROUP_ANNOTATION_KEY = "_group"
GROUP_ID_KEY = "id"
GROUP_KIND_KEY = "kind"
GROUP_INDEX_KEY = "index"
GROUP_HAS_REASONING_KEY = "has_reasoning"
GROUP_TOKEN_COUNT_KEY = "token_count"
EXCLUDED_KEY = "_excluded"
EXCLUDE_REASON_KEY = "_exclude_reason"
SUMMARY_OF_MESSAGE_IDS_KEY = "_summary_of_message_ids"
SUMMARY_OF_GROUP_IDS_KEY = "_summary_of_group_ids"
SUMMARIZED_BY_SUMMARY_ID_KEY = "_summarized_by_summary_id"

_MESSAGE_ID: Any = attrgetter("message_id")
# ``type(x) is _DICT`` tests for a dict without narrowing ``x`` from Any (hot loops skip typing.cast's call).
_DICT: Any = dict
# Contents that make an assistant message a tool call (hosted tools too: their reasoning stays with them).
_CALL_TYPES: frozenset[str] = frozenset(
    (
        "function_call",
        "computer_tool_call",
        "mcp_server_tool_call",
        "code_interpreter_tool_call",
        "shell_tool_call",
        "image_generation_tool_call",
    )
)
# Results that may arrive in a later message, and the call type each answers (paired by type and call id).
_CALL_OF_RESULT: dict[str, str] = {"function_result": "function_call", "computer_tool_result": "computer_tool_call"}
_PAIRED_CALLS: frozenset[str] = frozenset(_CALL_OF_RESULT.values())
_KINDS: frozenset[str] = frozenset(("system", "user", "assistant_text", "tool_call"))
_OWN_KEYS: frozenset[str] = frozenset(
    (GROUP_ID_KEY, GROUP_KIND_KEY, GROUP_INDEX_KEY, GROUP_HAS_REASONING_KEY, GROUP_TOKEN_COUNT_KEY)
)
_TEXT_KINDS: dict[str, str] = {"system": "system", "user": "user", "assistant": "assistant_text"}
_GROUP_OPENERS: frozenset[str] = frozenset(("system", "user"))
# Bumped whenever compaction rewrites an annotation, a token count or an exclusion. A kept group index (see
# ._index) trusts what it read off the messages while this has not moved, and checks the messages again when
# it has (another conversation's compaction, or a strategy run by hand, moves it).
_MUTATIONS = [0]


def note_mutation() -> None:
    """Record that some message's annotation or exclusion changed."""
    _MUTATIONS[0] += 1


def mutation_count() -> int:
    """How many times annotations or exclusions changed, process-wide (see :func:`note_mutation`)."""
    return _MUTATIONS[0]


# -- reading and writing the annotation ------------------------------------------------------------------------


def annotation_of(message: Message) -> dict[str, Any] | None:
    """The message's ``_group`` annotation when it is well formed (an id and a known kind), else ``None``."""
    raw = message.additional_properties.get(GROUP_ANNOTATION_KEY)
    if type(raw) is not dict:
        return None
    annotation = cast("dict[str, Any]", raw)
    if type(annotation.get(GROUP_ID_KEY)) is not str or annotation.get(GROUP_KIND_KEY) not in _KINDS:
        return None
    return annotation


def group_id_of(message: Message) -> str | None:
    """The id of the message's group, ``None`` before it is annotated."""
    annotation = annotation_of(message)
    return annotation[GROUP_ID_KEY] if annotation is not None else None


def group_kind_of(message: Message) -> GroupKind | None:
    """The kind of the message's group, ``None`` before it is annotated."""
    annotation = annotation_of(message)
    return annotation[GROUP_KIND_KEY] if annotation is not None else None


def token_count_of(message: Message) -> int | None:
    """The message's annotated token count, ``None`` when not counted yet."""
    annotation = annotation_of(message)
    if annotation is None:
        return None
    count = annotation.get(GROUP_TOKEN_COUNT_KEY)
    return count if type(count) is int else None


def is_excluded(message: Message) -> bool:
    """Whether compaction leaves this message out of what the model is sent."""
    return bool(message.additional_properties.get(EXCLUDED_KEY, False))


def raw_annotation(message: Message) -> dict[str, Any]:
    """The message's ``_group`` dict, created empty when missing (for links written before annotation)."""
    props = message.additional_properties
    raw = props.get(GROUP_ANNOTATION_KEY)
    if not isinstance(raw, dict):
        raw = {}
        props[GROUP_ANNOTATION_KEY] = raw
        note_mutation()
    return cast("dict[str, Any]", raw)


def _write(message: Message, group_id: str, kind: str, index: int, has_reasoning: bool) -> None:
    """Write the group fields, keeping the token count and any other fields already there."""
    props = message.additional_properties
    old = props.get(GROUP_ANNOTATION_KEY)
    if old is None:  # a new message: nothing to keep
        props[GROUP_ANNOTATION_KEY] = {
            GROUP_ID_KEY: group_id,
            GROUP_KIND_KEY: kind,
            GROUP_INDEX_KEY: index,
            GROUP_HAS_REASONING_KEY: has_reasoning,
            GROUP_TOKEN_COUNT_KEY: None,
        }
        if EXCLUDED_KEY not in props:
            props[EXCLUDED_KEY] = False
        return
    annotation: dict[str, Any] = {
        GROUP_ID_KEY: group_id,
        GROUP_KIND_KEY: kind,
        GROUP_INDEX_KEY: index,
        GROUP_HAS_REASONING_KEY: has_reasoning,
        GROUP_TOKEN_COUNT_KEY: None,
    }
    if isinstance(old, dict):
        old_annotation = cast("dict[str, Any]", old)
        count = old_annotation.get(GROUP_TOKEN_COUNT_KEY)
        if type(count) is int:
            annotation[GROUP_TOKEN_COUNT_KEY] = count
        for key, value in old_annotation.items():
            if key not in _OWN_KEYS:
                annotation[key] = value
    props[GROUP_ANNOTATION_KEY] = annotation
    if EXCLUDED_KEY not in props:
        props[EXCLUDED_KEY] = False


# -- grouping --------------------------------------------------------------------------------------------------


def _assign_ids(messages: Sequence[Message], id_offset: int, reserved_ids: Collection[str] | None) -> None:
    """Give every message without an id ``msg_<absolute index>`` (or the next free number when taken)."""
    if all(m.message_id for m in messages):
        return
    reserved: Collection[str] = reserved_ids if reserved_ids is not None else ()
    taken: set[str] = {m.message_id for m in messages if m.message_id}  # the reserved ones are not copied
    spare = id_offset + len(messages)
    for index, message in enumerate(messages):
        if message.message_id:
            continue
        candidate = f"msg_{id_offset + index}"
        if candidate in taken or candidate in reserved:
            while f"msg_{spare}" in taken or f"msg_{spare}" in reserved:
                spare += 1
            candidate = f"msg_{spare}"
        message.message_id = candidate
        taken.add(candidate)


def _call_result_pairs(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """(declaring message index, result message index) for each unambiguously paired call and result."""
    open_calls: dict[tuple[str, str], list[int]] = {}
    pairs: list[tuple[int, int]] = []
    for index, message in enumerate(messages):
        role = message.role
        if role != "assistant" and role != "tool":
            continue
        for content in message.contents:
            kind = content.type
            call_id = content.call_id
            if not call_id:
                continue
            if kind in _PAIRED_CALLS:
                if role == "assistant":
                    open_calls.setdefault((kind, call_id), []).append(index)
            elif kind in _CALL_OF_RESULT:
                candidates = open_calls.get((_CALL_OF_RESULT[kind], call_id))
                if candidates is not None and len(candidates) == 1:
                    pairs.append((candidates.pop(), index))
    return pairs


def _link(messages: Sequence[Message], spans: list[dict[str, Any]]) -> None:
    """Give spans holding a call and, later, its result the earlier span's group id (union-find)."""
    if len(spans) < 2:
        return
    pairs = _call_result_pairs(messages)
    if not pairs:
        return
    span_of: list[int] = [0] * len(messages)
    for span_index, span in enumerate(spans):
        for i in range(span["start_index"], span["end_index"] + 1):
            span_of[i] = span_index
    parent = list(range(len(spans)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked = False
    for declared_at, answered_at in pairs:
        first, later = span_of[declared_at], span_of[answered_at]
        if first >= later:
            continue
        a, b = root(first), root(later)
        if a != b:
            parent[max(a, b)] = min(a, b)
            linked = True
    if not linked:
        return
    reasoning: dict[int, bool] = {}
    roots = [root(i) for i in range(len(spans))]
    for span, r in zip(spans, roots, strict=True):
        reasoning[r] = reasoning.get(r, False) or span["has_reasoning"]
    for span, r in zip(spans, roots, strict=True):
        span["group_id"] = spans[r]["group_id"]
        span["has_reasoning"] = reasoning[r]


def group_messages(
    messages: list[Message],
    *,
    id_offset: int = 0,
    reserved_ids: Iterable[str] | None = None,
    reserved_group_ids: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """Split ``messages`` into group spans, giving messages without an id one first.

    Args:
        messages: The messages (or a tail slice of a longer list) to group.
        id_offset: The slice's start in the full list, so assigned ids (``msg_<index>``) stay unique.
        reserved_ids: Ids used outside the slice, which assigned ids must not repeat.
        reserved_group_ids: Group ids used outside the slice. A group id comes from its first message's id;
            when two groups would get the same one (a client that numbers its messages like the ids
            assigned here), the later group's id gets ``_at_<index>``, so unrelated messages never share a
            group.

    Returns:
        One dict per contiguous span, in order: ``group_id``, ``kind``, ``start_index``, ``end_index`` (both
        inclusive, in ``messages``) and ``has_reasoning``. A result that arrives after other messages links
        back to its call: its span then carries the call's group id.

    Example:
        ```python
        from agentnb import Content, Message
        from agentnb.compaction import group_messages

        spans = group_messages([
            Message("user", ["Weather?"]),
            Message("assistant", [Content.from_function_call("c1", "get_weather", arguments="{}")]),
            Message("tool", [Content.from_function_result("c1", result="sunny")]),
        ])
        [s["kind"] for s in spans]  # ['user', 'tool_call']
        ```
    """
    if reserved_ids is not None and not isinstance(reserved_ids, Collection):
        reserved_ids = set(reserved_ids)
    _assign_ids(messages, id_offset, reserved_ids)
    spans: list[dict[str, Any]] = []
    n = len(messages)
    i = 0
    used: set[str] = set()
    taken = reserved_group_ids or ()

    def add(start: int, end: int, kind: str, has_reasoning: bool) -> None:
        group_id = _group_id_for(messages[start], len(spans))
        if group_id in used or group_id in taken:
            group_id = f"{group_id}_at_{id_offset + start}"
        used.add(group_id)
        spans.append(
            {
                "group_id": group_id,
                "kind": kind,
                "start_index": start,
                "end_index": end,
                "has_reasoning": has_reasoning,
            }
        )

    flags = _flags(messages)
    crossing = False  # a result that may answer a call of another span (then spans are linked)
    while i < n:
        flag = flags[i]
        role = messages[i].role
        if role == "system" or role == "user":
            add(i, i, role, bool(flag & _REASONING))
            i += 1
            continue
        start = i
        if flag & _ONLY_REASONING:
            # Reasoning ahead of a tool call belongs to the call's group (a model that reasons, then calls).
            j = i
            while j < n and flags[j] & _ONLY_REASONING:
                j += 1
            if j < n and flags[j] & _CALLS:
                i = j
        if flags[i] & _CALLS:
            has_reasoning = start < i or bool(flags[i] & _REASONING)
            k = i + 1
            while k < n and flags[k] & _ONLY_REASONING:
                has_reasoning = True
                k += 1
            while k < n and flags[k] & _TOOL:
                k += 1
            add(start, k - 1, "tool_call", has_reasoning)
            if not crossing and any(flags[x] & _RESULT for x in range(start, k)):
                crossing = _answers_outside(messages[start:k])
            i = k
            continue
        if flag & _TOOL:
            k = i + 1
            while k < n and flags[k] & _TOOL:
                k += 1
            add(i, k - 1, "tool_call", False)
            crossing = crossing or any(flags[x] & _RESULT for x in range(i, k))
            i = k
            continue
        add(i, i, "assistant_text", bool(flag & _REASONING))
        crossing = crossing or bool(flag & _RESULT)
        i += 1
    if crossing:
        _link(messages, spans)
    return spans


# What a message holds, as bits (see _flags): the grouping loop reads these instead of the contents.
_CALLS, _ONLY_REASONING, _REASONING, _TOOL, _RESULT = 1, 2, 4, 8, 16


def _flags(messages: Sequence[Message]) -> list[int]:
    """Per message: an assistant's tool calls, reasoning only, any reasoning, a tool message, results."""
    out: list[int] = []
    for message in messages:
        role = message.role
        contents = message.contents
        if len(contents) == 1:  # most messages: one content, no set needed
            kind = contents[0].type
            if kind == "text_reasoning":
                flag = _REASONING | _ONLY_REASONING if role == "assistant" else _REASONING
            elif kind in _CALL_TYPES:
                flag = _CALLS if role == "assistant" else 0
            elif kind in _CALL_OF_RESULT:
                flag = _RESULT if role == "assistant" or role == "tool" else 0
            else:
                flag = 0
            if role == "tool":
                flag |= _TOOL
        else:
            flag = _flag_of(role, contents)
        out.append(flag)
    return out


def _flag_of(role: str, contents: Sequence[Content]) -> int:
    """The flags of a message with several (or no) contents."""
    kinds = {c.type for c in contents}
    flag = 0
    if "text_reasoning" in kinds:
        flag = _REASONING | _ONLY_REASONING if role == "assistant" and len(kinds) == 1 else _REASONING
    if role == "assistant" and not kinds.isdisjoint(_CALL_TYPES):
        flag |= _CALLS
    if (role == "assistant" or role == "tool") and not kinds.isdisjoint(_CALL_OF_RESULT):
        flag |= _RESULT
    if role == "tool":
        flag |= _TOOL
    return flag


def _answers_outside(span: Sequence[Message]) -> bool:
    """Whether a result in this span answers a call not declared before it in the span (so maybe another's)."""
    declared: set[tuple[str, str]] = set()
    for message in span:
        role = message.role
        if role != "assistant" and role != "tool":
            continue
        for content in message.contents:
            call_id = content.call_id
            if not call_id:
                continue
            kind = content.type
            if kind in _PAIRED_CALLS:
                if role == "assistant":
                    declared.add((kind, call_id))
            elif kind in _CALL_OF_RESULT and (_CALL_OF_RESULT[kind], call_id) not in declared:
                return True
    return False


def _group_id_for(message: Message, group_index: int) -> str:
    return f"group_{message.message_id}" if message.message_id else f"group_index_{group_index}"


# -- incremental annotation ------------------------------------------------------------------------------------


def _first_gap(messages: Sequence[Message], *, tokens: bool) -> int | None:
    """The first message without a group annotation (or, with ``tokens``, without a token count)."""
    for index, message in enumerate(messages):
        annotation: Any = message.additional_properties.get(GROUP_ANNOTATION_KEY)
        if type(annotation) is not _DICT:
            return index
        if type(annotation.get(GROUP_ID_KEY)) is not str or annotation.get(GROUP_KIND_KEY) not in _KINDS:
            return index
        if tokens and type(annotation.get(GROUP_TOKEN_COUNT_KEY)) is not int:
            return index
    return None


def _start_of_previous_group(messages: Sequence[Message], index: int) -> int:
    """Back up to the start of the group before ``index``: new messages may belong to it (tool results do)."""
    if index <= 0:
        return 0
    if index < len(messages) and messages[index].role in _GROUP_OPENERS:
        return index  # a system or user message starts a group that nothing before it can extend
    previous = index - 1
    group_id = group_id_of(messages[previous])
    if group_id is None:
        return previous
    while previous > 0 and group_id_of(messages[previous - 1]) == group_id:
        previous -= 1
    return previous


def _start_of_linked_calls(messages: Sequence[Message], start: int) -> int:
    """Back up further to the earliest call that a result at or after ``start`` may answer.

    Every earlier open call with that id counts, not only the one it would pair with: with one of them left
    outside the slice, an ambiguous result would look unambiguous.
    """
    if start <= 0:
        return 0
    # Most tails answer no call from before them (a new turn, or a call and its result together): then
    # nothing before ``start`` can change, and the scan of the whole history is skipped.
    if not _answers_outside(messages[start:]):
        return start
    open_calls: dict[tuple[str, str], list[int]] = {}
    earliest: int | None = None
    for index, message in enumerate(messages):
        role = message.role
        if role != "assistant" and role != "tool":
            continue
        for content in message.contents:
            call_id = content.call_id
            if not call_id:
                continue
            kind = content.type
            if kind in _PAIRED_CALLS:
                if role == "assistant":
                    open_calls.setdefault((kind, call_id), []).append(index)
            elif kind in _CALL_OF_RESULT:
                candidates = open_calls.get((_CALL_OF_RESULT[kind], call_id))
                if not candidates:
                    continue
                if index >= start:
                    before = [c for c in candidates if c < start]
                    if before and (earliest is None or before[0] < earliest):
                        earliest = before[0]
                if len(candidates) == 1:
                    candidates.pop()
    if earliest is None:
        return start
    group_id = group_id_of(messages[earliest])
    if group_id is None:
        return earliest
    while earliest > 0 and group_id_of(messages[earliest - 1]) == group_id:
        earliest -= 1
    return earliest


def _count_missing(messages: Sequence[Message], tokenizer: TokenizerProtocol) -> None:
    """Count the tokens of grouped messages that have no count yet (grouping is left as it is)."""
    counted = False
    for message in messages:
        annotation: Any = message.additional_properties[GROUP_ANNOTATION_KEY]
        if type(annotation.get(GROUP_TOKEN_COUNT_KEY)) is not int:
            annotation[GROUP_TOKEN_COUNT_KEY] = tokenizer.count_tokens(serialize_message(message))
            counted = True
    if counted:
        note_mutation()


def regroup_start(messages: Sequence[Message], index: int) -> int:
    """Where regrouping must start for messages from ``index`` on: the group before it, and any call answered."""
    return _start_of_linked_calls(messages, _start_of_previous_group(messages, index))


def annotate_message_groups(
    messages: list[Message],
    *,
    from_index: int | None = None,
    force_reannotate: bool = False,
    tokenizer: TokenizerProtocol | None = None,
) -> list[str]:
    """Annotate ``messages`` with their groups, redoing only the tail that changed; return the group ids in order.

    By default the work starts at the first message without an annotation (backed up to the group before
    it, and to the call a new result answers), so a long, already annotated history costs a scan, not a
    regrouping. With ``tokenizer``, messages without a token count are counted too.

    Args:
        messages: The conversation; annotated in place.
        from_index: Regroup from here (still backed up to whole groups).
        force_reannotate: Regroup everything.
        tokenizer: Also count tokens of messages not counted yet.
    """
    if not messages:
        return []
    if force_reannotate:
        start = 0
    elif from_index is not None:
        start = max(0, min(from_index, len(messages) - 1))
    else:
        gap = _first_gap(messages, tokens=False)
        if gap is None:
            # Every message is grouped: at most some token counts are missing (a summary just inserted).
            if tokenizer is not None:
                _count_missing(messages, tokenizer)
            return ordered_group_ids(messages)
        start = gap
    start = regroup_start(messages, start)

    offset = 0
    prefix_groups: set[str] = set()
    for message in messages[:start]:
        annotation: Any = message.additional_properties.get(GROUP_ANNOTATION_KEY)
        if type(annotation) is _DICT:
            index = annotation.get(GROUP_INDEX_KEY)
            if type(index) is int and index >= offset:
                offset = index + 1
            known = annotation.get(GROUP_ID_KEY)
            if type(known) is str:
                prefix_groups.add(known)
    tail = messages[start:]
    # Ids used before the tail matter only when a tail message needs one.
    reserved = {m.message_id for m in messages[:start] if m.message_id} if not all(m.message_id for m in tail) else None
    found = regroup_tail(
        messages, start, offset=offset, prefix_groups=prefix_groups, reserved_ids=reserved, tokenizer=tokenizer
    )
    if found is not None and start == 0:
        return found
    return ordered_group_ids(messages)


def regroup_tail(
    messages: list[Message],
    start: int,
    *,
    offset: int,
    prefix_groups: Collection[str],
    reserved_ids: Collection[str] | None,
    tokenizer: TokenizerProtocol | None,
) -> list[str] | None:
    """Group and annotate ``messages[start:]`` (a whole-group boundary), numbering its groups from ``offset``.

    ``prefix_groups`` and ``reserved_ids`` are the group and message ids used before ``start``; the caller
    knows them (from a scan, or from a kept index) so this costs only the tail. Returns the tail's group ids
    in order when every span is its own group (``None`` when results linked spans, or after the general pass).
    """
    tail = messages[start:]
    if len(tail) < _BULK:
        found = _annotate_tail(tail, start, offset, reserved_ids, prefix_groups, tokenizer)
    else:
        with gc_paused():  # thousands of small dicts, none in a cycle: the collector would rescan the history
            found = _annotate_tail(tail, start, offset, reserved_ids, prefix_groups, tokenizer)
    note_mutation()
    return found


# From this many messages on, annotation pauses the cyclic collector (below, pausing costs more than it saves).
_BULK = 256


def _annotate_tail(
    tail: list[Message],
    start: int,
    offset: int,
    reserved_ids: Collection[str] | None,
    prefix_groups: Collection[str],
    tokenizer: TokenizerProtocol | None,
) -> list[str] | None:
    found = _annotate_simple(tail, start, offset, reserved_ids, prefix_groups)
    if found is None:
        _annotate_general(tail, start, offset, reserved_ids, prefix_groups)
    if tokenizer is not None:
        for message in tail:
            annotation = message.additional_properties[GROUP_ANNOTATION_KEY]
            if type(annotation[GROUP_TOKEN_COUNT_KEY]) is not int:
                annotation[GROUP_TOKEN_COUNT_KEY] = tokenizer.count_tokens(serialize_message(message))
    return found


def _annotate_general(
    tail: list[Message],
    start: int,
    offset: int,
    reserved_ids: Collection[str] | None,
    prefix_groups: Collection[str],
) -> None:
    """Annotate any tail: spans from :func:`group_messages`, linked spans sharing one group."""
    spans = group_messages(tail, id_offset=start, reserved_ids=reserved_ids, reserved_group_ids=prefix_groups)
    span_count: dict[str, int] = {}
    for span in spans:
        span_count[span["group_id"]] = span_count.get(span["group_id"], 0) + 1
    indices: dict[str, int] = {}
    split_groups: dict[str, list[Message]] = {}
    for span in spans:
        group_id: str = span["group_id"]
        index = indices.setdefault(group_id, offset + len(indices))
        kind: str = span["kind"]
        has_reasoning: bool = span["has_reasoning"]
        split = span_count[group_id] > 1
        for message in tail[span["start_index"] : span["end_index"] + 1]:
            _write(message, group_id, kind, index, has_reasoning)
            if split:
                split_groups.setdefault(group_id, []).append(message)
    # A group is atomic: a result that joined a group someone had excluded half of brings the rest back.
    for group in split_groups.values():
        if any(not is_excluded(m) for m in group):
            for message in group:
                message.additional_properties[EXCLUDED_KEY] = False


def _annotate_simple(
    tail: list[Message],
    start: int,
    offset: int,
    reserved_ids: Collection[str] | None,
    prefix_groups: Collection[str],
) -> list[str] | None:
    """Group and annotate ``tail`` in one pass when no result links two spans and no group id repeats.

    The same groups as :func:`group_messages` (read message by message: a run of reasoning waits to see
    whether a call follows it). Returns the group ids in order, or ``None`` when the tail needs the general
    pass (which rewrites whatever this one wrote: ids it assigned are the ones that pass would assign).
    """
    assign = not any(map(_MESSAGE_ID, tail))  # no message has an id: each gets msg_<its index>
    if assign and reserved_ids:  # unless an id used before the tail is one of those
        for number in range(start, start + len(tail)):
            if f"msg_{number}" in reserved_ids:
                _assign_ids(tail, start, reserved_ids)  # the careful numbering
                assign = False
                break
    elif not assign and not all(map(_MESSAGE_ID, tail)):
        _assign_ids(tail, start, reserved_ids)
    group_ids: list[str] = []
    add_group = group_ids.append
    index = offset - 1
    group_id = ""
    kind = ""
    reasoning = False
    group_start = 0
    phase = 0  # 1: a call group takes reasoning and tool messages, 2: tool messages only, 0: neither
    declared: str | None = None  # the call id of a one-call group, which its result is checked against
    crossing = False
    pending: list[int] = []  # a run of reasoning-only messages waiting to see whether a call follows
    annotation_key, excluded_key = GROUP_ANNOTATION_KEY, EXCLUDED_KEY
    text_kind = _TEXT_KINDS.get
    position = -1
    for message in tail:
        position += 1
        if assign:
            message.message_id = f"msg_{start + position}"
        role = message.role
        contents = message.contents
        usual = "" if pending or len(contents) != 1 else contents[0].type  # one content, no reasoning waiting
        if usual == "text" and role != "tool":
            # The usual message, a text of a system, a user or an assistant: a group of its own.
            phase = 0
            kind = text_kind(role, "assistant_text")
            reasoning = False
        elif usual == "function_call" and role == "assistant":  # one call: a tool-call group of its own
            phase = 1
            kind = "tool_call"
            reasoning = False
            declared = contents[0].call_id
        elif usual == "function_result" and role == "tool" and phase and contents[0].call_id == declared:
            # The result of the group's one call: it joins the group.
            phase = 2
            props = message.additional_properties
            if props:  # something already there to keep
                _put(message, group_id, kind, index, reasoning)
            else:
                props[annotation_key] = {
                    "id": group_id,
                    "kind": kind,
                    "index": index,
                    "has_reasoning": reasoning,
                    "token_count": None,
                }
                props[excluded_key] = False
            continue
        else:
            result = False
            if len(contents) == 1:
                content = contents[0]
                content_kind = content.type
                if content_kind == "text" or content_kind == "function_result":
                    flag = 0
                    result = content_kind == "function_result"
                elif content_kind == "text_reasoning":
                    flag = _REASONING | _ONLY_REASONING if role == "assistant" else _REASONING
                elif content_kind in _CALL_TYPES:
                    flag = _CALLS if role == "assistant" else 0
                else:
                    flag = 0
                    result = content_kind in _CALL_OF_RESULT
            else:
                content = None
                flag = _flag_of(role, contents)
                result = bool(flag & _RESULT)
            if role == "tool":
                flag |= _TOOL
            elif role != "assistant":
                result = False
            if pending and not flag & _ONLY_REASONING:
                if flag & _CALLS:  # reasoning, then the call it led to: one group from the first reasoning
                    index += 1
                    group_id = f"group_{tail[pending[0]].message_id}"
                    add_group(group_id)
                    for waiting in pending:
                        _put(tail[waiting], group_id, "tool_call", index, True)
                    kind, reasoning, group_start, phase = "tool_call", True, pending[0], 1
                    pending.clear()
                    declared = _declared_call(content)
                    _put(message, group_id, kind, index, True)
                    if result:
                        crossing = crossing or _answers_outside(tail[group_start : position + 1])
                    continue
                for waiting in pending:  # reasoning that led to no call: each its own assistant text
                    index += 1
                    waiting_id = f"group_{tail[waiting].message_id}"
                    add_group(waiting_id)
                    _put(tail[waiting], waiting_id, "assistant_text", index, True)
                pending.clear()
                phase = 0
            if role == "system" or role == "user":
                phase = 0
                kind, reasoning = role, bool(flag & _REASONING)
            elif flag & _CALLS:
                phase = 1
                kind, reasoning = "tool_call", bool(flag & _REASONING)
                declared = _declared_call(content)
                if result:
                    crossing = crossing or _answers_outside([message])
            elif flag & _ONLY_REASONING:
                if phase == 1:  # reasoning after the call joins its group
                    if not reasoning:
                        reasoning = True
                        for member in tail[group_start:position]:
                            member.additional_properties[annotation_key][GROUP_HAS_REASONING_KEY] = True
                    _put(message, group_id, kind, index, True)
                    continue
                pending.append(position)
                continue
            elif flag & _TOOL:
                if phase:
                    phase = 2
                    _put(message, group_id, kind, index, reasoning)
                    if result and not crossing:
                        if content is not None and declared is not None:
                            crossing = content.call_id != declared or content.type != "function_result"
                        else:
                            crossing = _answers_outside(tail[group_start : position + 1])
                    continue
                phase = 2
                kind, reasoning = "tool_call", False
                declared = None
                crossing = crossing or result
            else:
                phase = 0
                kind, reasoning = "assistant_text", bool(flag & _REASONING)
                crossing = crossing or result
        index += 1
        group_id = f"group_{message.message_id}"
        add_group(group_id)
        group_start = position
        props = message.additional_properties
        if props:  # something already there to keep
            _put(message, group_id, kind, index, reasoning)
        else:
            # The GROUP_*_KEY names spelled out: a dict of constant keys builds faster.
            props[annotation_key] = {
                "id": group_id,
                "kind": kind,
                "index": index,
                "has_reasoning": reasoning,
                "token_count": None,
            }
            props[excluded_key] = False
    for waiting in pending:
        index += 1
        waiting_id = f"group_{tail[waiting].message_id}"
        add_group(waiting_id)
        _put(tail[waiting], waiting_id, "assistant_text", index, True)
    # Ids assigned here are all different, so are the group ids made from them: only given ids may repeat.
    if crossing or (not assign and len(set(group_ids)) != len(group_ids)):
        return None
    # Look each new id up in the earlier ones (a dict view's isdisjoint would walk all of them instead).
    if prefix_groups and any(map(prefix_groups.__contains__, group_ids)):
        return None
    return group_ids


def _declared_call(content: Content | None) -> str | None:
    """The call id a one-content call message declares for a function result to answer (else ``None``)."""
    return content.call_id if content is not None and content.type == "function_call" else None


def _put(message: Message, group_id: str, kind: str, index: int, has_reasoning: bool) -> None:
    """Annotate one member of a group (a fresh dict, or merged into the one it has)."""
    props = message.additional_properties
    if GROUP_ANNOTATION_KEY in props:
        _write(message, group_id, kind, index, has_reasoning)
        return
    props[GROUP_ANNOTATION_KEY] = {
        "id": group_id,
        "kind": kind,
        "index": index,
        "has_reasoning": has_reasoning,
        "token_count": None,
    }
    if EXCLUDED_KEY not in props:
        props[EXCLUDED_KEY] = False


def ordered_group_ids(messages: Sequence[Message]) -> list[str]:
    """Each group id once, in the order the groups start."""
    try:  # every message annotated (as after annotate_message_groups): one pass in C
        return list(dict.fromkeys([m.additional_properties[GROUP_ANNOTATION_KEY][GROUP_ID_KEY] for m in messages]))
    except (KeyError, TypeError):
        pass
    seen: dict[str, None] = {}
    for message in messages:
        group_id = group_id_of(message)
        if group_id is not None:
            seen[group_id] = None
    return list(seen)


# -- token counts ----------------------------------------------------------------------------------------------


def serialize_message(message: Message) -> str:
    """The text a tokenizer counts for a message: its role, id and contents as JSON (non-ASCII kept).

    The JSON of ``{"role", "message_id", "contents"}`` with sorted keys; a plain text content (most of them)
    is written directly, which is what the encoder would write for it.
    """
    parts: list[str] = []
    for content in message.contents:
        payload = content.to_dict()
        text = payload.get("text")
        if len(payload) == 2 and type(text) is str and payload.get("type") == "text":
            parts.append(f'{{"additional_properties": {{}}, "text": {_STRING(text)}, "type": "text"}}')
        else:
            # Counted as the reference serializes contents (an empty additional_properties included), so token
            # counts and the budgets tuned on them match across the two frameworks.
            payload.setdefault("additional_properties", {})
            parts.append(_ENCODE(payload))
    message_id = message.message_id
    identifier = "null" if message_id is None else _ENCODE(message_id)
    return f'{{"contents": [{", ".join(parts)}], "message_id": {identifier}, "role": {_STRING(message.role)}}}'


# One encoder for every message (``json.dumps`` with options builds a new one per call), and the string
# escaper it uses (non-ASCII kept).
_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode
_STRING: Any = json.encoder.encode_basestring  # pyright: ignore[reportUnknownMemberType]


def annotate_token_counts(
    messages: list[Message],
    *,
    tokenizer: TokenizerProtocol,
    from_index: int | None = None,
    force_retokenize: bool = False,
) -> None:
    """Count tokens of messages not counted yet (from ``from_index``, or all with ``force_retokenize``)."""
    if not messages:
        return
    annotate_message_groups(messages, from_index=from_index)
    if force_retokenize:
        start = 0
    elif from_index is not None:
        start = max(0, min(from_index, len(messages) - 1))
    else:
        first = next((i for i, m in enumerate(messages) if token_count_of(m) is None), None)
        if first is None:
            return
        start = first
    for message in messages[start:]:
        raw_annotation(message)[GROUP_TOKEN_COUNT_KEY] = tokenizer.count_tokens(serialize_message(message))
    note_mutation()


def extend_compaction_messages(
    messages: list[Message], new_messages: Sequence[Message], *, tokenizer: TokenizerProtocol | None = None
) -> None:
    """Append ``new_messages`` and annotate only what they change."""
    if not new_messages:
        return
    start = len(messages)
    messages.extend(new_messages)
    annotate_message_groups(messages, from_index=start, tokenizer=tokenizer)


def append_compaction_message(
    messages: list[Message], message: Message, *, tokenizer: TokenizerProtocol | None = None
) -> None:
    """Append one message and annotate only what it changes."""
    extend_compaction_messages(messages, [message], tokenizer=tokenizer)


# -- inclusion -------------------------------------------------------------------------------------------------


def included_messages(messages: list[Message]) -> list[Message]:
    """The messages compaction has not excluded, in order: what the model is sent."""
    return [m for m in messages if not m.additional_properties.get(EXCLUDED_KEY, False)]


def included_token_count(messages: list[Message]) -> int:
    """The annotated token counts of the included messages, summed (uncounted messages count 0)."""
    total = 0
    for message in messages:
        props = message.additional_properties
        if props.get(EXCLUDED_KEY, False):
            continue
        raw: Any = props.get(GROUP_ANNOTATION_KEY)
        if type(raw) is _DICT:
            count = raw.get(GROUP_TOKEN_COUNT_KEY)
            if type(count) is int:
                total += count
    return total


def set_excluded(message: Message, *, excluded: bool, reason: str | None = None) -> bool:
    """Mark one message excluded (or included again), with the reason; return whether that changed it."""
    props = message.additional_properties
    changed = bool(props.get(EXCLUDED_KEY, False)) != excluded
    if changed:
        props[EXCLUDED_KEY] = excluded
        note_mutation()
    if reason is not None:
        props[EXCLUDE_REASON_KEY] = reason
    return changed


def exclude_group_ids(messages: list[Message], group_ids: set[str], *, reason: str) -> bool:
    """Exclude every message of the given groups; return whether anything changed."""
    changed = False
    for message in messages:
        group_id = group_id_of(message)
        if group_id is not None and group_id in group_ids:
            changed = set_excluded(message, excluded=True, reason=reason) or changed
    return changed


def project_included_messages(messages: list[Message]) -> list[Message]:
    """What the model is sent after compaction (the included messages)."""
    return included_messages(messages)


def summary_links(message: Message) -> Mapping[str, Any]:
    """The summary fields of a message's annotation (empty when it is neither a summary nor summarized)."""
    raw = message.additional_properties.get(GROUP_ANNOTATION_KEY)
    return cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
