"""Visualization: Mermaid text, SVG structure, distinct conditional and fan-in edges, escaping, speed."""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typing_extensions import Never

from agentnb.workflows import (
    Case,
    Default,
    Executor,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutor,
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
    assert '  start["start (Start)"]' in lines  # node ids are the executor ids, as in the reference
    assert '  start -. "case 0" .-> a' in lines  # switch-case edges are dotted and keep their case
    assert '  start -. "default" .-> b' in lines
    assert "  b -. conditional .-> e" in lines  # an edge condition reads "conditional"
    assert "  a --> c" in lines and "  a --> d" in lines  # plain fan-out edges
    join_node = next(line.split("((")[0].strip() for line in lines if line.endswith("((fan-in))"))
    assert f"  c --> {join_node}" in lines and f"  d --> {join_node}" in lines  # fan-in edges meet in a node
    assert f"  {join_node} --> join" in lines
    assert "class start start" in text


def test_mermaid_ids_are_cleaned_unique_and_never_keywords() -> None:
    first, second, last = _pass("a b"), _pass("a-b"), _pass("end")
    workflow = WorkflowBuilder(start_executor=first).add_edge(first, second).add_edge(second, last).build()
    lines = WorkflowViz(workflow).to_mermaid().splitlines()
    assert '  a_b["a b (Start)"]' in lines and '  a_b_2["a-b"]' in lines
    assert '  end_["end"]' in lines and "  a_b_2 --> end_" in lines


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
    assert mermaid.count(" --> fan_in__sink__") == 99 and mermaid.count("((fan-in))") == 1
    assert workflow._repr_svg_().startswith("<svg")  # notebooks display a workflow as its graph


def _dot_statements(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_digraph_marks_start_conditional_fan_in_and_escapes_ids() -> None:
    text = WorkflowViz(_workflow()).to_digraph()
    lines = _dot_statements(text)
    assert lines[0] == "digraph Workflow {" and lines[-1] == "}"
    assert text.count("{") == text.count("}")
    assert '"start" [fillcolor=lightgreen, label="start\\n(Start)"];' in lines
    assert '"start" -> "a" [style=dashed, label="case 0"];' in lines  # switch-case edges keep their case
    assert '"start" -> "b" [style=dashed, label="default"];' in lines
    assert '"a" -> "c";' in lines and '"a" -> "d";' in lines  # plain fan-out edges
    fan_in = [line for line in lines if 'label="fan-in"' in line]
    assert len(fan_in) == 1 and "shape=ellipse" in fan_in[0]
    join_id = fan_in[0].split(" [")[0]
    assert f'"c" -> {join_id};' in lines and f'"d" -> {join_id};' in lines
    assert f'{join_id} -> "join";' in lines
    assert '"b" -> "e" [style=dashed, label="conditional"];' in lines  # an edge condition reads "conditional"

    evil = _pass('a"b\\c')
    quoted = WorkflowViz(WorkflowBuilder(start_executor=evil).build()).to_digraph()
    assert '"a\\"b\\\\c" [fillcolor=lightgreen, label="a\\"b\\\\c\\n(Start)"];' in quoted


def test_digraph_draws_sub_workflows_as_clusters_with_prefixed_ids() -> None:
    inner = _pass("inner")

    @executor(id="deep")
    async def deep(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)

    nested = WorkflowExecutor(WorkflowBuilder(start_executor=deep, name="deep").build(), id="deeper")
    middle = WorkflowBuilder(start_executor=inner, name="mid").add_edge(inner, nested).build()
    host = WorkflowExecutor(middle, id="host")
    outer = _pass("outer")
    workflow = WorkflowBuilder(start_executor=outer).add_edge(outer, host).build()
    lines = _dot_statements(WorkflowViz(workflow).to_digraph())
    assert '"outer" -> "host";' in lines
    assert 'label="sub-workflow: host";' in lines and 'label="sub-workflow: deeper";' in lines
    assert '"host/inner" -> "host/deeper";' in lines
    assert '"host/deeper/deep" [fillcolor=lightgreen, label="deep\\n(Start)"];' in lines
    assert sum(line.startswith("subgraph cluster_") for line in lines) == 2
    # A description (what the DevUI has) draws the top level only: it does not hold the inner workflows.
    described = WorkflowViz(workflow.to_dict())
    assert "subgraph" not in described.to_digraph()


def test_export_writes_dot_and_svg_without_graphviz_and_refuses_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    viz = WorkflowViz(_workflow())
    dot = viz.export(format="dot", filename=tmp_path / "graph.dot")
    assert Path(dot).read_text(encoding="utf-8") == viz.to_digraph()
    svg = Path(viz.export())  # the reference's default: SVG into a new temporary file
    try:
        assert ET.fromstring(svg.read_text(encoding="utf-8")).tag == f"{SVG}svg"
    finally:
        svg.unlink()
    with pytest.raises(ValueError, match="doesn't match"):
        viz.export(format="dot", filename=tmp_path / "graph.svg")
    with pytest.raises(ValueError, match="Unsupported format"):
        viz.export(format="gif")  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "graphviz", None)  # graphviz not installed
    with pytest.raises(ImportError, match="needs Graphviz"):
        viz.save_png(tmp_path / "graph.png")
    assert not (tmp_path / "graph.png").exists()
