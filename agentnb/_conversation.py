"""Conversation bookkeeping: which tool calls wait for approval, which answers count, what the model sees.

Approval is data in the conversation: a model reply's ``function_call`` contents that need a person's
decision get ``function_approval_request`` contents next to them, and the person's decisions come back as
``function_approval_response`` contents in a later user message. Every part of agentnb that reads those
contents asks this module: the function-invocation loop (what is pending, whether an answer is valid, what
the model is shown), :class:`~agentnb.ToolApprovalMiddleware`, workflow executors that forward requests
(:class:`ApprovalGate`), and the notebook and DevUI views (:func:`approval_states`).

The rules, in one place:

- **A pending batch** is the last assistant message whose calls have no results yet; the search stops at the
  model's last plain answer, so a settled history costs nothing however long it is.
- **Which calls need a request** (:func:`calls_needing_approval`): if any call of a reply needs approval,
  the batch pauses as a whole. With a session (which keeps the batch in its history) only the calls that
  need a person's decision get requests; the free calls run when the answers arrive. Without a session
  every call of the batch gets a request, because the caller may resume with the answers alone and each
  answer carries its call.
- **Answers** (:func:`check_answers`) must match a pending request exactly (id, tool, call id, arguments)
  and arrive once. Without a session and with no pending batch in the messages, answers stand alone: each
  carries the call it approves (see :func:`standalone_answers`).
- **The model sees** (:func:`for_model`) no approval bookkeeping and no call without a result.

Every turn re-reads the whole history, so what a message holds is cached on it (``Message`` keeps two slots
for this module's caches) and the summary of a settled history is carried from turn to turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

from ._types import Content, Message, call_arguments
from .exceptions import ApprovalError

if TYPE_CHECKING:
    from ._tools import FunctionTool

__all__ = [
    "CONTROL_TYPES",
    "HAS_CALL",
    "HAS_CONTROL",
    "HAS_RESULT",
    "ApprovalGate",
    "ApprovalState",
    "PendingBatch",
    "approval_request",
    "approval_required",
    "approval_states",
    "calls_in",
    "calls_needing_approval",
    "check_answers",
    "for_model",
    "has_new_answers",
    "is_hosted_approval",
    "iterations_used",
    "pending_requests",
    "same_call",
    "standalone_answers",
    "strip_approvals",
    "tool_kinds",
    "unanswered_requests",
]

#: Content types that are approval bookkeeping (never shown to the model, never accepted from it).
CONTROL_TYPES: tuple[str, str] = ("function_approval_request", "function_approval_response")
HAS_CALL, HAS_RESULT, HAS_CONTROL = 1, 2, 4
_NO_IDS: frozenset[str] = frozenset()

ApprovalState = Literal["pending", "approved", "denied"]


# -- what a message holds (cached) ---------------------------------------------------------------------------


def is_hosted_approval(content: Content) -> bool:
    """Whether an approval request or answer is for a tool the provider runs (its call names a ``server_label``).

    The provider asked for it and takes the answer, so agentnb never settles or runs it: it is neither pending
    bookkeeping nor an answer for this loop, and goes to the model call as it is.
    """
    call = content.function_call
    return call is not None and "server_label" in call.additional_properties


def tool_kinds(message: Message) -> int:
    """Which kinds of tool content a message holds (``HAS_CALL | HAS_RESULT | HAS_CONTROL``), cached on it.

    The cache is keyed by the contents list and its length, so replacing or appending contents is seen.
    """
    contents = message.contents
    cached = message._kinds_cache  # pyright: ignore[reportPrivateUsage]
    if cached is not None and cached[0] is contents and cached[1] == len(contents):
        return cached[2]
    kinds = 0
    for content in contents:
        kind = content.type
        if kind == "function_call":
            kinds |= HAS_CALL
        elif kind == "function_result":
            kinds |= HAS_RESULT
        elif kind in CONTROL_TYPES and not is_hosted_approval(content):
            kinds |= HAS_CONTROL
    message._kinds_cache = (contents, len(contents), kinds)  # pyright: ignore[reportPrivateUsage]
    return kinds


def calls_in(message: Message) -> list[Content]:
    """The ``function_call`` contents of a message that are for agentnb to run.

    A call marked ``informational_only`` (one the provider already ran, kept for the transcript) is not one.
    """
    if not tool_kinds(message) & HAS_CALL:
        return []
    return [c for c in message.contents if c.type == "function_call" and not c.informational_only]


def _result_ids(message: Message) -> frozenset[str] | set[str]:
    if not tool_kinds(message) & HAS_RESULT:
        return _NO_IDS
    return {c.call_id for c in message.contents if c.type == "function_result" and c.call_id}


def _is_plain_answer(message: Message) -> bool:
    """An assistant message with no tool calls or approval requests: the end of a settled turn."""
    return message.role == "assistant" and not tool_kinds(message)


def same_call(a: Content | None, b: Content | None) -> bool:
    """Whether two ``function_call`` contents are the same call: call id, tool name and arguments."""
    if a is None or b is None:
        return False
    try:
        return a.call_id == b.call_id and a.name == b.name and call_arguments(a) == call_arguments(b)
    except ValueError:
        return False


# -- which calls need a person ------------------------------------------------------------------------------


def approval_required(tool: FunctionTool | None) -> bool:
    """Whether calls of ``tool`` need a person's approval before they run."""
    return tool is not None and tool.approval_mode == "always_require"


