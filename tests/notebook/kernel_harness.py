"""Run cells in a real Jupyter kernel (nbclient) and read their outputs back."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]


def kernel_env() -> None:
    """Make the kernel import this checkout of agentnb (whether or not it is pip-installed)."""
    paths = [str(REPO), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))


def execute(cells: list[str], cwd: Path, *, timeout: int = 60) -> list[list[dict[str, Any]]]:
    """Execute ``cells`` in a fresh python3 kernel (errors allowed) and return each cell's outputs."""
    kernel_env()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return [[dict(output) for output in cell.outputs] for cell in nb.cells]


class KernelSession:
    """A live kernel that runs cells one at a time (for tests that share one kernel start)."""

    def __init__(self, cwd: Path, *, timeout: int = 60) -> None:
        kernel_env()
        self.nb = nbformat.v4.new_notebook()
        self.client = NotebookClient(
            self.nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(cwd)}},
        )
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(self.client.setup_kernel())

    def run(self, source: str) -> list[dict[str, Any]]:
        """Execute one cell and return its outputs (later display updates land in ``self.nb`` too)."""
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)
        self.client.execute_cell(cell, len(self.nb.cells) - 1)
        return [dict(output) for output in cell.outputs]

    def outputs(self, index: int) -> list[dict[str, Any]]:
        """The current outputs of the ``index``-th cell run (updated by later display updates)."""
        return [dict(output) for output in self.nb.cells[index].outputs]

    def close(self) -> None:
        """Shut the kernel down."""
        self._stack.close()


def text(outputs: list[dict[str, Any]]) -> str:
    """All text of a cell's outputs: streams, text/plain results and errors, joined."""
    parts: list[str] = []
    for output in outputs:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] in {"execute_result", "display_data"}:
            parts.append(output["data"].get("text/plain", ""))
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
    return "".join(parts)


def data(outputs: list[dict[str, Any]], mime: str) -> list[str]:
    """The ``mime`` payloads of a cell's rich outputs."""
    return [
        o["data"][mime] for o in outputs if o["output_type"] in {"execute_result", "display_data"} and mime in o["data"]
    ]
