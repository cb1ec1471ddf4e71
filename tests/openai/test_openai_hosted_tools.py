"""Hosted tools on the Responses API: declarations reach the wire as given, and what the provider ran comes
back as typed contents (code and its output, citations, images, remote MCP calls, shell runs)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agentnb import (
    Agent,
    ChatResponse,
    Content,
    SupportsCodeInterpreterTool,
    SupportsFileSearchTool,
    SupportsImageGenerationTool,
    SupportsMCPTool,
    SupportsShellTool,
    SupportsWebSearchTool,
    tool,
)
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import OpenAIServer, Reply, ToolCall

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
PNG_B64 = base64.b64encode(PNG).decode()

CODE_CALL = {
    "id": "ci_1",
    "type": "code_interpreter_call",
    "code": "print(6 * 7)",
    "container_id": "cntr_1",
    "status": "completed",
    "outputs": [{"type": "logs", "logs": "42\n"}, {"type": "image", "url": "https://files.example/plot.png"}],
}
WEB_CALL = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "agentnb <release>"},
}
IMAGE_CALL = {
    "id": "ig_1",
    "type": "image_generation_call",
    "status": "completed",
    "result": PNG_B64,
    "revised_prompt": "a cat",
}
MCP_CALL = {
    "id": "mcp_1",
    "type": "mcp_call",
    "name": "search_docs",
    "server_label": "docs",
    "arguments": '{"q": "install"}',
    "output": "pip install agentnb",
    "status": "completed",
}
SHELL_CALL = {
    "id": "sh_1",
    "type": "shell_call",
    "call_id": "call_sh",
    "status": "completed",
    "action": {"commands": ["ls", "false"], "max_output_length": None, "timeout_ms": None},
}
SHELL_OUTPUT = {
    "id": "sho_1",
    "type": "shell_call_output",
    "call_id": "call_sh",
    "status": "completed",
    "output": [
        {"stdout": "a.txt\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
        {"stdout": "", "stderr": "", "outcome": {"type": "timeout"}},
    ],
}
CITATION = {
    "type": "url_citation",
    "title": "Docs <b>",
    "url": "https://docs.example/x",
    "start_index": 0,
    "end_index": 7,
}


async def ask(client: OpenAIChatClient, messages: Any, *, stream: bool, **kwargs: Any) -> ChatResponse:
    if stream:
        response_stream = client.get_response(messages, stream=True, **kwargs)
        async for _ in response_stream:
            pass
        return await response_stream.get_final_response()
    return await client.get_response(messages, **kwargs)


def test_the_responses_client_supports_every_hosted_tool_and_chat_completions_none():
    client = OpenAIChatClient("m", api_key="sk-test")
    protocols = (
        SupportsCodeInterpreterTool,
        SupportsWebSearchTool,
        SupportsImageGenerationTool,
        SupportsMCPTool,
        SupportsFileSearchTool,
        SupportsShellTool,
    )
    assert all(isinstance(client, p) for p in protocols)
    # Chat Completions offers web search alone (as a request parameter).
    completions = OpenAIChatCompletionClient("m", api_key="sk-test")
    assert [p for p in protocols if isinstance(completions, p)] == [SupportsWebSearchTool]


def test_tool_declarations_take_the_reference_shapes():
    c = OpenAIChatClient
    assert c.get_code_interpreter_tool(file_ids=["f1"]) == {
        "type": "code_interpreter",
        "container": {"type": "auto", "file_ids": ["f1"]},
    }
    assert c.get_web_search_tool(user_location={"city": "Oslo"}, search_context_size="low") == {
        "type": "web_search",
        "user_location": {"type": "approximate", "city": "Oslo", "country": None, "region": None, "timezone": None},
        "search_context_size": "low",
    }
    assert c.get_image_generation_tool(size="1024x1024", partial_images=0) == {
        "type": "image_generation",
        "size": "1024x1024",
        "partial_images": 0,
    }
    assert c.get_mcp_tool(name="my docs", url="https://m.example", approval_mode="never_require") == {
        "type": "mcp",
        "server_label": "my_docs",
        "server_url": "https://m.example",
        "require_approval": "never",
    }
    assert c.get_mcp_tool(name="d", url="u", approval_mode={"always_require_approval": ["rm"]})["require_approval"] == {
        "always": {"tool_names": ["rm"]}
    }
    assert c.get_file_search_tool(vector_store_ids=["vs_1"], max_num_results=3) == {
        "type": "file_search",
        "vector_store_ids": ["vs_1"],
        "max_num_results": 3,
    }
    assert c.get_shell_tool() == {"type": "shell", "environment": {"type": "container_auto"}}
    with pytest.raises(ValueError, match="func="):
        c.get_shell_tool(environment={"type": "local"})


def test_a_local_shell_is_a_function_tool_that_keeps_approval():
    def run(command: str) -> str:
        return command

    shell = OpenAIChatClient.get_shell_tool(func=run, name="sh", approval_mode="always_require")
    assert shell.name == "sh"
    assert shell.approval_mode == "always_require"
    with pytest.raises(ValueError, match="environment="):
        OpenAIChatClient.get_shell_tool(func=run, environment={"type": "container_auto"})


@pytest.mark.parametrize("stream", [False, True])
async def test_hosted_declarations_pass_through_the_loop_beside_function_tools(
    server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool
):
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    web = OpenAIChatClient.get_web_search_tool()
    code = OpenAIChatClient.get_code_interpreter_tool()
    server.script(Reply(tool_calls=[ToolCall("add", {"a": 1, "b": 2})]), Reply(text="3"))
    agent = Agent(responses_client, tools=[add, web, code])
    if stream:
        response = await agent.run("1+2?", stream=True).get_final_response()
    else:
        response = await agent.run("1+2?")
    assert response.text == "3"
    first, second = server.requests
    for request in (first, second):
        kinds = [t["type"] for t in request.body["tools"]]
        assert kinds == ["function", "web_search", "code_interpreter"]
        assert request.body["tools"][2] == {"type": "code_interpreter", "container": {"type": "auto"}}


@pytest.mark.parametrize("stream", [False, True])
async def test_code_interpreter_call_and_output_are_typed(
    server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool
):
    server.script(Reply(text="It is 42.", hosted=[CODE_CALL]))
    response = await ask(
        responses_client, "compute", stream=stream, options={"tools": [OpenAIChatClient.get_code_interpreter_tool()]}
    )
    call, result, text = response.messages[0].contents
    assert call.type == "code_interpreter_tool_call"
    assert call.call_id == "ci_1"
    assert [c.text for c in call.inputs or []] == ["print(6 * 7)"]
    assert result.type == "code_interpreter_tool_result"
    outputs = result.outputs
    assert [o.type for o in outputs] == ["text", "uri"]
    assert outputs[0].text == "42\n"
    assert outputs[1].uri == "https://files.example/plot.png"
    assert text.text == "It is 42."
    assert response.finish_reason == "stop"  # the provider ran the tool: nothing for the caller to run


@pytest.mark.parametrize("stream", [False, True])
async def test_web_search_with_citations(server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool):
    server.script(Reply(text="agentnb is a toolkit.", hosted=[WEB_CALL], annotations=[CITATION], chunk_size=5))
    response = await ask(responses_client, "what is agentnb?", stream=stream)
    call, result, text = response.messages[0].contents
    assert (call.type, call.tool_name, call.arguments) == (
        "search_tool_call",
        "web_search",
        {"type": "search", "query": "agentnb <release>"},
    )
    assert result.type == "search_tool_result"
    assert result.result == {"action": {"type": "search", "query": "agentnb <release>"}}
    assert text.text == "agentnb is a toolkit."
    assert text.annotations == [
        {
            "type": "citation",
            "title": "Docs <b>",
            "url": "https://docs.example/x",
            "annotated_regions": [{"type": "text_span", "start_index": 0, "end_index": 7}],
        }
    ]
    # The citation survives the JSON form sessions are saved in.
    assert Content.from_dict(text.to_dict()).annotations == text.annotations


@pytest.mark.parametrize("stream", [False, True])
async def test_generated_image_mcp_and_shell_items(
    server: OpenAIServer, responses_client: OpenAIChatClient, stream: bool
):
    server.script(Reply(text="done", hosted=[IMAGE_CALL, MCP_CALL, SHELL_CALL, SHELL_OUTPUT]))
    response = await ask(responses_client, "go", stream=stream)
    contents = response.messages[0].contents
    assert [c.type for c in contents] == [
        "image_generation_tool_call",
        "image_generation_tool_result",
        "mcp_server_tool_call",
        "mcp_server_tool_result",
        "shell_tool_call",
        "shell_tool_result",
        "text",
    ]
    image = contents[1].outputs
    assert image.type == "data" and image.data == PNG and image.media_type == "image/png"
    assert contents[1].additional_properties == {"revised_prompt": "a cat"}
    mcp_call, mcp_result = contents[2], contents[3]
    assert (mcp_call.tool_name, mcp_call.server_name, mcp_call.arguments) == ("search_docs", "docs", '{"q": "install"}')
    assert [c.text for c in mcp_result.output] == ["pip install agentnb"]
    assert contents[4].commands == ["ls", "false"]
    first, second = contents[5].outputs or []
    assert (first.stdout, first.exit_code, first.timed_out) == ("a.txt\n", 0, False)
    assert (second.exit_code, second.timed_out) == (None, True)


async def test_hosted_contents_survive_a_session_round_trip(server: OpenAIServer, responses_client: OpenAIChatClient):
    server.script(Reply(text="ok", hosted=[CODE_CALL, IMAGE_CALL]), Reply(text="again"))
    agent = Agent(responses_client)
    session = agent.create_session()
    await agent.run("first", session=session)
    restored = type(session).from_dict(session.to_dict())
    await agent.run("second", session=restored)
    # Hosted items are the provider's record: they are not sent back as input the API would refuse.
    kinds = [item.get("type", item.get("role")) for item in server.requests[1].body["input"]]
    assert kinds == ["user", "assistant", "user"]


async def test_chat_completions_web_search_is_a_parameter_and_citations_come_back(
    server: OpenAIServer, chat_client: OpenAIChatCompletionClient
):
    server.script(Reply(text="agentnb is a toolkit.", annotations=[CITATION]))
    tool = OpenAIChatCompletionClient.get_web_search_tool(web_search_options={"search_context_size": "low"})
    response = await chat_client.get_response("what is agentnb?", options={"tools": [tool]})
    (request,) = server.requests
    assert request.body["web_search_options"] == {"search_context_size": "low"}
    assert "tools" not in request.body
    (text,) = response.messages[0].contents
    assert text.annotations == [
        {
            "type": "citation",
            "title": "Docs <b>",
            "url": "https://docs.example/x",
            "annotated_regions": [{"type": "text_span", "start_index": 0, "end_index": 7}],
        }
    ]
