"""The demo agents and workflows that ``panel serve devui`` shows when it is given nothing else.

They run offline (deterministic models from :mod:`agentnb.local`) unless ``OPENAI_API_KEY`` or
``OPENAI_BASE_URL`` is set. A demo that cannot be built is listed as a load error, like a user module.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import Any

from .._discovery import Catalog, DiscoveryError

__all__ = ["demo_catalog", "uses_real_model"]


def uses_real_model() -> bool:
    """Tell whether the demos talk to a real model (an API key or a local server is configured)."""
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def _factories() -> list[tuple[str, Callable[[], Any]]]:
    def agents() -> list[Any]:
        from .agents import approvals_agent, assistant_agent, planner_agent

        return [assistant_agent(), approvals_agent(), planner_agent()]

    def workflows() -> list[Any]:
        from .workflows import fan_out_workflow, review_workflow, text_pipeline_workflow

        return [text_pipeline_workflow(), review_workflow(), fan_out_workflow()]

    return [("agentnb.devui.demos.agents", agents), ("agentnb.devui.demos.workflows", workflows)]


def demo_catalog() -> Catalog:
    """Build a fresh catalog of the demo agents and workflows.

    Returns:
        A catalog marked ``offline`` (with a note for the page header) unless a real model is configured.
    """
    real = uses_real_model()
    catalog = Catalog(
        offline=not real,
        note=(
            "Demo agents and workflows on a real model (OPENAI_API_KEY / OPENAI_BASE_URL is set)."
            if real
            else "No API key: the demo agents and workflows run on agentnb's offline models "
            "(deterministic, no network). Set OPENAI_API_KEY to use a real model."
        ),
    )
    for source, factory in _factories():
        try:
            objects = factory()
        except Exception as exc:  # a broken demo is shown like a broken user module
            catalog.errors.append(
                DiscoveryError(source=source, message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
            )
            continue
        for obj in objects:
            catalog.add(obj, source=source)
    return catalog
