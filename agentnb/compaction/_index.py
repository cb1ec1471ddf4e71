"""A conversation's groups as summaries, kept between requests and extended by the new messages only.

A session's next request holds the same Message objects as the last one, plus a few new ones. Walking the
whole history again on every request (to find the first unannotated message, gather the groups, mark the
old ones excluded and copy every message so those marks stay off the history) made each turn cost more than
the one before. :class:`GroupIndex` keeps, per group, its id, kind, member positions and token count; it
lives on the last message it covers (as ``agentnb._conversation``'s tool-kind summary does) and the next
request reuses it when its messages start with the same objects: one C-level identity comparison, then only
the new tail is annotated and read.

The index trusts what it read while no compaction code has rewritten an annotation or an exclusion since
(:func:`~._groups.mutation_count`); when something has, it checks each covered message's annotation is still
the same dict before reusing it. Code that edits ``_group`` or ``_excluded`` by hand instead of through the
compaction functions should call :func:`~._groups.note_mutation`.

:class:`GroupView` is one request's decision over an index: a byte per group (in or out) and the reason.
Strategies that implement ``_compact_view`` decide on it without touching a message, and the request sends
slices of the conversation instead of copies of it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate
from operator import is_
from typing import TYPE_CHECKING, Any

from .._types import Message
from ._groups import (
    EXCLUDE_REASON_KEY,
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    GROUP_ID_KEY,
    GROUP_INDEX_KEY,
    GROUP_KIND_KEY,
    GROUP_TOKEN_COUNT_KEY,
    SUMMARIZED_BY_SUMMARY_ID_KEY,
    SUMMARY_OF_GROUP_IDS_KEY,
    annotate_message_groups,
    mutation_count,
    note_mutation,
    regroup_start,
    regroup_tail,
)

if TYPE_CHECKING:
    from ._report import ExcludedGroup
    from ._tokenizers import TokenizerProtocol

__all__ = ["GroupIndex", "GroupView", "NeedsMessages", "compact_in_place", "compact_view"]

_DICT: Any = dict


class NeedsMessages(Exception):
    """A strategy cannot decide on group summaries alone (it inserts messages): use the message path."""


class GroupIndex:
    """Per-group summaries of an annotated conversation: ids, kinds, member positions, token counts."""

    __slots__ = (
        "annotations",
        "counted",
        "generation",
        "group_of",
        "ids",
        "kept",
        "kinds",
        "linked",
        "members",
        "message_ids",
        "message_sums",
        "messages",
        "number",
        "order_max",
        "out",
        "out_groups",
        "out_messages",
        "out_tokens",
        "out_why",
        "previews",
        "reason_names",
        "special",
        "split",
        "systems",
        "token_sums",
        "tokens",
    )

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.annotations: list[Any] = []  # each message's ``_group`` dict, to check it is still the same one
        self.group_of: list[int] = []  # each message's group number
        self.message_ids: set[str] = set()
        self.ids: list[str] = []  # by group number (the order groups start in)
        self.kinds: list[str] = []
        self.members: list[list[int]] = []  # message positions
        self.tokens: list[int] = []
        self.order_max: list[int] = []  # the highest annotated group index up to each group
        self.token_sums: list[int] = [0]  # tokens of the groups before each group (and of all, last)
        self.message_sums: list[int] = [0]  # messages of the groups before each group (and of all, last)
        self.number: dict[str, int] = {}
        self.systems: list[int] = []  # system group numbers, ascending
        self.split: set[int] = set()  # groups whose members are not one run of positions
        # Positions of messages the view cannot describe: messages excluded while others of their group are not.
        self.special: list[int] = []
        # Positions of summaries and of the originals they stand for. A view decides on them like on any group
        # (a summary is a group of its own, its originals' groups are out), but a request's report must read
        # their links off the messages.
        self.linked: list[int] = []
        # The exclusions already written on the messages, per group, and their totals.
        self.out = bytearray()  # 1 = the group's messages are all excluded
        self.kept = bytearray()  # its complement (1 = sent), which a view starts from with one copy
        self.out_why = bytearray()  # the reason, as a code into reason_names
        self.reason_names: list[str] = [""]
        self.out_groups = self.out_tokens = self.out_messages = 0
        self.previews: dict[int, ExcludedGroup] = {}  # report entries of groups left out, by group number
        self.counted = True  # every message has a token count
        self.generation = -1

    # -- finding and keeping ------------------------------------------------------------------------------------

    @classmethod
    def of(cls, messages: list[Message], tokenizer: TokenizerProtocol | None) -> GroupIndex:
        """The index of ``messages``, annotated (and token counted with ``tokenizer``) on the way.

        Reuses the index the previous request left on one of these messages when it still describes them,
        else builds one; either way the index moves to ``messages[-1]``.
        """
        found: GroupIndex | None = None
        for j in range(len(messages) - 1, -1, -1):  # the last request's index sits a few messages from the end
            cache: Any = messages[j]._compaction_cache  # pyright: ignore[reportPrivateUsage]
            if cache is None:
                continue
            messages[j]._compaction_cache = None  # pyright: ignore[reportPrivateUsage]  # moves to the last message
            if isinstance(cache, GroupIndex) and len(cache.messages) == j + 1 and cache.covers(messages):
                found = cache
            break
        if found is None or (tokenizer is not None and not found.counted):
            found = cls()
            annotate_message_groups(messages, tokenizer=tokenizer)
            found.read(messages, 0)
        else:
            found.extend(messages, tokenizer)
        found.generation = mutation_count()
        if messages:
            messages[-1]._compaction_cache = found  # pyright: ignore[reportPrivateUsage]
        return found

    def covers(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` starts with the covered messages, their annotations unchanged."""
        mine = self.messages
        covered = len(mine)
        if len(messages) == covered:
            same = messages == mine  # identity first, element by element, in C
        else:  # compare whole lists (no copy of the long prefix): lend ours the new tail for the comparison
            mine.extend(messages[covered:])
            try:
                same = messages == mine
            finally:
                del mine[covered:]
        if not same:
            return False
        if self.generation == mutation_count():
            return True
        # Something rewrote annotations since: each covered message must still carry the dict read from it,
        # and its exclusion (and reason) must still be the one read.
        props = [m.additional_properties for m in messages[:covered]]
        if not all(map(is_, [p.get(GROUP_ANNOTATION_KEY) for p in props], self.annotations)):
            return False
        out, why, names = self.out, self.out_why, self.reason_names
        for p, group in zip(props, self.group_of, strict=True):
            if bool(p.get(EXCLUDED_KEY, False)) != bool(out[group]):
                return False
            if out[group] and (p.get(EXCLUDE_REASON_KEY) or "") != names[why[group]]:
                return False
        return True

    def extend(self, messages: list[Message], tokenizer: TokenizerProtocol | None) -> None:
        """Annotate and read the messages after the covered ones (and the groups they may join)."""
        covered = len(self.messages)
        if covered == len(messages):
            self.messages = list(messages)  # equal by value is enough; keep the objects of this request
            return
        start = regroup_start(messages, covered)
        self.truncate(start)
        regroup_tail(
            messages,
            start,
            offset=self.order_max[-1] + 1 if self.order_max else 0,
            prefix_groups=self.number.keys(),
            reserved_ids=self.message_ids,
            tokenizer=tokenizer,
        )
        self.read(messages, start)

    def truncate(self, start: int) -> None:
        """Forget the messages from ``start`` on (a group boundary: no earlier group has members past it)."""
        if start >= len(self.messages):
            return
        first_gone = self.group_of[start]
        groups_before = len(self.ids)
        for group in range(first_gone, groups_before):
            if self.out[group]:
                self._count_out(group, -1)
        del self.out[first_gone:]
        del self.kept[first_gone:]
        del self.out_why[first_gone:]
        for group_id in self.ids[first_gone:]:
            del self.number[group_id]
        for message in self.messages[start:]:
            if message.message_id:
                self.message_ids.discard(message.message_id)
        for column in (self.ids, self.kinds, self.members, self.tokens, self.order_max):
            del column[first_gone:]
        del self.token_sums[first_gone + 1 :]
        del self.message_sums[first_gone + 1 :]
        for column in (self.messages, self.annotations, self.group_of):
            del column[start:]
        del self.systems[bisect_left(self.systems, first_gone) :]
        del self.special[bisect_left(self.special, start) :]
        del self.linked[bisect_left(self.linked, start) :]
        if self.split:
            self.split = {g for g in self.split if g < first_gone}
        for group in range(first_gone, groups_before):
            self.previews.pop(group, None)

    def read(self, messages: Sequence[Message], start: int) -> None:
        """Add the annotated ``messages[start:]`` (every one holds a well-formed ``_group`` after annotation)."""
        number, members, tokens = self.number, self.members, self.tokens
        group_of, annotations = self.group_of, self.annotations
        token_sums, message_sums, order_max = self.token_sums, self.message_sums, self.order_max
        special = self.special
        resum = False
        for position in range(start, len(messages)):
            message = messages[position]
            props = message.additional_properties
            annotation: Any = props[GROUP_ANNOTATION_KEY]
            group_id: str = annotation[GROUP_ID_KEY]
            count = annotation.get(GROUP_TOKEN_COUNT_KEY)
            if type(count) is not int:
                self.counted = False
                count = 0
            flag = 1 if props.get(EXCLUDED_KEY, False) else 0
            group = number.get(group_id)
            if group is None:
                group = len(self.ids)
                number[group_id] = group
                self.ids.append(group_id)
                kind: str = annotation[GROUP_KIND_KEY]
                self.kinds.append(kind)
                members.append([position])
                tokens.append(count)
                token_sums.append(token_sums[-1] + count)
                message_sums.append(message_sums[-1] + 1)
                index = annotation.get(GROUP_INDEX_KEY)
                order = index if type(index) is int else group
                order_max.append(max(order, order_max[-1]) if order_max else order)
                if kind == "system":
                    self.systems.append(group)
                self.out.append(flag)
                self.kept.append(1 - flag)
                self.out_why.append(self.code(props.get(EXCLUDE_REASON_KEY) or "") if flag else 0)
                if flag:
                    self._count_out(group, 1)
            else:
                found = members[group]
                if found[-1] != position - 1:
                    self.split.add(group)
                found.append(position)
                tokens[group] += count
                if flag != self.out[group]:
                    special.append(position)
                elif flag:
                    self.out_tokens += count
                    self.out_messages += 1
                if group == len(tokens) - 1:
                    token_sums[-1] += count
                    message_sums[-1] += 1
                else:  # a late result joined an older group: every later sum moves
                    resum = True
            if SUMMARY_OF_GROUP_IDS_KEY in annotation or SUMMARIZED_BY_SUMMARY_ID_KEY in annotation:
                self.linked.append(position)
            group_of.append(group)
            annotations.append(annotation)
            if message.message_id:
                self.message_ids.add(message.message_id)
        self.messages.extend(messages[start:])
        if resum:
            token_sums[1:] = accumulate(tokens)
            message_sums[1:] = accumulate(map(len, members))

    def code(self, reason: str) -> int:
        """The reason's code in :attr:`out_why`."""
        try:
            return self.reason_names.index(reason)
        except ValueError:
            self.reason_names.append(reason)
            return len(self.reason_names) - 1

    def _count_out(self, group: int, sign: int) -> None:
        self.out_groups += sign
        self.out_tokens += sign * self.tokens[group]
        self.out_messages += sign * len(self.members[group])

    def write_back(self, messages: Sequence[Message], view: GroupView) -> None:
        """Write the view's changes on the messages (exclusions and reasons), and keep them as read."""
        members, out, out_why, included, why = self.members, self.out, self.out_why, view.included, view.why
        # The view started from ``out`` and ``out_why``, its reason codes extending the index's: only where it
        # wrote can they differ (and codes compare as names while the index's names are a prefix of its own).
        names = self.reason_names
        aligned = view.reasons[: len(names)] == names
        changed = False
        for group in range(view.touched_from, view.touched_to):
            if aligned and included[group] != out[group] and why[group] == out_why[group]:
                continue
            excluded = not included[group]
            reason = view.reasons[why[group]] if excluded else None
            for position in members[group]:  # set_excluded, inlined (a few calls per message less)
                props = messages[position].additional_properties
                if bool(props.get(EXCLUDED_KEY, False)) != excluded:
                    props[EXCLUDED_KEY] = excluded
                    changed = True
                if reason:
                    props[EXCLUDE_REASON_KEY] = reason
            if excluded != bool(out[group]):
                out[group] = 1 if excluded else 0
                self.kept[group] = 0 if excluded else 1
                self._count_out(group, 1 if excluded else -1)
            out_why[group] = self.code(reason) if reason else 0
        if changed:
            note_mutation()
        self.generation = mutation_count()

    # -- reading -----------------------------------------------------------------------------------------------

    def excluded_record(self, group: int, reason: str, messages: Sequence[Message]) -> ExcludedGroup:
        """The report's entry for a group left out; kept, as the group's messages do not change while covered."""
        found = self.previews.get(group)
        if found is None or found["reason"] != reason:
            from ._report import ExcludedGroup, preview_text

            found = self.previews[group] = ExcludedGroup(
                group_id=self.ids[group],
                kind=self.kinds[group],
                reason=reason,
                messages=len(self.members[group]),
                tokens=self.tokens[group],
                summary_id=None,
                preview=preview_text([messages[p] for p in self.members[group]]),
            )
        return found


