"""``A2AAgent``: a remote Agent2Agent (A2A) agent used like any other agentnb agent.

Built on the official ``a2a-sdk`` (1.x) client. A run sends the last message to the remote agent and maps
what comes back (a message, a task, status and artifact updates) to agentnb updates. Long-running remote
tasks can be left running (``background=True``) and polled (:meth:`A2AAgent.poll_task`) or re-joined
(``run(continuation_token=...)``, which also reconnects a dropped stream). The session keeps the A2A
context and task ids, so a conversation continues and an ``input-required`` task is answered in place.

What a remote agent says is untrusted: every message it produces is marked
``additional_properties["untrusted"] = True`` with the agent's name as author, and views escape it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.client.interceptors import ClientCallInterceptor
from a2a.types import (
    AgentCard,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.types import Message as A2AMessage
from a2a.utils.errors import UnsupportedOperationError

from .._agents import BaseAgent
from .._types import AgentResponse, AgentResponseUpdate, Content, Message, ResponseStream, normalize_messages
from ..exceptions import A2AError
from ._parts import contents_to_parts, parts_to_contents

if TYPE_CHECKING:
    from a2a.client.auth.interceptor import AuthInterceptor

    from .._sessions import AgentSession

__all__ = ["A2AAgent", "A2AContinuationToken"]


class A2AContinuationToken(TypedDict):
    """Where a remote task can be found again: pass it to ``run(continuation_token=...)`` or ``poll_task``."""

    task_id: str
    context_id: str


TERMINAL_TASK_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
_FAILED = frozenset({TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED})
_STATE_KEY = "a2a"


def _state_name(state: int) -> str:
    return TaskState.Name(cast(Any, state)).removeprefix("TASK_STATE_").lower().replace("_", "-")


class A2AAgent(BaseAgent):
    """A remote A2A agent as an agentnb agent.

    Args:
        name: Defaults to the agent card's name.
        description: Defaults to the agent card's description.
        agent_card: The remote agent's card; fetched from ``url`` on first use when omitted.
        url: The remote agent's base URL (its card is at ``/.well-known/agent-card.json``).
        client: A ready ``a2a.client.Client`` to use instead of building one.
        http_client: The ``httpx.AsyncClient`` to send requests with (headers, auth); not closed here.
        auth_interceptor: An a2a-sdk interceptor adding credentials to every call.
        timeout: Seconds (or an ``httpx.Timeout``) for each request; long tasks use ``background=True``.
        supported_protocol_bindings: Transports in order of preference: ``"JSONRPC"``, ``"HTTP+JSON"``.
        headers: Extra headers for every request (e.g. ``{"Authorization": "Bearer ..."}``).

    Example:
        ```python
        from agentnb.a2a import A2AAgent

        async with A2AAgent(url="http://127.0.0.1:8000/") as remote:
            print((await remote.run("Hello")).text)
        ```
    """

    AGENT_PROVIDER_NAME = "A2A"

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,
        description: str | None = None,
        agent_card: AgentCard | None = None,
        url: str | None = None,
        client: Client | None = None,
        http_client: httpx.AsyncClient | None = None,
        auth_interceptor: AuthInterceptor | None = None,
        timeout: float | httpx.Timeout | None = None,
        supported_protocol_bindings: Sequence[Literal["JSONRPC", "HTTP+JSON", "GRPC"] | str] | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        if client is None and agent_card is None and not url:
            raise ValueError("A2AAgent needs url=..., agent_card=... or client=...")
        if isinstance(supported_protocol_bindings, str):
            raise TypeError("supported_protocol_bindings takes a list, e.g. ['JSONRPC']")
        if agent_card is not None:
            name = name or agent_card.name or None
            description = description or agent_card.description or None
        super().__init__(id=id, name=name, description=description, **kwargs)
        self.url = url
        self.agent_card = agent_card
        self.supported_protocol_bindings = list(supported_protocol_bindings or ["JSONRPC", "HTTP+JSON"])
        self._interceptors: list[ClientCallInterceptor] | None = [auth_interceptor] if auth_interceptor else None
        self._given_client = client
        self._owns_http = http_client is None
        if timeout is None:
            timeout = httpx.Timeout(connect=10.0, read=60.0, write=10.0, pool=5.0)
        self._http = http_client or httpx.AsyncClient(
            timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout), headers=headers
        )
        if http_client is not None and headers:
            http_client.headers.update(headers)
        self._streaming: Client | None = client
        self._polling: Client | None = client

    # -- lifecycle ------------------------------------------------------------------------------------------
    async def __aenter__(self) -> A2AAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client this agent created (a client passed in stays open)."""
        if self._owns_http:
            await self._http.aclose()

    async def get_agent_card(self) -> AgentCard:
        """The remote agent's card, fetched once from ``url`` when it was not given."""
        if self.agent_card is None:
            if not self.url:
                raise ValueError("No agent card and no url to fetch one from.")
            try:
                self.agent_card = await A2ACardResolver(self._http, self.url).get_agent_card()
            except (A2AClientError, httpx.HTTPError) as e:
                raise A2AError(f"Cannot fetch the agent card from {self.url!r}: {e}") from e
            self.name = self.name or self.agent_card.name or None
            self.description = self.description or self.agent_card.description or None
        return self.agent_card

    async def _client(self, *, streaming: bool) -> Client:
        if self._given_client is not None:
            return self._given_client
        existing = self._streaming if streaming else self._polling
        if existing is not None:
            return existing
        card = await self.get_agent_card()
        config = ClientConfig(
            httpx_client=self._http,
            streaming=streaming,
            supported_protocol_bindings=list(self.supported_protocol_bindings),
        )
        try:
            created = ClientFactory(config).create(card, interceptors=self._interceptors)
        except Exception as e:  # the SDK raises ValueError when no transport matches
            offered = [i.protocol_binding for i in card.supported_interfaces]
            raise A2AError(
                f"The remote agent offers {offered}; none of {self.supported_protocol_bindings} is among them: {e}"
            ) from e
        if streaming:
            self._streaming = created
        else:
            self._polling = created
        return created

    # -- running --------------------------------------------------------------------------------------------
    def run(  # type: ignore[override]
        self,
        messages: Any = None,
        *,
        stream: bool = False,
        session: AgentSession | None = None,
        continuation_token: A2AContinuationToken | None = None,
        background: bool = False,
        **kwargs: Any,
    ) -> Awaitable[AgentResponse] | ResponseStream[AgentResponseUpdate, AgentResponse]:
        """Send the last message to the remote agent (or re-join ``continuation_token``'s task).

        Args:
            messages: What to say; only the last message is sent (the remote agent keeps its own history).
            stream: Stream updates as the remote agent produces them.
            session: Keeps the A2A context and task ids between turns.
            continuation_token: Re-join a running task instead of sending a message (reconnects a stream).
            background: Return as soon as the remote task is accepted; the response then carries a
                ``continuation_token`` to poll or re-join while the task runs.
        """
        normalized = normalize_messages(messages)
        if continuation_token is None and not normalized:
            raise ValueError("At least one message is required when starting a new task (no continuation_token).")
        updates = self._updates(
            normalized[-1] if normalized else None,
            stream=stream,
            session=session,
            continuation_token=continuation_token,
            background=background,
        )
        response = ResponseStream(updates, _untrusted_response)
        if stream:
            return response
        return response.get_final_response()

    async def _updates(
        self,
        message: Message | None,
        *,
        stream: bool,
        session: AgentSession | None,
        continuation_token: A2AContinuationToken | None,
        background: bool,
    ) -> AsyncIterator[AgentResponseUpdate]:
        client = await self._client(streaming=stream or continuation_token is not None)
        items: AsyncIterable[StreamResponse]
        try:
            if continuation_token is not None:
                items = client.subscribe(SubscribeToTaskRequest(id=continuation_token["task_id"]))
            else:
                assert message is not None
                request = SendMessageRequest(message=self._to_a2a(message, session))
                if background and not stream:
                    request.configuration.return_immediately = True
                items = client.send_message(request)
            mapper = _StreamMapper(self, session=session, background=background, stream=stream)
            answered = False
            try:
                async for item in items:
                    for update in mapper.map(item):
                        answered = answered or bool(update.contents)
                        yield update
            except UnsupportedOperationError:
                if continuation_token is None:
                    raise
                # The task ended while the stream was down: its final state is all there is to re-join.
                final = StreamResponse()
                final.task.CopyFrom(await client.get_task(GetTaskRequest(id=continuation_token["task_id"])))
                for update in mapper.map(final):
                    answered = answered or bool(update.contents)
                    yield update
            if not answered:
                for update in mapper.finish():
                    yield update
        except (A2AClientError, httpx.HTTPError) as e:
            raise A2AError(f"The remote A2A agent {self.display_name!r} failed: {e}") from e

    def _to_a2a(self, message: Message, session: AgentSession | None) -> A2AMessage:
        parts = contents_to_parts(message.contents)
        if not parts:
            raise ValueError("The message has nothing A2A can carry (text, files, links or approval answers).")
        state = _session_state(session)
        a2a_message = A2AMessage(
            role=Role.ROLE_USER,
            parts=parts,
            message_id=message.message_id or uuid.uuid4().hex,
            context_id=state.get("context_id") or "",
        )
        task_id = state.get("task_id")
        if task_id:
            if state.get("task_state") == TaskState.TASK_STATE_INPUT_REQUIRED:
                a2a_message.task_id = task_id  # the remote task waits for this answer
            else:
                a2a_message.reference_task_ids.append(task_id)
        return a2a_message

    async def poll_task(self, continuation_token: A2AContinuationToken) -> AgentResponse:
        """One look at a running remote task; the response's ``continuation_token`` is ``None`` once it ended."""
        client = await self._client(streaming=False)
        try:
            task = await client.get_task(GetTaskRequest(id=continuation_token["task_id"]))
        except (A2AClientError, httpx.HTTPError) as e:
            raise A2AError(f"Cannot poll task {continuation_token['task_id']!r}: {e}") from e
        mapper = _StreamMapper(self, session=None, background=True, stream=False)
        item = StreamResponse()
        item.task.CopyFrom(task)
        return _untrusted_response([*mapper.map(item), *mapper.finish()])


