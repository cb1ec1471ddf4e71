"""Compaction strategies: which whole groups to leave out of what the model is sent, and when.

A strategy is an async callable over an annotated message list (see :mod:`._groups`) that marks messages
excluded (and may insert summary messages) in place, returning whether anything changed. Strategies never
delete a message and never split a group; they compose (:class:`TokenBudgetComposedStrategy`) because they
all read and write the same annotations.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from .._compaction_protocols import CompactionStrategy
from .._types import Content, Message
from ._groups import (
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    GROUP_KIND_KEY,
    GROUP_TOKEN_COUNT_KEY,
    SUMMARIZED_BY_SUMMARY_ID_KEY,
    SUMMARY_OF_GROUP_IDS_KEY,
    SUMMARY_OF_MESSAGE_IDS_KEY,
    annotate_message_groups,
    annotate_token_counts,
    included_token_count,
    project_included_messages,
    set_excluded,
)
from ._index import GroupView, NeedsMessages, compact_in_place, compact_view
from ._tokenizers import CharacterEstimatorTokenizer, TokenizerProtocol

__all__ = [
    "CompactionStrategy",
    "ContextWindowCompactionStrategy",
    "Groups",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "TokenBudgetComposedStrategy",
    "ToolResultCompactionStrategy",
    "TruncationStrategy",
    "apply_compaction",
    "mark_summarized",
]


# ``type(x) is _DICT`` tests for a dict without narrowing ``x`` from Any (hot loops skip typing.cast's call).
_DICT: Any = dict


class Groups:
    """One pass over an annotated list: each group's messages, kind, first position and inclusion."""

    __slots__ = ("kinds", "members", "order", "starts")

    def __init__(self, messages: Sequence[Message]) -> None:
        self.order: list[str] = []
        self.members: dict[str, list[Message]] = {}
        self.kinds: dict[str, str] = {}
        self.starts: dict[str, int] = {}
        members = self.members
        for index, message in enumerate(messages):
            annotation: Any = message.additional_properties.get(GROUP_ANNOTATION_KEY)
            if type(annotation) is not _DICT:
                continue
            group_id = annotation.get("id")
            if type(group_id) is not str:
                continue
            found = members.get(group_id)
            if found is None:
                members[group_id] = [message]
                self.order.append(group_id)
                self.kinds[group_id] = annotation.get(GROUP_KIND_KEY, "")
                self.starts[group_id] = index
            else:
                found.append(message)

    def included(self) -> list[str]:
        """Ids of groups with at least one included message, in order."""
        return [
            group_id
            for group_id in self.order
            if any(not m.additional_properties.get(EXCLUDED_KEY, False) for m in self.members[group_id])
        ]

    def minimum_retained(self) -> set[str]:
        """The one group kept so the model is never sent nothing: the newest included non-system group."""
        included = self.included()
        for group_id in reversed(included):
            if self.kinds[group_id] != "system":
                return {group_id}
        return {included[-1]} if included else set()

    def exclude(self, group_id: str, reason: str) -> tuple[bool, int, int]:
        """Exclude a group; return whether it changed, and the messages and tokens that were included."""
        changed = False
        messages = tokens = 0
        for message in self.members[group_id]:
            props = message.additional_properties
            if not props.get(EXCLUDED_KEY, False):
                messages += 1
                tokens += _tokens(message)
            changed = set_excluded(message, excluded=True, reason=reason) or changed
        return changed, messages, tokens


def _tokens(message: Message) -> int:
    raw: Any = message.additional_properties.get(GROUP_ANNOTATION_KEY)
    if type(raw) is _DICT:
        count = raw.get(GROUP_TOKEN_COUNT_KEY)
        if type(count) is int:
            return count
    return 0


def _included_count(messages: Sequence[Message]) -> int:
    return sum(1 for m in messages if not m.additional_properties.get(EXCLUDED_KEY, False))


def mark_summarized(message: Message, summary_id: str) -> None:
    """Link a message to the summary that replaced it (on a fresh ``_group`` dict, so copies stay unlinked)."""
    props = message.additional_properties
    raw = props.get(GROUP_ANNOTATION_KEY)
    annotation: dict[str, Any] = dict(cast("dict[str, Any]", raw)) if isinstance(raw, dict) else {}
    annotation[SUMMARIZED_BY_SUMMARY_ID_KEY] = summary_id
    props[GROUP_ANNOTATION_KEY] = annotation