class GroupView:
    """One request's decision over a :class:`GroupIndex`: which groups are sent, and why the others are not.

    ``included`` holds a byte per group (1 = sent) and ``why`` a reason code per group (0 exactly when the
    group is sent), so strategies can mark ranges with slice assignments instead of a loop over groups.
    """

    __slots__ = (
        "groups_in",
        "included",
        "index",
        "messages_in",
        "pristine",
        "reasons",
        "tokens_in",
        "touched_from",
        "touched_to",
        "why",
    )

    def __init__(self, index: GroupIndex) -> None:
        self.index = index
        # What the messages already say: groups excluded before (by an earlier call) start out.
        self.included = bytearray(index.kept)
        self.why = bytearray(index.out_why)
        self.reasons: list[str] = list(index.reason_names)
        # Running totals of what is in, so a strategy or a report never sums over every group.
        self.groups_in = len(index.ids) - index.out_groups
        self.tokens_in = index.token_sums[-1] - index.out_tokens
        self.messages_in = index.message_sums[-1] - index.out_messages
        self.pristine = not index.out_groups  # all in: the totals before a group are the index's prefix sums
        # The groups a decision wrote lie in range(touched_from, touched_to): writing back compares only those.
        self.touched_from, self.touched_to = len(self.included), 0

    def code(self, reason: str) -> int:
        """The reason's code in :attr:`why` (at most 255 distinct reasons a request)."""
        try:
            return self.reasons.index(reason)
        except ValueError:
            self.reasons.append(reason)
            return len(self.reasons) - 1

    def reason(self, group: int) -> str:
        return self.reasons[self.why[group]] or "excluded"

    def included_tokens(self) -> int:
        return self.tokens_in

    def included_messages(self) -> int:
        return self.messages_in

    def included_groups(self) -> list[int]:
        return self.runs_of_included(0, len(self.included))

    def minimum_retained(self) -> int | None:
        """The group kept so the model is never sent nothing: the newest included non-system group."""
        included, kinds = self.included, self.index.kinds
        last: int | None = None
        for group in range(len(included) - 1, -1, -1):
            if included[group]:
                if kinds[group] != "system":
                    return group
                if last is None:
                    last = group
        return last

    def exclude(self, group: int, reason: str) -> bool:
        """Leave one group out (the reason is recorded even when it was out already); return whether it was in."""
        was = self.included[group]
        self.touch(group, group + 1)
        self.why[group] = self.code(reason)
        if not was:
            return False
        self.included[group] = 0
        self._count(group, -1)
        return True

    def include(self, group: int) -> None:
        if not self.included[group]:
            self.touch(group, group + 1)
            self.included[group] = 1
            self.why[group] = 0
            self._count(group, 1)

    def touch(self, start: int, stop: int) -> None:
        """Widen the range of groups this view wrote to cover ``range(start, stop)``."""
        if start < self.touched_from:
            self.touched_from = start
        if stop > self.touched_to:
            self.touched_to = stop

    def _count(self, group: int, sign: int) -> None:
        self.pristine = False
        self.groups_in += sign
        self.tokens_in += sign * self.index.tokens[group]
        self.messages_in += sign * len(self.index.members[group])

    def exclude_before(self, cut: int, reason: str, *, keep: Sequence[int] = ()) -> bool:
        """Leave out every group before ``cut`` except ``keep`` (already-out groups keep their reason).

        Returns whether a group that was in went out. Costs the groups still in before ``cut``, not all of
        them: on a fresh view a slice assignment, later a search for the few that are still in.
        """
        if cut <= 0:
            return False
        index, included, why, tokens = self.index, self.included, self.why, self.index.tokens
        staying = {g for g in keep if g < cut and included[g]}
        if self.pristine:  # every group before the cut is in: the prefix sums say what leaves
            going = cut - len(staying)
            if not going:
                return False
            self.tokens_in -= index.token_sums[cut] - sum(tokens[g] for g in staying)
            self.messages_in -= index.message_sums[cut] - sum(len(index.members[g]) for g in staying)
            self.touch(0, cut)
            included[:cut] = bytes(cut)
            why[:cut] = bytes((self.code(reason),)) * cut
            for group in staying:
                included[group] = 1
                why[group] = 0
        else:
            leaving = [g for g in self.runs_of_included(0, cut) if g not in staying]
            going = len(leaving)
            if not going:
                return False
            code = self.code(reason)
            members = index.members
            self.touch(leaving[0], leaving[-1] + 1)
            for group in leaving:
                included[group] = 0
                why[group] = code
                self.tokens_in -= tokens[group]
                self.messages_in -= len(members[group])
        self.pristine = False
        self.groups_in -= going
        return True

    def runs_of_included(self, start: int, stop: int) -> list[int]:
        """The included groups in ``range(start, stop)``, found run by run with C searches."""
        included = self.included
        found: list[int] = []
        position = included.find(1, start, stop)
        while position != -1:
            end = included.find(0, position, stop)
            if end == -1:
                end = stop
            found.extend(range(position, end))
            position = included.find(1, end, stop)
        return found

    def sent(self, messages: Sequence[Message]) -> list[Message]:
        """The messages of the included groups, in conversation order."""
        index, included = self.index, self.included
        members = index.members
        if index.split:
            groups = self.included_groups()
            return [messages[p] for p in sorted(p for g in groups for p in members[g])]
        # Groups are runs of positions in order: each run of included groups is one slice of messages.
        out: list[Message] = []
        stop = len(included)
        group = included.find(1)
        while group != -1:
            end = included.find(0, group)
            if end == -1:
                end = stop
            out.extend(messages[members[group][0] : members[end - 1][-1] + 1])
            group = included.find(1, end)
        return out


def compact_in_place(
    messages: list[Message], strategy: object, tokenizer: TokenizerProtocol | None
) -> list[Message] | None:
    """Run ``strategy`` on ``messages`` by its group view and write only what changed; ``None`` when it needs
    the message path. Returns what the model would be sent."""
    index = GroupIndex.of(messages, tokenizer)
    if index.special:
        return None
    view = GroupView(index)
    try:
        compact_view(strategy, view)
    except NeedsMessages:
        return None
    index.write_back(messages, view)
    return view.sent(messages)


def compact_view(strategy: object, view: GroupView) -> bool:
    """Run ``strategy`` on ``view``; :class:`NeedsMessages` when it can only work on messages."""
    method: Any = getattr(strategy, "_compact_view", None)
    if method is None:
        raise NeedsMessages(type(strategy).__name__)
    return bool(method(view))
