"""Embeddings: the offline hashing model, the OpenAI client over real HTTP, spans, and a DataFrame column."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

from agentnb import (
    BaseEmbeddingClient,
    Embedding,
    GeneratedEmbeddings,
    SupportsGetEmbeddings,
    cosine_similarity,
    embed_column,
)
from agentnb.exceptions import ServiceAuthenticationError
from agentnb.local import HashEmbeddingClient
from agentnb.openai import OpenAIEmbeddingClient
from tests.observability.otel_fixtures import Otel
from tests.openai_server import ErrorReply, OpenAIServer, embedding_of


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


async def test_hash_embeddings_are_deterministic_normalised_and_similar_for_similar_text() -> None:
    client = HashEmbeddingClient(dimensions=128)
    first = await client.get_embeddings(["The cat sat on the mat", "A cat sat on a mat", "Quarterly revenue grew"])
    again = await HashEmbeddingClient(dimensions=128).get_embeddings(["The cat sat on the mat"])
    assert first[0].vector == again[0].vector
    assert all(e.dimensions == 128 and e.model == "hash-128" for e in first)
    assert abs(sum(x * x for x in first[0].vector) - 1.0) < 1e-9
    same_topic = cosine_similarity(first[0].vector, first[1].vector)
    other_topic = cosine_similarity(first[0].vector, first[2].vector)
    assert same_topic > 0.5 > other_topic
    assert first.usage == {"input_token_count": 15, "total_token_count": 15}  # words: 6 + 6 + 3
    smaller = await client.get_embeddings(["x"], options={"dimensions": 16})
    assert smaller[0].dimensions == 16 and smaller[0].model == "hash-16"
    assert isinstance(client, SupportsGetEmbeddings)
    assert await client.get_embeddings([]) == []
    with pytest.raises(TypeError, match=r"wrap a single text in a list"):
        await client.get_embeddings("text")  # type: ignore[arg-type]


async def test_openai_embeddings_over_http(openai_server: OpenAIServer) -> None:
    openai_server.reset()
    client = OpenAIEmbeddingClient("text-embedding-3-small", base_url=openai_server.base_url, api_key="sk-test")
    result = await client.get_embeddings(["Hello, world!", "Second text"], options={"dimensions": 4})
    assert [e.vector for e in result] == [embedding_of("Hello, world!", 4), embedding_of("Second text", 4)]
    assert result[0].dimensions == 4 and result[0].model == "text-embedding-3-small"
    assert result.usage == {"input_token_count": 4, "total_token_count": 4}
    body = openai_server.requests[-1].body
    assert body == {
        "model": "text-embedding-3-small",
        "input": ["Hello, world!", "Second text"],
        "dimensions": 4,
        "encoding_format": "float",
    }
    openai_server.script(ErrorReply(401, "bad key", type="authentication_error", code="invalid_api_key"))
    with pytest.raises(ServiceAuthenticationError, match="HTTP 401"):
        await client.get_embeddings(["x"])
    assert not openai_server.problems()
    await client.close()


async def test_embedding_calls_are_traced(otel: Otel) -> None:
    await HashEmbeddingClient(dimensions=32).get_embeddings(["one two", "three"])
    span = otel.one("embeddings hash-32")
    assert span.attributes["gen_ai.operation.name"] == "embeddings"
    assert span.attributes["gen_ai.provider.name"] == "agentnb.local"
    assert span.attributes["gen_ai.usage.input_tokens"] == 3


async def test_a_reference_style_subclass_overrides_get_embeddings() -> None:
    class Lengths(BaseEmbeddingClient):
        async def get_embeddings(self, values, *, options=None):
            return GeneratedEmbeddings([Embedding([float(len(v))]) for v in values])

    assert [e.vector for e in await Lengths().get_embeddings(["ab", "abc"])] == [[2.0], [3.0]]


async def test_embed_column_adds_one_vector_per_row() -> None:
    frame = pd.DataFrame({"question": ["What is a cat?", "What is a dog?", "Why is the sky blue?"]})
    out = await embed_column(frame, "question", HashEmbeddingClient(dimensions=16), batch_size=2)
    assert list(out.columns) == ["question", "question_embedding"] and "question_embedding" not in frame
    assert [len(v) for v in out["question_embedding"]] == [16, 16, 16]
    assert out["question_embedding"][2] == HashEmbeddingClient(dimensions=16).embed("Why is the sky blue?")
