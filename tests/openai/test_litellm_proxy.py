"""agentnb's OpenAI clients through LiteLLM's proxy, the gateway users put in front of other models.

The proxy runs as a real subprocess on loopback and forwards to the scripted test server behind it, so
no request leaves the machine: every outbound address LiteLLM knows of at start-up is disabled or sent to
a closed loopback port.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import Agent, tool
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import OpenAIServer, Reply, ToolCall

pytestmark = pytest.mark.slow

CLIENTS = [OpenAIChatCompletionClient, OpenAIChatClient]
MASTER_KEY = "sk-agentnb-proxy-test-0123456789abcdef"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, so a stray request fails at once


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _offline_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LITELLM_"))}
    env.update(
        {
            # Bundled copies instead of start-up downloads.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
            "LITELLM_LOCAL_BLOG_POSTS": "True",
            "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
            "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
            "LITELLM_TELEMETRY": "False",
            "DISABLE_ADMIN_UI": "True",
            "LITELLM_MASTER_KEY": MASTER_KEY,
            # Anything else it might fetch goes to a closed loopback port; loopback itself goes direct.
            "HTTP_PROXY": CLOSED,
            "HTTPS_PROXY": CLOSED,
            "ALL_PROXY": CLOSED,
            "NO_PROXY": "127.0.0.1,localhost",
            "HOME": str(home),
        }
    )
    return env


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIServer]:
    """The scripted model behind the proxy (this module's own: the proxy's config names its port)."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def proxy_url(openai_server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    litellm = shutil.which("litellm") or str(Path(sys.executable).with_name("litellm"))
    if not Path(litellm).exists():
        pytest.fail('LiteLLM\'s proxy is not installed: pip install -e ".[compat]" (.ci/run installs it).')
    home = tmp_path_factory.mktemp("litellm")
    config = home / "config.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: scripted\n"
        "    litellm_params:\n"
        "      model: openai/test-model\n"
        f"      api_base: {openai_server.base_url}\n"
        "      api_key: sk-test\n"
        "litellm_settings:\n"
        "  telemetry: false\n"
    )
    port = _free_port()
    log = (home / "proxy.log").open("wb")
    process = subprocess.Popen(
        [litellm, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
        cwd=home,
        env=_offline_env(home),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                pytest.fail(f"LiteLLM's proxy exited: {(home / 'proxy.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health/liveliness", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"LiteLLM's proxy did not start: {(home / 'proxy.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"{url}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def make(cls: type, proxy_url: str) -> Any:
    return cls("scripted", base_url=proxy_url, api_key=MASTER_KEY, max_retries=0)


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."


class Weather(BaseModel):
    city: str
    sky: str


async def run(agent: Agent, prompt: str, *, stream: bool, **kwargs: Any) -> Any:
    if not stream:
        return await agent.run(prompt, **kwargs)
    response_stream = agent.run(prompt, stream=True, **kwargs)
    pieces = [update.text async for update in response_stream]
    response = await response_stream.get_final_response()
    assert "".join(pieces).replace("\n", "") == response.text.replace("\n", "")
    return response


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_plain_text(server: OpenAIServer, proxy_url: str, cls: type, stream: bool) -> None:
    server.script(Reply(text="Hello through the gateway."))
    client = make(cls, proxy_url)
    response = await run(Agent(client, "Be brief."), "Hi", stream=stream)
    await client.close()
    assert response.text == "Hello through the gateway."
    assert response.usage_details["input_token_count"] == 11
    assert "Be brief." in str(server.requests[0].body), server.requests[0].body


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_tool_round_trip(server: OpenAIServer, proxy_url: str, cls: type, stream: bool) -> None:
    server.script(
        Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"}, call_id="call_7")]),
        Reply(text="It is sunny in Paris."),
    )
    client = make(cls, proxy_url)
    response = await run(Agent(client, tools=[get_weather]), "Weather in Paris?", stream=stream)
    await client.close()
    assert response.text == "It is sunny in Paris."
    results = [c for m in response.messages for c in m.contents if c.type == "function_result"]
    assert [r.result for r in results] == ["Sunny in Paris."]
    # The tool's result reached the model behind the proxy, tied to its call.
    follow_up = str(server.requests[1].body)
    assert "Sunny in Paris." in follow_up and "call_7" in follow_up


@pytest.mark.parametrize("cls", CLIENTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_structured_output_after_a_preamble(server: OpenAIServer, proxy_url: str, cls: type, stream: bool):
    server.script(
        Reply(text="Let me check.", tool_calls=[ToolCall("get_weather", {"city": "Paris"}, call_id="call_8")]),
        Reply(text='{"city": "Paris", "sky": "sunny"}'),
    )
    client = make(cls, proxy_url)
    agent = Agent(client, tools=[get_weather])
    response = await run(agent, "Weather?", stream=stream, options={"response_format": Weather})
    await client.close()
    assert response.value == Weather(city="Paris", sky="sunny")


@pytest.mark.parametrize("cls", CLIENTS)
async def test_parallel_tool_calls(server: OpenAIServer, proxy_url: str, cls: type) -> None:
    server.script(
        Reply(
            tool_calls=[
                ToolCall("get_weather", {"city": "Paris"}, call_id="call_a"),
                ToolCall("get_weather", {"city": "Rome"}, call_id="call_b"),
            ]
        ),
        Reply(text="Both sunny."),
    )
    client = make(cls, proxy_url)
    response = await run(Agent(client, tools=[get_weather]), "Paris and Rome?", stream=True)
    await client.close()
    results = sorted(c.result for m in response.messages for c in m.contents if c.type == "function_result")
    assert results == ["Sunny in Paris.", "Sunny in Rome."]
    assert response.text == "Both sunny."
