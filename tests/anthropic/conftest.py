"""Fixtures: one scripted Messages API server per test session, reset for every test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from agentnb.anthropic import AnthropicClient
from tests.anthropic_server import AnthropicServer


@pytest.fixture(scope="session")
def anthropic_server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server


@pytest.fixture
def server(anthropic_server: AnthropicServer) -> Iterator[AnthropicServer]:
    """The shared server with an empty script; fails the test on unused or missing scripted replies."""
    anthropic_server.reset()
    yield anthropic_server
    problems = anthropic_server.problems()
    anthropic_server.reset()
    assert not problems, "; ".join(problems)


@pytest.fixture(autouse=True)
def _no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def client(server: AnthropicServer) -> AsyncIterator[AnthropicClient]:
    client = AnthropicClient(model="claude-test", base_url=server.base_url, api_key="sk-ant-test", max_retries=0)
    yield client
    await client.close()
