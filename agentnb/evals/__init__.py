"""Evaluate and batch-run agents and workflows over datasets, here or on a Ray cluster.

- :func:`run_batch` runs a target (an Agent, a Workflow, an async function, or an import string
  ``"pkg.module:factory"``) on many inputs at once and returns a DataFrame, one row per input.
- :func:`evaluate` runs it over a dataset, scores every answer with :mod:`~agentnb.evals.scorers`, and
  stores the whole experiment in the run store; :func:`experiments`, :func:`load_experiment` and
  :func:`compare` read experiments back, in this notebook, another one, or the DevUI.
- ``backend="ray"`` (:class:`RayBackend`) sends cases in chunks to Ray tasks when one machine is not enough.
- :func:`dataset_from_runs` turns stored runs into a :class:`Dataset` (inputs, and their answers as expected
  outputs to edit) that saves in versions to the run store and to JSONL / CSV / DataFrames.
- :func:`gate` checks an experiment against score floors and a baseline and names the cases that got worse;
  ``python -m agentnb.evals run|gate ...`` is the same check for CI (exit status 1 when it fails).
- Agent Framework's evaluation API (:func:`evaluate_agent`, :func:`evaluate_workflow`, :class:`LocalEvaluator`,
  :func:`evaluator`, the checks, :class:`EvalResults`) runs on the same engine: its evaluations are
  experiments too, and ``EvalResults.to_experiment()`` / ``Experiment.to_eval_results()`` convert between them.

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

from ..exceptions import EvalNotPassedError
from . import scorers
from ._cases import BATCH_COLUMNS, CaseResult, CaseStatus, EvalCase
from ._checks import (
    CheckResult,
    EvalCheck,
    Evaluator,
    LocalEvaluator,
    evaluator,
    keyword_check,
    tool_call_args_match,
    tool_called_check,
    tool_calls_present,
)
from ._datasets import Dataset, add_runs_to_dataset, dataset_from_runs, datasets, load_dataset
from ._engine import LocalBackend
from ._experiment import Experiment, compare, experiments, load_experiment
from ._gate import GateReport, Regression, gate, regressions
from ._items import AgentEvalConverter, ConversationSplit, ConversationSplitter, EvalItem, ExpectedToolCall
from ._reference import evaluate_agent, evaluate_workflow
from ._results import EvalItemResult, EvalResults, EvalScoreResult, RubricScore
from ._run import evaluate, run_batch
from ._targets import ApprovalPolicy, OnApproval
from ._trace import CaseTrace, Step
from .scorers import Scorer

if TYPE_CHECKING:
    from ._ray import RayBackend

__all__ = [
    "BATCH_COLUMNS",
    "AgentEvalConverter",
    "ApprovalPolicy",
    "CaseResult",
    "CaseStatus",
    "CaseTrace",
    "CheckResult",
    "ConversationSplit",
    "ConversationSplitter",
    "Dataset",
    "EvalCase",
    "EvalCheck",
    "EvalItem",
    "EvalItemResult",
    "EvalNotPassedError",
    "EvalResults",
    "EvalScoreResult",
    "Evaluator",
    "ExpectedToolCall",
    "Experiment",
    "GateReport",
    "LocalBackend",
    "LocalEvaluator",
    "OnApproval",
    "RayBackend",
    "Regression",
    "RubricScore",
    "Scorer",
    "Step",
    "add_runs_to_dataset",
    "compare",
    "dataset_from_runs",
    "datasets",
    "evaluate",
    "evaluate_agent",
    "evaluate_workflow",
    "evaluator",
    "experiments",
    "gate",
    "keyword_check",
    "load_dataset",
    "load_experiment",
    "regressions",
    "run_batch",
    "scorers",
    "tool_call_args_match",
    "tool_called_check",
    "tool_calls_present",
]


def __getattr__(name: str) -> Any:
    if name == "RayBackend":
        from ._ray import RayBackend

        return RayBackend
    raise AttributeError(f"module 'agentnb.evals' has no attribute {name!r}")
