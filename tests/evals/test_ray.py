"""The Ray backend on a local Ray cluster started by the test gives the same results as the local backend."""

from __future__ import annotations

import gc
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentnb.evals import RayBackend, evaluate, run_batch, scorers
from agentnb.store import RunStore

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason='the Ray backend is tested where agentnb[ray] is installed (".[dev]")')

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# Nondeterministic per run: ids, timings and traces.
VOLATILE = ["run_id", "latency_ms", "trace_id"]


def _reap_ray_processes() -> None:
    """Wait for the node processes Ray started (its shutdown signals them without waiting), so none outlives
    the test and no "subprocess still running" warning fires at interpreter exit."""
    for handle in [o for o in gc.get_objects() if isinstance(o, subprocess.Popen)]:
        if handle.poll() is None and "ray" in " ".join(map(str, handle.args or [])):
            try:
                handle.wait(timeout=10)
            except subprocess.TimeoutExpired:
                handle.kill()
                handle.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    # Workers start from the driver's environment: make this checkout and the test targets importable there.
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(HERE), saved]))
    try:
        for attempt in range(3):  # a node can miss its start-up deadline on a heavily loaded machine
            try:
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
                break
            except Exception:
                ray.shutdown()
                _reap_ray_processes()
                if attempt == 2:
                    raise
        yield ray
    finally:
        ray.shutdown()
        _reap_ray_processes()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


INPUTS = [f"Capital of {c}?" for c in ("France", "Italy", "Spain", "Japan", "Peru")] * 9 + ["explode", "slow"]


async def test_run_batch_on_ray_equals_local(cluster: Any, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.db")
    kwargs: dict[str, Any] = {"timeout": 1.0, "progress": False, "store": store}
    local = await run_batch("eval_targets:capital_agent", INPUTS, concurrency=8, **kwargs)
    remote = await run_batch(
        "eval_targets:capital_agent", INPUTS, backend=RayBackend(chunk_size=7, concurrency_per_task=4), **kwargs
    )
    assert list(remote.columns) == list(local.columns)
    assert remote.drop(columns=VOLATILE).equals(local.drop(columns=VOLATILE))
    assert remote["status"].tolist()[-2:] == ["error", "timeout"]
    # Every remote case is a run in the store too (the driver writes what the workers report).
    for run_id in remote["run_id"]:
        run = store.get_run(run_id)
        assert run is not None and run["name"] == "geo"


async def test_evaluate_on_ray_equals_local_and_workflows_write_to_the_shared_store(
    cluster: Any, tmp_path: Path
) -> None:
    store = RunStore(tmp_path / "runs.db")
    dataset = [{"input": text, "expected": text.upper() + "!"} for text in ("a", "b", "explode", "c", "d")]
    checks = [scorers.exact_match(), scorers.contains()]
    local = await evaluate("eval_targets:upper_workflow", dataset, checks, name="wf-local", store=store, progress=False)
    remote = await evaluate(
        "eval_targets:upper_workflow", dataset, checks, name="wf-ray", store=store, progress=False, backend="ray"
    )
    assert remote.results.drop(columns=VOLATILE).equals(local.results.drop(columns=VOLATILE))
    assert remote.results["exact_match"].tolist() == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert "RayBackend" in store.get_experiment("wf-ray")["metadata"]["backend"]  # type: ignore[index]
    # The workers recorded their workflow runs in the same SQLite file.
    workflow_runs = {r["run_id"] for r in store.list_runs(kind="workflow")}
    ok = remote.results[remote.results["status"] == "ok"]
    assert set(ok["run_id"]) <= workflow_runs


async def test_ray_needs_an_import_string(cluster: Any) -> None:
    async def target(value: Any) -> Any:
        return value

    with pytest.raises(TypeError, match="import string"):
        await run_batch(target, ["x"], backend="ray", progress=False, store=RunStore(":memory:"))
    with pytest.raises(ValueError, match="chunk_size"):
        RayBackend(chunk_size=0)


async def test_instrumented_workers_write_traces_to_the_shared_store(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentnb import _telemetry

    store = RunStore(tmp_path / "runs.db")
    # The driver has tracing on, so workers switch it on too and write their spans to the same store.
    monkeypatch.setitem(_telemetry._state, "enabled", True)
    frame = await run_batch(
        "eval_targets:capital_agent", ["Capital of France?", "Capital of Peru?"], backend="ray", progress=False,
        store=store,
    )  # fmt: skip
    assert frame["status"].tolist() == ["ok", "ok"] and frame["trace_id"].notna().all()
    for _, row in frame.iterrows():
        spans = store.list_spans(run_id=row["run_id"])
        assert {s["trace_id"] for s in spans} == {row["trace_id"]}
        assert {"eval.case", "invoke_agent geo"} <= {s["name"] for s in spans}


def test_workers_get_the_drivers_store_file_but_never_an_in_memory_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTNB_STORE_URL", raising=False)
    backend = RayBackend()
    with RunStore(tmp_path / "runs.db") as on_disk, RunStore(":memory:") as in_memory:
        assert backend._worker_store_url(on_disk) == on_disk.url  # pyright: ignore[reportPrivateUsage]
        assert backend._worker_store_url(in_memory) is None  # pyright: ignore[reportPrivateUsage]
