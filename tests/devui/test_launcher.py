"""Serving: loopback by default, refusal of exposed addresses without auth, background serve and stop, CLI."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

import agentnb.devui
from agentnb import Agent
from agentnb.devui import DevUI, is_loopback, serve, stop
from agentnb.devui.demos import demo_catalog
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore


@pytest.mark.parametrize(
    ("address", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True), ("0.0.0.0", False),
     ("192.168.1.10", False), ("example.org", False)],
)  # fmt: skip
def test_is_loopback(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


def test_serve_refuses_a_public_address_without_auth() -> None:
    with pytest.raises(ValueError, match="without authentication"):
        serve([], address="0.0.0.0")
    assert agentnb.devui.running_servers() == []


def test_launcher_refuses_a_public_address_without_auth() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agentnb.devui", "--address", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "without authentication" in result.stderr


def test_background_serve_returns_a_url_on_loopback_and_stops() -> None:
    agent = Agent(ScriptedChatClient(["hello"]), name="notebook-agent")
    url = serve(entities=[agent], store=RunStore(":memory:"))
    try:
        assert url.startswith("http://127.0.0.1:")
        assert url in agentnb.devui.running_servers()
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200
        assert "agentnb DevUI" in page.text
    finally:
        assert stop(url) == 1
    assert agentnb.devui.running_servers() == []
    with pytest.raises(httpx.TransportError):
        httpx.get(url, timeout=2)


def test_user_mode_hides_the_developer_panels() -> None:
    developer = DevUI(demo_catalog(), store=RunStore(":memory:"))
    developer.panel()
    user = DevUI(demo_catalog(), store=RunStore(":memory:"), mode="user")
    user.panel()
    assert list(developer.tabs._names) == ["Playground", "Runs", "Time travel", "Traces", "Experiments"]
    assert list(user.tabs._names) == ["Playground"]
    with pytest.raises(ValueError, match="mode must be"):
        DevUI(demo_catalog(), mode="admin")  # type: ignore[arg-type]