class TruncationStrategy:
    """Drop the oldest groups once a limit is passed, until a target is reached.

    The measure is included tokens with ``tokenizer``, else included messages. The newest non-system group
    always stays, so one huge group can leave the result above ``compact_to``.

    Args:
        max_n: Compact when the measure exceeds this.
        compact_to: Drop groups, oldest first, until the measure is at most this (``<= max_n``).
        tokenizer: Measure tokens instead of messages.
        preserve_system: Never drop system groups.

    Example:
        ```python
        from agentnb import Message
        from agentnb.compaction import TruncationStrategy, apply_compaction

        history = [Message("user", [f"message {i}"]) for i in range(10)]
        kept = await apply_compaction(history, strategy=TruncationStrategy(max_n=6, compact_to=4))
        len(kept)  # 4
        ```
    """

    def __init__(
        self,
        *,
        max_n: int,
        compact_to: int,
        tokenizer: TokenizerProtocol | None = None,
        preserve_system: bool = True,
    ) -> None:
        if max_n <= 0:
            raise ValueError("max_n must be greater than 0.")
        if compact_to <= 0:
            raise ValueError("compact_to must be greater than 0.")
        if compact_to > max_n:
            raise ValueError("compact_to must be less than or equal to max_n.")
        self.max_n = max_n
        self.compact_to = compact_to
        self.tokenizer = tokenizer
        self.preserve_system = preserve_system

    async def __call__(self, messages: list[Message]) -> bool:
        by_tokens = self.tokenizer is not None
        measure = included_token_count(messages) if by_tokens else _included_count(messages)
        if measure <= self.max_n:
            return False
        groups = Groups(messages)
        protected = groups.minimum_retained()
        if self.preserve_system:
            protected.update(g for g in groups.order if groups.kinds[g] == "system")
        changed = False
        for group_id in groups.order:
            if measure <= self.compact_to:
                break
            if group_id in protected:
                continue
            group_changed, dropped_messages, dropped_tokens = groups.exclude(group_id, "truncation")
            changed = group_changed or changed
            measure -= dropped_tokens if by_tokens else dropped_messages
        return changed

    def _compact_view(self, view: GroupView) -> bool:
        """The same decision on group summaries (see :mod:`._index`)."""
        index, included = view.index, view.included
        by_tokens = self.tokenizer is not None
        measure = view.included_tokens() if by_tokens else view.included_messages()
        if measure <= self.max_n:
            return False
        protected: set[int] = set()
        retained = view.minimum_retained()
        if retained is not None:
            protected.add(retained)
        if self.preserve_system:
            protected.update(index.systems)
        changed = False
        for group in range(len(included)):
            if measure <= self.compact_to:
                break
            if group in protected:
                continue
            if view.exclude(group, "truncation"):
                changed = True
                measure -= index.tokens[group] if by_tokens else len(index.members[group])
        return changed

    def __repr__(self) -> str:
        return f"TruncationStrategy(max_n={self.max_n}, compact_to={self.compact_to})"


