"""The DevUI as a Panel directory app: ``panel serve devui`` from the repository root.

Entities come from ``--args DIR [DIR ...]`` (``panel serve devui --args ./my_agents``) or the
``AGENTNB_ENTITIES`` environment variable (``os.pathsep``-separated directories or module names). With
neither, the DevUI serves the demo agents and workflows that ship with agentnb, on the offline models
unless ``OPENAI_API_KEY`` is set, and says so at the top of the page.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import agentnb  # noqa: F401 - only checks that the package is importable
except ImportError:  # a fresh clone that is not pip-installed yet: use the checkout next to this folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentnb.devui import create_app
from agentnb.devui._discovery import app_catalog

# Spans of runs made here go to the run store, so the Traces tab can show them.
create_app(app_catalog(sys.argv[1:]), tracing=True).servable(title="agentnb DevUI")
