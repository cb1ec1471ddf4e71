"""Evaluate and batch-run agents and workflows over datasets, here or on a Ray cluster.

- :func:`run_batch` runs a target (an Agent, a Workflow, an async function, or an import string
  ``"pkg.module:factory"``) on many inputs at once and returns a DataFrame, one row per input.
- :func:`evaluate` runs it over a dataset, scores every answer with :mod:`~agentnb.evals.scorers`, and
  stores the whole experiment in the run store; :func:`experiments`, :func:`load_experiment` and
  :func:`compare` read experiments back, in this notebook, another one, or the DevUI.
- ``backend="ray"`` (:class:`RayBackend`) sends cases in chunks to Ray tasks when one machine is not enough.

Every case is an ordinary run of the target, recorded in the run store with its trace; finished cases are
stored as they finish, so an interrupted evaluation resumes without calling the model again for them.
pandas and tqdm load on first use (``pip install "agentnb[evals]"``), Ray only with the Ray backend
(``pip install "agentnb[ray]"``).

Example:
    ```python
    from agentnb import Agent
    from agentnb.evals import evaluate, scorers
    from agentnb.local import FunctionChatClient

    agent = Agent(FunctionChatClient(lambda messages, options: "Paris"), name="geo")
    dataset = [{"input": "Capital of France?", "expected": "Paris"}]
    experiment = await evaluate(agent, dataset, [scorers.exact_match()], name="geo-v1")
    experiment  # summary, score chart, failing cases first
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import scorers
from ._cases import BATCH_COLUMNS, CaseResult, CaseStatus, EvalCase
from ._engine import LocalBackend
from ._experiment import Experiment, compare, experiments, load_experiment
from ._run import evaluate, run_batch
from ._targets import ApprovalPolicy, OnApproval
from .scorers import Scorer

if TYPE_CHECKING:
    from ._ray import RayBackend

__all__ = [
    "BATCH_COLUMNS",
    "ApprovalPolicy",
    "CaseResult",
    "CaseStatus",
    "EvalCase",
    "Experiment",
    "LocalBackend",
    "OnApproval",
    "RayBackend",
    "Scorer",
    "compare",
    "evaluate",
    "experiments",
    "load_experiment",
    "run_batch",
    "scorers",
]


def __getattr__(name: str) -> Any:
    if name == "RayBackend":
        from ._ray import RayBackend

        return RayBackend
    raise AttributeError(f"module 'agentnb.evals' has no attribute {name!r}")
