"""Evaluation items: one conversation to judge, how it splits into question and answer, and converters to it.

These are Agent Framework's evaluation types (``EvalItem``, ``ExpectedToolCall``, ``ConversationSplit``,
``AgentEvalConverter``). A case that :func:`~agentnb.evals.evaluate` ran becomes an item through
:func:`item_from_case`, so evaluators written for those types judge the same data agentnb's scorers see.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from .._types import Message

if TYPE_CHECKING:
    from .._tools import FunctionTool
    from ._cases import CaseResult, EvalCase

__all__ = [
    "AgentEvalConverter",
    "ConversationSplit",
    "ConversationSplitter",
    "EvalItem",
    "ExpectedToolCall",
    "agent_tools",
    "expected_calls",
    "item_from_case",
]


@runtime_checkable
class ConversationSplitter(Protocol):
    """Splits a conversation into the messages that asked (the query) and the ones that answered (the response).

    Any function ``(conversation) -> (query_messages, response_messages)`` is one, and so are the members of
    :class:`ConversationSplit`.

    Example:
        ```python
        def before_memory(conversation):
            for i, message in enumerate(conversation):
                if any(c.type == "function_call" and c.name == "recall" for c in message.contents):
                    return conversation[:i], conversation[i:]
            return ConversationSplit.LAST_TURN(conversation)
        ```
    """

    def __call__(self, conversation: list[Message]) -> tuple[list[Message], list[Message]]: ...


def _split_at(conversation: list[Message], index: int) -> tuple[list[Message], list[Message]]:
    if index < 0:
        return [], list(conversation)
    return conversation[: index + 1], conversation[index + 1 :]


def _last_turn(conversation: list[Message]) -> tuple[list[Message], list[Message]]:
    last = max((i for i, m in enumerate(conversation) if m.role == "user"), default=-1)
    return _split_at(conversation, last)


def _full(conversation: list[Message]) -> tuple[list[Message], list[Message]]:
    first = next((i for i, m in enumerate(conversation) if m.role == "user"), -1)
    return _split_at(conversation, first)


class ConversationSplit(str, Enum):
    """The built-in splits: ``LAST_TURN`` judges the answer to the latest question, ``FULL`` the whole exchange.

    ``LAST_TURN`` ends the query at the last user message; ``FULL`` ends it at the first one, so everything the
    agent did after the original request is the response. Members are callable splitters.

    Example:
        ```python
        query, response = ConversationSplit.FULL(conversation)
        ```
    """

    LAST_TURN = "last_turn"
    FULL = "full"

    def __call__(self, conversation: list[Message]) -> tuple[list[Message], list[Message]]:
        """Split ``conversation`` this way."""
        return (_last_turn if self is ConversationSplit.LAST_TURN else _full)(conversation)


@dataclass
class ExpectedToolCall:
    """A tool call the agent should make: its name and, optionally, arguments it should include.

    Attributes:
        name: The tool's name.
        arguments: Arguments the call should carry (a subset check); ``None`` does not check them.

    Example:
        ```python
        ExpectedToolCall("get_weather", {"location": "NYC"})
        ```
    """

    name: str
    arguments: dict[str, Any] | None = None


class EvalItem:
    """One interaction to evaluate: the conversation, and what it is judged against.

    The conversation is the one source of truth: :attr:`query` and :attr:`response` are read from it through
    the split (``ConversationSplit.LAST_TURN`` unless ``split_strategy`` says otherwise).

    Args:
        conversation: The messages, the question first.
        tools: The tools the agent had (``FunctionTool`` objects).
        context: A grounding document, for evaluators that check answers against it.
        expected_output: The expected answer.
        expected_tool_calls: The tool calls the agent should make.
        split_strategy: How to split the conversation into query and response.

    Example:
        ```python
        from agentnb import Message
        from agentnb.evals import EvalItem

        item = EvalItem([Message("user", ["Hi"]), Message("assistant", ["Hello!"])])
        item.query, item.response  # ('Hi', 'Hello!')
        ```
    """

    def __init__(
        self,
        conversation: list[Message],
        tools: list[FunctionTool] | None = None,
        context: str | None = None,
        expected_output: str | None = None,
        expected_tool_calls: list[ExpectedToolCall] | None = None,
        split_strategy: ConversationSplitter | None = None,
    ) -> None:
        self.conversation = conversation
        self.tools = tools
        self.context = context
        self.expected_output = expected_output
        self.expected_tool_calls = expected_tool_calls
        self.split_strategy = split_strategy

    def __repr__(self) -> str:
        return f"EvalItem(query={self.query[:40]!r}, response={self.response[:40]!r})"

    def split_messages(self, split: ConversationSplitter | None = None) -> tuple[list[Message], list[Message]]:
        """The (query, response) messages: by ``split``, else the item's ``split_strategy``, else the last turn."""
        return (split or self.split_strategy or ConversationSplit.LAST_TURN)(self.conversation)

    @property
    def query(self) -> str:
        """The user messages' text on the query side of the split."""
        asked, _ = self.split_messages()
        return " ".join(m.text for m in asked if m.role == "user" and m.text).strip()

    @property
    def response(self) -> str:
        """The assistant messages' text on the response side of the split."""
        _, answered = self.split_messages()
        return " ".join(m.text for m in answered if m.role == "assistant" and m.text).strip()

    @staticmethod
    def _split_last_turn_static(conversation: list[Message]) -> tuple[list[Message], list[Message]]:
        """The last-turn split, for custom splitters to fall back on."""
        return _last_turn(conversation)

    @staticmethod
    def per_turn_items(
        conversation: list[Message],
        *,
        tools: list[FunctionTool] | None = None,
        context: str | None = None,
    ) -> list[EvalItem]:
        """One item per user turn, each holding the conversation up to the next user message.

        So every answer is judged with everything that came before it, and nothing after.
        """
        starts = [i for i, m in enumerate(conversation) if m.role == "user"]
        ends = [*starts[1:], len(conversation)]
        return [EvalItem(conversation[:end], tools=tools, context=context) for end in ends]


