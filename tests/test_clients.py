from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from agentnb import BaseChatClient, ChatResponse, Content, FunctionInvocationContext, Message, tool
from agentnb.exceptions import ChatClientError, StructuredOutputError
from agentnb.local import FunctionChatClient, ScriptedChatClient

call = ScriptedChatClient.call


def results_of(response: ChatResponse) -> list[Content]:
    return [c for m in response.messages for c in m.contents if c.type == "function_result"]


class EchoClient(BaseChatClient):
    async def _inner_get_response(self, *, messages, options, **kwargs):
        return ChatResponse(messages=[Message("assistant", [f"echo: {messages[-1].text}"])])


async def test_a_minimal_provider_needs_only_inner_get_response() -> None:
    client = EchoClient()
    assert (await client.get_response("hi")).text == "echo: hi"
    stream = client.get_response([Message("user", ["yo"])], stream=True)
    assert [u.text async for u in stream if u.text] == ["echo: yo"]
    assert (await stream.get_final_response()).text == "echo: yo"


async def test_tool_round_trip_and_usage_summed_across_model_calls() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    client = ScriptedChatClient([call("add", call_id="c1", a=2, b=3), "5"])
    response = await client.get_response("2+3?", tools=[add])
    assert response.text == "5"
    assert [m.role for m in response.messages] == ["assistant", "tool", "assistant"]
    assert results_of(response)[0].result == 5
    # The second model call saw the tool result.
    assert client.calls[1][-1].contents[0].type == "function_result"
    # Usage is summed over both model calls (the offline model counts one token per word).
    # call 1: in "2+3?" (1), out the call (1 + 4 argument words); call 2: in 1 + 5 + result (1), out "5" (1).
    assert response.usage_details["input_token_count"] == 1 + 7
    assert response.usage_details["output_token_count"] == 5 + 1


async def test_parallel_calls_run_concurrently_and_results_keep_call_order() -> None:
    started: list[str] = []
    both_started = asyncio.Event()

    @tool
    async def slow(name: str) -> str:
        started.append(name)
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 2)  # deadlocks unless both run at once
        await asyncio.sleep(0.01 if name == "first" else 0)
        return name

    client = ScriptedChatClient(
        [[call("slow", call_id="c1", name="first"), call("slow", call_id="c2", name="second")], "done"]
    )
    response = await client.get_response("go", tools=[slow])
    assert [(r.call_id, r.result) for r in results_of(response)] == [("c1", "first"), ("c2", "second")]


async def test_tool_errors_go_back_to_the_model_and_the_run_continues() -> None:
    @tool
    def divide(a: int, b: int) -> float:
        return a / b

    client = ScriptedChatClient(
        [
            [
                call("divide", call_id="c1", a=1, b=0),
                call("divide", call_id="c2", a="x", b=1),
                call("nope", call_id="c3"),
                Content.from_function_call("c4", "divide", "{not json"),
            ],
            "sorry",
        ]
    )
    response = await client.get_response("divide", tools=[divide])
    errors = {r.call_id: r.exception for r in results_of(response)}
    assert "ZeroDivisionError" in errors["c1"]
    assert "Invalid arguments for tool 'divide': a:" in errors["c2"]
    assert "there is no tool named 'nope'. Available tools: divide" in errors["c3"]
    assert "not valid JSON" in errors["c4"]
    assert response.text == "sorry"


async def test_max_iterations_ends_with_a_call_without_tools() -> None:
    @tool
    def again() -> str:
        return "more"

    seen_tools: list[bool] = []

    def model(messages, options):
        seen_tools.append(bool(options.get("tools")))
        if options.get("tools"):
            return [Content.from_function_call(f"c{len(seen_tools)}", "again", "{}")]
        return "giving up"

    client = FunctionChatClient(model, max_iterations=3)
    response = await client.get_response("loop", tools=[again])
    assert seen_tools == [True, True, True, False]
    assert response.text == "giving up"
    with pytest.raises(ValueError, match="max_iterations must be >= 1"):
        FunctionChatClient(model, max_iterations=0)


