"""Context compaction: keep a long conversation inside the model's window without losing what it said.

Compaction decides what the model is *sent*, never what the session *keeps*: strategies mark whole message
groups excluded (an assistant's tool calls, their reasoning and their results are one group) or replace them
with a summary, and every original stays in the history with the reason it was left out. Apply it per
request (``Agent(..., compaction_strategy=...)`` or the chat client's ``compaction_strategy``), or as a
context provider (:class:`CompactionProvider`). Every request records a :class:`CompactionReport` (tokens
sent against the budget, each group left out and why) that the notebook and the DevUI show.

Example:
    ```python
    from agentnb import Agent
    from agentnb.compaction import ContextWindowCompactionStrategy
    from agentnb.local import ScriptedChatClient

    agent = Agent(
        ScriptedChatClient(["Hello!"]),
        compaction_strategy=ContextWindowCompactionStrategy(max_context_window_tokens=8_000, max_output_tokens=1_000),
    )
    response = await agent.run("Hi")
    ```
"""

from __future__ import annotations

from .._extensions import REQUEST_COMPACTION as _REQUEST_COMPACTION
from ._apply import RequestCompaction, copy_for_request, drop_orphan_results, keep_required_groups
from ._groups import (
    EXCLUDE_REASON_KEY,
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    GROUP_HAS_REASONING_KEY,
    GROUP_ID_KEY,
    GROUP_INDEX_KEY,
    GROUP_KIND_KEY,
    GROUP_TOKEN_COUNT_KEY,
    SUMMARIZED_BY_SUMMARY_ID_KEY,
    SUMMARY_OF_GROUP_IDS_KEY,
    SUMMARY_OF_MESSAGE_IDS_KEY,
    GroupKind,
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
from ._provider import COMPACTION_STATE_KEY, CompactionProvider
from ._report import (
    COMPACTION_LOG_KEY,
    COMPACTION_REPORT_KEY,
    CompactionReport,
    compaction_replay_html,
    compaction_reports,
    compaction_view_html,
    session_compaction_log,
)
from ._report import log_turn as log_compaction_turn
from ._strategies import (
    CompactionStrategy,
    ContextWindowCompactionStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
)
from ._summarization import DEFAULT_SUMMARIZATION_PROMPT, SummarizationStrategy
from ._tokenizers import (
    CharacterEstimatorTokenizer,
    TiktokenTokenizer,
    TokenizerProtocol,
    default_tokenizer,
    find_encoding_file,
)

__all__ = [
    "COMPACTION_LOG_KEY",
    "COMPACTION_REPORT_KEY",
    "COMPACTION_STATE_KEY",
    "DEFAULT_SUMMARIZATION_PROMPT",
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
    "CharacterEstimatorTokenizer",
    "CompactionProvider",
    "CompactionReport",
    "CompactionStrategy",
    "ContextWindowCompactionStrategy",
    "GroupKind",
    "RequestCompaction",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "SummarizationStrategy",
    "TiktokenTokenizer",
    "TokenBudgetComposedStrategy",
    "TokenizerProtocol",
    "ToolResultCompactionStrategy",
    "TruncationStrategy",
    "annotate_message_groups",
    "annotate_token_counts",
    "append_compaction_message",
    "apply_compaction",
    "compaction_replay_html",
    "compaction_reports",
    "compaction_view_html",
    "copy_for_request",
    "default_tokenizer",
    "drop_orphan_results",
    "exclude_group_ids",
    "extend_compaction_messages",
    "find_encoding_file",
    "group_messages",
    "included_messages",
    "included_token_count",
    "keep_required_groups",
    "log_compaction_turn",
    "project_included_messages",
    "session_compaction_log",
    "set_excluded",
]

# The chat loop in the core compacts requests through this (see agentnb/_extensions.py).
_REQUEST_COMPACTION.fill(RequestCompaction)
