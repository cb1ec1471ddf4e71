"""The data that flows through agents: messages, contents, responses, streaming updates and options.

One ``Content`` class covers every kind of content (told apart by ``type``) so that messages stay plain
lists that serialize to JSON without a registry of subclasses. Responses are assembled from streaming
updates by :meth:`ChatResponse.from_updates`; the non-streaming path uses the same assembly, so the two
cannot drift apart.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, cast, overload

from typing_extensions import Self, TypedDict, TypeVar

from ._serialization import decode as _decode
from ._serialization import encode as _encode
from .exceptions import ChatClientError, StructuredOutputError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._annotations import Annotation

__all__ = [
    "INJECTED_INPUT_KEY",
    "AgentResponse",
    "AgentResponseUpdate",
    "AgentRunInputs",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseUpdate",
    "Content",
    "ContentType",
    "ContinuationToken",
    "FinalT",
    "FinishReason",
    "FinishReasonLiteral",
    "Message",
    "OuterFinalT",
    "OuterUpdateT",
    "ResponseStream",
    "Role",
    "RoleLiteral",
    "UpdateT",
    "UsageDetails",
    "add_usage_details",
    "map_chat_to_agent_update",
    "normalize_messages",
]

Role = Literal["system", "user", "assistant", "tool"]
ContentType = Literal[
    "text",
    "text_reasoning",
    "data",
    "uri",
    "function_call",
    "function_result",
    "function_approval_request",
    "function_approval_response",
    "usage",
    "error",
    "hosted_file",
    "hosted_vector_store",
    "code_interpreter_tool_call",
    "code_interpreter_tool_result",
    "image_generation_tool_call",
    "image_generation_tool_result",
    "mcp_server_tool_call",
    "mcp_server_tool_result",
    "search_tool_call",
    "search_tool_result",
    "shell_tool_call",
    "shell_tool_result",
    "shell_command_output",
    "computer_tool_call",
    "computer_tool_result",
    "oauth_consent_request",
]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
# The reference's names for the literals of known values.
RoleLiteral = Role
FinishReasonLiteral = FinishReason
_ROLES = ("system", "user", "assistant", "tool")
_CONTENT_TYPES = frozenset(ContentType.__args__)  # type: ignore[attr-defined]


class ContinuationToken(TypedDict):
    """Where long-running work can be found again: on a response while the work goes on, ``None`` once done.

    Providers subclass it with their own fields (``OpenAIContinuationToken`` holds the response id). It is
    plain JSON: store it, then pass it back to the same agent or client as ``options={"continuation_token":
    token}`` to poll a background response, or with ``stream=True`` to resume its stream.
    """


class UsageDetails(TypedDict, total=False):
    """Token counts for one model call or summed over a turn; providers may add keys (cached, reasoning)."""

    input_token_count: int
    output_token_count: int
    total_token_count: int


def add_usage_details(a: UsageDetails | None, b: UsageDetails | None) -> UsageDetails | None:
    """Sum two usage records key by key (``None`` is the empty record; a missing or ``None`` count is 0).

    Keys whose value is not an integer count on either side (a model name, a nested breakdown) are left out.
    """
    if not a and not b:
        return None
    first: Mapping[str, Any] = a or {}
    second: Mapping[str, Any] = b or {}
    total: dict[str, Any] = {}
    for key in (*first, *(k for k in second if k not in first)):
        x, y = first.get(key), second.get(key)
        if _is_count(x) and _is_count(y):
            total[key] = (x or 0) + (y or 0)
    return cast(UsageDetails, total)


def _is_count(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


# Default Any: a response built without a response format says nothing about what `value` parses to.
ResponseModelT = TypeVar("ResponseModelT", default=Any)


class ChatOptions(TypedDict, Generic[ResponseModelT], total=False):
    """Options for one chat request; providers read the keys they support and ignore the rest.

    Generic in the structured-output type so ``ChatOptions[Weather](response_format=Weather)`` reads as
    it does in the reference (the parameter only informs type checkers).
    """

    model_id: str
    temperature: float
    top_p: float
    max_tokens: int
    stop: str | list[str]
    seed: int
    tools: Any
    tool_choice: Literal["auto", "none", "required"] | dict[str, Any]
    response_format: Any
    instructions: str
    allow_multiple_tool_calls: bool
    user: str
    reasoning_effort: Literal["minimal", "low", "medium", "high"]
    conversation_id: str
    additional_properties: dict[str, Any]


# Fields each content type carries, in the order they are serialized.
_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "text_reasoning": ("text", "protected_data"),
    "data": ("data", "media_type"),
    "uri": ("uri", "media_type"),
    "function_call": ("call_id", "name", "arguments"),
    "function_result": ("call_id", "result", "exception"),
    "function_approval_request": ("id", "function_call"),
    "function_approval_response": ("id", "approved", "function_call", "reason"),
    "usage": ("usage_details",),
    "error": ("message", "error_code", "details"),
    # Provider-hosted tools: the provider ran them; their specific fields live in ``_HOSTED_FIELDS``.
    "hosted_file": ("media_type", "name"),
    "hosted_vector_store": (),
    "code_interpreter_tool_call": ("call_id",),
    "code_interpreter_tool_result": ("call_id",),
    "image_generation_tool_call": (),
    "image_generation_tool_result": (),
    "mcp_server_tool_call": ("call_id", "arguments"),
    "mcp_server_tool_result": ("call_id",),
    "search_tool_call": ("call_id", "arguments"),
    "search_tool_result": ("call_id", "result"),
    "shell_tool_call": ("call_id",),
    "shell_tool_result": ("call_id",),
    "shell_command_output": (),
    "computer_tool_call": ("call_id",),
    "computer_tool_result": ("call_id",),
    "oauth_consent_request": (),
}
# A content of a type agentnb does not know keeps whichever of the common fields it was given.
_ANY_FIELDS = tuple(dict.fromkeys(field for fields in _FIELDS.values() for field in fields))
# Fields only annotated or hosted-tool contents carry. They are kept in one dict slot, so the common contents
# (text, calls, results) cost no more to build or copy than before these existed.
_HOSTED_FIELDS = (
    "annotations",
    "file_id",
    "vector_store_id",
    "inputs",
    "outputs",
    "image_id",
    "tool_name",
    "server_name",
    "output",
    "items",
    "status",
    "commands",
    "stdout",
    "stderr",
    "exit_code",
    "timed_out",
    "timeout_ms",
    "max_output_length",
    "consent_link",
    "user_input_request",
)
_HOSTED_SET = frozenset(_HOSTED_FIELDS)

_FieldT = TypeVar("_FieldT")


class _HostedField(Generic[_FieldT]):
    """A content field stored in the content's hosted-field dict; ``None`` when the content has none."""

    __slots__ = ("name",)

    def __init__(self) -> None:
        self.name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> Self: ...
    @overload
    def __get__(self, obj: Content, owner: type[Any] | None = None) -> _FieldT | None: ...
    def __get__(self, obj: Content | None, owner: type[Any] | None = None) -> Self | _FieldT | None:
        if obj is None:
            return self
        hosted = obj._hosted  # pyright: ignore[reportPrivateUsage]
        return None if hosted is None else hosted.get(self.name)

    def __set__(self, obj: Content, value: _FieldT | None) -> None:
        _set_hosted(obj, self.name, value)


def _set_hosted(content: Content, name: str, value: object) -> None:
    """Store a hosted field of ``content`` (``None`` removes it; the dict is made on first store)."""
    hosted = content._hosted  # pyright: ignore[reportPrivateUsage]
    if value is None:
        if hosted is not None:
            hosted.pop(name, None)
        return
    if hosted is None:
        content._hosted = hosted = {}  # pyright: ignore[reportPrivateUsage]
    hosted[name] = value


class _LazyProperties:
    """Holds ``additional_properties`` for a content or an update, made on first read, so a streamed chunk carries
    no empty dict."""

    _properties: dict[str, Any] | None = None

    @property
    def additional_properties(self) -> dict[str, Any]:
        """Extra provider-specific fields."""
        properties = self._properties
        if properties is None:
            properties = self._properties = {}
        return properties

    @additional_properties.setter
    def additional_properties(self, value: dict[str, Any]) -> None:
        self._properties = value


