"""The reference's Anthropic samples, unchanged but for their imports, run through AnthropicClient.

The parity ports (``tests/parity``) swap the provider's client for an offline model; here the original
sample (restored from its port and the manifest) keeps ``AnthropicClient(model=...)`` and talks over HTTP to
the local Messages API server, configured the way the sample expects: through the environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.anthropic_server import AnthropicServer, Reply, ToolUse

PARITY = Path(__file__).resolve().parents[1] / "parity"


def _original_with_agentnb_imports(rel: str) -> str:
    sys.path.insert(0, str(PARITY))
    try:
        import regenerate
    finally:
        sys.path.remove(str(PARITY))
    entry = json.loads((PARITY / "manifest.json").read_text(encoding="utf-8"))["samples"][rel]
    original = regenerate.restore((PARITY / "samples" / rel).read_text(encoding="utf-8"), entry["hunks"])
    assert regenerate.sha256(original) == entry["sha256"]
    text = original.replace("from agent_framework.anthropic import", "from agentnb.anthropic import")
    return "".join(regenerate._rewrite_imports(line) for line in text.splitlines(keepends=True))


def test_anthropic_basic_runs_against_a_messages_api_server(
    server: AnthropicServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sample reads its key and endpoint from the environment (the SDK warns that its model is deprecated:
    # the warning is the SDK's, and PYTHONWARNINGS below keeps it off the sample's output).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.script(
        Reply(
            tool_uses=[ToolUse("get_weather", {"location": "Portland"}), ToolUse("get_weather", {"location": "Paris"})]
        ),
        lambda request: Reply(
            text="Reported: "
            + " | ".join(b["content"] for b in request.body["messages"][-1]["content"] if b["type"] == "tool_result")
        ),
        Reply(tool_uses=[ToolUse("get_weather", {"location": "Seattle"})]),
        lambda request: Reply(text="Seattle: " + request.body["messages"][-1]["content"][0]["content"]),
    )
    script = tmp_path / "anthropic_basic.py"
    script.write_text(_original_with_agentnb_imports("02-agents/providers/anthropic/anthropic_basic.py"))
    # A process of its own, as the sample is meant to run: the clients it never closes end with it.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout
    assert re.search(r"Agent: Reported: The weather in Portland is \w+ .* \| The weather in Paris is \w+", output)
    assert re.search(r"Result: Seattle: The weather in Seattle is \w+ with a high of \d+°C\.", output)
    assert [r.body["model"] for r in server.requests] == ["claude-sonnet-4-5-20250929"] * 4
    assert all(r.body["system"] == "You are a helpful weather agent." for r in server.requests)
    assert server.requests[0].body["stream"] is True and "stream" not in server.requests[2].body
