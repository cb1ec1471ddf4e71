"""Widgets driven through their API: buttons clicked, values set; no comm or task left behind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import ipywidgets.widgets.widget as widget_module
import pytest

from agentnb import Agent, Content
from agentnb.local import ScriptedChatClient
from agentnb.notebook import AgentView, ApprovalCard, ChatWidget, TraceView
from tests.notebook.nb_helpers import ops_agent, slow_agent


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fail when a test leaves widget comms open or tasks running."""
    before = set(widget_module._instances)
    yield
    leaked = [widget_module._instances[k] for k in set(widget_module._instances) - before]
    assert leaked == [], f"{len(leaked)} widget(s) left open: {[type(w).__name__ for w in leaked][:10]}"


def _others() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]


async def test_view_streams_then_shows_usage(no_leaks: None) -> None:
    view = AgentView(Agent(ScriptedChatClient(["Hello **there**"]), name="greeter"))
    assert "greeter" in view.header.value and "ScriptedChatClient" in view.header.value
    view.run("Hi", display=False)
    assert view.status == "running" and view.stop_button.disabled is False
    response = await view.wait()
    assert response.text == "Hello **there**"
    assert "<strong>there</strong>" in view.transcript.value
    assert "done" in view.status_line.value and "tokens" in view.status_line.value
    assert view.stop_button.disabled is True
    assert view.to_text().endswith("[done] 1 in · 2 out · 3 total tokens")
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == view.to_text() and "Hello" in bundle["text/html"]
    view.close()
    assert _others() == []


async def test_approval_card_click_resumes_in_the_background(no_leaks: None) -> None:
    view = AgentView(ops_agent())
    view.run("Delete Notes", display=False)
    await view.wait()
    assert view.status == "waiting"
    [card] = view.cards.values()
    assert card.tool_name == "delete_file"
    assert card.widget in view.cards_box.children
    assert "&quot;path&quot;: &quot;Notes&quot;" in card.summary.value
    card.reason.value = "looks safe"
    card.approve_button.click()
    assert card.approve_button.disabled and card.deny_button.disabled
    assert view.status == "running"  # resumed at once, as a background task
    response = await view.wait()
    assert view.status == "done" and "deleted Notes" in response.text
    assert "approved" in view.transcript.value
    answers = [c for m in view.session.messages for c in m.contents if c.type == "function_approval_response"]
    assert answers[0].approved and answers[0].reason == "looks safe"
    card.approve_button.click()  # a late double click sends nothing
    assert view.status == "done"
    view.close()
    assert _others() == []


async def test_deny_with_always_checkbox_does_not_always_allow(no_leaks: None) -> None:
    view = AgentView(ops_agent())
    view.run("Delete Notes", display=False)
    await view.wait()
    [card] = view.cards.values()
    card.always.value = True
    card.deny_button.click()
    response = await view.wait()
    assert "rejected by user" in response.text
    assert view.controller.always_allowed == []
    view.close()


async def test_always_allow_skips_the_next_card(no_leaks: None) -> None:
    view = AgentView(ops_agent())
    view.run("Delete Notes", display=False)
    await view.wait()
    [card] = view.cards.values()
    card.always.value = True
    card.approve_button.click()
    await view.wait()
    view.send("Delete Drafts")
    await view.wait()
    assert view.status == "done" and view.pending == [] and "deleted Drafts" in view.text
    view.close()


async def test_approvals_waits_for_clicks_made_meanwhile(no_leaks: None) -> None:
    view = AgentView(ops_agent())
    view.run("Delete Notes", display=False)
    await view.wait()

    async def click_later() -> None:
        await asyncio.sleep(0.05)
        view.approve()

    clicker = asyncio.create_task(click_later())
    response = await asyncio.wait_for(view.approvals(), timeout=10)
    await clicker
    assert "deleted Notes" in response.text
    view.close()


async def test_stop_button_cancels_the_stream(no_leaks: None) -> None:
    view = AgentView(slow_agent())
    view.run("go", display=False)
    while len(view.controller.live_updates) < 3:
        await asyncio.sleep(0.01)
    view.stop_button.click()
    await view.wait()
    assert view.status == "stopped" and "stopped" in view.status_line.value
    assert "tok2" in view.transcript.value and "tok199" not in view.transcript.value
    view.close()
    assert _others() == []


async def test_close_while_running_leaves_no_task(no_leaks: None) -> None:
    view = AgentView(slow_agent())
    view.run("go", display=False)
    await asyncio.sleep(0.05)
    view.close()
    await asyncio.sleep(0.05)
    assert _others() == []


async def test_chat_widget_keeps_one_session(no_leaks: None) -> None:
    chat = ChatWidget(Agent(ScriptedChatClient(["Hi Ada!", "Your name is Ada."]), name="helper"))
    chat.input.value = "I'm Ada."
    assert chat.submit() is True
    assert chat.input.value == "" and chat.send_button.disabled
    assert chat.submit("ignored while busy") is False
    await chat.wait()
    chat.input.value = "   "
    assert chat.submit() is False  # empty messages are not sent
    chat.input.value = "What's my name?"
    chat.send_button.click()
    await chat.wait()
    assert chat.text == "Your name is Ada."
    assert len(chat.session.messages) == 4
    assert "I&#x27;m Ada." in chat.transcript.value or "I'm Ada." in chat.transcript.value
    chat.close()


