"""Visualization: Mermaid text, SVG structure, distinct conditional and fan-in edges, escaping, speed."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

from typing_extensions import Never

from agentnb.workflows import (
    Case,
    Default,
    Executor,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowViz,
    executor,
)

SVG = "{http://www.w3.org/2000/svg}"


def _pass(id: str) -> Executor:
    @executor(id=id)
    async def f(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    return f


@executor(id="join")
async def join(texts: list[str], ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output("".join(texts))


def _workflow():
    start, a, b, c, d, e = (_pass(n) for n in ("start", "a", "b", "c", "d", "e"))
    return (
        WorkflowBuilder(start_executor=start, name="demo <graph>")
        .add_switch_case_edge_group(start, [Case(lambda t: t == "x", a), Default(b)])
        .add_fan_out_edges(a, [c, d])
        .add_fan_in_edges([c, d], join)
        .add_edge(b, e, condition=lambda t: True)
        .add_edge(join, start, condition=lambda t: False)
        .build()
    )


def test_mermaid_marks_start_conditional_and_fan_in_edges() -> None:
    text = WorkflowViz(_workflow()).to_mermaid()
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    assert '  n0["start (start)"]' in lines
    assert '  n0 -. "case 0" .-> n1' in lines  # switch-case edges are dotted and labelled
    assert '  n0 -. "default" .-> n2' in lines
    assert "  n1 --> n3" in lines and "  n1 --> n4" in lines  # plain fan-out edges
    join_node = next(line.split("((")[0].strip() for line in lines if "((" in line)
    assert f"  n3 ==> {join_node}" in lines and f"  n4 ==> {join_node}" in lines  # fan-in edges are thick
    assert f"  {join_node} ==> n5" in lines
    assert "class n0 start" in text


def test_svg_is_valid_and_draws_every_node_and_edge() -> None:
    svg = WorkflowViz(_workflow()).to_svg()
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    nodes = root.findall(f".//{SVG}g")
    ids = [g.get("data-id") for g in nodes if g.get("data-id")]
    assert ids == ["start", "a", "b", "c", "d", "join", "e"]
    paths = [p for p in root.iter(f"{SVG}path") if "edge" in (p.get("class") or "")]
    classes = [p.get("class") for p in paths]
    assert classes.count("edge fan-in") == 3  # two sources into the join node, one into the target
    assert classes.count("edge conditional") == 4
    assert all(p.get("stroke-dasharray") for p in paths if p.get("class") == "edge conditional")
    assert root.find(f"{SVG}title").text == "demo <graph>"  # type: ignore[union-attr]


def test_hostile_names_are_escaped() -> None:
    evil = _pass('<script>alert("x")</script>')
    sink = _pass("ok&fine")
    workflow = WorkflowBuilder(start_executor=evil, name="<img src=x onerror=alert(1)>").add_edge(evil, sink).build()
    svg = WorkflowViz(workflow).to_svg()
    assert "<script>" not in svg and "<img" not in svg
    ET.fromstring(svg)  # still well-formed XML
    mermaid = WorkflowViz(workflow).to_mermaid()
    assert "<script>" not in mermaid and '"x"' not in mermaid


def test_a_200_executor_graph_draws_quickly_and_from_a_description() -> None:
    @executor(id="fan")
    async def fan(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    @executor(id="sink")
    async def sink(texts: list[str], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(str(len(texts)))

    workers = [_pass(f"w{i}") for i in range(99)]
    chain = [_pass(f"c{i}") for i in range(99)]
    builder = WorkflowBuilder(start_executor=fan).add_fan_out_edges(fan, workers).add_fan_in_edges(workers, sink)
    builder.add_edge(fan, chain[0]).add_chain(chain)
    workflow = builder.build()
    assert len(workflow.executors) == 200
    started = time.perf_counter()
    svg = WorkflowViz(workflow).to_svg()
    mermaid = WorkflowViz(workflow.to_dict()).to_mermaid()  # what a DevUI gets from the run store
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, elapsed
    assert svg.count('class="node') == 201  # 200 executors + the fan-in join
    assert mermaid.count("==>") == 100
    assert workflow._repr_svg_().startswith("<svg")  # notebooks display a workflow as its graph
