"""evaluate: results and summary, datasets, resume without calling the model again, interruption, compare."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from eval_targets import CAPITALS, capital_model

from agentnb import Agent
from agentnb.evals import Experiment, compare, evaluate, experiments, load_experiment, scorers
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore

HERE = Path(__file__).resolve().parent
DATASET = [
    {"input": f"Capital of {country}?", "expected": city, "case_id": country.lower(), "region": region}
    for (country, city), region in zip(CAPITALS.items(), ["eu", "eu", "eu", "asia", "americas"], strict=True)
]


class CountingModel:
    """An offline model that counts its calls per input."""

    def __init__(self, wrong: set[str] = frozenset(), fail: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.calls: list[str] = []
        self.wrong = wrong
        self.fail = fail

    async def __call__(self, messages: list[Any], options: dict[str, Any]) -> str:
        text = messages[-1].text
        self.calls.append(text)
        if any(w in text for w in self.fail):
            raise RuntimeError("model down")
        if any(w in text for w in self.wrong):
            return "Lyon"
        return capital_model(messages, options)


def three_scorers() -> list[Any]:
    return [scorers.exact_match(), scorers.contains(), scorers.latency_under(5000)]


async def test_results_columns_scores_and_summary(store: RunStore) -> None:
    model = CountingModel(wrong={"Spain"}, fail={"Peru"})
    experiment = await evaluate(
        Agent(FunctionChatClient(model), name="geo"), DATASET, three_scorers(), name="geo-v1", store=store,
        progress=False,
    )  # fmt: skip
    results = experiment.results
    assert list(results.columns) == [
        "case_id", "input", "output", "status", "error", "latency_ms", "input_tokens", "output_tokens", "run_id",
        "trace_id", "expected", "region", "exact_match", "contains", "latency_under_5000ms",
    ]  # fmt: skip
    assert list(results["case_id"]) == ["france", "italy", "spain", "japan", "peru"]
    assert list(results["status"]) == ["ok", "ok", "ok", "ok", "error"]
    assert list(results["exact_match"]) == [1.0, 1.0, 0.0, 1.0, 0.0]  # a failed case fails every scorer
    assert list(results["latency_under_5000ms"]) == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert list(results["region"]) == ["eu", "eu", "eu", "asia", "americas"]
    assert results.loc[4, "output"] is None and results.loc[4, "error"] == "RuntimeError: model down"
    summary = experiment.summary()
    assert list(summary.index) == [
        "exact_match", "contains", "latency_under_5000ms", "latency_ms", "input_tokens", "output_tokens",
    ]  # fmt: skip
    assert list(summary.columns) == ["mean", "pass_rate", "n", "errors", "p50", "p95", "total"]
    assert summary.loc["exact_match", "mean"] == pytest.approx(0.6)
    assert summary.loc["exact_match", "pass_rate"] == pytest.approx(0.6)
    assert summary.loc["exact_match", "n"] == 5
    assert summary.loc["latency_ms", "n"] == 4 and summary.loc["latency_ms", "errors"] == 1
    assert summary.loc["latency_ms", "p50"] <= summary.loc["latency_ms", "p95"]
    assert summary.loc["input_tokens", "total"] == results["input_tokens"].sum()
    assert experiment.failures()["case_id"].tolist() == ["peru", "spain"]
    assert experiment.status == "completed" and experiment.target == "agent:geo"
    # Every case is a run in the store, tagged with its experiment.
    for run_id in results["run_id"]:
        run = store.get_run(run_id)
        assert run is not None and run["metadata"]["experiment"] == "geo-v1"


async def test_datasets_from_jsonl_csv_and_dataframes(store: RunStore, tmp_path: Path) -> None:
    import pandas as pd

    agent = Agent(FunctionChatClient(capital_model), name="geo")
    jsonl = tmp_path / "cases.jsonl"
    jsonl.write_text("\n".join(json.dumps(row) for row in DATASET[:2]) + "\n\n", encoding="utf-8")
    csv = tmp_path / "cases.csv"
    pd.DataFrame(DATASET[:3]).drop(columns="case_id").to_csv(csv, index=False)
    frame = pd.DataFrame(DATASET)
    for name, dataset, ids in (
        ("jsonl", jsonl, ["france", "italy"]),
        ("csv", str(csv), ["0", "1", "2"]),
        ("frame", frame, [row["case_id"] for row in DATASET]),
    ):
        experiment = await evaluate(agent, dataset, [scorers.exact_match()], name=name, store=store, progress=False)
        assert experiment.results["case_id"].tolist() == ids
        assert experiment.results["exact_match"].tolist() == [1.0] * len(ids)
    with pytest.raises(ValueError, match="no 'input'"):
        await evaluate(agent, [{"question": "x"}], [scorers.exact_match()], name="bad", store=store)
    with pytest.raises(ValueError, match="share case_id"):
        await evaluate(agent, [{"input": "a", "case_id": 1}, {"input": "b", "case_id": 1}], [], name="b", store=store)
    with pytest.raises(ValueError, match=r"\.jsonl or \.csv"):
        await evaluate(agent, tmp_path / "x.txt", [], name="b", store=store) if (tmp_path / "x.txt").write_text(
            "x"
        ) else None
    with pytest.raises(ValueError, match="distinct names"):
        await evaluate(agent, DATASET, [scorers.contains("a"), scorers.contains("b")], name="b", store=store)


async def test_resume_reuses_finished_cases_without_calling_the_model(store: RunStore) -> None:
    model = CountingModel(fail={"Peru"})
    agent = Agent(FunctionChatClient(model), name="geo")
    first = await evaluate(agent, DATASET, three_scorers(), name="resume", store=store, progress=False)
    assert len(model.calls) == 5
    model.calls.clear()
    model.fail = set()
    # Again, with a scorer more: only the failed case runs; the new scorer scores the stored answers.
    second = await evaluate(
        agent, DATASET, [*three_scorers(), scorers.regex(r"^[A-Z]")], name="resume", store=store, progress=False
    )
    assert model.calls == ["Capital of Peru?"]
    assert second.results["run_id"].tolist()[:4] == first.results["run_id"].tolist()[:4]
    assert second.results["regex"].tolist() == [1.0] * 5
    assert second.results["status"].tolist() == ["ok"] * 5
    # A changed input runs again; a changed expected re-scores without a model call.
    model.calls.clear()
    changed = [dict(row) for row in DATASET]
    changed[0]["input"] = "Capital of France, please?"
    changed[1]["expected"] = "Milan"
    third = await evaluate(agent, changed, three_scorers(), name="resume", store=store, progress=False)
    assert model.calls == ["Capital of France, please?"]
    assert third.results.loc[1, "exact_match"] == 0.0 and third.results.loc[1, "output"] == "Rome"
    # resume=False starts afresh.
    model.calls.clear()
    await evaluate(agent, DATASET, three_scorers(), name="resume", store=store, resume=False, progress=False)
    assert len(model.calls) == 5


async def test_cancelled_evaluation_keeps_finished_cases_and_resumes(store: RunStore) -> None:
    finished: list[str] = []
    release = asyncio.Event()

    async def model(messages: list[Any], options: dict[str, Any]) -> str:
        text = messages[-1].text
        if "Japan" in text or "Peru" in text:
            await release.wait()  # these two hang until the batch is cancelled
        finished.append(text)
        return capital_model(messages, options)

    agent = Agent(FunctionChatClient(model), name="geo")
    task = asyncio.ensure_future(
        evaluate(agent, DATASET, three_scorers(), name="cut", store=store, concurrency=5, progress=False)
    )
    while len(finished) < 3:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = store.list_experiment_cases("cut")
    assert sorted(r["case_id"] for r in stored) == ["france", "italy", "spain"]  # nothing finished was lost
    assert store.get_experiment("cut")["status"] == "interrupted"  # type: ignore[index]
    finished.clear()
    release.set()
    resumed = await evaluate(agent, DATASET, three_scorers(), name="cut", store=store, progress=False)
    assert sorted(finished) == ["Capital of Japan?", "Capital of Peru?"]  # nothing re-run
    assert resumed.results["exact_match"].tolist() == [1.0] * 5 and resumed.status == "completed"


_KILLED_SCRIPT = """
import asyncio, signal, sys
# Ctrl-C as in a terminal, whatever SIGINT disposition the test process hands down (an ignored one is inherited).
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {here!r})
from agentnb.evals import evaluate, scorers
dataset = [{{"input": f"Capital of {{c}}? #{{i}}", "expected": city}} for i in range(40)
           for c, city in [("France", "Paris")]]
