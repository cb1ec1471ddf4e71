"""AnthropicVertexClient over the real SDK and HTTP, against the local server's Vertex routes.

Every client gets a static access token (or static google-auth credentials), so google-auth never looks for
application default credentials or asks a metadata server: nothing leaves 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import Agent, tool
from agentnb.anthropic import AnthropicClient, AnthropicVertexClient, RawAnthropicVertexClient
from agentnb.exceptions import (
    RateLimitError,
    ServiceAuthenticationError,
    ServiceConnectionError,
    ServiceInitializationError,
    ServiceResponseError,
)
from tests.anthropic_server import AnthropicServer, ErrorReply, Reply, ToolUse

PROJECT, REGION, TOKEN = "proj-1", "us-east5", "ya29.test-token"
PREFIX = f"/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models"

ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    ran.append(city)
    return f"Sunny in {city}."


@pytest.fixture
async def vertex(server: AnthropicServer) -> AsyncIterator[AnthropicVertexClient]:
    client = AnthropicVertexClient(
        model="claude-test@20250929",
        region=REGION,
        project_id=PROJECT,
        access_token=TOKEN,
        base_url=server.base_url,
        max_retries=0,
    )
    yield client
    await client.close()


@pytest.mark.parametrize("stream", [False, True])
async def test_text_usage_and_what_arrives_at_vertex(
    vertex: AnthropicVertexClient, server: AnthropicServer, stream: bool
) -> None:
    server.script(Reply(text="Hello from Vertex.", input_tokens=9, output_tokens=3, cache_read_input_tokens=2))
    agent = Agent(vertex, "Be brief.")
    if stream:
        run = agent.run("Hi", stream=True, options={"top_k": 3})
        assert len([u async for u in run if u.text]) > 1
        response = await run.get_final_response()
    else:
        response = await agent.run("Hi", options={"top_k": 3})
    assert response.text == "Hello from Vertex."
    assert response.usage_details is not None
    assert response.usage_details["input_token_count"] == 9 and response.usage_details["output_token_count"] == 3
    if not stream:
        assert response.usage_details.get("cached_input_token_count") == 2
    assert response.model_id == "claude-test@20250929"
    [record] = server.requests
    assert record.route == "vertex" and record.model == "claude-test@20250929"
    assert record.path == f"{PREFIX}/claude-test@20250929:{'streamRawPredict' if stream else 'rawPredict'}"
    body = record.body
    assert "model" not in body  # the model is in the path
    assert body.get("stream", False) is stream  # Vertex keeps the stream flag in the body
    assert body["anthropic_version"] == "vertex-2023-10-16"
    assert body["system"] == "Be brief." and body["top_k"] == 3
    assert record.headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-api-key" not in record.headers


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_calls_and_structured_output(
    vertex: AnthropicVertexClient, server: AnthropicServer, stream: bool
) -> None:
    class Weather(BaseModel):
        city: str
        sunny: bool

    ran.clear()
    server.script(
        Reply(tool_uses=[ToolUse("get_weather", {"city": "Rome"}), ToolUse("get_weather", {"city": "Bern"})]),
        Reply(text='{"city": "Rome", "sunny": true}'),
    )
    agent = Agent(vertex, tools=[get_weather])
    options = {"response_format": Weather}
    if stream:
        run = agent.run("Weather?", stream=True, options=options)
        _ = [u async for u in run]
        response = await run.get_final_response()
    else:
        response = await agent.run("Weather?", options=options)
    assert sorted(ran) == ["Bern", "Rome"]
    assert response.value == Weather(city="Rome", sunny=True)
    first, second = server.requests
    assert first.body["output_config"]["format"]["schema"]["additionalProperties"] is False
    assistant, results = second.body["messages"][1:3]
    assert [b["input"] for b in assistant["content"]] == [{"city": "Rome"}, {"city": "Bern"}]
    assert [b["tool_use_id"] for b in results["content"]] == [b["id"] for b in assistant["content"]]
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in server.requests)


@pytest.mark.parametrize(
    ("reply", "error", "text"),
    [
        (ErrorReply(401, "UNAUTHENTICATED", "Invalid credentials."), ServiceAuthenticationError, "access_token"),
        (ErrorReply(403, "PERMISSION_DENIED", "Permission denied."), ServiceAuthenticationError, "Permission"),
        (ErrorReply(429, "RESOURCE_EXHAUSTED", "Quota hit.", headers={"retry-after": "3"}), RateLimitError, "Quota"),
        (ErrorReply(400, "INVALID_ARGUMENT", "max_tokens: too low"), ServiceResponseError, "HTTP 400: max_tokens"),
    ],
)  # fmt: skip
async def test_google_errors_map_as_the_messages_api_errors(
    vertex: AnthropicVertexClient, server: AnthropicServer, reply: ErrorReply, error: type[Exception], text: str
) -> None:
    server.script(reply)
    with pytest.raises(error, match=text) as info:
        await vertex.get_response("hi")
    assert type(info.value) is error
    assert getattr(info.value, "status_code", None) == reply.status
    if isinstance(info.value, RateLimitError):
        assert info.value.retry_after == 3.0


async def test_stream_failures_keep_what_arrived(vertex: AnthropicVertexClient, server: AnthropicServer) -> None:
    server.script(
        Reply(text="partial answer here", error_after=4, stream_error=("rate_limit_error", "Slow down")),
        Reply(text="partial answer here", cut_after=4),
    )
    with pytest.raises(RateLimitError, match="Slow down"):
        await vertex.get_response("hi", stream=True).get_final_response()
    with pytest.raises(ServiceConnectionError) as info:
        await vertex.get_response("hi", stream=True).get_final_response()
    assert info.value.partial_text == "partial "


async def test_google_auth_credentials_are_sent_as_the_bearer_token(server: AnthropicServer) -> None:
    from google.oauth2.credentials import Credentials

    credentials = Credentials(token="ya29.from-credentials")  # no expiry: used as it is, never refreshed
    client = AnthropicVertexClient(
        model="claude-test",
        region="europe-west1",
        project_id="proj-2",
        credentials=credentials,
        base_url=server.base_url,
    )
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    [record] = server.requests
    assert record.headers["authorization"] == "Bearer ya29.from-credentials"
    assert record.path == "/projects/proj-2/locations/europe-west1/publishers/anthropic/models/claude-test:rawPredict"
    await client.close()


async def test_settings_from_the_environment_and_a_dotenv_file(
    server: AnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CLOUD_ML_REGION", REGION)
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", PROJECT)
    monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_CHAT_MODEL", "claude-env")
    client = RawAnthropicVertexClient(access_token=TOKEN)
    assert RawAnthropicVertexClient is AnthropicVertexClient and isinstance(client, AnthropicClient)
    assert client.OTEL_PROVIDER_NAME == "google.vertex.ai"
    assert (client.region, client.project_id, client.model) == (REGION, PROJECT, "claude-env")
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    assert server.requests[0].path == f"{PREFIX}/claude-env:rawPredict"
    await client.close()

    env_file = tmp_path / "vertex.env"
    env_file.write_text("CLOUD_ML_REGION=global\nANTHROPIC_VERTEX_PROJECT_ID=proj-file\n")
    monkeypatch.delenv("ANTHROPIC_VERTEX_BASE_URL")
    from_file = AnthropicVertexClient(env_file_path=str(env_file), access_token=TOKEN)
    assert (from_file.region, from_file.project_id) == ("global", "proj-file")
    assert from_file.service_url() == "https://aiplatform.googleapis.com/v1/"  # the SDK's endpoint for "global"
    assert AnthropicVertexClient(access_token=TOKEN, region="eu").service_url() == (
        "https://aiplatform.eu.rep.googleapis.com/v1/"
    )

    monkeypatch.delenv("CLOUD_ML_REGION")
    with pytest.raises(ServiceInitializationError, match="CLOUD_ML_REGION"):
        AnthropicVertexClient(access_token=TOKEN)
    monkeypatch.delenv("ANTHROPIC_VERTEX_PROJECT_ID")
    with pytest.raises(ServiceInitializationError, match="ANTHROPIC_VERTEX_PROJECT_ID"):
        AnthropicVertexClient(access_token=TOKEN, region=REGION)
    monkeypatch.delenv("ANTHROPIC_CHAT_MODEL")
    with pytest.raises(ServiceInitializationError, match="AnthropicVertexClient needs a model"):
        AnthropicVertexClient(access_token=TOKEN, region=REGION, project_id=PROJECT)


async def test_a_callers_sdk_client_is_used_and_left_open(server: AnthropicServer) -> None:
    from anthropic.lib.vertex import AsyncAnthropicVertex

    sdk = AsyncAnthropicVertex(region=REGION, project_id=PROJECT, access_token=TOKEN, base_url=server.base_url)
    client = AnthropicVertexClient(model="claude-test", anthropic_client=sdk)
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    assert server.requests[0].path == f"{PREFIX}/claude-test:rawPredict"
    await client.close()
    assert not sdk.is_closed()
    await sdk.close()
    with pytest.raises(ValueError, match="project_id"):
        AnthropicVertexClient(model="m", anthropic_client=sdk, project_id="other")


async def test_the_client_layers_middleware_and_the_tool_loop_limit(server: AnthropicServer) -> None:
    from agentnb import ChatContext, chat_middleware

    seen: list[int] = []

    @chat_middleware
    async def count_messages(context: ChatContext, call_next: Any) -> None:
        seen.append(len(context.messages))
        await call_next()

    client = AnthropicVertexClient(
        model="claude-test",
        region=REGION,
        project_id=PROJECT,
        access_token=TOKEN,
        base_url=server.base_url,
        middleware=[count_messages],
        function_invocation_configuration={"max_iterations": 1},
        additional_properties={"team": "docs"},
    )
    assert client.additional_properties == {"team": "docs"}
    ran.clear()
    server.script(Reply(tool_uses=[ToolUse("get_weather", {"city": "Oslo"})]), Reply(text="Oslo is sunny."))
    response = await Agent(client, tools=[get_weather]).run("Weather in Oslo?")
    assert response.text == "Oslo is sunny." and ran == ["Oslo"]
    assert seen == [1, 3]  # the middleware saw both model calls: the question, then question + call + result
    # After the one allowed round the tools stay on the request, with tool choice "none".
    assert server.requests[1].body["tool_choice"] == {"type": "none"}
    sdk = client.anthropic_client
    await client.close()
    assert sdk.is_closed()  # the client built it, so the client closes it
