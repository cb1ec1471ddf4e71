"""The tutorial notebooks re-run in a fresh kernel and reproduce their stored outputs (nbval)."""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest

from tests.notebook.kernel_harness import REPO, kernel_env

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

NOTEBOOKS = REPO / "notebooks"


@pytest.mark.timeout(600)  # one kernel per notebook; each cell has nbval's own timeout
def test_notebooks_reproduce_their_outputs() -> None:
    notebooks = sorted(NOTEBOOKS.glob("*.ipynb"))
    # The tutorials are one numbered series: 01_..., 02_..., with no gaps and no unnumbered stragglers.
    numbers = [re.match(r"(\d\d)_[a-z0-9_]+\.ipynb$", nb.name) for nb in notebooks]
    assert all(numbers), [nb.name for nb in notebooks]
    assert [int(m[1]) for m in numbers if m] == list(range(1, len(notebooks) + 1)), [nb.name for nb in notebooks]
    kernel_env()
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "--nbval", str(NOTEBOOKS),
            "--nbval-sanitize-with", str(NOTEBOOKS / "nbval-sanitize.cfg"),
            "--nbval-cell-timeout=120", "-p", "no:cacheprovider", "-q", "-rA", "--no-header",
        ],
        cwd=REPO, capture_output=True, text=True, timeout=580,
    )  # fmt: skip
    tail = result.stdout[-6000:] + result.stderr[-2000:]
    assert result.returncode == 0, tail
    # Every code cell of every notebook ran and matched: nothing skipped or deselected silently.
    cells = sum(len([c for c in nbformat.read(nb, 4).cells if c.cell_type == "code"]) for nb in notebooks)
    for notebook in notebooks:
        assert f"PASSED notebooks/{notebook.name}::Cell 0" in result.stdout, (notebook.name, tail)
    summary = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(rf"=* ?{cells} passed in [0-9.]+s( \([0-9:]+\))? ?=*", summary), summary
