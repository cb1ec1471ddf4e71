"""A scripted OpenAI-compatible HTTP server on loopback, for driving the real ``openai`` SDK in tests.

It speaks ``POST /v1/chat/completions`` and ``POST /v1/responses``, plain JSON and SSE streaming, and
answers from a script the test supplies (:class:`Reply`, :class:`ErrorReply`, or a function of the
request). Everything it sends is validated against the SDK's own pydantic models before it goes on the
wire, and every request body it receives is validated against the SDK's request ``TypedDict``s, so the
tests check the wire format against ``openai.types`` rather than against hand-written dicts alone.

Every request is recorded (:attr:`OpenAIServer.requests`): path, headers, JSON body, and whether the
client hung up before the reply was finished (a cancelled stream must close the connection).

Use it in-process (a uvicorn thread; the SDK talks to it over a real socket)::

    with OpenAIServer() as server:
        server.script(Reply(text="Hello!"))
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")

or as a subprocess that gives one fixed answer forever (used by the benchmark)::

    python tests/openai_server.py --port 8765 --reply "Hello!"
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ErrorReply",
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
    "ToolCall",
    "Usage",
]


@dataclass
class ToolCall:
    """One function call the scripted model makes."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Usage:
    """Token counts the scripted model reports."""

    input_tokens: int = 11
    output_tokens: int = 7
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class Reply:
    """A successful scripted answer, rendered for whichever API and mode the request used.

    Attributes:
        text: The assistant's text (streamed in ``chunk_size`` pieces).
        tool_calls: Function calls (several make a parallel call).
        reasoning: Reasoning text (Responses: a reasoning item with a summary; Chat Completions: the
            ``reasoning_content`` extension used by vLLM, DeepSeek and Ollama).
        refusal: A refusal instead of text.
        finish_reason: Chat Completions finish reason; defaults to ``tool_calls`` or ``stop``.
            ``"content_filter"`` / ``"length"`` make a Responses reply ``incomplete`` with that reason.
        usage: Token usage, or ``None`` to send none.
        chunk_size: Characters per streamed text/argument delta.
        chunk_delay: Seconds to sleep between streamed events (slow streams, cancellation).
        first_delay: Seconds to wait before answering at all (timeouts).
        interleave_tool_calls: Stream the argument deltas of parallel calls interleaved (Chat Completions).
        response_id: The id to answer with (generated when omitted).
        encrypted_reasoning: The Responses reasoning item's ``encrypted_content`` (stateless reasoning).
        stream_error: Fail a streamed reply after its content: an ``error`` chunk (Chat Completions) or a
            ``response.failed`` event (Responses) with this message.
        stream_error_code: The error code sent with ``stream_error`` (``rate_limit_exceeded``, ...).
        stream_error_event: Responses only: send the failure as a bare ``error`` event instead of
            ``response.failed``.
        cut_after: Drop the connection after this many streamed events, with no error and no end of stream
            (a proxy or server that died mid-response).
        hosted: Responses only: output items of hosted tools (``code_interpreter_call``, ``web_search_call``,
            ``image_generation_call``, ``mcp_call``, ``shell_call``, ...), sent before the message as given;
            the server checks each against the SDK's types like everything else it sends.
        annotations: Responses only: the ``output_text`` part's annotations (``url_citation``, ...), streamed
            as ``response.output_text.annotation.added`` events.
        polls: Responses with ``background: true`` only: how many ``GET /v1/responses/{id}`` polls still see
            the response running before it is complete (a background response is answered ``queued`` at first).
        provider_fields: Chat Completions only: fields outside the SDK's types that some providers add to the
            assistant message (OpenRouter's ``reasoning_details``, ...); sent in the message, or streamed as a
            delta of their own before the text.
        provider_deltas: Chat Completions streaming only: stream these deltas before the text instead of
            ``provider_fields``' one (a field that arrives in fragments).
        null_finish_delta: Chat Completions streaming only: the finish chunk says ``"delta": null``, as Azure
            and some gateways send it (the SDK's types want ``{}``; the rest of the chunk is still checked).
        content_parts: Chat Completions only: the message's ``content`` as this list of typed parts instead of
            text, as Mistral's reasoning models send it (the SDK's types want text: the payload is checked with
            the content left out); streamed as one delta.
    """

    text: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    reasoning: str | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = field(default_factory=Usage)
    chunk_size: int = 4
    chunk_delay: float = 0.0
    first_delay: float = 0.0
    interleave_tool_calls: bool = False
    response_id: str | None = None
    stream_error: str | None = None
    stream_error_code: str = "server_error"
    stream_error_event: bool = False
    cut_after: int | None = None
    encrypted_reasoning: str | None = None
    hosted: Sequence[dict[str, Any]] = ()
    annotations: Sequence[dict[str, Any]] = ()
    polls: int = 0
    provider_fields: dict[str, Any] = field(default_factory=dict)
    provider_deltas: Sequence[dict[str, Any]] = ()
    null_finish_delta: bool = False
    content_parts: Sequence[dict[str, Any]] = ()


