"""Compaction inside a request: what the function-invocation loop sends the model, call after call.

The loop works on shallow copies of the conversation's messages (fresh ``additional_properties``), so the
exclusions and summaries of one request never leak into the session's history: compaction changes what
is sent, not what is kept. Group and token annotations are shared with the originals, which is what makes
the next turn's annotation incremental.

Two rules hold whatever the strategy does: the newest user group and any group holding an unanswered
approval request are always sent, and no function result is sent without its call (nor a call without its
result; the loop's :func:`~agentnb._conversation.for_model` drops those).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .._conversation import pending_requests
from .._types import Message
from ._groups import (
    EXCLUDE_REASON_KEY,
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    annotate_message_groups,
    group_id_of,
    project_included_messages,
)
from ._index import GroupIndex, GroupView, NeedsMessages, compact_view
from ._report import CompactionReport, log_turn
from ._strategies import CompactionStrategy
from ._tokenizers import CharacterEstimatorTokenizer, TokenizerProtocol

__all__ = ["RequestCompaction", "drop_orphan_results", "keep_required_groups"]


def copy_for_request(messages: Sequence[Message]) -> list[Message]:
    """Shallow copies with their own ``additional_properties`` (the ``_group`` dicts stay shared)."""
    return [_twin(m) for m in messages]


def _twin(message: Message) -> Message:
    # copy.copy goes through __reduce_ex__; setting the slots directly is several times faster.
    twin = Message.__new__(Message)
    twin.role = message.role
    twin.contents = message.contents
    twin.author_name = message.author_name
    twin.message_id = message.message_id
    twin.additional_properties = dict(message.additional_properties)
    twin.raw_representation = message.raw_representation
    twin._kinds_cache = message._kinds_cache  # pyright: ignore[reportPrivateUsage]  # keyed by the contents list
    twin._scan_cache = None  # pyright: ignore[reportPrivateUsage]
    twin._compaction_cache = None  # pyright: ignore[reportPrivateUsage]
    return twin


def required_groups(messages: Sequence[Message], group_of: Sequence[int]) -> set[int]:
    """Group numbers that must be sent: the newest user group, and groups holding pending approval requests.

    Reads from the end: the newest user message and a pending batch sit there, so this costs the tail.
    """
    required: set[int] = set()
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "user" and not _is_approval_answer(message):
            required.add(group_of[position])
            break
    pending = {r.id for r in pending_requests(messages) if r.id}
    position = len(messages)
    while pending and position > 0:
        position -= 1
        for content in messages[position].contents:
            if content.type == "function_approval_request" and content.id in pending:
                required.add(group_of[position])
                pending.discard(content.id)
    return required


def keep_required_groups(messages: Sequence[Message], *, newest_user: bool = True) -> bool:
    """Include again the groups that must be sent: the newest user group, groups with pending approvals.

    Returns whether anything changed.
    """
    required: set[str] = set()
    if newest_user:
        for message in reversed(messages):
            if message.role == "user" and not _is_approval_answer(message):
                group_id = group_id_of(message)
                if group_id is not None:
                    required.add(group_id)
                break
    pending = {r.id for r in pending_requests(messages) if r.id}
    if pending:
        for message in messages:
            if any(c.type == "function_approval_request" and c.id in pending for c in message.contents):
                group_id = group_id_of(message)
                if group_id is not None:
                    required.add(group_id)
    changed = False
    if required:
        for message in messages:
            props = message.additional_properties
            if props.get(EXCLUDED_KEY, False) and group_id_of(message) in required:
                props[EXCLUDED_KEY] = False
                props.pop(EXCLUDE_REASON_KEY, None)
                changed = True
    return changed


def _is_approval_answer(message: Message) -> bool:
    return bool(message.contents) and all(c.type == "function_approval_response" for c in message.contents)


def drop_orphan_results(messages: list[Message]) -> list[Message]:
    """``messages`` without function results whose call is not among them (messages left empty go too)."""
    calls = {c.call_id for m in messages if m.role == "assistant" for c in m.contents if c.type == "function_call"}
    out: list[Message] = []
    for message in messages:
        contents = message.contents
        if not any(c.type == "function_result" and c.call_id not in calls for c in contents):
            out.append(message)
            continue
        kept = [c for c in contents if not (c.type == "function_result" and c.call_id not in calls)]
        if kept:
            twin = copy.copy(message)
            twin.contents = kept
            out.append(twin)
    return out


def strategy_name(strategy: object) -> str:
    """A short label for reports: the strategy's class name."""
    return type(strategy).__name__


