"""LangGraph: a LangChain ``BaseChatModel`` subclass (the model seam LangGraph agents call) inside the prebuilt
ReAct agent (``create_react_agent``: model node + ``ToolNode``); ``StateGraph`` for the graphs.

``create_react_agent`` is what LangGraph itself ships for an agent loop (LangChain's ``create_agent`` builds the
same graph but lives in the separate ``langchain`` package). Sessions use LangGraph's own mechanism, a
checkpointer (``InMemorySaver``) with a ``thread_id``. Graphs use async node functions so no thread pool is
involved; LangGraph's default ``recursion_limit`` of 25 is raised for the 100-step chain.
"""

from __future__ import annotations

import operator
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # create_react_agent carries a deprecation pointer to langchain.agents
    from langgraph.prebuilt import create_react_agent

from . import CHUNKS, WIDTH

CALLS = [0]


class InstantChatModel(BaseChatModel):
    """Answers at once: one tool call when tools are bound and none has run yet, else ``Done.``."""

    @property
    def _llm_type(self) -> str:
        return "instant"

    def _respond(self, messages: list[BaseMessage], tools: Any) -> ChatResult:
        if tools and not isinstance(messages[-1], ToolMessage):
            call = {"name": "lookup", "args": {"key": "k"}, "id": "c1", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content="Done.")
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any):
        return self._respond(messages, kwargs.get("tools"))

    async def _agenerate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any):
        return self._respond(messages, kwargs.get("tools"))

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for _ in range(CHUNKS):
            yield ChatGenerationChunk(message=AIMessageChunk(content="x "))

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        # What provider integrations do: turn the tools into JSON schemas passed to every call.
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    CALLS[0] += 1
    return "value"


class ChainState(TypedDict, total=False):
    n: int
    out: int


class FanState(TypedDict, total=False):
    n: int
    values: Annotated[list[int], operator.add]
    out: int


async def step(state: ChainState) -> dict[str, int]:
    return {"n": state["n"] + 1}


async def last(state: ChainState) -> dict[str, int]:
    return {"out": state["n"]}


async def fan_step(state: FanState) -> dict[str, list[int]]:
    return {"values": [state["n"] + 1]}


async def join(state: FanState) -> dict[str, int]:
    return {"out": sum(state["values"])}


def _chain(checkpointer: InMemorySaver | None) -> Any:
    graph = StateGraph(ChainState)
    names = [f"s{i}" for i in range(WIDTH - 1)]
    for name in names:
        graph.add_node(name, step)
    graph.add_node("last", last)
    for a, b in zip([START, *names], [*names, "last"], strict=True):
        graph.add_edge(a, b)
    graph.add_edge("last", END)
    return graph.compile(checkpointer=checkpointer)


def _fan() -> Any:
    graph = StateGraph(FanState)
    graph.add_node("source", step)
    workers = [f"w{i}" for i in range(WIDTH)]
    for name in workers:
        graph.add_node(name, fan_step)
        graph.add_edge("source", name)
    graph.add_node("join", join)
    graph.add_edge(workers, "join")  # waits for all workers: fan-in
    graph.add_edge(START, "source")
    graph.add_edge("join", END)
    return graph.compile()


LIMIT = {"recursion_limit": WIDTH + 10}


class Bench:
    def __init__(self) -> None:
        model = InstantChatModel()
        self.plain = create_react_agent(model, tools=[])
        self.with_tool = create_react_agent(model, tools=[lookup])
        self.sessions = create_react_agent(model, tools=[], checkpointer=InMemorySaver())
        self.chain_wf = _chain(None)
        self.fan_wf = _fan()
        self.reset()

    def reset(self) -> None:
        self.saver = InMemorySaver()
        self.chain_cp_wf = _chain(self.saver)

    async def turn(self) -> str:
        return (await self.plain.ainvoke({"messages": [("user", "hi")]}))["messages"][-1].content

    async def tool_turn(self) -> str:
        return (await self.with_tool.ainvoke({"messages": [("user", "hi")]}))["messages"][-1].content

    async def stream_turn(self) -> int:
        n = 0
        async for message, _ in self.plain.astream({"messages": [("user", "hi")]}, stream_mode="messages"):
            if isinstance(message, AIMessageChunk) and message.content:
                n += 1
        return n

    async def chain(self) -> Any:
        return (await self.chain_wf.ainvoke({"n": 0}, LIMIT))["out"]

    async def chain_checkpointed(self) -> Any:
        config = {**LIMIT, "configurable": {"thread_id": uuid.uuid4().hex}}
        return (await self.chain_cp_wf.ainvoke({"n": 0}, config))["out"]

    async def fan(self) -> Any:
        return (await self.fan_wf.ainvoke({"n": 0}))["out"]

    async def checkpoint_bytes(self) -> float:
        # Everything InMemorySaver keeps, serialized by LangGraph's own serde: checkpoints + metadata,
        # channel blobs (shared between checkpoints) and pending writes, divided by the checkpoint count.
        saver = self.saver
        total, count = 0, 0
        for namespaces in saver.storage.values():
            for checkpoints in namespaces.values():
                for (_, checkpoint), (_, metadata), _parent in checkpoints.values():
                    total += len(checkpoint) + len(metadata)
                    count += 1
        total += sum(len(blob) for _, blob in saver.blobs.values())
        total += sum(len(w[2][1]) for writes in saver.writes.values() for w in writes.values())
        return total / count

    def new_session(self) -> Callable[[], Awaitable[str]]:
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}

        async def turn() -> str:
            return (await self.sessions.ainvoke({"messages": [("user", "hi")]}, config))["messages"][-1].content

        return turn
