"""Any HTTP 200 that is not a valid reply raises ServiceResponseError naming the endpoint and quoting it.

A raw loopback HTTP server answers with exactly the bytes a broken endpoint would send (HTML login pages,
garbage, ``{}``, replies without ``choices``/``output``, a JSON body to a streamed request, garbage events);
the real ``openai`` SDK talks to it over a socket.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentnb.exceptions import ServiceResponseError
from agentnb.openai import OpenAIChatClient, OpenAIChatCompletionClient

HTML = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in</body></html>"
SSE = "text/event-stream"
JSON = "application/json"
CHUNK = b'{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}'


class RawServer:
    """Answers every POST with the scripted status 200, content type and body."""

    def __init__(self) -> None:
        self.content_type = JSON
        self.body = b""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", owner.content_type)
                self.send_header("content-length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def raw() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.close()


async def ask(cls: type, raw: RawServer, *, stream: bool) -> Any:
    client = cls("test-model", base_url=raw.base_url, api_key="sk-test", max_retries=0)
    try:
        if stream:
            response_stream = client.get_response("hi", stream=True)
            async for _ in response_stream:
                pass
            return await response_stream.get_final_response()
        return await client.get_response("hi")
    finally:
        await client.close()


NOT_REPLIES = [
    pytest.param("text/html", HTML, "<!DOCTYPE html>", id="html"),
    pytest.param("text/plain", b"garbage \x00\xff body", "garbage", id="garbage"),
    pytest.param(JSON, b"{}", "{}", id="empty-object"),
    pytest.param(JSON, b"[1, 2]", "[1, 2]", id="json-list"),
    pytest.param(JSON, b'{"id": "x", "object": "list", "data": []}', '"object": "list"', id="another-api"),
    pytest.param(JSON, b"[" * 100_000, "[[[[", id="deep-json"),
]


@pytest.mark.parametrize("cls", [OpenAIChatCompletionClient, OpenAIChatClient])
@pytest.mark.parametrize(("content_type", "body", "quoted"), NOT_REPLIES)
async def test_a_200_that_is_not_a_reply_is_a_typed_error(
    raw: RawServer, cls: type, content_type: str, body: bytes, quoted: str
) -> None:
    raw.content_type, raw.body = content_type, body
    with pytest.raises(ServiceResponseError) as info:
        await ask(cls, raw, stream=False)
    message = str(info.value)
    assert info.value.status_code == 200
    assert raw.base_url in message and quoted in message, message


async def test_a_chat_reply_without_choices_is_not_a_silent_empty_answer(raw: RawServer) -> None:
    raw.body = b'{"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": []}'
    with pytest.raises(ServiceResponseError, match="'choices' is empty"):
        await ask(OpenAIChatCompletionClient, raw, stream=False)


async def test_a_responses_reply_without_output_is_a_typed_error(raw: RawServer) -> None:
    raw.body = b'{"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "completed"}'
    with pytest.raises(ServiceResponseError, match="no 'output' list"):
        await ask(OpenAIChatClient, raw, stream=False)


BAD_STREAMS = [
    pytest.param(JSON, b'{"id": "c1", "choices": [{"index": 0, "message": {"content": "hi"}}]}', id="json-body"),
    pytest.param("text/html", HTML, id="html-body"),
    pytest.param(SSE, b"data: {not json\n\n", id="garbage-event"),
    pytest.param(SSE, b'data: {"foo": 1}\n\n', id="shapeless-event"),
]


@pytest.mark.parametrize("cls", [OpenAIChatCompletionClient, OpenAIChatClient])
@pytest.mark.parametrize(("content_type", "body"), BAD_STREAMS)
async def test_a_streamed_request_gets_a_typed_error_for_bad_streams(
    raw: RawServer, cls: type, content_type: str, body: bytes
) -> None:
    raw.content_type, raw.body = content_type, body
    with pytest.raises(ServiceResponseError) as info:
        await ask(cls, raw, stream=True)
    assert info.value.status_code == 200 and raw.base_url in str(info.value)


async def test_a_valid_stream_still_works(raw: RawServer) -> None:
    text = CHUNK.replace(b'"choices":[]', b'"choices":[{"index":0,"delta":{"content":"hi"}}]')
    raw.content_type, raw.body = SSE, b"data: " + text + b"\n\ndata: " + CHUNK + b"\n\ndata: [DONE]\n\n"
    response = await ask(OpenAIChatCompletionClient, raw, stream=True)
    assert response.text == "hi"