@dataclass
class ErrorReply:
    """An HTTP error answer in OpenAI's error envelope."""

    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


Script = Reply | ErrorReply | Callable[["RecordedRequest"], "Reply | ErrorReply"]


@dataclass
class RecordedRequest:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    completed: bool = False
    disconnected: bool = False

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


def embedding_of(text: str, size: int) -> list[float]:
    """The server's deterministic stand-in for an embedding model: ``size`` floats derived from the text."""
    import hashlib

    digest = hashlib.sha256(text.encode()).digest()
    return [round((digest[i % len(digest)] - 128) / 128, 6) for i in range(size)]


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


# --- validation against the SDK's own types (built lazily: the chat params adapter takes ~1 s) ---

_ADAPTERS: dict[str, Any] = {}
_ADAPTER_LOCK = threading.Lock()


def _adapter(name: str) -> Any:
    with _ADAPTER_LOCK:
        if name not in _ADAPTERS:
            from openai.types.chat import ChatCompletion, ChatCompletionChunk
            from openai.types.chat import completion_create_params as ccp
            from openai.types.responses import Response, ResponseStreamEvent
            from openai.types.responses import response_create_params as rcp
            from pydantic import TypeAdapter

            targets: dict[str, Any] = {
                "chat_request": ccp.CompletionCreateParamsBase,
                "responses_request": rcp.ResponseCreateParamsBase,
                "chat_completion": ChatCompletion,
                "chat_chunk": ChatCompletionChunk,
                "response": Response,
                "response_event": ResponseStreamEvent,
            }
            _ADAPTERS[name] = (targets[name], TypeAdapter(targets[name]))
        return _ADAPTERS[name]


def _materialize(value: Any) -> Any:
    """Consume pydantic's lazy iterator validators so nested ``Iterable[...]`` items get validated too."""
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_materialize(v) for v in value]
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__iter__") and not hasattr(value, "model_dump"):
        return [_materialize(v) for v in value]
    return value


def validate_request(path: str, body: dict[str, Any], extra_params: set[str] | frozenset[str] = frozenset()) -> None:
    """Validate a request body with the SDK's create-params ``TypedDict``; raise ``ValueError`` if invalid."""
    name = "chat_request" if path.endswith("chat/completions") else "responses_request"
    params, adapter = _adapter(name)
    # TypedDict validation ignores unknown keys; catch misspelled top-level parameters explicitly.
    unknown = set(body) - params.__required_keys__ - params.__optional_keys__ - {"stream"} - extra_params
    if unknown:
        raise ValueError(f"unknown request parameters: {sorted(unknown)}")
    _materialize(adapter.validate_python(body))