def _untrusted_response(updates: list[AgentResponseUpdate]) -> AgentResponse:
    """Assemble the response, marking each message as a remote agent's (untrusted) output."""
    response = AgentResponse.from_updates(updates)
    for message in response.messages:
        message.additional_properties["untrusted"] = True
    return response


def _session_state(session: AgentSession | None) -> dict[str, Any]:
    if session is None:
        return {}
    raw = session.state.get(_STATE_KEY)
    return cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}


class _StreamMapper:
    """Maps one call's A2A events to agentnb updates and keeps the session's A2A ids current."""

    def __init__(self, agent: A2AAgent, *, session: AgentSession | None, background: bool, stream: bool) -> None:
        self.agent = agent
        self.session = session
        self.background = background
        self.stream = stream
        self.streamed_artifacts: set[str] = set()
        self.pending: list[AgentResponseUpdate] = []  # status messages kept until the task ends (not streaming)
        self.task_id: str | None = None

    def _update(
        self, contents: list[Content], *, response_id: str | None, message_id: str | None, raw: Any, token: Any = None
    ) -> AgentResponseUpdate:
        return AgentResponseUpdate(
            contents=contents,
            role="assistant",
            author_name=self.agent.name,
            response_id=response_id,
            message_id=message_id,
            agent_id=self.agent.id,
            additional_properties={"untrusted": True, "a2a_agent": self.agent.display_name},
            raw_representation=raw,
            continuation_token=token,
        )

    def _remember(self, context_id: str, task_id: str | None, state: int | None) -> None:
        if self.session is None:
            return
        record: dict[str, Any] = {"context_id": context_id or _session_state(self.session).get("context_id")}
        if task_id:
            record["task_id"] = task_id
            record["task_state"] = int(state) if state is not None else None
        self.session.state[_STATE_KEY] = record
        self.session.service_session_id = record["context_id"]

    def _token(self, task_id: str, context_id: str, state: int) -> A2AContinuationToken | None:
        if not self.background or state in TERMINAL_TASK_STATES:
            return None
        return A2AContinuationToken(task_id=task_id, context_id=context_id)

    def _check_failed(self, task_id: str, state: int, contents: list[Content]) -> None:
        if state in _FAILED:
            detail = " ".join(c.text for c in contents if c.type == "text" and c.text) or "no detail given"
            raise A2AError(f"The remote task {task_id!r} ended {_state_name(state)}: {detail}")

    def map(self, item: StreamResponse) -> list[AgentResponseUpdate]:
        kind = item.WhichOneof("payload")
        if kind == "message":
            msg = item.message
            self._remember(msg.context_id, msg.task_id or None, None)
            return [
                self._update(
                    parts_to_contents(msg.parts), response_id=msg.message_id, message_id=msg.message_id, raw=msg
                )
            ]
        if kind == "task":
            return self._task(item.task)
        if kind == "status_update":
            event = item.status_update
            state = event.status.state
            self.task_id = event.task_id
            self._remember(event.context_id, event.task_id, state)
            contents = parts_to_contents(event.status.message.parts) if event.status.HasField("message") else []
            self._check_failed(event.task_id, state, contents)
            token = self._token(event.task_id, event.context_id, state)
            if not contents:
                return (
                    [self._update([], response_id=event.task_id, message_id=None, raw=event, token=token)]
                    if token
                    else []
                )
            update = self._update(
                contents, response_id=event.task_id, message_id=event.status.message.message_id, raw=event, token=token
            )
            if self.stream or state in TERMINAL_TASK_STATES or state == TaskState.TASK_STATE_INPUT_REQUIRED:
                return [update]
            self.pending.append(update)
            return []
        if kind == "artifact_update":
            event = item.artifact_update
            self.task_id = event.task_id
            self.streamed_artifacts.add(event.artifact.artifact_id)
            contents = parts_to_contents(event.artifact.parts)
            if not contents:
                return []
            return [self._update(contents, response_id=event.task_id, message_id=event.artifact.artifact_id, raw=event)]
        return []

    def _task(self, task: Task) -> list[AgentResponseUpdate]:
        state = task.status.state
        self.task_id = task.id
        self._remember(task.context_id, task.id, state)
        status_contents = parts_to_contents(task.status.message.parts) if task.status.HasField("message") else []
        self._check_failed(task.id, state, status_contents)
        token = self._token(task.id, task.context_id, state)
        updates: list[AgentResponseUpdate] = []
        if state in TERMINAL_TASK_STATES:
            for artifact in task.artifacts:
                if artifact.artifact_id in self.streamed_artifacts:
                    continue
                contents = parts_to_contents(artifact.parts)
                if contents:
                    updates.append(
                        self._update(contents, response_id=task.id, message_id=artifact.artifact_id, raw=task)
                    )
            if not updates and not task.artifacts and status_contents:
                updates.append(self._update(status_contents, response_id=task.id, message_id=None, raw=task))
        elif state == TaskState.TASK_STATE_INPUT_REQUIRED and status_contents:
            updates.append(self._update(status_contents, response_id=task.id, message_id=None, raw=task, token=token))
        else:
            # A running task's snapshot (what a re-joined stream starts with) holds the chunks sent so far.
            for artifact in task.artifacts:
                contents = parts_to_contents(artifact.parts)
                if contents and artifact.artifact_id not in self.streamed_artifacts:
                    self.streamed_artifacts.add(artifact.artifact_id)
                    updates.append(
                        self._update(
                            contents, response_id=task.id, message_id=artifact.artifact_id, raw=task, token=token
                        )
                    )
            if not updates and token is not None:
                updates.append(self._update([], response_id=task.id, message_id=None, raw=task, token=token))
        return updates

    def finish(self) -> list[AgentResponseUpdate]:
        """Status messages kept back while not streaming, when nothing else answered."""
        pending, self.pending = self.pending, []
        return pending