def approval_request(call: Content, tool: FunctionTool | None) -> Content:
    """A new approval request for one call occurrence, naming the tool's source (its MCP server, if any).

    The id is the call id plus a random suffix: a model may reuse a call id in a later round, and an answer
    to the first occurrence must never approve the second.
    """
    request = Content.from_function_approval_request(f"{call.call_id}:{uuid.uuid4().hex[:12]}", call)
    if tool is not None:
        # The call alone cannot tell same-named tools of two sources apart (None: a local tool); rules and
        # the resume check need to.
        request.additional_properties["server_label"] = tool.additional_properties.get("server_label")
    return request


def calls_needing_approval(
    calls: Sequence[Content], tools_by_name: Mapping[str, FunctionTool], *, has_session: bool
) -> list[Content]:
    """The calls of a new batch that get approval requests (empty: the batch runs now).

    As in Agent Framework: one call that needs approval pauses the whole batch. With a session the pending
    batch stays in its history, so only calls a person must decide (approval-required or unknown tools) are
    asked about and the free calls run with them once answered. Without a session the caller may resume
    with the answers alone, so every call is asked about and each answer carries its call: none is lost.
    """
    if not any(approval_required(tools_by_name.get(c.name or "")) for c in calls):
        return []
    if not has_session:
        return list(calls)
    return [c for c in calls if (t := tools_by_name.get(c.name or "")) is None or approval_required(t)]


# -- the pending batch --------------------------------------------------------------------------------------


