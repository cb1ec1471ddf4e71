"""Drive `panel serve devui --args DIR` with user entities: import errors, failures, hostile output, live runs.

The entity folder holds a module that fails to import, an agent whose model answers with hostile HTML, an
agent that raises, and a workflow whose executor raises. The page must list the broken module, show errors
with a folded traceback, keep serving afterwards, and never run script from model output. Runs written to
the store by another process appear without a reload.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.devui.devui_harness import BUDGET_SCALE, DOCS, WAIT, DevUIServer, dark_page, send_chat, text

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

BROKEN = "raise RuntimeError('boom while importing')\n"

ENTITIES = textwrap.dedent(
    """
    from agentnb import Agent
    from agentnb.local import FunctionChatClient
    from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

    HOSTILE = (
        'Here is **bold** <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> '
        '[click](javascript:window.__pwned=3)'
    )


    def hostile_model(messages, options):
        return HOSTILE


    def failing_model(messages, options):
        raise ValueError("the model exploded")


    @executor(id="ok_step")
    async def ok_step(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)


    @executor(id="bad_step")
    async def bad_step(text: str, ctx: WorkflowContext[str, str]) -> None:
        if text == "fail":
            raise ValueError("executor exploded on purpose")
        await ctx.yield_output(f"fine: {text}")


    from agentnb.workflows import Executor, handler


    class Relay(Executor):
        @handler
        async def relay(self, text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text)


    @executor(id="gather")
    async def gather(parts: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(str(len(parts)))


    @executor(id="quick")
    async def quick(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)


    @executor(id="slow_step")
    async def slow_step(text: str, ctx: WorkflowContext[str, str]) -> None:
        import asyncio

        await asyncio.sleep(4)
        await ctx.yield_output(f"slowly: {text}")


    slow = WorkflowBuilder(start_executor=quick, name="slow").add_edge(quick, slow_step).build()

    fan = [Relay(f"relay_{i:03d}") for i in range(198)]
    big = (
        WorkflowBuilder(start_executor=ok_step, name="big")
        .add_fan_out_edges(ok_step, fan)
        .add_fan_in_edges(fan, gather)
        .build()
    )

    agents = [
        Agent(FunctionChatClient(hostile_model), name="hostile", description="Answers with hostile HTML."),
        Agent(FunctionChatClient(failing_model), name="failing", description="Its model always raises."),
    ]
    workflows = [WorkflowBuilder(start_executor=ok_step, name="fragile").add_edge(ok_step, bad_step).build(), big, slow]
    """
)


@pytest.fixture(scope="module")
def entity_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevUIServer]:
    folder = tmp_path_factory.mktemp("entities")
    (folder / "broken.py").write_text(BROKEN)
    (folder / "mine.py").write_text(ENTITIES)
    server = DevUIServer(tmp_path_factory.mktemp("devui-home-entities"), args=[str(folder)])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def app(entity_server: DevUIServer, browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
    page.goto(entity_server.url)
    page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_broken_module_is_listed_with_its_error(app: Any) -> None:
    card = app.locator(".anb-load-error")
    card.wait_for(timeout=WAIT)
    assert "broken.py" in text(card)
    assert "boom while importing" in text(card)
    assert app.locator(".anb-offline").count() == 0  # user entities: no demo banner
    for entity in ("hostile", "failing", "fragile"):
        assert app.locator(f".anb-entity-{entity} button").count() == 1


def test_model_output_is_sanitized(app: Any) -> None:
    app.locator(".anb-entity-hostile button").click()
    app.get_by_text("Answers with hostile HTML.").first.wait_for(timeout=WAIT)
    send_chat(app, "hostile", "hello")
    bubble = app.locator(".anb-msg.anb-assistant", has_text="Here is")
    bubble.wait_for(timeout=WAIT)
    html = bubble.evaluate("el => el.innerHTML")
    assert "<strong>bold</strong>" in html  # Markdown still renders
    assert "<img" not in html
    assert "<script" not in html
    assert 'href="javascript' not in html  # the link text stays, as inert text
    assert bubble.locator("img, script, a").count() == 0
    assert app.evaluate("window.__pwned === undefined")


def test_agent_error_is_shown_folded_and_the_server_keeps_serving(app: Any) -> None:
    app.locator(".anb-entity-failing button").click()
    app.get_by_text("Its model always raises.").first.wait_for(timeout=WAIT)
    send_chat(app, "failing", "hi")
    card = app.locator(".anb-error-card")
    card.wait_for(timeout=WAIT)
    assert "the model exploded" in text(card)
    traceback = app.locator(".anb-error-card .anb-traceback")
    assert not traceback.is_visible()  # folded until the user opens it
    card.locator(".card-header").click()
    traceback.wait_for(timeout=WAIT)
    assert "Traceback" in text(traceback)
    # The server is still serving: another agent answers.
    app.locator(".anb-entity-hostile button").click()
    app.get_by_text("Answers with hostile HTML.").first.wait_for(timeout=WAIT)
    send_chat(app, "hostile", "again")
    app.locator(".anb-msg.anb-assistant", has_text="Here is").nth(1).wait_for(timeout=WAIT)


def test_the_message_box_stays_in_view_after_30_messages(app: Any) -> None:
    app.locator(".anb-entity-hostile button").click()
    app.get_by_text("Answers with hostile HTML.").first.wait_for(timeout=WAIT)
    for i in range(15):  # 15 questions and 15 answers
        send_chat(app, "hostile", f"note {i:02d}")
        app.locator(".anb-msg.anb-assistant", has_text="Here is").nth(i + 2).wait_for(timeout=WAIT)
    box = app.locator(".anb-chat-input textarea").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 1000, box
    assert app.locator(".anb-chat-input textarea").is_visible()
    # The conversation scrolls inside its own pane; the page itself does not grow.
    scroll, height = app.locator(".anb-transcript .chat-feed-log").first.evaluate(
        "el => [el.scrollHeight, el.clientHeight]"
    )
    assert scroll > height, (scroll, height)
    assert app.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 4")
    # The newest answer is in view (the pane follows the conversation).
    last = app.locator(".anb-msg.anb-user", has_text="note 14").bounding_box()
    assert last is not None and 0 <= last["y"] <= 1000


def test_failing_executor_is_red_on_the_graph_and_the_next_run_works(app: Any) -> None:
    app.locator(".anb-entity-fragile button").click()
    app.get_by_text("2 executors · start: ok_step").first.wait_for(timeout=WAIT)
    area = app.locator(".anb-workflow-view .anb-text-input textarea")
    area.fill("fail")
    app.locator(".anb-run-workflow button").click()
    app.locator(".anb-wf-status", has_text="failed").wait_for(timeout=WAIT)
    fill = app.locator('g.node[data-id="bad_step"] rect').evaluate("el => getComputedStyle(el).fill")
    assert fill == "rgb(255, 235, 233)"  # STATE_COLOURS["failed"]
    details = app.locator("details", has_text="bad_step failed")
    details.first.wait_for(timeout=WAIT)
    assert "executor exploded on purpose" in text(details.first)
    area.fill("works")
    app.locator(".anb-run-workflow button").click()
    app.locator(".anb-output", has_text="fine: works").wait_for(timeout=WAIT)


def test_a_slow_executor_is_marked_running_while_it_runs(app: Any) -> None:
    app.locator(".anb-entity-slow button").click()
    app.get_by_text("2 executors · start: quick").first.wait_for(timeout=WAIT)
    app.locator(".anb-workflow-view .anb-text-input textarea").fill("go")
    app.locator(".anb-run-workflow button").click()
    # While slow_step sleeps no further event arrives: the graph must already show it running.
    app.wait_for_function(
        """() => {
          const deep = (root) => {
            const hit = root.querySelector('g.node[data-id="slow_step"] rect');
            if (hit) return hit;
            for (const el of root.querySelectorAll('*')) {
              if (el.shadowRoot) { const found = deep(el.shadowRoot); if (found) return found; }
            }
            return null;
          };
          const rect = deep(document);
          return rect && getComputedStyle(rect).fill === 'rgb(255, 248, 197)';
        }""",
        timeout=WAIT,
    )
    assert app.locator(".anb-output", has_text="slowly: go").count() == 0  # still running
    app.locator(".anb-output", has_text="slowly: go").wait_for(timeout=WAIT)
    # The output is yielded while the executor still runs; its completion is the next event.
    rect = app.locator('g.node[data-id="slow_step"] rect')
    deadline = time.monotonic() + WAIT / 1000
    while (fill := rect.evaluate("el => getComputedStyle(el).fill")) != "rgb(218, 251, 225)":
        assert time.monotonic() < deadline, f"slow_step never turned completed: {fill}"
        app.wait_for_timeout(100)
    # Each node's last input and output, on demand.
    app.locator(".anb-node-card .card-header").click()
    app.locator(".anb-node-select select").select_option("slow_step")
    details = app.locator(".anb-node-info", has_text="slowly: go")
    details.wait_for(timeout=WAIT)
    assert "Last input" in text(details) and "completed" in text(details)


BOX_AND_EDGE_CHECK = """svg => {
  const boxes = [...svg.querySelectorAll('g.node')].map(g => {
    const b = g.querySelector('rect, circle').getBBox();
    return [b.x, b.y, b.x + b.width, b.y + b.height, g.getAttribute('data-id') || 'join'];
  });
  const overlaps = [];
  const sorted = [...boxes].sort((a, b) => a[0] - b[0]);
  for (let i = 0; i < sorted.length; i++)
    for (let j = i + 1; j < sorted.length && sorted[j][0] < sorted[i][2]; j++)
      if (sorted[j][1] < sorted[i][3] && sorted[i][1] < sorted[j][3]) overlaps.push([sorted[i][4], sorted[j][4]]);
  const inside = (p, b, m) => p.x > b[0] + m && p.x < b[2] - m && p.y > b[1] + m && p.y < b[3] - m;
  const crossings = [];
  const paths = [...svg.querySelectorAll('path.edge')];
  for (const path of paths) {
    const n = path.getTotalLength(), pts = [];
    for (let k = 0; k <= 60; k++) pts.push(path.getPointAtLength(n * k / 60));
    const near = (p, b) => p.x >= b[0] - 1 && p.x <= b[2] + 1 && p.y >= b[1] - 1 && p.y <= b[3] + 1;
    const ends = boxes.filter(b => near(pts[0], b) || near(pts[pts.length - 1], b));
    for (const b of boxes) if (!ends.includes(b) && pts.some(p => inside(p, b, 0.5))) crossings.push(b[4]);
  }
  return {nodes: boxes.length, edges: paths.length, overlaps: overlaps.slice(0, 5), crossings: crossings.slice(0, 5)};
}"""


def test_a_200_executor_graph_draws_in_under_2_seconds_in_the_browser(app: Any) -> None:
    started = time.perf_counter()
    app.locator(".anb-entity-big button").click()
    app.locator('g.node[data-id="relay_197"]').wait_for(timeout=WAIT)
    elapsed = time.perf_counter() - started
    assert app.locator("g.node.executor, g.node.start").count() == 200
    assert elapsed < 2.0 * BUDGET_SCALE, f"the 200-executor graph took {elapsed:.2f} s to appear"
    # Zoom to fit: the whole graph fits the pane's width; zooming in again makes it larger.
    graph = app.locator(".anb-workflow-view .anb-graph svg")
    wide = graph.bounding_box()
    app.locator(".anb-workflow-view .anb-zoom-fit").click()
    app.wait_for_timeout(300)
    fitted = graph.bounding_box()
    pane = app.locator(".anb-workflow-view .anb-graph-pane").bounding_box()
    assert wide is not None and fitted is not None and pane is not None
    assert fitted["width"] < wide["width"] and fitted["width"] <= pane["width"] + 2, (wide, fitted, pane)
    app.locator(".anb-workflow-view .anb-zoom-in").click()
    app.wait_for_timeout(300)
    bigger = graph.bounding_box()
    assert bigger is not None and bigger["width"] > fitted["width"] * 1.2
    # Ctrl + wheel zooms too (around the factor the buttons use).
    app.mouse.move(bigger["x"] + 200, bigger["y"] + bigger["height"] / 2)
    app.keyboard.down("Control")
    app.mouse.wheel(0, -100)
    app.keyboard.up("Control")
    app.wait_for_timeout(300)
    wheeled = graph.bounding_box()
    assert wheeled is not None and wheeled["width"] > bigger["width"] * 1.05, (bigger, wheeled)
    # Dragging the graph pans it: the drawing follows the pointer.
    for _ in range(4):
        app.locator(".anb-workflow-view .anb-zoom-in").click()
    app.wait_for_timeout(300)
    wheeled = graph.bounding_box()
    assert wheeled is not None and wheeled["width"] > pane["width"] * 2
    start_x, start_y = pane["x"] + pane["width"] / 2, wheeled["y"] + wheeled["height"] / 2
    app.mouse.move(start_x, start_y)
    app.mouse.down()
    app.mouse.move(start_x - 150, start_y - 20, steps=5)
    app.mouse.up()
    app.wait_for_timeout(200)
    panned = graph.bounding_box()
    assert panned is not None and panned["x"] == pytest.approx(wheeled["x"] - 150, abs=3), (wheeled, panned)
    # The drawing in the browser: no two node boxes overlap, and no edge passes through a node other than
    # its own ends (the browser's own path geometry, sampled along each edge, in the SVG's units).
    report = graph.evaluate(BOX_AND_EDGE_CHECK)
    assert report["nodes"] == 201 and report["edges"] == 198 + 199, report
    assert report["overlaps"] == [] and report["crossings"] == [], report
    # At zoom 1 every label reads at its full size (the README's picture of the 200-executor graph).
    app.locator(".anb-workflow-view .anb-graph-pane").evaluate("h => h.style.setProperty('--anb-zoom', 1)")
    app.wait_for_timeout(300)
    middle = app.locator('g.node[data-id="relay_098"]')  # under the start node, the fan's middle
    middle.evaluate("g => g.scrollIntoView({block: 'center', inline: 'center'})")
    app.wait_for_timeout(300)
    app.screenshot(path=str(DOCS / "devui-graph-200.png"))


def test_the_200_executor_graph_in_the_dark_theme(entity_server: DevUIServer, browser: Any) -> None:
    with dark_page(browser, entity_server.url) as page:
        page.locator(".anb-entity-big button").click()
        page.locator('g.node[data-id="relay_197"]').wait_for(timeout=WAIT)
        assert page.locator("g.node.executor, g.node.start").count() == 200
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        red, green, blue = (int(v) for v in re.findall(r"\d+", background)[:3])
        assert red + green + blue < 3 * 80, background
        page.locator(".anb-workflow-view .anb-graph-pane").evaluate("h => h.style.setProperty('--anb-zoom', 1)")
        page.wait_for_timeout(300)
        middle = page.locator('g.node[data-id="relay_098"]')
        middle.evaluate("g => g.scrollIntoView({block: 'center', inline: 'center'})")
        page.wait_for_timeout(300)
        page.screenshot(path=str(DOCS / "devui-graph-200-dark.png"))


def test_runs_from_another_process_appear_live(app: Any, entity_server: DevUIServer) -> None:
    from agentnb.store import RunStore

    app.locator(".bk-tab", has_text="Runs").click()
    table = app.locator(".anb-runs-table")
    table.get_by_text("fragile").first.wait_for(timeout=WAIT)
    # Another process (here: this test) writes to the same store file while the page stays open.
    with RunStore(Path(entity_server.home) / "agentnb.db") as store:
        store.start_run("notebook-run-1", kind="agent", name="from-a-notebook", started_at=None)
        store.add_events("notebook-run-1", [{"type": "input", "data": {"text": "hi"}}])
    table.get_by_text("from-a-notebook").wait_for(timeout=WAIT)
    with RunStore(Path(entity_server.home) / "agentnb.db") as store:
        store.finish_run("notebook-run-1", status="completed", ended_at=None)
    app.locator(".anb-runs-table .tabulator-row", has_text="from-a-notebook").get_by_text("completed").wait_for(
        timeout=WAIT
    )


def test_a_workflow_run_from_another_process_is_drawn_from_the_store(app: Any, entity_server: DevUIServer) -> None:
    # A separate Python process (as a notebook kernel would be) runs a workflow into the same store.
    script = textwrap.dedent(
        """
        import asyncio, sys
        from agentnb.devui.demos.workflows import fan_out_workflow
        from agentnb.store import RunStore

        with RunStore(sys.argv[1]) as store:
            result = asyncio.run(fan_out_workflow().run("is this short?", run_store=store))
        print(result.get_outputs())
        """
    )
    db = str(Path(entity_server.home) / "agentnb.db")
    done = subprocess.run([sys.executable, "-c", script, db], capture_output=True, text=True, timeout=120, check=True)
    assert "short text" in done.stdout
    app.locator(".bk-tab", has_text="Runs").click()
    row = app.locator(".anb-runs-table .tabulator-row", has_text="text-stats")
    row.wait_for(timeout=WAIT)
    row.click()
    node = app.locator('.anb-run-graph g.node[data-id="short_report"] rect')
    node.wait_for(timeout=WAIT)
    assert node.evaluate("el => getComputedStyle(el).fill") == "rgb(218, 251, 225)"  # completed
    unused = app.locator('.anb-run-graph g.node[data-id="long_report"] rect')
    assert unused.evaluate("el => getComputedStyle(el).fill") != "rgb(218, 251, 225)"
