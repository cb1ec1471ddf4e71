"""The DevUI views driven through their Python API (no browser): approval data flow, forms, forks, sizes.

The performance checks here are the issue's budgets: a 200-executor graph draws in under 2 s, a
10,000-event log is paged (only one page goes to the browser), a checkpoint loads for inspection in
under 200 ms.
"""

from __future__ import annotations

import re
import time
from typing import Literal

import panel as pn
import pytest
from pydantic import BaseModel, Field

from agentnb import Agent, AgentSession, FunctionTool, Message, ToolApprovalRule, tool
from agentnb._approval import approval_state
from agentnb.devui import Catalog, DevUI
from agentnb.devui._chat import ChatView
from agentnb.devui._forms import TypeForm
from agentnb.devui._graph import GraphPane, state_css
from agentnb.devui._runs import event_table, events_frame
from agentnb.devui._timetravel import TimeTravelView
from agentnb.devui._traces import spans_frame
from agentnb.devui._workflow import WorkflowView
from agentnb.devui.demos import demo_catalog
from agentnb.local import FunctionChatClient, ScriptedChatClient, ToolCallingChatClient
from agentnb.store import RunStore
from agentnb.workflows import (
    Executor,
    WorkflowBuilder,
    WorkflowCheckpoint,
    WorkflowContext,
    executor,
    handler,
)
from tests.devui.devui_harness import BUDGET_SCALE

CALLS: list[str] = []


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file (a test double that only records the call)."""
    CALLS.append(path)
    return f"deleted {path}"


@pytest.fixture
def store() -> RunStore:
    return RunStore(":memory:")


def transcript_html(view: ChatView) -> str:
    import panel as pn

    assert view._current is not None
    panes = [*view._current.transcript.select(pn.pane.HTML), *view._current.dock.select(pn.pane.HTML)]
    return "\n".join(str(pane.object) for pane in panes)


async def test_approve_runs_the_tool_once_and_deny_never(store: RunStore) -> None:
    CALLS.clear()
    agent = Agent(ToolCallingChatClient(), name="cleaner", tools=[delete_file])
    view = ChatView(Catalog().add(agent), store=store)
    await view.send("Delete Notes")
    assert CALLS == []  # the approval request ended the turn; nothing ran
    session = view._current
    assert session is not None and len(session.driver.pending) == 1
    request = session.driver.pending[0]
    assert request.type == "function_approval_request"
    card = session.cards[request.function_call.call_id]
    assert card.status == "awaiting approval"
    # What Approve does: record a function_approval_response and run again on the same session.
    assert "Approval needed" in transcript_html(view)
    session.driver.answer(request, True)
    await view._maybe_resume(session)
    assert CALLS == ["Notes"]
    assert card.status == "done" and "deleted Notes" in str(card.result)
    # A second request, denied: the tool body never runs and the card says so.
    await view.send("Delete Secrets")
    request = session.driver.pending[0]
    session.driver.answer(request, False, reason="no")
    await view._maybe_resume(session)
    assert CALLS == ["Notes"]
    assert session.cards[request.function_call.call_id].status == "denied"
    runs = store.list_runs(kind="agent")
    assert [r["status"] for r in runs].count("awaiting_approval") == 2
    assert [r["status"] for r in runs].count("completed") == 2


async def test_always_allow_answers_later_requests_with_approval_data(store: RunStore) -> None:
    CALLS.clear()
    agent = Agent(ToolCallingChatClient(), name="cleaner", tools=[delete_file])
    view = ChatView(Catalog().add(agent), store=store)
    session = view._require_view()
    approval_state(session.session).add(ToolApprovalRule("delete_file"))
    await view.send("Delete Cache")
    assert CALLS == ["Cache"]
    assert "approved automatically" in transcript_html(view)
    # The session history holds the request and the response: approval stayed data.
    kinds = [c.type for m in _history(session.session) for c in m.contents]
    assert "function_approval_request" in kinds and "function_approval_response" in kinds


def _labelled_search(server: str, ran: list[str]) -> FunctionTool:
    """A ``search`` tool from ``server``, labelled the way an MCP server's tools are."""

    def search(query: str) -> str:
        ran.append(f"{server}:{query}")
        return f"{server} found {query}"

    return FunctionTool(
        search, name="search", approval_mode="always_require", additional_properties={"server_label": server}
    )