@dataclass
class PendingBatch:
    """The last assistant message whose tool calls have no results yet, with its approval requests."""

    index: int
    calls: list[Content]
    requests: dict[str, Content]  # request id -> request content

    @classmethod
    def find(cls, conversation: Sequence[Message]) -> PendingBatch | None:
        """The batch waiting for approval answers, if any.

        The search stops at the model's last plain answer: a batch before it was settled, so a long
        conversation costs no more per turn than a short one.
        """
        for index in range(len(conversation) - 1, -1, -1):
            message = conversation[index]
            if _is_plain_answer(message):
                return None
            calls = calls_in(message) if message.role == "assistant" else []
            if not calls:
                continue
            answered: set[str] = set()
            for later in conversation[index + 1 :]:
                answered |= _result_ids(later)
            if all(c.call_id in answered for c in calls):
                return None
            requests = {
                c.id: c
                for m in conversation[index:]
                for c in m.contents
                if c.type == "function_approval_request" and c.id is not None and not is_hosted_approval(c)
            }
            return cls(index, calls, requests)
        return None

    def settle(
        self, conversation: Sequence[Message], tools_by_name: Mapping[str, FunctionTool]
    ) -> tuple[list[Content | None], list[Content]]:
        """Pair each call with its answer: ``(answers, waiting)``.

        ``answers[i]`` is the person's answer for ``calls[i]`` (``None``: the call needs none); ``waiting``
        holds the requests still unanswered (new ones for approval-required calls that never got one). Each
        call occurrence is paired with its own request (a model may repeat a call id inside one reply), so an
        answer approves exactly one call, never a sibling that shares its id. Answers must have passed
        :func:`check_answers`.
        """
        answers: dict[str, Content] = {}
        for message in conversation[self.index + 1 :]:
            for content in message.contents:
                if (
                    content.type == "function_approval_response"
                    and content.id is not None
                    and not is_hosted_approval(content)
                ):
                    answers[content.id] = content
        unclaimed = list(self.requests.values())
        paired: list[Content | None] = []
        waiting: list[Content] = []
        for call in self.calls:
            request = next((r for r in unclaimed if same_call(r.function_call, call)), None)
            if request is not None:
                unclaimed.remove(request)
            tool = tools_by_name.get(call.name or "")
            if request is None and not approval_required(tool):
                paired.append(None)
                continue
            answer = answers.get(request.id or "") if request is not None else None
            if answer is not None and request is not None and tool is not None and _moved(request, tool):
                # The tool of that name now comes from another source than the one the person approved.
                answer = Content.from_function_approval_response(
                    request.id or "",
                    False,
                    call,
                    reason=f"the approval was for {call.name!r} from another source "
                    f"({request.additional_properties['server_label']!r}); call it again to ask anew",
                )
            if answer is None:
                waiting.append(request if request is not None else approval_request(call, tool))
            paired.append(answer)
        return paired, waiting


def _moved(request: Content, tool: FunctionTool) -> bool:
    labels = request.additional_properties
    return "server_label" in labels and labels["server_label"] != tool.additional_properties.get("server_label")


def _answers_start(conversation: Sequence[Message]) -> int:
    """Where unprocessed approval answers may start: after the last tool results or plain answer."""
    for index in range(len(conversation) - 1, -1, -1):
        message = conversation[index]
        if tool_kinds(message) & HAS_RESULT or _is_plain_answer(message):
            return index
    return -1


def has_new_answers(conversation: Sequence[Message]) -> bool:
    """Whether approval answers follow the conversation's last settled point (tool results or a plain answer).

    That is where :func:`check_answers` and :func:`standalone_answers` look when no batch is pending: without
    answers there, a turn has nothing to settle. One backward pass over the unsettled end of the conversation.
    """
    for index in range(len(conversation) - 1, -1, -1):
        message = conversation[index]
        kinds = tool_kinds(message)
        if kinds & HAS_RESULT or (not kinds and message.role == "assistant"):
            return False  # the settled point (see _answers_start): nothing after it held an answer
        if kinds & HAS_CONTROL:
            return True
    return False


