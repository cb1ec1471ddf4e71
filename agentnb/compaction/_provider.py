"""CompactionProvider: compaction as a context provider, before the model sees history and after the turn."""

from __future__ import annotations

from typing import Any, Final, cast

from .._sessions import AgentSession, ContextProvider, SessionContext
from .._types import Message
from ._apply import copy_for_request, keep_required_groups, strategy_name
from ._groups import annotate_message_groups, annotate_token_counts, project_included_messages
from ._report import COMPACTION_REPORT_KEY, CompactionReport, log_turn
from ._strategies import CompactionStrategy
from ._tokenizers import TokenizerProtocol

__all__ = ["COMPACTION_STATE_KEY", "CompactionProvider"]

COMPACTION_STATE_KEY: Final[str] = "_compaction_messages"
_METADATA_KEY = "compaction_report"


class CompactionProvider(ContextProvider):
    """Compacts the history other providers loaded (``before_strategy``) and the stored history (``after_strategy``).

    Put it after the history provider: ``before_run`` runs in provider order (history loads, then this
    compacts copies of what was loaded, so only this run's request changes; the run's new input is never
    touched) and ``after_run`` in reverse (this compacts the stored messages, then history appends the
    turn). Stored messages are only marked (``_excluded``); a history provider with ``skip_excluded=True``
    leaves them out of later turns.
    A group holding an unanswered approval request is always kept, so a pending approval survives.

    Args:
        before_strategy: Applied to the loaded context before the model runs (``None``: skip).
        after_strategy: Applied to the stored history after the run (``None``: skip).
        tokenizer: Counts tokens for token-aware strategies and the report.
        source_id: This provider's id.
        history_source_id: The history provider whose stored messages ``after_strategy`` compacts.

    Example:
        ```python
        from agentnb import Agent, InMemoryHistoryProvider
        from agentnb.compaction import CompactionProvider, SlidingWindowStrategy, ToolResultCompactionStrategy
        from agentnb.local import ScriptedChatClient

        history = InMemoryHistoryProvider(skip_excluded=True)
        compaction = CompactionProvider(
            before_strategy=SlidingWindowStrategy(keep_last_groups=20),
            after_strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
            history_source_id=history.source_id,
        )
        agent = Agent(ScriptedChatClient(["Hi!"]), context_providers=[history, compaction])
        ```
    """

    def __init__(
        self,
        *,
        before_strategy: CompactionStrategy | None = None,
        after_strategy: CompactionStrategy | None = None,
        tokenizer: TokenizerProtocol | None = None,
        source_id: str = "compaction",
        history_source_id: str = "in_memory",
    ) -> None:
        super().__init__(source_id)
        self.before_strategy = before_strategy
        self.after_strategy = after_strategy
        self.tokenizer = tokenizer
        self.history_source_id = history_source_id

    async def _compact(self, messages: list[Message], strategy: CompactionStrategy) -> None:
        annotate_message_groups(messages)
        if self.tokenizer is not None:
            annotate_token_counts(messages, tokenizer=self.tokenizer)
        await strategy(messages)
        annotate_message_groups(messages, tokenizer=self.tokenizer)
        keep_required_groups(messages, newest_user=False)

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        """Compact the messages earlier providers added; summaries take the place of what they replace."""
        if self.before_strategy is None:
            return
        originals = context.get_messages()
        if not originals:
            return
        # Compact copies: what this run is sent changes, the stored history does not.
        loaded = copy_for_request(originals)
        sources = [source for source, ms in context.context_messages.items() for _ in ms]
        source_of = {id(m): source for m, source in zip(loaded, sources, strict=True)}
        await self._compact(loaded, self.before_strategy)
        budget: Any = getattr(self.before_strategy, "token_budget", None)
        report = CompactionReport.from_messages(
            loaded,
            strategy=strategy_name(self.before_strategy),
            budget=budget if isinstance(budget, int) else None,
            source="provider",
        )
        metadata: Any = getattr(context, "metadata", None)  # a bare context (no metadata) just gets no report
        if isinstance(metadata, dict):
            cast("dict[str, Any]", metadata)[_METADATA_KEY] = report
        # Rebuild each source's list from the compacted one; a new message (a summary) joins the source of
        # the message it now precedes, so it is sent where the messages it stands for were.
        rebuilt: dict[str, list[Message]] = {source: [] for source in context.context_messages}
        pending: list[Message] = []
        last_source = next(reversed(rebuilt)) if rebuilt else self.source_id
        for message in loaded:
            source = source_of.get(id(message))
            if source is None:
                pending.append(message)
                continue
            rebuilt[source].extend(pending)
            pending = []
            rebuilt[source].append(message)
            last_source = source
        rebuilt.setdefault(last_source, []).extend(pending)
        included = {id(m) for m in project_included_messages(loaded)}
        for source, messages in rebuilt.items():
            context.context_messages[source] = [m for m in messages if id(m) in included]

    async def after_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        """Record this turn's report; compact the stored history (marks only, nothing is deleted)."""
        metadata: Any = getattr(context, "metadata", None)
        report = cast("dict[str, Any]", metadata).get(_METADATA_KEY) if isinstance(metadata, dict) else None
        if isinstance(report, CompactionReport):
            response: Any = getattr(context, "response", None)
            if response is not None:
                props = response.additional_properties
                reports = cast("list[object]", props.setdefault(COMPACTION_REPORT_KEY, []))
                reports.append(report.to_dict())
            if session is not None:
                log_turn(session.state, report)
        if self.after_strategy is None or session is None:
            return
        history = session.state.get(self.history_source_id)
        if not isinstance(history, dict):
            return
        stored = cast("dict[str, Any]", history).get("messages")
        if not isinstance(stored, list) or not stored:
            return
        await self._compact(cast("list[Message]", stored), self.after_strategy)

    def __repr__(self) -> str:
        return f"CompactionProvider(before={self.before_strategy!r}, after={self.after_strategy!r})"
