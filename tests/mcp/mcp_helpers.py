"""Helpers for the MCP tests: start the demo server (tests/mcp/servers) over stdio or streamable HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agentnb.mcp import MCPStdioTool, MCPStreamableHTTPTool

SERVER = str(Path(__file__).parent / "servers" / "demo_server.py")
TASK_SERVER = str(Path(__file__).parent / "servers" / "task_server.py")


def stdio_tool(name: str = "demo", *server_args: str, **kwargs: Any) -> MCPStdioTool:
    """An MCPStdioTool for the demo server (not connected yet)."""
    kwargs.setdefault("request_timeout", 10)
    kwargs.setdefault("connect_timeout", 20)
    return MCPStdioTool(name, sys.executable, args=[SERVER, "stdio", *server_args], **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HTTPServer:
    """A test server (the demo server unless ``script`` names another) over streamable HTTP on a loopback port."""

    def __init__(self, *server_args: str, port: int | None = None, script: str = SERVER) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [sys.executable, script, "http", str(self.port), *server_args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"demo HTTP server exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("demo HTTP server did not start listening within 20 s")

    @classmethod
    def on_port(cls, port: int) -> HTTPServer:
        """Start another server on a port a previous one used."""
        return cls(port=port)

    def tool(self, name: str = "web", **kwargs: Any) -> MCPStreamableHTTPTool:
        kwargs.setdefault("request_timeout", 10)
        kwargs.setdefault("connect_timeout", 10)
        return MCPStreamableHTTPTool(name, self.url, **kwargs)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def child_processes() -> dict[int, str]:
    """This process's children (pid -> state letter), read from /proc."""
    me = os.getpid()
    children: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is parenthesized and may contain spaces; fields after it are fixed.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me:
            children[int(entry)] = fields[0]
    return children
