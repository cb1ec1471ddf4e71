"""Typed option dicts for the OpenAI clients: ``ChatOptions`` plus the keys each API adds.

Both are generic in the structured-output type (``OpenAIChatOptions[Weather](response_format=Weather)``) and
are plain dicts at run time; keys the client does not translate itself reach the SDK call unchanged.
"""

from __future__ import annotations

from typing import Any, Generic, Literal

from typing_extensions import NotRequired

from .._types import ChatOptions, ContinuationToken, ResponseModelT

__all__ = ["OpenAIChatCompletionOptions", "OpenAIChatOptions", "OpenAIContinuationToken"]


class OpenAIContinuationToken(ContinuationToken):
    """A background Responses API response to poll or resume: its id, and the last stream event received.

    Example:
        ```python
        from agentnb.openai import OpenAIChatOptions, OpenAIContinuationToken

        options = OpenAIChatOptions(continuation_token=OpenAIContinuationToken(response_id="resp_123"))
        ```
    """

    response_id: str
    # agentnb's addition: a resumed stream starts after this event, so nothing is delivered twice.
    sequence_number: NotRequired[int]


class OpenAIChatOptions(ChatOptions[ResponseModelT], Generic[ResponseModelT], total=False):
    """Options for :class:`OpenAIChatClient` (the Responses API)."""

    include: list[str]
    max_tool_calls: int
    prompt: dict[str, Any]
    prompt_cache_key: str
    reasoning: dict[str, Any]
    verbosity: Literal["low", "medium", "high"]
    safety_identifier: str
    service_tier: Literal["auto", "default", "flex", "priority"]
    top_logprobs: int
    truncation: Literal["auto", "disabled"]
    background: bool
    continuation_token: OpenAIContinuationToken
    store: bool
    metadata: dict[str, Any]
    previous_response_id: str


class OpenAIChatCompletionOptions(ChatOptions[ResponseModelT], Generic[ResponseModelT], total=False):
    """Options for :class:`OpenAIChatCompletionClient` (Chat Completions)."""

    logit_bias: dict[str | int, float]
    logprobs: bool
    top_logprobs: int
    frequency_penalty: float
    presence_penalty: float
    prediction: dict[str, Any]
    verbosity: Literal["low", "medium", "high"]
    service_tier: Literal["auto", "default", "flex", "priority"]
    store: bool
    metadata: dict[str, Any]
