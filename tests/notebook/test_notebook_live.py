"""Responses and sessions that wait for approval display live cards, in a real Jupyter kernel (nbclient)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.notebook.kernel_harness import KernelSession, data, text

pytestmark = pytest.mark.kernel

DEFINE = '''
%load_ext agentnb
import gc
from agentnb import Agent, tool
from agentnb.local import ToolCallingChatClient
from agentnb.notebook import last_view

@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

bot = Agent(ToolCallingChatClient(), "Be brief.", name="bot", tools=[delete_file])
'''

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    session = KernelSession(tmp_path_factory.mktemp("live"))
    try:
        session.run(DEFINE)
        yield session
    finally:
        session.close()


def _click(kernel: KernelSession, expression: str) -> None:
    """Send what JupyterLab sends when the button ``expression`` names is clicked."""
    [model_id] = text(kernel.run(f"print({expression}.model_id)")).split()
    click = {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}}
    kc = kernel.client.kc
    kc.shell_channel.send(kc.session.msg("comm_msg", click))


def _wait_for(kernel: KernelSession, condition: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text(kernel.run(f"print(bool({condition}))")).strip() == "True":
            return
        time.sleep(0.2)
    raise AssertionError(f"{condition} stayed false for {timeout} s")


def test_a_displayed_response_resumes_on_its_session_when_approve_is_clicked(kernel: KernelSession) -> None:
    kernel.run("s = bot.create_session()\nr = await bot.run('Delete Notes please', session=s)")
    shown = kernel.run("r")
    [view] = data(shown, WIDGET)
    assert view["model_id"]
    [plain] = data(shown, "text/plain")
    assert "delete_file(path='Notes')" in plain and plain.splitlines()[-1].startswith("[waiting]")
    assert text(kernel.run("print(last_view().status, last_view().session is s)")).strip() == "waiting True"
    _click(kernel, "last_view().cards[r.user_input_requests[0].id].approve_button")
    _wait_for(kernel, "last_view().status == 'done'")
    resumed = text(kernel.run("print(last_view().text)\nprint(len(s.messages), s.messages[-2].contents[0].result)"))
    assert resumed.splitlines() == ["delete_file: deleted Notes", "5 deleted Notes"]
    # The continuation streamed into the widget shown in r's output (the browser renders this model's state).
    shown_state = text(kernel.run("print(last_view().transcript.value)"))
    assert "approved" in shown_state and "deleted Notes" in shown_state
    # r itself is unchanged data; showing it again shows the same (finished) view, not new cards.
    again = kernel.run("r")
    assert data(again, WIDGET)[0]["model_id"] == view["model_id"]


def test_a_response_without_a_session_continues_its_own_conversation(kernel: KernelSession) -> None:
    kernel.run("r2 = await bot.run('Delete Drafts')")
    kernel.run("r2")
    _click(kernel, "last_view().cards[r2.user_input_requests[0].id].deny_button")
    _wait_for(kernel, "last_view().status == 'done'")
    out = text(kernel.run("v = last_view()\nprint(v.response.text)\nprint([m.role for m in v.session.messages])"))
    # The new session holds the whole conversation: the first turn's input and reply, the answer, the rest.
    assert out.splitlines() == [
        "delete_file: Error: Tool call invocation was rejected by user.",
        "['user', 'assistant', 'user', 'tool', 'assistant']",
    ]


def test_a_displayed_session_with_a_pending_request_is_live(kernel: KernelSession) -> None:
    kernel.run("s3 = bot.create_session()\n_ = await bot.run('Delete Logs', session=s3)")
    shown = kernel.run("s3")
    assert data(shown, WIDGET)
    kernel.run("last_view().approve()")
    _wait_for(kernel, "last_view().status == 'done'")
    assert text(kernel.run("print(s3.messages[-2].contents[0].result)")).strip() == "deleted Logs"
    # Nothing pending any more: the session shows as static HTML again.
    after = kernel.run("s3")
    assert not data(after, WIDGET) and "AgentSession" in data(after, "text/html")[0]


def test_static_html_when_the_agent_is_gone_or_nothing_is_pending(kernel: KernelSession) -> None:
    kernel.run(
        "gone = Agent(ToolCallingChatClient(), name='gone', tools=[delete_file])\n"
        "r4 = await gone.run('Delete Cache')\ndel gone\n_ = gc.collect()"
    )
    shown = kernel.run("r4")
    assert [o["output_type"] for o in shown] == ["execute_result"]
    assert not data(shown, WIDGET) and "approval(s) pending" in data(shown, "text/html")[0]
    plain = kernel.run("from agentnb.local import ScriptedChatClient\nawait Agent(ScriptedChatClient(['Hi'])).run('x')")
    assert not data(plain, WIDGET) and "Hi" in data(plain, "text/html")[0]