class SlidingWindowStrategy:
    """Keep only the newest ``keep_last_groups`` non-system groups (and the system groups, by default).

    Example:
        ```python
        from agentnb.compaction import SlidingWindowStrategy

        strategy = SlidingWindowStrategy(keep_last_groups=20)
        ```
    """

    def __init__(self, *, keep_last_groups: int, preserve_system: bool = True) -> None:
        if keep_last_groups <= 0:
            raise ValueError(f"keep_last_groups must be more than 0, got {keep_last_groups}")
        self.keep_last_groups = keep_last_groups
        self.preserve_system = preserve_system

    async def __call__(self, messages: list[Message]) -> bool:
        groups = Groups(messages)
        included = groups.included()
        non_system = [g for g in included if groups.kinds[g] != "system"]
        keep = set(non_system[-self.keep_last_groups :])
        if self.preserve_system:
            keep.update(g for g in groups.order if groups.kinds[g] == "system")
        changed = False
        for group_id in included:
            if group_id not in keep:
                changed = groups.exclude(group_id, "sliding_window")[0] or changed
        return changed

    def _compact_view(self, view: GroupView) -> bool:
        """The same decision on group summaries: one walk back over the window, one slice for the rest."""
        included, kinds = view.included, view.index.kinds
        systems = view.index.systems
        # Find the oldest group of the window run by run from the end (C searches); only a run holding
        # system groups is walked group by group.
        cut, need, end = 0, self.keep_last_groups, len(included)
        while end > 0:
            last = included.rfind(1, 0, end)
            if last == -1:
                break
            start, stop = included.rfind(0, 0, last) + 1, last + 1
            in_run = bisect_left(systems, stop) - bisect_left(systems, start)
            count = stop - start - in_run
            if count >= need:
                if not in_run:  # no system group in the run: the window starts ``need`` groups back
                    cut = stop - need
                    break
                cut = stop
                while need:
                    cut -= 1
                    if kinds[cut] != "system":
                        need -= 1
                break
            need -= count
            end = start
        changed = False
        if not self.preserve_system:  # system groups are never in the window
            for group in systems:
                if group >= cut and included[group]:
                    changed = view.exclude(group, "sliding_window") or changed
        keep = systems if self.preserve_system else ()
        return view.exclude_before(cut, "sliding_window", keep=keep) or changed

    def __repr__(self) -> str:
        return f"SlidingWindowStrategy(keep_last_groups={self.keep_last_groups})"


def _tool_groups_to_compact(groups: Groups, keep_last: int) -> list[str]:
    tool_groups = [g for g in groups.included() if groups.kinds[g] == "tool_call"]
    if len(tool_groups) <= keep_last:
        return []
    return tool_groups[: len(tool_groups) - keep_last]


def _tool_groups_in_view(view: GroupView, keep_last: int) -> list[int]:
    kinds = view.index.kinds
    tool_groups = [g for g in view.included_groups() if kinds[g] == "tool_call"]
    return tool_groups[: max(0, len(tool_groups) - keep_last)]


class SelectiveToolCallCompactionStrategy:
    """Drop all but the newest ``keep_last_tool_call_groups`` tool-call groups; other groups are untouched.

    Example:
        ```python
        from agentnb.compaction import SelectiveToolCallCompactionStrategy

        strategy = SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)
        ```
    """

    def __init__(self, *, keep_last_tool_call_groups: int = 1) -> None:
        if keep_last_tool_call_groups < 0:
            raise ValueError("keep_last_tool_call_groups must be greater than or equal to 0.")
        self.keep_last_tool_call_groups = keep_last_tool_call_groups

    async def __call__(self, messages: list[Message]) -> bool:
        groups = Groups(messages)
        changed = False
        for group_id in _tool_groups_to_compact(groups, self.keep_last_tool_call_groups):
            changed = groups.exclude(group_id, "tool_call_compaction")[0] or changed
        return changed

    def _compact_view(self, view: GroupView) -> bool:
        """The same decision on group summaries."""
        changed = False
        for group in _tool_groups_in_view(view, self.keep_last_tool_call_groups):
            changed = view.exclude(group, "tool_call_compaction") or changed
        return changed

    def __repr__(self) -> str:
        return f"SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups={self.keep_last_tool_call_groups})"


