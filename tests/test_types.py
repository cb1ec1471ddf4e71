from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from agentnb import (
    AgentResponse,
    AgentResponseUpdate,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
)
from agentnb._types import (
    StreamSplice,
    add_usage_details,
    call_arguments,
    normalize_messages,
    relabel_chat_update,
    request_response,
)
from agentnb.exceptions import StructuredOutputError

texts = st.text(max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def _call() -> st.SearchStrategy[Content]:
    return st.builds(
        Content.from_function_call,
        st.text(min_size=1, max_size=8),
        st.text(min_size=1, max_size=8),
        arguments=st.one_of(st.none(), st.text(max_size=20), st.dictionaries(st.text(max_size=5), json_values)),
    )


contents = st.one_of(
    st.builds(Content.from_text, texts),
    st.builds(Content.from_reasoning, texts),
    st.builds(Content.from_data, st.binary(max_size=32), st.sampled_from(["image/png", "application/pdf"])),
    st.builds(Content.from_uri, st.just("https://example.com/cat.png"), media_type=st.just("image/png")),
    _call(),
    st.builds(
        Content.from_function_result,
        st.text(min_size=1, max_size=8),
        result=json_values,
        exception=st.one_of(st.none(), texts),
    ),
    st.builds(Content.from_function_approval_request, st.text(min_size=1, max_size=8), _call()),
    st.builds(
        Content.from_function_approval_response,
        st.text(min_size=1, max_size=8),
        st.booleans(),
        _call(),
        reason=st.one_of(st.none(), texts),
    ),
    st.builds(
        Content.from_usage,
        st.fixed_dictionaries(
            {"input_token_count": st.integers(0, 10**6), "output_token_count": st.integers(0, 10**6)}
        ),
    ),
    st.builds(Content.from_error, texts, error_code=st.one_of(st.none(), texts)),
)
messages = st.builds(
    Message,
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.lists(contents, max_size=4),
    author_name=st.one_of(st.none(), texts),
    message_id=st.one_of(st.none(), texts),
    additional_properties=st.one_of(st.none(), st.dictionaries(st.text(min_size=1, max_size=5), json_values)),
)


@given(contents)
def test_content_round_trips_through_json(content: Content) -> None:
    restored = Content.from_dict(json.loads(json.dumps(content.to_dict())))
    assert restored == content
    assert restored.type == content.type


@given(messages)
def test_message_round_trips_through_json(message: Message) -> None:
    restored = Message.from_dict(json.loads(json.dumps(message.to_dict())))
    assert restored == message
    assert restored.text == message.text


@given(st.lists(messages, max_size=4), st.one_of(st.none(), texts))
def test_responses_round_trip_through_json(msgs: list[Message], response_id: str | None) -> None:
    chat = ChatResponse(messages=msgs, response_id=response_id, usage_details={"input_token_count": 3}, value=[1, 2])
    restored = ChatResponse.from_dict(json.loads(json.dumps(chat.to_dict())))
    assert restored.messages == chat.messages
    assert restored.response_id == response_id
    assert restored.usage_details == {"input_token_count": 3}
    assert restored.value == [1, 2]
    agent = AgentResponse(messages=msgs, agent_id="a1", finish_reason="stop")
    restored_agent = AgentResponse.from_dict(json.loads(json.dumps(agent.to_dict())))
    assert restored_agent.messages == agent.messages
    assert restored_agent.agent_id == "a1"
    assert restored_agent.finish_reason == "stop"


def test_message_accepts_plain_strings_and_any_named_role() -> None:
    msg = Message("user", ["Hello", Content.from_text("world")])
    assert msg.text == "Hello world"  # a message's text contents are joined by a space, as in the reference
    assert Message("user", "hi").contents[0].type == "text"
    assert Message("developer", ["Be brief."]).role == "developer"  # provider roles pass through
    with pytest.raises(ValueError, match="non-empty string"):
        Message("", ["x"])
    with pytest.raises(TypeError, match="must be str or Content"):
        Message("user", [42])  # type: ignore[list-item]


def test_text_is_primary_text_only() -> None:
    response = ChatResponse(
        messages=[
            Message("assistant", [Content.from_reasoning("thinking..."), Content.from_function_call("c1", "f", "{}")]),
            Message("tool", [Content.from_function_result("c1", result="tool output")]),
            Message("assistant", ["The answer."]),
        ]
    )
    assert response.text == "The answer."


def test_function_call_arguments_parse_on_demand() -> None:
    assert Content.from_function_call("c", "f", '{"a": 1}').parse_arguments() == {"a": 1}
    assert Content.from_function_call("c", "f", {"a": 2}).parse_arguments() == {"a": 2}
    # As in the reference: no arguments give None, text that is not a JSON object is kept under "raw".
    assert Content.from_function_call("c", "f").parse_arguments() is None
    assert Content.from_function_call("c", "f", "{oops").parse_arguments() == {"raw": "{oops"}
    assert Content.from_function_call("c", "f", "[1]").parse_arguments() == {"raw": [1]}


def test_call_arguments_refuses_what_cannot_be_run() -> None:
    assert call_arguments(Content.from_function_call("c", "f")) == {}
    assert call_arguments(Content.from_function_call("c", "f", '{"a": 1}')) == {"a": 1}
    with pytest.raises(ValueError, match="not valid JSON"):
        call_arguments(Content.from_function_call("c", "f", "{oops"))
    with pytest.raises(ValueError, match="must be a JSON object"):
        call_arguments(Content.from_function_call("c", "f", "[1]"))


def test_data_uri_becomes_data_content() -> None:
    content = Content.from_uri("data:image/png;base64,aGVsbG8=")
    assert content.type == "data"
    assert content.data == b"hello"
    assert content.media_type == "image/png"
    assert content.uri_or_data_uri == "data:image/png;base64,aGVsbG8="


def test_a_content_type_agentnb_does_not_know_round_trips() -> None:
    # As in the reference: a provider's newer content types are kept, not refused.
    video = Content("video", file_id="v1")  # type: ignore[arg-type]
    assert Content.from_dict(video.to_dict()) == video
    with pytest.raises(ValueError, match="non-empty string"):
        Content("")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a 'type'"):
        Content.from_dict({"text": "no type"})


def test_from_updates_coalesces_text_and_argument_deltas_and_sums_usage() -> None:
    updates = [
        ChatResponseUpdate(contents=[Content.from_text("Hel")], message_id="m1", response_id="r1"),
        ChatResponseUpdate(contents=[Content.from_text("lo")], message_id="m1"),
        ChatResponseUpdate(contents=[Content.from_function_call("c1", "f", '{"a"')], message_id="m1"),
        ChatResponseUpdate(contents=[Content.from_function_call("", "", ": 1}")], message_id="m1"),
        ChatResponseUpdate(contents=[Content.from_function_call("c2", "g", "{}")], message_id="m1"),
        ChatResponseUpdate(contents=[Content.from_usage({"input_token_count": 2, "output_token_count": 3})]),
        ChatResponseUpdate(
            contents=[Content.from_usage({"input_token_count": 1, "output_token_count": 1})],
            role=None,
            finish_reason="tool_calls",
        ),
    ]
    response = ChatResponse.from_updates(updates)
    assert len(response.messages) == 1
    kinds = [(c.type, c.text or c.arguments) for c in response.messages[0].contents]
    assert kinds == [("text", "Hello"), ("function_call", '{"a": 1}'), ("function_call", "{}")]
    assert response.usage_details == {"input_token_count": 3, "output_token_count": 4}
    assert response.finish_reason == "tool_calls"
    assert response.response_id == "r1"


def test_to_updates_and_back_preserves_the_response() -> None:
    original = ChatResponse(
        messages=[Message("assistant", ["Hi", Content.from_function_call("c", "f", "{}")], message_id="m")],
        response_id="r",
        model_id="m1",
        finish_reason="stop",
        usage_details={"input_token_count": 1, "output_token_count": 2, "total_token_count": 3},
    )
    rebuilt = ChatResponse.from_updates(original.to_updates())
    assert rebuilt.messages == original.messages
    assert rebuilt.usage_details == original.usage_details
    assert (rebuilt.response_id, rebuilt.model_id, rebuilt.finish_reason) == ("r", "m1", "stop")


def test_agent_updates_assemble_by_role_and_author() -> None:
    updates = [
        AgentResponseUpdate(contents=["a"], author_name="x"),
        AgentResponseUpdate(contents=["b"], author_name="x"),
        AgentResponseUpdate(contents=["c"], author_name="y"),
    ]
    response = AgentResponse.from_updates(updates)
    assert [(m.author_name, m.text) for m in response.messages] == [("x", "ab"), ("y", "c")]


class Movie(BaseModel):
    title: str
    year: int


def test_structured_value_validates_and_errors_name_the_schema() -> None:
    ok = ChatResponse(text='{"title": "Alien", "year": 1979}', response_format=Movie)
    assert ok.value == Movie(title="Alien", year=1979)
    bad = ChatResponse(text='{"title": "Alien"}', response_format=Movie)
    with pytest.raises(StructuredOutputError, match="Movie") as info:
        _ = bad.value
    assert info.value.schema_name == "Movie"
    assert info.value.text == '{"title": "Alien"}'


def test_user_input_requests_lists_only_unanswered_requests() -> None:
    call = Content.from_function_call("c1", "f", "{}")
    req1 = Content.from_function_approval_request("r1", call)
    req2 = Content.from_function_approval_request("r2", Content.from_function_call("c2", "g", "{}"))
    response = AgentResponse(
        messages=[Message("assistant", [call, req1, req2]), Message("user", [req1.to_function_approval_response(True)])]
    )
    assert [r.id for r in response.user_input_requests] == ["r2"]
    with pytest.raises(ValueError, match="Only a function_approval_request"):
        call.to_function_approval_response(True)


def test_usage_details_add_key_by_key() -> None:
    total = add_usage_details({"input_token_count": 1, "cached": 2}, {"input_token_count": 4, "output_token_count": 1})
    assert total == {"input_token_count": 5, "cached": 2, "output_token_count": 1}
    assert add_usage_details(None, None) is None


def test_normalize_messages_accepts_the_documented_shapes() -> None:
    assert normalize_messages(None) == []
    assert [m.text for m in normalize_messages(["a", Content.from_text("b"), Message("assistant", ["c"])])] == [
        "a",
        "b",
        "c",
    ]
    with pytest.raises(TypeError, match="Cannot use a int as a message"):
        normalize_messages([1])  # type: ignore[list-item]


async def test_response_stream_iterates_once_and_finalizes_without_rerunning() -> None:
    produced: list[int] = []

    async def source():
        for i in range(3):
            produced.append(i)
            yield ChatResponseUpdate(contents=[str(i)])

    stream = ResponseStream(source(), ChatResponse.from_updates)
    seen = [u.text async for u in stream]
    assert seen == ["0", "1", "2"]
    final = await stream.get_final_response()
    assert final.text == "012"
    assert await stream == final  # awaiting again returns the same object
    assert produced == [0, 1, 2]


async def test_response_stream_final_response_drains_unread_updates() -> None:
    async def source():
        yield ChatResponseUpdate(contents=["x"])
        yield ChatResponseUpdate(contents=["y"])

    stream = ResponseStream(source(), ChatResponse.from_updates)
    assert (await stream.get_final_response()).text == "xy"


def test_messages_responses_and_updates_round_trip_through_json() -> None:
    from agentnb import AgentResponseUpdate, ChatResponseUpdate
    from agentnb import _serialization as ser

    message = Message("assistant", ["Hi"], author_name="writer", message_id="m1")
    assert Message.from_json(message.to_json()) == message
    response = AgentResponse(messages=[message], response_id="r1", agent_id="a1")
    back = AgentResponse.from_json(response.to_json(indent=2))
    assert (type(back), back.text, back.response_id) == (AgentResponse, "Hi", "r1")
    assert ChatResponse.from_json(ChatResponse(text="ok").to_json()).text == "ok"
    update = AgentResponseUpdate(text="Hel", author_name="writer", agent_id="a1", response_id="r1")
    again = AgentResponseUpdate.from_json(update.to_json())
    assert (again.text, again.author_name, again.agent_id, again.response_id) == ("Hel", "writer", "a1", "r1")
    tail = ChatResponseUpdate(contents=[], role=None, finish_reason="stop")
    assert ChatResponseUpdate.from_dict(tail.to_dict()).role is None
    # Updates travel in checkpoints and the run store under stable type ids.
    assert '"agentnb.AgentResponseUpdate"' in ser.dumps(update)
    assert ser.loads(ser.dumps(update)).text == "Hel"
    with pytest.raises(ValueError, match="needs a JSON object"):
        Message.from_json("[1]")


async def _letters(text: str = "abc"):
    for letter in text:
        yield ChatResponseUpdate(contents=[letter])


async def test_response_stream_hooks_run_in_the_references_order() -> None:
    log: list[str] = []

    def upper(update: ChatResponseUpdate) -> ChatResponseUpdate:
        log.append(f"transform {update.text}")
        return ChatResponseUpdate(contents=[update.text.upper()])

    async def cleanup() -> None:
        log.append("cleanup")

    def finalize(updates: list[ChatResponseUpdate]) -> ChatResponse:
        log.append("finalize")
        return ChatResponse.from_updates(updates)

    def keep(response: ChatResponse) -> None:  # None keeps the result
        log.append("keep")

    async def quote(response: ChatResponse) -> ChatResponse:
        log.append("quote")
        return ChatResponse(text=f'"{response.text}"')

    stream = ResponseStream(_letters(), finalizer=finalize, transform_hooks=[upper], cleanup_hooks=[cleanup])
    stream.with_result_hook(keep).with_result_hook(quote)
    assert [u.text async for u in stream] == ["A", "B", "C"]
    # Exhausting the stream finalized it: cleanup first, then the finalizer (on the updates as they came).
    assert log == ["transform a", "transform b", "transform c", "cleanup", "finalize", "keep", "quote"]
    assert [u.text for u in stream.updates] == ["a", "b", "c"]
    final = await stream.get_final_response()
    assert final.text == '"abc"' and log.count("finalize") == 1
    # A result hook added later makes the final again.
    stream.with_result_hook(lambda r: ChatResponse(text=r.text + "!"))
    assert (await stream.get_final_response()).text == '"abc"!'


async def test_response_stream_cleanup_runs_once_however_the_stream_ends() -> None:
    async def failing():
        yield ChatResponseUpdate(contents=["x"])
        raise RuntimeError("provider hung up")

    cleaned: list[str] = []
    stream = ResponseStream(failing(), ChatResponse.from_updates).with_cleanup_hook(lambda: cleaned.append("failed"))
    with pytest.raises(RuntimeError, match="hung up"):
        async for _ in stream:
            pass
    closed = ResponseStream(_letters(), ChatResponse.from_updates).with_cleanup_hook(lambda: cleaned.append("closed"))
    await anext(closed)
    await closed.aclose()
    await closed.aclose()
    assert cleaned == ["failed", "closed"]


async def test_map_flat_map_and_with_finalizer_consume_the_inner_stream_once() -> None:
    order: list[str] = []
    inner = ResponseStream(_letters(), ChatResponse.from_updates).with_result_hook(lambda r: order.append("inner"))
    mapped = inner.map(lambda u: ChatResponseUpdate(contents=[u.text * 2]), ChatResponse.from_updates)
    mapped.with_result_hook(lambda r: order.append("outer"))
    assert (await mapped.get_final_response()).text == "aabbcc"  # finalizing drains through the inner stream
    assert order == ["inner", "outer"] and (await inner.get_final_response()).text == "abc"

    async def twice(update: ChatResponseUpdate) -> list[ChatResponseUpdate]:
        return [update, update] if update.text != "b" else []

    doubled = ResponseStream(_letters()).flat_map(twice, ChatResponse.from_updates)
    assert [u.text async for u in doubled] == ["a", "a", "c", "c"]
    renamed = ResponseStream(_letters(), ChatResponse.from_updates).with_finalizer(lambda ups: len(ups))
    assert await renamed.get_final_response() == 3
    plain = ResponseStream(_letters())
    assert [u.text for u in await plain.get_final_response()] == ["a", "b", "c"]  # no finalizer: the updates


async def test_layered_streams_each_map_record_finalize_and_clean_up_in_order() -> None:
    order: list[str] = []
    inner = ResponseStream(_letters(), ChatResponse.from_updates)
    inner.with_cleanup_hook(lambda: order.append("inner cleanup")).with_result_hook(lambda r: order.append("inner"))

    async def shout(update: ChatResponseUpdate) -> ChatResponseUpdate:
        return ChatResponseUpdate(contents=[update.text.upper()])

    middle = inner.map(lambda u: ChatResponseUpdate(contents=[u.text * 2]), ChatResponse.from_updates)
    middle.with_result_hook(lambda r: order.append("middle"))
    outer = middle.map(shout, ChatResponse.from_updates).with_result_hook(lambda r: order.append("outer"))
    assert [u.text async for u in outer] == ["AA", "BB", "CC"]
    # Every layer saw its own updates and finalized once, innermost first, as each consumed the one under it.
    assert [u.text for u in inner.updates] == ["a", "b", "c"]
    assert [u.text for u in middle.updates] == ["aa", "bb", "cc"]
    assert order == ["inner cleanup", "inner", "middle", "outer"]
    assert ((await inner.get_final_response()).text, (await outer.get_final_response()).text) == ("abc", "AABBCC")

    closed: list[str] = []
    first = ResponseStream(_letters(), ChatResponse.from_updates).with_cleanup_hook(lambda: closed.append("inner"))
    second = ResponseStream.from_awaitable(_resolved(first.map(lambda u: u, ChatResponse.from_updates)))
    assert (await anext(second)).text == "a"
    await second.aclose()  # closing the outermost stream closes every layer under it
    assert closed == ["inner"]
    assert [u async for u in first] == [] and [u async for u in second] == []


async def _resolved(
    stream: ResponseStream[ChatResponseUpdate, ChatResponse],
) -> ResponseStream[ChatResponseUpdate, ChatResponse]:
    return stream


async def test_a_spliced_stream_is_iterated_in_place_of_the_source_that_yielded_it() -> None:
    order: list[str] = []
    for hooked in (False, True):  # fused into the consuming stream, or iterated as it is (a transform hook)
        order.clear()
        inner = ResponseStream(_letters("bc"), ChatResponse.from_updates)
        inner.with_cleanup_hook(lambda: order.append("inner cleanup"))
        inner.with_result_hook(lambda r: order.append(f"inner final {r.text}"))
        if hooked:
            inner.with_transform_hook(lambda u: order.append(f"hook {u.text}"))
        checked = inner.map(lambda u: ChatResponseUpdate(contents=[u.text.upper()]), ChatResponse.from_updates)

        async def source(checked: ResponseStream[ChatResponseUpdate, ChatResponse]):
            yield ChatResponseUpdate(contents=["a"])
            yield StreamSplice(checked)
            # Back here only once the spliced stream ended and finalized, innermost layer first.
            order.append(f"source resumed after {(await checked.get_final_response()).text}")
            yield ChatResponseUpdate(contents=["d"])

        chat = ResponseStream(source(checked), ChatResponse.from_updates)
        agent = chat.map(lambda u: ChatResponseUpdate(contents=[u.text + "!"]), ChatResponse.from_updates)
        assert [u.text async for u in agent] == ["a!", "B!", "C!", "d!"]
        assert [u.text for u in chat.updates] == ["a", "B", "C", "d"]
        assert [u.text for u in inner.updates] == ["b", "c"] and [u.text for u in checked.updates] == ["B", "C"]
        hooks = ["hook b", "hook c"] if hooked else []
        assert order == [*hooks, "inner cleanup", "inner final bc", "source resumed after BC"]
        assert (await agent.get_final_response()).text == "a!B!C!d!"

    # A consuming stream with hooks of its own (its slow path) splices the same way.
    seen: list[str] = []

    async def twice():
        yield StreamSplice(ResponseStream(_letters("xy"), ChatResponse.from_updates))
        yield StreamSplice(ResponseStream(_letters("z"), ChatResponse.from_updates))

    hooked_outer = ResponseStream(twice(), ChatResponse.from_updates).with_transform_hook(lambda u: seen.append(u.text))
    assert [u.text async for u in hooked_outer] == ["x", "y", "z"] and seen == ["x", "y", "z"]


async def test_an_error_in_a_spliced_stream_is_raised_in_its_source_at_the_splice() -> None:
    log: list[str] = []

    async def failing():
        yield ChatResponseUpdate(contents=["a"])
        raise RuntimeError("provider hung up")

    def spliced() -> ResponseStream[ChatResponseUpdate, ChatResponse]:
        return ResponseStream(failing(), ChatResponse.from_updates).with_cleanup_hook(lambda: log.append("inner"))

    async def source(recover: bool):
        try:
            yield StreamSplice(spliced())
        except RuntimeError as e:
            log.append(f"source saw {e}")
            if not recover:
                raise
            yield ChatResponseUpdate(contents=["recovered"])
        finally:
            log.append("source closed")

    stream = ResponseStream(source(False)).with_cleanup_hook(lambda: log.append("outer"))
    received: list[str] = []
    with pytest.raises(RuntimeError, match="hung up"):
        async for update in stream:
            received.append(update.text)
    assert received == ["a"]
    assert log == ["inner", "source saw provider hung up", "source closed", "outer"]
    log.clear()
    recovering = ResponseStream(source(True))
    assert [u.text async for u in recovering] == ["a", "recovered"]
    assert log == ["inner", "source saw provider hung up", "source closed"]


async def test_closing_a_stream_inside_a_splice_closes_the_spliced_stream_then_its_source() -> None:
    log: list[str] = []

    async def endless():
        try:
            while True:
                yield ChatResponseUpdate(contents=["x"])
        finally:
            log.append("model closed")

    async def source():
        try:
            yield StreamSplice(ResponseStream(endless()).with_cleanup_hook(lambda: log.append("inner cleanup")))
        finally:
            log.append("source closed")

    stream = ResponseStream(source()).with_cleanup_hook(lambda: log.append("outer cleanup"))
    assert (await anext(stream)).text == "x"
    await stream.aclose()
    assert log == ["model closed", "inner cleanup", "source closed", "outer cleanup"]
    assert [u async for u in stream] == []


def test_from_updates_joins_text_fragments_only_within_one_plain_text_content() -> None:
    signed = Content.from_reasoning("think", protected_data="sig")
    updates = [
        ChatResponseUpdate(contents=[Content.from_text("a")], message_id="m1"),
        ChatResponseUpdate(contents=[Content.from_text("b")], message_id="m1", created_at=5.0),
        ChatResponseUpdate(contents=[Content.from_text("c", additional_properties={"k": 1})], message_id="m1"),
        ChatResponseUpdate(contents=[Content.from_text("d")], message_id="m2", model_id="x"),
        ChatResponseUpdate(contents=[Content.from_text("e")], model_id="y"),
        ChatResponseUpdate(contents=[signed]),
        ChatResponseUpdate(contents=[Content.from_text("f")], additional_properties={"p": 2}),
        ChatResponseUpdate(contents=[Content.from_text("g")], role="user"),
    ]
    response = ChatResponse.from_updates(updates)
    shape = [(m.role, m.message_id, [(c.type, c.text) for c in m.contents]) for m in response.messages]
    assert shape == [
        ("assistant", "m1", [("text", "ab"), ("text", "c")]),
        ("assistant", "m2", [("text", "de"), ("text_reasoning", "think"), ("text", "f")]),
        ("user", None, [("text", "g")]),
    ]
    assert (response.model_id, response.created_at, response.additional_properties) == ("y", 5.0, {"p": 2})
    assert [u.text for u in updates[:2]] == ["a", "b"]  # the updates themselves are left as they came


async def test_from_awaitable_and_pull_context_managers() -> None:
    async def make() -> ResponseStream[ChatResponseUpdate, ChatResponse]:
        return ResponseStream(_letters("xy"), ChatResponse.from_updates)

    wrapped = ResponseStream.from_awaitable(make())
    assert [u.text async for u in wrapped] == ["x", "y"]
    assert (await wrapped.get_final_response()).text == "xy"  # the resolved stream's final response

    depth: list[int] = []
    active = [0]

    @contextlib.contextmanager
    def around():
        active[0] += 1
        try:
            yield
        finally:
            active[0] -= 1

    async def watched():
        for letter in "pq":
            depth.append(active[0])
            yield ChatResponseUpdate(contents=[letter])

    stream = ResponseStream(watched(), ChatResponse.from_updates).with_pull_context_manager(around)
    assert (await stream.get_final_response()).text == "pq"
    assert depth == [1, 1] and active == [0]


def test_a_requests_response_has_exactly_the_constructors_fields() -> None:
    last = ChatResponse(
        messages=[Message("assistant", ["Hi"])],
        response_id="r",
        conversation_id="c",
        model_id="m",
        created_at=1.0,
        finish_reason="stop",
        raw_representation={"raw": 1},
        continuation_token={"token": "t"},
    )
    messages = [Message("user", ["q"]), *last.messages]
    made = request_response(last, messages, {"input_token_count": 2}, dict, {"k": 1})
    built = ChatResponse(
        messages=messages,
        response_id="r",
        conversation_id="c",
        model_id="m",
        created_at=1.0,
        finish_reason="stop",
        usage_details={"input_token_count": 2},
        response_format=dict,
        additional_properties={"k": 1},
        raw_representation={"raw": 1},
        continuation_token={"token": "t"},
    )
    assert vars(made) == vars(built)  # the fast path writes the same fields, no more, no fewer
    assert made.messages is not messages and made.messages == messages
    empty = request_response(ChatResponse(), [], None, None, {})
    assert vars(empty) == vars(ChatResponse(messages=[], additional_properties={}))


def test_agent_response_from_a_chat_response_has_exactly_the_constructors_fields() -> None:
    chat = ChatResponse(
        messages=[Message("assistant", ["Hi"])],
        response_id="r",
        conversation_id="c",
        model_id="m",
        created_at=1.0,
        finish_reason="stop",
        usage_details={"input_token_count": 1},
        additional_properties={"k": 1},
        continuation_token={"token": "t"},
    )
    wrapped = AgentResponse.from_chat_response(chat, agent_id="a", author_name="Ann")
    built = AgentResponse(
        messages=chat.messages,
        response_id="r",
        agent_id="a",
        conversation_id="c",
        model_id="m",
        created_at=1.0,
        finish_reason="stop",
        usage_details={"input_token_count": 1},
        additional_properties={"k": 1},
        raw_representation=chat,
        continuation_token={"token": "t"},
    )
    assert vars(wrapped) == vars(built)  # the fast path writes the same fields, no more, no fewer
    assert wrapped.messages is not chat.messages and wrapped.messages[0].author_name == "Ann"


def test_a_function_result_of_contents_keeps_them_as_items_and_their_text_as_result() -> None:
    image = Content.from_data(b"png", "image/png")
    result = Content.from_function_result("c1", result=[Content.from_text("Chart drawn."), image])
    assert result.result == "Chart drawn."  # what a provider sends as the tool's text
    assert result.items == [Content.from_text("Chart drawn."), image]
    data = result.to_dict()
    assert [item["type"] for item in data["items"]] == ["text", "data"]  # plain content dicts, as the reference's
    assert Content.from_dict(json.loads(json.dumps(data))) == result
    # Text reads as one text item; any other value is kept as it is (an empty list too).
    assert Content.from_function_result("c2", result="done").items == [Content.from_text("done")]
    assert Content.from_function_result("c3", result={"a": 1}).result == {"a": 1}
    assert Content.from_function_result("c4", result=[]).result == []


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"finish_reason": "stop"},
        {
            "author_name": "Bo",
            "response_id": "r",
            "message_id": "m",
            "conversation_id": "c",
            "model_id": "gpt",
            "created_at": 1.0,
            "finish_reason": "stop",
            "additional_properties": {"k": 1},
            "continuation_token": {"token": "t"},
        },
    ],
)
def test_a_relabelled_chunk_has_exactly_the_constructors_fields(fields: dict[str, Any]) -> None:
    chunk = ChatResponseUpdate(contents=[Content.from_text("x")], **fields)
    relabelled = relabel_chat_update("a1", "Ann", chunk)
    built = AgentResponseUpdate(
        contents=[Content.from_text("x")],
        role="assistant",
        agent_id="a1",
        raw_representation=chunk,
        **{**fields, "author_name": fields.get("author_name", "Ann")},
    )
    assert vars(relabelled) == vars(built)  # the per-chunk fast path writes the same fields, no more, no fewer
    assert relabelled.contents is not chunk.contents and relabelled.text == "x"


def test_an_update_copies_its_contents_list_and_converts_what_is_not_content() -> None:
    listed: list[Any] = [Content.from_text("a")]
    update = ChatResponseUpdate(contents=listed)
    assert update.contents == listed and update.contents is not listed
    mixed = ChatResponseUpdate(contents=[Content.from_text("a"), "b", {"type": "text", "text": "c"}])
    assert [c.text for c in mixed.contents] == ["a", "b", "c"]
    assert all(isinstance(c, Content) for c in mixed.contents)
    assert mixed.text == "abc" and ChatResponseUpdate(contents=["only"]).text == "only"
    assert ChatResponseUpdate(contents=[Content.from_reasoning("r")]).text == ""
