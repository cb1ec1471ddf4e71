"""The base both OpenAI clients share: configuration from arguments and environment, the SDK client."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._clients import BaseChatClient
from ..exceptions import ServiceInitializationError

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["DEFAULT_MODEL", "OpenAIClientBase"]

DEFAULT_MODEL = "gpt-4o-mini"
# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed-for-local-servers"


class OpenAIClientBase(BaseChatClient):
    """Configuration and lifetime of the ``openai.AsyncOpenAI`` client behind an agentnb chat client.

    Arguments win over the environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_MODEL``,
    ``OPENAI_ORG_ID``, ``OPENAI_PROJECT``); a caller's ``async_client`` is used as it is and never closed.
    """

    OTEL_PROVIDER_NAME: str = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        org_id: str | None = None,
        project: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        async_client: AsyncOpenAI | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        instruction_role: Literal["system", "developer"] = "system",
        **kwargs: Any,
    ) -> None:
        if instruction_role not in ("system", "developer"):
            raise ValueError(f"instruction_role must be 'system' or 'developer', got {instruction_role!r}")
        if max_retries is not None and max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        name = type(self).__name__
        super().__init__(model_id=model or os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL, **kwargs)
        self.instruction_role = instruction_role
        if async_client is not None:
            if api_key is not None or base_url is not None:
                raise ValueError(
                    f"{name}: pass either async_client=... or api_key/base_url, not both; "
                    "configure the AsyncOpenAI instance itself."
                )
            self.client = async_client
            self._owns_client = False
        else:
            self.client = build_openai_client(
                name,
                api_key=api_key,
                base_url=base_url,
                org_id=org_id,
                project=project,
                default_headers=default_headers,
                timeout=timeout,
                max_retries=max_retries,
            )
            self._owns_client = True
        self.base_url = str(self.client.base_url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, base_url={self.base_url!r})"

    def service_url(self) -> str | None:
        """The API root requests go to."""
        return self.base_url

    async def close(self) -> None:
        """Close the HTTP connections (only when this client created the SDK client)."""
        if self._owns_client:
            await self.client.close()

    async def __aenter__(self) -> OpenAIClientBase:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def build_openai_client(
    name: str,
    *,
    api_key: str | None,
    base_url: str | None,
    org_id: str | None,
    project: str | None,
    default_headers: Mapping[str, str] | None,
    timeout: float | None,
    max_retries: int | None,
) -> AsyncOpenAI:
    key = api_key or os.environ.get("OPENAI_API_KEY") or None
    url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    if key is None and url is None:
        raise ServiceInitializationError(
            f"{name} needs an OpenAI API key: set OPENAI_API_KEY (or pass api_key=...). "
            "For a local OpenAI-compatible server such as Ollama or vLLM, set OPENAI_BASE_URL "
            "(or pass base_url=..., e.g. 'http://localhost:11434/v1'). To run without any model "
            "service, use the offline models in agentnb.local (ScriptedChatClient, ToolCallingChatClient)."
        )
    try:
        from openai import AsyncOpenAI
    except ImportError as e:  # pragma: no cover - the extra is installed in tests
        raise ImportError('agentnb.openai needs the openai SDK: pip install "agentnb[openai]"') from e

    kwargs: dict[str, Any] = {
        "api_key": key or PLACEHOLDER_API_KEY,
        "organization": org_id or os.environ.get("OPENAI_ORG_ID") or None,
        "project": project or os.environ.get("OPENAI_PROJECT") or os.environ.get("OPENAI_PROJECT_ID") or None,
        "default_headers": dict(default_headers) if default_headers else None,
    }
    if url is not None:
        kwargs["base_url"] = url
    if timeout is not None:
        kwargs["timeout"] = timeout
    if max_retries is not None:
        kwargs["max_retries"] = max_retries
    return AsyncOpenAI(**kwargs)