class ToolResultCompactionStrategy:
    """Replace older tool-call groups with one short message of their results (``[Tool results: ...]``).

    The newest ``keep_last_tool_call_groups`` groups stay verbatim. The originals are excluded (not deleted)
    and linked both ways with their summary, so views can show what each summary stands for.

    Example:
        ```python
        from agentnb.compaction import ToolResultCompactionStrategy

        strategy = ToolResultCompactionStrategy(keep_last_tool_call_groups=1)
        ```
    """

    SUMMARY_PREFIX: Final = "[Tool results: "
    SUMMARY_SUFFIX: Final = "]"
    SUMMARY_MAX_CHARS: Final = 4096
    SUMMARY_TRUNCATION_MARKER: Final = "... [truncated]"

    def __init__(self, *, keep_last_tool_call_groups: int = 1) -> None:
        if keep_last_tool_call_groups < 0:
            raise ValueError("keep_last_tool_call_groups must be greater than or equal to 0.")
        self.keep_last_tool_call_groups = keep_last_tool_call_groups

    async def __call__(self, messages: list[Message]) -> bool:
        groups = Groups(messages)
        targets = _tool_groups_to_compact(groups, self.keep_last_tool_call_groups)
        if not targets:
            return False
        changed = False
        inserts: list[tuple[int, Message]] = []
        for group_id in targets:
            members = groups.members[group_id]
            live = [m for m in members if not m.additional_properties.get(EXCLUDED_KEY, False)]
            names: dict[str, str] = {}
            for message in live:
                for content in message.contents:
                    if not content.call_id:
                        continue
                    if content.type == "function_call" and content.name:
                        names[content.call_id] = content.name
                    elif content.type == "mcp_server_tool_call" and content.tool_name:
                        names[content.call_id] = content.tool_name
            results: list[str] = []
            for message in live:
                for content in message.contents:
                    if content.type == "function_result":
                        text = content.result if isinstance(content.result, str) else _result_text(content.result)
                    elif content.type == "mcp_server_tool_result":
                        text = content.output if isinstance(content.output, str) else _result_text(content.output)
                    else:
                        continue
                    name = names.get(content.call_id or "") or ""
                    results.append((f"{name}: {text}" if name else text).strip())
            summary_id = f"tool_summary_{group_id}"
            for message in members:
                mark_summarized(message, summary_id)
                changed = set_excluded(message, excluded=True, reason="tool_result_compaction") or changed
            summary = Message(
                "assistant",
                [self.summary_text(results)],
                message_id=summary_id,
                additional_properties={
                    GROUP_ANNOTATION_KEY: {
                        SUMMARY_OF_MESSAGE_IDS_KEY: [m.message_id for m in members if m.message_id],
                        SUMMARY_OF_GROUP_IDS_KEY: [group_id],
                    }
                },
            )
            inserts.append((groups.starts[group_id], summary))
        # Merge the summaries in, in one pass (not one list.insert each), then regroup once from the first.
        merged: list[Message] = messages[: inserts[0][0]]
        for (position, summary), (stop, _) in zip(inserts, [*inserts[1:], (len(messages), None)], strict=True):
            merged.append(summary)
            merged.extend(messages[position:stop])
        messages[:] = merged
        annotate_message_groups(messages, from_index=inserts[0][0])
        return changed

    def _compact_view(self, view: GroupView) -> bool:
        """Nothing to do, or :class:`NeedsMessages`: summaries are new messages, which a view cannot hold."""
        if _tool_groups_in_view(view, self.keep_last_tool_call_groups):
            raise NeedsMessages(type(self).__name__)
        return False

    @classmethod
    def summary_text(cls, results: list[str]) -> str:
        """``[Tool results: a; b]``, cut to :attr:`SUMMARY_MAX_CHARS` with a marker."""
        label = "; ".join(results) if results else "no results"
        text = f"{cls.SUMMARY_PREFIX}{label}{cls.SUMMARY_SUFFIX}"
        if len(text) <= cls.SUMMARY_MAX_CHARS:
            return text
        room = cls.SUMMARY_MAX_CHARS - len(cls.SUMMARY_PREFIX) - len(cls.SUMMARY_TRUNCATION_MARKER)
        room -= len(cls.SUMMARY_SUFFIX)
        return f"{cls.SUMMARY_PREFIX}{label[:room].rstrip()}{cls.SUMMARY_TRUNCATION_MARKER}{cls.SUMMARY_SUFFIX}"

    def __repr__(self) -> str:
        return f"ToolResultCompactionStrategy(keep_last_tool_call_groups={self.keep_last_tool_call_groups})"


def _result_text(value: object) -> str:
    """A tool result as text: text contents joined, a mapping as JSON, anything else ``str()``."""
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray, str)):
        parts: list[str] = []
        for item in cast("Sequence[object]", value):
            if isinstance(item, Content) and item.type == "text" and item.text is not None:
                parts.append(item.text)
            elif isinstance(item, Mapping):
                mapping = cast("Mapping[str, object]", item)
                text = mapping.get("text")
                if mapping.get("type") == "text" and isinstance(text, str):
                    parts.append(text)
        if parts:
            return "\n".join(parts)
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(cast(object, value))


