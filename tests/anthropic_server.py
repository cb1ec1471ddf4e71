"""A scripted server speaking Anthropic's Messages API on loopback, for driving the real ``anthropic`` SDK.

It answers ``POST /v1/messages`` as plain JSON or as the API's SSE event stream (``message_start``,
``content_block_start`` / ``_delta`` / ``_stop``, ``message_delta``, ``message_stop``), from a script the
test supplies (:class:`Reply`, :class:`ErrorReply`, or a function of the request). Every message and
stream event it sends is validated against the SDK's own pydantic models before it goes on the wire, so
the tests check the wire format against ``anthropic.types``; every request is recorded (path, headers,
JSON body, and whether the client hung up before the reply was finished).

The same script also answers the routes Claude has on the clouds, with the model in the path:

- AWS Bedrock: ``POST /model/{model}/invoke`` (JSON) and ``/model/{model}/invoke-with-response-stream``, whose
  events travel base64-encoded in ``chunk`` messages of AWS's binary event-stream encoding
  (:func:`event_stream_message`); errors are AWS's ``{"message"}`` with an ``x-amzn-ErrorType`` header, or an
  ``exception`` message inside the stream.
- Google Vertex: ``POST /projects/{p}/locations/{r}/publishers/anthropic/models/{model}:rawPredict`` (JSON) and
  ``:streamRawPredict`` (the same SSE); errors are Google's ``{"error": {"code", "message", "status"}}``.

    with AnthropicServer() as server:
        server.script(Reply(text="Hello!"))
        client = AsyncAnthropic(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import asyncio
import base64
import collections
import itertools
import json
import socket
import struct
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnthropicServer", "ErrorReply", "RecordedRequest", "Reply", "ToolUse", "event_stream_message"]


@dataclass
class ToolUse:
    """One tool call the scripted model makes."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """One scripted answer: optional thinking (with its signature), text, tool calls, usage, stop reason."""

    text: str | None = None
    tool_uses: list[ToolUse] = field(default_factory=list)
    thinking: str | None = None
    signature: str = "sig-1"
    stop_reason: str | None = None  # derived from the content when None
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_input_tokens: int | None = None
    model: str | None = None
    chunk_size: int = 4  # characters per streamed text / JSON delta
    cut_after: int | None = None  # drop the connection after this many stream events
    error_after: int | None = None  # send an ``error`` event after this many stream events
    stream_error: tuple[str, str] = ("overloaded_error", "Overloaded")  # its type (Bedrock: exception type), message


@dataclass
class ErrorReply:
    """An HTTP error in the API's shape: ``{"type": "error", "error": {"type": ..., "message": ...}}``.

    On the Bedrock routes ``type`` is the ``x-amzn-ErrorType`` (``ThrottlingException``), on the Vertex routes
    Google's ``status`` (``RESOURCE_EXHAUSTED``).
    """

    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    completed: bool = False
    disconnected: bool = False
    route: str = "anthropic"  # or "bedrock" / "vertex"
    model: str | None = None  # the model named in the path (the cloud routes)
    raw_body: bytes = b""


Script = Reply | ErrorReply | Callable[[RecordedRequest], "Reply | ErrorReply"]


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _validate(kind: str, payload: dict[str, Any]) -> None:
    from anthropic.types import Message, RawMessageStreamEvent
    from pydantic import TypeAdapter

    if kind == "message":
        Message.model_validate(payload)
    else:
        TypeAdapter(RawMessageStreamEvent).validate_python(payload)


def event_stream_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One message of AWS's event-stream encoding (``application/vnd.amazon.eventstream``).

    A prelude (total length, headers length: big-endian uint32s) and its CRC32, the headers (name length: uint8,
    name, value type 7 = string, value length: uint16, value), the payload, and a CRC32 of everything before it.
    """
    encoded = b""
    for name, value in headers.items():
        name_bytes, value_bytes = name.encode(), value.encode()
        encoded += struct.pack(">B", len(name_bytes)) + name_bytes
        encoded += struct.pack(">BH", 7, len(value_bytes)) + value_bytes
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _bedrock_chunk(event: dict[str, Any]) -> bytes:
    """A Messages API stream event as Bedrock sends it: base64 JSON in a ``chunk`` event's ``bytes``."""
    data = base64.b64encode(json.dumps(event).encode()).decode()
    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return event_stream_message(headers, json.dumps({"bytes": data, "p": "abcdefgh"}).encode())


