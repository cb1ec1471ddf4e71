"""``agentnb serve TARGET ...`` (or ``python -m agentnb.serving TARGET ...``): serve agents over the Responses API,
A2A and MCP.

A target is ``package.module:name``, ``path/to/file.py:name`` (``name`` defaults to what the file exports as
``agent``, ``workflow``, ``agents`` or ``workflows``), or a declarative ``.yaml``/``.yml`` file (read with the
safe loader; workflow files may invoke the agent files given with them). The server binds to 127.0.0.1 and
refuses any other address unless a token is given (``--token``, or ``AGENTNB_SERVE_TOKEN`` so the token stays
out of the process list).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from agentnb._json import is_list_or_tuple
from agentnb._serving import check_bind_address

__all__ = ["load_targets", "main"]

TOKEN_VAR = "AGENTNB_SERVE_TOKEN"
_EXPORTS = ("agent", "workflow", "agents", "workflows")


class TargetError(Exception):
    """A target that names nothing servable."""


def _module_from_file(path: Path) -> Any:
    name = f"_agentnb_served_{abs(hash(path.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"Cannot import {path}.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # the file's own imports of its neighbours work as when run directly
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def _exports(module: Any, attr: str | None, target: str) -> list[Any]:
    if attr:
        if not hasattr(module, attr):
            raise TargetError(f"{target}: the module has no {attr!r}.")
        found: list[Any] = [getattr(module, attr)]
    else:
        found = [getattr(module, n) for n in _EXPORTS if hasattr(module, n)]
        if not found:
            raise TargetError(f"{target}: exports none of {', '.join(_EXPORTS)}; name one as {target}:NAME.")
    items: list[Any] = []
    for value in found:
        if isinstance(value, dict):
            items.extend(cast("dict[str, Any]", value).values())
        elif is_list_or_tuple(value):
            items.extend(value)
        else:
            items.append(value)
    return items


def load_targets(targets: Sequence[str]) -> list[Any]:
    """The agents and workflows the targets name (YAML files are built after the Python ones, which they may use)."""
    items: list[Any] = []
    yaml_paths: list[Path] = []
    for target in targets:
        path_text, _, attr = target.rpartition(":") if ":" in target else (target, "", "")
        if path_text.endswith((".yaml", ".yml")) or target.endswith((".yaml", ".yml")):
            yaml_paths.append(Path(target))
            continue
        if path_text.endswith(".py") or target.endswith(".py"):
            path = Path(path_text if path_text.endswith(".py") else target)
            if not path.is_file():
                raise TargetError(f"No file {path}.")
            items.extend(_exports(_module_from_file(path), attr or None, target))
            continue
        module_name = path_text or target
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise TargetError(f"Cannot import {module_name!r}: {e}") from e
        items.extend(_exports(module, attr or None, target))
    if yaml_paths:
        from agentnb.declarative import load_definitions

        for path in yaml_paths:
            if not path.is_file():
                raise TargetError(f"No file {path}.")
        named = {str(a.name): a for a in items if getattr(a, "name", None) and hasattr(a, "create_session")}
        for loaded in load_definitions(yaml_paths, agents=named):
            if loaded.error is not None or loaded.obj is None:
                raise TargetError(loaded.error or f"{loaded.path}: nothing to serve.")
            items.append(loaded.obj)
    return items


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentnb serve",
        description="Serve agents and workflows over the OpenAI Responses API, A2A and MCP from one server.",
    )
    parser.add_argument("targets", nargs="+", help="module:name, file.py[:name], or declarative .yaml files")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (0 picks a free one)")
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_VAR) or None,
        help=f"bearer token every request must carry; required beyond loopback (default: ${TOKEN_VAR})",
    )
    parser.add_argument(
        "--mcp-expose",
        choices=["agent", "tools", "both"],
        default="agent",
        help="what MCP clients see: the agent as one tool, its own tools, or both",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``agentnb serve``; return the exit status. ``argv`` may start with the word ``serve``."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["serve"]:
        args_list = args_list[1:]
    args = _parser().parse_args(args_list)
    token: str | None = args.token
    if token and Path(token).is_file():
        token = Path(token).read_text(encoding="utf-8").strip() or None
    try:
        check_bind_address(args.host, token=token, what="agents")
        items = load_targets(args.targets)
    except (TargetError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a target that fails to build (a bad YAML file, an import error inside a module)
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    from ._server import AgentServer

    try:
        server = AgentServer(items, host=args.host, port=args.port, token=token, mcp_expose=args.mcp_expose)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"agentnb serving on {server.url}/ (Ctrl+C to stop)", flush=True)
    print(f"  OpenAI Responses: {server.openai_base_url}", flush=True)
    for entity in server.entities:
        a2a, mcp = server.a2a_url_for(entity.id), server.mcp_url_for(entity.id)
        print(f"  {entity.kind} {entity.name}: A2A {a2a}  MCP {mcp}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C is how the server is meant to stop
        asyncio.run(server.serve_forever())
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    raise SystemExit(main())