class TokenBudgetComposedStrategy:
    """Run strategies in order until the included tokens fit ``token_budget``, then enforce it.

    If the strategies leave the history over budget, the oldest non-system groups are dropped, then (only if
    the system groups alone are over budget) system groups too; the newest non-system group always stays.

    Args:
        token_budget: The most included tokens allowed.
        tokenizer: Counts each message's tokens (counted once, then read from the annotation).
        strategies: Tried in order.
        early_stop: Stop as soon as the budget is met (else every strategy runs).

    Example:
        ```python
        from agentnb.compaction import (
            CharacterEstimatorTokenizer, SlidingWindowStrategy, TokenBudgetComposedStrategy,
            ToolResultCompactionStrategy,
        )

        strategy = TokenBudgetComposedStrategy(
            token_budget=8_000,
            tokenizer=CharacterEstimatorTokenizer(),
            strategies=[ToolResultCompactionStrategy(), SlidingWindowStrategy(keep_last_groups=10)],
        )
        ```
    """

    def __init__(
        self,
        *,
        token_budget: int,
        tokenizer: TokenizerProtocol,
        strategies: Sequence[CompactionStrategy],
        early_stop: bool = True,
    ) -> None:
        self.token_budget = token_budget
        self.tokenizer = tokenizer
        self.strategies = list(strategies)
        self.early_stop = early_stop

    def _refresh(self, messages: list[Message]) -> int:
        annotate_message_groups(messages, tokenizer=self.tokenizer)
        return included_token_count(messages)

    async def __call__(self, messages: list[Message]) -> bool:
        total = self._refresh(messages)
        if total <= self.token_budget:
            return False
        changed = False
        for strategy in self.strategies:
            changed = (await strategy(messages)) or changed
            total = self._refresh(messages)
            if self.early_stop and total <= self.token_budget:
                return changed
        if total <= self.token_budget:
            return changed
        groups = Groups(messages)
        keep = groups.minimum_retained()
        for system_pass, reason in ((False, "token_budget_fallback"), (True, "token_budget_fallback_strict")):
            for group_id in groups.order:
                if (groups.kinds[group_id] == "system") != system_pass or group_id in keep:
                    continue
                group_changed, _, dropped = groups.exclude(group_id, reason)
                changed = group_changed or changed
                total -= dropped
                if total <= self.token_budget:
                    return changed
        return changed

    def _compact_view(self, view: GroupView) -> bool:
        """The same decision on group summaries, when every strategy it composes can decide on them."""
        total = view.included_tokens()
        if total <= self.token_budget:
            return False
        changed = False
        for strategy in self.strategies:
            changed = compact_view(strategy, view) or changed
            total = view.included_tokens()
            if self.early_stop and total <= self.token_budget:
                return changed
        if total <= self.token_budget:
            return changed
        kinds, tokens = view.index.kinds, view.index.tokens
        keep = view.minimum_retained()
        for system_pass, reason in ((False, "token_budget_fallback"), (True, "token_budget_fallback_strict")):
            for group in range(len(kinds)):
                if (kinds[group] == "system") != system_pass or group == keep:
                    continue
                if view.exclude(group, reason):
                    changed = True
                    total -= tokens[group]
                    if total <= self.token_budget:
                        return changed
        return changed

    def __repr__(self) -> str:
        return f"TokenBudgetComposedStrategy(token_budget={self.token_budget}, strategies={self.strategies!r})"


