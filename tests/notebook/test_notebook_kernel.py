"""The extension and magics in real Jupyter kernels (nbclient)."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.notebook.kernel_harness import KernelSession, data, execute, kernel_env, text

pytestmark = pytest.mark.kernel

DEFINE = '''
from agentnb import Agent, tool
from agentnb.local import ScriptedChatClient, ToolCallingChatClient

@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"

@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."

bot = Agent(ToolCallingChatClient(), "Be brief.", name="bot", tools=[delete_file, get_weather])
weather = Agent(ToolCallingChatClient(), name="weather", tools=[get_weather])
'''

STATE = """
ip = get_ipython()
from agentnb import _telemetry
print("html", any(c.__name__ == "Agent" for c in ip.display_formatter.formatters["text/html"].type_printers))
print("magics", "agent" in ip.magics_manager.magics["cell"], "agentnb" in ip.magics_manager.magics["line"])
print("transformers", len(ip.input_transformers_cleanup))
print("tracing", _telemetry.is_enabled())
"""


def test_load_and_unload_extension(tmp_path: Path) -> None:
    out = execute(
        [
            DEFINE,
            STATE,
            "%load_ext agentnb",
            STATE,
            "bot",
            "%load_ext agentnb",  # loading twice is harmless
            "%unload_ext agentnb",
            STATE,
            "bot",
            "%%agent bot\nhello",
            "%load_ext agentnb\n%unload_ext agentnb",
        ],
        tmp_path,
    )
    before, loaded, after = text(out[1]), text(out[3]), text(out[7])
    assert before.split("\n")[:2] == ["html False", "magics False False"]
    assert "tracing False" in before
    assert loaded.split("\n")[:2] == ["html True", "magics True True"]
    assert "tracing True" in loaded
    transformers = int(before.split("transformers ")[1].split()[0])
    assert f"transformers {transformers + 1}" in loaded
    assert after == before  # unload restores formatters, magics, the transformer and tracing
    [html] = data(out[4], "text/html")
    assert '<div class="agentnb">' in html and "bot" in html and "needs approval" in html
    assert text(out[4]).startswith("Agent bot · ToolCallingChatClient")
    assert data(out[8], "text/html") == []  # plain repr again after unloading
    assert "UsageError: Cell magic `%%agent` not found" in text(out[9])
    assert not [o for o in out[10] if o["output_type"] == "error"]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    """One kernel with the extension loaded, shared by the magic tests (a kernel start costs seconds)."""
    session = KernelSession(tmp_path_factory.mktemp("kernel"))
    try:
        session.run("%load_ext agentnb\n" + DEFINE)
        yield session
    finally:
        session.close()


def test_agent_magic_streams_approves_and_keeps_sessions(kernel: KernelSession) -> None:
    first = len(kernel.nb.cells)
    for source in [
        "print('ready')",
        "%%agent bot\nDelete Notes please",
        # The cell above finished while the approval card waits; answer it as a click would.
        "from agentnb.notebook import last_view\nv = last_view()\n"
        "print(v.status, [r.function_call.name for r in v.pending])\nv.approve(reason='ok')\nawait v.wait()\n"
        "print(v.status, '|', v.text.replace(chr(10), ' / '))",
        "%%agent weather --session chat\nWeather in Paris?",
        "%%agent weather --session chat --no-stream\nAnd in Rome?",
        "print(type(chat).__name__, len(chat.messages))",
        "%%agent bot --approve all\nDelete Drafts",
        "%agentnb traces --last 1",
        "%agentnb help",
    ]:
        kernel.run(source)
    out = [kernel.outputs(i) for i in range(first, len(kernel.nb.cells))]
    magic_out = out[1]
    [plain] = data(magic_out, "text/plain")
    assert "widget-view" in str(magic_out[0]["data"])
    # The stored output was refreshed when the run finished (after the click in the next cell).
    assert plain.startswith("[user] Delete Notes please\n[assistant · bot] delete_file(path='Notes')")
    assert "[user] approved: delete_file (ok)" in plain and plain.rstrip().split("\n")[-1].startswith("[done]")
    assert text(out[2]).splitlines() == [
        "waiting ['delete_file']",
        "done | delete_file: deleted Notes / get_weather: Sunny in Notes.",
    ]
    assert "get_weather(city='Paris') -> Sunny in Paris." in text(out[3])
    assert "get_weather(city='Rome') -> Sunny in Rome." in text(out[4])
    assert text(out[5]).strip() == "AgentSession 8"  # two turns of user, assistant, tool, assistant
    auto = text(out[6])
    assert "approved: delete_file (approved by policy)" in auto and "[done]" in auto
    traces = text(out[7])
    assert traces.startswith("trace ") and "invoke_agent bot" in traces and "execute_tool delete_file" in traces
    assert text(out[8]).startswith("usage: %agentnb traces")


BAD_ARGUMENTS = [
    ("%%agent\nhello", "the following arguments are required: name"),
    ("%%agent missing\nhello", "No variable 'missing' in this notebook"),
    ("%%agent bot --bogus\nhello", "unrecognized arguments: --bogus"),
    ("%%agent bot\n   ", "The cell body is the prompt and it is empty"),
    ("%%agent get_weather\nhi", "'get_weather' is a FunctionTool, not an agent"),
    ("%%agent bot --session 'not a name'\nhi", "--session needs a variable name"),
    ("%%agent bot --approve ,\nhi", "--approve needs ask, all, none or tool names"),
    ("%agentnb frobnicate", "unknown command 'frobnicate'"),
    ("%agentnb traces --last 0", "--last must be >= 1"),
    ("%agentnb traces --last x", "argument --last: invalid int value: 'x'"),
    ("%agentnb record", "record needs a cassette PATH"),
    ('%agentnb replay "unclosed', "No closing quotation"),
]


@pytest.mark.parametrize(("cell", "message"), BAD_ARGUMENTS)
def test_bad_arguments_print_a_usage_line_not_a_traceback(kernel: KernelSession, cell: str, message: str) -> None:
    outputs = kernel.run(cell)
    shown = text(outputs)
    assert message in shown
    assert shown.startswith("UsageError: ")
    assert "usage: %" in shown
    assert "Traceback" not in shown and not [o for o in outputs if o["output_type"] == "error"]


def test_record_then_replay_without_the_model(kernel: KernelSession, tmp_path: Path) -> None:
    cassette = tmp_path / "session.jsonl"
    cells = [
        # Two agents on two different models: both are recorded into one cassette.
        "from agentnb.local import ScriptedChatClient\n"
        "echo = Agent(ScriptedChatClient(['Recorded answer one.']), name='echo')\n"
        "other = Agent(ScriptedChatClient(['Recorded answer two.']), name='other')",
        f"%agentnb record {cassette}",
        "%%agent echo\nFirst question",
        "%%agent other\nSecond question",
        "%agentnb record --stop",
        # The scripted models are used up now; only the cassette can answer.
        f"%agentnb replay {cassette}",
        "%%agent echo\nFirst question",
        "%%agent other\nSecond question",
        "%%agent echo\nA question never recorded",
        "%agentnb replay --stop",
        f"%agentnb replay {tmp_path / 'missing.jsonl'}",
    ]
    out = [kernel.run(cell) for cell in cells]
    assert "Recording model traffic of" in text(out[1])
    assert "Recorded answer one." in text(out[2]) and "Recorded answer two." in text(out[3])
    assert "agent(s) restored" in text(out[4])
    assert "Replaying" in text(out[5]) and "no network or API key needed" in text(out[5])
    assert "Recorded answer one." in text(out[6]) and "Recorded answer two." in text(out[7])
    miss = text(out[8])
    assert "CassetteMissError" in miss and "[error]" in miss
    assert "agent(s) restored" in text(out[9])
    assert "UsageError: No cassette at" in text(out[10]) and "%agentnb record" in text(out[10])
    lines = cassette.read_text().splitlines()
    assert len(lines) == 3  # the header and one interaction per agent


def test_devui_magic_serves_this_kernels_agents(kernel: KernelSession) -> None:
    out = kernel.run("%agentnb devui")
    [html] = data(out, "text/html")
    assert "DevUI for" in html and "bot" in html and 'href="http://127.0.0.1:' in html
    url = html.split('href="', 1)[1].split('"', 1)[0]
    check = kernel.run(
        f"import urllib.request\nwith urllib.request.urlopen({url!r}, timeout=30) as r:\n    print(r.status)"
    )
    assert text(check).strip() == "200"
    stopped = kernel.run("%agentnb devui --stop")
    assert text(stopped).strip() == "Stopped 1 DevUI server(s)."


def test_agent_magic_without_autoawait_runs_in_the_background(kernel: KernelSession) -> None:
    out = kernel.run("%autoawait off")
    assert not [o for o in out if o["output_type"] == "error"]
    try:
        started = kernel.run("%%agent weather\nWeather in Bergen?")
        assert not [o for o in started if o["output_type"] == "error"], started
        waited = kernel.run(
            "%autoawait on\nfrom agentnb.notebook import last_view\nawait last_view().wait()\nprint(last_view().text)"
        )
        assert "Sunny in Bergen." in text(waited)
    finally:
        kernel.run("%autoawait on")


def _run(kc: Any, code: str, timeout: float = 60) -> tuple[str, list[dict[str, Any]]]:
    msg_id = kc.execute(code)
    return msg_id, _collect(kc, msg_id, timeout)


def _collect(kc: Any, msg_id: str, timeout: float) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            return outputs
        if kind in {"stream", "display_data", "execute_result", "error"}:
            outputs.append({"output_type": kind, **msg["content"]})
    raise TimeoutError(f"no idle status for {msg_id} within {timeout} s")


def test_await_approvals_receives_a_click_while_the_cell_awaits() -> None:
    """On ipykernel 7 a widget click reaches the kernel while an async cell awaits (no deadlock)."""
    from jupyter_client.manager import start_new_kernel

    kernel_env()
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        _run(kc, "%load_ext agentnb\n" + DEFINE)
        _, out = _run(
            kc,
            "from agentnb.notebook import AgentView\nview = AgentView(bot)\nview.run('Delete Notes', display=False)\n"
            "await view.wait()\nprint(next(iter(view.cards.values())).approve_button.model_id)",
        )
        model_id = text(out).strip()
        assert len(model_id) == 32, out
        waiting = kc.execute("response = await view.approvals()\nprint('resumed:', response.text.splitlines()[0])")
        time.sleep(1.0)  # the cell is now awaiting the click
        # What JupyterLab sends when the Approve button is clicked.
        click = {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}}
        kc.shell_channel.send(kc.session.msg("comm_msg", click))
        assert text(_collect(kc, waiting, 30)).strip() == "resumed: delete_file: deleted Notes"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_stop_button_ends_a_streaming_agent_cell() -> None:
    """Clicking Stop while a %%agent cell streams ends the cell with the partial reply kept."""
    from jupyter_client.manager import start_new_kernel

    kernel_env()
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        _run(
            kc,
            "%load_ext agentnb\nimport asyncio\nfrom agentnb import Agent\n"
            "from agentnb.local import FunctionChatClient\n"
            "async def model(messages, options):\n    for i in range(2000):\n"
            "        await asyncio.sleep(0.01)\n        yield f'tok{i} '\n"
            "slow = Agent(FunctionChatClient(model), name='slow')",
        )
        count_tasks = "import asyncio\nprint(len([t for t in asyncio.all_tasks() if not t.done()]))"
        _, before = _run(kc, count_tasks)
        cell = kc.execute("%%agent slow\nTalk for a long time")
        stop_id = None
        deadline = time.monotonic() + 30
        while stop_id is None and time.monotonic() < deadline:
            msg = kc.get_iopub_msg(timeout=5)
            if msg["msg_type"] == "comm_open":
                state = msg["content"]["data"].get("state", {})
                if state.get("description") == "Stop":
                    stop_id = msg["content"]["comm_id"]
        assert stop_id is not None
        time.sleep(0.5)  # let some tokens stream
        click = {"comm_id": stop_id, "data": {"method": "custom", "content": {"event": "click"}}}
        kc.shell_channel.send(kc.session.msg("comm_msg", click))
        started = time.monotonic()
        outputs = _collect(kc, cell, 30)
        assert time.monotonic() - started < 10  # far less than the 20 s the full reply would take
        final = [o for o in outputs if o["output_type"] == "display_data"][-1]["data"]["text/plain"]
        assert "[assistant · slow] tok0 tok1" in final and "tok1999" not in final
        assert final.rstrip().endswith("[stopped]")
        _, after = _run(kc, count_tasks)
        assert text(after) == text(before)  # the stopped run left no task behind
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
