"""A harness agent's ``invoke_agent`` spans name the harness (or the caller's ``otel_provider_name``) as provider."""

from __future__ import annotations

import pytest

from agentnb import Agent
from agentnb import _telemetry as tel
from agentnb.harness import HARNESS_AGENT_PROVIDER_NAME, InMemoryAgentFileStore, create_harness_agent
from agentnb.local import ScriptedChatClient
from tests.observability.conftest import _provider, otel  # pyright: ignore[reportPrivateUsage]
from tests.observability.otel_fixtures import Otel

__all__ = ["_provider", "otel"]


@pytest.mark.parametrize(
    ("given", "expected"), [(None, HARNESS_AGENT_PROVIDER_NAME), ("contoso.research", "contoso.research")]
)
async def test_the_agent_span_carries_the_harness_provider_name_and_the_model_call_keeps_the_clients(
    otel: Otel, given: str | None, expected: str
) -> None:
    client = ScriptedChatClient(["Planned."])
    agent = create_harness_agent(
        client, name="researcher", otel_provider_name=given, file_memory_store=InMemoryAgentFileStore()
    )
    assert agent.otel_provider_name == expected
    await agent.run("Plan it.", session=agent.create_session())
    root = otel.one("invoke_agent researcher")
    assert root.attributes is not None
    assert root.attributes[tel.GEN_AI_PROVIDER_NAME] == expected
    (chat,) = [s for s in otel.spans() if s.name.startswith("chat")]
    assert chat.attributes is not None
    assert chat.attributes[tel.GEN_AI_PROVIDER_NAME] == client.OTEL_PROVIDER_NAME != expected


async def test_a_plain_agent_keeps_the_clients_provider_name(otel: Otel) -> None:
    client = ScriptedChatClient(["Hi."])
    await Agent(client, name="plain").run("Hello")
    root = otel.one("invoke_agent plain")
    assert root.attributes is not None
    assert root.attributes[tel.GEN_AI_PROVIDER_NAME] == client.OTEL_PROVIDER_NAME
