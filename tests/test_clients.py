from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from agentnb import (
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationContext,
    Message,
    normalize_function_invocation_configuration,
    tool,
)
from agentnb.exceptions import ChatClientError, StructuredOutputError, UnknownToolError
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.openai._shared import function_result_text

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
    assert 'Requested function "nope" not found. Available tools: divide' in errors["c3"]
    assert "not valid JSON" in errors["c4"]
    assert response.text == "sorry"


async def test_max_iterations_ends_with_a_call_that_may_not_call_tools() -> None:
    @tool
    def again() -> str:
        return "more"

    seen: list[tuple[bool, object]] = []

    def model(messages, options):
        seen.append((bool(options.get("tools")), options.get("tool_choice")))
        if options.get("tool_choice") != "none":
            return [Content.from_function_call(f"c{len(seen)}", "again", "{}")]
        return "giving up"

    client = FunctionChatClient(model, max_iterations=3)
    response = await client.get_response("loop", tools=[again])
    # As in the reference, the last call keeps the tools declared and forbids calling them.
    assert seen == [(True, None), (True, None), (True, None), (True, "none")]
    assert response.text == "giving up"
    with pytest.raises(ValueError, match="max_iterations must be at least 1"):
        FunctionChatClient(model, max_iterations=0)


async def test_a_required_tool_choice_applies_to_the_first_model_call_only() -> None:
    @tool
    def lookup() -> str:
        return "found"

    choices: list[object] = []

    def model(messages, options):
        choices.append(options.get("tool_choice"))
        if len(choices) == 1:
            return [Content.from_function_call("c1", "lookup", "{}")]
        return "done"

    client = FunctionChatClient(model)
    response = await client.get_response("go", tools=[lookup], options={"tool_choice": "required"})
    assert choices == ["required", None]
    assert response.text == "done"


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
    bad = await ScriptedChatClient(['{"title": 1}']).get_response("x", options={"response_format": Movie})
    with pytest.raises(StructuredOutputError, match="Movie"):  # parsed when read, as in the reference
        _ = bad.value


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


async def test_a_task_cancelled_while_the_model_streams_closes_the_model_stream() -> None:
    waiting, closed = asyncio.Event(), asyncio.Event()

    async def model(messages, options):
        try:
            yield "a "
            waiting.set()
            await asyncio.sleep(3600)
            yield "never"
        finally:
            closed.set()

    stream = FunctionChatClient(model).get_response("x", stream=True)
    received: list[str] = []

    async def consume() -> None:
        async for update in stream:
            received.append(update.text)

    task = asyncio.create_task(consume())
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert received == ["a "] and closed.is_set()
    assert [u async for u in stream] == []  # the stream ended with the cancelled task


async def test_a_model_stream_failing_after_a_tool_round_streams_up_to_the_error() -> None:
    ran: list[str] = []

    @tool
    def lookup(key: str) -> str:
        ran.append(key)
        return "value"

    calls = [0]

    async def model(messages, options):
        calls[0] += 1
        if calls[0] == 1:
            yield ChatResponseUpdate(contents=[Content.from_function_call("c1", "lookup", '{"key": "k"}')])
            return
        yield "half "
        raise ConnectionError("stream cut")

    stream = FunctionChatClient(model).get_response("x", tools=[lookup], stream=True)
    received: list[list[str]] = []
    with pytest.raises(ConnectionError, match="stream cut"):
        async for update in stream:
            received.append([c.type for c in update.contents])
    # The call, its result (the tool ran once), then the second model call's text before it failed.
    assert received == [["function_call"], ["function_result"], ["text"]] and ran == ["k"]
    assert [[c.type for c in u.contents] for u in stream.updates] == received


# -- function_invocation_configuration ---------------------------------------------------------------------


