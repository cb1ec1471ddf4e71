"""Spans traced in one process (a notebook) are read as a DataFrame in another (the DevUI)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import agentnb
from agentnb.observability import FRAME_COLUMNS, _setup

REPO = Path(__file__).resolve().parents[2]

NOTEBOOK = textwrap.dedent(
    """
    import asyncio, sys
    from agentnb import Agent, tool
    from agentnb.local import ToolCallingChatClient
    from agentnb.observability import configure_otel_providers

    @tool
    def weather(city: str) -> str:
        \"\"\"Weather.\"\"\"
        return f"Sunny in {city}"

    configure_otel_providers()  # default run store under AGENTNB_HOME
    agent = Agent(ToolCallingChatClient(), name="notebook-agent", tools=[weather])
    asyncio.run(agent.run("Weather in Madrid?"))
    print("ran", flush=True)
    sys.stdin.readline()  # stay alive until the reader has looked
    """
)


def test_spans_from_a_live_process_reach_another_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "AGENTNB_HOME": str(home)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    child = subprocess.Popen(
        [sys.executable, "-c", NOTEBOOK],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ran", child.stderr.read() if child.stderr else ""
        # The writer process is still running: its background thread must have written the spans.
        db = home / "agentnb.db"
        deadline = time.monotonic() + 15
        df = pd.DataFrame()
        while time.monotonic() < deadline:
            if db.exists():
                df = agentnb.traces(store=db)
                if len(df) >= 4:
                    break
            time.sleep(0.1)
        assert child.poll() is None
        child.stdin.write("\n")
        child.stdin.flush()
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == 0

    assert tuple(df.columns) == FRAME_COLUMNS
    assert sorted(df["name"]) == [
        "chat tool-calling-test-model",
        "chat tool-calling-test-model",
        "execute_tool weather",
        "invoke_agent notebook-agent",
    ]
    root = df[df["name"] == "invoke_agent notebook-agent"].iloc[0]
    assert (df["trace_id"] == root["trace_id"]).all()
    assert set(df.loc[df["span_id"] != root["span_id"], "parent_id"]) == {root["span_id"]}
    assert set(df["agent_name"]) == {"notebook-agent"}
    assert str(df["start_time"].dt.tz) == "UTC"
    assert df["input_tokens"].sum() == 2 * root["input_tokens"]  # agent total + its two model calls

    # With no span store of its own, this process reads the default store at AGENTNB_HOME.
    monkeypatch.setitem(_setup._active, "span_store", None)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setenv("AGENTNB_HOME", str(home))
    again = agentnb.traces(agent="notebook-agent", last=1)
    pd.testing.assert_frame_equal(again, df)
    summary = agentnb.usage_summary(again)
    assert summary[["agent_name", "model", "calls"]].values.tolist() == [
        ["notebook-agent", "tool-calling-test-model", 2]
    ]
