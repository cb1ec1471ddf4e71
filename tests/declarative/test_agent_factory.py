"""AgentFactory: YAML definitions build ordinary agents, and nothing outside what the caller allows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentnb import Agent, Content, FunctionTool
from agentnb.declarative import AgentFactory, DeclarativeLoaderError, ProviderLookupError
from agentnb.local import ScriptedChatClient, ToolCallingChatClient
from tests.anthropic_server import AnthropicServer
from tests.anthropic_server import Reply as AnthropicReply
from tests.openai_server import OpenAIServer, Reply

# The reference's declarative-agents/agent-samples/chatclient/GetWeather.yaml.
GET_WEATHER = """\
kind: Prompt
name: Assistant
description: Helpful assistant
instructions: You are a helpful assistant. You answer questions using the tools provided.
model:
    options:
        temperature: 0.9
        topP: 0.95
        allowMultipleToolCalls: true
        chatToolMode: auto
tools:
  - kind: function
    name: GetWeather
    description: Get the weather for a given location.
    bindings:
      get_weather: get_weather
    parameters:
      properties:
        location:
          kind: string
          description: The city and state, e.g. San Francisco, CA
          required: true
        unit:
          kind: string
          description: The unit of temperature. Possible values are 'celsius' and 'fahrenheit'.
          required: false
          enum:
            - celsius
            - fahrenheit
"""

OPENAI_RESPONSES = """\
kind: Prompt
name: Assistant
description: Helpful assistant
instructions: You return your answers in a JSON format.
model:
    id: gpt-4.1-mini
    provider: OpenAI
    apiType: Responses
    options:
        temperature: 0.9
        topP: 0.95
    connection:
        kind: key
        apiKey: =Env.OPENAI_API_KEY
        endpoint: =Env.TEST_OPENAI_BASE_URL
outputSchema:
    properties:
        language:
            kind: string
            required: true
            description: The language of the answer.
        answer:
            kind: string
            required: true
            description: The answer text.
