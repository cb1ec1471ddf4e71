"""Sampling: a server may use the user's model only with an approving callback, within limits."""

from __future__ import annotations

import logging

import mcp_types as types
import pytest

from agentnb import ChatResponse, Message
from agentnb.exceptions import MCPError
from agentnb.local import ScriptedChatClient
from agentnb.mcp import SamplingRequest
from agentnb.mcp._sampling import SamplingGate
from tests.mcp.mcp_helpers import HTTPServer, stdio_tool

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
        with pytest.raises(MCPError, match="No chat client available"):
            await server.call_tool("summarize", {"text": "x"})


def _params(**kwargs: object) -> types.CreateMessageRequestParams:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
    return types.CreateMessageRequestParams(messages=[message], max_tokens=kwargs.pop("max_tokens", 50), **kwargs)


async def test_gate_passes_temperature_and_stop_and_reports_truncation() -> None:
    model = ScriptedChatClient([ChatResponse(messages=[Message("assistant", ["cut"])], finish_reason="length")])
    gate = SamplingGate(server="s", approval_callback=lambda r: True, client=model, max_requests=5, max_tokens=20)
    result = await gate(None, _params(temperature=0.2, stop_sequences=["END"]))
    assert isinstance(result, types.CreateMessageResult)
    assert result.stop_reason == "maxTokens" and result.content.text == "cut"
    assert model.call_options[0] == {"max_tokens": 20, "temperature": 0.2, "stop": ["END"]}


async def test_gate_denies_when_the_callback_or_the_client_fails(caplog: pytest.LogCaptureFixture) -> None:
    def broken(request: SamplingRequest) -> bool:
        raise RuntimeError("boom")

    gate = SamplingGate(
        server="s", approval_callback=broken, client=ScriptedChatClient([]), max_requests=5, max_tokens=9
    )
    denied = await gate(None, _params())
    assert isinstance(denied, types.ErrorData) and "RuntimeError" in denied.message

    failing = SamplingGate(
        server="s",
        approval_callback=lambda r: True,
        client=ScriptedChatClient([RuntimeError("provider down")]),
        max_requests=5,
        max_tokens=9,
    )
    error = await failing(None, _params())
    assert isinstance(error, types.ErrorData) and error.code == types.INTERNAL_ERROR
    assert "provider down" not in error.message  # provider details stay on this side

    tools = SamplingGate(
        server="s", approval_callback=lambda r: True, client=ScriptedChatClient([]), max_requests=5, max_tokens=9
    )
    tool = types.Tool(name="t", input_schema={"type": "object"})
    assert isinstance(await tools(None, _params(tools=[tool])), types.ErrorData)


def test_gate_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="sampling_max_tokens"):
        SamplingGate(server="s", approval_callback=None, client=None, max_requests=1, max_tokens=0)
    with pytest.raises(ValueError, match="sampling_max_requests"):
        SamplingGate(server="s", approval_callback=None, client=None, max_requests=-1, max_tokens=5)