def test_approval_card_alone(no_leaks: None) -> None:
    answers: list[tuple[bool, str | None, bool]] = []
    call = Content.from_function_call("c1", "rm", arguments={"path": "<b>x</b>"})
    card = ApprovalCard(
        Content.from_function_approval_request("r1", call), on_answer=lambda r, a, why, al: answers.append((a, why, al))
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in card.summary.value and "<b>x</b>" not in card.summary.value
    card.always.value = True
    card.approve()
    card.deny()
    assert answers == [(True, None, True)]
    assert "approved" in card.summary.value
    card.close()


def _row(**values: object) -> dict[str, object]:
    row: dict[str, object] = {
        "parent_id": None, "kind": "INTERNAL", "status_code": "OK", "status_message": None, "operation": None,
        "agent_name": None, "model": None, "tool_name": None, "input_tokens": None, "output_tokens": None,
        "run_id": None, "attributes": {}, "events": [], "resource": {},
    }  # fmt: skip
    row.update(values)
    return row


def test_trace_view_tree_waterfall_and_dataframe(no_leaks: None) -> None:
    t0 = 1_700_000_000_000_000_000
    a, b = "a" * 32, "b" * 32
    rows = [
        _row(trace_id=a, span_id="1", name="invoke_agent ops", start_ns=t0, end_ns=t0 + 10_000_000,
             operation="invoke_agent", input_tokens=5, output_tokens=7,
             attributes={"gen_ai.agent.name": "<script>x</script>"}),
        _row(trace_id=a, span_id="2", parent_id="1", name="chat scripted", start_ns=t0 + 1_000_000,
             end_ns=t0 + 4_000_000, status_code="ERROR", status_message="boom", operation="chat"),
        _row(trace_id=b, span_id="3", name="execute_tool rm", start_ns=t0 + 20_000_000, end_ns=t0 + 21_000_000,
             operation="execute_tool"),
    ]  # fmt: skip
    view = TraceView(rows)
    html = view.tree.value
    assert html.count("<details") == 3 and "&lt;script&gt;" in html and "<script>x" not in html
    assert "width:30.00%" in html  # the chat span: 3 ms of a 10 ms trace
    assert view.to_text().splitlines()[:3] == [
        "trace aaaaaaaaaaaaaaaa · 2 spans · 10.0 ms",
        "  invoke_agent ops  10.0 ms · 5→7 tok",
        "    chat scripted  3.0 ms [error]",
    ]
    static = view._repr_mimebundle_()["text/html"]
    assert "gen_ai.agent.name" in html and "gen_ai.agent.name" not in static and "invoke_agent ops" in static
    view.picker.value = "b" * 32
    assert "execute_tool rm" in view.tree.value and "invoke_agent" not in view.tree.value
    view.frame_button.click()
    assert list(view.frame["name"]) == ["execute_tool rm"]
    view.close()


def test_trace_view_without_spans(no_leaks: None) -> None:
    view = TraceView([])
    assert "No spans recorded yet" in view.tree.value
    assert view.to_text() == "No spans recorded yet."
    view.close()


async def test_approvals_refuses_to_hang_on_old_kernels(no_leaks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentnb.notebook import _views

    monkeypatch.setattr(_views, "in_kernel", lambda: True)
    monkeypatch.setattr(_views, "kernel_supports_awaiting_widgets", lambda: False)
    view = AgentView(ops_agent())
    view.run("Delete Notes", display=False)
    with pytest.raises(RuntimeError, match=r"ipykernel < 7.*would hang"):
        await asyncio.wait_for(view.approvals(), timeout=10)
    assert view.status == "waiting"  # nothing lost: the card still works
    view.approve()
    await view.wait()
    assert view.status == "done"
    view.close()


def test_kernel_version_detection(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipykernel

    from agentnb.notebook import kernel_supports_awaiting_widgets

    monkeypatch.setattr(ipykernel, "__version__", "6.29.5")
    assert kernel_supports_awaiting_widgets() is False
    monkeypatch.setattr(ipykernel, "__version__", "7.0.1")
    assert kernel_supports_awaiting_widgets() is True


async def test_hostile_model_output_stays_inert_in_the_live_view(no_leaks: None) -> None:
    from agentnb import tool
    from tests.notebook.test_notebook_display import HOSTILE, assert_inert

    @tool(approval_mode="always_require")
    def run_shell(command: str) -> str:
        """Run a command."""
        return HOSTILE

    client = ScriptedChatClient([ScriptedChatClient.call("run_shell", command=HOSTILE), HOSTILE])
    view = AgentView(Agent(client, name=HOSTILE, tools=[run_shell]))
    view.run(HOSTILE, display=False)
    await view.wait()
    [card] = view.cards.values()
    for html in (view.header.value, view.transcript.value, card.summary.value, view.to_html()):
        assert_inert(html)
    card.approve()
    await view.wait()
    assert view.status == "done"
    for html in (view.transcript.value, view.status_line.value, view.to_html()):
        assert_inert(html)
    assert "&lt;script&gt;" in view.transcript.value
    view.close()