"""


def get_weather(location: str, unit: str = "celsius") -> str:
    return f"The weather in {location} is 21 degrees {unit}."


async def test_get_weather_sample_builds_an_agent_whose_tool_runs() -> None:
    client = ScriptedChatClient(
        [
            Content.from_function_call("c1", "GetWeather", {"location": "Amsterdam", "unit": "celsius"}),
            "It is 21 degrees in Amsterdam.",
        ]
    )
    agent = AgentFactory(client=client, bindings={"get_weather": get_weather}).create_agent_from_yaml(GET_WEATHER)
    assert isinstance(agent, Agent)
    assert agent.name == "Assistant"
    assert agent.default_options["temperature"] == 0.9
    assert agent.default_options["top_p"] == 0.95
    assert agent.default_options["tool_choice"] == "auto"
    assert agent.default_options["allow_multiple_tool_calls"] is True
    (weather,) = agent.tools
    assert isinstance(weather, FunctionTool)
    schema = weather.parameters()
    assert schema["required"] == ["location"]
    assert schema["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]

    response = await agent.run("What's the weather in Amsterdam, in celsius?")

    assert response.text == "It is 21 degrees in Amsterdam."
    results = [c for m in response.messages for c in m.contents if c.type == "function_result"]
    assert [r.result for r in results] == ["The weather in Amsterdam is 21 degrees celsius."]
    assert client.calls[0][0].text.startswith("You are a helpful assistant")


async def test_openai_responses_sample_talks_to_the_server_and_parses_the_output_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with OpenAIServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("TEST_OPENAI_BASE_URL", server.base_url)
        server.script(Reply(text=json.dumps({"language": "Dutch", "answer": "Door verstrooiing."})))
        agent = AgentFactory(safe_mode=False).create_agent_from_yaml(OPENAI_RESPONSES)

        async with agent:
            response = await agent.run("Why is the sky blue, answer in Dutch?")

        assert server.problems() == []
        (request,) = server.requests
        assert request.path.endswith("/responses")
        assert request.body["model"] == "gpt-4.1-mini"
        assert request.body["temperature"] == 0.9
        assert request.body["text"]["format"]["type"] == "json_schema"
        assert set(request.body["text"]["format"]["schema"]["required"]) == {"language", "answer"}
    assert isinstance(response.value, BaseModel)
    assert response.value.model_dump() == {"language": "Dutch", "answer": "Door verstrooiing."}


async def test_an_anthropic_definition_builds_the_anthropic_client_and_talks_to_the_messages_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentnb.anthropic import AnthropicClient

    yaml_text = (
        "kind: Prompt\nname: Claude\ninstructions: Be brief.\nmodel:\n  id: claude-test\n  provider: Anthropic\n"
        "  connection:\n    kind: key\n    apiKey: =Env.ANTHROPIC_API_KEY\n    endpoint: =Env.TEST_ANTHROPIC_BASE_URL\n"
    )
    with AnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("TEST_ANTHROPIC_BASE_URL", server.base_url)
        server.script(AnthropicReply(text="Hello from Claude."))
        agent = AgentFactory(safe_mode=False).create_agent_from_yaml(yaml_text)
        assert isinstance(agent.client, AnthropicClient)

        async with agent:
            response = await agent.run("Hi")

        assert server.problems() == []
        (request,) = server.requests
        assert request.body["model"] == "claude-test"
        assert request.headers["x-api-key"] == "sk-ant-test"
    assert response.text == "Hello from Claude."


def test_safe_mode_refuses_environment_reads_and_names_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    with pytest.raises(DeclarativeLoaderError, match=r"line 14: .*safe_mode=True forbids") as info:
        AgentFactory().create_agent_from_yaml(OPENAI_RESPONSES)
    assert info.value.line == 14
    assert "sk-secret" not in str(info.value)


def test_unknown_keys_are_errors_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("kind: Prompt\nname: A\nmodel:\n  id: m\n  provider: Local\n  temprature: 1\n")
    with pytest.raises(DeclarativeLoaderError, match=r"agent\.yaml, line 6: unknown key 'temprature' in model"):
        AgentFactory().create_agent_from_yaml_path(path)
    path.write_text("kind: Prompt\nname: A\ninstructionz: hi\n")
    with pytest.raises(DeclarativeLoaderError, match=r"line 3: unknown key 'instructionz' in the agent"):
        AgentFactory(client=ToolCallingChatClient()).create_agent_from_yaml_path(path)
    with pytest.raises(DeclarativeLoaderError, match=r"line 4: unknown key 'temprature' in model.options"):
        AgentFactory(client=ToolCallingChatClient()).create_agent_from_yaml(
            "kind: Prompt\nmodel:\n  options:\n    temprature: 1\n"
        )


def test_a_missing_tool_is_an_error_naming_the_line() -> None:
    with pytest.raises(DeclarativeLoaderError, match=r"line 15: tool 'GetWeather' is bound to .*get_weather"):
        AgentFactory(client=ToolCallingChatClient()).create_agent_from_yaml(GET_WEATHER)


def test_offline_provider_and_dict_definitions() -> None:
    agent = AgentFactory().create_agent_from_dict(
        {"kind": "Prompt", "name": "Offline", "instructions": "Be brief.", "model": {"id": "t", "provider": "Local"}}
    )
    assert isinstance(agent.client, ToolCallingChatClient)
    assert agent.client.model_id == "t"
    assert agent.additional_properties["declarative"]["kind"] == "agent"


async def test_import_strings_resolve_only_when_allowed() -> None:
    yaml_text = (
        "kind: Prompt\nname: A\ntools:\n  - kind: function\n    name: shout\n"
        "    bindings:\n      - name: tests.declarative.sample_tools:shout\n"
    )
    sys.modules.pop("tests.declarative.sample_tools", None)
    with pytest.raises(DeclarativeLoaderError, match=r"line 6: .*not in allowed_imports"):
        AgentFactory(client=ToolCallingChatClient()).create_agent_from_yaml(yaml_text)
    assert "tests.declarative.sample_tools" not in sys.modules

    factory = AgentFactory(client=ToolCallingChatClient(), allowed_imports=["tests.declarative.sample_tools:shout"])
    (shout,) = factory.create_agent_from_yaml(yaml_text).tools
    assert await shout.invoke(arguments={"text": "hi"}, skip_parsing=True) == "HI"

    private = yaml_text.replace(":shout", ":_hidden")
    with pytest.raises(DeclarativeLoaderError, match="must name a public function"):
        AgentFactory(
            client=ToolCallingChatClient(), allowed_imports=["tests.declarative.sample_tools"]
        ).create_agent_from_yaml(private)


def test_providers_come_from_the_table_only() -> None:
    before = set(sys.modules)
    with pytest.raises(ProviderLookupError, match=r"line 5: Unsupported provider type 'subprocess'"):
        AgentFactory().create_agent_from_yaml("kind: Prompt\nname: A\nmodel:\n  id: m\n  provider: subprocess\n")
    with pytest.raises(ProviderLookupError, match="Unsupported provider type 'Foundry'"):
        AgentFactory().create_agent_from_yaml("kind: Prompt\nmodel:\n  id: m\n  provider: Foundry\n")
    assert "subprocess" not in set(sys.modules) - before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Prompt\nname: !!python/object/apply:os.system ['true']\n", r"line 2: .*not allowed"),
        ("kind: Prompt\nname: !!python/name:os.system\n", r"line 2: .*not allowed"),
        ("a: &x [1, 2]\nb: *x\n", r"line 2: YAML aliases"),
        ("kind: Prompt\nname: A\nname: B\n", r"line 3: the key 'name' appears twice"),
        ("kind: Prompt\nbase: &b {x: 1}\nother:\n  <<: *b\n", r"line 4: merge keys"),
        ("kind: [unclosed\n", r"invalid YAML"),
        ("- just\n- a list\n", r"must be a YAML mapping"),
    ],
)
def test_the_loader_accepts_plain_data_only(text: str, message: str) -> None:
    with pytest.raises(DeclarativeLoaderError, match=message):
        AgentFactory(client=ToolCallingChatClient()).create_agent_from_yaml(text)


def test_mcp_tools_need_the_callers_permission() -> None:
    yaml_text = "kind: Prompt\nname: A\ntools:\n  - kind: mcp\n    name: docs\n    url: http://127.0.0.1:9/mcp\n"
    with pytest.raises(DeclarativeLoaderError, match=r"line 6: .*no allowed_mcp_urls"):
        AgentFactory(client=ToolCallingChatClient()).create_agent_from_yaml(yaml_text)
    factory = AgentFactory(client=ToolCallingChatClient(), allowed_mcp_urls=["http://127.0.0.1:9/"])
    (tool,) = factory.create_agent_from_yaml(yaml_text + "    approvalMode: always\n").tools
    assert type(tool).__name__ == "MCPStreamableHTTPTool"
    assert tool.url == "http://127.0.0.1:9/mcp"


async def test_an_mcp_tool_by_name_runs_on_a_real_server() -> None:
    from agentnb.mcp import MCPStdioTool

    server = MCPStdioTool("demo", sys.executable, args=["-m", "agentnb.mcp.demo_server"])
    factory = AgentFactory(client=ToolCallingChatClient(), mcp_tools={"demo": server})
    agent = factory.create_agent_from_yaml(
        "kind: Prompt\nname: A\ntools:\n  - kind: mcp\n    name: demo\n    allowedTools: [add]\n"
    )
    async with agent:
        response = await agent.run("add two numbers")
    results = [c for m in response.messages for c in m.contents if c.type == "function_result"]
    assert len(results) == 1
    assert results[0].exception is None
    assert results[0].result is not None
    assert [c.name for m in response.messages for c in m.contents if c.type == "function_call"] == ["add"]


def test_safe_mode_keeps_model_traffic_on_allowed_endpoints() -> None:
    text = (
        "kind: Prompt\nname: A\nmodel:\n  id: m\n  provider: OpenAI\n"
        "  connection:\n    kind: anonymous\n    endpoint: http://attacker.example/v1\n"
    )
    with pytest.raises(DeclarativeLoaderError, match=r"line 8: the model endpoint .* not covered by allowed_endpoints"):
        AgentFactory().create_agent_from_yaml(text)
    allowed = AgentFactory(client_kwargs={"api_key": "k"}, allowed_endpoints=["http://attacker.example/"])
    assert str(allowed.create_agent_from_yaml(text).client.service_url()).startswith("http://attacker.example")
