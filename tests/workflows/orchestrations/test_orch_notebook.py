"""The orchestrations notebook runs in a real kernel and reproduces its stored outputs (nbval)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "notebooks" / "05_orchestrations.ipynb"


@pytest.mark.kernel
def test_notebook_outputs_are_reproduced() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", str(NOTEBOOK), "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    assert f"{len(cells)} passed" in out.stdout  # every code cell ran and matched its stored output