def check_answers(conversation: Sequence[Message], batch: PendingBatch | None, *, standalone: bool = False) -> None:
    """Refuse answers that match no pending request: unknown, already answered, forged or repeated.

    Args:
        conversation: The whole conversation of the request.
        batch: The pending batch (``None``: nothing is pending).
        standalone: With no pending batch, accept answers that carry their own call (see
            :func:`standalone_answers`); only without a session, whose history would hold the request.

    Raises:
        ApprovalError: An answer that does not count; nothing may run.
    """
    start = batch.index if batch is not None else _answers_start(conversation)
    seen: set[str] = set()
    answered: set[str] | None = None  # with ``asked``: looked up once, and only for standalone answers
    asked: dict[str | None, Content | None] = {}
    for message in conversation[start + 1 :]:
        if not tool_kinds(message) & HAS_CONTROL:
            continue
        for content in message.contents:
            if content.type != "function_approval_response" or is_hosted_approval(content):
                continue
            rid = content.id or ""
            if rid in seen:
                raise ApprovalError(f"Approval request {rid!r} was answered twice; nothing was executed.")
            seen.add(rid)
            if batch is None and standalone:
                call = content.function_call
                if call is None or call.type != "function_call" or not call.call_id or not call.name:
                    raise ApprovalError(f"Approval response {rid!r} carries no function call; nothing was executed.")
                if answered is None:
                    answered = {i for m in conversation for i in _result_ids(m)}
                    asked = {
                        c.id: c.function_call
                        for m in conversation
                        if tool_kinds(m) & HAS_CONTROL
                        for c in m.contents
                        if c.type == "function_approval_request"
                    }
                if rid in asked:
                    # The caller resent the request with its answer (Agent Framework's sample does, one request
                    # and answer per message): it counts while its call has no result, for that very call.
                    requested = asked[rid]
                    if call.call_id in answered or (requested is not None and requested.call_id in answered):
                        raise ApprovalError(
                            f"Approval response {rid!r} answers a request that was already answered; "
                            "nothing was executed."
                        )
                    if not same_call(call, requested):
                        raise ApprovalError(
                            f"Approval response {rid!r} does not match the requested call "
                            f"{requested.name if requested is not None else '?'!r}; nothing was executed."
                        )
                    continue
                if call.call_id in answered:
                    raise ApprovalError(
                        f"Approval response {rid!r} answers call {call.call_id!r}, which already has a result; "
                        "nothing was executed."
                    )
                continue
            request = batch.requests.get(rid) if batch is not None else None
            if request is None:
                raise ApprovalError(
                    f"Approval response {rid!r} answers no pending request (unknown or already answered); "
                    "nothing was executed."
                )
            if not same_call(content.function_call, request.function_call):
                raise ApprovalError(
                    f"Approval response {rid!r} does not match the requested call "
                    f"{request.function_call.name if request.function_call else '?'!r}; nothing was executed."
                )


def standalone_answers(conversation: Sequence[Message]) -> list[Content]:
    """Answers after the last settled point, when no request of theirs is in the conversation (checked already).

    A caller without a session may resume with the answers alone, as in Agent Framework: each answer carries
    the call it decides, which then runs (approved) or gets a denial result.
    """
    start = _answers_start(conversation)
    return [
        c
        for m in conversation[start + 1 :]
        if tool_kinds(m) & HAS_CONTROL
        for c in m.contents
        if c.type == "function_approval_response" and not is_hosted_approval(c)
    ]


def iterations_used(conversation: Sequence[Message]) -> int:
    """Model calls that asked for tools since the person last said something (approvals don't count)."""
    used = 0
    for message in reversed(conversation):
        if message.role == "user" and (
            (message.contents and not tool_kinds(message) & HAS_CONTROL)  # the usual input: no generator
            or any(c.type != "function_approval_response" for c in message.contents)
        ):
            break
        if message.role == "assistant" and calls_in(message):
            used += 1
    return used


# -- what is pending, for callers and views -------------------------------------------------------------------


def unanswered_requests(messages: Iterable[Message]) -> list[Content]:
    """Approval requests in ``messages`` that no later approval response answers."""
    requests: dict[str, Content] = {}
    for message in messages:
        for content in message.contents:
            if content.type == "function_approval_request" and content.id is not None:
                requests.setdefault(content.id, content)
            elif content.type == "function_approval_response" and content.id is not None:
                requests.pop(content.id, None)
    return list(requests.values())


