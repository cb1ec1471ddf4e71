"""Serve one agent over A2A and MCP from one server, behind one access rule.

:func:`agent_app` mounts the A2A endpoints (agent card, JSON-RPC, REST) under ``/a2a/`` and the MCP
streamable-HTTP endpoint at ``/mcp``, and wraps both in the rule every agentnb server has: loopback
clients only, unless a token is given, and then every request needs ``Authorization: Bearer <token>``.
:class:`AgentServer` runs it in the current event loop (a notebook cell can serve its agent and call it).
The OpenAI Responses API (with ``/v1/conversations``) is served by the DevUI (``agentnb.devui.serve``).

Needs ``agentnb[a2a]`` and ``agentnb[mcp]``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, cast

from .._serving import LoopbackOrTokenGuard, LoopbackServer, check_bind_address, free_port

__all__ = ["AgentServer", "agent_app"]


def agent_app(
    agent: Any, *, base_url: str, token: str | None = None, stream: bool = True, mcp_expose: str = "agent"
) -> LoopbackOrTokenGuard:
    """An ASGI app serving ``agent`` over A2A (``/a2a/``) and MCP (``/mcp``), ``base_url`` being its own URL."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from ..a2a import a2a_app
    from ..mcp import agent_mcp_server

    a2a = a2a_app(agent, url=base_url.rstrip("/") + "/a2a/", stream=stream)
    mcp_server = agent_mcp_server(agent, expose=cast(Any, mcp_expose))
    mcp = mcp_server.streamable_http_app(streamable_http_path="/mcp")

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncGenerator[None]:
        # Mounted apps get no lifespan of their own: the MCP session manager is run here.
        async with mcp_server.session_manager.run():
            yield

    app = Starlette(routes=[Mount("/a2a", app=a2a.app), Mount("/", app=mcp)], lifespan=lifespan)
    guarded = LoopbackOrTokenGuard(app, token=token)
    guarded.executor = a2a.executor  # type: ignore[attr-defined]
    return guarded


class AgentServer:
    """Serve an agent over A2A and MCP from this event loop (``async with``), on 127.0.0.1 by default.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.serving import AgentServer

        async with AgentServer(Agent(ScriptedChatClient(["Hi"]), name="Greeter")) as server:
            print(server.a2a_url, server.mcp_url)
        ```
    """

    def __init__(
        self,
        agent: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        stream: bool = True,
        mcp_expose: str = "agent",
    ) -> None:
        check_bind_address(host, token=token, what="an agent")
        self.port = port or free_port(host)
        netloc = f"[{host}]" if ":" in host else host
        self.url = f"http://{netloc}:{self.port}"
        self.a2a_url = self.url + "/a2a/"
        self.mcp_url = self.url + "/mcp"
        self.app = agent_app(agent, base_url=self.url, token=token, stream=stream, mcp_expose=mcp_expose)
        self._runner = LoopbackServer(self.app, host=host, port=self.port, lifespan=True)

    async def __aenter__(self) -> AgentServer:
        await self._runner.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.stop()