asyncio.run(evaluate("eval_targets:capital_agent", dataset, [scorers.exact_match()], name="killed",
                     store={db!r}, concurrency=4, progress=False))
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_evaluation_loses_no_finished_case(
    tmp_path: Path, sig: signal.Signals, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, log = str(tmp_path / "runs.db"), tmp_path / "calls.log"
    # The first 12 model calls finish; every later one waits forever, so the kill lands while exactly those
    # 12 are answered (and, once the store shows them, stored) however loaded the machine is.
    env = {**os.environ, "EVAL_TARGET_DELAY": "0.01", "EVAL_TARGET_LOG": str(log), "EVAL_TARGET_HOLD_AFTER": "12"}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_SCRIPT.format(here=str(HERE), db=db)], env=env)
    try:
        deadline = time.monotonic() + 90
        while len(_stored_cases(db)) < 12:
            assert proc.poll() is None, "the evaluation ended before it was killed"
            if time.monotonic() > deadline:
                pytest.fail("the evaluation never stored its first 12 cases")
            time.sleep(0.05)
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    stored = _stored_cases(db)
    called_first = log.read_text().splitlines()
    assert len(stored) == 12
    # Everything stored was answered, and nothing answered was lost.
    assert stored == set(called_first)
    log.unlink()
    monkeypatch.setenv("EVAL_TARGET_LOG", str(log))
    with RunStore(db) as store:
        experiment = asyncio.run(
            evaluate("eval_targets:capital_agent", _killed_dataset(), [scorers.exact_match()], name="killed",
                     store=store, concurrency=8, progress=False)
        )  # fmt: skip
    called_again = set(log.read_text().splitlines())
    assert called_again.isdisjoint(stored)  # the model was not called again for a stored case
    assert len(called_again) == 40 - len(stored)
    assert experiment.results["exact_match"].tolist() == [1.0] * 40


