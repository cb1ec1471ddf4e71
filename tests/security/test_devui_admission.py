"""The DevUI is never open to the network without auth: non-loopback clients are refused (page and websocket).

No test sends traffic beyond loopback: a public client is simulated by calling the admission check with a
public address, and, against a real ``panel serve devui --use-xheaders`` on 127.0.0.1, by a loopback request
that carries ``X-Real-Ip`` (the address a reverse proxy would report).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
from tornado.web import HTTPError

from agentnb.devui import _admission
from agentnb.devui.__main__ import main as launcher_main

REPO = Path(__file__).resolve().parents[2]
PUBLIC = "203.0.113.9"  # TEST-NET-3: documentation-only, never routed


def test_public_clients_are_refused_unless_auth_is_configured() -> None:
    reason = _admission.refusal(PUBLIC, authenticated=False)
    assert reason is not None and PUBLIC in reason
    assert "--address 127.0.0.1" in reason and "--basic-auth" in reason and "--oauth-provider" in reason
    for local in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"):
        assert _admission.refusal(local, authenticated=False) is None
    for unknown in (None, "", "not-an-ip", "10.0.0.1", "::ffff:10.0.0.1"):
        assert _admission.refusal(unknown, authenticated=False) is not None
    assert _admission.refusal(PUBLIC, authenticated=True) is None


def test_the_check_raises_403_and_follows_panel_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    from panel.config import config

    request = SimpleNamespace(remote_ip=PUBLIC)
    with pytest.raises(HTTPError) as info:
        _admission.process_request(request)
    assert info.value.status_code == 403 and "127.0.0.1" in str(info.value.reason)
    assert _admission.process_request(SimpleNamespace(remote_ip="127.0.0.1")) == {}
    monkeypatch.setattr(config, "basic_auth", "a-password")
    assert _admission.process_request(request) == {}


def test_the_panel_serve_app_runs_the_check_for_every_request() -> None:
    """Bokeh loads devui/app_hooks.py; Panel's page and websocket handlers both call its process_request."""
    import inspect

    from bokeh.application.handlers import DirectoryHandler
    from panel.io import server

    handler = DirectoryHandler(filename=str(REPO / "devui"))
    with pytest.raises(HTTPError):
        handler.process_request(SimpleNamespace(remote_ip=PUBLIC))  # type: ignore[arg-type]
    assert handler.process_request(SimpleNamespace(remote_ip="127.0.0.1")) == {}  # type: ignore[arg-type]
    # The two entry points a client has: the page (token payload) and the websocket open.
    assert "application.process_request" in inspect.getsource(server.DocHandler._generate_token_payload)
    assert "application.process_request" in inspect.getsource(server.WSHandler._async_open)


def test_pages_built_for_a_public_client_are_refusals(monkeypatch: pytest.MonkeyPatch) -> None:
    import panel as pn

    from agentnb.devui import create_app

    class Doc:  # what Panel sees while a served session is built (weak-referenceable, like a Document)
        request = SimpleNamespace(remote_ip=PUBLIC, arguments={}, cookies={}, headers={})
        session_context = SimpleNamespace(request=request)

    monkeypatch.setattr(pn.state, "curdoc", Doc())
    page = create_app()
    assert "Access refused" in page.object and PUBLIC in page.object


def test_the_launcher_refuses_a_public_address_without_auth(capsys: pytest.CaptureFixture[str]) -> None:
    assert launcher_main(["--address", "0.0.0.0"]) == 2
    assert "127.0.0.1" in capsys.readouterr().err


def test_every_readme_command_binds_loopback() -> None:
    lines = [line for line in (REPO / "README.md").read_text().splitlines() if "panel serve" in line]
    assert lines
    for line in lines:
        assert "--address 127.0.0.1" in line, line


# --- a real server ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> object:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update({"AGENTNB_HOME": str(tmp_path), "PYTHONPATH": str(REPO)})
    log = (tmp_path / "panel.log").open("wb")
    # --use-xheaders: the server takes the client address from X-Real-Ip, as behind a reverse proxy.
    command = [sys.executable, "-m", "panel", "serve", "devui", "--port", str(port), "--address", "127.0.0.1"]
    command += ["--allow-websocket-origin", f"127.0.0.1:{port}", "--use-xheaders"]
    proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "panel serve did not start"
            time.sleep(0.2)
    yield SimpleNamespace(port=port, log=tmp_path / "panel.log")
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    log.close()


def _get(url: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.mark.slow
def test_a_real_server_refuses_a_public_client_on_the_page_and_the_websocket(server: SimpleNamespace) -> None:
    from bokeh.util.token import generate_jwt_token, generate_session_id
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = f"http://127.0.0.1:{server.port}/devui"
    status, body = _get(url, {"X-Real-Ip": PUBLIC})
    assert status == 403 and "127.0.0.1" in body
    assert _get(url, {})[0] == 200  # loopback is served

    async def open_websocket(remote: str) -> str | None:
        token = generate_jwt_token(generate_session_id(signed=False), signed=False, extra_payload={})
        request = HTTPRequest(
            f"ws://127.0.0.1:{server.port}/devui/ws",
            headers={"X-Real-Ip": remote, "Origin": f"http://127.0.0.1:{server.port}"},
        )
        connection = await websocket_connect(request, subprotocols=["bokeh", token])
        try:
            first = await asyncio.wait_for(connection.read_message(), timeout=20)
        except asyncio.TimeoutError:
            first = None
        connection.close()
        with contextlib.suppress(asyncio.TimeoutError):  # let the closing handshake finish
            while await asyncio.wait_for(connection.read_message(), timeout=5) is not None:
                pass
        return first if isinstance(first, str) or first is None else first.decode()

    refused = asyncio.run(open_websocket(PUBLIC))
    assert refused is None  # no ACK: no session was created for the public client
    admitted = asyncio.run(open_websocket("127.0.0.1"))
    assert admitted is not None and json.loads(admitted)["msgtype"] == "ACK"
    log = server.log.read_text(errors="replace")
    assert re.search(rf"refuses the non-loopback client {re.escape(PUBLIC)}", log)
