"""AnthropicBedrockClient over the real SDK, SigV4 signing and HTTP, against the local server's Bedrock routes.

Credentials are static fake keys and the region is explicit, so botocore never looks further (the conftest also
turns off the EC2 metadata endpoint and the machine's AWS config files): nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentnb import Agent, tool
from agentnb.anthropic import AnthropicBedrockClient, AnthropicClient, RawAnthropicBedrockClient
from agentnb.exceptions import (
    RateLimitError,
    ServiceAuthenticationError,
    ServiceConnectionError,
    ServiceInitializationError,
    ServiceResponseError,
)
from tests.anthropic_server import AnthropicServer, ErrorReply, RecordedRequest, Reply, ToolUse, event_stream_message

ACCESS_KEY, SECRET_KEY = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"  # AWS's documented fake keys
SESSION_TOKEN, REGION = "tok-1", "us-west-2"

ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    ran.append(city)
    return f"Sunny in {city}."


@pytest.fixture
async def bedrock(server: AnthropicServer) -> AsyncIterator[AnthropicBedrockClient]:
    client = AnthropicBedrockClient(
        model="claude-test",
        aws_access_key=ACCESS_KEY,
        aws_secret_key=SECRET_KEY,
        aws_session_token=SESSION_TOKEN,
        aws_region=REGION,
        base_url=server.base_url,
        max_retries=0,
    )
    yield client
    await client.close()


def assert_signed(record: RecordedRequest, server: AnthropicServer) -> None:
    """The request carries a SigV4 signature for Bedrock in the region, and it verifies over what arrived."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    authorization = record.headers["authorization"]
    date = record.headers["x-amz-date"]
    scope = f"Credential={ACCESS_KEY}/{date[:8]}/{REGION}/bedrock/aws4_request"
    assert authorization.startswith(f"AWS4-HMAC-SHA256 {scope}, SignedHeaders=")
    assert record.headers["x-amz-security-token"] == SESSION_TOKEN
    signed = re.search(r"SignedHeaders=([^,]+)", authorization)
    assert signed is not None
    names = signed.group(1).split(";")
    assert {"host", "x-amz-date", "content-type"} <= set(names)
    request = AWSRequest(
        method="POST",
        url=server.base_url + record.path,
        headers={name: record.headers[name] for name in names},
        data=record.raw_body,
    )
    request.context["timestamp"] = date
    signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), "bedrock", REGION)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    assert authorization.endswith(f"Signature={expected}")


@pytest.mark.parametrize("stream", [False, True])
async def test_text_usage_and_what_arrives_at_bedrock(
    bedrock: AnthropicBedrockClient, server: AnthropicServer, stream: bool
) -> None:
    server.script(Reply(text="Hello from Bedrock.", input_tokens=12, output_tokens=4))
    agent = Agent(bedrock, "Be brief.")
    if stream:
        run = agent.run("Hi", stream=True, options={"temperature": 0.2})
        updates = [u async for u in run]
        assert len([u for u in updates if u.text]) > 1  # the text arrived in several event-stream chunks
        response = await run.get_final_response()
    else:
        response = await agent.run("Hi", options={"temperature": 0.2})
    assert response.text == "Hello from Bedrock."
    assert response.usage_details is not None
    assert response.usage_details["input_token_count"] == 12 and response.usage_details["output_token_count"] == 4
    assert response.model_id == "claude-test" and response.finish_reason == "stop"
    [record] = server.requests
    assert record.route == "bedrock" and record.model == "claude-test"
    assert record.path == ("/model/claude-test/invoke-with-response-stream" if stream else "/model/claude-test/invoke")
    body = record.body
    assert "model" not in body and "stream" not in body  # the model is in the path, streaming in the route
    assert body["anthropic_version"] == "bedrock-2023-05-31"
    assert body["system"] == "Be brief." and body["max_tokens"] == 1024 and body["temperature"] == 0.2
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert "x-api-key" not in record.headers
    assert_signed(record, server)


