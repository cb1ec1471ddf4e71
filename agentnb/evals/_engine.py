"""The batch engine: the local asyncio backend, the background store writer and the progress bar.

Backends run cases and hand each finished one to a callback on the driver's event loop; everything after
that (scoring, progress, storing) is the same whether the case ran here or on a Ray worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ._cases import CaseResult, EvalCase
from ._targets import RunOptions, Target, resolve_target, run_case

__all__ = ["Backend", "LocalBackend", "OnResult", "Progress", "Recorder", "get_backend"]

OnResult = Callable[[EvalCase, CaseResult, "dict[str, Any] | None"], Awaitable[None]]
"""Called on the driver's loop as each case finishes: the case, its result, and its run record."""


class Backend(Protocol):
    """Runs cases of a target and reports each finished one through ``on_result``."""

    concurrency: int

    async def run(
        self,
        target: Any,
        cases: Sequence[EvalCase],
        options: RunOptions,
        *,
        store: Any,
        on_result: OnResult,
    ) -> None: ...


class LocalBackend:
    """Run cases on this event loop, ``concurrency`` at a time.

    ``concurrency`` workers share one queue of cases, so at most that many cases are in flight and a slow
    case never holds up the others. A case's own failure never stops the batch.

    Args:
        concurrency: How many cases run at once.

    Example:
        ```python
        from agentnb.evals import LocalBackend, run_batch

        frame = await run_batch(agent, ["hi", "bye"], backend=LocalBackend(concurrency=4))
        ```
    """

    def __init__(self, concurrency: int = 16) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency

    def __repr__(self) -> str:
        return f"LocalBackend(concurrency={self.concurrency})"

    async def run(
        self,
        target: Any,
        cases: Sequence[EvalCase],
        options: RunOptions,
        *,
        store: Any,
        on_result: OnResult,
    ) -> None:
        resolved = target if isinstance(target, Target) else resolve_target(target, concurrency=self.concurrency)
        pending = iter(cases)

        async def worker() -> None:
            for case in pending:  # workers pull from one iterator: the next free worker takes the next case
                result, record = await run_case(resolved, case, options, store=store)
                await on_result(case, result, record)

        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(cases)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            for task in workers:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


def get_backend(backend: Any, concurrency: int) -> Any:
    """Turn ``backend="local" | "ray"`` or a backend object into a backend."""
    if backend == "local":
        return LocalBackend(concurrency)
    if backend == "ray":
        from ._ray import RayBackend

        return RayBackend(concurrency_per_task=concurrency)
    if callable(getattr(backend, "run", None)):
        return backend
    raise ValueError(f"backend must be 'local', 'ray' or a backend object (LocalBackend, RayBackend), got {backend!r}")


class Recorder:
    """Write finished runs and experiment cases to the store from a background thread.

    Each case is handed over as it finishes and committed at once, together with whatever else finished
    meanwhile (one transaction for many cases when they come fast), so the event loop never waits for the
    database and an interrupted batch loses no case that finished before the interruption.
    :meth:`close` drains the queue; call it in a ``finally``.
    """

    def __init__(self, store: Any, experiment: str | None = None) -> None:
        self.store = store
        self.experiment = experiment
        self._runs: list[dict[str, Any]] = []
        self._cases: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._closed = False
        self.error: BaseException | None = None
        self.written = 0
        self._thread = threading.Thread(target=self._loop, name="agentnb-evals-recorder", daemon=True)
        self._thread.start()

    def add(self, run: dict[str, Any] | None = None, case: dict[str, Any] | None = None) -> None:
        """Queue a run record and/or an experiment case row for writing."""
        with self._cond:
            idle = not self._runs and not self._cases
            if run is not None:
                self._runs.append(run)
            if case is not None:
                self._cases.append(case)
            if idle:  # the writer sleeps only when there was nothing to write
                self._cond.notify()

    #: After the first case arrives, wait this long for more, so a fast batch writes many cases per transaction
    #: (and the writer thread does not compete with the event loop case by case).
    GATHER_S = 0.01

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._runs and not self._cases and not self._closed:
                    self._cond.wait()
                if not self._closed:
                    self._cond.wait(self.GATHER_S)
                runs, self._runs = self._runs, []
                cases, self._cases = self._cases, []
                if not runs and not cases:
                    return  # closed and drained
            try:
                if runs:
                    self.store.add_runs(runs)
                if cases and self.experiment is not None:
                    self.store.add_experiment_cases(self.experiment, cases)
                self.written += len(cases) or len(runs)
            except Exception as e:  # keep going: later batches may succeed; close() reports the failure
                self.error = self.error or e

    def close(self) -> None:
        """Write everything queued, stop the thread, and warn when some write failed."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()
        if self.error is not None:
            warnings.warn(
                f"Some batch results could not be written to the run store ({self.error}); the returned "
                "results are complete, but resuming will run those cases again.",
                RuntimeWarning,
                stacklevel=3,
            )


class Progress:
    """A ``tqdm.auto`` bar (a widget in Jupyter, text in a terminal) with running means of the scores.

    Args:
        total: How many cases the batch has.
        enabled: ``False`` shows nothing.
        desc: The bar's label.
        initial: Cases already done (resumed).
    """

    _REFRESH_S = 0.1

    def __init__(self, total: int, *, enabled: bool, desc: str, initial: int = 0) -> None:
        self.bar: Any = None
        self._sums: dict[str, float] = {}
        self._counts: dict[str, int] = {}
        self.failed = 0
        self._shown = 0.0
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=desc, unit="case", dynamic_ncols=True)

    def add_scores(self, values: dict[str, float]) -> None:
        """Count scores into the running means (also for resumed cases)."""
        for key, value in values.items():
            if not math.isnan(value):
                self._sums[key] = self._sums.get(key, 0.0) + value
                self._counts[key] = self._counts.get(key, 0) + 1

    def means(self) -> dict[str, float]:
        """The running mean of each score so far."""
        return {key: self._sums[key] / self._counts[key] for key in self._sums}

    def postfix(self) -> str:
        """The bar's suffix: each running mean, then failures."""
        parts = [f"{key}={value:.2f}" for key, value in self.means().items()]
        if self.failed:
            parts.append(f"failed={self.failed}")
        return " ".join(parts)

    def advance(self, result: CaseResult, values: dict[str, float] | None = None) -> None:
        """One more case finished."""
        if values:
            self.add_scores(values)
        if not result.ok:
            self.failed += 1
        bar = self.bar
        if bar is None:
            return
        now = time.monotonic()
        if now - self._shown >= self._REFRESH_S:  # formatting the suffix per case would cost more than the case
            self._shown = now
            bar.set_postfix_str(self.postfix(), refresh=False)
        bar.update(1)

    def close(self) -> None:
        """Show the final means and close the bar."""
        if self.bar is not None:
            self.bar.set_postfix_str(self.postfix(), refresh=False)
            self.bar.close()
