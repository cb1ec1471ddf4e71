"""The packaged demo server (``python -m agentnb.mcp.demo_server``) that the README and docstrings use."""

from __future__ import annotations

import sys

from agentnb import Agent, Message
from agentnb.local import ToolCallingChatClient
from agentnb.mcp import MCPStdioTool


async def test_readme_flow_on_the_demo_server() -> None:
    demo = MCPStdioTool(
        "demo",
        sys.executable,
        args=["-m", "agentnb.mcp.demo_server"],
        allowed_tools=["add", "word_count"],
        approval_mode={"word_count"},
        request_timeout=30,
    )
    agent = Agent(ToolCallingChatClient(), tools=[demo])
    session = agent.create_session()
    async with demo:
        response = await agent.run("How many words, and what is 2 + 3?", session=session)
        [request] = response.user_input_requests
        assert request.function_call.name == "word_count"
        response = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
        [prompt] = await demo.get_prompt("review", {"topic": "MCP"})
        [about] = await demo.read_resource("demo://about")
        names = sorted(t.name for t in await demo.get_tools())
    assert "word_count: 1" in response.text
    assert prompt.text == "Write a three-sentence review of MCP."
    assert about.text == "The agentnb demo MCP server."
    assert names == ["add", "word_count"]
