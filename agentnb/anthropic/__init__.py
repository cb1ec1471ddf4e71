"""Anthropic models for agentnb, over the official ``anthropic`` SDK (the ``anthropic`` extra).

:class:`AnthropicClient` speaks the Messages API: tools and parallel calls, streaming, structured output,
images and PDFs, usage, and extended thinking whose blocks travel with the tool calls they led to. It reads
``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_CHAT_MODEL``; the SDK itself is imported
when the first client is created.
"""

from __future__ import annotations

from ._client import AnthropicChatOptions, AnthropicClient, ThinkingConfig

# The reference splits the client from its layers; agentnb's one class has them built in.
RawAnthropicClient = AnthropicClient

__all__ = ["AnthropicChatOptions", "AnthropicClient", "RawAnthropicClient", "ThinkingConfig"]
