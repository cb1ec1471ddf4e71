"""The DevUI's Runs and Traces views name the notebook cell a run came from and link back to the notebook."""

from __future__ import annotations

from agentnb.devui._cell_link import cell_html
from agentnb.devui._runs import RunsView
from agentnb.devui._traces import TracesView
from agentnb.store import RunStore

URL = "http://127.0.0.1:8888/lab/tree/work/analysis.ipynb"
CELL = {
    "execution_count": 12,
    "source": "r = await bot.run('<b>hi</b>')",
    "notebook": "work/analysis.ipynb",
    "notebook_url": URL,
    "kernel": "k1",
}


def _store_with_a_notebook_run() -> RunStore:
    store = RunStore(":memory:")
    store.add_runs(
        [
            {
                "run_id": "agent-t1",
                "kind": "agent",
                "name": "bot",
                "status": "completed",
                "started_at": 1.0,
                "ended_at": 2.0,
                "metadata": {"cell": CELL, "trace_id": "t1", "via": "notebook"},
                "events": [],
            }
        ]
    )
    store.add_spans(
        [
            {"trace_id": "t1", "span_id": "a", "name": "invoke_agent bot", "start_ns": 0, "end_ns": 9_000_000,
             "run_id": "agent-t1", "attributes": {"agentnb.notebook.cell": "[12] r = await bot.run('<b>hi</b>')"}},
            {"trace_id": "t1", "span_id": "b", "parent_id": "a", "name": "chat m", "start_ns": 1, "end_ns": 5_000_000,
             "operation": "chat", "input_tokens": 7, "output_tokens": 3, "run_id": "agent-t1"},
        ]
    )  # fmt: skip
    return store


def test_the_runs_view_shows_the_cell_and_opens_its_notebook() -> None:
    store = _store_with_a_notebook_run()
    runs = RunsView(store)
    assert runs.refresh() == 1
    runs.select("agent-t1")
    title = runs.run_title.object
    assert "[12] r = await bot.run(&#x27;&lt;b&gt;hi&lt;/b&gt;&#x27;)" in title and "<b>hi" not in title
    assert f"href='{URL}'" in title and "open in notebook" in title and "in work/analysis.ipynb" in title


def test_the_traces_view_shows_the_cell_of_the_trace() -> None:
    store = _store_with_a_notebook_run()
    traces = TracesView(store)
    assert traces.refresh_traces() == 1
    traces.show_trace("t1")
    totals = traces.totals.object
    assert "[12] r = await bot.run(" in totals and f"href='{URL}'" in totals and "in 7 tokens" in totals
    # A trace whose run is not stored still names its cell, from the spans' own tag (without a link).
    store.add_spans(
        [{"trace_id": "t2", "span_id": "c", "name": "invoke_agent bot", "start_ns": 0, "end_ns": 1_000,
          "attributes": {"agentnb.notebook.cell": "[3] await bot.run('x')"}}]
    )  # fmt: skip
    traces.show_trace("t2")
    assert "[3] await bot.run(" in traces.totals.object and "open in notebook" not in traces.totals.object


def test_only_web_links_are_made_and_everything_is_escaped() -> None:
    hostile = {**CELL, "notebook_url": "javascript:alert(1)", "notebook": "<img src=x onerror=alert(1)>"}
    shown = cell_html({"cell": hostile})
    assert "href" not in shown and "<img" not in shown and "&lt;img" in shown
    quoted = cell_html({"cell": {**CELL, "notebook_url": "http://127.0.0.1:1/x?a='b'"}})
    assert "href='http://127.0.0.1:1/x?a=&#x27;b&#x27;'" in quoted
    assert cell_html({}) == "" and cell_html('{"cell": {"source": "x", "execution_count": 1}}').startswith("<span")
