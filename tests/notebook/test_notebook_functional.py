"""Functional workflows in the notebook: their card, the step timeline in run results, and the live view
(timeline, human-input form, checkpoint slider, re-running one step)."""

from __future__ import annotations

from collections.abc import Iterator

import ipywidgets.widgets.widget as widget_module
import pytest

from agentnb.notebook import WorkflowView, to_html
from agentnb.workflows import RunContext, step, workflow


@pytest.fixture
def no_leaks() -> Iterator[None]:
    before = set(widget_module._instances)
    yield
    leaked = [type(widget_module._instances[k]).__name__ for k in set(widget_module._instances) - before]
    assert leaked == []


@step
async def draft(topic: str) -> str:
    return f"draft on <b>{topic}</b>"


@step
async def polish(text: str) -> str:
    return text + "!"


@workflow
async def article(topic: str, ctx: RunContext) -> str:
    text = await draft(topic)
    verdict = await ctx.request_info(f"Publish {text}?", response_type=str, request_id="publish")
    return await polish(f"{text} ({verdict})")


async def test_a_functional_workflow_and_its_run_show_their_steps() -> None:
    card = article._repr_html_()
    assert "functional workflow" in card and "<code>draft</code>" in card and "<code>polish</code>" in card
    wf = article.build()
    paused = await wf.run("owls")
    html = to_html(paused) or ""
    assert "draft#0" in html and "done" in html
    assert "<b>owls</b>" not in html and "&lt;b&gt;owls&lt;/b&gt;" in html  # step results are escaped
    done = await wf.run(responses={"publish": "yes"})
    html = to_html(done) or ""
    assert "cached" in html and "polish#0" in html


async def test_the_view_runs_answers_travels_and_reruns_a_step(no_leaks: None) -> None:
    view = WorkflowView(article.build())
    view.run("owls", display=False)
    await view.wait()
    assert view.status == "waiting for input"
    assert "draft#0" in view.graph.value and "waiting for input" not in view.graph.value  # asked by the body
    [form] = view.requests_box.children
    answer, send = form.children[1].children
    answer.value = "approved"
    send.click()
    await view.wait()
    assert view.status == "completed" and view.outputs == ["draft on <b>owls</b> (approved)!"]
    assert "cached" in view.graph.value and "polish#0" in view.graph.value
    # The slider walks the second run's checkpoints: at its last one both step calls are saved.
    assert not view.slider.disabled
    await view.select(view.slider.max)
    assert "step calls done 2 of" in view.checkpoint_html.value and "polish#0" in view.graph.value
    await view.select(0)  # the root: the input alone (the timeline goes back through the first run)
    assert "no step call had finished" in view.graph.value
    await view.select(1)
    assert "polish#0" not in view.graph.value and "draft#0" in view.graph.value
    # Re-run polish from the last checkpoint on an edited input, then continue with its output.
    await view.select(view.slider.max)
    view.rerun_executor.value = "polish"
    result = await view.rerun("polish", '"edited"')
    assert result is not None and result.outputs == ["edited!"] and "re-run of polish" in view.rerun_html.value
    await view.continue_from_rerun()
    await view.wait()
    assert view.outputs[-1] == "edited!"
    view.close()
