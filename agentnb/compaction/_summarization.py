"""Summarization: a model rewrites the oldest groups as one summary message; the originals stay, excluded.

Security: the summary is model output that every later turn sends as the assistant's own words. A summarizer
that can be steered (or a compromised service) can plant instructions that outlive the turn they came in
with, so point ``client`` only at a model you trust as much as the agent's own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Final

from .._clients import SupportsChatGetResponse
from .._types import ChatResponse, Message
from ._groups import (
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    SUMMARY_OF_GROUP_IDS_KEY,
    SUMMARY_OF_MESSAGE_IDS_KEY,
    annotate_message_groups,
    set_excluded,
)
from ._strategies import Groups, mark_summarized
from ._tokenizers import CharacterEstimatorTokenizer, TokenizerProtocol

__all__ = [
    "DEFAULT_SUMMARIZATION_PROMPT",
    "DEFAULT_SUMMARY_INPUT_TOKEN_BUDGET",
    "SUMMARY_FAILURE_ERROR_THRESHOLD",
    "SummarizationStrategy",
]

logger = logging.getLogger("agentnb.compaction")

DEFAULT_SUMMARIZATION_PROMPT: Final[str] = """**Generate a clear and complete summary of the entire conversation \
in no more than five sentences.**

The summary must always:
- Reflect contributions from both the user and the assistant
- Preserve context to support ongoing dialogue
- Incorporate any previously provided summary
- Emphasize the most relevant and meaningful points

