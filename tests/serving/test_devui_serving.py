"""The DevUI serves its entities over the Responses API, A2A and MCP too, on a second port behind its token."""

from __future__ import annotations

import httpx
import openai
import pytest

from agentnb import Agent
from agentnb.a2a import A2AAgent
from agentnb.devui import DevUI, serve, serving_url, stop
from agentnb.devui._discovery import discover
from agentnb.local import ScriptedChatClient
from agentnb.mcp import MCPStreamableHTTPTool
from agentnb.store import RunStore


async def test_devui_with_protocols_serves_the_same_agent_on_a_second_port() -> None:
    agent = Agent(ScriptedChatClient(["from the devui api", "over a2a", "over mcp"]), name="Helper")
    url = serve(entities=[agent], store=RunStore(":memory:"), token="tok", protocols=True)
    try:
        served = serving_url(url)
        assert served is not None
        assert served != url
        assert served.startswith("http://127.0.0.1:")
        headers = {"Authorization": "Bearer tok"}
        async with httpx.AsyncClient() as http:
            assert (await http.get(served)).status_code == 401  # the DevUI's token guards this port too
            index = (await http.get(served, headers=headers)).json()
        (entity,) = index["entities"]
        async with openai.AsyncOpenAI(base_url=url + "v1", api_key="tok") as client:  # the DevUI's own /v1
            assert (await client.responses.create(model="Helper", input="hi")).output_text == "from the devui api"
        async with A2AAgent(url=entity["a2a"], headers=headers) as remote:
            assert (await remote.run("hi")).text == "over a2a"
        async with MCPStreamableHTTPTool("helper", entity["mcp"], headers=headers) as tool:
            (served_tool,) = await tool.get_tools()
            assert await served_tool.invoke(arguments={"task": "hi"}, skip_parsing=True) == "over mcp"
    finally:
        assert stop(url) == 1
    assert serving_url(url) is None
    with pytest.raises(httpx.TransportError):
        httpx.get(served, timeout=2)


def test_the_header_links_to_the_served_protocols_escaped() -> None:
    agent = Agent(ScriptedChatClient([]), name="Helper")
    app = DevUI(discover([agent], env=False), store=RunStore(":memory:"), serving_url="http://127.0.0.1:9/<x>")
    html = app._header_html()  # pyright: ignore[reportPrivateUsage]
    assert "href='http://127.0.0.1:9/&lt;x&gt;/'" in html
    assert "<x>" not in html
    assert "/mcp/&lt;id&gt;" in html
    assert "served at" not in DevUI(discover([agent], env=False), store=RunStore(":memory:"))._header_html()  # pyright: ignore[reportPrivateUsage]