@pytest.mark.parametrize("stream", [False, True])
async def test_parallel_tool_calls_run_and_their_results_go_back(
    bedrock: AnthropicBedrockClient, server: AnthropicServer, stream: bool
) -> None:
    ran.clear()
    server.script(
        Reply(tool_uses=[ToolUse("get_weather", {"city": "Paris"}), ToolUse("get_weather", {"city": "Oslo"})]),
        Reply(text="Paris and Oslo are sunny."),
    )
    agent = Agent(bedrock, tools=[get_weather])
    if stream:
        run = agent.run("Weather?", stream=True)
        calls = [c for u in [u async for u in run] for c in u.contents if c.type == "function_call"]
        assert [(c.name, c.parse_arguments()) for c in calls] == [
            ("get_weather", {"city": "Paris"}),
            ("get_weather", {"city": "Oslo"}),
        ]
        response = await run.get_final_response()
    else:
        response = await agent.run("Weather?")
    assert response.text == "Paris and Oslo are sunny."
    assert sorted(ran) == ["Oslo", "Paris"]
    first, second = server.requests
    assert first.body["tools"][0]["name"] == "get_weather"
    results = second.body["messages"][2]["content"]
    assert [(b["type"], b["content"]) for b in results] == [
        ("tool_result", "Sunny in Paris."),
        ("tool_result", "Sunny in Oslo."),
    ]
    assert_signed(second, server)


