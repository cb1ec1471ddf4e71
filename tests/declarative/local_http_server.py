"""A small HTTP server on loopback for the default HTTP handler's tests (a stdlib server in a thread).

Routes: ``/echo`` (the request as JSON: method, raw path, headers, body; ``?status=N`` sets the status),
``/text``, ``/set-cookie``, ``/redirect?to=URL`` (empty, marked gzip), ``/big?size=N`` (N bytes of ``a``),
``/gzip?size=N`` and ``/gzip-gzip?size=N`` (N zero bytes gzipped once or twice), ``/deflate`` and
``/raw-deflate`` (JSON, zlib-wrapped or raw deflate), ``/br`` (claims brotli), ``/slow?seconds=S``. Every
request's raw path and headers are kept in ``requests``.
"""

from __future__ import annotations

import gzip
import json
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, status: int, body: bytes, headers: list[tuple[str, str]] | None = None) -> None:
        self.send_response(status)
        for name, value in headers or []:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        cast(_Server, self.server).requests.append({"path": self.path, "headers": dict(self.headers.items())})
        split = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        route = split.path
        if route == "/echo":
            payload = {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode(),
            }
            headers = [("Content-Type", "application/json"), ("X-Multi", "one"), ("X-Multi", "two")]
            self._reply(int(query.get("status", "200")), json.dumps(payload).encode(), headers)
        elif route == "/text":
            self._reply(200, b"plain words, no JSON", [("Content-Type", "text/plain; charset=utf-8")])
        elif route == "/set-cookie":
            self._reply(200, b"{}", [("Content-Type", "application/json"), ("Set-Cookie", "session=abc; Path=/")])
        elif route == "/redirect":
            self._reply(302, b"", [("Location", query["to"]), ("Content-Encoding", "gzip")])
        elif route == "/big":
            self._reply(200, b"a" * int(query["size"]), [("Content-Type", "text/plain")])
        elif route in ("/gzip", "/gzip-gzip"):
            data = gzip.compress(b"\0" * int(query["size"]))
            encoding = "gzip"
            if route == "/gzip-gzip":
                data, encoding = gzip.compress(data), "gzip, gzip"
            self._reply(200, data, [("Content-Type", "text/plain"), ("Content-Encoding", encoding)])
        elif route == "/deflate":
            data = zlib.compress(json.dumps({"packed": "zlib"}).encode())
            self._reply(200, data, [("Content-Type", "application/json"), ("Content-Encoding", "deflate")])
        elif route == "/raw-deflate":
            packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
            data = packer.compress(json.dumps({"packed": "raw"}).encode()) + packer.flush()
            self._reply(200, data, [("Content-Type", "application/json"), ("Content-Encoding", "deflate")])
        elif route == "/slow":
            time.sleep(float(query["seconds"]))
            self._reply(200, b"late", [("Content-Type", "text/plain")])
        elif route == "/br":
            self._reply(200, b"\x0b\x02\x80hi\x03", [("Content-Type", "text/plain"), ("Content-Encoding", "br")])
        else:
            self._reply(404, b"not found", [("Content-Type", "text/plain")])

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that gave up (a timeout test) is not a server fault
        super().handle_error(request, client_address)


class LocalHTTPServer:
    """The server above on ``127.0.0.1`` (a free port), until :meth:`stop`."""

    def __init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.requests = []
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.server.requests

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
