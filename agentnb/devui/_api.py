"""The DevUI's Tornado handlers for its OpenAI-compatible API (``/v1/responses``, ``/v1/conversations``).

The API itself (its rules, conversations and the events of a response) is :class:`agentnb.serving.ResponsesAPI`,
which :mod:`agentnb.serving` also serves over ASGI; these handlers only carry it over the DevUI's Tornado server.
"""

from __future__ import annotations

import json
from typing import Any

import tornado.web

from agentnb._json import is_json_object
from agentnb.serving._responses import ApiError, ResponsesAPI, input_items

__all__ = ["ApiError", "ResponsesAPI", "api_routes"]


class _Handler(tornado.web.RequestHandler):
    api: ResponsesAPI  # pyright: ignore[reportUninitializedInstanceVariable] - set by initialize()

    def initialize(self, api: ResponsesAPI) -> None:
        self.api = api

    def check_xsrf_cookie(self) -> None:  # bearer tokens, not cookies, authorize API calls
        return

    def prepare(self) -> None:
        try:
            self.api.check_access(self.request.headers.get("Authorization"), self.request.remote_ip)
        except ApiError as e:
            self._fail(e)

    def _fail(self, error: ApiError) -> None:
        self.set_status(error.status)
        self.set_header("Content-Type", "application/json")
        self._finish(json.dumps(error.body()))

    def _json(self, value: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self._finish(json.dumps(value, ensure_ascii=False, default=str))

    # tornado types a dict chunk without type arguments; the handlers here write text only.
    def _write(self, text: str) -> None:
        self.write(text)  # pyright: ignore[reportUnknownMemberType]

    def _finish(self, text: str | None = None) -> None:
        self.finish(text)  # pyright: ignore[reportUnknownMemberType]

    def _body(self) -> dict[str, Any]:
        from agentnb._serialization import parse_json

        try:
            body = parse_json(self.request.body or b"{}")
        except Exception as e:
            raise ApiError(400, f"The request body is not JSON: {e}") from e
        if not is_json_object(body):
            raise ApiError(400, "The request body must be a JSON object.")
        return dict(body)


class _ModelsHandler(_Handler):
    def get(self) -> None:
        self._json(self.api.models())


class _ResponsesHandler(_Handler):
    async def post(self) -> None:
        try:
            body = self._body()
            events = self.api.start(body)
        except ApiError as e:
            self._fail(e)
            return
        if not body.get("stream"):
            last: dict[str, Any] = {}
            async for event in events:
                last = event
            self._json(last["response"])
            return
        self.set_header("Content-Type", "text/event-stream")
        self.set_header("Cache-Control", "no-cache")
        async for event in events:
            self._write(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False, default=str)}\n\n")
            await self.flush()
        self._finish()


class _ConversationsHandler(_Handler):
    def post(self) -> None:
        try:
            body = self._body()
            conversation = self.api.create_conversation(body)
            conversation.items.extend(input_items(body["items"]) if body.get("items") else [])
        except ApiError as e:
            self._fail(e)
            return
        self._json(conversation.to_json())


class _ConversationHandler(_Handler):
    def get(self, conversation_id: str) -> None:
        try:
            self._json(self.api.conversation(conversation_id).to_json())
        except ApiError as e:
            self._fail(e)

    def delete(self, conversation_id: str) -> None:
        if self.api.conversations.pop(conversation_id, None) is None:
            self._fail(ApiError(404, f"No conversation {conversation_id!r}.", param="conversation"))
            return
        self._json({"id": conversation_id, "object": "conversation.deleted", "deleted": True})


class _ItemsHandler(_Handler):
    def get(self, conversation_id: str) -> None:
        try:
            items = self.api.conversation(conversation_id).items
        except ApiError as e:
            self._fail(e)
            return
        order = self.get_argument("order", "desc")
        data = list(reversed(items)) if order == "desc" else list(items)
        self._json(
            {
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": False,
            }
        )


def api_routes(api: ResponsesAPI, prefix: str = "/v1") -> list[tuple[str, type, dict[str, Any]]]:
    """Tornado URL patterns serving ``api`` under ``prefix`` (for ``pn.serve(extra_patterns=...)``)."""
    args = {"api": api}
    return [
        (rf"{prefix}/models", _ModelsHandler, args),
        (rf"{prefix}/responses", _ResponsesHandler, args),
        (rf"{prefix}/conversations", _ConversationsHandler, args),
        (rf"{prefix}/conversations/([A-Za-z0-9_-]+)", _ConversationHandler, args),
        (rf"{prefix}/conversations/([A-Za-z0-9_-]+)/items", _ItemsHandler, args),
    ]
