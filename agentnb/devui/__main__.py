"""Launch the DevUI: ``python -m agentnb.devui [DIR_OR_MODULE ...] [--port N] [--address A] [--token T]``.

With no entities (and no ``AGENTNB_ENTITIES``) it serves the demos that ship with agentnb on the offline
models. It binds to 127.0.0.1 and refuses any non-loopback address unless a token is given (``--token``, or
``AGENTNB_DEVUI_TOKEN`` so the token stays out of the process list).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ._discovery import ENV_VAR, discover
from ._server import check_address, read_token, serve

__all__ = ["main"]

TOKEN_VAR = "AGENTNB_DEVUI_TOKEN"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agentnb.devui",
        description="Serve the agentnb DevUI for agents and workflows found in directories or modules.",
    )
    parser.add_argument("entities", nargs="*", help="directories (scanned one level deep), .py files or modules")
    parser.add_argument("--port", type=int, default=5006, help="port to listen on (0 picks a free one)")
    parser.add_argument("--address", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument(
        "--token",
        "--basic-auth",
        dest="token",
        default=os.environ.get(TOKEN_VAR) or None,
        help=f"access token (or a file holding one); required for a non-loopback address (default: ${TOKEN_VAR})",
    )
    parser.add_argument(
        "--mode",
        choices=["developer", "user"],
        default="developer",
        help="'user' shows only chat and workflow views (no runs, time travel, traces)",
    )
    parser.add_argument(
        "--protocols",
        action="store_true",
        help="also serve the entities over the Responses API, A2A and MCP on a second port (same token)",
    )
    parser.add_argument("--show", action="store_true", help="open a browser tab")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher; return the exit status."""
    args = _parser().parse_args(argv)
    token = read_token(args.token)
    try:
        check_address(args.address, token=token)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    entities = None
    if args.entities or os.environ.get(ENV_VAR):
        entities = discover(args.entities, env=True)
    port = args.port or None
    print(f"agentnb DevUI on http://{args.address}:{port or '?'}/ (Ctrl+C to stop)", flush=True)
    serve(
        entities,
        port=port,
        address=args.address,
        background=False,
        show=args.show,
        token=token,
        mode=args.mode,
        protocols=args.protocols,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    raise SystemExit(main())
