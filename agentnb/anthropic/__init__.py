"""Anthropic models for agentnb, over the official ``anthropic`` SDK (the ``anthropic`` extra).

:class:`AnthropicClient` speaks the Messages API: tools and parallel calls, streaming, structured output,
images and PDFs, usage, and extended thinking whose blocks travel with the tool calls they led to. It reads
``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_CHAT_MODEL``; the SDK itself is imported
when the first client is created. :class:`AnthropicBedrockClient` (the ``bedrock`` extra) and
:class:`AnthropicVertexClient` (the ``vertex`` extra) are the same client for Claude on AWS Bedrock and on
Google Vertex AI, with those clouds' credentials.
"""

from __future__ import annotations

from ._bedrock import AnthropicBedrockClient, AnthropicBedrockSettings
from ._client import AnthropicChatOptions, AnthropicClient, ThinkingConfig
from ._vertex import AnthropicVertexClient, AnthropicVertexSettings

# The reference splits each client from its layers; agentnb's classes have them built in.
RawAnthropicClient = AnthropicClient
RawAnthropicBedrockClient = AnthropicBedrockClient
RawAnthropicVertexClient = AnthropicVertexClient

__all__ = [
    "AnthropicBedrockClient",
    "AnthropicBedrockSettings",
    "AnthropicChatOptions",
    "AnthropicClient",
    "AnthropicVertexClient",
    "AnthropicVertexSettings",
    "RawAnthropicBedrockClient",
    "RawAnthropicClient",
    "RawAnthropicVertexClient",
    "ThinkingConfig",
]
