"""The ported samples import their model as the top-level module ``parity_model`` (their text stays the
original's but for that import line), so this folder is on ``sys.path`` while the parity tests run."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
