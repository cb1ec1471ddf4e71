"""Where a run was started from: the notebook cell that was running, recorded with each stored run.

A notebook sets the cell when one starts (``agentnb.notebook`` does it for every cell once loaded); code that
writes a run to the run store (workflow runs, batch cases, agent turns recorded by the notebook) adds
:func:`run_metadata` to the run's metadata. The cell lives in a context variable, so a task a cell starts
keeps its cell even when it finishes after the cell did, and nothing leaks into code run elsewhere.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, TypedDict, cast

__all__ = ["CellInfo", "cell_label", "current_cell", "run_metadata", "set_cell"]


class CellInfo(TypedDict, total=False):
    """The cell a run started from, as stored in the run's metadata under ``"cell"``."""

    execution_count: int | None
    source: str
    cell_id: str | None
    notebook: str | None
    notebook_url: str | None
    kernel: str


_CELL: ContextVar[CellInfo | None] = ContextVar("agentnb_cell", default=None)


def current_cell() -> CellInfo | None:
    """Return the cell running now (``None`` outside a notebook cell)."""
    return _CELL.get()


def set_cell(cell: CellInfo | None) -> None:
    """Mark ``cell`` as running in the current context (``None`` when it has finished)."""
    _CELL.set(cell)


def run_metadata() -> dict[str, Any]:
    """Metadata a new run should carry: ``{"cell": {...}}`` while a notebook cell runs, else nothing."""
    cell = _CELL.get()
    return {"cell": dict(cell)} if cell else {}


def cell_label(metadata: Any) -> str | None:
    """Return a run's cell as people read it, e.g. ``"[12] r = await agent.run(...)"``; ``None`` without one.

    Args:
        metadata: A run's metadata dict (or the cell dict itself).
    """
    if not isinstance(metadata, dict):
        return None
    cell = cast("dict[str, Any]", metadata).get("cell", metadata)
    if not isinstance(cell, dict) or "source" not in cell:
        return None
    cell = cast("dict[str, Any]", cell)
    count = cell.get("execution_count")
    prefix = f"[{count}] " if isinstance(count, int) else "[ ] "
    return prefix + str(cell.get("source") or "")