async def test_max_invocations_reaches_the_model_as_an_error() -> None:
    @tool(max_invocations=1)
    def once() -> str:
        return "ok"

    client = ScriptedChatClient([call("once", call_id="a"), call("once", call_id="b"), "fine"])
    response = await client.get_response("x", tools=[once])
    results = results_of(response)
    assert results[0].result == "ok"
    assert "limit of 1 invocation" in results[1].exception


async def test_streaming_and_non_streaming_produce_the_same_response() -> None:
    @tool
    def weather(city: str) -> str:
        return f"Sunny in {city}"

    script = [call("weather", call_id="c1", city="Paris"), "It is sunny in Paris today."]
    plain = await ScriptedChatClient(script).get_response("weather?", tools=[weather])
    stream = ScriptedChatClient(script).get_response("weather?", tools=[weather], stream=True)
    updates = [u async for u in stream]
    streamed = await stream.get_final_response()
    assert [m.to_dict() for m in streamed.messages] == [m.to_dict() for m in plain.messages]
    assert streamed.usage_details == plain.usage_details
    assert "".join(u.text for u in updates) == "It is sunny in Paris today."
    assert any(c.type == "function_result" for u in updates for c in u.contents)  # tool results stream too


class Movie(BaseModel):
    title: str
    year: int


async def test_structured_output() -> None:
    client = ScriptedChatClient([Movie(title="Alien", year=1979)])
    response = await client.get_response("a movie", options={"response_format": Movie})
    assert response.value == Movie(title="Alien", year=1979)
    with pytest.raises(StructuredOutputError, match="Movie"):
        await ScriptedChatClient(['{"title": 1}']).get_response("x", options={"response_format": Movie})


async def test_instructions_become_a_leading_system_message_and_options_reach_the_provider() -> None:
    client = ScriptedChatClient(["ok"])
    await client.get_response("hi", options={"instructions": "Be brief.", "temperature": 0.1})
    assert [m.role for m in client.calls[0]] == ["system", "user"]
    assert client.calls[0][0].text == "Be brief."
    assert client.call_options[0]["temperature"] == 0.1
    assert "instructions" not in client.call_options[0]


async def test_tools_can_change_the_tool_list_for_the_next_iteration() -> None:
    @tool
    def unlock(context: FunctionInvocationContext) -> str:
        context.add_tools(secret)
        return "unlocked"

    @tool
    def secret() -> str:
        return "42"

    names: list[list[str]] = []

    def model(messages, options):
        names.append([t.name for t in options.get("tools", [])])
        if len(names) == 1:
            return [Content.from_function_call("c1", "unlock", "{}")]
        return "done"

    await FunctionChatClient(model).get_response("x", tools=[unlock])
    assert names == [["unlock"], ["unlock", "secret"]]


async def test_scripted_client_fails_loudly_when_the_script_runs_out() -> None:
    client = ScriptedChatClient(["only one"])
    await client.get_response("a")
    with pytest.raises(ChatClientError, match="no reply for model call #2"):
        await client.get_response("b")
    client.assert_all_used()
    with pytest.raises(AssertionError, match="1 scripted reply unused"):
        ScriptedChatClient(["x"]).assert_all_used()


async def test_provider_errors_propagate_unchanged() -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        await ScriptedChatClient([Boom("provider down")]).get_response("x")


async def test_a_provider_returning_the_wrong_type_gets_a_clear_error() -> None:
    class Broken(BaseChatClient):
        async def _inner_get_response(self, *, messages, options, **kwargs):
            return "not a response"

    with pytest.raises(TypeError, match="must return a ChatResponse"):
        await Broken().get_response("x")


async def test_cancelling_a_stream_closes_the_provider_stream() -> None:
    closed = asyncio.Event()

    async def model(messages, options):
        try:
            for i in range(1000):
                yield f"{i} "
                await asyncio.sleep(0)
        finally:
            closed.set()

    stream = FunctionChatClient(model).get_response("x", stream=True)
    async for update in stream:
        if update.text == "3 ":
            break
    await stream.aclose()
    assert closed.is_set()
