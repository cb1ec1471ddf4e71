"""The core's extension points: a lower layer asks for work done above it, and the asking loads the package."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agentnb._extensions import ExtensionPoint
from agentnb.exceptions import AgentnbError


def _run(code: str, **env: str) -> str:
    """Run ``code`` in a fresh interpreter (so no provider package is imported yet); return its stdout."""
    import os

    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return out.stdout.strip()


def test_a_users_own_strategy_is_compacted_by_the_compaction_package_loaded_on_demand() -> None:
    out = _run(
        """
        import asyncio, sys
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient

        calls = []

        async def keep_everything(messages):
            calls.append(len(messages))
            return False

        agent = Agent(ScriptedChatClient(["a", "b"]), compaction_strategy=keep_everything)
        assert "agentnb.compaction" not in sys.modules
        response = asyncio.run(agent.run("hello"))
        print(calls, "agentnb.compaction" in sys.modules, len(response.additional_properties.get("compaction", [])))
        """
    )
    assert out == "[1] True 1"


def test_as_mcp_server_builds_the_mcp_packages_server() -> None:
    out = _run(
        """
        import sys
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient

        server = Agent(ScriptedChatClient(["a"]), name="helper").as_mcp_server(server_name="srv")
        print(type(server).__module__.split(".")[0], server.name, "agentnb.mcp" in sys.modules)
        """
    )
    assert out == "mcp srv True"


def test_default_chat_client_switches_to_openai_when_a_base_url_is_set() -> None:
    code = """
        from agentnb.local import default_chat_client

        print(type(default_chat_client()).__name__)
        """
    assert _run(code, OPENAI_API_KEY="", OPENAI_BASE_URL="") == "ToolCallingChatClient"
    assert _run(code, OPENAI_API_KEY="", OPENAI_BASE_URL="http://127.0.0.1:9/v1") == "OpenAIChatCompletionClient"


def test_an_unfilled_point_is_a_typed_error_naming_what_is_missing() -> None:
    point: ExtensionPoint[int] = ExtensionPoint("the answer")
    with pytest.raises(AgentnbError, match="the answer"):
        point.get()
    point.bind("json")  # importing it fills nothing
    with pytest.raises(AgentnbError, match="the answer"):
        point.get()
    point.fill(42)
    assert point.get() == 42
