"""OTLP export proven against a real receiver: Arize Phoenix on a loopback port.

A child process (so it can set the global tracer provider) runs an agent turn with a tool call through the
real ``openai`` SDK against the scripted loopback server, and a workflow whose second step is an agent,
with ``configure_otel_providers()`` exporting over OTLP/HTTP to ``phoenix serve``. The spans are read back
with Phoenix's own client: every span arrives with its parent, its GenAI attributes, and the kind Phoenix's
UI shows (agent, LLM, tool, chain).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

TRACED_RUN = """
import asyncio, json
from opentelemetry import trace
from agentnb import Agent, tool
from agentnb.observability import configure_otel_providers
from agentnb.openai import OpenAIChatClient
from agentnb.workflows import AgentExecutor, WorkflowBuilder, WorkflowContext, executor
from tests.openai_server import OpenAIServer, Reply, ToolCall

@tool
def get_weather(city: str) -> str:
    \"\"\"Return the weather for a city.\"\"\"
    return f"Sunny in {city}."

@executor(id="prepare")
async def prepare(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"Summarize: {text}")

async def main() -> None:
    spans = configure_otel_providers(store=None)
    with OpenAIServer() as server:
        server.script(
            Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"})]),
            Reply(text="It is sunny in Paris."),
            Reply(text="Sunny."),
        )
        client = OpenAIChatClient(model="gpt-4o-mini", base_url=server.base_url, api_key="test")
        agent = Agent(client, "You answer weather questions.", name="weather", tools=[get_weather])
        await agent.run("What's the weather in Paris?")
        writer = AgentExecutor(Agent(client, "Summarize.", name="writer"), id="writer")
        await WorkflowBuilder(start_executor=prepare, name="summary").add_edge(prepare, writer).build().run("sunny")
    trace.get_tracer_provider().shutdown()  # the OTLP batch processor sends what it holds
    print(json.dumps([
        {"name": s.name, "span_id": format(s.context.span_id, "016x"), "trace_id": format(s.context.trace_id, "032x"),
         "parent_id": format(s.parent.span_id, "016x") if s.parent else None}
        for s in spans.spans()
    ]))

asyncio.run(main())
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``phoenix serve`` on loopback ports, with its own working directory; its base URL."""
    port, grpc_port = _free_port(), _free_port()
    workdir = tmp_path_factory.mktemp("phoenix")
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (workdir / "phoenix.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=log, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240  # migrations and start-up take 15-60 s on a busy machine
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"phoenix serve exited early: {(workdir / 'phoenix.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("phoenix serve did not answer in time")
            time.sleep(1)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def _read_back(base: str, want: int) -> list[dict[str, Any]]:
    """Phoenix's spans once all ``want`` have been ingested (ingestion runs behind the OTLP endpoint)."""
    from phoenix.client import Client

    client = Client(base_url=base)
    deadline = time.monotonic() + 60
    while True:
        spans = [dict(s) for s in client.spans.get_spans(project_identifier="default", limit=1000)]
        if len(spans) >= want or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def test_an_agent_turn_and_a_workflow_arrive_in_phoenix_with_parents_and_kinds(phoenix: str, tmp_path: Path) -> None:
    env = {**os.environ, "AGENTNB_HOME": str(tmp_path), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{phoenix}/v1/traces"}
    for key in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "AGENTNB_ENABLE_INSTRUMENTATION"):
        env.pop(key, None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(TRACED_RUN)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    sent = {s["span_id"]: s for s in json.loads(proc.stdout.strip().splitlines()[-1])}
    names = sorted(s["name"] for s in sent.values())
    turn = ["invoke_agent weather", "chat gpt-4o-mini", "execute_tool get_weather", "chat gpt-4o-mini"]
    workflow = ["workflow.run", "workflow.superstep", "workflow.superstep", "executor.process", "executor.process"]
    workflow += ["workflow.build", "message.send"]  # building it, and the message prepare sends the writer
    assert names == sorted([*turn, *workflow, "invoke_agent writer", "chat gpt-4o-mini"])

    received = {s["context"]["span_id"]: s for s in _read_back(phoenix, len(sent))}
    assert set(received) == set(sent)  # every span arrived, none twice
    for span_id, mine in sent.items():
        theirs = received[span_id]
        assert theirs["context"]["trace_id"] == mine["trace_id"]
        assert theirs.get("parent_id") == mine["parent_id"], theirs["name"]

    kinds = {s["name"].split()[0]: s["span_kind"] for s in received.values()}
    assert kinds == {
        "invoke_agent": "AGENT",
        "chat": "LLM",
        "execute_tool": "TOOL",
        "workflow.run": "CHAIN",
        "workflow.superstep": "CHAIN",
        "executor.process": "CHAIN",
        "workflow.build": "CHAIN",
        "message.send": "CHAIN",
    }
    by_name = {s["name"]: s for s in received.values()}
    tool_call = by_name["execute_tool get_weather"]["attributes"]
    assert tool_call["gen_ai.tool.name"] == "get_weather" and tool_call["gen_ai.agent.name"] == "weather"
    assert tool_call["gen_ai.operation.name"] == "execute_tool"
    chats = [s["attributes"] for s in received.values() if s["name"].startswith("chat")]
    assert all(c["gen_ai.request.model"] == "gpt-4o-mini" and c["gen_ai.provider.name"] == "openai" for c in chats)
    assert all(c["gen_ai.usage.input_tokens"] == 11 and c["gen_ai.usage.output_tokens"] == 7 for c in chats)
    writer = by_name["invoke_agent writer"]
    executor_span = received[writer["parent_id"]]
    assert executor_span["name"] == "executor.process" and executor_span["attributes"]["executor.id"] == "writer"
    run = next(s for s in received.values() if s["name"] == "workflow.run")
    assert run["attributes"]["workflow.name"] == "summary" and run.get("parent_id") is None