class Content(_LazyProperties):
    """One piece of a message: text, reasoning, an image or file, a tool call or result, an approval, usage.

    Build contents with the ``from_*`` factories; read the fields that belong to ``type``.

    Example:
        ```python
        from agentnb import Content

        call = Content.from_function_call("call_1", "get_weather", arguments='{"city": "Paris"}')
        call.parse_arguments()  # {'city': 'Paris'}
        ```
    """

    # Fields a content does not use stay on the class: a content stores only what it holds, so making one (a
    # streamed chunk is one) costs a few attribute writes instead of one per field.
    type: ContentType
    text: str | None = None
    protected_data: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    _uri: str | None = None  # read through ``uri``, which a data content derives from its bytes
    call_id: str | None = None
    name: str | None = None
    arguments: str | dict[str, Any] | None = None
    result: Any = None
    exception: str | None = None
    # A call recorded for the transcript only (the provider ran it, or it is replayed history): never invoked.
    informational_only: bool = False
    id: str | None = None
    function_call: Content | None = None
    approved: bool | None = None
    reason: str | None = None
    usage_details: UsageDetails | None = None
    message: str | None = None
    error_code: str | None = None
    details: str | None = None
    raw_representation: Any = None
    _hosted: dict[str, Any] | None = None  # the hosted-tool fields a content holds (see _HostedField)

    def __init__(
        self,
        type: ContentType,
        *,
        text: str | None = None,
        protected_data: str | None = None,
        data: bytes | None = None,
        media_type: str | None = None,
        uri: str | None = None,
        call_id: str | None = None,
        name: str | None = None,
        arguments: str | dict[str, Any] | None = None,
        result: Any = None,
        exception: str | None = None,
        informational_only: bool = False,
        id: str | None = None,
        function_call: Content | None = None,
        approved: bool | None = None,
        reason: str | None = None,
        usage_details: UsageDetails | None = None,
        message: str | None = None,
        error_code: str | None = None,
        details: str | None = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
        **hosted: Any,
    ) -> None:
        if type not in _CONTENT_TYPES and (not isinstance(type, str) or not type):  # pyright: ignore[reportUnnecessaryIsInstance]
            # Other names pass, as in the reference: a provider's newer content types round-trip.
            raise ValueError(f"A content's type is a non-empty string such as 'text', not {type!r}.")
        self.type = type
        if additional_properties:
            self._properties = additional_properties
        # Only what is given is stored (see the class attributes).
        if text is not None:
            self.text = text
        if protected_data is not None:
            self.protected_data = protected_data
        if data is not None:
            self.data = data
        if media_type is not None:
            self.media_type = media_type
        if uri is not None:
            self._uri = uri
        if call_id is not None:
            self.call_id = call_id
        if name is not None:
            self.name = name
        if arguments is not None:
            self.arguments = arguments
        if result is not None:
            self.result = result
        if exception is not None:
            self.exception = exception
        if informational_only or type == "mcp_server_tool_call":  # a remote MCP call is only ever a record
            self.informational_only = True
        if id is not None:
            self.id = id
        if function_call is not None:
            self.function_call = function_call
        if approved is not None:
            self.approved = approved
        if reason is not None:
            self.reason = reason
        if usage_details is not None:
            self.usage_details = usage_details
        if message is not None:
            self.message = message
        if error_code is not None:
            self.error_code = error_code
        if details is not None:
            self.details = details
        if raw_representation is not None:
            self.raw_representation = raw_representation
        if hosted:
            unknown = hosted.keys() - _HOSTED_SET
            if unknown:
                raise TypeError(f"Content() got unexpected keyword arguments {sorted(unknown)}")
            self._hosted = {k: v for k, v in hosted.items() if v is not None} or None

    annotations: _HostedField[list[Annotation]] = _HostedField()
    file_id: _HostedField[str] = _HostedField()
    vector_store_id: _HostedField[str] = _HostedField()
    inputs: _HostedField[list[Content]] = _HostedField()
    outputs: _HostedField[Any] = _HostedField()  # a list of contents, or one content (a generated image)
    image_id: _HostedField[str] = _HostedField()
    tool_name: _HostedField[str] = _HostedField()
    server_name: _HostedField[str] = _HostedField()
    output: _HostedField[Any] = _HostedField()
    status: _HostedField[str] = _HostedField()
    commands: _HostedField[list[str]] = _HostedField()
    stdout: _HostedField[str] = _HostedField()
    stderr: _HostedField[str] = _HostedField()
    exit_code: _HostedField[int] = _HostedField()
    timed_out: _HostedField[bool] = _HostedField()
    timeout_ms: _HostedField[int] = _HostedField()
    max_output_length: _HostedField[int] = _HostedField()
    consent_link: _HostedField[str] = _HostedField()

    @property
    def uri(self) -> str | None:
        """The content's URI; a ``data`` content gives its bytes as a base64 ``data:`` URI."""
        if self.type == "data" and self.data is not None:
            return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"
        return self._uri

    @uri.setter
    def uri(self, value: str | None) -> None:
        self._uri = value

    @property
    def items(self) -> list[Content] | None:
        """A result's contents (a hosted search's, a tool's); a function result given as text reads as one text.

        As in the reference, a function result's ``result`` is the text of its ``items`` when they were given.
        """
        hosted = self._hosted
        if hosted is not None and "items" in hosted:
            return hosted["items"]
        if self.type == "function_result" and isinstance(self.result, str):
            return [Content.from_text(self.result)]
        return None

    @items.setter
    def items(self, value: list[Content] | None) -> None:
        _set_hosted(self, "items", value)

    @property
    def user_input_request(self) -> bool:
        """Whether this content asks the person for input (an approval or OAuth consent request)."""
        hosted = self._hosted
        if hosted is not None and "user_input_request" in hosted:
            return bool(hosted["user_input_request"])
        return self.type in ("function_approval_request", "oauth_consent_request")

    @user_input_request.setter
    def user_input_request(self, value: bool | None) -> None:
        _set_hosted(self, "user_input_request", value)

    # -- factories ---------------------------------------------------------------------------------------
    @classmethod
    def from_text(cls, text: str, **kwargs: Any) -> Content:
        """Plain text."""
        if kwargs:
            return cls("text", text=text, **kwargs)
        content = object.__new__(cls)  # the per-chunk path of every stream: a few writes
        content.type = "text"
        content.text = text
        # Assembling a stream reads these of every chunk: an instance reads its own fields several times faster
        # than the class defaults, so a chunk holds them (as None) although it stores nothing else it does not use.
        content._properties = None
        content.protected_data = None
        content._hosted = None
        return content

    @classmethod
    def from_reasoning(cls, text: str | None = None, *, protected_data: str | None = None, **kwargs: Any) -> Content:
        """Reasoning text the model shared (shown to people, not treated as the answer)."""
        return cls("text_reasoning", text=text, protected_data=protected_data, **kwargs)

    @classmethod
    def from_text_reasoning(
        cls, *, text: str | None = None, protected_data: str | None = None, id: str | None = None, **kwargs: Any
    ) -> Content:
        """:meth:`from_reasoning` as the reference spells it (keyword arguments only)."""
        return cls("text_reasoning", text=text, protected_data=protected_data, id=id, **kwargs)

    @classmethod
    def from_data(cls, data: bytes, media_type: str, **kwargs: Any) -> Content:
        """Inline binary data such as an image (``media_type`` like ``"image/png"``)."""
        if not isinstance(cast(object, data), (bytes, bytearray)):  # callers in notebooks may pass anything
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        return cls("data", data=bytes(data), media_type=media_type, **kwargs)

    @classmethod
    def from_uri(cls, uri: str, media_type: str | None = None, **kwargs: Any) -> Content:
        """A reference to content by URI (a web URL or a ``data:`` URI)."""
        if uri.startswith("data:") and ";base64," in uri:
            header, _, payload = uri.partition(";base64,")
            return cls.from_data(base64.b64decode(payload), media_type or header[5:], **kwargs)
        if ":" not in uri:
            raise ChatClientError(f"URI {uri!r} must contain a scheme (e.g., http://, data:, file://)")
        return cls("uri", uri=uri, media_type=media_type, **kwargs)

    @classmethod
    def from_function_call(
        cls, call_id: str, name: str, arguments: str | dict[str, Any] | None = None, **kwargs: Any
    ) -> Content:
        """The model asks to call tool ``name``; ``arguments`` is JSON text or an already parsed dict."""
        if kwargs:
            return cls("function_call", call_id=call_id, name=name, arguments=arguments, **kwargs)
        content = object.__new__(cls)  # every tool call a provider parses: only the fields given are written
        content.type = "function_call"
        content.call_id = call_id
        content.name = name
        if arguments is not None:
            content.arguments = arguments
        return content

    @classmethod
    def from_function_result(
        cls, call_id: str, result: Any = None, exception: str | None = None, **kwargs: Any
    ) -> Content:
        """The outcome of a tool call; ``exception`` holds the error text when the call failed.

        A list of contents (a tool's text and images) is kept as ``items``, and ``result`` is then their text
        joined by lines, as in the reference; any other result is kept as it is.
        """
        if isinstance(result, list) and result and all(isinstance(c, Content) for c in cast("list[Any]", result)):
            contents = cast("list[Content]", result)
            kwargs["items"] = list(contents)
            result = "\n".join([c.text for c in contents if c.type == "text" and c.text])
        if kwargs:
            return cls("function_result", call_id=call_id, result=result, exception=exception, **kwargs)
        content = object.__new__(cls)  # every tool call's result: only the fields given are written
        content.type = "function_result"
        content.call_id = call_id
        if result is not None:
            content.result = result
        if exception is not None:
            content.exception = exception
        return content

    @classmethod
    def from_function_approval_request(cls, id: str, function_call: Content, **kwargs: Any) -> Content:
        """A tool call that waits for a person to approve it."""
        return cls("function_approval_request", id=id, function_call=function_call, **kwargs)

    @classmethod
    def from_function_approval_response(
        cls, id: str, approved: bool, function_call: Content, reason: str | None = None, **kwargs: Any
    ) -> Content:
        """A person's answer to an approval request."""
        return cls(
            "function_approval_response", id=id, approved=approved, function_call=function_call, reason=reason, **kwargs
        )

    @classmethod
    def from_usage(cls, usage_details: UsageDetails, **kwargs: Any) -> Content:
        """Token usage reported by the model."""
        return cls("usage", usage_details=usage_details, **kwargs)

    @classmethod
    def from_error(cls, message: str = "", *, error_code: str | None = None, details: str | None = None) -> Content:
        """An error the provider or framework reports inside the conversation."""
        return cls("error", message=message, error_code=error_code, details=details)

    @classmethod
    def from_hosted_file(
        cls, file_id: str, *, media_type: str | None = None, name: str | None = None, **kwargs: Any
    ) -> Content:
        """A file kept by the provider (a generated chart, an uploaded document), named by its id."""
        return cls("hosted_file", file_id=file_id, media_type=media_type, name=name, **kwargs)

    @classmethod
    def from_hosted_vector_store(cls, vector_store_id: str, **kwargs: Any) -> Content:
        """A vector store kept by the provider (what hosted file search searches)."""
        return cls("hosted_vector_store", vector_store_id=vector_store_id, **kwargs)

    @classmethod
    def from_code_interpreter_tool_call(
        cls, *, call_id: str | None = None, inputs: Sequence[Content] | None = None, **kwargs: Any
    ) -> Content:
        """Code the provider's code interpreter ran (``inputs`` holds the code as text)."""
        listed = list(inputs) if inputs is not None else None
        return cls("code_interpreter_tool_call", call_id=call_id, inputs=listed, **kwargs)

    @classmethod
    def from_code_interpreter_tool_result(
        cls, *, call_id: str | None = None, outputs: Sequence[Content] | None = None, **kwargs: Any
    ) -> Content:
        """What the code interpreter's run printed or drew (text logs, image URIs)."""
        listed = list(outputs) if outputs is not None else None
        return cls("code_interpreter_tool_result", call_id=call_id, outputs=listed, **kwargs)

    @classmethod
    def from_image_generation_tool_call(cls, *, image_id: str | None = None, **kwargs: Any) -> Content:
        """The provider started generating an image."""
        return cls("image_generation_tool_call", image_id=image_id, **kwargs)

    @classmethod
    def from_image_generation_tool_result(
        cls, *, image_id: str | None = None, outputs: Any = None, **kwargs: Any
    ) -> Content:
        """The generated image (``outputs`` is a data content or a URI)."""
        return cls("image_generation_tool_result", image_id=image_id, outputs=outputs, **kwargs)

    @classmethod
    def from_mcp_server_tool_call(
        cls,
        call_id: str,
        tool_name: str,
        *,
        server_name: str | None = None,
        arguments: str | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Content:
        """A call the provider made to a remote MCP server: a record, never a call for agentnb to run."""
        return cls(
            "mcp_server_tool_call",
            call_id=call_id,
            tool_name=tool_name,
            server_name=server_name,
            arguments=arguments,
            **kwargs,
        )

    @classmethod
    def from_mcp_server_tool_result(cls, call_id: str, *, output: Any = None, **kwargs: Any) -> Content:
        """What the remote MCP server answered to a provider-made call."""
        return cls("mcp_server_tool_result", call_id=call_id, output=output, **kwargs)

    @classmethod
    def from_search_tool_call(
        cls,
        call_id: str,
        *,
        tool_name: str,
        arguments: str | dict[str, Any] | None = None,
        status: str | None = None,
        **kwargs: Any,
    ) -> Content:
        """A hosted web or file search (``tool_name`` ``"web_search"`` or ``"file_search"``) and its query."""
        return cls(
            "search_tool_call", call_id=call_id, tool_name=tool_name, arguments=arguments, status=status, **kwargs
        )

    @classmethod
    def from_search_tool_result(
        cls,
        call_id: str,
        *,
        tool_name: str,
        result: Any = None,
        items: Sequence[Content] | None = None,
        status: str | None = None,
        **kwargs: Any,
    ) -> Content:
        """What a hosted search found."""
        listed = list(items) if items is not None else None
        return cls(
            "search_tool_result",
            call_id=call_id,
            tool_name=tool_name,
            result=result,
            items=listed,
            status=status,
            **kwargs,
        )

    @classmethod
    def from_oauth_consent_request(cls, consent_link: str, **kwargs: Any) -> Content:
        """A link the person must visit to grant a hosted tool OAuth consent before it can run."""
        return cls("oauth_consent_request", consent_link=consent_link, user_input_request=True, **kwargs)

    @classmethod
    def from_shell_tool_call(
        cls, *, call_id: str | None = None, commands: list[str] | None = None, status: str | None = None, **kwargs: Any
    ) -> Content:
        """Shell commands the model asked a hosted shell to run."""
        return cls("shell_tool_call", call_id=call_id, commands=commands, status=status, **kwargs)

    @classmethod
    def from_shell_tool_result(
        cls, *, call_id: str | None = None, outputs: Sequence[Content] | None = None, **kwargs: Any
    ) -> Content:
        """The hosted shell's outputs, one ``shell_command_output`` content per command."""
        listed = list(outputs) if outputs is not None else None
        return cls("shell_tool_result", call_id=call_id, outputs=listed, **kwargs)

    @classmethod
    def from_shell_command_output(
        cls,
        *,
        stdout: str | None = None,
        stderr: str | None = None,
        exit_code: int | None = None,
        timed_out: bool | None = None,
        **kwargs: Any,
    ) -> Content:
        """One shell command's output and exit code (``None`` when it timed out)."""
        return cls(
            "shell_command_output", stdout=stdout, stderr=stderr, exit_code=exit_code, timed_out=timed_out, **kwargs
        )

    # -- helpers -----------------------------------------------------------------------------------------
    def __deepcopy__(self, memo: dict[int, Any]) -> Content:
        return cast(Content, _deepcopy_sharing_raw(self, memo))

    def parse_arguments(self) -> dict[str, Any] | None:
        """The call's arguments as a dict, as in the reference: ``None`` when there are none, ``{"raw": ...}`` for
        text that is not a JSON object. agentnb's own code reads them with :func:`call_arguments`, which refuses
        such text instead of passing it on."""
        args = self.arguments
        if args is None:
            return None
        if not args:
            return {}
        if isinstance(args, dict):
            return args
        try:
            parsed = json.loads(args)
        except (json.JSONDecodeError, TypeError):
            return {"raw": args}
        return cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {"raw": parsed}

    def to_function_approval_response(self, approved: bool, reason: str | None = None) -> Content:
        """Answer this approval request; send the result in a user message."""
        if self.type != "function_approval_request" or self.function_call is None or self.id is None:
            raise ValueError(f"Only a function_approval_request can be answered, not a {self.type!r} content.")
        return Content.from_function_approval_response(self.id, approved, self.function_call, reason=reason)

    @property
    def uri_or_data_uri(self) -> str | None:
        """A URI for ``uri`` and ``data`` contents (data becomes a base64 ``data:`` URI)."""
        return self.uri

    def to_dict(self, *, exclude_none: bool = True, exclude: set[str] | None = None) -> dict[str, Any]:
        """A JSON-safe dict; ``from_dict`` restores an equal content.

        ``exclude_none=False`` also lists every field the content leaves empty (as ``None``); ``exclude``
        names fields to leave out.
        """
        if not exclude_none or exclude:
            return self._filtered_dict(exclude_none, exclude or set())
        out: dict[str, Any] = {"type": self.type}
        for field in _FIELDS.get(self.type, _ANY_FIELDS):
            value = getattr(self, field)
            if value is None:
                continue
            if field == "data":
                value = base64.b64encode(value).decode("ascii")
            elif field == "function_call":
                value = value.to_dict()
            elif field == "result":
                value = _encode(value)
            out[field] = value
        if self._hosted:
            for field, value in self._hosted.items():
                if field == "annotations":
                    # The provider's raw annotation objects stay out of the JSON form.
                    value = [{k: v for k, v in a.items() if k != "raw_representation"} for a in value]
                elif field == "items":  # contents in their own JSON form, as the reference writes them
                    out[field] = [c.to_dict() if isinstance(c, Content) else _encode(c) for c in value]
                    continue
                out[field] = _encode(value)
        if self.informational_only and self.type == "function_call":
            out["informational_only"] = True
        if self._properties:
            out["additional_properties"] = _encode(self.additional_properties)
        return out

    def _filtered_dict(self, exclude_none: bool, exclude: set[str]) -> dict[str, Any]:
        """:meth:`to_dict` with empty fields listed as ``None`` or named fields left out (rarely asked for)."""
        out = self.to_dict()
        if not exclude_none:
            for field in _ALL_FIELDS:
                out.setdefault(field, None)
        for field in exclude:
            if field != "type":
                out.pop(field, None)
        return out

    def has_top_level_media_type(self, top_level_media_type: Literal["application", "audio", "image", "text"]) -> bool:
        """Whether the media type's first part is ``top_level_media_type`` (``"image"`` for ``image/png``)."""
        if self.media_type is None:
            raise ChatClientError("no media_type found")
        return self.media_type.partition("/")[0].strip().lower() == top_level_media_type.lower()

    def __add__(self, other: Content) -> Content:
        """Merge two streamed pieces of one content: text and reasoning concatenate, call arguments join,
        usage sums. Raises ``TypeError`` for other operands or kinds, ``ChatClientError`` for pieces of
        different calls or reasoning items."""
        if not isinstance(cast(object, other), Content):
            raise TypeError(f"Incompatible type: Cannot add Content with {type(other).__name__}")
        if self.type != other.type:
            raise TypeError(f"Cannot add Content of type {self.type!r} with type {other.type!r}")
        common: dict[str, Any] = {
            "additional_properties": {**other.additional_properties, **self.additional_properties},
            "raw_representation": _joined_raw(self.raw_representation, other.raw_representation),
        }
        annotations = [*(self.annotations or ()), *(other.annotations or ())]
        if annotations:
            common["annotations"] = annotations
        if self.type == "text":
            return Content("text", text=(self.text or "") + (other.text or ""), **common)
        if self.type == "text_reasoning":
            if self.id and other.id and self.id != other.id:
                raise ChatClientError(
                    f"Cannot add text_reasoning content with different ids: {self.id!r} != {other.id!r}"
                )
            text = None if self.text is None and other.text is None else (self.text or "") + (other.text or "")
            return Content(
                "text_reasoning",
                text=text,
                protected_data=other.protected_data if other.protected_data is not None else self.protected_data,
                id=self.id or other.id,
                status=other.status if other.status is not None else self.status,
                **common,
            )
        if self.type == "function_call":
            return self._add_function_call(other, common)
        if self.type == "usage":
            return Content("usage", usage_details=add_usage_details(self.usage_details, other.usage_details), **common)
        raise ChatClientError(f"Addition not supported for content type: {self.type}")

    def _add_function_call(self, other: Content, common: dict[str, Any]) -> Content:
        if self.call_id and other.call_id and self.call_id != other.call_id:
            raise ChatClientError("Cannot add function calls with different call_ids")
        if self.id and other.id and self.id != other.id:
            raise ChatClientError("Cannot merge function calls with different ids")
        mine, theirs = self.arguments, other.arguments
        arguments: str | dict[str, Any] | None
        if not mine or not theirs:
            arguments = mine or theirs
        elif isinstance(mine, str) and isinstance(theirs, str):
            arguments = mine + theirs
        elif isinstance(mine, dict) and isinstance(theirs, dict):
            arguments = {**mine, **theirs}
        else:
            raise TypeError("Incompatible argument types")
        merged = Content(
            "function_call",
            call_id=self.call_id or other.call_id,
            name=self.name or other.name,
            arguments=arguments,
            id=self.id or other.id,
            exception=other.exception if other.exception is not None else self.exception,
            informational_only=self.informational_only or other.informational_only,
            server_name=self.server_name or other.server_name,
            status=other.status if other.status is not None else self.status,
            **common,
        )
        if self.user_input_request or other.user_input_request:
            merged.user_input_request = True
        return merged

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Content:
        """Rebuild a content from :meth:`to_dict` output."""
        kwargs = dict(data)
        type_ = kwargs.pop("type", None)
        if not type_ or not isinstance(type_, str):
            raise ValueError(f"A content's mapping needs a 'type', not {type_!r}: {data!r}")
        if isinstance(kwargs.get("data"), str):  # as to_dict writes it (bytes given in a hand-made mapping stay)
            kwargs["data"] = base64.b64decode(kwargs["data"])
        elif type_ == "data" and isinstance(uri := kwargs.get("uri"), str) and ";base64," in uri:
            # The reference's form of a data content: its base64 data URI.
            del kwargs["uri"]
            header, _, payload = uri.partition(";base64,")
            kwargs["data"] = base64.b64decode(payload)
            kwargs.setdefault("media_type", header.removeprefix("data:"))
        if "function_call" in kwargs:
            kwargs["function_call"] = cls.from_dict(kwargs["function_call"])
        if "result" in kwargs:
            kwargs["result"] = _decode(kwargs["result"])
        if "additional_properties" in kwargs:
            kwargs["additional_properties"] = _decode(kwargs["additional_properties"])
        for field in _HOSTED_SET.intersection(kwargs):
            kwargs[field] = _decode(kwargs[field])
        if isinstance(items := kwargs.get("items"), list):
            listed = cast("list[Any]", items)
            kwargs["items"] = [cls.from_dict(cast("dict[str, Any]", i)) if isinstance(i, dict) else i for i in listed]
        return cls(cast("ContentType", type_), **kwargs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Content):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    # Unhashable, as equal-by-value mutable objects must be; typeshed declares object.__hash__ a method.
    __hash__: ClassVar[None] = None  # pyright: ignore[reportIncompatibleMethodOverride]

    def __str__(self) -> str:
        """Text for text content, the message for an error, else the kind of content."""
        if self.type == "text":
            return self.text or ""
        if self.type == "error":
            if self.error_code:
                return f"Error {self.error_code}: {self.message or ''}"
            return self.message or "Unknown error"
        return f"Content(type={self.type})"

    def __repr__(self) -> str:
        named = _FIELDS.get(self.type, _ANY_FIELDS)
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in named if getattr(self, f) is not None and f != "data")
        if self.type == "data" and self.data is not None:
            fields += f"{', ' if fields else ''}data=<{len(self.data)} bytes>"
        if self._hosted:
            fields += "".join(
                f"{', ' if fields or i else ''}{k}={v!r}" for i, (k, v) in enumerate(self._hosted.items())
            )
        return f"Content({self.type!r}{', ' if fields else ''}{fields})"


