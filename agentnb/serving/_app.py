"""One ASGI app serving agents and workflows over the OpenAI Responses API, A2A and MCP, behind one access rule.

Layout (``<id>`` is an entity's id, its name made URL-safe):

- ``/v1/responses``, ``/v1/conversations``, ``/v1/models``: the Responses API; ``model`` names the entity;
- ``/a2a/<id>/``: A2A (the agent card under ``.well-known/``, JSON-RPC at the root, REST under ``rest``);
- ``/mcp/<id>``: MCP over streamable HTTP (one tool that runs the agent, or its own tools);
- ``/``: a JSON index of the above.

Every request passes :class:`~agentnb._serving.LoopbackOrTokenGuard` first: loopback clients only without a
token, and with one every request (from anywhere) needs ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from agentnb._json import is_json_object
from agentnb._serving import LoopbackOrTokenGuard

from ._responses import ApiError, EntityCatalog, ResponsesAPI, input_items

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from agentnb.store import Store

__all__ = ["Served", "responses_routes", "served_entities", "serving_app"]

McpExpose = Literal["agent", "tools", "both"]


@dataclass
class Served:
    """One agent or workflow as the server publishes it."""

    id: str
    name: str
    kind: str  # "agent" or "workflow"
    obj: Any


@dataclass
class _Entities:
    entities: list[Served]


def _entity_id(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "agent"


def served_entities(items: Any) -> list[Served]:
    """Agents and workflows (or entities with ``id``/``name``/``kind``/``obj``, like the DevUI's) to serve.

    Raises:
        ValueError: nothing to serve, something that is neither an agent nor a workflow, or two with one id.
    """
    from agentnb.workflows import Workflow

    if isinstance(items, Workflow) or hasattr(items, "run") or not isinstance(items, Iterable):
        items = [items]
    served: list[Served] = []
    for item in cast("Iterable[Any]", items):
        if all(hasattr(item, a) for a in ("id", "name", "kind", "obj")) and item.kind in {"agent", "workflow"}:
            served.append(Served(_entity_id(str(item.id)), str(item.name), str(item.kind), item.obj))
            continue
        if isinstance(item, Workflow):
            kind = "workflow"
        elif callable(getattr(item, "run", None)) and callable(getattr(item, "create_session", None)):
            kind = "agent"
        else:
            raise ValueError(f"Cannot serve {type(item).__name__}: pass agents and workflows.")
        name = str(getattr(item, "name", None) or getattr(item, "id", None) or kind)
        served.append(Served(_entity_id(name), name, kind, item))
    if not served:
        raise ValueError("Nothing to serve: pass at least one agent or workflow.")
    seen: set[str] = set()
    for entity in served:
        if entity.id in seen:
            raise ValueError(f"Two entities share the id {entity.id!r}; give them different names.")
        seen.add(entity.id)
    return served


def _json_response(value: Any, status: int = 200) -> Response:
    from starlette.responses import Response

    text = json.dumps(value, ensure_ascii=False, default=str)
    return Response(text, status_code=status, media_type="application/json")


def _failure(error: ApiError) -> Response:
    return _json_response(error.body(), error.status)


async def _body(request: Request) -> dict[str, Any]:
    from agentnb._serialization import parse_json

    try:
        body = parse_json(await request.body() or b"{}")
    except Exception as e:
        raise ApiError(400, f"The request body is not JSON: {e}") from e
    if not is_json_object(body):
        raise ApiError(400, "The request body must be a JSON object.")
    return dict(body)


def responses_routes(api: ResponsesAPI, prefix: str = "/v1") -> list[BaseRoute]:
    """Starlette routes serving ``api`` under ``prefix`` (the access rule is the app's, not theirs)."""
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def models(_request: Request) -> Response:
        return _json_response(api.models())

    async def responses(request: Request) -> Response:
        try:
            body = await _body(request)
            events = api.start(body)
        except ApiError as e:
            return _failure(e)
        if not body.get("stream"):
            last: dict[str, Any] = {}
            async for event in events:
                last = event
            return _json_response(last["response"])

        async def sse(stream: AsyncIterator[dict[str, Any]]) -> AsyncIterator[str]:
            async for event in stream:
                yield f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False, default=str)}\n\n"

        return StreamingResponse(sse(events), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    async def create_conversation(request: Request) -> Response:
        try:
            body = await _body(request)
            items = input_items(body["items"]) if body.get("items") else []
        except ApiError as e:
            return _failure(e)
        conversation = api.create_conversation(body)
        conversation.items.extend(items)
        return _json_response(conversation.to_json())

    async def conversation(request: Request) -> Response:
        conversation_id = str(request.path_params["conversation_id"])
        if request.method == "DELETE":
            if api.conversations.pop(conversation_id, None) is None:
                return _failure(ApiError(404, f"No conversation {conversation_id!r}.", param="conversation"))
            return _json_response({"id": conversation_id, "object": "conversation.deleted", "deleted": True})
        try:
            return _json_response(api.conversation(conversation_id).to_json())
        except ApiError as e:
            return _failure(e)

    async def items(request: Request) -> Response:
        try:
            found = api.conversation(str(request.path_params["conversation_id"])).items
        except ApiError as e:
            return _failure(e)
        data = list(reversed(found)) if request.query_params.get("order", "desc") == "desc" else list(found)
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return _json_response({"object": "list", "data": data, "first_id": first, "last_id": last, "has_more": False})

    return [
        Route(f"{prefix}/models", models, methods=["GET"]),
        Route(f"{prefix}/responses", responses, methods=["POST"]),
        Route(f"{prefix}/conversations", create_conversation, methods=["POST"]),
        Route(f"{prefix}/conversations/{{conversation_id}}", conversation, methods=["GET", "DELETE"]),
        Route(f"{prefix}/conversations/{{conversation_id}}/items", items, methods=["GET"]),
    ]


def serving_app(
    entities: Any,
    *,
    base_url: str,
    token: str | None = None,
    host: str = "127.0.0.1",
    stream: bool = True,
    mcp_expose: McpExpose = "agent",
    store: Store | None = None,
) -> LoopbackOrTokenGuard:
    """An ASGI app serving ``entities`` over the Responses API, A2A and MCP (see the module docs for paths).

    Args:
        entities: An agent, a workflow, a list of them, or a catalog whose ``entities`` the Responses API reads
            on each request (A2A and MCP endpoints are made once, for the entities there at the start).
        base_url: The server's own URL (the A2A cards advertise it).
        token: The bearer token every request needs; ``None`` serves loopback clients only.
        host: The address the server binds (MCP's DNS-rebinding protection follows it).
        stream: Stream A2A answers as they come.
        mcp_expose: What MCP clients see: the agent as one tool, its own tools, or both.
        store: A run store to save the Responses API's agent sessions into.
    """
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    from ..a2a import a2a_app
    from ..mcp import agent_mcp_server

    catalog: EntityCatalog
    if hasattr(entities, "entities") and not hasattr(entities, "run"):
        catalog = cast(EntityCatalog, entities)
        served = served_entities(list(catalog.entities))
    else:
        served = served_entities(entities)
        catalog = _Entities(served)
    base = base_url.rstrip("/")
    routes: list[BaseRoute] = responses_routes(ResponsesAPI(catalog, token=token, store=store))
    mcp_servers: list[Any] = []
    index: list[dict[str, Any]] = []
    for entity in served:
        a2a = a2a_app(entity.obj, url=f"{base}/a2a/{entity.id}/", stream=stream)
        routes.append(Mount(f"/a2a/{entity.id}", app=a2a.app))
        server = agent_mcp_server(entity.obj, expose=mcp_expose)
        mcp_app = server.streamable_http_app(streamable_http_path=f"/mcp/{entity.id}", host=host)
        routes.extend(mcp_app.routes)
        mcp_servers.append(server)
        index.append(
            {
                "id": entity.id,
                "name": entity.name,
                "kind": entity.kind,
                "a2a": f"{base}/a2a/{entity.id}/",
                "mcp": f"{base}/mcp/{entity.id}",
            }
        )

    async def home(_request: Request) -> Response:
        return _json_response({"openai_base_url": f"{base}/v1", "entities": index})

    routes.append(Route("/", home, methods=["GET"]))

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncGenerator[None]:
        # Each MCP endpoint's session manager runs for as long as the server does.
        async with AsyncExitStack() as stack:
            for server in mcp_servers:
                await stack.enter_async_context(server.session_manager.run())
            yield

    return LoopbackOrTokenGuard(Starlette(routes=routes, lifespan=lifespan), token=token)
