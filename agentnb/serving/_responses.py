"""An OpenAI-compatible API over agents and workflows: ``/v1/responses`` and ``/v1/conversations``.

Any client that speaks the Responses API (the official ``openai`` SDK with ``base_url=".../v1"``) can drive the
loaded entities: ``model`` names an agent or workflow (by id or name), ``input`` is text or Responses input
items, ``stream=True`` gives Server-Sent Events. The agent's tools run here, on the server; what they did comes
back as ``function_call`` and ``function_call_output`` items. A tool that needs approval ends the response with
an ``mcp_approval_request`` item, and the client answers with an ``mcp_approval_response`` input item on the
same conversation (or ``previous_response_id``), exactly as for a remote MCP tool on OpenAI's own API.
Workflow events stream as ``response.workflow_event`` events; workflow outputs become the answer's text. A
workflow that asks for input (``request_info``) ends the response with a ``workflow_request`` item (its request
as plain fields, the answer's type and JSON schema); the client continues the run with a ``workflow_response``
input item (``request_id``, ``response``), checked against that type.

State lives in this process: a conversation is an agent session (or a workflow's pending requests) plus its
items. With a token set, every request needs ``Authorization: Bearer <token>``; without one, only loopback
clients are served. This module holds the API's rules and state, free of any web server: the DevUI's Tornado
handlers and the ASGI routes of :mod:`agentnb.serving` both drive it.
"""

from __future__ import annotations

import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agentnb._approval_driver import ApprovalDriver
from agentnb._json import is_json_array, is_json_object
from agentnb._plain import jsonable, readable, type_label
from agentnb._serving import is_loopback
from agentnb._types import AgentResponse, AgentResponseUpdate, Content, Message, UsageDetails, add_usage_details
from agentnb.workflows import WorkflowErrorDetails, WorkflowEvent

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["ApiError", "Conversation", "EntityCatalog", "ResponsesAPI", "ServedEntity", "event_summary", "input_items"]


