"""Datasets made from stored runs (versioned in the run store, JSONL / CSV / DataFrames), the regression gate,
and the gate's command line run as CI would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from eval_targets import CAPITALS, capital_agent, forgetful_capital_agent

from agentnb.evals import (
    Dataset,
    EvalNotPassedError,
    dataset_from_runs,
    datasets,
    evaluate,
    experiments,
    gate,
    load_dataset,
    run_batch,
    scorers,
)
from agentnb.store import RunStore

HERE = Path(__file__).resolve().parent
QUESTIONS = [f"Capital of {country}?" for country in CAPITALS]


async def test_a_dataset_from_stored_runs_is_edited_saved_in_versions_and_evaluated(store: RunStore) -> None:
    await run_batch(capital_agent(), QUESTIONS, store=store, progress=False)
    await run_batch(capital_agent(), ["explode"], store=store, progress=False)  # a failed run: not selected
    data = dataset_from_runs(agent="geo", name="capitals", store=store)
    assert sorted(r["input"] for r in data.rows) == sorted(QUESTIONS)
    assert {r["input"]: r["expected"] for r in data.rows} == {f"Capital of {c}?": city for c, city in CAPITALS.items()}
    assert all(store.get_run(r["source_run"]) is not None for r in data.rows)
    assert len(dataset_from_runs(agent="geo", status=None, store=store)) == 6
    assert len(dataset_from_runs(agent="geo", limit=2, store=store)) == 2
    assert len(dataset_from_runs(agent="other", store=store)) == 0
    picked = [data.rows[0]["source_run"]]
    assert [r["source_run"] for r in dataset_from_runs(run_ids=picked, store=store)] == picked

    first = data.save(store=store)
    data.rows[0]["expected"] = "edited"
    second = data.save(store=store, note="fixed one answer")
    assert (first.version, second.version) == (1, 2)
    assert load_dataset("capitals", version=1, store=store).rows[0]["expected"] != "edited"
    assert load_dataset("capitals", store=store).rows[0]["expected"] == "edited"
    assert [(d["name"], d["version"], d["rows"]) for d in datasets(store=store)] == [
        ("capitals", 2, 5),
        ("capitals", 1, 5),
    ]
    assert list(experiments(store=store)["name"]) == []  # dataset versions are not listed as experiments
    with pytest.raises(KeyError, match="has no version 7"):
        load_dataset("capitals", version=7, store=store)

    experiment = await evaluate(capital_agent(), load_dataset("capitals", version=1, store=store).rows,
                                [scorers.exact_match()], name="from-runs", store=store, progress=False)  # fmt: skip
    assert experiment.means()["exact_match"] == 1.0


def test_datasets_round_trip_through_jsonl_csv_and_frames(tmp_path: Path) -> None:
    data = Dataset(
        [{"input": "Capital of France?", "expected": "Paris", "tags": ["eu"]}, {"input": {"city": "Oslo"}}], name="d"
    )
    back = Dataset.from_file(data.to_jsonl(tmp_path / "d.jsonl"))
    assert back.rows == data.rows and back.name == "d"
    from_csv = Dataset.from_file(data.to_csv(tmp_path / "d.csv"))
    assert from_csv.rows[0]["expected"] == "Paris" and json.loads(from_csv.rows[1]["input"]) == {"city": "Oslo"}
    frame = data.to_frame()
    assert list(frame.columns[:2]) == ["input", "expected"]
    assert Dataset.from_frame(frame).rows[1]["expected"] is None
    with pytest.raises(ValueError, match="row 0 has no 'input'"):
        Dataset([{"question": "?"}])
    assert "&lt;b&gt;" in Dataset([{"input": "<b>hi</b>"}])._repr_html_()


async def test_the_gate_names_cases_that_got_worse_with_their_answers_and_scores(store: RunStore) -> None:
    dataset = [{"case_id": c.lower(), "input": f"Capital of {c}?", "expected": city} for c, city in CAPITALS.items()]
    checks = [scorers.exact_match(), scorers.contains()]
    await evaluate(capital_agent(), dataset, checks, name="base", store=store, progress=False)
    await evaluate(forgetful_capital_agent(), dataset, checks, name="cand", store=store, progress=False)
    report = gate("cand", baseline="base", thresholds={"exact_match": 0.9}, store=store)
    assert not report.passed
    [worse] = report.regressions
    assert worse.case_id == "spain" and worse.scores == {"exact_match": (1.0, 0.0), "contains": (1.0, 0.0)}
    assert (worse.output_a, worse.output_b) == ("Madrid", "I don't know.")
    text = report.text()
    assert "Gate FAILED: cand against baseline base" in text
    assert "exact_match mean 0.8 is below its floor 0.9" in text
    assert "-Madrid\n    +I don't know." in text
    with pytest.raises(EvalNotPassedError) as raised:
        report.raise_for_status()
    assert raised.value.failed_items == ["spain"]
    assert gate("cand", baseline="base", max_regressions=1, store=store).passed
    assert gate("base", thresholds={"exact_match": 1.0}, store=store).passed
    with pytest.raises(KeyError, match="No score 'judge'"):
        gate("base", thresholds={"judge": 0.5}, store=store)


def _cli(*args: str, store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "agentnb.evals", *args, "--store", str(store)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_the_command_line_gate_passes_then_fails_a_regression(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    data = tmp_path / "capitals.jsonl"
    data.write_text(
        "".join(
            json.dumps({"case_id": c, "input": f"Capital of {c}?", "expected": v}) + "\n" for c, v in CAPITALS.items()
        )
    )
    good = _cli("run", "eval_targets:capital_agent", str(data), "--name", "main", "--scorer", "exact_match",
                "--scorers", "eval_targets:gate_scorers", "--min", "exact_match=1", store=db)  # fmt: skip
    assert good.returncode == 0, good.stderr
    assert "Gate PASSED: main" in good.stdout and "latency_under_60000ms" in good.stdout
    bad = _cli("run", "eval_targets:forgetful_capital_agent", str(data), "--name", "change", "--scorer", "exact_match",
               "--baseline", "main", store=db)  # fmt: skip
    assert bad.returncode == 1, bad.stderr
    assert "1 case(s) got worse than main (allowed 0): Spain" in bad.stdout
    assert "exact_match: 1 -> 0" in bad.stdout
    again = _cli("gate", "change", "--baseline", "main", "--max-regressions", "1", store=db)
    assert again.returncode == 0 and "Gate PASSED: change against baseline main" in again.stdout
    saved = Dataset.from_file(data, name="capitals").save(store=str(db))
    from_store = _cli("run", "eval_targets:capital_agent", f"dataset:capitals@{saved.version}", "--name", "stored",
                      "--scorer", "exact_match", "--min", "exact_match=1", store=db)  # fmt: skip
    assert from_store.returncode == 0, from_store.stderr + from_store.stdout
    usage = _cli("gate", "main", "--min", "nonsense", store=db)
    assert usage.returncode == 2 and "SCORE=VALUE" in usage.stderr
