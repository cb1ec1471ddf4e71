"""A notebook cell runs an evaluation: the tqdm widget with running scorer means, then the rich summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.notebook.kernel_harness import KernelSession, data

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

SETUP = """
from agentnb import Agent
from agentnb.evals import evaluate, scorers
from agentnb.local import FunctionChatClient

CAPITALS = {"France": "Paris", "Italy": "Rome", "Spain": "Madrid"}

def model(messages, options):
    text = messages[-1].text
    return next((city for country, city in CAPITALS.items() if country in text), "Lyon")

agent = Agent(FunctionChatClient(model), name="geo")
dataset = [{"input": f"Capital of {c}?", "expected": city} for c, city in CAPITALS.items()]
dataset.append({"input": "Capital of Peru?", "expected": "Lima", "case_id": "peru <b>"})
"""


def test_evaluate_in_a_cell_shows_a_progress_widget_and_the_rich_summary(tmp_path: Path) -> None:
    session = KernelSession(tmp_path, timeout=120)
    try:
        session.run(SETUP)
        outputs = session.run(
            "experiment = await evaluate(agent, dataset, [scorers.exact_match(), scorers.contains()], "
            "name='kernel-geo', store='sqlite:///" + str(tmp_path / "runs.db") + "')\nexperiment"
        )
    finally:
        session.close()
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    # tqdm.auto chose the notebook widget, not text on stderr.
    views = data(outputs, "application/vnd.jupyter.widget-view+json")
    assert views, outputs
    assert not any(o.get("name") == "stderr" and "it/s" in o.get("text", "") for o in outputs)
    models = list(session.client.widget_state.values())
    bars = [m for m in models if m.get("_model_name") == "FloatProgressModel"]
    assert bars and bars[0]["value"] == bars[0]["max"] == 4
    labels = " ".join(str(m.get("value", "")) for m in models if m.get("_model_name") == "HTMLModel")
    assert "4/4" in labels and "exact_match=0.75" in labels and "contains=0.75" in labels
    # The experiment's rich display: summary table, score chart, the failing case first, escaped.
    html = "".join(data(outputs, "text/html"))
    assert "Experiment kernel-geo" in html and "<svg" in html
    assert "Cases (1 failing first)" in html
    assert "peru &lt;b&gt;" in html and "peru <b>" not in html
    assert html.index("peru &lt;b&gt;") < html.index("Capital of France")
    assert json.dumps(views[0])