ContentLike = str | Content | dict[str, Any]
# Every field a content can hold, for ``to_dict(exclude_none=False)``.
_ALL_FIELDS = (*dict.fromkeys(f for fields in _FIELDS.values() for f in fields), *_HOSTED_FIELDS)


def _joined_raw(first: Any, second: Any) -> Any:
    """The raw representations of two merged pieces: one when only one has it, else a flat list of both."""
    if first is None:
        return second
    if second is None:
        return first
    firsts = cast("list[Any]", first) if isinstance(first, list) else [first]
    seconds = cast("list[Any]", second) if isinstance(second, list) else [second]
    return [*firsts, *seconds]


def _to_content(item: ContentLike) -> Content:
    if isinstance(item, Content):
        return item
    if isinstance(item, str):
        return Content.from_text(item)
    if isinstance(cast(object, item), dict):  # untyped callers may pass anything
        return Content.from_dict(item)
    raise TypeError(f"Message contents must be str or Content, got {type(item).__name__}")


def _to_contents(contents: ContentLike | Sequence[ContentLike] | None) -> list[Content]:
    if contents is None:
        return []
    if isinstance(contents, (str, Content, dict)):
        return [_to_content(contents)]
    # Contents usually come typed already (every streamed chunk): copy the list, convert only if needed.
    out = list(contents)
    for item in out:
        if not isinstance(item, Content):
            return [_to_content(c) for c in contents]
    return out  # pyright: ignore[reportReturnType]  (checked above; cast() would be a call per chunk)