class ApiError(Exception):
    """A request the API refuses, with the HTTP status and OpenAI error fields it answers with."""

    def __init__(self, status: int, message: str, *, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param

    def body(self) -> dict[str, Any]:
        kind = {401: "authentication_error", 404: "not_found_error"}.get(self.status, "invalid_request_error")
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


class ServedEntity(Protocol):
    """What the API needs of an agent or workflow it serves (the DevUI's ``Entity`` is one)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...  # "agent" or "workflow"
    @property
    def obj(self) -> Any: ...


class EntityCatalog(Protocol):
    """Where the served entities are looked up on every request (the DevUI's ``Catalog`` is one)."""

    @property
    def entities(self) -> Sequence[ServedEntity]: ...


def event_summary(event: WorkflowEvent[Any]) -> dict[str, Any]:
    """A workflow event as readable JSON (type, executor, data; a request's id and wanted answer type)."""
    summary: dict[str, Any] = {"type": event.type, "executor_id": event.executor_id}
    data = event.data
    if event.type == "status" and event.state is not None:
        data = event.state.value
    summary["data"] = readable(data)
    if event.type == "request_info":
        summary["request_id"] = str(event.request_id)
        summary["response_type"] = type_label(event.response_type) if event.response_type is not None else "str"
    return summary


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


@dataclass
class Conversation:
    """One conversation: the entity it talks to, the agent session (agents) and the items so far."""

    id: str
    entity_id: str
    session: Any = None
    driver: ApprovalDriver | None = None  # the agent's turns; holds the approval requests it waits on
    items: list[dict[str, Any]] = field(default_factory=list)
    requests: dict[str, Any] = field(default_factory=dict)  # workflow request id -> the answer's type
    created_at: int = field(default_factory=lambda: int(time.time()))
    metadata: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "conversation", "created_at": self.created_at, "metadata": self.metadata}


class ResponsesAPI:
    """The API's state and rules, independent of the web server that carries them.

    Args:
        catalog: The entities ``model`` may name.
        token: The bearer token every request must carry; ``None`` serves loopback clients only.
        store: A run store to save agent sessions into (so the DevUI lists them); optional.
    """

    def __init__(self, catalog: EntityCatalog, *, token: str | None = None, store: Store | None = None) -> None:
        self.catalog = catalog
        self.token = token
        self.store = store
        self.conversations: dict[str, Conversation] = {}
        self._by_response: dict[str, str] = {}  # response id -> conversation id

    # ------------------------------------------------------------------------------------------------ access
    def check_access(self, authorization: str | None, remote_ip: str | None) -> None:
        """Refuse a request without the right bearer token (or, with no token set, from another machine)."""
        if self.token is None:
            if not is_loopback(remote_ip):
                raise ApiError(403, "This DevUI serves its API to this machine only; start it with a token.")
            return
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token.encode()):
            raise ApiError(401, "Missing or wrong API token: send 'Authorization: Bearer <token>'.", code="bad_token")

    def entity(self, model: Any) -> ServedEntity:
        """The entity ``model`` names, by id or by name."""
        if not isinstance(model, str) or not model:
            raise ApiError(400, "'model' must name an agent or workflow of this DevUI.", param="model")
        for entity in self.catalog.entities:
            if model in {entity.id, entity.name}:
                return entity
        known = ", ".join(e.id for e in self.catalog.entities) or "none"
        raise ApiError(404, f"No agent or workflow {model!r} here; known: {known}.", param="model")

    def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": e.id, "object": "model", "created": 0, "owned_by": f"agentnb {e.kind}", "name": e.name}
                for e in self.catalog.entities
            ],
        }

    # ---------------------------------------------------------------------------------------- conversations
    def create_conversation(self, body: dict[str, Any], entity_id: str = "") -> Conversation:
        conversation = Conversation(id=_new_id("conv"), entity_id=entity_id, metadata=dict(body.get("metadata") or {}))
        self.conversations[conversation.id] = conversation
        return conversation

    def conversation(self, conversation_id: str) -> Conversation:
        try:
            return self.conversations[conversation_id]
        except KeyError:
            raise ApiError(404, f"No conversation {conversation_id!r}.", param="conversation") from None

    def _conversation_for(self, body: dict[str, Any], entity: ServedEntity) -> Conversation:
        ref = body.get("conversation")
        if is_json_object(ref):
            ref = ref.get("id")
        previous = body.get("previous_response_id")
        if ref:
            conversation = self.conversation(str(ref))
        elif previous:
            if previous not in self._by_response:
                raise ApiError(404, f"No response {previous!r}.", param="previous_response_id")
            conversation = self.conversations[self._by_response[previous]]
        else:
            conversation = self.create_conversation({}, entity.id)
        if not conversation.entity_id:
            conversation.entity_id = entity.id
        elif conversation.entity_id != entity.id:
            raise ApiError(
                400,
                f"Conversation {conversation.id!r} talks to {conversation.entity_id!r}, not {entity.id!r}.",
                param="model",
            )
        return conversation

    # ---------------------------------------------------------------------------------------------- responses
    def start(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Check a ``/v1/responses`` request and return its stream of events (the last is the finished response).

        Everything the request itself gets wrong raises :class:`ApiError` here, before any event exists; a
        failure while the entity runs becomes a ``response.failed`` event.
        """
        entity = self.entity(body.get("model"))
        conversation = self._conversation_for(body, entity)
        if entity.kind == "agent":
            value: Any = self._agent_input(body.get("input"), conversation)
        else:
            value = _workflow_answers(body.get("input"), conversation)
            if value is None:
                value = _workflow_input(entity, body.get("input"))
        turn = _Turn(entity, conversation, previous=body.get("previous_response_id"))
        self._by_response[turn.id] = conversation.id
        conversation.items.extend(input_items(body.get("input")))
        return self._events(turn, value)

    async def _events(self, turn: _Turn, value: Any) -> AsyncIterator[dict[str, Any]]:
        yield turn.event("response.created", response=turn.snapshot("in_progress"))
        yield turn.event("response.in_progress", response=turn.snapshot("in_progress"))
        run = turn.run_agent(value) if turn.entity.kind == "agent" else turn.run_workflow(value)
        try:
            async for event in run:
                yield event
        except Exception as exc:  # the run failed: the stream says so instead of breaking off
            turn.error = {"code": "server_error", "message": f"{type(exc).__name__}: {exc}"}
            yield turn.event("response.failed", response=turn.snapshot("failed"))
            return
        finally:
            turn.conversation.items.extend(turn.output)
            self._save(turn.conversation)
        yield turn.event("response.completed", response=turn.snapshot("completed"))

    def _agent_input(self, raw: Any, conversation: Conversation) -> Message:
        """The user message for an agent: approval answers (collected by the driver), then text and images."""
        contents: list[Content] = []
        driver = conversation.driver
        pending = {str(r.id) for r in driver.pending} if driver is not None else set[str]()
        answered = False
        for item in _as_items(raw):
            kind = item.get("type", "message")
            if kind == "mcp_approval_response":
                request_id = str(item.get("approval_request_id") or "")
                if driver is None or request_id not in pending or driver.is_answered(request_id):
                    raise ApiError(400, f"No pending approval request {request_id!r} here.", param="input")
                reason = item.get("reason")
                driver.answer(request_id, bool(item.get("approve")), reason=str(reason) if reason else None)
                answered = True
            elif kind == "message":
                content = item.get("content")
                if isinstance(content, str):
                    contents.append(Content.from_text(content))
                    continue
                parts: list[Any] = content or []
                for part in parts:
                    if part.get("type") in {"input_text", "output_text", "text"}:
                        contents.append(Content.from_text(str(part.get("text", ""))))
                    elif part.get("type") == "input_image" and part.get("image_url"):
                        contents.append(Content.from_uri(str(part["image_url"])))
            else:
                raise ApiError(400, f"Input items of type {kind!r} are not supported here.", param="input")
        if pending and not answered:
            raise ApiError(
                400, f"The conversation waits on approval request(s) {', '.join(pending)}; answer.", param="input"
            )
        if answered and driver is not None:
            # Requests left unanswered are asked again by the agent's next response.
            return driver.take_answers(contents, partial=True)
        if not contents:
            raise ApiError(400, "'input' is empty.", param="input")
        return Message("user", contents)

    def _save(self, conversation: Conversation) -> None:
        session = conversation.session
        if self.store is None or session is None:
            return
        try:
            self.store.save_session(session.session_id, json.dumps(session.to_dict()))
        except Exception:  # persisting is best effort; the conversation keeps working in memory
            return


def _as_items(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    if is_json_array(raw) and all(isinstance(i, dict) for i in raw):
        return raw
    raise ApiError(400, "'input' must be text or a list of input items.", param="input")


def input_items(raw: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for item in _as_items(raw):
        item = dict(item)
        item.setdefault("type", "message")
        item.setdefault("id", _new_id("msg" if item["type"] == "message" else "item"))
        if item["type"] == "message" and isinstance(item.get("content"), str):
            item["content"] = [{"type": "input_text", "text": item["content"]}]
        items.append(item)
    return items


def _input_text(raw: Any) -> str:
    texts: list[str] = []
    for item in _as_items(raw):
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            parts: list[Any] = content or []
            texts.extend(str(p.get("text", "")) for p in parts if is_json_object(p))
    return "\n".join(texts)


def _workflow_input(entity: ServedEntity, raw: Any) -> Any:
    """The workflow's start message: the text itself when the start executor takes ``str``, else JSON for its type."""
    text = _input_text(raw)
    types_: list[Any] = list(entity.obj.input_types or [str])
    if str in types_ or any(t is Any for t in types_):
        return text
    from pydantic import TypeAdapter, ValidationError

    errors: list[str] = []
    for tp in types_:
        try:
            return TypeAdapter(tp).validate_json(text)
        except ValidationError as e:
            errors.append(f"{getattr(tp, '__name__', tp)}: {e.error_count()} error(s)")
    raise ApiError(400, f"The input is not JSON for {entity.name}'s input type ({'; '.join(errors)}).", param="input")


class _Turn:
    """One response being built: its output items and the stream events that build them."""

    def __init__(self, entity: ServedEntity, conversation: Conversation, *, previous: str | None) -> None:
        self.id = _new_id("resp")
        self.entity = entity
        self.conversation = conversation
        self.previous = previous
        self.created_at = int(time.time())
        self.output: list[dict[str, Any]] = []
        self.usage: UsageDetails | None = None
        self.error: dict[str, Any] | None = None
        self._seq = 0
        self._message: dict[str, Any] | None = None  # the assistant message item being streamed

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._seq += 1
        return {"type": kind, "sequence_number": self._seq, **fields}

    def snapshot(self, status: str) -> dict[str, Any]:
        usage = self.usage or {}
        inp, out = int(usage.get("input_token_count") or 0), int(usage.get("output_token_count") or 0)
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.entity.id,
            "output": list(self.output) if status != "in_progress" else [],
            "conversation": {"id": self.conversation.id},
            "previous_response_id": self.previous,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": self.error,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "usage": {
                "input_tokens": inp,
                "output_tokens": out,
                "total_tokens": int(usage.get("total_token_count") or 0) or inp + out,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    # -- items --------------------------------------------------------------------------------------------
    def _add_item(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        self.output.append(item)
        index = len(self.output) - 1
        return [
            self.event("response.output_item.added", output_index=index, item=item),
            self.event("response.output_item.done", output_index=index, item=item),
        ]

    def _text(self, delta: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        if self._message is None:
            self._message = {"id": _new_id("msg"), "type": "message", "role": "assistant", "status": "in_progress"}
            self._message["content"] = []
            self.output.append(self._message)
            index = len(self.output) - 1
            part: dict[str, Any] = {"type": "output_text", "text": "", "annotations": []}
            events.append(self.event("response.output_item.added", output_index=index, item=dict(self._message)))
            events.append(
                self.event(
                    "response.content_part.added", item_id=self._message["id"], output_index=index, content_index=0,
                    part=part,
                )
            )  # fmt: skip
            self._message["content"] = [part]
        part = self._message["content"][0]
        part["text"] += delta
        events.append(
            self.event(
                "response.output_text.delta", item_id=self._message["id"],
                output_index=self.output.index(self._message), content_index=0, delta=delta, logprobs=[],
            )
        )  # fmt: skip
        return events

    def _end_text(self) -> list[dict[str, Any]]:
        message, self._message = self._message, None
        if message is None:
            return []
        index = self.output.index(message)
        message["status"] = "completed"
        part = message["content"][0]
        return [
            self.event(
                "response.output_text.done", item_id=message["id"], output_index=index, content_index=0,
                text=part["text"], logprobs=[],
            ),
            self.event(
                "response.content_part.done", item_id=message["id"], output_index=index, content_index=0, part=part
            ),
            self.event("response.output_item.done", output_index=index, item=message),
        ]  # fmt: skip

    # -- agents -------------------------------------------------------------------------------------------
    async def run_agent(self, message: Message) -> AsyncIterator[dict[str, Any]]:
        agent = self.entity.obj
        if self.conversation.session is None:
            self.conversation.session = agent.create_session()
        if self.conversation.driver is None:
            # The client answers the requests; standing rules kept in the session answer theirs in the same
            # response (their turns stream on, the usage adds up).
            self.conversation.driver = ApprovalDriver(agent, session=self.conversation.session)
        driver = self.conversation.driver
        final: AgentResponse[Any] | None = None
        usage: UsageDetails | None = None
        async for update in driver.run(message, stream=True):
            if isinstance(update, AgentResponse):
                final = update
                usage = add_usage_details(usage, update.usage_details)
            elif isinstance(update, AgentResponseUpdate):
                for content in update.contents:
                    for event in self._content_events(content):
                        yield event
        assert final is not None  # the driver reports every turn's response
        for event in self._end_text():
            yield event
        self.usage = usage
        for request in driver.pending:
            if request.type != "function_approval_request" or request.function_call is None:
                continue
            call = request.function_call
            item = {
                "id": str(request.id),
                "type": "mcp_approval_request",
                "name": str(call.name or ""),
                "arguments": _arguments_text(call.arguments),
                "server_label": self.entity.name,
            }
            for event in self._add_item(item):
                yield event

    def _content_events(self, content: Content) -> list[dict[str, Any]]:
        if content.type == "text" and content.text:
            return self._text(content.text)
        if content.type == "function_call" and content.name:
            item = {
                "id": _new_id("fc"),
                "type": "function_call",
                "call_id": str(content.call_id or ""),
                "name": content.name,
                "arguments": _arguments_text(content.arguments),
                "status": "completed",
            }
            return self._end_text() + self._add_item(item)
        if content.type == "function_result":
            item = {
                "id": _new_id("fco"),
                "type": "function_call_output",
                "call_id": str(content.call_id or ""),
                "output": content.exception or _result_text(content.result),
                "status": "incomplete" if content.exception else "completed",
            }
            return self._end_text() + self._add_item(item)
        return []

    # -- workflows ----------------------------------------------------------------------------------------
    async def run_workflow(self, value: Any) -> AsyncIterator[dict[str, Any]]:
        workflow = self.entity.obj
        answers = value if isinstance(value, _Answers) else None
        stream = workflow.run(responses=dict(answers), stream=True) if answers else workflow.run(value, stream=True)
        streaming_from: str | None = None  # the executor whose streamed updates the open message holds
        async for event in stream:
            yield self.event("response.workflow_event", event=event_summary(event))
            if event.type == "output" and isinstance(event.data, AgentResponseUpdate):
                # A streamed agent: its updates are deltas of one message, until another executor outputs.
                if streaming_from != event.executor_id:
                    for item in self._end_text():
                        yield item
                    streaming_from = event.executor_id
                if event.data.text:
                    for item in self._text(event.data.text):
                        yield item
            elif event.type == "output":
                streaming_from = None
                data = event.data
                text = data if isinstance(data, str) else _result_text(data)
                for item in self._end_text() + self._text(text) + self._end_text():
                    yield item
            elif event.type == "request_info":
                streaming_from = None
                for item in self._end_text():
                    yield item

                request_id = str(event.request_id)
                response_type = event.response_type if event.response_type is not None else str
                self.conversation.requests[request_id] = response_type
                item = {
                    "id": request_id,
                    "type": "workflow_request",
                    "executor_id": event.executor_id,
                    "request": readable(event.data),
                    "response_type": type_label(response_type),
                    "response_schema": _schema(response_type),
                }
                for added in self._add_item(item):
                    yield added
            elif event.type == "failed":
                details = event.data
                raise RuntimeError(details.message if isinstance(details, WorkflowErrorDetails) else str(details))
        for item in self._end_text():
            yield item


class _Answers(dict[str, Any]):
    """Answers to a workflow's pending requests (request id -> typed value), to continue its run."""


def _workflow_answers(raw: Any, conversation: Conversation) -> _Answers | None:
    """The ``workflow_response`` input items, checked against the requests the run waits on (``None``: none)."""
    items = [i for i in _as_items(raw) if i.get("type") == "workflow_response"]
    if not items:
        if conversation.requests:
            waiting = ", ".join(conversation.requests)
            raise ApiError(400, f"The workflow waits on request(s) {waiting}; answer with workflow_response items.")
        return None
    from pydantic import TypeAdapter, ValidationError

    answers = _Answers()
    for item in items:
        request_id = str(item.get("request_id") or "")
        if request_id not in conversation.requests:
            raise ApiError(400, f"No pending workflow request {request_id!r} here.", param="input")
        try:
            answers[request_id] = TypeAdapter(conversation.requests[request_id]).validate_python(item.get("response"))
        except ValidationError as e:
            raise ApiError(400, f"The answer to {request_id!r} does not fit: {e.errors()[0]['msg']}.") from e
    for request_id in answers:
        del conversation.requests[request_id]
    return answers


def _schema(tp: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(tp).json_schema()
    except Exception:  # a type pydantic cannot describe still gets asked for; the client sends JSON
        return {}


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments or {}, ensure_ascii=False)


def _result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(jsonable(result), ensure_ascii=False, default=repr)
