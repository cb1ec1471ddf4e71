"""Sampling: a server may use the user's model only with an approving callback, within limits."""

from __future__ import annotations

import logging

import pytest
from mcp_helpers import HTTPServer, stdio_tool

from agentnb.exceptions import MCPError
from agentnb.local import ScriptedChatClient
from agentnb.mcp import SamplingRequest

# Most cases run over HTTP against one shared server process (each tool object is its own MCP session);
# the approved path runs over stdio too, so both transports carry sampling.


async def test_sampling_is_denied_without_a_callback_and_logged(
    http_server: HTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatClient([])  # would fail loudly if it were ever called
    caplog.set_level(logging.WARNING, logger="agentnb.mcp")
    async with http_server.tool("demo", allowed_tools=["summarize"], client=model) as server:
        with pytest.raises(MCPError, match="denied") as info:
            await server.call_tool("summarize", {"text": "secret quarterly numbers"})
    assert info.value.server == "demo"
    assert model.calls == []
    [record] = [r for r in caplog.records if "sampling" in r.getMessage()]
    assert "denied" in record.getMessage() and "'demo'" in record.getMessage()
    # Prompts stay out of logs.
    assert "secret quarterly numbers" not in caplog.text


async def test_declining_callback_denies(http_server: HTTPServer) -> None:
    seen: list[SamplingRequest] = []

    def decline(request: SamplingRequest) -> bool:
        seen.append(request)
        return False

    model = ScriptedChatClient([])
    async with http_server.tool(
        "demo", allowed_tools=["summarize"], client=model, sampling_approval_callback=decline
    ) as server:
        with pytest.raises(MCPError, match="declined"):
            await server.call_tool("summarize", {"text": "hello"})
    assert model.calls == []
    [request] = seen
    assert request.server == "demo"
    assert [(m.role, m.text) for m in request.messages] == [("system", "Be brief."), ("user", "Summarize: hello")]


async def test_approved_sampling_is_served_by_the_client_with_capped_tokens() -> None:
    model = ScriptedChatClient(["A short summary."], model_id="scripted-model")
    approvals: list[SamplingRequest] = []

    async def approve(request: SamplingRequest) -> bool:
        approvals.append(request)
        return True

    async with stdio_tool(
        allowed_tools=["summarize"], client=model, sampling_approval_callback=approve, sampling_max_tokens=100
    ) as server:
        answer = await server.call_tool("summarize", {"text": "a long report"})
    assert answer == "summary[scripted-model]: A short summary."
    [request] = approvals
    assert request.requested_max_tokens == 500 and request.max_tokens == 100
    [options] = model.call_options
    assert options["max_tokens"] == 100
    [messages] = model.calls
    assert [m.text for m in messages] == ["Be brief.", "Summarize: a long report"]


async def test_sampling_limit_per_session(http_server: HTTPServer) -> None:
    model = ScriptedChatClient(["one", "two"])
    async with http_server.tool(
        "demo",
        allowed_tools=["summarize"],
        client=model,
        sampling_approval_callback=lambda r: True,
        sampling_max_requests=1,
    ) as server:
        assert await server.call_tool("summarize", {"text": "x"}) == "summary[scripted]: one"
        with pytest.raises(MCPError, match="limit of 1"):
            await server.call_tool("summarize", {"text": "y"})
    assert len(model.calls) == 1


async def test_approval_without_a_client_is_denied(http_server: HTTPServer) -> None:
    async with http_server.tool(
        "demo", allowed_tools=["summarize"], sampling_approval_callback=lambda r: True
    ) as server:
        with pytest.raises(MCPError, match="no chat client"):
            await server.call_tool("summarize", {"text": "x"})
