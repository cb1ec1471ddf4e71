"""Microsoft Agent Framework: a ``BaseChatClient`` composed with its standard layers (chat middleware,
function invocation, telemetry) as the model; ``Agent``; its workflow engine for the graphs.

The layer order is the one the framework's own provider clients and custom-client sample use. Telemetry
stays at its default (instrumentation off unless enabled), as in agentnb.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Executor,
    FunctionInvocationLayer,
    InMemoryAgentFileStore,
    InMemoryCheckpointStorage,
    Message,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    create_harness_agent,
    handler,
    tool,
)
from agent_framework._workflows._checkpoint_encoding import encode_checkpoint_value
from agent_framework.observability import ChatTelemetryLayer
from typing_extensions import Never

from . import CHUNKS, SERVED_INPUT, WIDTH, response_text

CALLS = [0]


class InstantClient(ChatMiddlewareLayer, FunctionInvocationLayer, ChatTelemetryLayer, BaseChatClient):
    """Answers at once: one tool call when tools are offered and none has run yet, else ``Done.``."""

    OTEL_PROVIDER_NAME = "instant"
    text_only = False  # answers "Done." even when tools are offered (the harness offers its own)
    stream_texts: tuple[str, ...] = ("x ",) * CHUNKS  # one "Done." for the served turn (DevUI always streams)

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        if stream:

            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                for text in self.stream_texts:
                    yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(text)])

            return self._build_response_stream(updates())

        async def respond() -> ChatResponse:
            if options.get("tools") and messages[-1].role != "tool" and not self.text_only:
                call = Content.from_function_call("c1", "lookup", arguments='{"key": "k"}')
                return ChatResponse(messages=[Message(role="assistant", contents=[call])], finish_reason="tool_calls")
            return ChatResponse(messages=[Message(role="assistant", contents=["Done."])], finish_reason="stop")

        return respond()


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    CALLS[0] += 1
    return "value"


class Step(Executor):
    """Adds one and passes the number on."""

    @handler
    async def step(self, n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)


class Last(Executor):
    """Yields the number it receives."""

    @handler
    async def last(self, n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)


class Join(Executor):
    """Sums the fan-in list."""

    @handler
    async def join(self, values: list[int], ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(sum(values))


def _chain(storage: InMemoryCheckpointStorage | None) -> Workflow:
    nodes: list[Executor] = [Step(id=f"s{i}") for i in range(WIDTH - 1)]
    nodes.append(Last(id="last"))
    builder = WorkflowBuilder(start_executor=nodes[0], checkpoint_storage=storage, max_iterations=WIDTH + 5)
    return builder.add_chain(nodes).build()


def _fan() -> Workflow:
    source = Step(id="source")
    workers = [Step(id=f"w{i}") for i in range(WIDTH)]
    return (
        WorkflowBuilder(start_executor=source)
        .add_fan_out_edges(source, workers)
        .add_fan_in_edges(workers, Join(id="join"))
        .build()
    )


class Bench:
    def __init__(self) -> None:
        self.plain = Agent(client=InstantClient())
        self.with_tool = Agent(client=InstantClient(), tools=[lookup])
        self.chain_wf = _chain(None)
        self.fan_wf = _fan()
        text_only = InstantClient()
        text_only.text_only = True
        self.harness = create_harness_agent(
            text_only, file_memory_store=InMemoryAgentFileStore(), disable_web_search=True
        )
        self.served: Any = None
        self.reset()

    def reset(self) -> None:
        self.storage = InMemoryCheckpointStorage()
        self.chain_cp_wf = _chain(self.storage)

    async def turn(self) -> str:
        return (await self.plain.run("hi")).text

    async def tool_turn(self) -> str:
        return (await self.with_tool.run("hi")).text

    async def stream_turn(self) -> int:
        stream = self.plain.run("hi", stream=True)
        n = 0
        async for update in stream:
            if update.text:
                n += 1
        await stream.get_final_response()
        return n

    async def harness_turn(self) -> str:
        return (await self.harness.run("hi", session=self.harness.create_session())).text

    async def served_turn(self) -> str:
        """A request to DevUI's Responses API (its hosting in 1.23), in process (ASGI, no sockets).

        DevUI runs the agent streamed even for a request that is not, so its model streams ``Done.`` whole.
        """
        if self.served is None:
            import httpx
            from agent_framework_devui import DevServer

            server = DevServer(ui_enabled=False, auth_token="bench")  # loopback; its default auth stays on
            served = InstantClient()
            served.stream_texts = ("Done.",)
            server.register_entities([Agent(client=served, name="bench")])
            client = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=server.get_app()),
                base_url="http://127.0.0.1",
                headers={"Authorization": "Bearer bench"},
            )
            entities = (await client.get("/v1/entities")).raise_for_status().json()["entities"]
            self.served = (client, entities[0]["id"])
        client, entity = self.served
        body = {**SERVED_INPUT, "model": "bench", "metadata": {"entity_id": entity}}
        reply = await client.post("/v1/responses", json=body)
        return response_text(reply.raise_for_status().json())

    async def chain(self) -> Any:
        return (await self.chain_wf.run(0)).get_outputs()[0]

    async def chain_checkpointed(self) -> Any:
        return (await self.chain_cp_wf.run(0)).get_outputs()[0]

    async def fan(self) -> Any:
        return (await self.fan_wf.run(0)).get_outputs()[0]

    async def checkpoint_bytes(self) -> float:
        # What FileCheckpointStorage would write, compact (it writes with indent=2, which is larger).
        checkpoints = list(self.storage._checkpoints.values())  # pyright: ignore[reportPrivateUsage]
        sizes = [
            len(json.dumps(encode_checkpoint_value(cp.to_dict()), ensure_ascii=False).encode()) for cp in checkpoints
        ]
        return sum(sizes) / len(sizes)

    def new_session(self) -> Callable[[], Awaitable[str]]:
        session = self.plain.create_session()

        async def turn() -> str:
            return (await self.plain.run("hi", session=session)).text

        return turn
