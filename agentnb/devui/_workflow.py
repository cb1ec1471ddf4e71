"""Placeholder."""

from __future__ import annotations

from typing import Any

import panel as pn

from ._widgets import html_pane


class WorkflowView:
    def __init__(self, entity: Any, *, store: Any = None, on_checkpoint: Any = None) -> None:
        self.entity = entity

    def panel(self) -> pn.viewable.Viewable:
        return html_pane("workflow")
