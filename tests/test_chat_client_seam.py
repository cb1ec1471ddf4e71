"""The reference's single-method seam: ``_inner_get_response(*, messages, stream, options)``.

A provider written the reference's way answers both streaming and non-streaming calls from one method and
returns an awaitable response, a ``ResponseStream``, an async iterable of updates, or an awaitable of a stream;
the tool loop, middleware and approval run around it exactly as around the two-method form.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import AsyncIterable, Awaitable, Mapping, Sequence
from typing import Any

import pytest

from agentnb import (
    Agent,
    BaseChatClient,
    ChatContext,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
    chat_middleware,
    tool,
)
from agentnb.exceptions import StructuredOutputError
from agentnb.local import FunctionChatClient
from agentnb.observability import ChatTelemetryLayer


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _reply(messages: Sequence[Message], n: int) -> ChatResponse:
    """Call ``add`` once, then report its result."""
    results = [c for m in messages for c in m.contents if c.type == "function_result"]
    if not results:
        return ChatResponse(
            messages=Message("assistant", [Content.from_function_call(f"c{n}", "add", '{"a":2,"b":3}')])
        )
    return ChatResponse(messages=Message("assistant", [f"sum is {results[-1].result}"]), model="single-v1")


class SingleMethodClient(BaseChatClient):
    """Returns a coroutine for non-streaming calls and, per ``form``, one of the stream shapes."""

    def __init__(self, form: str) -> None:
        super().__init__()
        self.form = form
        self.calls: list[bool] = []

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool = False, options: Mapping[str, Any], **kwargs: Any
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse] | AsyncIterable[Any]:
        self.calls.append(stream)
        response = _reply(messages, len(self.calls))
        if not stream:

            async def whole() -> ChatResponse:
                return response

            return whole()

        async def updates() -> AsyncIterable[ChatResponseUpdate]:
            for update in response.to_updates():
                yield update

        if self.form == "response_stream":
            return ResponseStream(updates(), ChatResponse.from_updates)
        if self.form == "async_iterable":
            return updates()
        if self.form == "awaitable_stream":

            async def later() -> ResponseStream[ChatResponseUpdate, ChatResponse]:
                return ResponseStream(updates(), ChatResponse.from_updates)

            return later()

        async def whole_when_streaming() -> ChatResponse:
            return response

        return whole_when_streaming()


FORMS = ["response_stream", "async_iterable", "awaitable_stream", "awaitable_response"]


async def test_the_single_method_form_runs_the_tool_loop_without_streaming() -> None:
    client = SingleMethodClient("response_stream")
    response = await client.get_response("add 2 and 3", tools=[add])
    assert response.text == "sum is 5"
    assert response.model_id == response.model == "single-v1"
    assert client.calls == [False, False]


@pytest.mark.parametrize("form", FORMS)
async def test_each_stream_shape_streams_through_the_tool_loop(form: str) -> None:
    client = SingleMethodClient(form)
    stream = client.get_response("add 2 and 3", tools=[add], stream=True)
    texts = [u.text async for u in stream if u.text]
    assert texts == ["sum is 5"]
    final = await stream.get_final_response()
    assert [c.type for m in final.messages for c in m.contents] == ["function_call", "function_result", "text"]
    assert client.calls == [True, True]


async def test_chat_middleware_and_agents_wrap_the_single_method_form() -> None:
    seen: list[int] = []

    @chat_middleware
    async def count(context: ChatContext, call_next: Any) -> None:
        seen.append(len(context.messages))
        await call_next()

    agent = Agent(SingleMethodClient("async_iterable"), "Be brief.", tools=[add], middleware=[count])
    session = agent.create_session()
    assert (await agent.run("add", session=session)).text == "sum is 5"
    streamed = agent.run("again", session=session, stream=True)
    assert [u.text async for u in streamed if u.text] == ["sum is 5"]
    # Instructions + question, then with the call and its result; the second turn answers from the history.
    assert seen == [2, 4, 6]


async def test_the_layer_mixins_compose_as_in_the_reference() -> None:
    class Layered(FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, SingleMethodClient):
        pass

    client = Layered("response_stream")
    assert isinstance(client, FunctionInvocationLayer) and isinstance(client, BaseChatClient)
    assert (await client.get_response("add", tools=[add])).text == "sum is 5"


async def test_a_wrong_return_says_what_to_return() -> None:
    class Wrong(BaseChatClient):
        def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
            return "text"

    with pytest.raises(TypeError, match="return a ChatResponse or an awaitable"):
        await Wrong().get_response("x")
    with pytest.raises(TypeError, match="return a ResponseStream, an async iterable"):
        await Wrong().get_response("x", stream=True).get_final_response()


async def test_a_json_schema_response_format_gives_the_parsed_json() -> None:
    schema = {"title": "Point", "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    agent = Agent(FunctionChatClient(lambda m, o: '{"x": 4}'))
    response = await agent.run("where?", options={"response_format": schema})
    assert response.value == {"x": 4}
    broken = await Agent(FunctionChatClient(lambda m, o: "not json")).run("where?", options={"response_format": schema})
    with pytest.raises(StructuredOutputError, match="not valid JSON, which Point asks for"):
        _ = broken.value


def test_deepcopy_shares_the_raw_sdk_object_and_copies_the_rest() -> None:
    class Raw:
        def __init__(self) -> None:
            self.lock = threading.Lock()  # what SDK responses hold: it cannot be copied

    raw = Raw()
    message = Message("assistant", [Content.from_text("hi", raw_representation=raw)], raw_representation=raw)
    response = ChatResponse(messages=[message], raw_representation=raw)
    clone = copy.deepcopy(response)
    assert clone.raw_representation is raw and clone.messages[0].raw_representation is raw
    assert clone.messages[0] is not message and clone.messages[0].contents[0] is not message.contents[0]
    clone.messages[0].contents[0].text = "changed"
    assert message.text == "hi"


class RetryOnce(SingleMethodClient):
    """A wrapper override that names no parameters: the form is still the single-method one above it."""

    def __init__(self) -> None:
        super().__init__("response_stream")
        self.attempts = 0

    def _inner_get_response(self, **kwargs: Any) -> Any:
        self.attempts += 1
        return super()._inner_get_response(**kwargs)


@pytest.mark.parametrize("stream", [False, True])
async def test_an_override_that_passes_keywords_on_keeps_the_single_method_form(stream: bool) -> None:
    client = RetryOnce()
    if stream:
        response = await client.get_response("add 2 and 3", tools=[add], stream=True).get_final_response()
    else:
        response = await client.get_response("add 2 and 3", tools=[add])
    assert response.text == "sum is 5"
    assert client.attempts == 2
    assert client.calls == [stream, stream]
