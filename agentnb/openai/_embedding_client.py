"""Embeddings over the official ``openai`` SDK (``POST /embeddings``), for OpenAI and compatible servers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._embeddings import BaseEmbeddingClient, Embedding, EmbeddingGenerationOptions, GeneratedEmbeddings
from ._base import build_openai_client
from ._shared import map_openai_error, usage_details

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIEmbeddingClient", "OpenAIEmbeddingOptions"]

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
_API = "Embeddings"


class OpenAIEmbeddingOptions(EmbeddingGenerationOptions, total=False):
    """Options for :class:`OpenAIEmbeddingClient`: ``dimensions`` (text-embedding-3 models), format, user."""

    encoding_format: Literal["float", "base64"]
    user: str


class OpenAIEmbeddingClient(BaseEmbeddingClient[str, list[float], OpenAIEmbeddingOptions]):
    """Embeds text with an OpenAI (or OpenAI-compatible) embeddings endpoint.

    Reads ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and ``OPENAI_EMBEDDING_MODEL`` like the chat clients read
    theirs; a caller's ``async_client`` is used as it is and never closed.

    Example:
        ```python
        from agentnb.openai import OpenAIEmbeddingClient

        result = await OpenAIEmbeddingClient(model="text-embedding-3-small").get_embeddings(["Hello, world!"])
        result[0].dimensions, result.usage
        ```
    """

    OTEL_PROVIDER_NAME = "openai"

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
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            model=model or os.environ.get("OPENAI_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODEL,
            additional_properties=additional_properties,
        )
        if async_client is not None:
            if api_key is not None or base_url is not None:
                raise ValueError("OpenAIEmbeddingClient: pass either async_client=... or api_key/base_url, not both.")
            self.client, self._owns_client = async_client, False
        else:
            self.client = build_openai_client(
                "OpenAIEmbeddingClient",
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

    async def _inner_get_embeddings(
        self, values: list[str], options: dict[str, Any]
    ) -> GeneratedEmbeddings[list[float], OpenAIEmbeddingOptions]:
        import openai

        params: dict[str, Any] = {"model": options.get("model") or self.model, "input": values}
        for key in ("dimensions", "user"):
            if options.get(key) is not None:
                params[key] = options[key]
        params["encoding_format"] = "float"  # agentnb hands back lists of floats whatever was asked
        try:
            response = await self.client.embeddings.create(**params)
        except openai.OpenAIError as e:
            map_openai_error(e, api=_API)
        by_index = sorted(response.data, key=lambda item: item.index)
        embeddings = [Embedding(list(item.embedding), model=response.model) for item in by_index]
        usage = response.usage
        return GeneratedEmbeddings(
            embeddings,
            options=OpenAIEmbeddingOptions(**options),  # pyright: ignore[reportArgumentType]
            usage=usage_details(usage.prompt_tokens, None, usage.total_tokens) if usage else None,
        )

    def service_url(self) -> str | None:
        """The API root requests go to."""
        return self.base_url

    async def close(self) -> None:
        """Close the HTTP connections (only when this client created the SDK client)."""
        if self._owns_client:
            await self.client.close()
