"""Bokeh's hooks for the ``panel serve devui`` app: refuse non-loopback clients unless auth is configured.

Bokeh calls ``process_request`` for the page request and again when the websocket opens, before it creates a
session, so a refused client never runs any of the app's code (see ``agentnb.devui._admission``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    import agentnb  # noqa: F401 - only checks that the package is importable
except ImportError:  # a fresh clone that is not pip-installed yet: use the checkout next to this folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentnb.devui._admission import admit


def process_request(request: Any) -> dict[str, Any]:
    """Admit loopback clients (anyone, once Panel basic auth or OAuth is configured); 403 for the rest."""
    admit(request)
    return {}