def _loads(value: Any) -> Any:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return json.loads(value)
    return value


def _data_uri(content: Any) -> str | None:
    if content.uri:
        return str(content.uri)
    if content.data is not None:
        encoded = base64.b64encode(bytes(content.data)).decode("ascii")
        return f"data:{content.media_type or 'application/octet-stream'};base64,{encoded}"
    return None


class AgentEvalConverter:
    """Turns messages, tools and agent runs into what evaluation services take (OpenAI-style agent messages).

    All methods are static.

    Example:
        ```python
        from agentnb import Message
        from agentnb.evals import AgentEvalConverter

        AgentEvalConverter.convert_messages([Message("user", ["Hi"])])
        # [{'role': 'user', 'content': [{'type': 'text', 'text': 'Hi'}]}]
        ```
    """

    @staticmethod
    def convert_message(message: Message) -> list[dict[str, Any]]:
        """One message as evaluator messages: tool results become one ``tool`` message each.

        Text becomes ``text`` parts, images ``input_image`` parts, tool calls ``tool_call`` parts (arguments
        that are not JSON are replaced by a placeholder, so they do not leak to an evaluation service).
        """
        parts: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for content in message.contents:
            if content.type == "text" and content.text:
                parts.append({"type": "text", "text": content.text})
            elif content.type in ("data", "uri") and (uri := _data_uri(content)):
                image: dict[str, Any] = {"type": "input_image", "image_url": uri}
                if content.media_type:
                    image["detail"] = "auto"
                parts.append(image)
            elif content.type == "function_call":
                arguments: Any = content.arguments
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        arguments = {"_raw_arguments": "[unparseable]"}
                call: dict[str, Any] = {
                    "type": "tool_call",
                    "tool_call_id": content.call_id or "",
                    "name": content.name or "",
                }
                if arguments:
                    call["arguments"] = arguments
                parts.append(call)
            elif content.type == "function_result":
                results.append(
                    {
                        "role": "tool",
                        "tool_call_id": content.call_id or "",
                        "content": [{"type": "tool_result", "tool_result": _loads(content.result)}],
                    }
                )
        if results:
            return results
        return [{"role": message.role, "content": parts or [{"type": "text", "text": ""}]}]

    @staticmethod
    def convert_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Every message converted, in order."""
        return [converted for m in messages for converted in AgentEvalConverter.convert_message(m)]

    @staticmethod
    def extract_tools(agent: Any) -> list[dict[str, Any]]:
        """The agent's function tools as ``{"name", "description", "parameters"}`` (MCP tools included)."""
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters()} for t in agent_tools(agent)
        ]

    @staticmethod
    def to_eval_item(
        *,
        query: str | Sequence[Message],
        response: Any,
        agent: Any | None = None,
        tools: Sequence[FunctionTool] | None = None,
        context: str | None = None,
    ) -> EvalItem:
        """An item from one agent run: the query (text or messages), then the response's messages.

        Args:
            query: What the agent was asked.
            response: Its ``AgentResponse``.
            agent: The agent, to read its tools from.
            tools: The tools, when not read from ``agent``.
            context: A grounding document.
        """
        asked = [Message("user", [query])] if isinstance(query, str) else list(query)
        typed = list(tools) if tools else (agent_tools(agent) if agent is not None else [])
        return EvalItem([*asked, *(response.messages or [])], tools=typed or None, context=context)


