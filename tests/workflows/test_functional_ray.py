"""Functional steps on a local Ray cluster: fan-out with gather, results cached and checkpointed like local
steps, a step's error and a dead worker fail that step, and resuming runs it again."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentnb.exceptions import WorkflowRunError
from agentnb.workflows import InMemoryCheckpointStorage, step_timeline

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # a loaded machine starts Ray slowly
ray = pytest.importorskip("ray", reason='Ray steps are tested where agentnb[ray] is installed (".[dev]")')

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))  # the steps' module, imported by its top-level name here and on the workers

import functional_steps  # noqa: E402


def _reap_ray_processes() -> None:
    for handle in [o for o in gc.get_objects() if isinstance(o, subprocess.Popen)]:
        if handle.poll() is None and "ray" in " ".join(map(str, handle.args or [])):
            try:
                handle.wait(timeout=10)
            except subprocess.TimeoutExpired:
                handle.kill()
                handle.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(HERE), saved]))
    # On a loaded machine the node's agents can take longer than Ray's default to report their ports.
    patience = {"RAY_agent_register_timeout_ms": "300000", "RAY_raylet_start_wait_time_s": "300"}
    saved_patience = {key: os.environ.get(key) for key in patience}
    os.environ.update({key: os.environ.get(key) or value for key, value in patience.items()})
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
        for key, value in {"PYTHONPATH": saved, **saved_patience}.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


async def test_gather_over_ray_steps_fans_out_and_is_checkpointed(cluster: Any) -> None:
    storage = InMemoryCheckpointStorage()
    wf = functional_steps.fan_out.build(checkpoint_storage=storage)
    result = await wf.run(6)
    [output] = result.get_outputs()
    assert output["sum"] == sum(i * i for i in range(6))
    assert os.getpid() not in output["pids"]  # every call ran in a worker process
    calls = step_timeline(result)
    remote = [c for c in calls if c.step == "square_remote"]
    assert [c.index for c in remote] == list(range(6))
    assert all(c.status == "done" and c.where.startswith("ray node ") for c in remote)
    assert [(c.step, c.where) for c in calls if c.step == "total"] == [("total", "local")]
    checkpoint = await storage.load(result.checkpoint_id or "")
    assert sorted(checkpoint.executor_states["square_remote"]) == [str(i) for i in range(6)]
    # Resumed from the end, nothing is sent to the cluster again.
    again = await wf.run(checkpoint_id=result.checkpoint_id)
    assert again.get_outputs() == result.get_outputs()
    assert not again.get_events("executor_invoked") and len(again.get_events("executor_bypassed")) == 7


async def test_an_error_raised_on_a_worker_fails_the_step_with_that_error(cluster: Any) -> None:
    with pytest.raises(WorkflowRunError, match=r"failed in step 'failing_remote'.*no square for 5"):
        await functional_steps.failing.build().run(5)


async def test_a_worker_that_dies_fails_its_step_and_resume_runs_it_again(cluster: Any, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    storage = InMemoryCheckpointStorage()
    wf = functional_steps.fragile.build(checkpoint_storage=storage)
    stream = wf.run(str(marker), stream=True)
    with pytest.raises(WorkflowRunError, match=r"failed in step 'fragile_remote'"):
        async for _ in stream:
            pass
    [failed] = [e for e in stream.updates if e.type == "executor_failed"]
    assert failed.executor_id == "fragile_remote"
    latest = (await storage.list_checkpoint_infos(workflow_name="fragile"))[-1]
    assert latest.step == 1  # square_remote was saved before the worker died
    marker.write_text("here")
    resumed = await wf.run(checkpoint_id=latest.checkpoint_id)
    assert resumed.get_outputs() == ["9 survived"]
    assert [e.executor_id for e in resumed.get_events("executor_bypassed")] == ["square_remote"]
    assert [e.executor_id for e in resumed.get_events("executor_invoked")] == ["fragile_remote"]