async def test_always_allow_covers_the_tool_of_one_source_only(store: RunStore) -> None:
    ran: list[str] = []
    call = ScriptedChatClient.call
    client = ScriptedChatClient([call("search", query="a"), "one", call("search", query="b"), "two"])
    agent = Agent(client, name="finder", tools=[_labelled_search("docs", ran)])
    view = ChatView(Catalog().add(agent), store=store)
    session = view._require_view()
    await view.send("Search docs")
    [card] = list(session.dock)
    assert "Always allow search from docs" in str(card.objects[1].objects[2].label)
    session.driver.answer(session.driver.pending[0], True, always=True)
    await view._maybe_resume(session)
    assert ran == ["docs:a"]
    # The agent is re-pointed at another server (a notebook sharing the agent can do this while the DevUI
    # runs): its "search" has the same name, and the docs rule must not answer for it.
    agent.tools = [_labelled_search("mail", ran)]
    await view.send("Search mail")
    assert ran == ["docs:a"]
    assert [r.additional_properties["server_label"] for r in session.driver.pending] == ["mail"]
    assert "approved automatically" not in transcript_html(view)


def _history(session: AgentSession) -> list[Message]:
    return session.messages


async def test_model_output_is_escaped_in_the_transcript(store: RunStore) -> None:
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script> **ok**'
    agent = Agent(FunctionChatClient(lambda messages, options: hostile), name="h")
    view = ChatView(Catalog().add(agent), store=store)
    await view.send("<b>user html</b>")
    html = transcript_html(view)
    assert "<img" not in html and "<script" not in html and "<b>user html</b>" not in html
    assert "&lt;img" in html and "<strong>ok</strong>" in html


async def test_agent_failure_becomes_an_error_card(store: RunStore) -> None:
    def broken(messages: object, options: object) -> str:
        raise RuntimeError("model down")

    view = ChatView(Catalog().add(Agent(FunctionChatClient(broken), name="b")), store=store)
    await view.send("hi")
    html = transcript_html(view)
    message = view._current.transcript.objects[-1]  # the feed's last ChatMessage holds the error card
    assert isinstance(message, pn.chat.ChatMessage) and message.user == "b"
    card = message.object
    assert card.collapsed and "model down" in card.title
    assert "Traceback" in card.objects[0].object
    assert "the session is kept" in view.status.object
    assert store.list_runs()[0]["status"] == "failed"
    assert html


def test_sessions_new_switch_and_resume(store: RunStore) -> None:
    agent = Agent(ScriptedChatClient(["one", "two"]), name="s")
    view = ChatView(Catalog().add(agent), store=store)
    first = view.session_select.value
    view.new_session()
    assert len(view.session_select.options) == 2 and view.session_select.value != first
    view.session_select.value = first
    assert view._current is view._sessions[first]


class Order(BaseModel):
    item: str = "tea"
    count: int = Field(default=1, ge=1, le=10)
    size: Literal["small", "large"] = "small"
    gift: bool = False
    tags: list[str] = Field(default_factory=list)


def test_pydantic_models_become_forms_and_are_validated() -> None:
    form = TypeForm([Order])
    assert set(form._widgets) == {"item", "count", "size", "gift", "tags"}
    assert form._widgets["size"].options == ["small", "large"]
    assert form._widgets["count"].end == 10
    form._widgets["tags"].value = '["a", "b"]'
    form._widgets["gift"].value = True
    assert form.value() == Order(tags=["a", "b"], gift=True)
    form._widgets["tags"].value = "[not json"
    with pytest.raises(ValueError, match="tags: not valid JSON"):
        form.value()
    form._widgets["tags"].value = '"x"'
    with pytest.raises(ValueError, match="tags"):
        form.value()
    text = TypeForm([str])
    text._widgets["value"].value = "hello"
    assert text.value() == "hello"
    number = TypeForm([int])
    number._widgets["value"].value = 12
    assert number.value() == 12