def agent_tools(agent: Any) -> list[FunctionTool]:
    """The function tools an agent offers: its own, its default options', and its connected MCP servers'."""
    from .._tools import FunctionTool, to_tool

    found: list[FunctionTool] = []
    seen: set[str] = set()
    options: dict[str, Any] = getattr(agent, "default_options", None) or {}
    candidates: list[Any] = [
        *cast("list[Any]", getattr(agent, "tools", None) or []),
        *cast("list[Any]", options.get("tools") or []),
    ]
    for candidate in candidates:
        functions = getattr(candidate, "functions", None)  # an MCP server: the tools it offers now
        group: list[Any] = list(cast("list[Any]", functions)) if isinstance(functions, list) else [candidate]
        for item in group:
            try:
                function = item if isinstance(item, FunctionTool) else to_tool(item)
            except TypeError:
                continue
            if function.name not in seen:
                seen.add(function.name)
                found.append(function)
    return found


def expected_calls(value: Any) -> list[ExpectedToolCall] | None:
    """A dataset's ``expected_tool_calls`` column (names, dicts or ``ExpectedToolCall``) as typed calls."""
    if value is None:
        return None
    if isinstance(value, str):
        value = json.loads(value)
    calls: list[ExpectedToolCall] = []
    for entry in cast("Sequence[Any]", value):
        if isinstance(entry, ExpectedToolCall):
            calls.append(entry)
        elif isinstance(entry, str):
            calls.append(ExpectedToolCall(entry))
        elif isinstance(entry, Mapping):
            entry = cast("Mapping[str, Any]", entry)
            calls.append(ExpectedToolCall(str(entry["name"]), entry.get("arguments")))
        else:
            raise TypeError(f"An expected tool call is a name, a dict or ExpectedToolCall, got {type(entry).__name__}.")
    return calls


def item_from_case(
    case: EvalCase,
    result: CaseResult,
    *,
    tools: list[FunctionTool] | None = None,
    split: ConversationSplitter | None = None,
) -> EvalItem:
    """The item a finished case stands for: its conversation, with the dataset's expectations.

    ``expected`` becomes ``expected_output``; the ``expected_tool_calls`` and ``context`` columns are read
    from the case's metadata. A result with no conversation (a function target) is its input and output.
    """
    conversation = result.conversation
    if not conversation:
        asked = case.input if isinstance(case.input, str) else json.dumps(case.input, default=str)
        answer = result.output if isinstance(result.output, str) else json.dumps(result.output, default=str)
        conversation = [
            Message("user", [asked]),
            *([Message("assistant", [answer])] if result.output is not None else []),
        ]
    metadata = case.metadata
    context = metadata.get("context")
    return EvalItem(
        conversation,
        tools=tools,
        context=None if context is None else str(context),
        expected_output=None if case.expected is None else str(case.expected),
        expected_tool_calls=expected_calls(metadata.get("expected_tool_calls")),
        split_strategy=split,
    )