def call_arguments(call: Content) -> dict[str, Any]:
    """A function call's arguments as a dict (``{}`` when there are none).

    Raises:
        ValueError: The arguments are not JSON, or JSON that is not an object: nothing can be run or approved
            with them (``Content.parse_arguments`` would wrap them as ``{"raw": ...}``).
    """
    args = call.arguments
    if not args:
        return {}
    if isinstance(args, dict):
        return args
    try:
        parsed = json.loads(args)
    except json.JSONDecodeError as e:
        raise ValueError(f"Arguments of {call.name!r} are not valid JSON: {e.msg} in {args[:200]!r}") from e
    if not isinstance(parsed, dict):
        raise ValueError(f"Arguments of {call.name!r} must be a JSON object, got {type(parsed).__name__}")
    return cast("dict[str, Any]", parsed)


def _joined_text(contents: Sequence[Content], separator: str = "") -> str:
    """The text contents' text joined: with nothing for a streamed update, with a space within a message."""
    if len(contents) == 1:  # a streamed chunk
        only = contents[0]
        return (only.text or "") if only.type == "text" else ""
    return separator.join(c.text or "" for c in contents if c.type == "text")


_UNCOPIED_CACHES = frozenset(("_compaction_cache", "_kinds_cache", "_scan_cache"))


def _deepcopy_sharing_raw(obj: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of ``obj`` whose ``raw_representation`` is the original's, not a copy.

    The raw representation is the provider's SDK object (an HTTP response, a stream holding a lock): it often
    cannot be copied, and a copy of it would mean nothing. Everything agentnb owns is copied.
    """
    cls = cast("type[Any]", type(obj))
    clone: Any = object.__new__(cls)
    memo[id(obj)] = clone
    names: list[str] = list(getattr(obj, "__dict__", {}))
    for klass in cls.__mro__:
        names += [n for n in klass.__dict__.get("__slots__", ()) if n not in ("__dict__", "__weakref__")]
    for name in dict.fromkeys(names):
        if not hasattr(obj, name):
            continue
        if name in _UNCOPIED_CACHES:  # summaries of the original's conversation: the copy rebuilds its own
            object.__setattr__(clone, name, None)
            continue
        value = getattr(obj, name)
        object.__setattr__(clone, name, value if name == "raw_representation" else copy.deepcopy(value, memo))
    return clone


class _JsonForm:
    """``to_json`` / ``from_json`` over a class's ``to_dict`` / ``from_dict`` (the reference's serialization names)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return cast(Self, _deepcopy_sharing_raw(self, memo))

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string (``kwargs`` go to ``json.dumps``, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, value: str | bytes, /) -> Self:
        """Rebuild from :meth:`to_json` output."""
        data = json.loads(value)
        if not isinstance(data, dict):
            raise ValueError(f"{cls.__name__}.from_json needs a JSON object, got {type(data).__name__}.")
        return cls.from_dict(cast(dict[str, Any], data))