def _conforming(payload: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions payload with the deviations a :class:`Reply` asks for undone (a null delta, typed-part
    content), so that the rest of it is still checked against the SDK's types."""
    choices: list[dict[str, Any]] = []
    for choice in payload.get("choices") or ():
        choice = dict(choice)
        for key in ("delta", "message"):
            if key in choice:
                part = dict(choice[key] or {})
                if isinstance(part.get("content"), list):
                    part["content"] = None
                choice[key] = part
        choices.append(choice)
    return {**payload, "choices": choices} if "choices" in payload else payload


def validate_payload(kind: str, payload: dict[str, Any]) -> None:
    """Validate an outgoing payload against the SDK's response model of that kind."""
    _adapter(kind)[1].validate_python(payload)


# --- rendering ---------------------------------------------------------------------------------------


class _Renderer:
    """Turns a :class:`Reply` into Chat Completions or Responses payloads."""

    def __init__(self, reply: Reply, request: RecordedRequest, ids: Iterator[int]) -> None:
        self.reply = reply
        self.request = request
        self.model = str(request.body.get("model") or "test-model")
        self.created = int(time.time())
        self.ids = ids
        self.calls = [ToolCall(c.name, c.arguments, c.call_id or f"call_{next(ids)}") for c in reply.tool_calls]

    # Chat Completions -----------------------------------------------------------------------------

    def chat_finish_reason(self) -> str:
        if self.reply.finish_reason:
            return self.reply.finish_reason
        return "tool_calls" if self.calls else "stop"

    def chat_usage(self) -> dict[str, Any] | None:
        u = self.reply.usage
        if u is None:
            return None
        return {
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        }

    def chat_completion(self, response_id: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.reply.text, "refusal": self.reply.refusal}
        if self.calls:
            message["tool_calls"] = [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
                for c in self.calls
            ]
        if self.reply.reasoning is not None:
            message["reasoning_content"] = self.reply.reasoning
        message.update(self.reply.provider_fields)
        if self.reply.content_parts:
            message["content"] = list(self.reply.content_parts)
        if self.reply.annotations:
            message["annotations"] = [
                {"type": "url_citation", "url_citation": {k: v for k, v in a.items() if k != "type"}}
                for a in self.reply.annotations
            ]
        body: dict[str, Any] = {
            "id": response_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.chat_finish_reason(), "logprobs": None}],
        }
        usage = self.chat_usage()
        if usage is not None:
            body["usage"] = usage
        return body

    def chat_chunks(self, response_id: str) -> Iterator[dict[str, Any]]:
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": response_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        size = self.reply.chunk_size
        yield chunk({"role": "assistant", "content": ""})
        if self.reply.reasoning is not None:
            for piece in _chunks(self.reply.reasoning, size):
                yield chunk({"reasoning_content": piece})
        if self.reply.provider_deltas:
            for delta in self.reply.provider_deltas:
                yield chunk(dict(delta))
        elif self.reply.provider_fields:
            yield chunk(dict(self.reply.provider_fields))
        if self.reply.content_parts:
            yield chunk({"content": list(self.reply.content_parts)})
        if self.reply.text is not None:
            for piece in _chunks(self.reply.text, size):
                yield chunk({"content": piece})
        if self.reply.refusal is not None:
            for piece in _chunks(self.reply.refusal, size):
                yield chunk({"refusal": piece})
        heads = [
            {"index": i, "id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": ""}}
            for i, c in enumerate(self.calls)
        ]
        pieces = [
            [{"index": i, "function": {"arguments": p}} for p in _chunks(c.arguments_json(), size)]
            for i, c in enumerate(self.calls)
        ]
        if self.reply.interleave_tool_calls:
            for head in heads:
                yield chunk({"tool_calls": [head]})
            for group in itertools.zip_longest(*pieces):
                # Several calls' fragments in one delta, as some servers send them.
                yield chunk({"tool_calls": [p for p in group if p is not None]})
        else:
            for head, parts in zip(heads, pieces, strict=True):
                yield chunk({"tool_calls": [head]})
                for p in parts:
                    yield chunk({"tool_calls": [p]})
        if self.reply.stream_error is not None:
            # What OpenAI-compatible servers send when generation fails mid-stream (not a chunk).
            code = self.reply.stream_error_code
            yield {"error": {"message": self.reply.stream_error, "type": code, "code": code}}
            return
        finish = chunk({}, self.chat_finish_reason())
        if self.reply.null_finish_delta:
            finish["choices"][0]["delta"] = None
        yield finish
        options = self.request.body.get("stream_options") or {}
        usage = self.chat_usage()
        if options.get("include_usage") and usage is not None:
            final = chunk({})
            final["choices"] = []
            final["usage"] = usage
            yield final

    # Responses ----------------------------------------------------------------------------------

    def responses_usage(self) -> dict[str, Any] | None:
        u = self.reply.usage
        if u is None:
            return None
        return {
            "input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.input_tokens + u.output_tokens,
        }

    def response_items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if self.reply.reasoning is not None:
            items.append(
                {
                    "id": f"rs_{next(self.ids)}",
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": self.reply.reasoning}],
                    "status": "completed",
                    "encrypted_content": self.reply.encrypted_reasoning,
                }
            )
        items.extend(dict(item) for item in self.reply.hosted)
        if self.reply.text is not None or self.reply.refusal is not None:
            content: list[dict[str, Any]] = []
            if self.reply.text is not None:
                annotations = [dict(a) for a in self.reply.annotations]
                content.append({"type": "output_text", "text": self.reply.text, "annotations": annotations})
            if self.reply.refusal is not None:
                content.append({"type": "refusal", "refusal": self.reply.refusal})
            items.append(
                {
                    "id": f"msg_{next(self.ids)}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": content,
                }
            )
        for c in self.calls:
            items.append(
                {
                    "id": f"fc_{next(self.ids)}",
                    "type": "function_call",
                    "call_id": c.call_id,
                    "name": c.name,
                    "arguments": c.arguments_json(),
                    "status": "completed",
                }
            )
        return items

    def response(self, response_id: str, output: list[dict[str, Any]], status: str) -> dict[str, Any]:
        body = self.request.body
        reason = self.reply.finish_reason
        incomplete = None
        if status == "incomplete":
            incomplete = {"reason": "max_output_tokens" if reason == "length" else reason}
        return {
            "id": response_id,
            "object": "response",
            "created_at": float(self.created),
            "model": self.model,
            "status": status,
            "output": output,
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice", "auto") if isinstance(body.get("tool_choice"), str) else "auto",
            "tools": [],
            "error": None,
            "incomplete_details": incomplete,
            "previous_response_id": body.get("previous_response_id"),
            "instructions": body.get("instructions"),
            "background": body.get("background"),
            "usage": self.responses_usage() if status != "in_progress" else None,
        }

    def final_status(self) -> str:
        return "incomplete" if self.reply.finish_reason in ("content_filter", "length") else "completed"

    def response_events(self, response_id: str) -> Iterator[dict[str, Any]]:
        seq = itertools.count()
        size = self.reply.chunk_size
        items = self.response_items()

        def event(kind: str, **data: Any) -> dict[str, Any]:
            return {"type": kind, "sequence_number": next(seq), **data}

        yield event("response.created", response=self.response(response_id, [], "in_progress"))
        yield event("response.in_progress", response=self.response(response_id, [], "in_progress"))
        for index, item in enumerate(items):
            kind = item["type"]
            if kind == "reasoning":
                text = item["summary"][0]["text"]
                yield event("response.output_item.added", output_index=index, item={**item, "summary": []})
                part = {"type": "summary_text", "text": ""}
                common = {"item_id": item["id"], "output_index": index, "summary_index": 0}
                yield event("response.reasoning_summary_part.added", part=part, **common)
                for piece in _chunks(text, size):
                    yield event("response.reasoning_summary_text.delta", delta=piece, **common)
                yield event("response.reasoning_summary_text.done", text=text, **common)
                yield event("response.reasoning_summary_part.done", part={**part, "text": text}, **common)
            elif kind == "message":
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "content": [], "status": "in_progress"},
                )
                for content_index, part in enumerate(item["content"]):
                    common = {"item_id": item["id"], "output_index": index, "content_index": content_index}
                    if part["type"] == "output_text":
                        empty = {"type": "output_text", "text": "", "annotations": []}
                        yield event("response.content_part.added", part=empty, **common)
                        for piece in _chunks(part["text"], size):
                            yield event("response.output_text.delta", delta=piece, logprobs=[], **common)
                        for number, annotation in enumerate(part["annotations"]):
                            yield event(
                                "response.output_text.annotation.added",
                                annotation=annotation,
                                annotation_index=number,
                                **common,
                            )
                        yield event("response.output_text.done", text=part["text"], logprobs=[], **common)
                    else:
                        empty = {"type": "refusal", "refusal": ""}
                        yield event("response.content_part.added", part=empty, **common)
                        for piece in _chunks(part["refusal"], size):
                            yield event("response.refusal.delta", delta=piece, **common)
                        yield event("response.refusal.done", refusal=part["refusal"], **common)
                    yield event("response.content_part.done", part=part, **common)
            elif kind != "function_call":  # a hosted tool's item: announced, then delivered finished
                yield event("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
            else:
                yield event(
                    "response.output_item.added",
                    output_index=index,
                    item={**item, "arguments": "", "status": "in_progress"},
                )
                common = {"item_id": item["id"], "output_index": index}
                for piece in _chunks(item["arguments"], size):
                    yield event("response.function_call_arguments.delta", delta=piece, **common)
                yield event(
                    "response.function_call_arguments.done", arguments=item["arguments"], name=item["name"], **common
                )
            yield event("response.output_item.done", output_index=index, item=item)
        if self.reply.stream_error is not None:
            code, message = self.reply.stream_error_code, self.reply.stream_error
            if self.reply.stream_error_event:
                yield event("error", code=code, message=message, param=None)
                return
            failed = self.response(response_id, items, "failed")
            failed["error"] = {"code": code, "message": message}
            yield event("response.failed", response=failed)
            return
        status = self.final_status()
        kind = "response.completed" if status == "completed" else "response.incomplete"
        yield event(kind, response=self.response(response_id, items, status))


# --- the server --------------------------------------------------------------------------------------


@dataclass
class _Background:
    """A background response the server keeps for polls and stream resumption."""

    renderer: _Renderer
    polls: int
    events: list[dict[str, Any]]


class OpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` answering from a per-test script.

    Example:
        >>> with OpenAIServer() as server:  # doctest: +SKIP
        ...     server.script(Reply(text="Hi"))
        ...     print(server.base_url)

    Args:
        validate: Validate requests and replies against the SDK's types (off in benchmarks).
        default: The answer when the script is empty; when ``None`` such a request gets a 500 and is
            listed in :attr:`unexpected`.
    """

    def __init__(self, *, validate: bool = True, default: Script | None = None) -> None:
        self.validate = validate
        self.default = default
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []
        self.validation_errors: list[str] = []
        # Non-OpenAI body parameters a test expects (e.g. ``top_k`` for vLLM); anything else is an error.
        self.extra_params: set[str] = set()
        self._queue: collections.deque[Script] = collections.deque()
        # Background responses by id: how they render, polls left before they complete, their stream's events.
        self.background: dict[str, _Background] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    # scripting --------------------------------------------------------------------------------

    def script(self, *replies: Script) -> None:
        """Queue answers; each request takes the next one."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted answers have not been used."""
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.unexpected.clear()
            self.background.clear()
            self.validation_errors.clear()
            self.extra_params.clear()

    def problems(self) -> list[str]:
        """What a test should fail on: invalid requests, requests without a scripted reply, unused replies."""
        found = []
        if self.validation_errors:
            found.append(f"requests that do not match the SDK's types: {self.validation_errors}")
        if self.unexpected:
            found.append(
                f"{len(self.unexpected)} request(s) had no scripted reply: {[r.body for r in self.unexpected]}"
            )
        if self.pending:
            found.append(f"{self.pending} scripted reply(ies) were never requested")
        return found

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Poll ``predicate`` until it is true or ``timeout`` passes (thread-safe waiting for the server)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.01)
        return predicate()

    async def until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Like :meth:`wait_for`, but yields to the event loop while waiting (use it inside async tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            await asyncio.sleep(0.01)
        return predicate()

    def _next(self, request: RecordedRequest) -> Reply | ErrorReply | None:
        with self._lock:
            script = self._queue.popleft() if self._queue else self.default
        if script is None:
            return None
        return script(request) if callable(script) else script

    # HTTP -------------------------------------------------------------------------------------

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        server = self

        async def handle(request: Request) -> Response:
            raw = await request.body()
            try:
                body = json.loads(raw)
            except ValueError:
                return JSONResponse({"error": {"message": "body is not JSON", "type": "invalid_request_error"}}, 400)
            record = RecordedRequest(request.url.path, dict(request.headers), body)
            with server._lock:
                server.requests.append(record)
            if server.validate:
                try:
                    validate_request(record.path, body, server.extra_params)
                except Exception as e:  # the test fails on this list; the client gets a clear 400
                    server.validation_errors.append(f"{record.path}: {e}")
                    return JSONResponse({"error": {"message": f"invalid request: {e}", "type": "invalid"}}, 400)
            reply = server._next(record)
            if reply is None:
                server.unexpected.append(record)
                record.completed = True
                return JSONResponse(
                    {"error": {"message": "the test server has no scripted reply left", "type": "server_error"}},
                    500,
                )
            delay = reply.first_delay if isinstance(reply, Reply) else 0.0
            if delay:
                try:
                    await asyncio.sleep(delay)
                except asyncio.CancelledError:
                    record.disconnected = True
                    raise
            if isinstance(reply, ErrorReply):
                record.completed = True
                error = {"message": reply.message, "type": reply.type, "param": None, "code": reply.code}
                return JSONResponse({"error": error}, reply.status, headers=reply.headers)
            renderer = _Renderer(reply, record, server._ids)
            is_chat = record.path.endswith("/chat/completions")
            response_id = reply.response_id or (
                f"chatcmpl-{next(server._ids)}" if is_chat else f"resp_{next(server._ids)}"
            )
            if not is_chat and body.get("background"):
                events = list(renderer.response_events(response_id)) if record.stream else []
                server.background[response_id] = _Background(renderer, reply.polls, events)
                if not record.stream:
                    record.completed = True
                    payload = renderer.response(response_id, [], "queued")
                    if server.validate:
                        validate_payload("response", payload)
                    return JSONResponse(payload)
            if not record.stream:
                payload = renderer.chat_completion(response_id) if is_chat else None
                if payload is None:
                    payload = renderer.response(response_id, renderer.response_items(), renderer.final_status())
                if server.validate:
                    validate_payload("chat_completion" if is_chat else "response", _conforming(payload))
                record.completed = True
                return JSONResponse(payload)
            events = renderer.chat_chunks(response_id) if is_chat else renderer.response_events(response_id)
            if reply.cut_after is not None:
                events = itertools.islice(events, reply.cut_after)
            return StreamingResponse(
                server._sse(record, events, is_chat, reply.chunk_delay, cut=reply.cut_after is not None),
                media_type="text/event-stream",
            )

        async def embeddings(request: Request) -> Response:
            body = json.loads(await request.body())
            record = RecordedRequest(request.url.path, dict(request.headers), body)
            with server._lock:
                server.requests.append(record)
                failure = (
                    server._queue.popleft() if server._queue and isinstance(server._queue[0], ErrorReply) else None
                )
            record.completed = True
            if isinstance(failure, ErrorReply):
                error = {"message": failure.message, "type": failure.type, "param": None, "code": failure.code}
                return JSONResponse({"error": error}, failure.status, headers=failure.headers)
            if server.validate:
                try:
                    from openai.types import EmbeddingCreateParams
                    from pydantic import TypeAdapter

                    TypeAdapter(EmbeddingCreateParams).validate_python(body)
                except Exception as e:
                    server.validation_errors.append(f"{record.path}: {e}")
                    return JSONResponse({"error": {"message": f"invalid request: {e}", "type": "invalid"}}, 400)
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            size = int(body.get("dimensions") or 8)
            payload = {
                "object": "list",
                "model": body["model"],
                "data": [
                    {"object": "embedding", "index": i, "embedding": embedding_of(str(text), size)}
                    for i, text in reversed(list(enumerate(inputs)))  # out of order, as the API allows
                ],
                "usage": {"prompt_tokens": sum(len(str(t).split()) for t in inputs), "total_tokens": 0},
            }
            payload["usage"]["total_tokens"] = payload["usage"]["prompt_tokens"]
            if server.validate:
                from openai.types import CreateEmbeddingResponse

                CreateEmbeddingResponse.model_validate(payload)
            return JSONResponse(payload)

        async def retrieve(request: Request) -> Response:
            """``GET /v1/responses/{id}``: poll a background response, or replay its stream after an event."""
            response_id = request.path_params["response_id"]
            query = dict(request.query_params)
            record = RecordedRequest(request.url.path, dict(request.headers), {**query, "method": "GET"})
            record.completed = True
            with server._lock:
                server.requests.append(record)
                job = server.background.get(response_id)
                if job is not None and job.polls > 0 and query.get("stream") != "true":
                    job.polls -= 1
                    running = True
                else:
                    running = False
            if job is None:
                error = {"message": f"No response with id '{response_id}'.", "type": "invalid_request_error"}
                return JSONResponse({"error": {**error, "param": None, "code": None}}, 404)
            if query.get("stream") == "true":
                after = int(query.get("starting_after", -1))
                events = iter([e for e in job.events if e["sequence_number"] > after])
                record.completed = False
                return StreamingResponse(server._sse(record, events, False, 0.0), media_type="text/event-stream")
            renderer = job.renderer
            if running:
                payload = renderer.response(response_id, [], "in_progress")
            else:
                payload = renderer.response(response_id, renderer.response_items(), renderer.final_status())
            if server.validate:
                validate_payload("response", payload)
            return JSONResponse(payload)

        return Starlette(
            routes=[
                Route("/v1/chat/completions", handle, methods=["POST"]),
                Route("/v1/responses", handle, methods=["POST"]),
                Route("/v1/responses/{response_id}", retrieve, methods=["GET"]),
                Route("/v1/embeddings", embeddings, methods=["POST"]),
            ]
        )

    async def _sse(
        self,
        record: RecordedRequest,
        events: Iterator[dict[str, Any]],
        is_chat: bool,
        delay: float,
        *,
        cut: bool = False,
    ) -> AsyncIterator[bytes]:
        try:
            for payload in events:
                # Failure events relay whatever code the upstream sent, as gateways do: not OpenAI's own list.
                if self.validate and "error" not in payload and payload.get("type") != "response.failed":
                    checked = _conforming(payload) if is_chat else payload
                    validate_payload("chat_chunk" if is_chat else "response_event", checked)
                data = json.dumps(payload)
                yield (f"data: {data}\n\n" if is_chat else f"event: {payload['type']}\ndata: {data}\n\n").encode()
                if delay:
                    await asyncio.sleep(delay)
            if cut:
                # Raising inside the body makes the server abort the connection without ending the response.
                record.completed = True
                raise ConnectionAbortedError("the scripted connection drop")
            if is_chat:
                yield b"data: [DONE]\n\n"
            record.completed = True
        finally:
            # Starlette cancels this generator when the client hangs up mid-stream.
            if not record.completed:
                record.disconnected = True

    # lifecycle --------------------------------------------------------------------------------

    def start(self, port: int = 0) -> OpenAIServer:
        """Start serving on a thread; returns once the port accepts connections."""
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            lifespan="off",
            ws="none",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="openai-test-server", daemon=True
        )
        self._thread.start()
        if not self.wait_for(lambda: bool(self._server.started), timeout=10):
            raise RuntimeError("the OpenAI test server did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop the server and join its thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve one fixed reply forever (for benchmarks and manual tries)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--reply", default="Hello from the local test server.")
    parser.add_argument("--validate", action="store_true", help="validate traffic against the SDK's types")
    args = parser.parse_args(argv)
    import uvicorn

    server = OpenAIServer(validate=args.validate, default=Reply(text=args.reply))
    uvicorn.run(server._app(), host="127.0.0.1", port=args.port, log_level="warning", lifespan="off", ws="none")


if __name__ == "__main__":
    main()
