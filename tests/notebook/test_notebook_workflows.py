"""Workflow display and the live WorkflowView: states, event log, requests and checkpoint time-travel."""

from __future__ import annotations

from collections.abc import Iterator

import ipywidgets.widgets.widget as widget_module
import pytest

from agentnb import Agent, AgentResponseUpdate
from agentnb.exceptions import WorkflowError
from agentnb.local import ScriptedChatClient
from agentnb.notebook import WorkflowView, to_html, to_text
from agentnb.notebook._workflow import colour_svg
from agentnb.workflows import (
    Executor,
    InMemoryCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowViz,
    executor,
    handler,
    response_handler,
)


@pytest.fixture
def no_leaks() -> Iterator[None]:
    before = set(widget_module._instances)
    yield
    leaked = [type(widget_module._instances[k]).__name__ for k in set(widget_module._instances) - before]
    assert leaked == []


def shout(name: str = "shout") -> object:
    @executor(id="upper")
    async def upper(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())

    @executor(id="exclaim")
    async def exclaim(text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(text + "!")

    return WorkflowBuilder(start_executor=upper, name=name).add_edge(upper, exclaim).build()


class Reviewer(Executor):
    @handler
    async def review(self, draft: str, ctx: WorkflowContext) -> None:
        await ctx.request_info(request_data=f"Publish {draft!r}?", response_type=str)

    @response_handler
    async def decided(self, question: str, answer: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"{question}: {answer}")


async def test_static_displays_escape_and_summarize() -> None:
    workflow = shout("<script>x</script>")
    html = to_html(workflow) or ""
    assert "<svg" in html and "&lt;script&gt;" in html and "<script>x" not in html
    assert to_text(workflow) == "Workflow <script>x</script> · 2 executors · start: upper\n  upper -> exclaim"
    storage = InMemoryCheckpointStorage()
    result = await workflow.run("<b>hi</b>", checkpoint_storage=storage)
    text = to_text(result) or ""
    assert text.splitlines() == ["WorkflowRunResult · idle · 9 events", "  output: <B>HI</B>!"]
    result_html = to_html(result) or ""
    assert "&lt;B&gt;HI&lt;/B&gt;!" in result_html and "executor_invoked" in result_html
    [first, *_] = await storage.list_checkpoints()
    checkpoint = await storage.load(first.checkpoint_id)
    assert (to_text(checkpoint) or "").endswith("step 0 · in_progress · next: upper")
    assert "next messages" in (to_html(checkpoint) or "")


def test_colour_svg_recolours_only_named_nodes() -> None:
    svg = WorkflowViz(shout()).to_svg()
    coloured = colour_svg(svg, {"exclaim": "failed", "nope": "running"})
    assert coloured.count('fill="#ffebe9"') == 1 and 'fill="#fff8c5"' not in coloured
    assert coloured.replace('fill="#ffebe9" stroke="#cf222e" stroke-width="2.5"', "") != svg


async def test_view_runs_colours_and_travels_back(no_leaks: None) -> None:
    view = WorkflowView(shout())
    view.run("hello", display=False)
    await view.wait()
    assert view.status == "completed" and view.outputs == ["HELLO!"]
    assert view.states == {"upper": "completed", "exclaim": "completed"}
    assert 'fill="#dafbe1"' in view.graph.value  # the run's own colours until the slider moves
    assert len(view.checkpoints) == 3 and view.slider.max == 2 and not view.slider.disabled
    assert "HELLO!" in view.outputs_html.value and "executor_completed" in view.event_log.value
    # Time-travel: superstep 0, where "upper" is about to run with the input.
    view.slider.value = 0
    await view.wait()
    assert view.selected.step == 0
    assert 'fill="#fbefff"' in view.graph.value  # "next" colour on the executor due to run
    assert "superstep 0 of 3 checkpoint(s)" in view.checkpoint_html.value
    assert "<td>input</td><td>upper</td><td>hello</td>" in view.checkpoint_html.value
    # Resume from there: a new branch; the old checkpoints stay.
    view.resume_button.click()
    await view.wait()
    assert view.outputs == ["HELLO!", "HELLO!"]
    assert len(await view.storage.list_checkpoints()) == 5
    assert view.to_text().startswith("WorkflowView shout · completed · 24 events")
    view.close()


async def test_view_shows_each_streaming_agent_as_one_reply(no_leaks: None) -> None:
    writer = Agent(ScriptedChatClient(["Fresh bread, every morning."], chunk_size=4), name="writer")
    critic = Agent(ScriptedChatClient(["Good."]), name="critic")
    view = WorkflowView(WorkflowBuilder(start_executor=writer, name="duo").add_edge(writer, critic).build())
    view.run("slogan", display=False)
    await view.wait()
    assert len(view.outputs) > 2 and all(isinstance(o, AgentResponseUpdate) for o in view.outputs)  # as streamed
    assert view.to_text().splitlines()[1:3] == ["  output: Fresh bread, every morning.", "  output: Good."]
    assert view.outputs_html.value.count("<li>") == 2
    view.close()


async def test_view_answers_requests(no_leaks: None) -> None:
    reviewer = Reviewer(id="reviewer")
    workflow = WorkflowBuilder(start_executor=reviewer, name="review").build()
    view = WorkflowView(workflow)
    view.run("post", display=False)
    await view.wait()
    assert view.status == "waiting for input" and view.states == {"reviewer": "waiting"}
    [form] = view.requests_box.children
    assert "Publish &#x27;post&#x27;?" in form.children[0].value
    answer, send = form.children[1].children
    answer.value = "yes"
    send.click()
    await view.wait()
    assert view.status == "completed" and view.outputs == ["Publish 'post'?: yes"]
    assert view.requests_box.children == ()
    with pytest.raises(WorkflowError, match="No pending request 'nope'"):
        view.respond("nope", "x")
    view.close()


async def test_failures_are_shown(no_leaks: None) -> None:
    @executor(id="boom")
    async def boom(text: str, ctx: WorkflowContext[str]) -> None:
        raise RuntimeError("kaput <img src=x onerror=alert(1)>")

    view = WorkflowView(WorkflowBuilder(start_executor=boom, name="fails").build())
    view.run("x", display=False)
    await view.wait()
    assert view.status == "failed" and view.states == {"boom": "failed"}
    assert "kaput &lt;img" in view.header.value and "<img" not in view.header.value
    assert 'fill="#ffebe9"' in view.graph.value
    view.close()


async def test_view_reruns_one_executor_beside_the_slider(no_leaks: None) -> None:
    view = WorkflowView(shout())
    view.run("hello", display=False)
    await view.wait()
    assert not view.rerun_button.disabled and view.continue_button.disabled
    checkpoints_before = len(await view.storage.list_checkpoints())
    view.slider.value = 1  # after "upper": "exclaim" is due, with "HELLO"
    await view.wait()
    assert view.rerun_executor.value == "exclaim" and view.rerun_input.value == '"HELLO"'
    view.rerun_button.click()
    await view.wait()
    assert view.rerun_result.is_unchanged and "same as the original" in view.rerun_html.value
    # Edit the input (as JSON) and re-run: the diff shows the new output, escaped.
    view.rerun_input.value = '"<i>bye</i>"'
    view.rerun_button.click()
    await view.wait()
    assert view.rerun_result.outputs == ["<i>bye</i>!"]
    assert "&lt;i&gt;bye&lt;/i&gt;!" in view.rerun_html.value and "<i>bye" not in view.rerun_html.value
    assert "anb-rerun-changed" in view.rerun_html.value
    assert len(await view.storage.list_checkpoints()) == checkpoints_before  # nothing written
    # An input of the wrong type is refused in the view, with the executor's accepted types.
    view.rerun_input.value = "42"
    view.rerun_button.click()
    await view.wait()
    assert view.rerun_result is None and "ExecutorInputError" in view.rerun_html.value
    assert "takes str" in view.rerun_html.value and view.continue_button.disabled
    # Continue from a re-run of "upper" on an edited input: a fork, resumed as a new branch.
    await view.select(0)
    assert view.rerun_executor.value == "upper" and view.rerun_input.value == '"hello"'
    view.rerun_input.value = '"again"'
    result = await view.rerun()
    assert result.sent_by_edge() == {"upper → exclaim": ["AGAIN"]} and not view.continue_button.disabled
    view.continue_button.click()
    await view.wait()
    assert view.outputs == ["HELLO!", "AGAIN!"] and view.status == "completed"
    view.close()
