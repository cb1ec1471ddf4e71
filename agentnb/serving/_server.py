"""Run the serving app: in this event loop (``async with``), in a background thread, or in the foreground."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from agentnb._serving import LoopbackServer, check_bind_address, free_port

from ._app import McpExpose, served_entities, serving_app

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["AgentServer"]


class AgentServer:
    """Serve agents and workflows over the Responses API, A2A and MCP from one port, 127.0.0.1 by default.

    Args:
        entities: An agent, a workflow, a list of them, or a catalog of entities (the DevUI's).
        host: Where to listen; anything but loopback needs ``token``.
        port: The port, or 0 for a free one.
        token: The bearer token every request must carry; without one only this machine is served.
        stream: Stream A2A answers as they come.
        mcp_expose: What MCP clients see: the agent as one tool (``"agent"``), its tools, or both.
        store: A run store to save the Responses API's agent sessions into.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.serving import AgentServer

        async with AgentServer(Agent(ScriptedChatClient(["Hi"]), name="Greeter")) as server:
            print(server.openai_base_url, server.a2a_url, server.mcp_url)
        ```
    """

    def __init__(
        self,
        entities: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        stream: bool = True,
        mcp_expose: McpExpose = "agent",
        store: Store | None = None,
    ) -> None:
        check_bind_address(host, token=token, what="agents")
        self.host = host
        self.port = port or free_port(host)
        # A wildcard bind is reached through loopback from here; the URLs say so.
        shown = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host
        netloc = f"[{shown}]" if ":" in shown else shown
        self.url = f"http://{netloc}:{self.port}"
        self.openai_base_url = self.url + "/v1"
        self.entities = served_entities(getattr(entities, "entities", None) or entities)
        self.app = serving_app(
            entities, base_url=self.url, token=token, host=host, stream=stream, mcp_expose=mcp_expose, store=store
        )
        self._runner = LoopbackServer(self.app, host=host, port=self.port, lifespan=True)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _entity(self, name: str | None) -> str:
        if name is None:
            return self.entities[0].id
        for entity in self.entities:
            if name in {entity.id, entity.name}:
                return entity.id
        raise KeyError(f"No entity {name!r} here; known: {', '.join(e.id for e in self.entities)}.")

    def a2a_url_for(self, name: str | None = None) -> str:
        """The A2A base URL of the entity ``name`` (id or name; the first one when ``None``)."""
        return f"{self.url}/a2a/{self._entity(name)}/"

    def mcp_url_for(self, name: str | None = None) -> str:
        """The MCP streamable-HTTP URL of the entity ``name`` (id or name; the first one when ``None``)."""
        return f"{self.url}/mcp/{self._entity(name)}"

    @property
    def a2a_url(self) -> str:
        """The first entity's A2A base URL."""
        return self.a2a_url_for()

    @property
    def mcp_url(self) -> str:
        """The first entity's MCP URL."""
        return self.mcp_url_for()

    async def __aenter__(self) -> AgentServer:
        await self._runner.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.stop()

    async def serve_forever(self) -> None:
        """Serve until cancelled (or, in the main thread, until Ctrl+C)."""
        await self._runner.start()
        try:
            await self._runner.wait()
        finally:
            await self._runner.stop()

    def start_background(self, timeout: float = 15.0) -> str:
        """Serve from a daemon thread with its own event loop; return the URL once it accepts connections."""
        if self._thread is not None:
            return self.url
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._runner.start())
            except BaseException as e:  # reported to the caller below
                failure.append(e)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_until_complete(self._runner.wait())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"agentnb-serve-{self.port}", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise TimeoutError(f"The server on {self.url} did not start within {timeout:.0f} s.")
        if failure:
            self._thread = None
            raise failure[0]
        return self.url

    def stop_background(self, timeout: float = 10.0) -> None:
        """Stop a server started with :meth:`start_background` and wait for its thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(self._runner.request_stop)
        thread.join(timeout)
        self._thread = None
        self._loop = None