def big_workflow(n: int = 200) -> object:
    @executor(id="start")
    async def start(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    class Step(Executor):
        @handler
        async def run(self, text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text)

    @executor(id="end")
    async def end(parts: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(str(len(parts)))

    middle = [Step(f"step_{i:03d}") for i in range(n - 2)]
    return (
        WorkflowBuilder(start_executor=start, name=f"big-{n}")
        .add_fan_out_edges(start, middle)
        .add_fan_in_edges(middle, end)
        .build()
    )


def test_a_200_executor_graph_draws_in_under_2_seconds() -> None:
    workflow = big_workflow(200)
    started = time.perf_counter()
    pane = GraphPane(workflow)
    pane.set_states(dict.fromkeys(pane.executor_ids, "completed"))
    pane.flush()
    elapsed = time.perf_counter() - started
    assert len(pane.executor_ids) == 200
    assert pane.svg.count('class="node executor"') + pane.svg.count('class="node start"') == 200
    assert elapsed < 2.0 * BUDGET_SCALE, f"{elapsed:.2f} s"
    assert (
        state_css({'we"ird': "failed"})
        == 'g.node[data-id="we\\"ird"] rect{fill:#ffebe9;stroke:#cf222e;stroke-width:2.5px}'
    )


def test_a_10000_event_log_is_paged(store: RunStore) -> None:
    store.start_run("big", kind="workflow", name="big", started_at=None)
    store.add_events(
        "big", [{"type": "executor_invoked", "executor_id": f"e{i}", "data": {"i": i}} for i in range(10_000)]
    )
    table = event_table()  # imports pandas; the budget is for loading the log, not for the import
    started = time.perf_counter()
    table.value = events_frame(store.list_events("big"))
    elapsed = time.perf_counter() - started
    assert len(table.value) == 10_000
    assert table.pagination == "remote" and table.page_size == 25  # one page of 25 rows reaches the browser
    assert elapsed < 2.0 * BUDGET_SCALE, f"{elapsed:.2f} s"


async def test_workflow_view_runs_and_loads_a_large_checkpoint_fast(store: RunStore) -> None:
    catalog = demo_catalog()
    view = WorkflowView(catalog.get("greeting-pipeline"), store=store)
    await view.run(message=view.form.value())
    assert view.graph.states == {"prepare": "completed", "shout": "completed", "decorate": "completed"}
    # A big checkpoint: 200 executor states and 1,000 pending messages.
    run = store.list_runs(kind="workflow")[0]
    last = store.list_checkpoints(run_id=run["run_id"])[-1]
    checkpoint = WorkflowCheckpoint.from_json(store.get_checkpoint(last["checkpoint_id"]))
    big = checkpoint.copy(
        checkpoint_id="big-checkpoint",
        executor_states={f"executor_{i}": {"seen": list(range(20)), "note": "x" * 100} for i in range(200)},
        shared_state={f"key_{i}": {"value": i, "text": "y" * 50} for i in range(500)},
    )
    big.pending_messages = (
        [type(big.pending_messages[0])("shout", f"message {i}") for i in range(1000)] if big.pending_messages else []
    )
    store.put_checkpoint(
        "big-checkpoint", run_id=run["run_id"], workflow_name=big.workflow_name, parent_id=last["checkpoint_id"],
        step=big.step + 1, created_at=None, data=big.to_json(),
    )  # fmt: skip
    travel = TimeTravelView(store, catalog)
    travel.panel()
    started = time.perf_counter()
    travel.select_checkpoint("big-checkpoint")
    elapsed = time.perf_counter() - started
    assert travel.inspector.object["executor_states"]["executor_7"]["note"] == "x" * 100
    assert elapsed < 0.2 * BUDGET_SCALE, f"{elapsed * 1000:.0f} ms"


async def test_workflow_view_grows_one_output_card_per_streaming_agent(store: RunStore) -> None:
    from agentnb.devui import Entity

    writer = Agent(ScriptedChatClient(["<b>Draft</b> about agents"], chunk_size=3), name="writer")
    reviewer = Agent(ScriptedChatClient(["Fine."], chunk_size=2), name="reviewer")
    workflow = WorkflowBuilder(start_executor=writer, name="pair").add_edge(writer, reviewer).build()
    view = WorkflowView(Entity(id="pair", name="pair", kind="workflow", obj=workflow), store=store)
    await view.run(message="go")
    cards = [str(pane.object) for pane in view.outputs.objects]
    assert len(cards) == 2  # one card per agent, not one per streamed update
    assert "writer" in cards[0] and "reviewer" in cards[1]
    assert "&lt;b&gt;Draft&lt;/b&gt; about agents" in cards[0] and "<b>Draft" not in cards[0]  # escaped
    assert "Fine." in cards[1]
    view.node_select.value = "writer"
    assert "about agents" in str(view.node_info.object)


def test_fork_edits_are_validated_before_anything_runs() -> None:
    from agentnb.workflows import parse_fork_edits

    workflow = demo_catalog().get("greeting-pipeline").obj
    good = '{"shared_state": {"times": 3}, "pending_messages": [{"source_id": "prepare", "data": "hi"}]}'
    edits = parse_fork_edits(good, workflow)
    assert edits["shared_state"] == {"times": 3}
    assert edits["pending_messages"][0].data == "hi"
    for text, message in [
        ("{", "Not valid JSON"),
        ("[]", "must be a JSON object"),
        ('{"nope": 1}', "Unknown keys"),
        ('{"executor_states": {"ghost": {}}}', "unknown executors"),
        ('{"pending_messages": [{"source_id": "prepare", "data": 5}]}', "no receiver accepts"),
        ('{"pending_messages": [{"source_id": "ghost", "data": "x"}]}', "unknown executor"),
        ('{"pending_messages": [{"data": "x"}]}', "neither source_id nor target_id"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_fork_edits(text, workflow)


def test_tree_svg_draws_forks_as_new_lanes() -> None:
    from agentnb.workflows import CheckpointInfo
    from agentnb.workflows import checkpoint_tree_svg as tree_svg

    infos = [
        CheckpointInfo("a", "w", "r1", None, 0, "1"),
        CheckpointInfo("b", "w", "r1", "a", 1, "2"),
        CheckpointInfo("c", "w", "r1", "b", 2, "3"),
        CheckpointInfo("f", "w", "r2", "b", 1, "4"),
    ]
    svg = tree_svg(infos, selected="f")
    assert svg.count('class="cp"') == 4
    assert 'data-id="f"' in svg and "#0969da" in svg  # the selected fork is highlighted
    assert 'height="122"' in svg  # two lanes


def test_waterfall_orders_spans_as_a_tree() -> None:
    spans = [
        {"span_id": "c", "parent_id": "a", "name": "chat", "start_ns": 20, "end_ns": 60, "operation": "chat"},
        {"span_id": "a", "parent_id": None, "name": "invoke_agent x", "start_ns": 0, "end_ns": 100},
        {"span_id": "t", "parent_id": "a", "name": "execute_tool <b>", "start_ns": 70, "end_ns": 80},
    ]
    frame = spans_frame(spans)
    assert list(frame["span_id"]) == ["a", "c", "t"]
    assert frame["span"].iloc[2].endswith("execute_tool <b>")  # shown as plain text by the table
    assert "left:20.00%" in frame["waterfall"].iloc[1] and "width:40.00%" in frame["waterfall"].iloc[1]


async def test_resume_a_stored_session_with_a_pending_approval(store: RunStore) -> None:
    CALLS.clear()
    agent = Agent(ToolCallingChatClient(), name="cleaner", tools=[delete_file])
    first = ChatView(Catalog().add(agent), store=store)
    await first.send("Delete Logs")
    session_id = first._current.session.session_id
    assert [s["session_id"] for s in store.list_sessions()] == [session_id]
    # Listed by what was said, to whom, and when; not by a bare id.
    (label,) = first.resume_select.options
    assert label.startswith("Delete Logs · cleaner · ") and first.resume_select.options[label] == session_id
    # A new browser session (or a restarted server) resumes it from the store.
    second = ChatView(Catalog().add(agent), store=store)
    await second.resume(session_id)
    view = second._current
    assert view.label.startswith("resumed")
    assert "Delete Logs" in transcript_html(second)
    assert len(view.driver.pending) == 1 and "Approval needed" in transcript_html(second)
    request = view.driver.pending[0]
    view.driver.answer(request, True)
    await second._maybe_resume(view)
    assert CALLS == ["Logs"]


async def test_runs_view_draws_a_stored_workflow_run_without_the_workflow(store: RunStore) -> None:
    from agentnb.devui._runs import RunsView

    catalog = demo_catalog()
    view = WorkflowView(catalog.get("text-stats"), store=store)
    view.form._widgets["value"].value = "a short text?"
    await view.run(message=view.form.value())
    runs = RunsView(store)  # knows only the store, like a DevUI in another process
    assert runs.refresh() == 1
    runs.select(store.list_runs()[0]["run_id"])
    graph = runs._graph
    assert graph is not None and len(graph.executor_ids) == 7
    assert graph.states["short_report"] == "completed" and "long_report" not in graph.states
    assert 'data-id="short_report"' in graph.pane.object and "#dafbe1" in graph.pane.object


def test_runs_view_names_the_notebook_cell_that_started_a_run(store: RunStore) -> None:
    from agentnb.devui._runs import RunsView

    cell = {"execution_count": 7, "source": "r = await bot.run('hi')", "notebook": "a.ipynb", "kernel": "k"}
    store.start_run("r1", kind="agent", name="bot", metadata={"cell": cell})
    store.start_run("r2", kind="agent", name="bot")
    runs = RunsView(store)
    assert runs.refresh() == 2
    frame = runs.table.value
    assert dict(zip(frame["run_id"], frame["cell"], strict=True)) == {"r1": "[7] r = await bot.run('hi')", "r2": ""}
    # Name, kind, status and cell first; the start to the second; the id, for copying, last.
    assert list(frame.columns)[:4] == ["name", "kind", "status", "cell"] and list(frame.columns)[-1] == "run_id"
    started = list(frame["started_at"])
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", t) for t in started), started


async def test_resume_from_here_starts_a_new_run_from_the_checkpoint(store: RunStore) -> None:
    catalog = demo_catalog()
    view = WorkflowView(catalog.get("greeting-pipeline"), store=store)
    await view.run(message=view.form.value())
    travel = TimeTravelView(store, catalog)
    travel.panel()
    step_two = travel._chain[2]
    travel.select_checkpoint(step_two.checkpoint_id)
    assert not travel.resume_button.disabled
    await travel._on_resume()
    result = "\n".join(str(p.object) for p in travel.action_result.select(pn.pane.HTML))
    assert "HELLO ADA!!" in result and "Resumed" in result
    runs = store.list_runs(kind="workflow")
    assert len(runs) == 2 and runs[0]["metadata"].get("resumed_from") == step_two.checkpoint_id


async def test_time_travel_follows_the_run_started_on_the_page(store: RunStore) -> None:
    app = DevUI(demo_catalog(), store=store)
    app.panel()
    travel = app._timetravel
    assert travel is not None
    for workflow in ("greeting-pipeline", "text-stats"):
        app.select(workflow)
        view = app._views[workflow]
        await view.run(message=view.form.value())
        assert travel.run_select.value == view.run_id
        assert workflow in str(travel.run_info.object)


def test_trace_export_is_csv_of_the_shown_spans(store: RunStore) -> None:
    from agentnb.devui._traces import TracesView

    store.add_spans(
        [
            {"trace_id": "t1", "span_id": "a", "name": "invoke_agent x", "start_ns": 0, "end_ns": 10_000_000},
            {"trace_id": "t1", "span_id": "b", "parent_id": "a", "name": "chat m", "start_ns": 1, "end_ns": 5_000_000,
             "operation": "chat", "input_tokens": 7, "output_tokens": 3},
        ]
    )  # fmt: skip
    traces = TracesView(store)
    assert traces.refresh_traces() == 1
    traces.show_trace("t1")
    assert "in 7 tokens" in traces.totals.object and "total 10.0 ms" in traces.totals.object
    csv = traces._csv().getvalue().splitlines()
    assert csv[0].startswith("id,trace_id,span_id") and len(csv) == 3


async def test_hosted_tool_runs_and_citations_show_in_the_chat(store: RunStore) -> None:
    """The Responses client over real HTTP, streaming a code interpreter run and a cited answer into the chat."""
    from agentnb.openai import OpenAIChatClient
    from tests.openai_server import OpenAIServer, Reply

    code_call = {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "code": "print('<b>42</b>')",
        "container_id": "cntr_1",
        "status": "completed",
        "outputs": [{"type": "logs", "logs": "<b>42</b>"}],
    }
    citation = {
        "type": "url_citation",
        "title": "<i>Src</i>",
        "url": "https://src.example/",
        "start_index": 0,
        "end_index": 2,
    }
    with OpenAIServer() as server:
        server.script(Reply(text="It is 42.", hosted=[code_call], annotations=[citation]))
        client = OpenAIChatClient("m", base_url=server.base_url, api_key="sk-test", max_retries=0)
        agent = Agent(client, name="coder", tools=[OpenAIChatClient.get_code_interpreter_tool()])
        view = ChatView(Catalog().add(agent), store=store)
        await view.send("compute")
        await client.close()
        assert not server.problems()
    html = transcript_html(view)
    assert "code interpreter ran" in html and "print(&#x27;&lt;b&gt;42&lt;/b&gt;&#x27;)" in html
    assert "<b>42</b>" not in html and "<i>Src</i>" not in html
    assert 'href="https://src.example/"' in html and "&lt;i&gt;Src&lt;/i&gt;" in html
    assert "It is 42." in html