def test_function_invocation_configuration_is_the_references_mutable_dict() -> None:
    client = ScriptedChatClient([])
    assert client.function_invocation_configuration == {
        "enabled": True,
        "max_iterations": 40,
        "max_function_calls": None,
        "max_consecutive_errors_per_request": 3,
        "terminate_on_unknown_calls": False,
        "additional_tools": [],
        "include_detailed_errors": False,
    }
    client.function_invocation_configuration["max_iterations"] = 7
    assert client.max_iterations == 7  # agentnb's attribute reads the same dict
    client.max_iterations = 9
    assert client.function_invocation_configuration["max_iterations"] == 9
    configured = ScriptedChatClient([], function_invocation_configuration={"max_function_calls": 2}, max_iterations=5)
    assert configured.function_invocation_configuration["max_function_calls"] == 2
    assert configured.function_invocation_configuration["max_iterations"] == 5
    for bad, match in [
        ({"max_iterations": 0}, "max_iterations must be at least 1"),
        ({"max_function_calls": 0}, "max_function_calls must be at least 1 or None"),
        ({"max_consecutive_errors_per_request": -1}, "must be 0 or more"),
        ({"max_iteration": 3}, "Unknown function invocation setting"),
    ]:
        with pytest.raises(ValueError, match=match):
            normalize_function_invocation_configuration(bad)  # type: ignore[arg-type]


def _tools_offered(seen: list[bool]):
    """A model that calls ``again`` whenever tools are offered (recording whether they were), else answers."""

    def model(messages, options):
        # Over budget the tools stay declared (as in the reference) but tool_choice "none" forbids calling them.
        seen.append(bool(options.get("tools")) and options.get("tool_choice") != "none")
        if seen[-1]:
            return [Content.from_function_call(f"c{len(seen)}", "again", "{}")]
        return "answer without tools"

    return model


@pytest.mark.parametrize("stream", [False, True])
async def test_disabled_loop_returns_the_calls_unexecuted(stream: bool) -> None:
    ran: list[str] = []

    @tool
    def again() -> str:
        ran.append("again")
        return "more"

    seen: list[bool] = []
    client = FunctionChatClient(_tools_offered(seen))
    client.function_invocation_configuration["enabled"] = False
    if stream:
        response = await client.get_response("go", tools=[again], stream=True).get_final_response()
    else:
        response = await client.get_response("go", tools=[again])
    assert seen == [True] and ran == []  # one model call, tools offered, nothing executed
    assert [(c.type, c.name) for c in response.messages[0].contents] == [("function_call", "again")]


@pytest.mark.parametrize("stream", [False, True])
async def test_max_function_calls_stops_tools_after_the_batch_that_reaches_it(stream: bool) -> None:
    ran: list[str] = []

    @tool
    def again() -> str:
        ran.append("again")
        return "more"

    seen: list[bool] = []
    client = FunctionChatClient(_tools_offered(seen), function_invocation_configuration={"max_function_calls": 2})
    if stream:
        response = await client.get_response("go", tools=[again], stream=True).get_final_response()
    else:
        response = await client.get_response("go", tools=[again])
    assert len(ran) == 2 and seen == [True, True, False]
    assert response.text == "answer without tools"


async def test_max_function_calls_and_max_iterations_say_so_when_the_model_gives_no_answer() -> None:
    @tool
    def again() -> str:
        return "more"

    def stubborn(messages, options):  # calls the tool even when none is offered
        return [Content.from_function_call(f"c{len(messages)}", "again", "{}")]

    client = FunctionChatClient(stubborn, function_invocation_configuration={"max_function_calls": 1})
    response = await client.get_response("go", tools=[again])
    assert response.text == "Function invocation limit reached before a final answer could be produced."
    assert len(results_of(response)) == 1  # the call made without tools did not run
    stream = FunctionChatClient(stubborn, max_iterations=1).get_response("go", tools=[again], stream=True)
    updates = [u async for u in stream]
    assert updates[-1].text == "Function invocation limit reached before a final answer could be produced."


@pytest.mark.parametrize(("limit", "model_calls_with_tools"), [(3, 3), (1, 1), (0, 1)])
async def test_consecutive_errors_stop_tools(limit: int, model_calls_with_tools: int) -> None:
    @tool
    def again() -> str:
        raise RuntimeError("backend down")

    seen: list[bool] = []
    client = FunctionChatClient(
        _tools_offered(seen), function_invocation_configuration={"max_consecutive_errors_per_request": limit}
    )
    response = await client.get_response("go", tools=[again])
    assert seen == [True] * model_calls_with_tools + [False]
    assert response.text == "answer without tools"


async def test_a_successful_batch_resets_the_consecutive_error_count() -> None:
    outcomes = iter([False, True, False, True, False])  # fail, ok, fail, ok, fail: never two in a row

    @tool
    def flaky() -> str:
        if not next(outcomes):
            raise RuntimeError("flaky")
        return "ok"

    script = [call("flaky", call_id=f"c{i}") for i in range(5)] + ["done"]
    client = ScriptedChatClient(script, function_invocation_configuration={"max_consecutive_errors_per_request": 2})
    response = await client.get_response("go", tools=[flaky])
    assert len(results_of(response)) == 5 and response.text == "done"


