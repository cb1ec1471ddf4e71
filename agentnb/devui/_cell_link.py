"""The notebook cell a run came from, as the DevUI shows it: its label and a link back to the notebook.

Runs started from a notebook cell keep the cell in their metadata (``agentnb._provenance``): execution count,
first line, and the notebook's path and URL when the kernel could know them. The Runs and Traces views show
the label and, when the URL is known, an "open in notebook" link. The URL is stored data, so only http(s)
links to it are made, and everything is escaped.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from agentnb._html import escape
from agentnb._json import is_json_object
from agentnb._provenance import cell_label

__all__ = ["cell_html", "run_cell"]


def run_cell(metadata: Any) -> dict[str, Any] | None:
    """The cell dict in a run's metadata (a dict or its JSON text), or ``None`` when the run has none."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return None
    cell = metadata.get("cell") if is_json_object(metadata) else None
    return dict(cell) if is_json_object(cell) and "source" in cell else None


def cell_html(metadata: Any) -> str:
    """The run's cell label, the notebook's path and an "open in notebook" link (empty without a cell)."""
    cell = run_cell(metadata)
    if cell is None:
        return ""
    parts = [f"<code class='anb-cell-label'>{escape(cell_label(cell) or '')}</code>"]
    notebook = cell.get("notebook")
    if isinstance(notebook, str) and notebook:
        parts.append(f"<span class='anb-muted'>in {escape(notebook)}</span>")
    url = cell.get("notebook_url")
    if isinstance(url, str) and urlsplit(url).scheme in ("http", "https"):
        parts.append(
            f"<a class='anb-open-notebook' href='{escape(url)}' target='_blank' rel='noopener noreferrer'>"
            "open in notebook</a>"
        )
    return f"<span class='anb-run-cell'>cell {' '.join(parts)}</span>"
