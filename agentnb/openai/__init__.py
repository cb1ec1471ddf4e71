"""OpenAI models for agentnb, over the official ``openai`` SDK.

:class:`OpenAIChatClient` speaks the Responses API; :class:`OpenAIChatCompletionClient` speaks Chat
Completions, the API that local servers (Ollama, vLLM, llama.cpp, LM Studio) implement. Both read
``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and ``OPENAI_MODEL`` from the environment. The SDK itself is
imported when the first client is created, so importing this package stays fast.
"""

from __future__ import annotations

from .._extensions import OPENAI_CHAT_CLIENT as _OPENAI_CHAT_CLIENT
from ._chat_completion_client import (
    OpenAIChatCompletionClient,
    OpenAIChatMessagePreparer,
    OpenAIChatResponseContentsParser,
)
from ._embedding_client import OpenAIEmbeddingClient, OpenAIEmbeddingOptions
from ._options import OpenAIChatCompletionOptions, OpenAIChatOptions, OpenAIContinuationToken
from ._responses_client import OpenAIChatClient
from ._settings import ContentFilterResultSeverity, OpenAISettings

__all__ = [
    "ContentFilterResultSeverity",
    "OpenAIChatClient",
    "OpenAIChatCompletionClient",
    "OpenAIChatCompletionOptions",
    "OpenAIChatMessagePreparer",
    "OpenAIChatOptions",
    "OpenAIChatResponseContentsParser",
    "OpenAIContinuationToken",
    "OpenAIEmbeddingClient",
    "OpenAIEmbeddingOptions",
    "OpenAISettings",
]

# default_chat_client (agentnb.local) switches to this when a key or base URL is set (agentnb/_extensions.py).
_OPENAI_CHAT_CLIENT.fill(OpenAIChatCompletionClient)
