"""Serve agents and workflows over the OpenAI Responses API, A2A and MCP from one server, behind one access rule.

:func:`serving_app` is the ASGI app: ``/v1/responses`` and ``/v1/conversations`` (``model`` names the entity),
``/a2a/<id>/`` and ``/mcp/<id>`` for each entity, all behind the rule every agentnb server has: loopback
clients only, unless a token is given, and then every request needs ``Authorization: Bearer <token>``.
:class:`AgentServer` runs it in the current event loop (a notebook cell can serve its agent and call it), in a
background thread (the DevUI), or in the foreground (``agentnb serve`` / ``python -m agentnb.serving``).
:class:`ResponsesAPI` holds the Responses API's rules and conversations, whatever web server carries it.

Needs ``agentnb[a2a]`` and ``agentnb[mcp]``.
"""

from __future__ import annotations

from ._app import Served, responses_routes, served_entities, serving_app
from ._responses import ApiError, Conversation, ResponsesAPI
from ._server import AgentServer

__all__ = [
    "AgentServer",
    "ApiError",
    "Conversation",
    "ResponsesAPI",
    "Served",
    "responses_routes",
    "served_entities",
    "serving_app",
]
