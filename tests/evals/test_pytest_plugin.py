"""agentnb's pytest plugin: the eval_gate fixture fails a test with the gate's report, run by pytest itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_targets import CAPITALS, capital_agent, forgetful_capital_agent

from agentnb.evals import evaluate, scorers
from agentnb.store import RunStore

DATASET = [{"case_id": c.lower(), "input": f"Capital of {c}?", "expected": city} for c, city in CAPITALS.items()]

GATED_TESTS = """
def test_baseline_meets_its_floor(eval_gate):
    report = eval_gate("base", thresholds={"exact_match": 0.9}, baseline="base")
    assert report.passed and report.means["exact_match"] == 1.0

def test_candidate_against_the_baseline_from_the_command_line(eval_gate):
    eval_gate("cand", thresholds={"exact_match": 0.5})

def test_an_unknown_score_is_a_usage_error(eval_gate):
    eval_gate("cand", thresholds={"nope": 0.5})
"""


@pytest.mark.slow
async def test_eval_gate_fixture_passes_fails_with_the_report_and_sums_up(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        for name, agent in (("base", capital_agent()), ("cand", forgetful_capital_agent())):
            await evaluate(agent, DATASET, [scorers.exact_match()], name=name, store=store, progress=False)
    pytester.makepyfile(test_gated=GATED_TESTS)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the inner run loads agentnb's plugin alone

    run = pytester.runpytest_subprocess(
        "-p", "agentnb.evals.pytest_plugin", "--agentnb-baseline", "base", "--agentnb-store", str(path)
    )  # fmt: skip

    run.assert_outcomes(passed=1, failed=2)
    out = run.stdout.str()
    # The failed gate's report is the test's failure: which case got worse, its score drop and answer diff.
    run.stdout.fnmatch_lines(
        [
            "*test_candidate_against_the_baseline_from_the_command_line*",
            "Gate FAILED: cand against baseline base",
            "*Cases that got worse (1):",
            "- case spain",
            "    exact_match: 1 -> 0",
            "    -Madrid",
            "    +I don't know.",
        ]
    )
    assert "KeyError: \"No score 'nope' in experiment 'cand'" in out
    run.stdout.fnmatch_lines(
        ["*agentnb eval gate*", "base against base: PASSED", "cand against base: FAILED (1 case(s) got worse*"]
    )
