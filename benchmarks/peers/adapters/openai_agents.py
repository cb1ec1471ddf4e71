"""OpenAI Agents SDK: a ``Model`` subclass (its documented interface for custom models); ``Agent`` + ``Runner``.

Tracing is turned off (``set_tracing_disabled(True)``): by default the SDK records a trace per run and
tries to export it to OpenAI, which is network I/O agentnb does not do by default either. The SDK has no
workflow engine (multi-agent is handoffs inside one run loop), so workloads 5-7 are not run for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)

from . import CHUNKS

CALLS = [0]

set_tracing_disabled(True)


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="m1",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
    )


class InstantModel(Model):
    """Answers at once: one tool call when tools are offered and none has run yet, else ``Done.``."""

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: Any,
        conversation_id: Any,
        prompt: Any,
    ) -> ModelResponse:
        last = input[-1] if isinstance(input, list) and input else None
        returned = isinstance(last, dict) and last.get("type") == "function_call_output"
        if tools and not returned:
            call = ResponseFunctionToolCall(
                id="c1", call_id="c1", type="function_call", name="lookup", arguments='{"key": "k"}'
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        return ModelResponse(output=[_message("Done.")], usage=Usage(), response_id=None)

    async def stream_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: Any,
        conversation_id: Any,
        prompt: Any,
    ) -> AsyncIterator[Any]:
        # model_construct is how the openai SDK itself builds stream events from the wire (no validation).
        for i in range(CHUNKS):
            yield ResponseTextDeltaEvent.model_construct(
                content_index=0,
                delta="x ",
                item_id="m1",
                logprobs=[],
                output_index=0,
                sequence_number=i,
                type="response.output_text.delta",
            )
        response = Response.model_construct(
            id="r1",
            created_at=0.0,
            model="instant",
            object="response",
            output=[_message("x " * CHUNKS)],
            parallel_tool_calls=False,
            tool_choice="auto",
            tools=[],
            usage=None,
        )
        yield ResponseCompletedEvent.model_construct(
            response=response, sequence_number=CHUNKS, type="response.completed"
        )


@function_tool
def lookup(key: str) -> str:
    """Look a key up."""
    CALLS[0] += 1
    return "value"


class Bench:
    def __init__(self) -> None:
        model = InstantModel()
        self.plain = Agent(name="bench", model=model)
        self.with_tool = Agent(name="bench", model=model, tools=[lookup])

    async def turn(self) -> str:
        return (await Runner.run(self.plain, "hi")).final_output

    async def tool_turn(self) -> str:
        return (await Runner.run(self.with_tool, "hi")).final_output

    async def stream_turn(self) -> int:
        result = Runner.run_streamed(self.plain, "hi")
        n = 0
        async for event in result.stream_events():
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
                n += 1
        return n

    def new_session(self) -> Callable[[], Awaitable[str]]:
        history: list[Any] = []

        async def turn() -> str:
            result = await Runner.run(self.plain, [*history, {"role": "user", "content": "hi"}])
            history[:] = result.to_input_list()
            return result.final_output

        return turn
