"""Pick the model a demo should use: a real one when configured, else the offline test model."""

from __future__ import annotations

import os
from typing import Any

from .._clients import BaseChatClient
from .._extensions import OPENAI_CHAT_CLIENT
from ._tool_calling import ToolCallingChatClient

__all__ = ["default_chat_client", "describe_client"]


def default_chat_client(**kwargs: Any) -> BaseChatClient:
    """An OpenAI-compatible client when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else offline.

    Demos, notebooks and the DevUI use this so they run anywhere and switch to a real model by setting
    an environment variable.
    """
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        return OPENAI_CHAT_CLIENT.get()(**kwargs)
    return ToolCallingChatClient(**kwargs)


def describe_client(client: BaseChatClient) -> str:
    """A one-line answer to "which model is answering?" for people."""
    where = client.service_url()
    offline = "offline, no network" if where is None else where
    return f"{client.model_id or 'unknown model'} via {type(client).__name__} ({offline})"
