"""MCPStdioTool: an MCP server started as a subprocess, spoken to over its stdin and stdout."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import IO, Any, TextIO, cast

from ._tool import MCPTool

__all__ = ["MCPStdioTool"]

# How much of the server's stderr an error message quotes.
_STDERR_TAIL_CHARS = 1200
# How much of the captured stderr is ever read back into memory (the file on disk holds the rest).
STDERR_KEEP_BYTES = 64 * 1024


class MCPStdioTool(MCPTool):
    """Run an MCP server as a subprocess and use its tools.

    The process starts on first use and stops on ``close()`` / leaving ``async with`` (stdin closed, then
    SIGTERM and SIGKILL if it lingers). If it dies, the next use starts a fresh one. Its stderr is kept in
    a temporary file unless ``errlog`` is given, and the last lines are quoted in connection errors.

    Args:
        name: A label for this server (errors, logs, approval metadata).
        command: The executable, e.g. ``"uvx"``, ``"npx"`` or ``sys.executable``.
        args: Its arguments.
        env: Extra environment variables (added to a minimal safe environment, not the whole of yours).
        cwd: The working directory.
        errlog: A text file to receive the server's stderr instead of the internal temporary file.
        **kwargs: Everything :class:`MCPTool` accepts (``allowed_tools``, ``approval_mode``, timeouts, sampling).

    Example:
        ```python
        import sys
        from agentnb import Agent
        from agentnb.local import ToolCallingChatClient
        from agentnb.mcp import MCPStdioTool

        demo = MCPStdioTool("demo", sys.executable, args=["-m", "agentnb.mcp.demo_server"], allowed_tools=["add"])
        agent = Agent(ToolCallingChatClient(), tools=[demo])
        async with demo:
            print((await agent.run("What is 2 + 3?")).text)
        ```
    """

    def __init__(
        self,
        name: str,
        command: str,
        *,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        errlog: IO[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name, **kwargs)
        if not command:
            raise ValueError("command must be a non-empty string (the server executable)")
        if isinstance(args, str):
            raise TypeError("args must be a list of strings, not one string")
        self.command = command
        self.args = list(args or [])
        self.env = dict(env) if env is not None else None
        self.cwd = Path(cwd) if cwd is not None else None
        self._user_errlog = errlog
        self._errlog: IO[str] | None = None

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.command, args=self.args, env=self.env, cwd=self.cwd)
        return stdio_client(params, errlog=cast(TextIO, self._stderr_sink()))

    def _stderr_sink(self) -> IO[str]:
        if self._user_errlog is not None:
            return self._user_errlog
        if self._errlog is not None:
            self._errlog.close()
        # A real file, one per process: the subprocess needs a file descriptor (notebook stderr has none).
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        return self._errlog

    @property
    def stderr(self) -> str:
        """The last 64 KiB the current (or last) server process wrote to stderr, when it is captured internally."""
        if self._errlog is None or self._errlog.closed:
            return ""
        self._errlog.flush()
        # Only the tail is ever read: a server flooding stderr must not cost the client its size in memory.
        fd = self._errlog.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - STDERR_KEEP_BYTES)
        text = os.pread(fd, size - start, start).decode("utf-8", errors="replace")
        if start:
            text = text.partition("\n")[2]  # drop the cut first line
        return text

    def _failure_detail(self) -> str:
        tail = self.stderr.strip()[-_STDERR_TAIL_CHARS:]
        return f"\nServer stderr (last lines):\n{tail}" if tail else ""

    async def connect(self) -> None:
        """Start the server process if it is not running (see :meth:`MCPTool.connect`)."""
        try:
            await super().connect()
        except BaseException:
            # The error message already quotes the stderr tail; do not keep the file open for a tool that
            # may never be closed.
            self._release_errlog()
            raise

    def _release_errlog(self) -> None:
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    async def close(self) -> None:
        """Stop the server process and release the captured stderr."""
        await super().close()
        self._release_errlog()

    def __repr__(self) -> str:
        state = "connected" if self.is_connected else "not connected"
        return f"MCPStdioTool(name={self.name!r}, command={self.command!r}, {state})"
