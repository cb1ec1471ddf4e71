"""The OpenAI-compatible API next to the ``panel serve devui`` app, as a Panel server plugin.

``panel serve devui --plugins devui.api`` (from the repository root, like ``panel serve devui`` itself)
imports this module and adds its ``ROUTES`` to the server: ``/v1/responses``, ``/v1/conversations`` and
``/v1/models`` for the same entities the page shows (``--args DIR ...`` or ``AGENTNB_ENTITIES``; the demos
otherwise), so the official ``openai`` SDK can drive them with ``base_url=http://127.0.0.1:PORT/v1``.

The API checks access itself: with ``--basic-auth TOKEN`` (the page's login) or ``AGENTNB_DEVUI_TOKEN``
set, every request needs ``Authorization: Bearer TOKEN``; without a token it answers this machine only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

try:
    import agentnb  # noqa: F401 - only checks that the package is importable
except ImportError:  # a fresh clone that is not pip-installed yet: use the checkout next to this folder
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentnb.devui._api import ResponsesAPI, api_routes
from agentnb.devui._discovery import app_catalog
from agentnb.devui._server import read_token

TOKEN_VAR = "AGENTNB_DEVUI_TOKEN"


def option(argv: list[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE`` among Panel's own options (before ``--args``)."""
    own = argv[: argv.index("--args")] if "--args" in argv else argv
    for i, arg in enumerate(own):
        if arg == name and i + 1 < len(own):
            return own[i + 1]
        if arg.startswith(name + "="):
            return arg.partition("=")[2]
    return None


def app_args(argv: list[str]) -> list[str]:
    """What ``panel serve`` hands the app as its arguments: everything after ``--args``."""
    return argv[argv.index("--args") + 1 :] if "--args" in argv else []


def routes(argv: list[str] | None = None) -> list[tuple[str, type, dict[str, Any]]]:
    """The API's URL patterns for the entities and token this ``panel serve`` command line names."""
    argv = list(sys.argv if argv is None else argv)
    token = read_token(option(argv, "--basic-auth") or os.environ.get(TOKEN_VAR))
    from agentnb.store import default_store

    # The same catalog object the page builds for these arguments (app_catalog caches per process).
    return api_routes(ResponsesAPI(app_catalog(app_args(argv)), token=token, store=default_store()))


ROUTES = routes()