async def test_a_model_id_with_a_version_suffix_and_beta_flags(server: AnthropicServer) -> None:
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    client = AnthropicBedrockClient(
        model=model,
        aws_access_key=ACCESS_KEY,
        aws_secret_key=SECRET_KEY,
        aws_region=REGION,
        base_url=server.base_url,
        additional_beta_flags=["context-1m-2025-08-07"],
    )
    server.script(Reply(text="ok"), Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    await client.get_response("hi", options={"additional_beta_flags": ["interleaved-thinking-2025-05-14"]})
    first, second = server.requests
    assert first.model == model and first.path == f"/model/{model}/invoke"
    # Bedrock takes the beta flags in the body; the SDK moves the anthropic-beta header there.
    assert first.body["anthropic_beta"] == ["context-1m-2025-08-07"]
    assert second.body["anthropic_beta"] == ["context-1m-2025-08-07", "interleaved-thinking-2025-05-14"]
    assert "x-amz-security-token" not in first.headers
    await client.close()


@pytest.mark.parametrize(
    ("reply", "error", "text"),
    [
        (ErrorReply(403, "UnrecognizedClientException", "Bad token."), ServiceAuthenticationError, "AWS_ACCESS_KEY_ID"),
        (ErrorReply(429, "ThrottlingException", "Too many requests, please wait."), RateLimitError, "please wait"),
        (ErrorReply(400, "ValidationException", "max_tokens: too low"), ServiceResponseError, "HTTP 400: max_tokens"),
        (ErrorReply(503, "ServiceUnavailableException", "Bedrock is down."), ServiceResponseError, "Bedrock is down"),
    ],
)  # fmt: skip
async def test_bedrock_errors_map_as_the_messages_api_errors(
    bedrock: AnthropicBedrockClient, server: AnthropicServer, reply: ErrorReply, error: type[Exception], text: str
) -> None:
    server.script(reply)
    with pytest.raises(error, match=text) as info:
        await bedrock.get_response("hi")
    assert type(info.value) is error
    assert getattr(info.value, "status_code", None) == reply.status
    assert getattr(info.value, "body", None) == {"message": reply.message}


async def test_stream_failures_keep_what_arrived(bedrock: AnthropicBedrockClient, server: AnthropicServer) -> None:
    server.script(
        Reply(text="partial answer here", error_after=4, stream_error=("throttlingException", "Too many tokens")),
        Reply(text="partial answer here", error_after=4, stream_error=("modelStreamErrorException", "Model failed")),
        Reply(text="partial answer here", cut_after=4),
    )
    # An exception message inside the event stream is typed as the same error over HTTP would be.
    with pytest.raises(RateLimitError, match="Too many tokens"):
        await bedrock.get_response("hi", stream=True).get_final_response()
    with pytest.raises(ServiceResponseError, match="Model failed"):
        await bedrock.get_response("hi", stream=True).get_final_response()
    with pytest.raises(ServiceConnectionError) as info:
        await bedrock.get_response("hi", stream=True).get_final_response()
    assert info.value.partial_text == "partial "  # the two text deltas sent before the drop


async def test_settings_from_the_environment_and_a_dotenv_file(
    server: AnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_CHAT_MODEL", "claude-env")
    client = RawAnthropicBedrockClient()
    assert RawAnthropicBedrockClient is AnthropicBedrockClient and isinstance(client, AnthropicClient)
    assert client.OTEL_PROVIDER_NAME == "aws.bedrock" and client.aws_region == REGION
    assert client.service_url() == server.base_url and client.model == "claude-env"
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    assert server.requests[0].model == "claude-env"
    assert_signed(server.requests[0], server)
    await client.close()

    # A .env file wins over the environment; arguments win over both.
    env_file = tmp_path / "bedrock.env"
    env_file.write_text("ANTHROPIC_CHAT_MODEL=claude-file\nAWS_REGION=eu-central-1\n")
    from_file = AnthropicBedrockClient(env_file_path=str(env_file))
    assert from_file.model == "claude-file" and from_file.aws_region == "eu-central-1"
    assert AnthropicBedrockClient(env_file_path=str(env_file), model="claude-arg").model == "claude-arg"

    # No region anywhere (no profile either): the reference's default, with a warning.
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("ANTHROPIC_BEDROCK_BASE_URL")
    with caplog.at_level(logging.WARNING, logger="agentnb.anthropic"):
        default = AnthropicBedrockClient()
    assert default.aws_region == "us-east-1"
    assert default.service_url() == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert "No AWS region specified" in caplog.text
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert AnthropicBedrockClient().aws_region == "ap-south-1"

    monkeypatch.delenv("ANTHROPIC_CHAT_MODEL")
    with pytest.raises(ServiceInitializationError, match="AnthropicBedrockClient needs a model"):
        AnthropicBedrockClient()


async def test_a_callers_sdk_client_is_used_and_left_open(
    server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anthropic.lib.bedrock import AsyncAnthropicBedrock

    sdk = AsyncAnthropicBedrock(
        aws_access_key=ACCESS_KEY, aws_secret_key=SECRET_KEY, aws_region=REGION, base_url=server.base_url
    )
    client = AnthropicBedrockClient(model="claude-test", anthropic_client=sdk)
    assert client.anthropic_client is sdk
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    await client.close()
    assert not sdk.is_closed()
    await sdk.close()
    with pytest.raises(ValueError, match="aws_region"):
        AnthropicBedrockClient(model="m", anthropic_client=sdk, aws_region="eu-west-1")
    # A Bedrock API key in the environment beside AWS keys is ambiguous; the SDK refuses, typed here.
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    with pytest.raises(ServiceInitializationError, match="Cannot specify both"):
        AnthropicBedrockClient(model="m", aws_access_key=ACCESS_KEY, aws_secret_key=SECRET_KEY)


def test_the_event_stream_encoding_is_what_botocore_decodes() -> None:
    from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

    payload = json.dumps({"bytes": "eyJ0eXBlIjogIm1lc3NhZ2Vfc3RvcCJ9"}).encode()
    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    frame = event_stream_message(headers, payload)
    buffer = EventStreamBuffer()
    buffer.add_data(frame[:7])  # a message split across reads
    assert list(buffer) == []
    buffer.add_data(frame[7:] + frame)
    messages = list(buffer)
    assert len(messages) == 2
    assert messages[0].headers == headers and messages[0].payload == payload
    assert messages[0].to_response_dict()["status_code"] == 200
    corrupt = bytearray(frame)
    corrupt[-6] ^= 0xFF
    broken = EventStreamBuffer()
    broken.add_data(bytes(corrupt))
    with pytest.raises(ChecksumMismatch):
        list(broken)


async def test_a_profile_of_the_aws_config_files_gives_the_keys_and_the_region(
    server: AnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config, credentials = tmp_path / "config", tmp_path / "credentials"
    config.write_text(f"[profile claude]\nregion = {REGION}\n")
    credentials.write_text(
        f"[claude]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n"
        f"aws_session_token = {SESSION_TOKEN}\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    client = AnthropicBedrockClient(model="claude-test", aws_profile="claude", base_url=server.base_url)
    assert client.aws_region == REGION  # from the profile, as no argument or variable names one
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi")).text == "ok"
    assert_signed(server.requests[0], server)
    await client.close()


async def test_a_bedrock_api_key_from_the_environment_is_a_bearer_token(
    server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    client = AnthropicBedrockClient(model="claude-test", aws_region=REGION, base_url=server.base_url)
    server.script(Reply(text="ok"))
    assert (await client.get_response("hi", stream=True).get_final_response()).text == "ok"
    [record] = server.requests
    assert record.headers["authorization"] == "Bearer bedrock-api-key" and "x-amz-date" not in record.headers
    assert record.path == "/model/claude-test/invoke-with-response-stream"
    await client.close()
