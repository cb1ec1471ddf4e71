"""Agent2Agent (A2A): call remote agents as agentnb agents, and serve agentnb agents to other A2A clients.

Built on the official ``a2a-sdk`` (1.x, ``pip install "agentnb[a2a]"``):

- :class:`A2AAgent` talks to a remote A2A agent (streaming, background tasks with polling and re-joining,
  protocol selection, sessions). Its output is marked untrusted.
- :class:`A2AExecutor` runs an agentnb agent or workflow inside the SDK's request handler; approvals and
  requests for input become ``input-required`` tasks.
- :func:`a2a_app` / :class:`A2AServer` serve one with its agent card, JSON-RPC and REST, loopback only
  unless a token is required.
"""

from __future__ import annotations

import importlib.util as _importlib_util

if _importlib_util.find_spec("a2a") is None:  # pragma: no cover - depends on the environment
    raise ImportError('agentnb.a2a needs the A2A SDK: pip install "agentnb[a2a]"')

from .. import __version__ as __version__
from ..exceptions import A2AError
from ._agent import A2AAgent, A2AContinuationToken
from ._executor import A2AExecutor
from ._parts import contents_to_parts, parts_to_contents
from ._server import A2AServer, a2a_app, agent_card

__all__ = [
    "A2AAgent",
    "A2AContinuationToken",
    "A2AError",
    "A2AExecutor",
    "A2AServer",
    "a2a_app",
    "agent_card",
    "contents_to_parts",
    "parts_to_contents",
]