The summary must never:
- Offer critique, correction, interpretation, or speculation
- Highlight errors, misunderstandings, or judgments of accuracy
- Comment on events or ideas not present in the conversation
- Omit any details included in an earlier summary
"""
DEFAULT_SUMMARY_INPUT_TOKEN_BUDGET: Final[int] = 8_000
SUMMARY_FAILURE_ERROR_THRESHOLD: Final[int] = 3


def _line(index: int, message: Message) -> str:
    text = message.text or ", ".join(c.type for c in message.contents)
    return f"{index}. [{message.role}] {text}"


def _transcript(messages: Sequence[Message], *, start: int = 1) -> str:
    return "\n".join(_line(i, m) for i, m in enumerate(messages, start=start))


class SummarizationStrategy:
    """Summarize the oldest included groups once there are more than ``target_count + threshold`` messages.

    The newest groups holding about ``target_count`` messages stay verbatim; older ones (whole groups, as many
    as fit ``max_summary_input_tokens``) go to ``client`` with ``prompt``, and its answer is inserted where
    they began as an assistant message. The originals are excluded with reason ``"summarized"`` and linked
    to the summary both ways (``_summarized_by_summary_id`` / ``_summary_of_message_ids``). A failed or empty
    summary leaves the messages as they were (logged; an error after three failures in a row).

    Args:
        client: The summarizing chat client (see the module's security note).
        target_count: Included non-system messages to keep verbatim.
        threshold: Extra messages allowed above ``target_count`` before summarizing.
        prompt: The summarizer's instructions (:data:`DEFAULT_SUMMARIZATION_PROMPT` by default).
        max_summary_input_tokens: The most tokens the summarizer is sent (``None``: no limit).
        tokenizer: Measures the summarizer's input (:class:`CharacterEstimatorTokenizer` by default).

    Example:
        ```python
        from agentnb.compaction import SummarizationStrategy
        from agentnb.local import ScriptedChatClient

        strategy = SummarizationStrategy(client=ScriptedChatClient(["The user planned a trip."]), target_count=4)
        ```
    """

    def __init__(
        self,
        *,
        client: SupportsChatGetResponse,
        target_count: int = 4,
        threshold: int | None = 2,
        prompt: str | None = None,
        max_summary_input_tokens: int | None = DEFAULT_SUMMARY_INPUT_TOKEN_BUDGET,
        tokenizer: TokenizerProtocol | None = None,
    ) -> None:
        if target_count <= 0:
            raise ValueError("target_count must be greater than 0.")
        if threshold is not None and threshold < 0:
            raise ValueError("threshold must be greater than or equal to 0.")
        if max_summary_input_tokens is not None and max_summary_input_tokens <= 0:
            raise ValueError("max_summary_input_tokens must be greater than 0.")
        self.client = client
        self.target_count = target_count
        self.threshold = threshold if threshold is not None else 0
        self.prompt = prompt or DEFAULT_SUMMARIZATION_PROMPT
        self.max_summary_input_tokens = max_summary_input_tokens
        self.tokenizer = tokenizer or CharacterEstimatorTokenizer()
        self._failures = 0
        self._error_logged = False

    def _failed(self) -> None:
        self._failures += 1
        if self._failures >= SUMMARY_FAILURE_ERROR_THRESHOLD and not self._error_logged:
            logger.error(
                "Summarization compaction has failed %s consecutive times; summaries are no longer being made.",
                self._failures,
            )
            self._error_logged = True

    def _select(self, candidates: list[tuple[str, list[Message]]]) -> tuple[list[str], list[Message]]:
        """Whole groups, oldest first, while the summarizer's input stays within the token budget."""
        if self.max_summary_input_tokens is None:
            return [g for g, _ in candidates], [m for _, ms in candidates for m in ms]
        count = self.tokenizer.count_tokens
        prompt_tokens = count(self.prompt)
        separator = count("\n")
        chosen_ids: list[str] = []
        chosen: list[Message] = []
        text_tokens = 0
        for group_id, members in candidates:
            more = text_tokens + count(_transcript(members, start=len(chosen) + 1)) + (separator if chosen else 0)
            if prompt_tokens + more > self.max_summary_input_tokens:
                if not chosen:
                    continue
                break
            chosen_ids.append(group_id)
            chosen.extend(members)
            text_tokens = more
        return chosen_ids, chosen

    async def __call__(self, messages: list[Message]) -> bool:
        groups = Groups(messages)
        candidates: list[tuple[str, list[Message]]] = []
        included = 0
        for group_id in groups.included():
            if groups.kinds[group_id] == "system":
                continue
            live = [m for m in groups.members[group_id] if not m.additional_properties.get(EXCLUDED_KEY, False)]
            if live:
                candidates.append((group_id, live))
                included += len(live)
        if included <= self.target_count + self.threshold:
            return False
        kept = 0
        keep: set[str] = set()
        for group_id, live in reversed(candidates):
            if kept >= self.target_count and keep:
                break
            keep.add(group_id)
            kept += len(live)
        older = [(g, ms) for g, ms in candidates if g not in keep]
        if not older:
            return False
        group_ids, chosen = self._select(older)
        if not chosen:
            logger.warning("Skipping summarization compaction: no complete group fits max_summary_input_tokens.")
            self._failed()
            return False
        request = [Message("system", [self.prompt]), Message("user", [_transcript(chosen)])]
        try:
            response: Any = await self.client.get_response(request, stream=False)
        except Exception as e:
            logger.warning("Skipping summarization compaction: summary generation failed (%s).", e)
            self._failed()
            return False
        text = response.text.strip() if isinstance(response, ChatResponse) and response.text else ""
        if not text:
            logger.warning("Skipping summarization compaction: the summarizer returned no text.")
            self._failed()
            return False
        self._failures = 0
        self._error_logged = False
        summary_id = f"summary_{len(messages)}"
        summary = Message(
            "assistant",
            [text],
            message_id=summary_id,
            additional_properties={
                GROUP_ANNOTATION_KEY: {
                    SUMMARY_OF_MESSAGE_IDS_KEY: [m.message_id for m in chosen if m.message_id],
                    SUMMARY_OF_GROUP_IDS_KEY: list(group_ids),
                }
            },
        )
        for message in chosen:
            mark_summarized(message, summary_id)
            set_excluded(message, excluded=True, reason="summarized")
        position = min(groups.starts[g] for g in group_ids)
        messages.insert(position, summary)
        annotate_message_groups(messages, from_index=position)
        return True

    def __repr__(self) -> str:
        return f"SummarizationStrategy(target_count={self.target_count}, threshold={self.threshold})"