def _bedrock_exception(kind: str, message: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return event_stream_message(headers, json.dumps({"message": message}).encode())


class _Renderer:
    def __init__(
        self, reply: Reply, body: dict[str, Any], message_id: str, ids: Iterator[int], model: str | None = None
    ) -> None:
        self.reply = reply
        self.body = body
        self.path_model = model
        self.id = message_id
        self.tool_ids = [use.id or f"toolu_{next(ids)}" for use in reply.tool_uses]

    def blocks(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.reply.thinking is not None:
            out.append({"type": "thinking", "thinking": self.reply.thinking, "signature": self.reply.signature})
        if self.reply.text is not None:
            out.append({"type": "text", "text": self.reply.text, "citations": None})
        for use, tool_id in zip(self.reply.tool_uses, self.tool_ids, strict=True):
            out.append({"type": "tool_use", "id": tool_id, "name": use.name, "input": use.input})
        return out

    def stop_reason(self) -> str:
        return self.reply.stop_reason or ("tool_use" if self.reply.tool_uses else "end_turn")

    def usage(self, *, output: bool = True) -> dict[str, Any]:
        return {
            "input_tokens": self.reply.input_tokens,
            "output_tokens": self.reply.output_tokens if output else 1,
            "cache_read_input_tokens": self.reply.cache_read_input_tokens,
            "cache_creation_input_tokens": None,
        }

    def message(self, content: list[dict[str, Any]], stop_reason: str | None, usage: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.reply.model or self.path_model or self.body.get("model", "claude-test"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def events(self) -> Iterator[dict[str, Any]]:
        yield {"type": "message_start", "message": self.message([], None, self.usage(output=False))}
        size = self.reply.chunk_size
        for index, block in enumerate(self.blocks()):
            kind = block["type"]
            if kind == "thinking":
                yield {"type": "content_block_start", "index": index, "content_block": {**block, "thinking": ""}}
                for piece in _chunks(block["thinking"], size):
                    yield self._delta(index, {"type": "thinking_delta", "thinking": piece})
                yield self._delta(index, {"type": "signature_delta", "signature": block["signature"]})
            elif kind == "text":
                yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
                for piece in _chunks(block["text"], size):
                    yield self._delta(index, {"type": "text_delta", "text": piece})
            else:
                yield {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
                for piece in _chunks(json.dumps(block["input"]), size):
                    yield self._delta(index, {"type": "input_json_delta", "partial_json": piece})
            yield {"type": "content_block_stop", "index": index}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": self.stop_reason(), "stop_sequence": None},
            "usage": {"output_tokens": self.reply.output_tokens},
        }
        yield {"type": "message_stop"}

    @staticmethod
    def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": delta}


class AnthropicServer:
    """A Messages API server on ``127.0.0.1`` answering from a per-test script."""

    def __init__(self, *, validate: bool = True) -> None:
        self.validate = validate
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []
        self.validation_errors: list[str] = []
        self._queue: collections.deque[Script] = collections.deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    def script(self, *replies: Script) -> None:
        """Queue answers; each request takes the next one."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.unexpected.clear()
            self.validation_errors.clear()

    def problems(self) -> list[str]:
        """What the test left wrong: unused replies, requests with no reply, invalid payloads."""
        out = list(self.validation_errors)
        if self._queue:
            out.append(f"{len(self._queue)} scripted replies were not used")
        if self.unexpected:
            out.append(f"{len(self.unexpected)} requests found no scripted reply")
        return out

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.01)
        return predicate()

    def _next(self, request: RecordedRequest) -> Reply | ErrorReply | None:
        with self._lock:
            if not self._queue:
                return None
            item = self._queue.popleft()
        return item(request) if callable(item) else item

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        server = self

        def error(route: str, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Response:
            if route == "bedrock":  # AWS's shape: the error type travels in a header
                amzn = {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
                return JSONResponse({"message": message}, status, headers={**amzn, **(headers or {})})
            if route == "vertex":  # Google's shape
                google = {"error": {"code": status, "message": message, "status": kind}}
                return JSONResponse(google, status, headers=headers)
            body = {"type": "error", "error": {"type": kind, "message": message}}
            return JSONResponse(body, status, headers=headers)

        async def answer(request: Request, route: str, model: str | None, stream: bool | None) -> Response:
            raw = await request.body()
            try:
                body = json.loads(raw)
            except ValueError:
                return error(route, 400, "invalid_request_error", "body is not JSON")
            record = RecordedRequest(request.url.path, dict(request.headers), body, route=route, model=model)
            record.raw_body = raw
            with server._lock:
                server.requests.append(record)
            problem = _request_problem(body)
            if problem and server.validate:
                server.validation_errors.append(problem)
                return error(route, 400, "invalid_request_error", problem)
            reply = server._next(record)
            if reply is None:
                server.unexpected.append(record)
                record.completed = True
                return error(route, 500, "api_error", "the test server has no scripted reply left")
            if isinstance(reply, ErrorReply):
                record.completed = True
                return error(route, reply.status, reply.type, reply.message, reply.headers)
            renderer = _Renderer(reply, body, f"msg_{next(server._ids)}", server._ids, model)
            if not (body.get("stream") if stream is None else stream):
                usage = renderer.usage()
                payload = renderer.message(renderer.blocks(), renderer.stop_reason(), usage)
                if server.validate:
                    _validate("message", payload)
                record.completed = True
                return JSONResponse(payload)
            if route == "bedrock":
                frames = server._frames(record, reply, renderer.events(), bedrock=True)
                return StreamingResponse(frames, media_type="application/vnd.amazon.eventstream")
            return StreamingResponse(server._frames(record, reply, renderer.events()), media_type="text/event-stream")

        async def messages(request: Request) -> Response:
            return await answer(request, "anthropic", None, None)

        async def bedrock_invoke(request: Request) -> Response:
            return await answer(request, "bedrock", request.path_params["model"], False)

        async def bedrock_stream(request: Request) -> Response:
            return await answer(request, "bedrock", request.path_params["model"], True)

        async def vertex(request: Request) -> Response:
            model, _, method = request.path_params["model_method"].rpartition(":")
            if method not in ("rawPredict", "streamRawPredict"):
                return error("vertex", 404, "NOT_FOUND", f"no method {method!r}")
            response = await answer(request, "vertex", model, None)
            record = server.requests[-1]
            if bool(record.body.get("stream")) != (method == "streamRawPredict"):
                server.validation_errors.append(f"{method} with stream={record.body.get('stream')!r} in the body")
            return response

        vertex_path = "/projects/{project}/locations/{region}/publishers/anthropic/models/{model_method}"
        return Starlette(
            routes=[
                Route("/v1/messages", messages, methods=["POST"]),
                Route("/model/{model}/invoke", bedrock_invoke, methods=["POST"]),
                Route("/model/{model}/invoke-with-response-stream", bedrock_stream, methods=["POST"]),
                Route(vertex_path, vertex, methods=["POST"]),
            ]
        )

    async def _frames(
        self, record: RecordedRequest, reply: Reply, events: Iterator[dict[str, Any]], *, bedrock: bool = False
    ) -> AsyncIterator[bytes]:
        """The stream as SSE, or as Bedrock's event-stream messages."""
        try:
            for n, payload in enumerate(events):
                if reply.error_after is not None and n == reply.error_after:
                    kind, message = reply.stream_error
                    if bedrock:
                        yield _bedrock_exception(kind, message)
                    else:
                        failure = {"type": "error", "error": {"type": kind, "message": message}}
                        yield f"event: error\ndata: {json.dumps(failure)}\n\n".encode()
                    record.completed = True
                    return
                if reply.cut_after is not None and n == reply.cut_after:
                    record.completed = True
                    raise ConnectionAbortedError("the scripted connection drop")
                if self.validate:
                    _validate("event", payload)
                if bedrock:
                    yield _bedrock_chunk(payload)
                else:
                    yield f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()
                await asyncio.sleep(0)
            record.completed = True
        finally:
            if not record.completed:
                record.disconnected = True

    def start(self) -> AnthropicServer:
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(), log_level="warning", lifespan="off", ws="none", access_log=False, timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="anthropic-test-server", daemon=True
        )
        self._thread.start()
        if not self.wait_for(lambda: bool(self._server.started), timeout=10):
            raise RuntimeError("the Anthropic test server did not start within 10 s")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> AnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _request_problem(body: dict[str, Any]) -> str | None:
    """What the real API would refuse in a request (the rules a client most easily gets wrong)."""
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if messages[0].get("role") != "user":
        return "messages: the first message must use the user role"
    if any(m.get("role") not in ("user", "assistant") for m in messages):
        return "messages: roles must be user or assistant (system goes in the top-level system parameter)"
    offered = {tool.get("name") for tool in body.get("tools") or []}
    for previous, message in itertools.pairwise(messages):
        uses = [b["id"] for b in previous.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses:
            blocks = message.get("content") if isinstance(message.get("content"), list) else []
            answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
            if message.get("role") != "user" or set(uses) - answered:
                return "messages: tool_use ids were found without tool_result blocks immediately after"
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and offered and block.get("name") not in offered:
                return f"messages: tool_use {block.get('name')!r} names no tool in tools"
    return None
