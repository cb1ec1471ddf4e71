"""Fixtures: one scripted OpenAI-compatible server per test session, reset for every test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import OpenAIServer


@pytest.fixture(scope="session")
def openai_server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def server(openai_server: OpenAIServer) -> Iterator[OpenAIServer]:
    """The shared server with an empty script; fails the test on unused or missing scripted replies."""
    openai_server.reset()
    yield openai_server
    problems = openai_server.problems()
    openai_server.reset()
    assert not problems, "; ".join(problems)


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests must never pick up a developer's real key or server.
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT",
        "OPENAI_PROJECT_ID",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def chat_client(server: OpenAIServer) -> AsyncIterator[OpenAIChatCompletionClient]:
    client = OpenAIChatCompletionClient("test-model", base_url=server.base_url, api_key="sk-test", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def responses_client(server: OpenAIServer) -> AsyncIterator[OpenAIChatClient]:
    client = OpenAIChatClient("test-model", base_url=server.base_url, api_key="sk-test", max_retries=0)
    yield client
    await client.close()
