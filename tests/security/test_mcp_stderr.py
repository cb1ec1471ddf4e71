"""A real MCP server that floods stderr costs the client only a bounded tail of it in memory."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

from agentnb.mcp import MCPStdioTool
from agentnb.mcp._stdio import STDERR_KEEP_BYTES

REPO = Path(__file__).resolve().parents[2]

FLOOD = """
import runpy, sys
line = "x" * 1023 + "\\n"
for _ in range(40 * 1024):  # 40 MB of stderr before serving
    sys.stderr.write(line)
sys.stderr.write("LAST LINE\\n")
sys.stderr.flush()
runpy.run_module("agentnb.mcp.demo_server", run_name="__main__")
"""


async def test_a_stderr_flood_is_read_back_only_as_a_bounded_tail() -> None:
    tool = MCPStdioTool("flood", sys.executable, args=["-c", FLOOD], env={"PYTHONPATH": str(REPO)}, request_timeout=60)
    async with tool:
        assert sorted(t.name for t in await tool.get_tools())  # the server works
        tracemalloc.start()
        try:
            tail = tool.stderr
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert tail.endswith("LAST LINE\n")
    assert len(tail.encode()) <= STDERR_KEEP_BYTES
    assert peak < 4 * STDERR_KEEP_BYTES  # reading 40 MB whole would cost 40+ MB
