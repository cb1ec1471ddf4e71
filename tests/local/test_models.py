from __future__ import annotations

import enum
import json
from typing import Literal

from pydantic import BaseModel

from agentnb import Agent, ChatResponseUpdate, Content, tool
from agentnb.local import FunctionChatClient, ScriptedChatClient, ToolCallingChatClient, example_arguments


class Size(enum.Enum):
    S = "small"
    L = "large"


class Order(BaseModel):
    item: str
    quantity: int
    size: Size
    gift: bool = False
    notes: list[str]


async def test_tool_calling_model_calls_every_tool_once_with_schema_valid_arguments() -> None:
    calls: list[dict] = []

    @tool
    def place(order: Order, channel: Literal["web", "phone"]) -> str:
        calls.append({"order": order, "channel": channel})
        return "placed"

    @tool
    def weather(city: str, days: int = 2) -> str:
        return f"{city}:{days}"

    response = await Agent(ToolCallingChatClient(), tools=[place, weather]).run("Order a shirt to Berlin")
    assert len(calls) == 1
    assert calls[0]["channel"] == "web"
    assert isinstance(calls[0]["order"], Order)
    assert response.text == "place: placed\nweather: Berlin:2"


async def test_tool_calling_model_without_tools_echoes_and_streams_words() -> None:
    agent = Agent(ToolCallingChatClient())
    stream = agent.run("hello there", stream=True)
    pieces = [u.text async for u in stream if u.text]
    assert pieces == ["You ", "said: ", "hello ", "there"]


def test_example_arguments_follow_refs_enums_and_bounds() -> None:
    schema = Order.model_json_schema()
    args = example_arguments(schema, hint="Paris")
    assert Order.model_validate(args).size is Size.S
    assert example_arguments({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}}) == {"n": 5}


async def test_scripted_model_streams_text_in_chunks_and_scripts_tool_calls() -> None:
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    client = ScriptedChatClient([ScriptedChatClient.call("add", a=2, b=3), "2 + 3 = 5"], chunk_size=3)
    stream = Agent(client, tools=[add]).run("sum", stream=True)
    texts = [u.text async for u in stream if u.text]
    assert texts == ["2 +", " 3 ", "= 5"]
    assert (await stream.get_final_response()).text == "2 + 3 = 5"


async def test_function_model_sync_async_and_generator_forms() -> None:
    def sync_model(messages, options):
        return messages[-1].text.upper()

    async def async_model(messages, options):
        return [Content.from_reasoning("hmm"), Content.from_text("ok")]

    async def streaming_model(messages, options):
        yield "a"
        yield ChatResponseUpdate(contents=["b"])

    assert (await Agent(FunctionChatClient(sync_model)).run("hi")).text == "HI"
    reasoned = await Agent(FunctionChatClient(async_model)).run("x")
    assert reasoned.text == "ok"
    assert reasoned.messages[0].contents[0].type == "text_reasoning"
    assert (await Agent(FunctionChatClient(streaming_model)).run("x")).text == "ab"
    stream = Agent(FunctionChatClient(streaming_model)).run("x", stream=True)
    assert [u.text async for u in stream] == ["a", "b"]


async def test_scripted_structured_reply_is_json() -> None:
    client = ScriptedChatClient([{"item": "hat", "quantity": 1, "size": "large", "notes": []}])
    response = await Agent(client).run("x", options={"response_format": Order})
    assert response.value.size is Size.L
    assert json.loads(response.text)["item"] == "hat"