def _stored_cases(db: str) -> set[str]:
    if not Path(db).exists():
        return set()
    with RunStore(db) as store:
        return {r["data"]["input"] for r in store.list_experiment_cases("killed")}


def _killed_dataset() -> list[dict[str, str]]:
    return [{"input": f"Capital of France? #{i}", "expected": "Paris"} for i in range(40)]


async def test_repetitions_give_one_row_per_case_and_repetition(store: RunStore) -> None:
    model = CountingModel()
    experiment = await evaluate(
        Agent(FunctionChatClient(model)), DATASET[:2], [scorers.exact_match()], name="reps", repetitions=3,
        store=store, progress=False,
    )  # fmt: skip
    results = experiment.results
    assert list(results.columns[:2]) == ["case_id", "repetition"]
    assert list(zip(results["case_id"], results["repetition"], strict=True)) == [
        ("france", 0), ("france", 1), ("france", 2), ("italy", 0), ("italy", 1), ("italy", 2),
    ]  # fmt: skip
    assert len(model.calls) == 6
    with pytest.raises(ValueError, match="repetitions"):
        await evaluate(Agent(FunctionChatClient(model)), DATASET, [], name="x", repetitions=0, store=store)


async def test_experiments_listing_loading_and_compare(store: RunStore) -> None:
    base = await evaluate(
        Agent(FunctionChatClient(capital_model), name="geo"), DATASET, three_scorers(), name="v1", store=store,
        progress=False,
    )  # fmt: skip
    worse = CountingModel(wrong={"Italy"}, fail={"Japan"})
    await evaluate(
        Agent(FunctionChatClient(worse), name="geo"), DATASET[::-1], three_scorers(), name="v2", store=store,
        progress=False,
    )  # fmt: skip
    listed = experiments(store=store)
    assert listed["name"].tolist() == ["v2", "v1"]
    assert listed.loc[1, "exact_match"] == pytest.approx(1.0) and listed.loc[0, "exact_match"] == pytest.approx(0.6)
    assert listed["cases"].tolist() == [5, 5] and listed["status"].tolist() == ["completed", "completed"]
    loaded = load_experiment("v1", store=store)
    assert isinstance(loaded, Experiment)
    assert loaded.results.equals(base.results)
    with pytest.raises(KeyError, match="No experiment 'v3'"):
        load_experiment("v3", store=store)
    diff = compare("v1", "v2", store=store)
    assert (diff.attrs["a"], diff.attrs["b"]) == ("v1", "v2")
    assert diff.attrs["worse"] == {
        "exact_match": ["japan", "italy"], "contains": ["japan", "italy"], "latency_under_5000ms": ["japan"],
    }  # fmt: skip
    assert diff["worse"].tolist()[:3] == [
        ["exact_match", "contains", "latency_under_5000ms"],
        ["exact_match", "contains"],
        [],
    ]
    assert diff.iloc[1]["answer_diff"].splitlines()[-2:] == ["-Rome", "+Lyon"]
    assert diff.iloc[2]["answer_diff"] == ""
    assert diff["case_id"].tolist()[:2] == ["japan", "italy"]  # regressions first, the worst first
    assert diff["change"].tolist() == ["regression", "regression", "same", "same", "same"]
    assert diff.iloc[0]["status_b"] == "error"
    row = diff.iloc[1]
    assert (row["output_a"], row["output_b"], row["exact_match_delta"]) == ("Rome", "Lyon", -1.0)
    assert "latency_under_5000ms_delta" in diff.columns
    back = compare(load_experiment("v2", store=store), base)
    assert back["change"].tolist()[:2] == ["improvement", "improvement"]