def pending_requests(history: Sequence[Message]) -> list[Content]:
    """The approval requests a conversation still waits on (those of its pending batch)."""
    batch = PendingBatch.find(history)
    if batch is None:
        return []
    return unanswered_requests(history[batch.index :])


def approval_states(messages: Iterable[Message]) -> dict[str, ApprovalState]:
    """Approval state by call id, for views: ``"pending"``, ``"approved"`` or ``"denied"``."""
    call_of_request: dict[str, str] = {}
    states: dict[str, ApprovalState] = {}
    for message in messages:
        if not tool_kinds(message) & HAS_CONTROL:
            continue
        for c in message.contents:
            if c.type not in CONTROL_TYPES:
                continue
            call_id = c.function_call.call_id if c.function_call is not None else None
            if c.type == "function_approval_request":
                if call_id:
                    call_of_request[c.id or ""] = call_id
                    states.setdefault(call_id, "pending")
            elif target := call_id or call_of_request.get(c.id or ""):
                states[target] = "approved" if c.approved else "denied"
    return states


# -- what the model sees --------------------------------------------------------------------------------------


def _with_contents(message: Message, kept: list[Content]) -> Message:
    return Message(
        message.role,
        kept,
        author_name=message.author_name,
        message_id=message.message_id,
        additional_properties=message.additional_properties,
    )


def strip_approvals(messages: Sequence[Message]) -> list[Message]:
    """The messages without approval bookkeeping (requests and answers): a conversation that reads like a chat."""
    out: list[Message] = []
    for message in messages:
        if not tool_kinds(message) & HAS_CONTROL:
            out.append(message)
            continue
        kept = [c for c in message.contents if c.type not in CONTROL_TYPES]
        if kept:
            out.append(_with_contents(message, kept))
    return out


class _Scan:
    """What :func:`_history_kinds` learned about a run of messages, kept on the run's last message.

    The next turn's conversation holds the same Message objects (from the session's history) followed by
    new ones, so only the new ones need a look. The summary is reused only if every message of the run is
    the same object with the same contents list of the same length (the per-message cache key), checked
    with C-level passes instead of a Python loop over the history.
    """

    __slots__ = ("answered", "contents", "lengths", "messages", "seen")

    def __init__(self, messages: list[Message], seen: int, answered: set[str]) -> None:
        self.messages = messages
        self.contents = list(map(_contents_of, messages))
        self.lengths = list(map(len, self.contents))
        self.seen = seen
        self.answered = answered

    def covers(self, window: list[Message]) -> bool:
        # List equality checks identity first, element by element, in C: Message and Content compare by
        # value only when the objects differ, and then equal values have equal kinds anyway.
        if window != self.messages:
            return False
        contents = list(map(_contents_of, window))
        return contents == self.contents and list(map(len, contents)) == self.lengths


_contents_of = attrgetter("contents")


_SHORT = 4
"""Conversations up to this many messages (after leading instructions) are scanned without a summary."""


def _history_kinds(conversation: list[Message]) -> tuple[int, set[str]]:
    """Kinds of all messages and the call ids of all function results, reusing the last turn's summary."""
    n = len(conversation)
    # Leading system messages are usually instructions rebuilt every turn: the summary leaves them out
    # (when they hold no tool content) so that it still matches next turn.
    first = 0
    while first < n and conversation[first].role == "system" and not tool_kinds(conversation[first]):
        first += 1
    if first == n:
        return 0, set()
    if n - first <= _SHORT:
        # A fresh request: a direct look is cheaper than a summary (one is made once the conversation grows).
        seen, answered = 0, set[str]()
        for message in conversation[first:]:
            kinds = tool_kinds(message)
            seen |= kinds
            if kinds & HAS_RESULT:
                answered |= _result_ids(message)
        return seen, answered
    memo: _Scan | None = None
    for j in range(n - 1, first - 1, -1):  # the latest summary sits a few messages from the end
        found = conversation[j]._scan_cache  # pyright: ignore[reportPrivateUsage]
        if found is None:
            continue
        conversation[j]._scan_cache = None  # pyright: ignore[reportPrivateUsage]  # moves to the last message
        starts_at_first = isinstance(found, _Scan) and j + 1 - len(found.messages) == first
        if starts_at_first and found.covers(conversation[first : j + 1]):
            memo = found
        break
    if memo is None:
        memo = _Scan([], 0, set())
    start = first + len(memo.messages)
    seen, answered = memo.seen, memo.answered
    tail = conversation[start:]
    for message in tail:
        kinds = tool_kinds(message)
        seen |= kinds
        if kinds & HAS_RESULT:
            answered |= _result_ids(message)
    memo.seen = seen
    memo.messages.extend(tail)
    tail_contents = list(map(_contents_of, tail))
    memo.contents.extend(tail_contents)
    memo.lengths.extend(map(len, tail_contents))
    conversation[-1]._scan_cache = memo  # pyright: ignore[reportPrivateUsage]
    return seen, answered


