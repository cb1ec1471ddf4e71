"""Offline models: deterministic chat clients that need no network or API key.

They are real ``BaseChatClient``s, so middleware, tools, approval and streaming behave exactly as with
a provider. Use them to try agentnb, in tests, and in notebooks that must re-run unattended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._default import default_chat_client, describe_client
from ._embeddings import HashEmbeddingClient
from ._function import FunctionChatClient
from ._scripted import ScriptedChatClient
from ._tool_calling import ToolCallingChatClient, example_arguments

if TYPE_CHECKING:
    from ._cassette import RecordingChatClient, ReplayChatClient

__all__ = [
    "FunctionChatClient",
    "HashEmbeddingClient",
    "RecordingChatClient",
    "ReplayChatClient",
    "ScriptedChatClient",
    "ToolCallingChatClient",
    "default_chat_client",
    "describe_client",
    "example_arguments",
]

_LAZY = {"RecordingChatClient": "._cassette", "ReplayChatClient": "._cassette"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentnb.local' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)
