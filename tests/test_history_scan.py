"""The function loop's history summary: long sessions stay cheap per turn, and edits to history are still seen."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent, Content, Message
from agentnb import _conversation as conversation_rules
from agentnb.local import FunctionChatClient


def recording_agent(seen: list[list[Message]]) -> Agent:
    def model(messages: list[Message], options: dict[str, Any]) -> str:
        seen.append(list(messages))
        return "Done."

    return Agent(FunctionChatClient(model), "Be brief.")


async def test_each_turn_looks_only_at_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[Message]] = []
    agent = recording_agent(seen)
    session = agent.create_session()
    for _ in range(30):
        await agent.run("hi", session=session)
    old = {id(m) for m in seen[-1][:-4]}  # all but the last turn's messages
    assert len(old) > 50
    looked: list[Message] = []
    real = conversation_rules.tool_kinds

    def counting(message: Message) -> int:
        looked.append(message)
        return real(message)

    monkeypatch.setattr(conversation_rules, "tool_kinds", counting)
    await agent.run("hi", session=session)
    # The new messages and the end of the last turn (where settled history starts), never the older history.
    assert looked
    assert not [m for m in looked if id(m) in old]


async def test_a_history_message_edited_in_place_is_hidden_from_the_model() -> None:
    seen: list[list[Message]] = []
    agent = recording_agent(seen)
    session = agent.create_session()
    for _ in range(3):
        await agent.run("hi", session=session)
    history = seen[-1]
    old_answer = next(m for m in history if m.role == "assistant")
    request = Content.from_function_approval_request("r1", Content.from_function_call("c1", "lookup", {}))
    old_answer.contents.append(request)  # same list, new length: the summary must not be trusted
    await agent.run("hi", session=session)
    assert all(c.type != "function_approval_request" for m in seen[-1] for c in m.contents)


async def test_replaced_contents_with_an_unanswered_call_are_hidden_until_answered() -> None:
    conversation = [Message("system", ["Be brief."]), Message("user", ["hi"]), Message("assistant", ["Done."])]
    assert conversation_rules.for_model(conversation) is conversation
    conversation[2].contents = [Content.from_function_call("c1", "lookup", {})]
    conversation = [Message("system", ["Be brief."]), *conversation[1:], Message("user", ["again"])]
    assert all(c.type != "function_call" for m in conversation_rules.for_model(conversation) for c in m.contents)
    conversation.append(Message("tool", [Content.from_function_result("c1", "value")]))
    shown = conversation_rules.for_model(conversation)
    assert [c.type for m in shown for c in m.contents].count("function_call") == 1


async def test_two_sessions_sharing_history_objects_each_see_their_own_conversation() -> None:
    shared = [Message("user", ["hi"]), Message("assistant", ["Done."])]
    first = [*shared, Message("user", ["a"])]
    second = [*shared, Message("assistant", [Content.from_function_call("c9", "lookup", {})]), Message("user", ["b"])]
    assert conversation_rules.for_model(first) is first
    shown = conversation_rules.for_model(second)
    assert all(c.type != "function_call" for m in shown for c in m.contents)
    assert conversation_rules.for_model(first) is first
