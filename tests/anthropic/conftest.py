"""Fixtures: one scripted Messages API server per test session, reset for every test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

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


CLOUD_SETTINGS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
    "ANTHROPIC_VERTEX_BASE_URL",
    "GOOGLE_APPLICATION_CREDENTIALS",
)


@pytest.fixture(autouse=True)
def _no_anthropic_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_CHAT_MODEL", *CLOUD_SETTINGS):
        monkeypatch.delenv(name, raising=False)
    # No AWS config of the machine, and never the EC2 metadata endpoint: the tests give static credentials.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
async def client(server: AnthropicServer) -> AsyncIterator[AnthropicClient]:
    client = AnthropicClient(model="claude-test", base_url=server.base_url, api_key="sk-ant-test", max_retries=0)
    yield client
    await client.close()
