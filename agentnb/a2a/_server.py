"""Serve an agentnb agent over A2A: its agent card, JSON-RPC and HTTP+JSON (REST) endpoints, one process.

:func:`a2a_app` builds the Starlette app (the a2a-sdk's own routes and request handler around an
:class:`~agentnb.a2a.A2AExecutor`), wrapped in the access rule every agentnb server has: loopback clients
only, unless a token is given, and then every request needs it. :class:`A2AServer` runs that app with
uvicorn in the current event loop, so a notebook cell can serve an agent and call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from .._serving import LoopbackOrTokenGuard, LoopbackServer, check_bind_address, free_port
from ._executor import A2AExecutor

__all__ = ["A2AServer", "a2a_app", "agent_card"]

REST_PREFIX = "/rest"
#: The A2A protocol version the a2a-sdk 1.x speaks.
A2A_PROTOCOL_VERSION = "1.0"


def agent_card(
    agent: Any,
    *,
    url: str,
    streaming: bool = True,
    skills: Sequence[AgentSkill] | None = None,
    version: str = "1.0.0",
    protocol_bindings: Sequence[str] = ("JSONRPC", "HTTP+JSON"),
) -> AgentCard:
    """An agent card for ``agent`` served at ``url`` (JSON-RPC at ``url``, REST under ``url + "rest"``)."""
    base = url.rstrip("/")
    name = getattr(agent, "name", None) or getattr(agent, "id", None) or "agent"
    description = getattr(agent, "description", None) or f"The agentnb agent {name}."
    interfaces = {
        "JSONRPC": AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version=A2A_PROTOCOL_VERSION),
        "HTTP+JSON": AgentInterface(
            url=base + REST_PREFIX, protocol_binding="HTTP+JSON", protocol_version=A2A_PROTOCOL_VERSION
        ),
    }
    unknown = [b for b in protocol_bindings if b not in interfaces]
    if unknown:
        raise ValueError(f"agentnb serves JSONRPC and HTTP+JSON, not {unknown}")
    return AgentCard(
        name=name,
        description=description,
        version=version,
        default_input_modes=["text"],
        default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=streaming),
        supported_interfaces=[interfaces[b] for b in protocol_bindings],
        skills=list(skills)
        if skills is not None
        else [AgentSkill(id=str(name), name=str(name), description=description, tags=["agentnb"])],
    )


def a2a_app(
    agent: Any,
    *,
    url: str,
    stream: bool = True,
    card: AgentCard | None = None,
    token: str | None = None,
    task_store: TaskStore | None = None,
    run_kwargs: dict[str, Any] | None = None,
) -> LoopbackOrTokenGuard:
    """An ASGI app serving ``agent`` (or a workflow) over A2A.

    Args:
        agent: An agentnb agent, a workflow, or anything ``A2AExecutor`` takes.
        url: The public base URL the card advertises.
        stream: Stream answers as the agent produces them.
        card: A card to serve instead of the generated one.
        token: Require ``Authorization: Bearer <token>`` on every request (and allow non-loopback clients).
        task_store: Where tasks live (default: in memory).
        run_kwargs: More keyword arguments for each ``agent.run``.
    """
    executor = agent if isinstance(agent, A2AExecutor) else A2AExecutor(agent, stream=stream, run_kwargs=run_kwargs)
    card = card or agent_card(executor.agent, url=url, streaming=stream)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=task_store or InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/"),
            *create_rest_routes(handler, path_prefix=REST_PREFIX),
        ]
    )
    guarded = LoopbackOrTokenGuard(app, token=token)
    guarded.executor = executor  # type: ignore[attr-defined]
    return guarded


class A2AServer:
    """Serve an agent over A2A from this event loop (``async with``), on 127.0.0.1 by default.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.a2a import A2AAgent, A2AServer
        from agentnb.local import ScriptedChatClient

        async with A2AServer(Agent(ScriptedChatClient(["Hi"]), name="Greeter")) as server:
            async with A2AAgent(url=server.url) as remote:
                print((await remote.run("Hello")).text)
        ```
    """

    def __init__(
        self,
        agent: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        stream: bool = True,
        token: str | None = None,
        card: AgentCard | None = None,
        run_kwargs: dict[str, Any] | None = None,
    ) -> None:
        check_bind_address(host, token=token, what="an A2A agent")
        self.host = host
        self.port = port or free_port(host)
        netloc = f"[{host}]" if ":" in host else host
        self.url = f"http://{netloc}:{self.port}/"
        self.app = a2a_app(agent, url=self.url, stream=stream, card=card, token=token, run_kwargs=run_kwargs)
        self._runner = LoopbackServer(self.app, host=host, port=self.port)
        self.executor: A2AExecutor = self.app.executor  # type: ignore[attr-defined]

    async def start(self) -> A2AServer:
        """Start listening; returns once the port accepts connections."""
        await self._runner.start()
        return self

    async def stop(self) -> None:
        """Stop listening and wait for the server to finish."""
        await self._runner.stop()

    async def __aenter__(self) -> A2AServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
