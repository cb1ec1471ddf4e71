"""The OpenAI-compatible API under ``panel serve devui``, added by the ``devui.api`` server plugin.

A real ``panel serve devui --plugins devui.api`` subprocess on a loopback port, with a token, driven by the
official ``openai`` SDK: the same answers as the launcher's API, from the entities the page shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.devui.devui_harness import DevUIServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TOKEN = "panel-serve-api-token"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = DevUIServer(
        tmp_path_factory.mktemp("devui-home-api"),
        options=["--plugins", "devui.api", "--basic-auth", TOKEN, "--cookie-secret", "s" * 32],
    )
    try:
        yield f"http://127.0.0.1:{server.port}/v1"
    finally:
        server.stop()


@pytest.fixture
def client(base_url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=base_url, api_key=TOKEN, max_retries=0, timeout=60) as client:
        yield client


def items_of(response: Any, kind: str) -> list[Any]:
    return [item for item in response.output if item.type == kind]


def test_the_plugin_serves_the_pages_entities(client: openai.OpenAI) -> None:
    ids = {model.id for model in client.models.list()}
    assert {"assistant", "mailer", "greeting-pipeline", "human-review"} <= ids


def test_a_tool_calling_agent_answers_plain_and_streamed(client: openai.OpenAI) -> None:
    response = client.responses.create(model="assistant", input="What's the weather in Paris?")
    (call,) = items_of(response, "function_call")[:1]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"city": "Paris"}
    assert "sunny, 21 °C" in response.output_text
    deltas: list[str] = []
    with client.responses.create(model="assistant", input="What's the weather in Rome?", stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            if event.type == "response.completed":
                final = event.response
    assert len(deltas) > 1 and "".join(deltas) == final.output_text and "Rome" in final.output_text


def test_an_approval_round_trip(client: openai.OpenAI) -> None:
    first = client.responses.create(model="mailer", input="Email Bob the report")
    (request,) = items_of(first, "mcp_approval_request")
    assert "was queued" not in json.dumps(first.model_dump())
    second = client.responses.create(
        model="mailer",
        previous_response_id=first.id,
        input=[{"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}],
    )
    assert "was queued" in second.output_text


def test_a_workflow_answers_with_its_output(client: openai.OpenAI) -> None:
    response = client.responses.create(model="greeting-pipeline", input=json.dumps({"name": "Ada"}))
    assert "HELLO ADA!!" in response.output_text


def test_a_wrong_token_is_refused(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="wrong", max_retries=0)
    with client, pytest.raises(openai.AuthenticationError):
        client.responses.create(model="assistant", input="Hello")
    assert httpx.get(base_url + "/models", timeout=10).status_code == 401


def test_routes_follow_the_command_line(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("devui_api", Path(__file__).parents[2] / "devui" / "api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = ["panel", "serve", "devui", "--basic-auth=secret", "--args", "--basic-auth", "not-panels"]
    assert module.option(argv, "--basic-auth") == "secret"  # only panel's own options, before --args
    assert module.app_args(argv) == ["--basic-auth", "not-panels"]
    token_file = tmp_path / "token"
    token_file.write_text("from-a-file\n")
    (pattern, _handler, args), *_ = module.routes(["panel", "serve", "devui", "--basic-auth", str(token_file)])
    assert pattern == "/v1/models" and args["api"].token == "from-a-file"
