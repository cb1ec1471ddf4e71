"""An experiment's rich display, asked of the views (``agentnb.views``) so this package holds no HTML."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._extensions import OBJECT_HTML

if TYPE_CHECKING:
    from ._experiment import Experiment

__all__ = ["experiment_html"]


def experiment_html(experiment: Experiment) -> str:
    """The rich display of an experiment: header, summary, score chart, cases (failing first, expandable)."""
    return OBJECT_HTML.get()(experiment)
