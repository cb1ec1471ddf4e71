"""The time-travel view (filled in below once the workflow engine's checkpoint API is in place)."""

from __future__ import annotations

from typing import Any

import panel as pn

from ._widgets import html_pane

__all__ = ["TimeTravelView"]


class TimeTravelView:
    """Placeholder."""

    def __init__(self, store: Any, catalog: Any) -> None:
        self.store = store
        self.catalog = catalog

    def panel(self) -> pn.viewable.Viewable:
        return html_pane("time travel")

    def start_polling(self, period_ms: int) -> None:
        return None

    def refresh_runs(self) -> None:
        return None

    def open_run(self, run_id: str) -> None:
        return None
