"""The reference's OpenAI settings schema and content-filter severity, for code that names them.

agentnb's OpenAI clients take their settings as keyword arguments and read ``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and ``OPENAI_ORG_ID`` themselves; :class:`OpenAISettings` is the same
set as a ``TypedDict`` for :func:`agentnb.load_settings`, so an application can resolve them (keyword, then
``.env`` file, then environment) the way the reference's samples do.
"""

from __future__ import annotations

from enum import Enum
from typing import TypedDict

from .._settings import SecretString

__all__ = ["ContentFilterResultSeverity", "OpenAISettings"]


class OpenAISettings(TypedDict, total=False):
    """OpenAI settings, each read from ``OPENAI_<FIELD>`` by ``load_settings(OpenAISettings, env_prefix="OPENAI_")``.

    Example:
        >>> from agentnb import load_settings
        >>> load_settings(OpenAISettings, env_prefix="OPENAI_", model="gpt-4o-mini")["model"]
        'gpt-4o-mini'
    """

    api_key: SecretString | None
    base_url: str | None
    org_id: str | None
    model: str | None
    embedding_model: str | None
    chat_model: str | None
    chat_completion_model: str | None


class ContentFilterResultSeverity(Enum):
    """How severe a content-filter finding is, as Azure OpenAI's filter results report it."""

    HIGH = "high"
    MEDIUM = "medium"
    SAFE = "safe"
    LOW = "low"
