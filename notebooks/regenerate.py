"""Re-execute notebooks in place so their stored outputs are what nbval will compare against.

nbval records the outputs a cell sends while it runs and applies neither display updates nor
``clear_output``; this script stores outputs the same way, so ``pytest --nbval notebooks`` passes on the
result. Run it after editing a notebook (from the repository root):

    python notebooks/regenerate.py                       # every notebook in this folder
    python notebooks/regenerate.py 02_tools_and_approval.ipynb
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


class NbvalLikeClient(NotebookClient):
    """Store outputs as nbval records them: display updates and clear_output are not applied."""

    def _update_display_id(self, display_id: str, msg: dict[str, Any]) -> None:
        return None

    def clear_output(self, outs: list[Any], msg: dict[str, Any], cell_index: int) -> None:
        return None


def regenerate(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NbvalLikeClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(HERE)}})
    client.execute()
    nb.metadata.pop("widgets", None)  # widget state is large, differs per run, and a re-run rebuilds it
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.metadata = {}
    nbformat.write(nb, path)
    print(f"regenerated {path.name}")


def main(names: list[str]) -> None:
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    # Keep the run store of these runs out of the repository.
    os.environ.setdefault("AGENTNB_HOME", tempfile.mkdtemp(prefix="agentnb-notebooks-"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))
    for path in paths:
        regenerate(path)


if __name__ == "__main__":
    main(sys.argv[1:])