class RequestCompaction:
    """The compaction settings of one request, and the reports of its model calls."""

    def __init__(
        self,
        strategy: CompactionStrategy | None,
        tokenizer: TokenizerProtocol | None,
    ) -> None:
        self.strategy = strategy
        found: Any = tokenizer or getattr(strategy, "tokenizer", None)
        self.tokenizer: TokenizerProtocol = (
            found if isinstance(found, TokenizerProtocol) else CharacterEstimatorTokenizer()
        )
        budget: Any = getattr(strategy, "token_budget", None)
        self.budget: int | None = budget if isinstance(budget, int) else None
        self.reports: list[CompactionReport] = []
        self._owned: set[int] = set()
        self._by_view = False

    def start(self, messages: list[Message]) -> list[Message]:
        """Annotate the request's messages (groups and token counts, kept for the next turn); return its list.

        The annotations go on the originals: they describe the messages, not this request, and the next turn
        finds them done. A strategy that decides on group summaries (the built-in ones) leaves every message
        as it is, and the request sends slices of the conversation. Any other strategy marks exclusions, so
        it gets copies, and the marks stay off the history.
        """
        if self.strategy is not None and hasattr(self.strategy, "_compact_view"):
            self._by_view = True
            return list(messages)
        annotate_message_groups(messages, tokenizer=self.tokenizer)
        return self._copies(messages)

    def _copies(self, messages: list[Message]) -> list[Message]:
        copies = copy_for_request(messages)
        self._owned = {id(m) for m in copies}
        return copies

    def _own_new_messages(self, conversation: list[Message]) -> int | None:
        """Replace messages the loop appended since the last call (replies, tool results) with copies.

        Returns the position of the first one (``None`` when there were none).
        """
        owned = self._owned
        first: int | None = None
        for index in range(len(conversation) - 1, -1, -1):
            message = conversation[index]
            if id(message) in owned:
                break
            twin = _twin(message)
            conversation[index] = twin
            owned.add(id(twin))
            first = index
        return first

    async def prepare(self, conversation: list[Message]) -> list[Message]:
        """Annotate and compact ``conversation`` in place; return what the model is sent."""
        if self._by_view:
            sent = self._prepare_by_view(conversation)
            if sent is not None:
                return sent
            # The strategy needs messages after all (it inserts summaries, or the history holds some):
            # from here on this request works on copies, as for any other strategy.
            self._by_view = False
            conversation[:] = self._copies(conversation)
        first_new = self._own_new_messages(conversation)
        if first_new is not None:  # start() annotated the rest
            annotate_message_groups(conversation, from_index=first_new, tokenizer=self.tokenizer)
        if self.strategy is None:
            return conversation
        length = len(conversation)
        await self.strategy(conversation)
        if len(conversation) != length:  # summaries were inserted: count their tokens too
            annotate_message_groups(conversation, tokenizer=self.tokenizer)
        keep_required_groups(conversation)
        report = CompactionReport.from_messages(conversation, strategy=strategy_name(self.strategy), budget=self.budget)
        self.reports.append(report)
        if not report.compacted:
            return conversation
        return drop_orphan_results(project_included_messages(conversation))

    def _prepare_by_view(self, conversation: list[Message]) -> list[Message] | None:
        """Decide on the conversation's group summaries; ``None`` when this call needs the message path."""
        index = GroupIndex.of(conversation, self.tokenizer)
        if index.special or index.linked:  # exclusions or summaries in the history: the report reads their marks
            return None
        view = GroupView(index)
        try:
            compact_view(self.strategy, view)
        except NeedsMessages:
            return None
        for group in required_groups(conversation, index.group_of):
            if not view.included[group]:
                view.include(group)
        report = CompactionReport.from_view(
            view, conversation, strategy=strategy_name(self.strategy), budget=self.budget
        )
        self.reports.append(report)
        if not report.compacted:
            return conversation
        return drop_orphan_results(view.sent(conversation))

    def report_dicts(self) -> list[dict[str, Any]]:
        """The reports as JSON-safe dicts, one per model call."""
        return [r.to_dict() for r in self.reports]

    def log_turn(self, state: dict[str, Any]) -> None:
        """Record the last model call's report in a session state's compaction log."""
        if self.reports:
            log_turn(state, self.reports[-1])


def is_summary(message: Message) -> bool:
    """Whether compaction inserted this message as a summary."""
    raw = message.additional_properties.get(GROUP_ANNOTATION_KEY)
    return isinstance(raw, dict) and "_summary_of_group_ids" in raw
