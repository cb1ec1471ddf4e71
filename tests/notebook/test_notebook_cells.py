"""Runs know the cell that started them, and each cell gets a meter line (real kernel, nbclient)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.notebook.kernel_harness import KernelSession, data, text

pytestmark = pytest.mark.kernel

DEFINE = '''
%load_ext agentnb
import agentnb
from agentnb import Agent, tool
from agentnb.local import ToolCallingChatClient

@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."

weather = Agent(ToolCallingChatClient(), name="weather", tools=[get_weather])
'''


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    home = tmp_path_factory.mktemp("cells-home")
    session = KernelSession(tmp_path_factory.mktemp("cells"))
    try:
        session.run(f"import os\nos.environ['AGENTNB_HOME'] = {str(home)!r}")
        session.run(DEFINE)
        yield session
    finally:
        session.close()


def _count(kernel: KernelSession) -> int:
    return int(kernel.nb.cells[-1].execution_count)


def test_runs_name_the_cell_that_started_them(kernel: KernelSession, tmp_path: Path) -> None:
    kernel.run("r = await weather.run('Weather in Paris?')")
    agent_cell = _count(kernel)
    kernel.run(
        "from agentnb.store import open_store\n"
        "from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor\n"
        f"wf_store = open_store({str(tmp_path / 'wf.db')!r})\n"
        "@executor(id='shout')\nasync def shout(text: str, ctx: WorkflowContext) -> None:\n"
        "    await ctx.yield_output(text.upper())\n"
        "wf = WorkflowBuilder(start_executor=shout, run_store=wf_store).build()"
    )
    kernel.run("result = await wf.run('hi')  # a workflow run")
    workflow_cell = _count(kernel)
    out = text(
        kernel.run(
            "frame = agentnb.runs()\nprint(frame.loc[frame.kind == 'agent', 'cell'].iloc[0])\n"
            "wf_frame = agentnb.runs(store=wf_store)\nprint(wf_frame['cell'].iloc[0])"
        )
    )
    assert out.splitlines() == [
        f"[{agent_cell}] r = await weather.run('Weather in Paris?')",
        f"[{workflow_cell}] result = await wf.run('hi')  # a workflow run",
    ]
    # The spans of that turn carry the cell too (the DevUI's traces view reads it from there). The last three
    # traces are the turn, building the workflow and running it.
    spans = text(
        kernel.run(
            "from agentnb.notebook._tracing import span_rows\n"
            "print(sorted({s['attributes'].get('agentnb.notebook.cell') for s in span_rows(last=3)} - {None}))"
        )
    )
    assert f"[{agent_cell}] r = await weather.run('Weather in Paris?')" in spans
    # The turn's tokens are its model calls' (the same numbers the cell's meter counted).
    tokens = text(
        kernel.run(
            "turn = frame.loc[frame.kind == 'agent'].iloc[0]\n"
            "calls = [s for s in span_rows(last=3) if s['name'].startswith('chat')]\n"
            "print(int(turn.input_tokens), int(turn.output_tokens), len(calls))\n"
            "print(sum(s['attributes']['gen_ai.usage.input_tokens'] for s in calls),"
            " sum(s['attributes']['gen_ai.usage.output_tokens'] for s in calls))"
        )
    ).split()
    assert tokens[2] == "2" and tokens[:2] == tokens[3:] and int(tokens[0]) > 0 and int(tokens[1]) > 0
    listed = text(kernel.run("mine = %agentnb runs --last 5\nprint(mine[['cell', 'kind', 'name']].to_string())"))
    assert f"[{agent_cell}] r = await weather.run" in listed and "weather" in listed
    assert "wf.run" not in listed  # that run went to another store


def test_the_meter_counts_a_cells_model_and_tool_calls(kernel: KernelSession) -> None:
    # nbclient sends no cell id: in "auto" mode the line stays out of the stored output ...
    quiet = kernel.run("r = await weather.run('Weather in Rome?')")
    assert "model call" not in text(quiet)
    last = text(kernel.run("from agentnb.notebook._extension import cell_tracker\nprint(cell_tracker().meter.last)"))
    assert last.startswith("2 model calls · 1 tool call · ")
    # ... and "on" shows it.
    assert text(kernel.run("%agentnb meter on")).strip() == "agentnb meter: on"
    shown = kernel.run("r = await weather.run('Weather in Oslo?')\nr.text")
    assert [o["output_type"] for o in shown] == ["execute_result", "display_data"]  # under the cell's result
    line = data(shown, "text/plain")[-1]
    assert "anb-meter" in data(shown, "text/html")[-1]
    usage = text(kernel.run("print(r.usage_details['input_token_count'], r.usage_details['output_token_count'])"))
    tokens_in, tokens_out = usage.split()
    assert re.fullmatch(
        rf"2 model calls · 1 tool call · {tokens_in} in / {tokens_out} out tokens · model \d+ ms of \d+ ms", line
    ), line
    assert text(kernel.run("print('no model here')")).strip() == "no model here"  # no line without model calls
    # Prices add the cost.
    priced = text(kernel.run("%agentnb prices tool-calling-test-model=1000000,2000000"))
    assert "tool-calling-test-model: $1e+06 in / $2e+06 out per 1M tokens" in priced
    costed = text(kernel.run("r = await weather.run('Weather in Bergen?')")).strip()
    cost = text(
        kernel.run("u = r.usage_details\nprint(f\"${u['input_token_count'] + 2 * u['output_token_count']:.2f}\")")
    )
    assert costed.endswith(cost.strip()), (costed, cost)
    assert "UsageError" in text(kernel.run("%agentnb prices nonsense"))
    kernel.run("%agentnb prices --clear")
    assert text(kernel.run("%agentnb meter off")).strip() == "agentnb meter: off"
    assert "model call" not in text(kernel.run("r = await weather.run('Weather in Lima?')"))
