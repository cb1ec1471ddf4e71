"""A pending approval survives a restart: request in one process, answer and resume in a new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The "application": the same agent definition in every process. The tool appends to a log file, so the
# test counts tool-body executions across processes.
BANK = '''
import asyncio, json, sys
from pathlib import Path

from agentnb import (
    Agent, FileHistoryProvider, FileSessionStore, Message, ToolApprovalMiddleware,
    create_always_approve_tool_response, pending_approval_requests, tool,
)
from agentnb.local import ScriptedChatClient

HOME = Path(sys.argv[1])
HISTORY = sys.argv[2]  # "memory": history inside the session snapshot; "file": a JSONL file per session
STEP = sys.argv[3]
LOG = HOME / "transfers.log"


@tool(approval_mode="always_require")
def transfer(amount: int, to: str) -> str:
    """Send money."""
    with LOG.open("a") as f:
        f.write(json.dumps({"amount": amount, "to": to, "pid": __import__("os").getpid()}) + "\\n")
    return f"sent {amount} to {to}"


def make_agent(replies):
    providers = [FileHistoryProvider(HOME / "history")] if HISTORY == "file" else []
    return Agent(
        ScriptedChatClient(replies),
        tools=[transfer],
        context_providers=providers,
        middleware=[ToolApprovalMiddleware()],
    )


async def main():
    store = FileSessionStore(HOME / "sessions")
    out = {}
    if STEP == "ask":
        agent = make_agent([ScriptedChatClient.call("transfer", call_id="t1", amount=5, to="Ada")])
        session = agent.create_session(session_id="Ada's account/1")
        response = await agent.run("Pay Ada 5", session=session)
        out["requests"] = [r.to_dict() for r in response.user_input_requests]
        store.save(session)
    elif STEP == "answer":
        agent = make_agent(["Paid Ada."])
        session = store.load("Ada's account/1")
        [request] = await pending_approval_requests(session, agent=agent)
        answer = Message("user", [create_always_approve_tool_response(request)])
        if sys.argv[4] == "stream":
            stream = agent.run(answer, session=session, stream=True)
            out["update_types"] = [c.type async for u in stream for c in u.contents]
            response = await stream.get_final_response()
        else:
            response = await agent.run(answer, session=session)
        out["text"] = response.text
        out["model_saw"] = [c.type for m in agent.client.calls[0] for c in m.contents]
        store.save(session)
    elif STEP == "again":  # a third process: the standing rule came back with the session
        agent = make_agent([ScriptedChatClient.call("transfer", amount=7, to="Ada"), "Paid Ada again."])
        session = store.load("Ada's account/1")
        response = await agent.run("Pay Ada 7", session=session)
        out["text"] = response.text
        out["requests"] = len(response.user_input_requests)
        store.save(session)
    print(json.dumps(out))


asyncio.run(main())
'''


def _step(home: Path, history: str, step: str, *extra: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, str(home / "bank.py"), str(home), history, step, *extra],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=home,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _transfers(home: Path) -> list[dict]:
    log = home / "transfers.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize(("history", "mode"), [("memory", "run"), ("file", "stream")])
def test_pending_approval_is_answered_in_a_new_process(tmp_path: Path, history: str, mode: str) -> None:
    (tmp_path / "bank.py").write_text(textwrap.dedent(BANK))

    asked = _step(tmp_path, history, "ask")
    [request] = asked["requests"]
    assert request["type"] == "function_approval_request"
    assert request["function_call"]["name"] == "transfer"
    assert json.loads(request["function_call"]["arguments"]) == {"amount": 5, "to": "Ada"}
    assert _transfers(tmp_path) == []  # the first process exited without running the tool
    snapshots = list((tmp_path / "sessions").glob("*.json"))
    assert len(snapshots) == 1 and "/" not in snapshots[0].name
    if history == "file":
        assert len(list((tmp_path / "history").glob("*.jsonl"))) == 1

    answered = _step(tmp_path, history, "answer", mode)

    transfers = _transfers(tmp_path)
    assert [(t["amount"], t["to"]) for t in transfers] == [(5, "Ada")]
    assert transfers[0]["pid"] != os.getpid()
    assert answered["text"] == "Paid Ada."
    assert answered["model_saw"][-2:] == ["function_call", "function_result"]
    if mode == "stream":
        assert answered["update_types"].index("function_result") < answered["update_types"].index("text")

    again = _step(tmp_path, history, "again")
    assert again == {"text": "Paid Ada again.", "requests": 0}  # the standing rule survived the restart
    assert [(t["amount"], t["to"]) for t in _transfers(tmp_path)] == [(5, "Ada"), (7, "Ada")]
