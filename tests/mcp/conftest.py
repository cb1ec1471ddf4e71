"""Fixtures for the MCP tests: real servers (tests/mcp/servers) over stdio and streamable HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.mcp.mcp_helpers import HTTPServer, child_processes


@pytest.fixture(scope="session")
def http_server() -> Iterator[HTTPServer]:
    server = HTTPServer()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    """Fail a test that leaves a server subprocess (running or zombie) behind."""
    before = set(child_processes())
    yield
    deadline = time.monotonic() + 5
    leaked = {pid: state for pid, state in child_processes().items() if pid not in before}
    while leaked and time.monotonic() < deadline:
        time.sleep(0.05)
        leaked = {pid: state for pid, state in child_processes().items() if pid not in before}
    assert not leaked, f"leaked child processes (pid: state): {leaked}"
