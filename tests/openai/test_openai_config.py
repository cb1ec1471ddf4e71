"""Configuration of the OpenAI clients: arguments, environment, errors, and a light import."""

from __future__ import annotations

import subprocess
import sys

import pytest
from openai import AsyncOpenAI

from agentnb.exceptions import ServiceInitializationError
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import OpenAIServer, Reply

CLIENTS = [OpenAIChatCompletionClient, OpenAIChatClient]


@pytest.mark.parametrize("cls", CLIENTS)
def test_missing_key_and_base_url_says_what_to_set(cls: type):
    with pytest.raises(ServiceInitializationError) as info:
        cls()
    message = str(info.value)
    for hint in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "Ollama", "agentnb.local"):
        assert hint in message


@pytest.mark.parametrize("cls", CLIENTS)
def test_environment_configures_the_client(cls: type, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-000000000000")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "llama3.2")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT", "proj-1")
    client = cls()
    assert client.model_id == "llama3.2"
    assert client.client.api_key == "sk-env-key-000000000000"
    assert client.client.organization == "org-1" and client.client.project == "proj-1"
    assert client.service_url() == "http://127.0.0.1:9/v1/"
    assert "sk-env" not in repr(client)  # the key never shows


@pytest.mark.parametrize("cls", CLIENTS)
def test_arguments_win_over_the_environment(cls: type, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    client = cls("arg-model", api_key="sk-arg", base_url="http://127.0.0.1:9/v1", timeout=3.5, max_retries=5)
    assert client.model_id == "arg-model"
    assert client.client.api_key == "sk-arg"
    assert client.client.max_retries == 5
    assert client.client.timeout == 3.5


@pytest.mark.parametrize("cls", CLIENTS)
def test_default_model_and_placeholder_key_for_local_servers(cls: type):
    client = cls(base_url="http://localhost:11434/v1")
    assert client.model_id == "gpt-4o-mini"
    assert client.client.api_key  # the SDK insists on a key; local servers ignore it


@pytest.mark.parametrize("cls", CLIENTS)
async def test_a_caller_supplied_async_client_is_used_and_not_closed(cls: type, server: OpenAIServer):
    sdk = AsyncOpenAI(base_url=server.base_url, api_key="sk-own", default_headers={"X-Team": "blue"})
    client = cls("m", async_client=sdk)
    assert client.client is sdk
    server.script(Reply(text="hi"))
    assert (await client.get_response("hello")).text == "hi"
    assert server.requests[0].headers["x-team"] == "blue"
    await client.close()
    assert not sdk.is_closed()
    await sdk.close()
    with pytest.raises(ValueError, match="either async_client"):
        cls("m", async_client=sdk, api_key="sk-x")


@pytest.mark.parametrize("cls", CLIENTS)
async def test_default_headers_are_sent(cls: type, server: OpenAIServer):
    client = cls("m", base_url=server.base_url, api_key="sk-test", default_headers={"X-Trace": "abc"})
    server.script(Reply(text="ok"))
    await client.get_response("x")
    await client.close()
    assert server.requests[0].headers["x-trace"] == "abc"


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="instruction_role"):
        OpenAIChatCompletionClient(base_url="http://127.0.0.1:9/v1", instruction_role="boss")
    with pytest.raises(ValueError, match="max_retries"):
        OpenAIChatClient(base_url="http://127.0.0.1:9/v1", max_retries=-1)


def test_imports_stay_light():
    """``import agentnb`` never loads the SDK; ``agentnb.openai`` loads it only when a client is built."""
    code = (
        "import sys, agentnb; assert 'openai' not in sys.modules, 'agentnb imported openai'\n"
        "import agentnb.openai; assert 'openai' not in sys.modules, 'agentnb.openai imported openai eagerly'\n"
        "agentnb.openai.OpenAIChatClient(base_url='http://127.0.0.1:9/v1'); assert 'openai' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("cls", CLIENTS)
async def test_async_with_closes_the_connections(cls: type, server: OpenAIServer):
    server.script(Reply(text="ok"))
    async with cls("m", base_url=server.base_url) as client:
        assert (await client.get_response("x")).text == "ok"
    assert client.client.is_closed()
