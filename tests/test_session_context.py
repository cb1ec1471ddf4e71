"""SessionContext: what context providers add to a run (messages with attribution, middleware)."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import (
    Agent,
    AgentContext,
    ChatContext,
    ContextProvider,
    FunctionInvocationContext,
    InMemoryHistoryProvider,
    Message,
    SessionContext,
    agent_middleware,
    chat_middleware,
    function_middleware,
    tool,
)
from agentnb.exceptions import MiddlewareError
from agentnb.local import FunctionChatClient, ToolCallingChatClient


def test_added_messages_are_attributed_copies() -> None:
    class Retriever:
        source_id = "rag"

    original = Message("system", ["Paris is in France."])
    ctx = SessionContext(input_messages=[])
    ctx.extend_messages("notes", [original])
    ctx.extend_messages(Retriever(), [original])

    notes, rag = ctx.context_messages["notes"][0], ctx.context_messages["rag"][0]
    assert notes is not original and rag is not original
    assert notes.additional_properties["_attribution"] == {"source_id": "notes"}
    assert rag.additional_properties["_attribution"] == {"source_id": "rag", "source_type": "Retriever"}
    assert original.additional_properties == {}


async def test_history_is_added_as_the_stored_messages_themselves() -> None:
    # The history is the conversation, not injected context: compaction keeps its marks on these objects.
    history = InMemoryHistoryProvider()
    state: dict[str, Any] = {"messages": [Message("user", ["Hi"])]}
    ctx = SessionContext(session_id="s", input_messages=[])
    await history.before_run(agent=None, session=None, context=ctx, state=state)
    assert ctx.context_messages["in_memory"][0] is state["messages"][0]


def test_providers_may_not_add_agent_middleware() -> None:
    @agent_middleware
    async def around_turn(context: AgentContext, call_next: Any) -> None:
        await call_next()

    ctx = SessionContext(input_messages=[])
    with pytest.raises(MiddlewareError, match="only add chat or function middleware"):
        ctx.extend_middleware("p", around_turn)
    assert ctx.middleware == {}


async def test_middleware_a_provider_adds_wraps_that_runs_model_and_tool_calls() -> None:
    seen: list[str] = []

    @chat_middleware
    async def count_calls(context: ChatContext, call_next: Any) -> None:
        seen.append(f"model call with {len(context.messages)} messages")
        await call_next()

    @function_middleware
    async def log_tool(context: FunctionInvocationContext, call_next: Any) -> None:
        seen.append(f"tool {context.function.name}")
        await call_next()

    class Audit(ContextProvider):
        async def before_run(self, *, agent: Any, session: Any, context: SessionContext, state: Any) -> None:
            context.extend_middleware(self.source_id, [count_calls, log_tool])

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    agent = Agent(ToolCallingChatClient(), tools=[add], context_providers=[Audit()])
    await agent.run("2 + 3?")
    assert seen == ["model call with 1 messages", "tool add", "model call with 3 messages"]

    seen.clear()
    plain = Agent(FunctionChatClient(lambda messages, options: Message("assistant", ["ok"])))
    await plain.run("hi")
    assert seen == []  # only runs whose providers added it