def for_model(conversation: list[Message]) -> list[Message]:
    """The conversation as the model should see it: no approval bookkeeping, no unanswered calls."""
    seen, answered = _history_kinds(conversation)
    if not seen & (HAS_CALL | HAS_CONTROL):
        return conversation  # nothing to hide: the common case costs one pass of cached checks
    out: list[Message] = []
    for message in conversation:
        if not tool_kinds(message) & (HAS_CALL | HAS_CONTROL):
            out.append(message)
            continue
        kept = [
            c
            for c in message.contents
            if (c.type not in CONTROL_TYPES or is_hosted_approval(c))
            and not (c.type == "function_call" and c.call_id not in answered)
        ]
        if not kept:
            continue
        out.append(message if len(kept) == len(message.contents) else _with_contents(message, kept))
    return out


# -- workflow executors that forward requests -------------------------------------------------------------------


@dataclass
class ApprovalGate:
    """The approval requests a workflow executor forwarded to the workflow's caller and waits on.

    :class:`~agentnb.workflows.AgentExecutor` and the orchestration participants share one rule for taking an
    answer: it must be a ``function_approval_response`` for that very request (same id, same call) or a plain
    ``True``/``False``. Anything else does not cost the pending approval: the executor emits a ``warning``
    event saying why and asks again (a new request id, the same request). The agent runs again once every
    forwarded request has an answer, so several calls waiting at once resume together.
    """

    awaiting: list[str] = field(default_factory=list)

    def forward(self, requests: Iterable[Content]) -> list[Content]:
        """Remember ``requests`` as waiting; returns them (to pass to ``ctx.request_info``)."""
        out = list(requests)
        self.awaiting.extend(r.id or "" for r in out)
        return out

    @staticmethod
    def as_answer(request: Content, answer: Content | bool) -> Content | None:
        """The answer as a ``function_approval_response`` for ``request``; ``None`` when it does not fit."""
        if isinstance(answer, bool):
            return request.to_function_approval_response(answer)
        if (
            answer.type != "function_approval_response"
            or answer.id != request.id
            or not same_call(answer.function_call, request.function_call)
        ):
            return None
        return answer

    @staticmethod
    def wrong_answer_warning(executor_id: str, request: Content, answer: Content) -> str:
        """The ``warning`` event text for an answer that does not fit its request."""
        return (
            f"Executor {executor_id!r} expected the function_approval_response for approval request "
            f"{request.id!r}, got a {answer.type!r} content (id {answer.id!r}); the request is asked again. "
            "Answer with request.to_function_approval_response(True) or just True/False."
        )

    def answered(self, request: Content) -> bool:
        """Mark ``request`` answered; ``True`` once nothing else is waiting (time to run the agent again)."""
        if request.id in self.awaiting:
            self.awaiting.remove(request.id or "")
        return not self.awaiting

    def reset(self) -> None:
        """Forget every forwarded request."""
        self.awaiting.clear()
