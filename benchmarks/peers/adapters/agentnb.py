"""agentnb: ``BaseChatClient`` subclass as the model; ``Agent``; ``agentnb.workflows`` for the graphs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from typing_extensions import Never

from agentnb import Agent, BaseChatClient, ChatResponse, ChatResponseUpdate, Content, Message, tool
from agentnb.harness import InMemoryAgentFileStore, create_harness_agent
from agentnb.serving import serving_app
from agentnb.workflows import Executor, InMemoryCheckpointStorage, Workflow, WorkflowBuilder, WorkflowContext, handler

from . import CHUNKS, SERVED_INPUT, WIDTH, response_text

CALLS = [0]


class InstantModel(BaseChatClient):
    """Answers at once: one tool call when tools are offered and none has run yet, else ``Done.``."""

    OTEL_PROVIDER_NAME = "instant"

    def __init__(self, *, text_only: bool = False) -> None:
        super().__init__(model_id="instant")
        self.text_only = text_only  # answers "Done." even when tools are offered (the harness offers its own)
        self.stream_texts: tuple[str, ...] = ("x ",) * CHUNKS  # one "Done." for the served turn (it streams)

    async def _inner_get_response(self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any):
        if options.get("tools") and messages[-1].role != "tool" and not self.text_only:
            call = Content.from_function_call("c1", "lookup", '{"key": "k"}')
            return ChatResponse(messages=[Message("assistant", [call])], finish_reason="tool_calls")
        return ChatResponse(messages=[Message("assistant", ["Done."])], finish_reason="stop")

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        for text in self.stream_texts:
            yield ChatResponseUpdate(contents=[Content.from_text(text)])


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
    nodes: list[Executor] = [Step(f"s{i}") for i in range(WIDTH - 1)]
    nodes.append(Last("last"))
    builder = WorkflowBuilder(start_executor=nodes[0], checkpoint_storage=storage, max_iterations=WIDTH + 5)
    return builder.add_chain(nodes).build()


def _fan() -> Workflow:
    source = Step("source")
    workers = [Step(f"w{i}") for i in range(WIDTH)]
    return (
        WorkflowBuilder(start_executor=source)
        .add_fan_out_edges(source, workers)
        .add_fan_in_edges(workers, Join("join"))
        .build()
    )


class Bench:
    def __init__(self) -> None:
        self.plain = Agent(InstantModel())
        self.with_tool = Agent(InstantModel(), tools=[lookup])
        self.chain_wf = _chain(None)
        self.fan_wf = _fan()
        self.harness = create_harness_agent(
            InstantModel(text_only=True), file_memory_store=InMemoryAgentFileStore(), disable_web_search=True
        )
        self.served: Any = None
        self.reset()

    def reset(self) -> None:
        """Fresh checkpoint storage (called between timed samples so stored checkpoints do not pile up)."""
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
        """A request to the server's Responses API, in process (ASGI, no sockets): parse, route, run, answer.

        The server runs the agent streamed even for a request that is not, so its model streams ``Done.`` whole.
        """
        if self.served is None:
            import httpx

            model = InstantModel()
            model.stream_texts = ("Done.",)
            app = serving_app(Agent(model, name="bench"), base_url="http://127.0.0.1")
            self.served = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")
        reply = await self.served.post("/v1/responses", json={**SERVED_INPUT, "model": "bench"})
        return response_text(reply.raise_for_status().json())

    async def chain(self) -> Any:
        return (await self.chain_wf.run(0)).get_outputs()[0]

    async def chain_checkpointed(self) -> Any:
        return (await self.chain_cp_wf.run(0)).get_outputs()[0]

    async def fan(self) -> Any:
        return (await self.fan_wf.run(0)).get_outputs()[0]

    async def checkpoint_bytes(self) -> float:
        ids = await self.storage.list_checkpoint_ids()
        return sum(self.storage.size_of(i) for i in ids) / len(ids)

    def new_session(self) -> Callable[[], Awaitable[str]]:
        session = self.plain.create_session()

        async def turn() -> str:
            return (await self.plain.run("hi", session=session)).text

        return turn
