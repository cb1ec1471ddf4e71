"""An offline embedding model: deterministic vectors from hashed words and character trigrams."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from .._embeddings import BaseEmbeddingClient, Embedding, EmbeddingGenerationOptions, GeneratedEmbeddings
from .._types import UsageDetails

__all__ = ["HashEmbeddingClient"]

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbeddingClient(BaseEmbeddingClient[str, list[float], EmbeddingGenerationOptions]):
    """Embeds text by feature hashing, with no model and no network: the same text always gives the same vector.

    Words and character trigrams are hashed (BLAKE2b) into ``dimensions`` signed buckets and the vector is
    L2-normalised, so texts that share words point in similar directions: good enough for trying semantic
    search, clustering and tests offline, not a substitute for a trained model.

    Example:
        ```python
        from agentnb import cosine_similarity
        from agentnb.local import HashEmbeddingClient

        a, b, c = await HashEmbeddingClient().get_embeddings(["the cat sat", "a cat sat down", "stock prices"])
        cosine_similarity(a.vector, b.vector) > cosine_similarity(a.vector, c.vector)  # True
        ```
    """

    OTEL_PROVIDER_NAME = "agentnb.local"

    def __init__(self, *, dimensions: int = 256, **kwargs: Any) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be >= 1, got {dimensions}")
        super().__init__(model=kwargs.pop("model", f"hash-{dimensions}"), **kwargs)
        self.dimensions = dimensions

    def embed(self, text: str, dimensions: int | None = None) -> list[float]:
        """The vector of one text."""
        size = dimensions or self.dimensions
        vector = [0.0] * size
        lowered = text.lower()
        words = _WORD.findall(lowered)
        features = [f"w:{w}" for w in words] + [f"c:{lowered[i : i + 3]}" for i in range(max(len(lowered) - 2, 0))]
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % size
            weight = 2.0 if feature.startswith("w:") else 1.0
            vector[bucket] += weight if digest[4] & 1 else -weight
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    async def _inner_get_embeddings(
        self, values: list[str], options: dict[str, Any]
    ) -> GeneratedEmbeddings[list[float], EmbeddingGenerationOptions]:
        size = int(options.get("dimensions") or self.dimensions)
        model = self.model if size == self.dimensions else f"hash-{size}"
        tokens = sum(len(_WORD.findall(str(v))) for v in values)
        usage: UsageDetails = {"input_token_count": tokens, "total_token_count": tokens}
        embeddings = [Embedding(self.embed(str(v), size), model=model) for v in values]
        return GeneratedEmbeddings(embeddings, options=EmbeddingGenerationOptions(**options), usage=usage)  # pyright: ignore[reportArgumentType]
