"""Record real model traffic to a cassette file and replay it offline, so notebooks re-run without keys.

A cassette is JSON Lines: a header line, then one line per model call with the request (messages and
options, normalized) and the response (or, for streamed calls, every update). Recording happens at the
provider seam (``_inner_get_response``), so the function-invocation loop, tools, approval and middleware
run for real again on replay; only the model is played back.

Requests are matched by content: roles, texts, tool calls and results, and options, with ids, timestamps
and other per-run noise left out. Secrets never reach the file: API keys, ``Authorization`` headers and
values of secret-looking environment variables are redacted before anything is written (and the same
redaction is applied to live requests, so matching is unaffected).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from .._clients import BaseChatClient
from .._files import private_dir
from .._json import is_json_array, is_json_object
from .._serialization import encode, parse_json
from .._types import ChatResponse, ChatResponseUpdate, Content, Message, call_arguments
from ..exceptions import CassetteError, CassetteMissError, SerializationError

__all__ = ["RecordingChatClient", "ReplayChatClient", "normalize_request"]

FORMAT = "agentnb-cassette"
VERSION = 1
REDACTED = "[REDACTED]"

# Keys whose values are credentials wherever they appear (options, headers, extra bodies).
_SECRET_KEYS = re.compile(
    r"(api[-_]?key|authorization|secret|password|passwd|bearer|access[-_]?token|refresh[-_]?token|session[-_]?token"
    r"|client[-_]?secret|^token$|^x-api-key$|^cookie$)",
    re.IGNORECASE,
)
# Credential-shaped strings (OpenAI, Anthropic, GitHub, Slack, AWS, bearer headers) anywhere in the text.
_SECRET_VALUES = re.compile(
    r"(sk-[A-Za-z0-9_\-]{16,}|sk-ant-[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|Bearer\s+[A-Za-z0-9._\-]{8,})"
)
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
# Content fields that identify a run rather than describe the conversation.
_VOLATILE_CONTENT_FIELDS = ("call_id", "id", "additional_properties")


def _env_secrets() -> list[str]:
    return sorted(
        {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8 and not v.isdigit()},
        key=len,
        reverse=True,
    )


def _redact(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, Mapping):
        mapping = cast("Mapping[Any, Any]", value)
        return {
            k: (
                REDACTED
                if isinstance(k, str) and isinstance(v, str) and v and _SECRET_KEYS.search(k)
                else _redact(v, secrets)
            )
            for k, v in mapping.items()
        }
    if is_json_array(value):
        return [_redact(v, secrets) for v in value]
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return _SECRET_VALUES.sub(REDACTED, value)
    return value


# --- request normalization ----------------------------------------------------------------------------


def _content_key(content: Content) -> dict[str, Any]:
    data = content.to_dict()
    for field in _VOLATILE_CONTENT_FIELDS:
        data.pop(field, None)
    if content.type == "function_call":
        # Malformed arguments stay the text they were.
        with contextlib.suppress(ValueError):
            data["arguments"] = call_arguments(content)
    if content.type == "function_approval_response" or content.type == "function_approval_request":
        data.pop("function_call", None)
    return data


def _tool_key(tool: Any) -> Any:
    if is_json_object(tool):
        return encode(dict(tool))
    parameters = tool.parameters() if callable(getattr(tool, "parameters", None)) else None
    return {
        "name": getattr(tool, "name", repr(tool)),
        "description": getattr(tool, "description", None),
        "parameters": parameters,
    }


def _format_key(response_format: Any) -> Any:
    if isinstance(response_format, type):
        schema = getattr(response_format, "model_json_schema", None)
        return {"name": response_format.__name__, "schema": schema() if callable(schema) else None}
    return encode(response_format)


def normalize_request(messages: Sequence[Message], options: Mapping[str, Any]) -> dict[str, Any]:
    """The content of a model request, as a cassette stores and matches it (ids and timestamps left out)."""
    normalized_messages: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {"role": message.role, "contents": [_content_key(c) for c in message.contents]}
        if message.author_name:
            entry["author_name"] = message.author_name
        normalized_messages.append(entry)
    normalized_options: dict[str, Any] = {}
    for key in sorted(options):
        value = options[key]
        if value is None or key in ("conversation_id", "previous_response_id"):
            continue
        if key == "tools":
            normalized_options[key] = sorted((_tool_key(t) for t in value), key=lambda t: json.dumps(t, sort_keys=True))
        elif key == "response_format":
            normalized_options[key] = _format_key(value)
        else:
            try:
                normalized_options[key] = encode(value)
            except Exception:
                normalized_options[key] = repr(value)
    return _redact({"messages": normalized_messages, "options": normalized_options}, _env_secrets())


def _canonical(request: Mapping[str, Any]) -> str:
    return json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# --- updates as JSON ----------------------------------------------------------------------------------

_UPDATE_FIELDS = (
    "role",
    "author_name",
    "response_id",
    "message_id",
    "conversation_id",
    "model_id",
    "created_at",
    "finish_reason",
)


def _update_to_dict(update: ChatResponseUpdate) -> dict[str, Any]:
    data: dict[str, Any] = {"contents": [c.to_dict() for c in update.contents]}
    for field in _UPDATE_FIELDS:
        value = getattr(update, field, None)
        if value is not None:
            data[field] = value
    if update.additional_properties:
        data["additional_properties"] = encode(update.additional_properties)
    return data


def _update_from_dict(data: Mapping[str, Any]) -> ChatResponseUpdate:
    from .._serialization import decode

    kwargs = {field: data.get(field) for field in _UPDATE_FIELDS}
    kwargs.setdefault("role", None)
    return ChatResponseUpdate(
        contents=[Content.from_dict(c) for c in data.get("contents", [])],
        additional_properties=decode(data["additional_properties"]) if "additional_properties" in data else None,
        **kwargs,
    )


# --- the cassette file --------------------------------------------------------------------------------


class _Interaction:
    """One recorded model call."""

    def __init__(
        self, request: dict[str, Any], *, response: dict[str, Any] | None, updates: list[dict[str, Any]] | None
    ):
        self.request = request
        self.response = response
        self.updates = updates
        self.key = _canonical(request)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"request": self.request}
        if self.updates is not None:
            data["stream"] = True
            data["updates"] = self.updates
        else:
            data["stream"] = False
            data["response"] = self.response
        return data

    def as_response(self) -> ChatResponse:
        if self.updates is not None:
            return ChatResponse.from_updates([_update_from_dict(u) for u in self.updates])
        return ChatResponse.from_dict(self.response or {})

    def as_updates(self) -> list[ChatResponseUpdate]:
        if self.updates is not None:
            return [_update_from_dict(u) for u in self.updates]
        return ChatResponse.from_dict(self.response or {}).to_updates()


def _read(path: Path) -> tuple[dict[str, Any], list[_Interaction]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as e:
        raise CassetteError(
            f"No cassette at {str(path)!r}; record one first with RecordingChatClient(real_client, {str(path)!r})."
        ) from e
    header: dict[str, Any] = {}
    interactions: list[_Interaction] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = parse_json(line)
            if number == 1 and data.get("format") == FORMAT:
                if data.get("version", VERSION) > VERSION:
                    raise CassetteError(f"{path} was written by a newer agentnb (cassette version {data['version']}).")
                header = data
                continue
            interactions.append(
                _Interaction(data["request"], response=data.get("response"), updates=data.get("updates"))
            )
        except CassetteError:
            raise
        except (SerializationError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
            raise CassetteError(f"{path}, line {number}: not a cassette interaction ({e}).") from e
    return header, interactions


def _write_atomically(path: Path, lines: list[str]) -> None:
    private_dir(path.parent)  # the file itself is 0600 (mkstemp)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- the clients --------------------------------------------------------------------------------------


class RecordingChatClient(BaseChatClient):
    """Wrap any chat client and write each model call (streamed ones as their updates) to a cassette.

    Args:
        inner: The client that really answers (for example an ``OpenAIChatClient``).
        path: The cassette file (JSON Lines; readable and diff-friendly).
        mode: ``"overwrite"`` starts the cassette afresh on the first recorded call; ``"append"`` adds to
            what it holds. Several agents can share one recorder (and so one cassette).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import RecordingChatClient, ReplayChatClient, ScriptedChatClient

        recorder = RecordingChatClient(ScriptedChatClient(["Hello!"]), "hello.jsonl")
        await Agent(recorder).run("Hi")
        replayed = await Agent(ReplayChatClient("hello.jsonl")).run("Hi")
        replayed.text  # 'Hello!'
        ```
    """

    def __init__(
        self,
        inner: BaseChatClient,
        path: str | os.PathLike[str],
        *,
        mode: Literal["overwrite", "append"] = "overwrite",
        **kwargs: Any,
    ) -> None:
        if mode not in ("overwrite", "append"):
            raise ValueError(f"mode must be 'overwrite' or 'append', got {mode!r}")
        super().__init__(model_id=inner.model_id, **kwargs)
        self.inner = inner
        self.path = Path(path)
        self.OTEL_PROVIDER_NAME = inner.OTEL_PROVIDER_NAME
        self.interactions: list[_Interaction] = []
        if mode == "append" and self.path.exists():
            self.interactions = _read(self.path)[1]

    def __repr__(self) -> str:
        return f"RecordingChatClient({self.inner!r}, {str(self.path)!r})"

    def service_url(self) -> str | None:
        return self.inner.service_url()

    def _save(self, interaction: _Interaction) -> None:
        self.interactions.append(interaction)
        header = {"format": FORMAT, "version": VERSION, "model_id": self.inner.model_id, "recorded_at": time.time()}
        secrets = _env_secrets()
        lines = [json.dumps(header)]
        lines += [json.dumps(_redact(i.to_json(), secrets), ensure_ascii=False) for i in self.interactions]
        _write_atomically(self.path, lines)

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        response = await self.inner._inner_get_response(messages=messages, options=options, **kwargs)
        request = normalize_request(messages, options)
        self._save(_Interaction(request, response=response.to_dict(), updates=None))
        return response

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        updates: list[dict[str, Any]] = []
        # Only a stream that ran to the end is recorded; a failed or cancelled one leaves no trace.
        async for update in self.inner._inner_get_streaming_response(messages=messages, options=options, **kwargs):
            updates.append(_update_to_dict(update))
            yield update
        self._save(_Interaction(normalize_request(messages, options), response=None, updates=updates))


class ReplayChatClient(BaseChatClient):
    """Answer from a cassette recorded by :class:`RecordingChatClient`; no network, no key.

    Requests are matched by content. The same request asked again gets the next recorded answer for it,
    and the last one once they are used up. A request the cassette does not hold raises
    :class:`~agentnb.exceptions.CassetteMissError` showing how it differs from the nearest recorded one.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import RecordingChatClient, ReplayChatClient, ScriptedChatClient

        await Agent(RecordingChatClient(ScriptedChatClient(["4"]), "math.jsonl")).run("2+2?")
        agent = Agent(ReplayChatClient("math.jsonl"))
        (await agent.run("2+2?")).text  # '4'
        ```
    """

    OTEL_PROVIDER_NAME = "agentnb.replay"

    def __init__(self, path: str | os.PathLike[str], *, model_id: str | None = None, **kwargs: Any) -> None:
        self.path = Path(path)
        header, self.interactions = _read(self.path)
        super().__init__(model_id=model_id or header.get("model_id") or "replay", **kwargs)
        self._served: dict[str, int] = {}

    def __repr__(self) -> str:
        return (
            f"ReplayChatClient({str(self.path)!r}, model_id={self.model_id!r}, interactions={len(self.interactions)})"
        )

    def _find(self, messages: list[Message], options: Mapping[str, Any]) -> _Interaction:
        request = normalize_request(messages, options)
        key = _canonical(request)
        matches = [i for i in self.interactions if i.key == key]
        if matches:
            served = self._served.get(key, 0)
            self._served[key] = served + 1
            return matches[min(served, len(matches) - 1)]
        raise self._miss(request)

    def _miss(self, request: dict[str, Any]) -> CassetteMissError:
        if not self.interactions:
            return CassetteMissError(f"The cassette {str(self.path)!r} holds no interactions; record it again.")
        wanted = json.dumps(request, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        best, best_ratio = self.interactions[0], -1.0
        for interaction in self.interactions:
            recorded = json.dumps(interaction.request, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
            ratio = difflib.SequenceMatcher(None, recorded, wanted, autojunk=False).ratio()
            if ratio > best_ratio:
                best, best_ratio = interaction, ratio
        recorded = json.dumps(best.request, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        diff = list(
            difflib.unified_diff(recorded, wanted, "nearest recorded request", "this request", lineterm="", n=2)
        )
        shown = "\n".join(diff[:60]) + ("\n..." if len(diff) > 60 else "")
        return CassetteMissError(
            f"The cassette {str(self.path)!r} has no recording of this request ({len(self.interactions)} recorded). "
            f"Re-record it with RecordingChatClient, or change the request back. Difference from the nearest "
            f"recorded request:\n{shown}",
            nearest=best.request,
        )

    async def _inner_get_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> ChatResponse:
        return self._find(messages, options).as_response()

    async def _inner_get_streaming_response(
        self, *, messages: list[Message], options: dict[str, Any], **kwargs: Any
    ) -> AsyncIterator[ChatResponseUpdate]:
        for update in self._find(messages, options).as_updates():
            yield update