class Message(_JsonForm):
    """A chat message: who said it (``role``) and what (``contents``).

    Example:
        ```python
        from agentnb import Message

        msg = Message("user", ["What's the weather in Paris?"])
        msg.text  # "What's the weather in Paris?"
        ```
    """

    __slots__ = (
        "_compaction_cache",
        "_kinds_cache",
        "_scan_cache",
        "additional_properties",
        "author_name",
        "contents",
        "message_id",
        "raw_representation",
        "role",
    )

    def __init__(
        self,
        role: Role | str,
        contents: ContentLike | Sequence[ContentLike] | None = None,
        *,
        author_name: str | None = None,
        message_id: str | None = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
        text: str | None = None,
    ) -> None:
        if role not in _ROLES and (not isinstance(role, str) or not role):  # pyright: ignore[reportUnnecessaryIsInstance]
            # Other names pass, as in the reference: providers have their own (OpenAI's "developer").
            raise ValueError(f"A message's role is a non-empty string such as {list(_ROLES)}, not {role!r}.")
        self.role: Role = role  # pyright: ignore[reportAttributeAccessIssue]
        self.contents: list[Content] = _to_contents(contents)
        if text is not None:
            self.contents.insert(0, Content.from_text(text))
        self.author_name = author_name
        self.message_id = message_id
        self.additional_properties: dict[str, Any] = additional_properties or {}
        self.raw_representation = raw_representation
        # Caches owned by agentnb._conversation (what tool content this message holds; a history summary)
        # and by agentnb.compaction (the group index of the conversation this message ends).
        self._kinds_cache: tuple[list[Content], int, int] | None = None
        self._scan_cache: Any = None
        self._compaction_cache: Any = None

    @property
    def text(self) -> str:
        """The text contents joined by a space, as in the reference (reasoning, tool calls and results are not text).

        Streamed text is assembled into one content, so the space only separates pieces split by other contents.
        """
        return _joined_text(self.contents, " ")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; ``from_dict`` restores an equal message."""
        out: dict[str, Any] = {"type": "message", "role": self.role, "contents": [c.to_dict() for c in self.contents]}
        if self.author_name is not None:
            out["author_name"] = self.author_name
        if self.message_id is not None:
            out["message_id"] = self.message_id
        if self.additional_properties:
            out["additional_properties"] = _encode(self.additional_properties)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Rebuild a message from :meth:`to_dict` output."""
        return cls(
            data["role"],
            [Content.from_dict(c) for c in data.get("contents", [])],
            author_name=data.get("author_name"),
            message_id=data.get("message_id"),
            additional_properties=_decode(data.get("additional_properties")) or None,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    # Unhashable, as equal-by-value mutable objects must be; typeshed declares object.__hash__ a method.
    __hash__: ClassVar[None] = None  # pyright: ignore[reportIncompatibleMethodOverride]

    def __repr__(self) -> str:
        author = f", author_name={self.author_name!r}" if self.author_name else ""
        return f"Message({self.role!r}, {self.contents!r}{author})"


MessagesLike = str | Content | Message | Sequence[str | Content | Message] | None
AgentRunInputs = str | Content | Message | Sequence[str | Content | Message]
"""What ``run`` takes as its messages (the reference's name; ``MessagesLike`` also allows ``None``)."""


def normalize_messages(messages: MessagesLike, role: Role = "user") -> list[Message]:
    """Turn what a caller passes (str, Content, Message or a list of them) into a list of messages."""
    if messages is None:
        return []
    if isinstance(messages, (str, Content)):
        return [Message(role, [messages])]
    if isinstance(messages, Message):
        return [messages]
    # Already normalized (the agent passes its prepared list to the client). Counting in C keeps this check
    # cheap on long histories; a subclass of Message takes the loop below.
    if isinstance(messages, list) and list(map(type, messages)).count(Message) == len(messages):
        return messages  # pyright: ignore[reportReturnType]  (counted above; cast() would be a call per turn)
    out: list[Message] = []
    for item in cast("Sequence[object]", messages):  # untyped callers may pass anything
        if isinstance(item, Message):
            out.append(item)
        elif isinstance(item, (str, Content)):
            out.append(Message(role, [item]))
        else:
            raise TypeError(f"Cannot use a {type(item).__name__} as a message; pass str, Content or Message.")
    return out


def _final_answer_text(messages: Sequence[Message]) -> str:
    """The text of the last assistant message that has any: what structured output is parsed from.

    Its text contents are joined with nothing (pieces of one JSON document); a refusal gives "" (no value).
    """
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        texts = [c for c in message.contents if c.type == "text"]
        if any(c.additional_properties.get("refusal") for c in texts):
            return ""
        text = "".join([c.text or "" for c in texts])
        if text.strip():
            return text
    return ""


def _parse_structured(text: str, response_format: Any) -> Any:
    """The value ``text`` holds in ``response_format``; ``None`` for no text, as in the reference."""
    if not text:
        return None
    from pydantic import TypeAdapter, ValidationError

    if isinstance(response_format, Mapping):
        # A JSON schema (or an OpenAI ``{"type": "json_schema", ...}`` format): the value is the parsed JSON, as in
        # the reference; the provider asked the model to follow the schema.
        name = str(cast("Mapping[str, Any]", response_format).get("title") or "the JSON schema")
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise StructuredOutputError(
                f"The model's reply is not valid JSON, which {name} asks for: {e}", schema_name=name, text=text
            ) from e
    name = getattr(response_format, "__name__", repr(response_format))
    try:
        adapter = TypeAdapter(response_format)
        return adapter.validate_json(text)
    except ValidationError as e:
        # pydantic's own error (what the reference raises, with its ``errors()``) that is also agentnb's.
        error = _schema_mismatch_error().from_exception_data(name, e.errors(), input_type="json")
        error.schema_name = name
        error.text = text
        raise error from None


@functools.cache
def _schema_mismatch_error() -> type[Any]:
    """A ``StructuredOutputError`` that is a pydantic ``ValidationError`` too (made once pydantic is imported)."""
    from pydantic import ValidationError

    class SchemaMismatchError(StructuredOutputError, ValidationError):
        """The model's reply does not validate against a pydantic ``response_format``."""

        def __init__(self, *args: Any) -> None:  # pydantic builds it (``from_exception_data``), with its own args
            ValueError.__init__(self, *args)

    SchemaMismatchError.__qualname__ = SchemaMismatchError.__name__
    return SchemaMismatchError


_UpdateT = TypeVar("_UpdateT")
_FinalT = TypeVar("_FinalT")
_OuterUpdateT = TypeVar("_OuterUpdateT")
_OuterFinalT = TypeVar("_OuterFinalT")
# The reference's names for ResponseStream's type variables.
UpdateT = _UpdateT
FinalT = _FinalT
OuterUpdateT = _OuterUpdateT
OuterFinalT = _OuterFinalT


class _UpdateBase(_LazyProperties, _JsonForm):
    """What chat and agent streaming updates share."""

    _TYPE: ClassVar[str] = "response_update"  # the ``type`` key of the JSON form (the reference's)
    contents: list[Content]
    role: Role | None
    author_name: str | None = None
    response_id: str | None = None
    message_id: str | None = None
    conversation_id: str | None = None
    model_id: str | None = None
    created_at: float | None = None
    finish_reason: str | None = None
    raw_representation: Any = None
    continuation_token: Mapping[str, Any] | None = None

    def __init__(
        self,
        *,
        contents: ContentLike | Sequence[ContentLike] | None = None,
        role: Role | None = "assistant",
        author_name: str | None = None,
        response_id: str | None = None,
        message_id: str | None = None,
        conversation_id: str | None = None,
        model_id: str | None = None,
        created_at: float | None = None,
        finish_reason: str | None = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
        text: str | None = None,
        model: str | None = None,
        continuation_token: Mapping[str, Any] | None = None,
    ) -> None:
        if contents.__class__ is list:  # every streamed chunk's: _to_contents inline (a copy, checked)
            copied: list[Any] = list(contents)  # pyright: ignore[reportArgumentType, reportUnknownVariableType]
            for item in copied:
                if not isinstance(item, Content):
                    copied = _to_contents(contents)
                    break
            self.contents = copied
        else:
            self.contents = _to_contents(contents)
        if text is not None:
            self.contents.insert(0, Content.from_text(text))
        self.role = role
        # Every field is stored, given or not: each update is read field by field (relabelled for an agent,
        # assembled), and a field left to its class default reads several times slower than one the instance
        # holds. Additional properties stay lazy (see _LazyProperties).
        self._properties = additional_properties or None
        self.author_name = author_name
        self.response_id = response_id
        self.message_id = message_id
        self.conversation_id = conversation_id
        self.model_id = model_id if model_id is not None else model
        self.created_at = created_at
        self.finish_reason = finish_reason
        self.raw_representation = raw_representation
        # Set while the work goes on elsewhere (a background response, a remote task): resume or poll with it.
        self.continuation_token = continuation_token

    @property
    def model(self) -> str | None:
        """The reference's name for :attr:`model_id` (``ChatResponseUpdate(model=...)`` sets it too)."""
        return self.model_id

    @model.setter
    def model(self, value: str | None) -> None:
        self.model_id = value

    @property
    def text(self) -> str:
        """The text in this update."""
        contents = self.contents
        if len(contents) == 1:  # a streamed chunk (read once per chunk by most consumers): _joined_text inline
            only = contents[0]
            return (only.text or "") if only.type == "text" else ""
        return _joined_text(contents)

    @property
    def user_input_requests(self) -> list[Content]:
        """The approval requests this update carries (the run waits for their answers)."""
        return [c for c in self.contents if c.type == "function_approval_request"]

    _FIELDS: tuple[str, ...] = (
        "role",
        "author_name",
        "response_id",
        "message_id",
        "conversation_id",
        "model_id",
        "created_at",
        "finish_reason",
    )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; ``from_dict`` restores an equal update (without its raw representation)."""
        out: dict[str, Any] = {"type": self._TYPE, "contents": [c.to_dict() for c in self.contents]}
        for field in self._FIELDS:
            value = getattr(self, field)
            if value is not None:
                out["model" if field == "model_id" else field] = value  # the reference's key
        if self._properties:
            out["additional_properties"] = _encode(self.additional_properties)
        if self.continuation_token is not None:
            out["continuation_token"] = dict(self.continuation_token)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Rebuild an update from :meth:`to_dict` output."""
        kwargs = {k: v for k, v in data.items() if k != "contents" and k != "type"}
        kwargs.setdefault("role", None)
        if "additional_properties" in kwargs:
            kwargs["additional_properties"] = _decode(kwargs["additional_properties"])
        return cls(contents=[Content.from_dict(c) for c in data.get("contents", [])], **kwargs)

    def __str__(self) -> str:
        """The text, so ``print(update)`` shows what was streamed."""
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(role={self.role!r}, contents={self.contents!r})"


class ChatResponseUpdate(_UpdateBase):
    """One streamed piece of a chat response."""

    _TYPE: ClassVar[str] = "chat_response_update"


class AgentResponseUpdate(_UpdateBase):
    """One streamed piece of an agent's answer."""

    _TYPE: ClassVar[str] = "agent_response_update"

    _FIELDS = (*_UpdateBase._FIELDS, "agent_id")

    def __init__(
        self, *, agent_id: str | None = None, continuation_token: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(continuation_token=continuation_token, **kwargs)
        self.agent_id = agent_id

    @classmethod
    def from_chat_update(
        cls, update: ChatResponseUpdate, *, agent_id: str | None, author_name: str | None
    ) -> AgentResponseUpdate:
        """Re-label a chat client's update as coming from an agent."""
        if update.__class__ is ChatResponseUpdate and cls is AgentResponseUpdate:
            return relabel_chat_update(agent_id, author_name, update)
        return cls(
            contents=update.contents,
            role=update.role,
            author_name=update.author_name or (author_name if update.role == "assistant" else None),
            agent_id=agent_id,
            response_id=update.response_id,
            message_id=update.message_id,
            conversation_id=update.conversation_id,
            model_id=update.model_id,
            created_at=update.created_at,
            finish_reason=update.finish_reason,
            additional_properties=update.additional_properties,
            raw_representation=update,
            continuation_token=update.continuation_token,
        )


def request_response(
    last: ChatResponse,
    messages: list[Message],
    usage_details: UsageDetails | None,
    response_format: Any,
    additional_properties: dict[str, Any],
) -> ChatResponse:
    """The answer to a whole request: ``last`` (its final model call's response) with the request's messages,
    summed usage, response format and additional properties.

    The fields ``ChatResponse(...)`` would set, written without its keyword passing: every request ends here.
    """
    response: ChatResponse = object.__new__(ChatResponse)
    response.messages = list(messages)
    response.response_id = last.response_id
    response.conversation_id = last.conversation_id
    response.model_id = last.model_id
    response.created_at = last.created_at
    response.finish_reason = last.finish_reason
    response.usage_details = usage_details
    response._value = None  # pyright: ignore[reportPrivateUsage]
    response._response_format = response_format  # pyright: ignore[reportPrivateUsage]
    response.additional_properties = additional_properties or {}
    response.raw_representation = last.raw_representation
    response.continuation_token = last.continuation_token
    return response


def relabel_chat_update(
    agent_id: str | None, author_name: str | None, update: ChatResponseUpdate
) -> AgentResponseUpdate:
    """:meth:`AgentResponseUpdate.from_chat_update`, positional: the per-chunk step of every streamed agent turn.

    Positional so that a ``functools.partial`` of it is one call per chunk (keywords would be merged per call).
    """
    if update.__class__ is not ChatResponseUpdate:
        return AgentResponseUpdate.from_chat_update(update, agent_id=agent_id, author_name=author_name)
    # The fields the constructor stores, copied without the keywords. Attribute writes, not ``__dict__``: reading an
    # instance's ``__dict__`` makes it a separate dict for the update's lifetime, and every streamed turn keeps its
    # updates.
    relabelled = object.__new__(AgentResponseUpdate)
    relabelled.contents = list(update.contents)
    relabelled.role = role = update.role
    relabelled._properties = update._properties or None  # pyright: ignore[reportPrivateUsage]
    relabelled.author_name = update.author_name or (author_name if role == "assistant" else None)
    relabelled.response_id = update.response_id
    relabelled.message_id = update.message_id
    relabelled.conversation_id = update.conversation_id
    relabelled.model_id = update.model_id
    relabelled.created_at = update.created_at
    relabelled.finish_reason = update.finish_reason
    relabelled.raw_representation = update
    relabelled.continuation_token = update.continuation_token
    relabelled.agent_id = agent_id
    return relabelled


def map_chat_to_agent_update(update: ChatResponseUpdate, agent_name: str | None) -> AgentResponseUpdate:
    """A chat client's streamed update as an agent's, authored by ``agent_name`` unless it names its author.

    For agents written by hand that stream their chat client's updates; ``Agent`` relabels its own.
    """
    agent_update = AgentResponseUpdate.from_chat_update(update, agent_id=None, author_name=agent_name)
    agent_update.author_name = update.author_name or agent_name
    return agent_update


def _merge_into(messages: list[Message], update: _UpdateBase) -> None:
    """Append an update's contents to the message it belongs to, coalescing streamed text and arguments."""
    role = update.role or (messages[-1].role if messages else "assistant")
    message_id = getattr(update, "message_id", None)
    author = getattr(update, "author_name", None)
    current = messages[-1] if messages else None
    if (
        current is None
        or current.role != role
        or (message_id and current.message_id and message_id != current.message_id)
        or (author and current.author_name and author != current.author_name)
    ):
        current = Message(role, [], author_name=author, message_id=message_id)
        messages.append(current)
    else:
        current.message_id = current.message_id or message_id
        current.author_name = current.author_name or author
    for content in update.contents:
        if content.type == "usage":
            continue
        previous = current.contents[-1] if current.contents else None
        if previous is not None and _coalesce(previous, content):
            continue
        current.contents.append(_copy_content(content))


def _copy_content(content: Content) -> Content:
    copied = object.__new__(type(content))
    copied.__dict__.update(content.__dict__)
    copied.additional_properties = dict(content.additional_properties)
    if content._hosted is not None:  # pyright: ignore[reportPrivateUsage]
        copied._hosted = dict(content._hosted)  # pyright: ignore[reportPrivateUsage]
    return copied


def _coalesce(previous: Content, content: Content) -> bool:
    """Join a streamed fragment onto the previous content of the same kind; False when they are separate."""
    if previous.type == content.type and content.type in ("text", "text_reasoning"):
        if content.additional_properties and content.additional_properties != previous.additional_properties:
            return False
        if previous.protected_data is not None:
            return False  # a signed (finished) reasoning block: what follows is a new one
        previous.text = (previous.text or "") + (content.text or "")
        if content._hosted is not None and content.annotations:  # pyright: ignore[reportPrivateUsage]
            previous.annotations = [*(previous.annotations or ()), *content.annotations]
        if content.protected_data is not None:
            previous.protected_data = content.protected_data  # the signature that ends a streamed block
        return True
    if (
        previous.type == content.type == "function_call"
        and isinstance(previous.arguments, (str, type(None)))
        and isinstance(content.arguments, (str, type(None)))
        and (not content.call_id or content.call_id == previous.call_id)
        and (not content.name or content.name == previous.name)
    ):
        previous.arguments = (previous.arguments or "") + (content.arguments or "")
        return True
    return False


def _usage_of(updates: Iterable[_UpdateBase]) -> UsageDetails | None:
    usage: UsageDetails | None = None
    for update in updates:
        for content in update.contents:
            if content.type == "usage":
                usage = add_usage_details(usage, content.usage_details)
    return usage


# Response fields an update carries; the last non-empty value wins when updates are assembled.
_CARRIED = ("response_id", "conversation_id", "model_id", "finish_reason")


class _ResponseBase(_JsonForm, Generic[ResponseModelT]):
    """What chat and agent responses share: messages, ids, usage and the structured value.

    Generic in the structured-output type (``AgentResponse[Weather]``) for type checkers, as in the reference.
    """

    _TYPE: ClassVar[str] = "response"  # the ``type`` key of the JSON form (the reference's)
    _FIELDS: tuple[str, ...] = ("response_id", "conversation_id", "model_id", "created_at", "finish_reason")

    def __init__(
        self,
        *,
        messages: Message | Sequence[Message] | None = None,
        response_id: str | None = None,
        conversation_id: str | None = None,
        model_id: str | None = None,
        created_at: float | None = None,
        finish_reason: str | None = None,
        usage_details: UsageDetails | None = None,
        value: Any = None,
        response_format: Any = None,
        additional_properties: dict[str, Any] | None = None,
        raw_representation: Any = None,
        text: str | None = None,
        model: str | None = None,
        continuation_token: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(messages, Message):
            messages = [messages]
        self.messages: list[Message] = list(messages or [])
        if text is not None:
            self.messages.append(Message("assistant", [text]))
        self.response_id = response_id
        self.conversation_id = conversation_id
        self.model_id = model_id if model_id is not None else model
        self.created_at = created_at
        self.finish_reason = finish_reason
        self.usage_details = usage_details
        self._value = value
        self._response_format = response_format
        self.additional_properties: dict[str, Any] = additional_properties or {}
        self.raw_representation = raw_representation
        # Set while the work goes on elsewhere (a background response, a remote task): poll or resume with it;
        # None when the work is done.
        self.continuation_token = continuation_token

    @property
    def model(self) -> str | None:
        """The reference's name for :attr:`model_id` (``ChatResponse(model=...)`` sets it too)."""
        return self.model_id

    @model.setter
    def model(self, value: str | None) -> None:
        self.model_id = value

    @property
    def text(self) -> str:
        """The messages' text (subclasses join it as the reference does)."""
        raise NotImplementedError

    @property
    def value(self) -> Any:
        """The structured output parsed with ``response_format``.

        ``None`` when none was requested, when the model gave no text or refused. The model's final answer is the
        last assistant message with text: a preamble such as "Let me check." written before a tool call is not
        part of it.

        Raises:
            StructuredOutputError: The text does not match ``response_format``; for a pydantic model or another
                type it is also a pydantic ``ValidationError``, for a JSON schema also a ``ValueError``.
        """
        if self._value is None and self._response_format is not None:
            self._value = _parse_structured(_final_answer_text(self.messages), self._response_format)
        return self._value

    @property
    def user_input_requests(self) -> list[Content]:
        """Approval requests in this response that still wait for an answer."""
        from ._conversation import unanswered_requests  # the conversation rules build on these types

        return unanswered_requests(self.messages)

    def try_parse_value(self, response_format: type[BaseModel] | Any) -> Any:
        """Parse the text with ``response_format`` and keep it as ``value``."""
        self._response_format = response_format
        self._value = None
        return self.value

    def _assemble(self, updates: list[Any], carried: tuple[str, ...]) -> None:
        messages: list[Message] = []
        merged: list[Any] = []  # the updates merged one by one (only they can hold usage)
        # Streamed text arrives as many one-fragment updates: their fragments are collected in ``pieces`` and
        # joined onto ``tail`` (the last message's last content, plain text) once, not concatenated one by one.
        tail: Content | None = None
        pieces: list[str] = []
        for update in updates:
            contents = update.contents
            if tail is not None and len(contents) == 1:
                content = contents[0]
                current = messages[-1]
                if (
                    content.type == "text"
                    and not content._properties
                    and content.protected_data is None
                    and content._hosted is None
                    and (update.role is None or update.role == current.role)
                    and (not update.message_id or update.message_id == current.message_id)
                    and (not update.author_name or update.author_name == current.author_name)
                ):
                    pieces.append(content.text or "")
                    continue
            if pieces:
                assert tail is not None
                tail.text = (tail.text or "") + "".join(pieces)
                pieces.clear()
            _merge_into(messages, update)
            merged.append(update)
            last = messages[-1].contents if messages else None
            tail = last[-1] if last and last[-1].type == "text" and last[-1].protected_data is None else None
        if pieces:
            assert tail is not None
            tail.text = (tail.text or "") + "".join(pieces)
        self.messages = [m for m in messages if m.contents]
        # Fields over all updates at C speed: each carried field's last non-empty value, the first created_at.
        for field in carried:
            getter: Callable[[Any], Any] = attrgetter(field)
            value = next(filter(bool, map(getter, reversed(updates))), None)
            if value:
                setattr(self, field, value)
        created: Callable[[Any], float | None] = attrgetter("created_at")
        first = next(filter(bool, map(created, updates)), None)
        self.created_at = self.created_at or first
        for properties in filter(None, map(attrgetter("_properties"), updates)):
            self.additional_properties.update(properties)
        self.usage_details = _usage_of(merged)
        self.raw_representation = list(map(attrgetter("raw_representation"), updates))
        self.continuation_token = updates[-1].continuation_token if updates else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (the structured ``value`` is kept with its type tag)."""
        out: dict[str, Any] = {"type": self._TYPE, "messages": [m.to_dict() for m in self.messages]}
        for field in self._FIELDS:
            value = getattr(self, field)
            if value is not None:
                out["model" if field == "model_id" else field] = value  # the reference's key
        if self.usage_details:
            out["usage_details"] = dict(self.usage_details)
        if self._value is not None:
            out["value"] = _encode(self._value)
        if self.additional_properties:
            out["additional_properties"] = _encode(self.additional_properties)
        if self.continuation_token is not None:
            out["continuation_token"] = dict(self.continuation_token)
        return out

    @staticmethod
    def _kwargs_from_dict(data: dict[str, Any]) -> dict[str, Any]:
        kwargs = dict(data)
        kwargs.pop("type", None)
        kwargs["messages"] = [Message.from_dict(m) for m in data.get("messages", [])]
        if "value" in kwargs:
            kwargs["value"] = _decode(kwargs["value"])
        if "additional_properties" in kwargs:
            kwargs["additional_properties"] = _decode(kwargs["additional_properties"])
        return kwargs

    def __str__(self) -> str:
        """The answer's text, so ``print(response)`` shows the reply."""
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(text={self.text!r}, messages={len(self.messages)}, usage={self.usage_details})"


class ChatResponse(_ResponseBase[ResponseModelT]):
    """What a chat client returns for one request (after any tool calls it ran).

    Example:
        ```python
        from agentnb import ChatResponse, Message

        response = ChatResponse(messages=[Message("assistant", ["Hello!"])])
        response.text  # 'Hello!'
        ```
    """

    _TYPE = "chat_response"

    @property
    def text(self) -> str:
        """Every message's text, one message a line, as in the reference (tool calls and results have none)."""
        return "\n".join([m.text for m in self.messages]).strip()

    @classmethod
    def from_updates(cls, updates: Iterable[ChatResponseUpdate], *, output_format_type: Any = None) -> ChatResponse:
        """Assemble the response a stream of updates describes."""
        response = cls(response_format=output_format_type)
        response._assemble(list(updates), _CARRIED)
        return response

    @classmethod
    async def from_update_generator(
        cls, updates: AsyncIterable[ChatResponseUpdate], *, output_format_type: Any = None
    ) -> ChatResponse:
        """Drain an async stream of updates (a ``ResponseStream`` too) and assemble its response."""
        return cls.from_updates([u async for u in updates], output_format_type=output_format_type)

    def to_updates(self) -> list[ChatResponseUpdate]:
        """The response as updates, one per message (the inverse of :meth:`from_updates`)."""
        updates = [
            ChatResponseUpdate(
                contents=list(m.contents),
                role=m.role,
                author_name=m.author_name,
                message_id=m.message_id,
                response_id=self.response_id,
                conversation_id=self.conversation_id,
                model_id=self.model_id,
                created_at=self.created_at,
                additional_properties=dict(m.additional_properties),
            )
            for m in self.messages
        ]
        tail = ChatResponseUpdate(contents=[], role=None, finish_reason=self.finish_reason)
        if self.usage_details:
            tail.contents.append(Content.from_usage(self.usage_details))
        updates.append(tail)
        return updates

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatResponse:
        """Rebuild a response from :meth:`to_dict` output."""
        return cls(**cls._kwargs_from_dict(data))


INJECTED_INPUT_KEY = "_injected_input"
"""Marks, in ``additional_properties``, a message a middleware added to a turn's input after it started (it is
kept with the response so the history has it, and left out of the response's text)."""


class AgentResponse(_ResponseBase[ResponseModelT]):
    """An agent's answer to one run: the new messages (tool calls and results included), usage and value.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient

        agent = Agent(ScriptedChatClient(["Hi there!"]))
        response = await agent.run("Hello")
        response.text  # 'Hi there!'
        ```
    """

    _TYPE = "agent_response"
    _FIELDS = ("response_id", "agent_id", "conversation_id", "model_id", "created_at", "finish_reason")

    @property
    def text(self) -> str:
        """Every message's text run together, as in the reference (tool calls and results have none).

        Input a middleware put into the turn on the person's behalf (``MessageInjectionMiddleware``, marked with
        ``INJECTED_INPUT_KEY``) is left out: it is kept with the response for the history, but it is not the answer.
        """
        return "".join([m.text for m in self.messages if INJECTED_INPUT_KEY not in m.additional_properties])

    def __init__(
        self, *, agent_id: str | None = None, continuation_token: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(continuation_token=continuation_token, **kwargs)
        self.agent_id = agent_id

    @classmethod
    def from_chat_response(
        cls, response: ChatResponse, *, agent_id: str | None = None, author_name: str | None = None
    ) -> AgentResponse:
        """Wrap a chat response as the agent's answer, naming the agent as author of its messages."""
        if author_name:
            for message in response.messages:
                if message.role == "assistant" and message.author_name is None:
                    message.author_name = author_name
        if cls is AgentResponse:
            # Every agent turn ends here: the fields __init__ would set, written without its keyword passing.
            wrapped = object.__new__(cls)
            wrapped.messages = list(response.messages)
            wrapped.response_id = response.response_id
            wrapped.conversation_id = response.conversation_id
            wrapped.model_id = response.model_id
            wrapped.created_at = response.created_at
            wrapped.finish_reason = response.finish_reason
            wrapped.usage_details = response.usage_details
            wrapped._value = response._value
            wrapped._response_format = response._response_format
            wrapped.additional_properties = response.additional_properties or {}
            wrapped.raw_representation = response
            wrapped.continuation_token = response.continuation_token
            wrapped.agent_id = agent_id
            return wrapped
        return cls(
            messages=response.messages,
            response_id=response.response_id,
            agent_id=agent_id,
            conversation_id=response.conversation_id,
            model_id=response.model_id,
            created_at=response.created_at,
            finish_reason=response.finish_reason,
            usage_details=response.usage_details,
            value=response._value,
            response_format=response._response_format,
            additional_properties=response.additional_properties,
            raw_representation=response,
            continuation_token=response.continuation_token,
        )

    @classmethod
    def from_updates(cls, updates: Iterable[AgentResponseUpdate], *, output_format_type: Any = None) -> AgentResponse:
        """Assemble the response a stream of agent updates describes."""
        items = list(updates)
        response = cls(response_format=output_format_type)
        response._assemble(items, (*_CARRIED, "agent_id"))
        return response

    @classmethod
    async def from_update_generator(
        cls, updates: AsyncIterable[AgentResponseUpdate], *, output_format_type: Any = None
    ) -> AgentResponse:
        """Drain an async stream of agent updates and assemble its response."""
        return cls.from_updates([u async for u in updates], output_format_type=output_format_type)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentResponse:
        """Rebuild a response from :meth:`to_dict` output."""
        return cls(**cls._kwargs_from_dict(data))


_UPDATE_CLASSES = frozenset((ChatResponseUpdate, AgentResponseUpdate))
"""A map's usual results, known not to be awaitable (a transform may return an awaitable of the update)."""

_NOT_PULLED: Any = object()
"""``ResponseStream._next_slowly``'s "nothing pulled yet" (``None`` may be an update)."""


class _Splicing:
    """A splice in progress: the spliced stream, its fused layers, and the source iterator and steps to resume."""

    __slots__ = ("layers", "source", "steps", "stream")

    def __init__(
        self,
        stream: ResponseStream[Any, Any],
        layers: list[ResponseStream[Any, Any]],
        source: AsyncIterator[Any] | None,
        steps: list[tuple[Callable[[Any], Any] | None, Callable[[Any], None]]],
    ) -> None:
        self.stream = stream
        self.layers = layers
        self.source = source
        self.steps = steps


class StreamSplice:
    """What a stream's source yields to hand a whole inner stream through in its place.

    The :class:`ResponseStream` iterating the source then pulls the inner stream's updates itself (its plain
    layers fused, each recording its own updates), as if the source had yielded each of them, without a
    generator step of the source per update. When the inner stream ends it finalizes, and the source resumes
    after the ``yield``; when it fails the error is thrown into the source at the ``yield``. Closing the outer
    stream closes the inner one, then the source. The function-invocation loop yields its model calls' streams
    this way; consumers never see the splice.
    """

    __slots__ = ("stream",)

    def __init__(self, stream: ResponseStream[Any, Any]) -> None:
        self.stream = stream


class ResponseStream(Generic[_UpdateT, _FinalT]):
    """A streamed response: iterate it for updates, then ``await stream.get_final_response()``.

    Nothing runs until the stream is iterated or awaited. The final response is assembled once from the
    updates that were streamed, so asking for it never re-runs the model. As in the reference, behaviour can
    be layered on without consuming the stream twice:

    - transform hooks (``transform_hooks=[...]`` / :meth:`with_transform_hook`) see each update as it is
      yielded and may return a replacement for the consumer (``None`` keeps it); :attr:`updates` and the
      finalizer keep the update as it came;
    - cleanup hooks (:meth:`with_cleanup_hook`) run once when the stream ends, however it ends (exhausted,
      failed, closed), before the finalizer;
    - the finalizer turns the updates into the final response (without one, the final is the update list);
    - result hooks (:meth:`with_result_hook`) see the final response and may return a replacement.

    The finalizer and result hooks run once, when the stream is exhausted or :meth:`get_final_response` is
    called, whichever comes first. :meth:`map`, :meth:`flat_map` and :meth:`with_finalizer` make an outer
    stream over this one: the inner stream keeps its own hooks and finalizes first.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient

        stream = Agent(ScriptedChatClient(["Hello there"])).run("Hi", stream=True)
        async for update in stream:
            print(update.text, end="")
        final = await stream.get_final_response()
        ```
    """

    def __init__(
        self,
        stream: AsyncIterable[_UpdateT] | Awaitable[AsyncIterable[_UpdateT]],
        finalizer: Callable[[list[_UpdateT]], _FinalT | Awaitable[_FinalT]] | None = None,
        *,
        transform_hooks: Sequence[Callable[[_UpdateT], _UpdateT | Awaitable[_UpdateT | None] | None]] | None = None,
        cleanup_hooks: Sequence[Callable[[], Awaitable[None] | None]] | None = None,
        result_hooks: Sequence[Callable[[_FinalT], _FinalT | Awaitable[_FinalT | None] | None]] | None = None,
    ) -> None:
        self._source: AsyncIterable[_UpdateT] | Awaitable[AsyncIterable[_UpdateT]] = stream
        self._iterator: AsyncIterator[_UpdateT] | None = None
        self._finalizer = finalizer
        self._updates: list[_UpdateT] = []
        self._final: _FinalT | None = None
        self._consumed = False
        self._finalized = False
        self._transform_hooks = list(transform_hooks or ())
        self._cleanup_hooks = list(cleanup_hooks or ())
        self._result_hooks = list(result_hooks or ())
        self._cleanup_run = False
        self._inner: ResponseStream[Any, Any] | None = None  # the stream this one wraps (map, with_finalizer)
        self._map: Callable[[Any], Any] | None = None
        self._flat_map: Callable[[Any], Any] | None = None
        self._pending: list[_UpdateT] = []
        self._pull_contexts: list[Callable[[], AbstractContextManager[Any]]] = []
        self._plain = not self._transform_hooks  # no hooks or mapping per update: __anext__'s short path
        # Plain streams this one iterates through (innermost first), pulled from their source directly: each
        # still maps and records its updates and finalizes, without an ``__anext__`` of its own per update.
        self._layers: list[ResponseStream[Any, Any]] = []
        self._steps: list[tuple[Callable[[Any], Any] | None, Callable[[Any], None]]] = []
        # While a source's StreamSplice is iterated: what to go back to (see _enter_splice).
        self._splice: _Splicing | None = None

    @property
    def updates(self) -> list[_UpdateT]:
        """The updates streamed so far, as they came (before the transform hooks, as in the reference)."""
        return self._updates

    # -- layering -----------------------------------------------------------------------------------------
    def _wrapped(
        self, finalizer: Callable[[list[Any]], Any] | None, *, map_update: Any = None, flat_map: Any = None
    ) -> Any:
        outer: ResponseStream[Any, Any] = ResponseStream(self, finalizer)
        outer._inner = self
        outer._map = map_update
        outer._flat_map = flat_map
        # A mapping alone keeps the short path too (most layers are one: chat updates relabelled for an agent).
        outer._plain = flat_map is None
        return outer

    def map(
        self,
        transform: Callable[[_UpdateT], _OuterUpdateT | Awaitable[_OuterUpdateT]],
        finalizer: Callable[[list[_OuterUpdateT]], _OuterFinalT | Awaitable[_OuterFinalT]],
    ) -> ResponseStream[_OuterUpdateT, _OuterFinalT]:
        """An outer stream yielding ``transform(update)`` for each update, finalized by ``finalizer``.

        Iterating the outer stream consumes this one (once); this stream's finalizer and result hooks still
        run, before the outer ones.
        """
        return cast("ResponseStream[_OuterUpdateT, _OuterFinalT]", self._wrapped(finalizer, map_update=transform))

    def flat_map(
        self,
        transform: Callable[[_UpdateT], Iterable[_OuterUpdateT] | Awaitable[Iterable[_OuterUpdateT]]],
        finalizer: Callable[[list[_OuterUpdateT]], _OuterFinalT | Awaitable[_OuterFinalT]],
    ) -> ResponseStream[_OuterUpdateT, _OuterFinalT]:
        """Like :meth:`map`, but each update becomes zero or more updates."""
        return cast("ResponseStream[_OuterUpdateT, _OuterFinalT]", self._wrapped(finalizer, flat_map=transform))

    def with_finalizer(
        self, finalizer: Callable[[list[_UpdateT]], _OuterFinalT | Awaitable[_OuterFinalT]]
    ) -> ResponseStream[_UpdateT, _OuterFinalT]:
        """An outer stream with the same updates and another finalizer (this stream still finalizes first)."""
        return cast("ResponseStream[_UpdateT, _OuterFinalT]", self._wrapped(finalizer))

    @classmethod
    def from_awaitable(
        cls, awaitable: Awaitable[ResponseStream[_UpdateT, _FinalT]]
    ) -> ResponseStream[_UpdateT, _FinalT]:
        """A stream over the stream ``awaitable`` resolves to (its final response is that stream's)."""
        outer: ResponseStream[_UpdateT, _FinalT] = cls(cast("Awaitable[AsyncIterable[_UpdateT]]", awaitable))
        outer._inner = outer  # marks it as wrapping: the inner stream is known once resolved
        return outer

    @classmethod
    def buffered_and_gated(
        cls,
        *,
        consume: Callable[[], Awaitable[tuple[list[_UpdateT], _FinalT]]],
        gate: Callable[[list[_UpdateT], _FinalT], Awaitable[tuple[_FinalT, bool]]],
        rederive: Callable[[_FinalT], list[_UpdateT]],
    ) -> ResponseStream[_UpdateT, _FinalT]:
        """A stream that releases nothing until a gate has judged the whole response (e.g. a content policy).

        On first pull (or :meth:`get_final_response`) ``consume()`` returns every update and the final response;
        the transform and result hooks added so far are applied to them, then ``gate(updates, final)`` returns
        the response to keep and whether it changed it. From then on the stream is sealed (adding a hook raises
        ``RuntimeError``): when the gate or a hook changed anything, the released updates are
        ``rederive(final)``, so nothing the gate did not see leaves; otherwise the buffered updates are released
        as they came. A failing ``rederive`` releases nothing (the gated final response is still returned).
        """
        return _GatedResponseStream(consume, gate, rederive)

    def with_transform_hook(
        self, hook: Callable[[_UpdateT], _UpdateT | Awaitable[_UpdateT | None] | None]
    ) -> ResponseStream[_UpdateT, _FinalT]:
        """Add a hook that sees (and may replace) each update as it is yielded."""
        self._transform_hooks.append(hook)
        self._plain = False
        return self

    def with_result_hook(
        self, hook: Callable[[_FinalT], _FinalT | Awaitable[_FinalT | None] | None]
    ) -> ResponseStream[_UpdateT, _FinalT]:
        """Add a hook that sees (and may replace) the final response; a final already made is made again."""
        self._result_hooks.append(hook)
        self._finalized = False
        self._final = None
        return self

    def with_cleanup_hook(self, hook: Callable[[], Awaitable[None] | None]) -> ResponseStream[_UpdateT, _FinalT]:
        """Add a hook run once when the stream ends (exhausted, failed or closed), before the finalizer."""
        self._cleanup_hooks.append(hook)
        return self

    def with_pull_context_manager(
        self, cm_factory: Callable[[], AbstractContextManager[Any]]
    ) -> ResponseStream[_UpdateT, _FinalT]:
        """Enter ``cm_factory()`` around each pull from the underlying stream (e.g. to activate a span)."""
        self._pull_contexts.append(cm_factory)
        self._plain = False
        return self

    # -- iteration ----------------------------------------------------------------------------------------
    def __aiter__(self) -> AsyncIterator[_UpdateT]:
        return self

    async def _open(self) -> AsyncIterator[_UpdateT]:
        source = self._source
        if isinstance(source, AsyncIterable):
            iterable: AsyncIterable[_UpdateT] = source
        else:
            iterable = await source
            if self._inner is self:  # from_awaitable: the stream it resolved to is the inner one
                inner: object = iterable
                self._inner = cast("ResponseStream[Any, Any]", inner) if isinstance(inner, ResponseStream) else None
            self._source = iterable
        if isinstance(iterable, ResponseStream):
            layer = cast("ResponseStream[Any, Any]", iterable)
            if layer._plain and not layer._consumed and not layer._pending:
                if layer._iterator is None:
                    await layer._open()  # fuses the layers under it
                self._layers = [*layer._layers, layer]
                self._steps = [(each._map, each._updates.append) for each in self._layers]
                self._iterator = cast("AsyncIterator[_UpdateT]", layer._iterator)
                return self._iterator
        self._iterator = aiter(cast("AsyncIterable[_UpdateT]", iterable))
        return self._iterator

    async def _through_layers(self, update: Any) -> Any:
        """What the fused layers make of an update pulled from the innermost source (each records its own)."""
        for transform, record in self._steps:
            if transform is not None:
                update = transform(update)
                if update.__class__ not in _UPDATE_CLASSES and hasattr(update, "__await__"):
                    update = await update
            record(update)
        return update

    async def __anext__(self) -> _UpdateT:
        iterator = self._iterator
        if iterator is not None and self._plain:  # the common case, kept as cheap as a bare iterator
            try:
                update = await anext(iterator)
            except StopAsyncIteration:
                if self._splice is not None:  # the spliced stream ended: back to the source
                    return await self._next_slowly(await self._leave_splice(None))
                await self._exhausted()
                raise
            except BaseException as error:
                if self._splice is not None:
                    return await self._next_slowly(await self._leave_splice(error))
                await self._run_cleanup_hooks()
                raise
            if update.__class__ is StreamSplice:
                return await self._next_slowly(update)
            for transform, record in self._steps:  # the fused layers (see _through_layers), inline: per chunk
                if transform is not None:
                    update = transform(update)
                    if update.__class__ not in _UPDATE_CLASSES and hasattr(update, "__await__"):
                        update = await cast("Awaitable[Any]", update)
                record(update)
            if self._map is not None:
                update = self._map(update)
                # isinstance(.., Awaitable) asks the ABC, and hasattr looks through every class: slow per chunk.
                if update.__class__ not in _UPDATE_CLASSES and hasattr(update, "__await__"):
                    update = await cast("Awaitable[_UpdateT]", update)
            self._updates.append(update)
            return update
        return await self._next_slowly()

    async def _exhausted(self) -> None:
        for layer in self._layers:  # innermost first, as each would on reaching the end itself
            await layer._exhausted()
        self._consumed = True
        self._plain = False
        await self._run_cleanup_hooks()
        await self.get_final_response()

    async def _next_slowly(self, pulled: Any = _NOT_PULLED) -> _UpdateT:
        """The next update, every case handled; ``pulled`` is an item already taken from the source."""
        if self._pending:
            return await self._record(self._pending.pop(0))
        if self._consumed:
            raise StopAsyncIteration
        while True:
            if pulled is not _NOT_PULLED:
                update, pulled = pulled, _NOT_PULLED
            else:
                try:
                    if self._pull_contexts:
                        with ExitStack() as stack:
                            for factory in self._pull_contexts:
                                stack.enter_context(factory())
                            update = await anext(self._iterator or await self._open())
                    else:
                        update = await anext(self._iterator or await self._open())
                except StopAsyncIteration:
                    if self._splice is not None:
                        pulled = await self._leave_splice(None)
                        continue
                    await self._exhausted()
                    raise
                except BaseException as error:
                    if self._splice is not None:
                        pulled = await self._leave_splice(error)
                        continue
                    await self._run_cleanup_hooks()
                    raise
            if update.__class__ is StreamSplice:
                await self._enter_splice(cast(StreamSplice, update).stream)
                continue
            if self._steps:
                update = await self._through_layers(update)
            if self._flat_map is not None:
                expanded = self._flat_map(update)
                if isinstance(expanded, Awaitable):
                    expanded = await cast("Awaitable[Iterable[_UpdateT]]", expanded)
                self._pending.extend(cast("Iterable[_UpdateT]", expanded))
                if not self._pending:
                    continue
                update = self._pending.pop(0)
            elif self._map is not None:
                mapped = self._map(update)
                update = await cast("Awaitable[_UpdateT]", mapped) if isinstance(mapped, Awaitable) else mapped
            return await self._record(update)

    async def _enter_splice(self, stream: ResponseStream[Any, Any]) -> None:
        """Pull ``stream``'s updates in place of the source's until it ends (see :class:`StreamSplice`)."""
        if stream._plain and not stream._consumed and not stream._pending:
            if stream._iterator is None:
                await stream._open()  # fuses the layers under it
            layers = [*stream._layers, stream]
            iterator: AsyncIterator[Any] = cast("AsyncIterator[Any]", stream._iterator)
        else:  # hooks of its own: it is iterated as it is
            layers, iterator = [], stream
        self._splice = _Splicing(stream, layers, self._iterator, self._steps)
        self._iterator = iterator
        self._steps = [*((each._map, each._updates.append) for each in layers), *self._steps]

    async def _leave_splice(self, error: BaseException | None) -> Any:
        """The spliced stream ended (or failed with ``error``): finish it and take the source's next item."""
        splicing = cast(_Splicing, self._splice)
        self._splice = None
        self._iterator, self._steps = splicing.source, splicing.steps
        try:
            if error is None:
                for layer in splicing.layers:  # innermost first, as each would on reaching the end itself
                    await layer._exhausted()
            else:
                for layer in splicing.layers:
                    await layer._run_cleanup_hooks()
        except BaseException as failed:  # a finalizer or cleanup hook failed: the source hears of that
            error = failed
        source: Any = splicing.source
        try:
            if error is None:
                return await anext(source)
            thrower = getattr(source, "athrow", None)
            if thrower is None:
                raise error
            return await thrower(error)
        except StopAsyncIteration:
            await self._exhausted()
            raise
        except BaseException:
            await self._run_cleanup_hooks()
            raise

    async def _record(self, update: _UpdateT) -> _UpdateT:
        self._updates.append(update)  # as the reference: the finalizer sees the updates before the hooks
        for hook in self._transform_hooks:
            hooked = hook(update)
            if isinstance(hooked, Awaitable):
                hooked = await cast("Awaitable[_UpdateT | None]", hooked)
            if hooked is not None:
                update = hooked
        return update

    async def _run_cleanup_hooks(self) -> None:
        if self._cleanup_run:
            return
        self._cleanup_run = True
        for layer in self._layers:
            await layer._run_cleanup_hooks()
        for hook in self._cleanup_hooks:
            done = hook()
            if isinstance(done, Awaitable):
                await done

    # -- the final response -------------------------------------------------------------------------------
    async def get_final_response(self) -> _FinalT:
        """Drain the stream if needed and return the assembled final response (made once)."""
        if not self._finalized:
            if not self._consumed:
                async for _ in self:
                    pass
            if self._finalized:  # reaching the end finalized it
                return cast(_FinalT, self._final)
            inner = self._inner
            result: Any
            if self._finalizer is not None:
                if inner is not None:
                    await inner.get_final_response()  # the inner layer's finalizer and result hooks run first
                result = self._finalizer(self._updates)
                if isinstance(result, Awaitable):
                    result = await cast("Awaitable[_FinalT]", result)
            elif inner is not None and inner is not self:
                result = await inner.get_final_response()
            else:
                result = list(self._updates)
            for hook in self._result_hooks:
                hooked: Any = hook(result)
                if isinstance(hooked, Awaitable):
                    hooked = await cast("Awaitable[_FinalT | None]", hooked)
                if hooked is not None:
                    result = hooked
            self._final = cast(_FinalT, result)
            self._finalized = True
        return cast(_FinalT, self._final)

    def __await__(self) -> Generator[Any, None, _FinalT]:
        return self.get_final_response().__await__()

    async def aclose(self) -> None:
        """Stop the stream early, closing the model call and any open HTTP stream (cleanup hooks run)."""
        splicing, self._splice = self._splice, None
        if splicing is None:
            await self._close_source()
            return
        self._iterator, self._steps = splicing.source, splicing.steps
        try:  # the spliced stream first, then the source that yielded it
            await splicing.stream.aclose()
        finally:
            await self._close_source()

    async def _close_source(self) -> None:
        for stream in (*self._layers, self):
            stream._consumed = True
            stream._plain = False
            stream._pending.clear()
        try:
            closer = getattr(self._iterator or self._source, "aclose", None)
            if closer is not None:
                await closer()
        finally:
            await self._run_cleanup_hooks()


async def _nothing() -> AsyncIterator[Any]:
    return
    yield


class _GatedResponseStream(ResponseStream[_UpdateT, _FinalT]):
    """:meth:`ResponseStream.buffered_and_gated`: consumes, hooks and gates once, then releases."""

    def __init__(
        self,
        consume: Callable[[], Awaitable[tuple[list[_UpdateT], _FinalT]]],
        gate: Callable[[list[_UpdateT], _FinalT], Awaitable[tuple[_FinalT, bool]]],
        rederive: Callable[[_FinalT], list[_UpdateT]],
    ) -> None:
        super().__init__(_nothing())
        self._consume = consume
        self._gate = gate
        self._rederive = rederive
        self._sealed = False
        self._rederive_needed = False
        self._released: list[_UpdateT] | None = None
        self._plain = False  # an outer stream must pull through the gate, never fuse onto its empty source

    def with_transform_hook(
        self, hook: Callable[[_UpdateT], _UpdateT | Awaitable[_UpdateT | None] | None]
    ) -> ResponseStream[_UpdateT, _FinalT]:
        self._refuse_when_sealed()
        self._transform_hooks.append(hook)
        return self

    def with_result_hook(
        self, hook: Callable[[_FinalT], _FinalT | Awaitable[_FinalT | None] | None]
    ) -> ResponseStream[_UpdateT, _FinalT]:
        self._refuse_when_sealed()
        self._result_hooks.append(hook)
        return self

    def _refuse_when_sealed(self) -> None:
        if self._sealed:
            raise RuntimeError("The gated stream is sealed: its gate has judged the response, hooks come too late.")

    async def _judge(self) -> None:
        """Consume, apply the hooks added so far, and gate (once)."""
        if self._sealed:
            return
        buffered, final = await self._consume()
        hooked = bool(self._transform_hooks or self._result_hooks)
        updates: list[_UpdateT] = []
        for update in buffered:
            for hook in self._transform_hooks:
                changed: Any = hook(update)
                if isinstance(changed, Awaitable):
                    changed = await cast("Awaitable[_UpdateT | None]", changed)
                if changed is not None:
                    update = changed
            updates.append(update)
        for result_hook in self._result_hooks:
            replaced: Any = result_hook(final)
            if isinstance(replaced, Awaitable):
                replaced = await cast("Awaitable[_FinalT | None]", replaced)
            if replaced is not None:
                final = replaced
        gated, transformed = await self._gate(updates, final)
        self._sealed = True
        self._final, self._finalized, self._consumed = gated, True, True
        self._updates = list(buffered)
        self._rederive_needed = hooked or transformed
        if not self._rederive_needed:
            self._released = list(buffered)

    async def __anext__(self) -> _UpdateT:
        if self._released is None:
            await self._judge()
            if self._released is None:
                self._released = list(self._rederive(cast(_FinalT, self._final)))
        if not self._released:
            raise StopAsyncIteration
        return self._released.pop(0)

    async def get_final_response(self) -> _FinalT:
        await self._judge()
        return cast(_FinalT, self._final)


def now() -> float:
    """Seconds since the epoch, as stored in ``created_at``."""
    return time.time()


def _register_stable_ids() -> None:
    from ._serialization import register_type

    register_type(Message, "agentnb.Message")
    register_type(Content, "agentnb.Content")
    register_type(ChatResponse, "agentnb.ChatResponse")
    register_type(AgentResponse, "agentnb.AgentResponse")
    register_type(ChatResponseUpdate, "agentnb.ChatResponseUpdate")
    register_type(AgentResponseUpdate, "agentnb.AgentResponseUpdate")


_register_stable_ids()
