"""Step calls on a Ray cluster: ``@step(ray=True)`` sends each call to a Ray task.

What crosses to a worker is data, as in the evals' Ray backend: the step's import string
(``"pkg.module:step_name"``, which the worker imports, so the function is never pickled) and its arguments
as tagged JSON; the result comes back the same way, with the node and process it ran in. So a value that
could not be checkpointed fails before it leaves, and the worker builds its own clients. ``asyncio.gather``
over Ray steps fans out across the cluster, since each call waits on its own task.

Each call runs once (``max_retries=0`` unless the step's options say otherwise). An exception the step
raises on the worker comes back as itself (so ``except ValueError`` around the call works as for a local
step); a worker that dies fails that call with Ray's error, and resuming the run from its last checkpoint runs
the call again.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._serialization import decode, encode
from ..exceptions import SerializationError
from ._events import WorkflowEvent

if TYPE_CHECKING:
    from ._functional import StepWrapper
    from ._functional_run import FunctionalRun

__all__ = ["run_on_ray", "step_import_string"]

_RAY_HINT = 'steps with ray=True need ray: pip install "agentnb[ray]"'
_remote_cache: dict[str, Any] = {}


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ImportError(_RAY_HINT) from e
    return ray


def step_import_string(step: StepWrapper[Any]) -> str:
    """Where a worker finds the step: ``"module:attribute"``.

    Raises:
        TypeError: The step is not defined at the top level of an importable module.
    """
    func = step.func
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", "")
    if not module or module == "__main__" or "<locals>" in qualname:
        raise TypeError(
            f"Step {step.name!r} runs on Ray, so workers must import it, but it is defined in "
            f"{'a function' if '<locals>' in qualname else repr(module)}. Define it at the top level of a module "
            "the workers can import (on their PYTHONPATH)."
        )
    return f"{module}:{qualname}"


def _run_step(spec: str, payload: str) -> str:
    """The Ray task: import the step, run its function on the decoded arguments, return the encoded result."""
    import ray

    from ._functional import StepWrapper

    module_name, _, attribute = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    func: Callable[..., Awaitable[Any]] = obj.func if isinstance(obj, StepWrapper) else obj
    call = decode(json.loads(payload))
    result: Any = asyncio.run(_awaited(func(*call["args"], **call["kwargs"])))
    where = {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}
    return json.dumps({"result": encode(result), "where": where})


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _remote(ray: Any, options: dict[str, Any]) -> Any:
    key = json.dumps(options, sort_keys=True, default=repr)
    remote = _remote_cache.get(key)
    if remote is None:
        remote = ray.remote(**{"max_retries": 0, "num_cpus": 1, **options})(_run_step)
        _remote_cache[key] = remote
    return remote


async def run_on_ray(
    step: StepWrapper[Any], args: tuple[Any, ...], kwargs: dict[str, Any], run: FunctionalRun, index: int
) -> Any:
    """Run one step call as a Ray task and return its result (Ray's error when the task or its worker fails)."""
    ray = _ray()
    spec = step_import_string(step)
    try:
        payload = json.dumps(encode({"args": list(args), "kwargs": kwargs}))
    except (SerializationError, TypeError, ValueError) as e:
        raise SerializationError(
            f"Step {step.name!r} runs on Ray, but its arguments cannot be sent as tagged JSON: {e}"
        ) from e
    if not ray.is_initialized():
        # The cluster the process is connected to (RAY_ADDRESS), else a local one, as the evals' backend does.
        ray.init(include_dashboard=False, log_to_driver=True)
    remote = _remote(ray, step.ray_options or {})
    try:
        reply = json.loads(await remote.remote(spec, payload))
    except ray.exceptions.RayTaskError as e:
        # The step raised on the worker: its own exception, as a local step's would be (Ray's report is the cause).
        cause = getattr(e, "cause", None)
        if isinstance(cause, Exception):
            raise cause from e
        raise
    run.emit(WorkflowEvent("step_worker", reply["where"], executor_id=step.name, step=index))
    return decode(reply["result"])
