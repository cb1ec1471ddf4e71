"""Record real OpenAI traffic (through the loopback server) to a cassette, then replay it with no server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentnb import Agent, ChatResponse, Content, Message, tool
from agentnb.exceptions import CassetteError, CassetteMissError, ServiceResponseError
from agentnb.local import RecordingChatClient, ReplayChatClient, ScriptedChatClient
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient
from tests.openai_server import ErrorReply, OpenAIServer, Reply, ToolCall

SECRET_KEY = "sk-live-0123456789abcdefSECRET"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    server.reset()
    yield
    assert not server.problems(), server.problems()


@pytest.fixture
async def openai_client(server: OpenAIServer) -> AsyncIterator[OpenAIChatCompletionClient]:
    client = OpenAIChatCompletionClient("gpt-test", base_url=server.base_url, api_key=SECRET_KEY, max_retries=0)
    yield client
    await client.close()


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."


async def run(agent: Agent, text: str, *, stream: bool, **kwargs: Any) -> Any:
    if stream:
        result = agent.run(text, stream=True, **kwargs)
        async for _ in result:
            pass
        return await result.get_final_response()
    return await agent.run(text, **kwargs)


@pytest.mark.parametrize("stream", [False, True])
async def test_record_then_replay_a_tool_calling_turn_offline(
    tmp_path: Path, server: OpenAIServer, openai_client: OpenAIChatCompletionClient, stream: bool
):
    cassette = tmp_path / "weather.jsonl"
    server.script(
        Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"})]),
        Reply(text="It is sunny in Paris."),
    )
    recorder = RecordingChatClient(openai_client, cassette)
    recorded = await run(Agent(recorder, "Be brief.", tools=[get_weather]), "Weather in Paris?", stream=stream)
    assert recorded.text == "It is sunny in Paris."
    assert len(server.requests) == 2

    # Readable JSON Lines: a header, then one line per model call.
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert lines[0]["format"] == "agentnb-cassette" and lines[0]["model_id"] == "gpt-test"
    assert [line["stream"] for line in lines[1:]] == [stream, stream]
    if stream:
        assert len(lines[1]["updates"]) > 1  # recorded as the updates that streamed

    replay = ReplayChatClient(cassette)
    assert replay.model_id == "gpt-test"
    tool_calls: list[str] = []

    @tool(name="get_weather")
    def get_weather_again(city: str) -> str:
        """Return the weather for a city."""
        tool_calls.append(city)
        return f"Sunny in {city}."

    replayed = await run(Agent(replay, "Be brief.", tools=[get_weather_again]), "Weather in Paris?", stream=stream)
    assert replayed.text == recorded.text
    assert tool_calls == ["Paris"]  # the tool runs for real on replay; only the model is played back
    assert [[c.type for c in m.contents] for m in replayed.messages] == [
        [c.type for c in m.contents] for m in recorded.messages
    ]
    assert replayed.usage_details == recorded.usage_details
    assert len(server.requests) == 2  # replay never touched the server


async def test_streamed_recordings_serve_plain_calls_and_back(tmp_path: Path):
    cassette = tmp_path / "c.jsonl"
    recorder = RecordingChatClient(ScriptedChatClient(["streamed answer", "plain answer"]), cassette)
    stream = recorder.get_response("one", stream=True)
    async for _ in stream:
        pass
    await recorder.get_response("two")

    replay = ReplayChatClient(cassette)
    assert (await replay.get_response("one")).text == "streamed answer"
    pieces = [u.text async for u in replay.get_response("two", stream=True)]
    assert "".join(pieces) == "plain answer"


async def test_matching_ignores_ids_and_timestamps(tmp_path: Path):
    cassette = tmp_path / "ids.jsonl"
    history = [
        Message("user", ["hi"], message_id="m-1"),
        Message(
            "assistant", [Content.from_function_call("call_1", "get_weather", '{"city": "Rome"}')], message_id="r1"
        ),
        Message("tool", [Content.from_function_result("call_1", result="Sunny")]),
    ]
    await RecordingChatClient(ScriptedChatClient(["Sunny in Rome."]), cassette).get_response(history)

    other_ids = [
        Message("user", ["hi"], message_id="m-99"),
        # Same call, other id, arguments as a dict with other spacing: the same request in content.
        Message("assistant", [Content.from_function_call("call_X", "get_weather", {"city": "Rome"})], message_id="r9"),
        Message("tool", [Content.from_function_result("call_X", result="Sunny")]),
    ]
    assert (await ReplayChatClient(cassette).get_response(other_ids)).text == "Sunny in Rome."


async def test_a_missing_request_shows_the_nearest_recorded_one(tmp_path: Path):
    cassette = tmp_path / "miss.jsonl"
    recorder = RecordingChatClient(ScriptedChatClient(["Paris.", "Four."]), cassette)
    await recorder.get_response("What is the capital of France?")
    await recorder.get_response("What is 2+2?")

    with pytest.raises(CassetteMissError) as info:
        await ReplayChatClient(cassette).get_response("What is the capital of Spain?")
    error = info.value
    message = str(error)
    assert "no recording of this request" in message
    assert '-     "text": "What is the capital of France?"' in message
    assert '+     "text": "What is the capital of Spain?"' in message
    assert error.nearest["messages"][0]["contents"][0]["text"] == "What is the capital of France?"


async def test_options_are_part_of_the_match(tmp_path: Path):
    cassette = tmp_path / "opts.jsonl"
    await RecordingChatClient(ScriptedChatClient(["cold"]), cassette).get_response("t?", options={"temperature": 0})
    replay = ReplayChatClient(cassette)
    assert (await replay.get_response("t?", options={"temperature": 0})).text == "cold"
    with pytest.raises(CassetteMissError, match="temperature"):
        await replay.get_response("t?", options={"temperature": 1})


async def test_repeated_requests_replay_in_order_then_repeat_the_last(tmp_path: Path):
    cassette = tmp_path / "again.jsonl"
    recorder = RecordingChatClient(ScriptedChatClient(["first", "second"]), cassette)
    await recorder.get_response("roll a die")
    await recorder.get_response("roll a die")
    replay = ReplayChatClient(cassette)
    answers = [(await replay.get_response("roll a die")).text for _ in range(3)]
    assert answers == ["first", "second", "second"]


async def test_secrets_never_reach_the_cassette(tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef123456")
    cassette = tmp_path / "secret.jsonl"
    client = OpenAIChatCompletionClient("gpt-test", base_url=server.base_url, max_retries=0)
    server.script(Reply(text="Your key starts with sk-live-0123456789abcdefSECRET and tok-abcdef123456."))
    recorder = RecordingChatClient(client, cassette)
    server.extra_params.add("authorization")
    options = {"additional_properties": {"authorization": f"Bearer {SECRET_KEY}"}, "extra_headers": {"X-Api-Key": "k"}}
    await recorder.get_response(f"my key is {SECRET_KEY}", options=options)
    await client.close()
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET_KEY}"  # it did go to the server

    text = cassette.read_text()
    assert SECRET_KEY not in text
    assert "tok-abcdef123456" not in text
    assert '"X-Api-Key": "k"' not in text
    assert "[REDACTED]" in text
    # Redaction applies to live requests as well, so the recording still matches.
    replayed = await ReplayChatClient(cassette).get_response(f"my key is {SECRET_KEY}", options=options)
    assert "[REDACTED]" in replayed.text


class Answer(BaseModel):
    value: int


async def test_structured_output_and_responses_api_replay(tmp_path: Path, server: OpenAIServer):
    cassette = tmp_path / "structured.jsonl"
    client = OpenAIChatClient("gpt-test", base_url=server.base_url, max_retries=0)
    server.script(Reply(text='{"value": 4}'))
    recorded = await RecordingChatClient(client, cassette).get_response("2+2", options={"response_format": Answer})
    await client.close()
    assert recorded.value == Answer(value=4)
    replayed = await ReplayChatClient(cassette).get_response("2+2", options={"response_format": Answer})
    assert isinstance(replayed, ChatResponse) and replayed.value == Answer(value=4)
    assert replayed.response_id == recorded.response_id


async def test_failed_calls_are_not_recorded(tmp_path: Path, server: OpenAIServer):
    cassette = tmp_path / "fail.jsonl"
    client = OpenAIChatCompletionClient("gpt-test", base_url=server.base_url, max_retries=0)
    server.script(ErrorReply(500, "down", type="server_error"), ErrorReply(500, "down", type="server_error"))
    recorder = RecordingChatClient(client, cassette)
    with pytest.raises(ServiceResponseError):
        await recorder.get_response("x")
    with pytest.raises(ServiceResponseError):
        async for _ in recorder.get_response("x", stream=True):
            pass
    await client.close()
    assert not cassette.exists()


async def test_append_mode_keeps_earlier_recordings(tmp_path: Path):
    cassette = tmp_path / "append.jsonl"
    await RecordingChatClient(ScriptedChatClient(["a"]), cassette).get_response("1")
    await RecordingChatClient(ScriptedChatClient(["b"]), cassette, mode="append").get_response("2")
    replay = ReplayChatClient(cassette)
    assert [(await replay.get_response(q)).text for q in ("1", "2")] == ["a", "b"]
    await RecordingChatClient(ScriptedChatClient(["c"]), cassette).get_response("3")
    assert len(ReplayChatClient(cassette).interactions) == 1  # overwrite starts afresh


def test_missing_and_corrupt_cassettes_are_clear_errors(tmp_path: Path):
    with pytest.raises(CassetteError, match="record one first"):
        ReplayChatClient(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"format": "agentnb-cassette", "version": 1}\n{"request": {}, "stream": false, "response": {}}\nnot json\n'
    )
    with pytest.raises(CassetteError, match="line 3"):
        ReplayChatClient(bad)
    with pytest.raises(ValueError, match="mode"):
        RecordingChatClient(ScriptedChatClient(["x"]), tmp_path / "x.jsonl", mode="bogus")  # pyright: ignore[reportArgumentType]
