"""Building graphs: every add_* method, and build() validation with errors that name the nodes."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
from typing_extensions import Never

from agentnb.exceptions import (
    EdgeDuplicationError,
    GraphConnectivityError,
    TypeCompatibilityError,
    WorkflowValidationError,
)
from agentnb.workflows import (
    Case,
    Default,
    Executor,
    FanInEdgeGroup,
    FanOutEdgeGroup,
    SingleEdgeGroup,
    SwitchCaseEdgeGroup,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
)


@dataclass
class Order:
    item: str


@executor(id="text_src")
async def text_src(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text)


@executor(id="text_sink")
async def text_sink(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(text)


@executor(id="order_sink")
async def order_sink(order: Order, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(order.item)


@executor(id="list_sink")
async def list_sink(texts: list[str], ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(",".join(texts))


@executor(id="mute")
async def mute(text: str, ctx: WorkflowContext) -> None:
    return None


def _pass(id: str) -> Executor:
    @executor(id=id)
    async def f(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    return f


def test_every_edge_kind_builds_the_right_groups() -> None:
    a, b, c, d = _pass("a"), _pass("b"), _pass("c"), _pass("d")
    workflow = (
        WorkflowBuilder(start_executor=text_src, name="kinds")
        .add_edge(text_src, a)
        .add_chain([a, b, c])
        .add_fan_out_edges(c, [d, text_sink])
        .add_fan_in_edges([d, b], list_sink)
        .add_switch_case_edge_group(a, [Case(lambda t: t == "x", _pass("e")), Default(_pass("f"))])
        .add_multi_selection_edge_group("d", ["e", "f"], lambda m, ids: ids)
        .build()
    )
    kinds = [type(g) for g in workflow.edge_groups]
    assert kinds == [
        SingleEdgeGroup,
        SingleEdgeGroup,
        SingleEdgeGroup,
        FanOutEdgeGroup,
        FanInEdgeGroup,
        SwitchCaseEdgeGroup,
        FanOutEdgeGroup,
    ]
    assert workflow.edge_groups[-1].kind == "multi_selection"
    assert workflow.start_executor_id == "text_src"
    assert next(iter(workflow.executors)) == "text_src"
    assert workflow.name == "kinds"
    assert workflow.input_types == [str]


def test_missing_start_executor() -> None:
    with pytest.raises(TypeError, match="start_executor"):
        WorkflowBuilder()  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


def test_two_executors_with_one_id_are_refused() -> None:
    with pytest.raises(WorkflowValidationError, match="Duplicate executor ID 'a'"):
        WorkflowBuilder(start_executor=_pass("a")).add_edge("a", _pass("a"))


def test_duplicate_edges_are_refused() -> None:
    builder = (
        WorkflowBuilder(start_executor=text_src)
        .add_edge(text_src, text_sink)
        .add_fan_out_edges(text_src, [text_sink, _pass("other")])
    )
    with pytest.raises(EdgeDuplicationError, match="Duplicate edge detected: text_src->text_sink") as info:
        builder.build()
    assert info.value.edge_id == "text_src->text_sink" and "added by single and by fan_out" in str(info.value)


def test_unreachable_executors_are_named() -> None:
    island = _pass("island")
    builder = WorkflowBuilder(start_executor=text_src).add_edge(text_src, text_sink).add_edge(island, _pass("x"))
    with pytest.raises(
        GraphConnectivityError, match=r"unreachable from the start executor 'text_src': \['island', 'x'\]"
    ):
        builder.build()


def test_type_mismatch_names_both_ends_and_types() -> None:
    builder = WorkflowBuilder(start_executor=text_src).add_edge(text_src, order_sink)
    with pytest.raises(
        TypeCompatibilityError,
        match=r"'text_src' -> 'order_sink'. Source executor outputs types \['str'\] but target executor can only "
        r"handle types \['Order'\]",
    ) as info:
        builder.build()
    assert (info.value.source_executor_id, info.value.target_executor_id) == ("text_src", "order_sink")


def test_fan_in_target_must_accept_a_list() -> None:
    a, b = _pass("a"), _pass("b")
    builder = (
        WorkflowBuilder(start_executor=text_src).add_fan_out_edges(text_src, [a, b]).add_fan_in_edges([a, b], text_sink)
    )
    with pytest.raises(TypeCompatibilityError, match=r"Fan-in target 'text_sink'.*list"):
        builder.build()
    ok = (
        WorkflowBuilder(start_executor=text_src).add_fan_out_edges(text_src, [a, b]).add_fan_in_edges([a, b], list_sink)
    )
    ok.build()


def test_edge_from_an_executor_that_declares_nothing_is_built_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    # The reference runs such graphs: the edge cannot be checked, so building warns instead of refusing.
    with caplog.at_level(logging.WARNING, logger="agentnb.workflows"):
        workflow = WorkflowBuilder(start_executor=mute).add_edge(mute, text_sink).build()
    assert "'mute' has no output type annotations, so its edge to 'text_sink' cannot be type-checked" in caplog.text
    assert list(workflow.executors) == ["mute", "text_sink"]


def test_subclass_and_union_types_pass_validation() -> None:
    class Base:
        pass

    class Child(Base):
        pass

    @executor(id="child_src", output=Child)
    async def child_src(text: str, ctx: WorkflowContext) -> None:
        await ctx.send_message(Child())

    @executor(id="base_sink", input=Base, workflow_output=str)
    async def base_sink(value: object, ctx: WorkflowContext) -> None:
        await ctx.yield_output(type(value).__name__)

    @executor(id="union_sink")
    async def union_sink(value: int | str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(str(value))

    WorkflowBuilder(start_executor=child_src).add_edge(child_src, base_sink).build()
    WorkflowBuilder(start_executor=text_src).add_edge(text_src, union_sink).build()


def test_argument_errors() -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        WorkflowBuilder(start_executor=text_src, max_iterations=0)
    with pytest.raises(ValueError, match="checkpoint_every"):
        WorkflowBuilder(start_executor=text_src, checkpoint_every=0)
    with pytest.raises(ValueError, match="at least two"):
        WorkflowBuilder(start_executor=text_src).add_chain([text_src])
    with pytest.raises(ValueError, match="must come last"):
        WorkflowBuilder(start_executor=text_src).add_switch_case_edge_group(
            text_src, [Default(text_sink), Case(lambda t: True, _pass("z"))]
        )
    with pytest.raises(WorkflowValidationError, match="Unknown executor id 'nope'"):
        WorkflowBuilder(start_executor=text_src).add_edge("nope", text_sink)

    async def plain(text: str) -> None:
        return None

    with pytest.raises(TypeError, match="decorate it with @executor"):
        WorkflowBuilder(start_executor=plain)
    with pytest.raises(TypeError, match="Cannot use 42"):
        WorkflowBuilder(start_executor=42)


def test_executor_without_super_init_is_explained() -> None:
    class Forgetful(Executor):
        def __init__(self) -> None:
            self.id = "forgetful"

        @handler
        async def go(self, text: str, ctx: WorkflowContext) -> None:
            return None

    with pytest.raises(TypeError, match="did not call super"):
        WorkflowBuilder(start_executor=Forgetful())


def test_graph_signature_is_stable_and_changes_with_the_graph() -> None:
    def build(extra: bool) -> str:
        a = _pass("a")
        b = WorkflowBuilder(start_executor=text_src).add_edge(text_src, a).add_edge(a, text_sink)
        if extra:
            b.add_edge(text_src, text_sink)
        return b.build().graph_signature

    assert build(False) == build(False)
    assert build(False) != build(True)