async def test_rich_display_escapes_and_puts_failures_first(store: RunStore) -> None:
    def model(messages: list[Any], options: dict[str, Any]) -> str:
        text = messages[-1].text
        return "<script>alert(1)</script>" if "evil" in text else "fine"

    dataset = [
        {"input": "ok case", "expected": "fine", "case_id": "good"},
        {"input": "evil <img src=x onerror=alert(2)>", "expected": "fine", "case_id": "bad<b>"},
    ]
    experiment = await evaluate(
        Agent(FunctionChatClient(model)), dataset, [scorers.exact_match()], name="html", store=store, progress=False
    )
    html = experiment._repr_html_()
    assert "<script>alert" not in html and "<img src=x" not in html and "bad<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "bad&lt;b&gt;" in html
    assert html.index("bad&lt;b&gt;") < html.index("<b>good</b>")  # the failing case comes first
    assert "<svg" in html and "exact_match" in html and "Cases (1 failing first)" in html
    bundle = experiment._repr_mimebundle_()
    assert bundle["text/plain"].startswith("Experiment(name='html'")


async def test_scorer_errors_are_counted_not_fatal(store: RunStore) -> None:
    def picky(case: Any, result: Any) -> float:
        if "Italy" in case.input:
            raise ValueError("cannot judge")
        return 1.0

    experiment = await evaluate(
        Agent(FunctionChatClient(capital_model)), DATASET, [picky], name="picky", store=store, progress=False
    )
    assert math.isnan(experiment.results.loc[1, "picky"])
    summary = experiment.summary()
    assert summary.loc["picky", "errors"] == 1 and summary.loc["picky", "n"] == 4
    assert "cannot judge" in experiment._repr_html_()


async def test_llm_judge_tokens_are_reported_apart(store: RunStore) -> None:
    judge = scorers.llm_judge(FunctionChatClient(lambda m, o: '{"score": 0.75, "reason": "ok"}'), "Be right.")
    experiment = await evaluate(
        Agent(FunctionChatClient(capital_model)), DATASET[:2], [judge], name="judged", store=store, progress=False
    )
    summary = experiment.summary()
    assert summary.loc["llm_judge", "mean"] == 0.75
    assert summary.loc["scorer_input_tokens", "total"] > 0 and summary.loc["scorer_input_tokens", "n"] == 2
    assert summary.loc["input_tokens", "total"] == experiment.results["input_tokens"].sum()
