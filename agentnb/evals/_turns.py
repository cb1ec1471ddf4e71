"""The conversations a case holds: what the target was asked and answered, and each workflow agent's own turn.

Scorers and the reference's evaluators judge these messages; they are read from the run's responses and
events, so graph and functional workflows give them alike.
"""

from __future__ import annotations

from typing import Any, cast

from .._types import Message, normalize_messages
from ._cases import plain

__all__ = ["INTERNAL_EXECUTORS", "input_messages", "output_messages", "query_messages", "workflow_agent_turns"]

#: Executors that only move the conversation along (orchestrations' plumbing): they have no turn of their own.
INTERNAL_EXECUTORS = frozenset({"input-conversation", "end-conversation", "end"})


def _as_list(value: object) -> list[Any] | None:
    return cast("list[Any]", value) if isinstance(value, list) else None


def query_messages(query: Any) -> list[Any]:
    """The case's input as the messages the target was sent (nothing for an input that is not a conversation)."""
    if query is None:
        return []
    if isinstance(query, (str, Message)) or (
        isinstance(query, list) and all(isinstance(m, (str, Message)) for m in cast("list[Any]", query))
    ):
        return normalize_messages(cast("Any", query))
    return []


def output_messages(output: object) -> list[Any]:
    """A workflow output as the assistant messages it stands for."""
    if output is None:
        return []
    if isinstance(output, Message):
        return [output]
    items = _as_list(output)
    if items and all(isinstance(m, Message) for m in items):
        return [m for m in cast("list[Message]", items) if m.role == "assistant"]
    messages: Any = getattr(output, "messages", None)
    if isinstance(messages, list) and hasattr(output, "text"):
        return list(cast("list[Any]", messages))
    return [Message("assistant", [output if isinstance(output, str) else str(plain(output))])]


def input_messages(payload: object) -> list[Any]:
    """What an agent in a workflow was asked: the user messages of what it received."""
    items = _as_list(payload)
    if items and hasattr(items[0], "agent_response"):
        return []  # a fan-in of answers: the question is upstream
    conversation: Any = getattr(payload, "full_conversation", None)
    if isinstance(conversation, list):
        return [m for m in cast("list[Message]", conversation) if m.role == "user"]
    messages: Any = getattr(payload, "messages", None)
    if isinstance(messages, list) and not hasattr(payload, "text"):  # an AgentExecutorRequest
        return [m for m in cast("list[Message]", messages) if m.role == "user"]
    if items is not None or isinstance(payload, (str, Message)):
        try:
            return [m for m in normalize_messages(cast("Any", payload)) if m.role == "user"]
        except (TypeError, ValueError):
            return []
    return []


def workflow_agent_turns(result: Any) -> list[dict[str, Any]]:
    """Each agent's turn in a workflow run: what it was asked and what it answered, in run order.

    Read from the run's events, so graph and functional workflows alike give their agents' turns: an
    executor's input (``executor_invoked``) paired with the agent response it yielded or sent on.
    """
    asked: dict[str, list[Any]] = {}
    turns: list[dict[str, Any]] = []
    seen: set[int] = set()

    def add(executor_id: str, response: Any) -> None:
        if id(response) in seen or executor_id.startswith("_") or executor_id.lower() in INTERNAL_EXECUTORS:
            return
        seen.add(id(response))
        turns.append({"executor_id": executor_id, "messages": [*asked.get(executor_id, []), *response.messages]})

    for event in result:
        executor_id = getattr(event, "executor_id", None)
        data: object = getattr(event, "data", None)
        if event.type == "executor_invoked" and executor_id:
            # The message an executor receives may be another agent's answer, sent on: that is its turn.
            for sent in _as_list(data) or [data]:
                source = getattr(sent, "executor_id", None)
                response = getattr(sent, "agent_response", None)
                if source and response is not None:
                    add(source, response)
            asked[executor_id] = input_messages(data)
        elif event.type in ("output", "intermediate") and executor_id:
            response = getattr(data, "agent_response", None) or data
            if hasattr(response, "messages") and hasattr(response, "usage_details"):
                add(executor_id, response)
    return turns
