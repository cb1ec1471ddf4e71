"""A workflow's build span, the events on its run span, and the message.send spans processing spans link to."""

from __future__ import annotations

import json

import pytest
from typing_extensions import Never

from agentnb import _telemetry
from agentnb.exceptions import WorkflowRunError, WorkflowValidationError
from agentnb.workflows import Executor, WorkflowBuilder, WorkflowContext, executor, handler
from tests.observability.otel_fixtures import Otel


@executor(id="split")
async def split(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text)


@executor(id="left")
async def left(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"left {text}")


@executor(id="right")
async def right(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(f"right {text}")


@executor(id="join")
async def join(texts: list[str], ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(" + ".join(texts))


class Fails(Executor):
    @handler
    async def take(self, text: str, ctx: WorkflowContext) -> None:
        raise ValueError(f"cannot take {text}")


def _fan_in() -> WorkflowBuilder:
    return (
        WorkflowBuilder(start_executor=split, name="fan", description="splits and joins")
        .add_fan_out_edges(split, [left, right])
        .add_fan_in_edges([left, right], join)
    )


async def test_build_span_records_the_workflow_and_its_events(otel: Otel) -> None:
    workflow = _fan_in().build()
    build = otel.one("workflow.build")
    assert build.attributes is not None
    assert build.attributes["workflow.id"] == workflow.id and build.attributes["workflow_builder.name"] == "fan"
    assert build.attributes["workflow_builder.description"] == "splits and joins"
    assert json.loads(str(build.attributes["workflow.definition"]))["name"] == "fan"
    assert [e.name for e in build.events] == ["build.started", "build.validation_completed", "build.completed"]


async def test_build_error_is_an_event_on_the_build_span(otel: Otel) -> None:
    _telemetry.enable(sensitive_data=True)
    with pytest.raises(WorkflowValidationError):
        WorkflowBuilder(start_executor=split).add_edge(split, join).build()  # join takes a list, split sends str
    build = otel.one("workflow.build")
    assert build.status.status_code.name == "ERROR"
    (error,) = [e for e in build.events if e.name == "build.error"]
    assert error.attributes is not None and error.attributes["build.error.type"] == "TypeCompatibilityError"
    assert "'split' -> 'join'" in str(error.attributes["build.error.message"])


async def test_run_span_events_and_links_from_fan_in_to_the_senders(otel: Otel) -> None:
    workflow = _fan_in().build()
    result = await workflow.run("x")
    assert result.get_outputs() == ["left x + right x"]
    run = otel.one("workflow.run")
    assert [e.name for e in run.events] == ["workflow.started", "workflow.completed"]
    processing = {s.attributes["executor.id"]: s for s in otel.by_name("executor.process") if s.attributes}
    sends = otel.by_name("message.send")
    by_parent = {s.parent.span_id: s for s in sends if s.parent is not None}
    left_send = by_parent[processing["left"].context.span_id]
    right_send = by_parent[processing["right"].context.span_id]
    assert left_send.attributes is not None and left_send.attributes["message.source_id"] == "left"
    assert left_send.attributes["message.payload_type"] == "str"
    linked = {link.context.span_id for link in processing["join"].links}
    assert {left_send.context.span_id, right_send.context.span_id} <= linked
    split_send = by_parent[processing["split"].context.span_id]
    assert [link.context.span_id for link in processing["left"].links] == [split_send.context.span_id]


async def test_a_failed_run_has_an_error_event_without_its_message_by_default(otel: Otel) -> None:
    with pytest.raises(WorkflowRunError):
        await WorkflowBuilder(start_executor=Fails("fails")).build().run("secret input")
    run = otel.one("workflow.run")
    assert run.status.status_code.name == "ERROR"
    (error,) = [e for e in run.events if e.name == "workflow.error"]
    assert error.attributes is not None and error.attributes["error.type"] == "ValueError"  # the handler's own error
    assert "error.message" not in error.attributes