async def test_terminate_on_unknown_calls_raises_before_anything_runs() -> None:
    ran: list[str] = []

    @tool
    def known() -> str:
        ran.append("known")
        return "ok"

    script = [[call("known", call_id="a"), call("missing", call_id="b")], "done"]
    client = ScriptedChatClient(script, function_invocation_configuration={"terminate_on_unknown_calls": True})
    with pytest.raises(UnknownToolError, match=r"\['missing'\]") as raised:
        await client.get_response("go", tools=[known])
    assert isinstance(raised.value, KeyError) and ran == []
    # Without it the model hears of its mistake and the run goes on.
    response = await ScriptedChatClient(script).get_response("go", tools=[known])
    assert ran == ["known"] and 'Requested function "missing" not found' in (results_of(response)[1].exception or "")


async def test_additional_tools_run_but_are_not_offered() -> None:
    @tool
    def visible() -> str:
        return "v"

    @tool
    def hidden() -> str:
        return "h"

    offered: list[list[str]] = []

    def model(messages, options):
        offered.append([t.name for t in options.get("tools") or []])
        return "done" if messages[-1].role == "tool" else [Content.from_function_call("c1", "hidden", "{}")]

    client = FunctionChatClient(model, function_invocation_configuration={"additional_tools": [hidden]})
    response = await client.get_response("go", tools=[visible])
    assert offered == [["visible"], ["visible"]]
    assert results_of(response)[0].result == "h" and response.text == "done"


async def test_the_model_sees_a_tools_exception_only_with_include_detailed_errors() -> None:
    @tool
    def connect() -> str:
        raise ConnectionError("postgres://admin:hunter2@db.internal/prod refused")

    @tool
    def add(a: int) -> int:
        return a

    script = [[call("connect", call_id="c1"), call("add", call_id="c2", a="x")], "sorry"]
    client = ScriptedChatClient(list(script))
    response = await client.get_response("go", tools=[connect, add])
    failed, invalid = results_of(response)
    assert failed.result == "Error: tool 'connect' failed."  # what the model is sent
    assert "hunter2" in (failed.exception or "")  # the caller keeps the detail
    assert function_result_text(failed) == "Error: tool 'connect' failed."
    # The model's invalid arguments: the reference's words, then what to fix (names and rules, never values).
    assert (invalid.result or "").startswith("Error: Argument parsing failed. Invalid arguments for tool 'add': a:")
    assert "Exception:" not in (invalid.result or "") and invalid.result == function_result_text(invalid)

    detailed = ScriptedChatClient(list(script), function_invocation_configuration={"include_detailed_errors": True})
    failed, invalid = results_of(await detailed.get_response("go", tools=[connect, add]))
    assert (invalid.result or "").startswith("Error: Argument parsing failed. Exception: Invalid arguments")
    # Told as the reference words it: "... failed. Exception: <the error>", the detail kept in ``exception``.
    assert "failed. Exception: ConnectionError" in (failed.result or "") == function_result_text(failed)
    assert "hunter2" in (failed.result or "") and "hunter2" in (failed.exception or "")


async def test_a_hosted_tools_approval_is_the_providers_to_settle() -> None:
    """An approval request for a tool the provider runs (its call names a server) reaches the caller, and the
    answer goes back to the model call as it is: nothing runs locally, even for a local tool of that name."""
    ran: list[str] = []

    @tool
    def search(query: str) -> str:
        ran.append(query)
        return "local"

    hosted_call = Content.from_function_call(
        "mcpr_1", "search", '{"query": "x"}', additional_properties={"server_label": "docs"}
    )
    request = Content.from_function_approval_request("mcpr_1", hosted_call)
    seen: list[list[str]] = []

    def model(messages: list[Message], options: dict[str, object]) -> object:
        seen.append([c.type for m in messages for c in m.contents])
        return [request] if len(seen) == 1 else "searched"

    client = FunctionChatClient(model)
    first = await client.get_response("find x", tools=[search])
    assert first.user_input_requests == [request]
    answer = request.to_function_approval_response(True)
    messages = [Message("user", ["find x"]), *first.messages, Message("user", [answer])]
    second = await client.get_response(messages, tools=[search])
    assert second.text == "searched" and ran == []
    assert seen[1] == ["text", "function_approval_request", "function_approval_response"]
