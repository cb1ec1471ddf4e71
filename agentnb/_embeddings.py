"""Embeddings: vectors for text, the client seam that produces them, and a DataFrame column of them.

A provider implements ``_inner_get_embeddings(values, options)``; :meth:`BaseEmbeddingClient.get_embeddings`
checks the input and wraps each call in an ``embeddings`` span (recorded once instrumentation is on), as
chat clients are wrapped in ``chat`` spans. A subclass written the reference's way, overriding
``get_embeddings`` itself, works too (without the span).
"""

from __future__ import annotations

import math
from abc import ABC
from collections.abc import Iterable, Mapping, Sequence, Sized
from datetime import datetime
from typing import Any, Generic, Protocol, TypedDict, runtime_checkable

from typing_extensions import TypeVar

from . import _telemetry as tel
from ._types import UsageDetails

__all__ = [
    "BaseEmbeddingClient",
    "Embedding",
    "EmbeddingGenerationOptions",
    "EmbeddingInputT",
    "EmbeddingT",
    "GeneratedEmbeddings",
    "SupportsGetEmbeddings",
    "cosine_similarity",
    "embed_column",
]

EmbeddingT = TypeVar("EmbeddingT", default=list[float])
EmbeddingInputT = TypeVar("EmbeddingInputT", default=str)
EmbeddingOptionsT = TypeVar("EmbeddingOptionsT", bound=Mapping[str, Any], default="EmbeddingGenerationOptions")


class EmbeddingGenerationOptions(TypedDict, total=False):
    """Options for one embedding request; providers add their own keys."""

    model: str
    dimensions: int


class Embedding(Generic[EmbeddingT]):
    """One embedding vector and what produced it.

    Example:
        >>> Embedding([0.6, 0.8], model="hash-64").dimensions
        2
    """

    def __init__(
        self,
        vector: EmbeddingT,
        *,
        model: str | None = None,
        dimensions: int | None = None,
        created_at: datetime | None = None,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        self.vector = vector
        self.model = model
        self.created_at = created_at
        self.additional_properties: dict[str, Any] = additional_properties or {}
        self._dimensions = dimensions

    @property
    def dimensions(self) -> int | None:
        """The given dimension count, else the vector's length."""
        if self._dimensions is not None:
            return self._dimensions
        vector: object = self.vector
        if isinstance(vector, Sized) and not isinstance(vector, str):
            return len(vector)
        return None

    def __repr__(self) -> str:
        return f"Embedding(model={self.model!r}, dimensions={self.dimensions})"


class GeneratedEmbeddings(list[Embedding[EmbeddingT]], Generic[EmbeddingT, EmbeddingOptionsT]):
    """The embeddings of one request, in the order of its inputs, with the usage it cost."""

    def __init__(
        self,
        embeddings: Iterable[Embedding[EmbeddingT]] | None = None,
        *,
        options: EmbeddingOptionsT | None = None,
        usage: UsageDetails | None = None,
        additional_properties: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(embeddings or [])
        self.options = options
        self.usage = usage
        self.additional_properties: dict[str, Any] = additional_properties or {}

    @property
    def vectors(self) -> list[EmbeddingT]:
        """The vectors alone, in input order."""
        return [e.vector for e in self]


@runtime_checkable
class SupportsGetEmbeddings(Protocol):
    """Anything that embeds a batch of values the way :class:`BaseEmbeddingClient` does."""

    async def get_embeddings(self, values: Sequence[Any], *, options: Any = None) -> GeneratedEmbeddings[Any, Any]:
        """Embed ``values``, one embedding each, in order."""
        ...


class BaseEmbeddingClient(ABC, Generic[EmbeddingInputT, EmbeddingT, EmbeddingOptionsT]):
    """Base class of embedding clients: subclasses implement ``_inner_get_embeddings``.

    Example:
        ```python
        from agentnb.local import HashEmbeddingClient

        result = await HashEmbeddingClient(dimensions=64).get_embeddings(["a cat", "a dog"])
        result[0].dimensions  # 64
        ```
    """

    OTEL_PROVIDER_NAME: str = "agentnb"

    def __init__(self, *, model: str | None = None, additional_properties: dict[str, Any] | None = None) -> None:
        self.model = model
        self.additional_properties: dict[str, Any] = additional_properties or {}

    @property
    def model_id(self) -> str | None:
        """agentnb's name for :attr:`model`, as on chat clients."""
        return self.model

    async def _inner_get_embeddings(
        self, values: list[EmbeddingInputT], options: dict[str, Any]
    ) -> GeneratedEmbeddings[EmbeddingT, EmbeddingOptionsT]:
        """Embed ``values`` (one provider call)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _inner_get_embeddings (or get_embeddings).")

    async def get_embeddings(
        self, values: Sequence[EmbeddingInputT], *, options: EmbeddingOptionsT | None = None
    ) -> GeneratedEmbeddings[EmbeddingT, EmbeddingOptionsT]:
        """Embed ``values``: one embedding per value, in order (an empty input makes no request)."""
        if isinstance(values, str):
            raise TypeError("get_embeddings takes a list of values; wrap a single text in a list: [text].")
        batch = list(values)
        settings = dict(options or {})
        if not batch:
            return GeneratedEmbeddings([], options=options)
        model = settings.get("model") or self.model
        if not tel.recording():
            return await self._inner_get_embeddings(batch, settings)
        span = tel.start_span(
            f"embeddings {model}" if model else "embeddings",
            {
                tel.GEN_AI_OPERATION_NAME: "embeddings",
                tel.GEN_AI_PROVIDER_NAME: self.OTEL_PROVIDER_NAME,
                tel.GEN_AI_REQUEST_MODEL: model,
                "gen_ai.embeddings.dimension.count": settings.get("dimensions"),
                tel.OPENINFERENCE_SPAN_KIND: "EMBEDDING",
            },
            kind="client",
        )
        try:
            with tel.use_span(span):
                result = await self._inner_get_embeddings(batch, settings)
        except BaseException as e:
            tel.end_span(span, error=e)
            raise
        usage = result.usage or {}
        tel.end_span(
            span,
            attributes={
                tel.GEN_AI_USAGE_INPUT_TOKENS: usage.get("input_token_count"),
                tel.GEN_AI_RESPONSE_MODEL: result[0].model if result else None,
            },
        )
        return result

    async def close(self) -> None:
        """Release what the client holds (nothing by default)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of the angle between two vectors (0.0 when either is all zeros)."""
    if len(a) != len(b):
        raise ValueError(f"Vectors differ in length: {len(a)} and {len(b)}.")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


async def embed_column(
    frame: Any,
    column: str,
    client: SupportsGetEmbeddings,
    *,
    into: str | None = None,
    batch_size: int = 256,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """A copy of a DataFrame with the embedding of each value of ``column`` in a new column.

    Works on pandas (and anything with ``frame[column]`` and ``frame.assign``); the frame's library is not
    imported here. Values go to the client in batches of ``batch_size``; the new column (``<column>_embedding``
    by default) holds plain lists of floats, one per row.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    values = [str(v) for v in frame[column]]
    vectors: list[Any] = []
    for start in range(0, len(values), batch_size):
        result = await client.get_embeddings(values[start : start + batch_size], options=dict(options or {}))
        vectors.extend(e.vector for e in result)
    return frame.assign(**{into or f"{column}_embedding": vectors})
