"""The Ray backend: cases go out in chunks to Ray tasks, each running its chunk with asyncio concurrency.

What crosses to a worker is data: the target's import string, the cases, the per-case options and the run
store's URL. Each worker process builds the target once (so clients and connections are made there, never
pickled), keeps one event loop for every chunk it runs, and sends back plain results; the driver scores,
stores and shows progress as chunks finish. Workflows write their runs, and instrumented workers their
traces, to the shared store (``AGENTNB_STORE_URL`` or the driver's SQLite file).
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .. import _telemetry as tel
from ._cases import CaseResult, EvalCase, plain
from ._engine import OnResult
from ._targets import RunOptions, Target, resolve_target, run_case

__all__ = ["RayBackend"]

_RAY_HINT = 'the Ray backend needs ray: pip install "agentnb[ray]"'


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise ImportError(_RAY_HINT) from e
    return ray


class RayBackend:
    """Run cases on a Ray cluster: chunks of cases go to Ray tasks; results stream back as chunks finish.

    Uses the cluster this process is connected to (``ray.init(...)`` before), else connects to ``address``,
    else starts a local one. The target must be an import string (``"pkg.module:factory"``) that the
    workers can import.

    Args:
        address: A cluster to connect to (``"auto"``, ``"ray://host:10001"``); ``None`` starts a local one
            when none is connected.
        chunk_size: Cases per task; ``None`` picks about four chunks per CPU of the cluster, at most 100.
        concurrency_per_task: How many cases each task runs at once (asyncio).
        num_cpus: CPUs each task reserves (a fraction lets several tasks share a core; they mostly wait).
        store_url: The run store workers write to; ``None`` uses ``AGENTNB_STORE_URL``, or the driver's
            SQLite file.
        init_options: More ``ray.init`` arguments when this backend starts or connects to a cluster.

    Example:
        ```python
        from agentnb.evals import RayBackend, evaluate, scorers

        experiment = await evaluate(
            "my_project.agents:make_agent", "cases.jsonl", [scorers.exact_match()], name="v2",
            backend=RayBackend(chunk_size=50, concurrency_per_task=16),
        )
        ```
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        chunk_size: int | None = None,
        concurrency_per_task: int = 16,
        num_cpus: float = 1.0,
        store_url: str | None = None,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        if concurrency_per_task < 1:
            raise ValueError(f"concurrency_per_task must be >= 1, got {concurrency_per_task}")
        self.address = address
        self.chunk_size = chunk_size
        self.concurrency = concurrency_per_task
        self.num_cpus = num_cpus
        self.store_url = store_url
        self.init_options = dict(init_options or {})

    def __repr__(self) -> str:
        return (
            f"RayBackend(address={self.address!r}, chunk_size={self.chunk_size}, "
            f"concurrency_per_task={self.concurrency})"
        )

    def _connect(self) -> Any:
        ray = _ray()
        if not ray.is_initialized():
            options = {"include_dashboard": False, "log_to_driver": True, **self.init_options}
            if self.address is not None:
                options["address"] = self.address
            ray.init(**options)
        return ray

    def _chunk_size(self, ray: Any, total: int) -> int:
        if self.chunk_size is not None:
            return self.chunk_size
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        return max(1, min(100, math.ceil(total / (cpus * 4))))

    def _worker_store_url(self, store: Any) -> str | None:
        if self.store_url is not None:
            return self.store_url
        from ..store import STORE_URL_ENV, redact_url

        url = str(getattr(store, "url", "") or "")
        env = os.environ.get(STORE_URL_ENV)
        if env and redact_url(env) == url:
            return env  # the same store, with the credentials the redacted URL leaves out
        if getattr(store, "path", None) is not None:
            return url  # a database file: workers of this machine open it themselves
        return None

    async def run(
        self,
        target: Any,
        cases: Sequence[EvalCase],
        options: RunOptions,
        *,
        store: Any,
        on_result: OnResult,
    ) -> None:
        if not isinstance(target, str):
            raise TypeError(
                "The Ray backend needs the target as an import string 'pkg.module:factory' that workers can "
                f"import (clients and connections are never pickled); got {type(target).__name__}."
            )
        if not cases:
            return
        ray = self._connect()
        size = self._chunk_size(ray, len(cases))
        task = ray.remote(num_cpus=self.num_cpus)(_run_chunk)
        settings = {
            "options": asdict(options),
            "concurrency": self.concurrency,
            "store_url": self._worker_store_url(store),
            "trace": tel.is_enabled(),
        }
        by_key = {(c.case_id, c.repetition): c for c in cases}
        pending = {
            asyncio.wrap_future(task.remote(target, [_case_payload(c) for c in cases[i : i + size]], settings).future())
            for i in range(0, len(cases), size)
        }
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    for key, record, run_record in future.result():
                        await on_result(by_key[tuple(key)], CaseResult.from_record(record), run_record)
        finally:
            for future in pending:
                future.cancel()


def _case_payload(case: EvalCase) -> dict[str, Any]:
    return {
        "case_id": case.case_id,
        "input": plain(case.input),
        "expected": plain(case.expected),
        "metadata": plain(dict(case.metadata)),
        "position": case.position,
        "repetition": case.repetition,
    }


# --------------------------------------------------------------------------- worker side

# One event loop, target and store per worker process: clients made on a loop must stay on that loop.
_worker: dict[str, Any] = {}


def _worker_loop() -> asyncio.AbstractEventLoop:
    loop = _worker.get("loop")
    if loop is None or loop.is_closed():
        loop = _worker["loop"] = asyncio.new_event_loop()
    return loop


def _worker_target(spec: str, concurrency: int) -> Target:
    key = f"target:{spec}:{concurrency}"
    if key not in _worker:
        _worker[key] = resolve_target(spec, concurrency=concurrency)
    return _worker[key]


def _worker_store(url: str | None, trace: bool) -> Any:
    if url is None:
        return None
    key = f"store:{url}"
    if key not in _worker:
        from ..store import open_store

        _worker[key] = open_store(url)
        if trace:
            from ..observability import configure_otel_providers

            _worker[f"spans:{url}"] = configure_otel_providers(store=_worker[key])
    return _worker[key]


def _run_chunk(
    spec: str, payloads: list[dict[str, Any]], settings: dict[str, Any]
) -> list[tuple[tuple[str, int], dict[str, Any], dict[str, Any] | None]]:
    """A Ray task: run one chunk of cases with asyncio concurrency and return plain results."""
    loop = _worker_loop()
    store = _worker_store(settings["store_url"], settings["trace"])
    if settings["trace"] and not tel.is_enabled():
        tel.enable()
    options = RunOptions(**settings["options"])
    target = _worker_target(spec, settings["concurrency"])
    cases = [EvalCase(**payload) for payload in payloads]
    out: list[Any] = [None] * len(cases)

    async def chunk() -> None:
        pending = iter(enumerate(cases))

        async def worker() -> None:
            for index, case in pending:
                result, record = await run_case(target, case, options, store=store)
                out[index] = ((case.case_id, case.repetition), result.to_record(), record)

        await asyncio.gather(*(worker() for _ in range(min(settings["concurrency"], len(cases)))))

    loop.run_until_complete(chunk())
    spans = _worker.get(f"spans:{settings['store_url']}")
    if spans is not None:
        spans.force_flush()  # the traces are in the shared store before the driver reads the results
    return out