class ContextWindowCompactionStrategy:
    """A budget from the model's context window: evict old tool results at 50%, truncate at 80% (by default).

    The input budget is ``max_context_window_tokens - max_output_tokens``. Past ``tool_eviction_threshold``
    of it, older tool-call groups collapse into ``[Tool results: ...]`` summaries; past
    ``truncation_threshold``, the oldest groups are dropped down to the eviction level.

    Example:
        ```python
        from agentnb.compaction import CompactionProvider, ContextWindowCompactionStrategy

        strategy = ContextWindowCompactionStrategy(max_context_window_tokens=128_000, max_output_tokens=16_384)
        provider = CompactionProvider(before_strategy=strategy)
        ```
    """

    DEFAULT_TOOL_EVICTION_THRESHOLD: float = 0.5
    DEFAULT_TRUNCATION_THRESHOLD: float = 0.8

    def __init__(
        self,
        *,
        max_context_window_tokens: int,
        max_output_tokens: int,
        tokenizer: TokenizerProtocol | None = None,
        tool_eviction_threshold: float = DEFAULT_TOOL_EVICTION_THRESHOLD,
        truncation_threshold: float = DEFAULT_TRUNCATION_THRESHOLD,
        keep_last_tool_call_groups: int = 4,
    ) -> None:
        if max_context_window_tokens <= 0:
            raise ValueError("max_context_window_tokens must be positive.")
        if max_output_tokens < 0 or max_output_tokens >= max_context_window_tokens:
            raise ValueError("max_output_tokens must be >= 0 and < max_context_window_tokens.")
        if not 0.0 < tool_eviction_threshold <= 1.0:
            raise ValueError("tool_eviction_threshold must be in (0.0, 1.0].")
        if not 0.0 < truncation_threshold <= 1.0:
            raise ValueError("truncation_threshold must be in (0.0, 1.0].")
        if truncation_threshold < tool_eviction_threshold:
            raise ValueError("truncation_threshold must be >= tool_eviction_threshold.")
        tokenizer = tokenizer or CharacterEstimatorTokenizer()
        self.tokenizer = tokenizer
        self.max_context_window_tokens = max_context_window_tokens
        self.max_output_tokens = max_output_tokens
        self.input_budget_tokens = max_context_window_tokens - max_output_tokens
        self.tool_eviction_threshold = tool_eviction_threshold
        self.truncation_threshold = truncation_threshold
        eviction_tokens = int(self.input_budget_tokens * tool_eviction_threshold)
        truncation_tokens = int(self.input_budget_tokens * truncation_threshold)
        self._tool_eviction = TokenBudgetComposedStrategy(
            token_budget=eviction_tokens,
            tokenizer=tokenizer,
            strategies=[ToolResultCompactionStrategy(keep_last_tool_call_groups=keep_last_tool_call_groups)],
        )
        self._truncation = TokenBudgetComposedStrategy(
            token_budget=truncation_tokens,
            tokenizer=tokenizer,
            strategies=[TruncationStrategy(max_n=truncation_tokens, compact_to=eviction_tokens, tokenizer=tokenizer)],
        )

    @property
    def token_budget(self) -> int:
        """The input budget: the context window less the output tokens."""
        return self.input_budget_tokens

    async def __call__(self, messages: list[Message]) -> bool:
        changed = await self._tool_eviction(messages)
        return (await self._truncation(messages)) or changed

    def _compact_view(self, view: GroupView) -> bool:
        changed = compact_view(self._tool_eviction, view)
        return compact_view(self._truncation, view) or changed

    def __repr__(self) -> str:
        return (
            f"ContextWindowCompactionStrategy(max_context_window_tokens={self.max_context_window_tokens}, "
            f"max_output_tokens={self.max_output_tokens})"
        )


async def apply_compaction(
    messages: list[Message], *, strategy: CompactionStrategy | None, tokenizer: TokenizerProtocol | None = None
) -> list[Message]:
    """Annotate ``messages``, run ``strategy`` on them in place, and return what the model would be sent.

    Example:
        ```python
        from agentnb import Message
        from agentnb.compaction import SlidingWindowStrategy, apply_compaction

        history = [Message("system", ["Be brief."])] + [Message("user", [f"turn {i}"]) for i in range(5)]
        kept = await apply_compaction(history, strategy=SlidingWindowStrategy(keep_last_groups=2))
        [m.text for m in kept]  # ['Be brief.', 'turn 3', 'turn 4']
        ```
    """
    if strategy is None:
        return messages
    if hasattr(strategy, "_compact_view"):  # the built-in strategies: decided per group, only changes written
        sent = compact_in_place(messages, strategy, tokenizer or getattr(strategy, "tokenizer", None))
        if sent is not None:
            return sent
    annotate_message_groups(messages)
    if tokenizer is not None:
        annotate_token_counts(messages, tokenizer=tokenizer)
    await strategy(messages)
    return project_included_messages(messages)
