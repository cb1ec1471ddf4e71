"""What both front ends show of domain objects: experiments and executor re-runs as HTML, and the workflow view model.

The domain packages (``agentnb.evals``, ``agentnb.workflows``) keep typed data and no HTML; the notebook and
the DevUI render it with the functions here, which escape every value through :mod:`agentnb._html`. An
object's own ``_repr_html_`` asks :func:`object_html` through the core's ``OBJECT_HTML`` extension point, so a
domain package never imports this one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._extensions import OBJECT_HTML as _OBJECT_HTML
from ._experiments import compare_case_html, diff_html, experiment_html, score_chart_svg, summary_html, worse_html
from ._rerun import rerun_html
from ._workflow import WorkflowViewModel

__all__ = [
    "WorkflowViewModel",
    "compare_case_html",
    "diff_html",
    "experiment_html",
    "object_html",
    "rerun_html",
    "score_chart_svg",
    "summary_html",
    "worse_html",
]

# The view of each domain type, by the class's module and name (so that rendering one never imports the others).
_VIEWS: dict[str, Callable[[Any], str]] = {
    "agentnb.evals._experiment.Experiment": experiment_html,
    "agentnb.workflows._rerun.RerunResult": rerun_html,
}


def object_html(obj: object) -> str:
    """The HTML view of a domain object this package renders (its class or a base class is known)."""
    for cls in type(obj).__mro__:
        view = _VIEWS.get(f"{cls.__module__}.{cls.__qualname__}")
        if view is not None:
            return view(obj)
    raise TypeError(f"No HTML view for {type(obj).__qualname__}.")


_OBJECT_HTML.fill(object_html)
