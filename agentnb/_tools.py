"""Tools: Python functions the model may call, described by a JSON schema derived from their type hints.

A :class:`FunctionTool` validates the model's arguments with pydantic before the function runs, so a
function body only ever sees arguments of the declared types. Errors are not raised into the run: the
function-invocation loop turns them into a ``function_result`` with an error text the model can read.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
    Protocol,
    cast,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)
from typing import runtime_checkable as _runtime_checkable

from ._json import is_json_object, is_list_or_tuple
from ._telemetry_layers import traced_tool_invoke
from .exceptions import ToolArgumentsError, ToolError, ToolSchemaError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ._middleware import FunctionInvocationContext
    from ._types import Content

__all__ = [
    "SKIP_PARSING",
    "ApprovalMode",
    "FunctionTool",
    "SupportsToolExpansion",
    "ToolLike",
    "is_hosted_tool",
    "resolve_tools",
    "result_to_text",
    "split_hosted_tools",
    "to_tool",
    "tool",
]

ApprovalMode = Literal["always_require", "never_require"]
_APPROVAL_MODES = ("always_require", "never_require")


@_runtime_checkable
class SupportsToolExpansion(Protocol):
    """Something that stands for several tools, resolved when a run starts (for example an MCP server)."""

    async def get_tools(self) -> Sequence[FunctionTool]:
        """Return the tools this object provides (connecting first if needed)."""
        ...


ToolLike = "FunctionTool | Callable[..., Any] | SupportsToolExpansion"


class _SkipParsing:
    """The type of :data:`SKIP_PARSING` (one instance only)."""

    _instance: _SkipParsing | None = None

    def __new__(cls) -> _SkipParsing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "SKIP_PARSING"


SKIP_PARSING: Final[_SkipParsing] = _SkipParsing()
"""``result_parser=SKIP_PARSING``: :meth:`FunctionTool.invoke` returns what the function returns, unparsed."""

ResultParser = Callable[[Any], "str | list[Content]"]


def _is_context_annotation(annotation: Any) -> bool:
    from ._middleware import FunctionInvocationContext

    if annotation is FunctionInvocationContext:
        return True
    if isinstance(annotation, str):
        return "FunctionInvocationContext" in annotation
    # Optional[FunctionInvocationContext] and friends
    return any(arg is FunctionInvocationContext for arg in get_args(annotation))


def _field_for(annotation: Any, default: Any) -> tuple[Any, Any]:
    """Translate ``Annotated[T, "description"]`` into a pydantic field."""
    from pydantic import Field
    from pydantic.fields import FieldInfo

    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        description = next((e for e in extras if isinstance(e, str)), None)
        field_infos = [e for e in extras if isinstance(e, FieldInfo)]
        if description is not None and not field_infos:
            field = (
                Field(default=default, description=description)
                if default is not ...
                else Field(description=description)
            )
            return base, field
    return annotation, default


class FunctionTool:
    """A tool backed by a Python function (sync or async), or declared by a JSON schema only.

    Args:
        func: The function to call; ``None`` for a declaration the caller executes itself.
        name: The name the model sees (defaults to the function's name).
        description: What the tool does (defaults to the docstring).
        approval_mode: ``"always_require"`` makes every call wait for a person's approval.
        max_invocations: Calls allowed over the tool's lifetime; later calls return an error to the model.
        max_invocation_exceptions: Failed calls allowed over the tool's lifetime; once reached, later calls
            return an error to the model instead of running a tool that keeps failing.
        input_model: A pydantic model or a JSON schema dict for the arguments (derived from ``func``
            when omitted).
        additional_properties: Metadata such as ``server_label`` for tools that come from a server.
        result_parser: Turns the function's return value into text or contents for :meth:`invoke` (default
            :meth:`parse_result`); :data:`SKIP_PARSING` makes :meth:`invoke` return the value unparsed.

    A sync function runs in a worker thread when called through :meth:`invoke`, so it never blocks the event
    loop; the function loop runs it on the loop (:meth:`invoke_raw`), as agentnb always has.

    Example:
        ```python
        from agentnb import FunctionTool

        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b

        adder = FunctionTool(add)
        await adder.invoke(arguments={"a": 1, "b": 2})  # [Content('text', text='3')]
        await adder.invoke(arguments={"a": 1, "b": 2}, skip_parsing=True)  # 3
        ```
    """

    def __init__(
        self,
        func: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        approval_mode: ApprovalMode = "never_require",
        max_invocations: int | None = None,
        max_invocation_exceptions: int | None = None,
        input_model: type[BaseModel] | dict[str, Any] | None = None,
        additional_properties: dict[str, Any] | None = None,
        result_parser: ResultParser | _SkipParsing | None = None,
    ) -> None:
        if func is None and name is None:
            raise ValueError("A FunctionTool needs a function or at least a name.")
        if approval_mode not in _APPROVAL_MODES:
            raise ValueError(f"approval_mode must be one of {_APPROVAL_MODES}, got {approval_mode!r}")
        if max_invocations is not None and max_invocations < 1:
            raise ValueError(f"max_invocations must be >= 1, got {max_invocations}")
        if max_invocation_exceptions is not None and max_invocation_exceptions < 1:
            raise ValueError(f"max_invocation_exceptions must be >= 1, got {max_invocation_exceptions}")
        self.func = func
        self.name: str = name or getattr(func, "__name__", "tool")
        doc = inspect.getdoc(func) if func is not None else None
        self.description: str = description if description is not None else (doc or "").strip()
        self.approval_mode: ApprovalMode = approval_mode
        self.max_invocations = max_invocations
        self.invocation_count = 0
        self.max_invocation_exceptions = max_invocation_exceptions
        self.invocation_exception_count = 0
        self.additional_properties: dict[str, Any] = additional_properties or {}
        self.result_parser: ResultParser | _SkipParsing | None = result_parser
        self._input_model = input_model
        self._schema: dict[str, Any] | None = input_model if isinstance(input_model, dict) else None
        self._context_param: str | None = None
        self._accepts_kwargs = False
        self._is_async = False
        self._instance: Any = None  # the object a method-tool is bound to (see __get__)
        self._invoke_sync_on_event_loop = False  # see sync_on_event_loop
        # A histogram of this tool's invocation durations (None: agentnb's process-wide tool metrics only).
        self._invocation_duration_histogram: Any = None
        if func is not None:
            self._inspect_function(func, explicit_schema=input_model is not None)

    def _inspect_function(self, func: Callable[..., Any], *, explicit_schema: bool) -> None:
        target = func.__call__ if not inspect.isroutine(func) and callable(func) else func  # type: ignore[operator]
        self._is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(func)
        signature = inspect.signature(func)
        for param in signature.parameters.values():
            if param.kind is param.VAR_KEYWORD:
                self._accepts_kwargs = True
            elif param.name in ("self", "cls") or param.kind is param.VAR_POSITIONAL:
                continue
            elif _is_context_annotation(param.annotation) or (
                # With a schema of its own, an unannotated ``ctx`` is the context (as in the reference).
                explicit_schema and param.name == "ctx" and param.annotation is inspect.Parameter.empty
            ):
                if self._context_param is not None:
                    raise ValueError(f"Function '{self.name}' defines multiple FunctionInvocationContext parameters.")
                self._context_param = param.name

    def __get__(self, obj: object, objtype: type | None = None) -> FunctionTool:
        """A tool defined in a class, read from an instance, is bound to that instance (as a method is)."""
        if obj is None or self.func is None:
            return self
        first = next(iter(inspect.signature(self.func).parameters), None)
        if first not in ("self", "cls"):
            return self
        bound = copy.copy(self)
        bound._instance = obj
        return bound

    @property
    def sync_on_event_loop(self) -> bool:
        """Whether a sync function runs on the event loop through :meth:`invoke` too (for one that needs the loop)."""
        return self._invoke_sync_on_event_loop

    @sync_on_event_loop.setter
    def sync_on_event_loop(self, value: bool) -> None:
        self._invoke_sync_on_event_loop = value

    @property
    def declaration_only(self) -> bool:
        """Whether the tool has no function: the caller executes its calls (the loop returns them unexecuted)."""
        return self.func is None

    # -- schema ------------------------------------------------------------------------------------------
    @property
    def input_model(self) -> type[BaseModel] | None:
        """The pydantic model that validates arguments (``None`` for schema-only tools)."""
        if self._input_model is None and self.func is not None:
            self._input_model = self._build_input_model(self.func)
        return self._input_model if not isinstance(self._input_model, dict) else None

    def _build_input_model(self, func: Callable[..., Any]) -> type[BaseModel]:
        from pydantic import ConfigDict, create_model

        try:
            hints = get_type_hints(func, include_extras=True)
        except Exception as e:
            raise ToolSchemaError(f"Cannot read the type hints of tool {self.name!r}: {e}") from e
        fields: dict[str, Any] = {}
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name == self._context_param:
                continue
            if param.name in ("self", "cls"):
                continue
            annotation = hints.get(param.name, Any)
            if _is_context_annotation(annotation):
                self._context_param = param.name
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = _field_for(annotation, default)
        model_name = f"{self.name}_input"  # the reference's name, which the schema's title shows
        try:
            return create_model(model_name, __config__=ConfigDict(arbitrary_types_allowed=False), **fields)
        except Exception as e:
            raise ToolSchemaError(
                f"Cannot derive a JSON schema for tool {self.name!r}: {e}. Use JSON-friendly parameter types "
                "(str, int, float, bool, Literal, Enum, list, dict, pydantic models, dataclasses)."
            ) from e

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as sent to the model."""
        if self._schema is None:
            model = self.input_model
            if model is None:
                self._schema = {"type": "object", "properties": {}}
            else:
                self._schema = model.model_json_schema()  # its title names the input model, as the reference's
        return self._schema

    def to_json_schema_spec(self) -> dict[str, Any]:
        """The tool in the function-calling format most providers accept."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters()},
        }

    # -- definitions ---------------------------------------------------------------------------------------
    #: The ``type`` tag of :meth:`to_dict` output (Agent Framework's identifier for function tools).
    TYPE_ID = "function_tool"
    # Keys Agent Framework writes that describe a tool's past, not its definition: accepted and ignored.
    _IGNORED_KEYS = frozenset({"kind", "invocation_count", "invocation_exception_count"})

    def to_dict(self) -> dict[str, Any]:
        """The tool's definition as a JSON-safe dict (the function itself is not included).

        ``from_dict`` rebuilds the tool when given the function (or as a declaration-only tool without it).
        """
        data: dict[str, Any] = {
            "type": self.TYPE_ID,
            "name": self.name,
            "description": self.description,
            "approval_mode": self.approval_mode,
        }
        if self.max_invocations is not None:
            data["max_invocations"] = self.max_invocations
        if self.max_invocation_exceptions is not None:
            data["max_invocation_exceptions"] = self.max_invocation_exceptions
        data["input_model"] = self.parameters()
        return data

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string (``kwargs`` go to ``json.dumps``, e.g. ``indent=2``)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, value: dict[str, Any], /, *, dependencies: dict[str, Any] | None = None) -> FunctionTool:
        """Rebuild a tool from :meth:`to_dict` output, injecting what a definition cannot hold (the function).

        ``dependencies`` follows Agent Framework's shape: ``{"function_tool": {"func": f}}`` for any tool, or
        ``{"function_tool": {"name:add_numbers": {"func": f}}}`` for the tool of that name only.

        Raises:
            ValueError: The dict is another type's, or has keys a function tool does not take.
        """
        data = dict(value)
        kind = data.pop("type", cls.TYPE_ID)
        if kind != cls.TYPE_ID:
            raise ValueError(f"Type mismatch: expected {cls.TYPE_ID!r}, got {kind!r}.")
        injections: dict[str, Any] = (dependencies or {}).get(cls.TYPE_ID) or {}
        for key, injected in injections.items():
            if ":" not in key:
                data[key] = injected
                continue
            field_name, field_value = key.split(":", 1)
            if data.get(field_name) == field_value and isinstance(injected, dict):
                data.update(cast("dict[str, Any]", injected))
        for key in cls._IGNORED_KEYS:
            data.pop(key, None)
        allowed = {
            "func",
            "name",
            "description",
            "approval_mode",
            "max_invocations",
            "max_invocation_exceptions",
            "input_model",
            "additional_properties",
        }
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ValueError(f"FunctionTool.from_dict got unknown keys {unknown}; expected some of {sorted(allowed)}.")
        return cls(data.pop("func", None), **data)

    @classmethod
    def from_json(cls, value: str, /, *, dependencies: dict[str, Any] | None = None) -> FunctionTool:
        """Rebuild a tool from :meth:`to_json` output (see :meth:`from_dict`)."""
        return cls.from_dict(json.loads(value), dependencies=dependencies)

    @staticmethod
    def parse_result(result: Any) -> list[Content]:
        """A tool's return value as contents, the form a function result carries to the model.

        Text stays text; contents (images, files) are kept as they are, also inside a list; anything else
        becomes its JSON text (as :func:`result_to_text` writes it).

        Example:
            >>> [c.text for c in FunctionTool.parse_result({"temperature": 21})]
            ['{"temperature": 21}']
        """
        from ._types import Content

        if isinstance(result, Content):
            return [result]
        if isinstance(result, list):
            items = cast("list[Any]", result)
            if any(isinstance(item, Content) for item in items):
                return [
                    item if isinstance(item, Content) else Content.from_text(result_to_text(item)) for item in items
                ]
        return [Content.from_text(result_to_text(result))]

    # -- invocation --------------------------------------------------------------------------------------
    def validate_arguments(self, arguments: Mapping[str, Any] | BaseModel | None) -> dict[str, Any]:
        """Check the model's arguments against the schema; the function's keyword arguments.

        Raises:
            ToolArgumentsError: The arguments do not fit (a ``TypeError`` and a ``ValueError`` too).
        """
        model = self.input_model
        # Pydantic is imported here only off the common path (a dict of arguments that validates): a
        # ``from pydantic import ...`` on every call costs more than the validation of a small dict.
        if arguments is not None and not isinstance(arguments, dict):
            from pydantic import BaseModel

            given = cast(object, arguments)
            if isinstance(given, BaseModel):
                if model is not None and not isinstance(given, model):
                    raise ToolArgumentsError(f"Expected {model.__name__}, got {type(given).__name__}")
                arguments = {k: getattr(given, k) for k in type(given).model_fields if k in given.model_fields_set}
            elif not isinstance(given, Mapping):
                raise ToolArgumentsError(
                    f"Expected mapping-like arguments for tool '{self.name}', got {type(given).__name__}"
                )
        arguments = dict(arguments or {})
        if model is None:
            return _check_against_schema(arguments, self.parameters(), self.name)
        try:
            validated = model.model_validate(arguments)
        except Exception as e:
            from pydantic import ValidationError

            if not isinstance(e, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in e.errors(include_url=False)
            )
            raise ToolArgumentsError(f"Invalid arguments for tool {self.name!r}: {problems}") from None
        # A model's __dict__ holds exactly its field values (extras and private attributes live elsewhere).
        values = dict(validated.__dict__)
        if self._accepts_kwargs:
            values.update({k: v for k, v in arguments.items() if k not in values})
        return values

    def _prepare(
        self, arguments: Mapping[str, Any] | BaseModel | None, context: FunctionInvocationContext | None
    ) -> dict[str, Any]:
        """The function's keyword arguments: validated arguments, the context, and the run's kwargs."""
        if self.func is None:
            raise ToolError(f"Function '{self.name}' is declaration only and cannot be invoked.")
        if arguments is None and context is not None:
            arguments = context.arguments  # a context built for this call carries its arguments
        values = self.validate_arguments(arguments)
        if self._context_param is not None:
            values[self._context_param] = context  # None outside a run: the function can tell it has no run
        if self._accepts_kwargs and context is not None and context.kwargs:
            # Runtime values (``function_invocation_kwargs``) reach a function that takes ``**kwargs``.
            values.update({k: v for k, v in context.kwargs.items() if k not in values})
        return values

    async def _call(self, values: dict[str, Any], *, in_thread: bool) -> Any:
        """Enforce the invocation limits, count the call and call the function with ``values``.

        A sync function runs in a worker thread when ``in_thread`` (unless it must stay on the loop).
        """
        if self.max_invocations is not None and self.invocation_count >= self.max_invocations:
            raise ToolError(
                f"Tool {self.name!r} has reached its limit of {self.max_invocations} invocation(s); "
                "answer without calling it again."
            )
        if (
            self.max_invocation_exceptions is not None
            and self.invocation_exception_count >= self.max_invocation_exceptions
        ):
            raise ToolError(
                f"Tool {self.name!r} has failed {self.invocation_exception_count} time(s), its limit; "
                "answer without calling it again."
            )
        self.invocation_count += 1
        func = self.func
        assert func is not None  # _prepare refused declaration-only tools
        args = () if self._instance is None else (self._instance,)
        try:
            if in_thread and not self._is_async and not self._invoke_sync_on_event_loop:
                result = await asyncio.to_thread(func, *args, **values)
            elif self._instance is None:  # the common case: no argument tuple to unpack
                result = func(**values)
            else:
                result = func(self._instance, **values)
            if self._is_async or (result is not None and type(result) is not str and inspect.isawaitable(result)):
                result = await result
        except Exception:
            self.invocation_exception_count += 1
            raise
        return result

    def _parse(self, result: Any) -> list[Content]:
        """``result`` as contents, through the tool's ``result_parser`` or :meth:`parse_result`."""
        parser = self.result_parser
        if callable(parser):
            try:
                parsed = parser(result)
            except Exception:
                self.invocation_exception_count += 1
                raise
        else:
            try:
                parsed = self.parse_result(result)
            except Exception:
                from ._types import Content

                parsed = [Content.from_text(str(result))]
        if isinstance(parsed, str):
            from ._types import Content

            return [Content.from_text(parsed)]
        return parsed

    @traced_tool_invoke
    async def invoke(
        self,
        *,
        arguments: Mapping[str, Any] | BaseModel | None = None,
        context: FunctionInvocationContext | None = None,
        tool_call_id: str | None = None,
        skip_parsing: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Validate the arguments and call the function; its result as contents (``list[Content]``).

        Arguments come as ``arguments`` (a mapping or the input model), as keywords named after the tool's
        parameters, or from ``context.arguments``. Runtime values reach the function through ``context``
        (its ``kwargs``), never as keywords here. ``skip_parsing=True`` (or ``result_parser=SKIP_PARSING``)
        returns what the function returns. ``tool_call_id`` names the call in telemetry.

        Raises:
            ToolArgumentsError: The arguments do not fit the schema (a ``TypeError`` and ``ValueError`` too).
            TypeError: A keyword is neither a parameter of the tool nor one of these.
            ToolError: The tool is a declaration only, or has reached an invocation limit.
        """
        if kwargs:
            names: Mapping[str, Any] = self.parameters().get("properties") or {} if arguments is None else {}
            unexpected = sorted(k for k in kwargs if k not in names)
            if unexpected:
                raise TypeError(
                    f"Unexpected keyword argument(s) for tool '{self.name}': {', '.join(unexpected)}. "
                    "Pass runtime data via FunctionInvocationContext instead."
                )
            arguments = kwargs
        result = await self._call(self._prepare(arguments, context), in_thread=True)
        if skip_parsing or self.result_parser is SKIP_PARSING:
            return result
        return self._parse(result)

    @traced_tool_invoke
    def invoke_raw(
        self,
        *,
        arguments: Mapping[str, Any] | BaseModel | None = None,
        context: FunctionInvocationContext | None = None,
    ) -> Awaitable[Any]:
        """Validate the arguments and call the function on the running loop; await it for what the function returns.

        The function loop's way to run a tool: no result parsing (the function result keeps the value) and
        no thread hop for a sync function. Raises as :meth:`invoke` (argument errors already on the call, not
        the await: it hands out the call's coroutine, one frame less per tool call).
        """
        return self._call(self._prepare(arguments, context), in_thread=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly, as if it were not a tool."""
        if self.func is None:
            raise ToolError(f"Function '{self.name}' is declaration only and cannot be invoked.")
        if self._instance is not None:
            return self.func(self._instance, *args, **kwargs)
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        approval = ", approval_mode='always_require'" if self.approval_mode == "always_require" else ""
        return f"FunctionTool(name={self.name!r}{approval})"


@overload
def tool(func: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    func: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    schema: type[BaseModel] | dict[str, Any] | None = None,
    approval_mode: ApprovalMode = "never_require",
    max_invocations: int | None = None,
    max_invocation_exceptions: int | None = None,
    additional_properties: dict[str, Any] | None = None,
    result_parser: ResultParser | _SkipParsing | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    schema: type[BaseModel] | dict[str, Any] | None = None,
    approval_mode: ApprovalMode = "never_require",
    max_invocations: int | None = None,
    max_invocation_exceptions: int | None = None,
    additional_properties: dict[str, Any] | None = None,
    result_parser: ResultParser | _SkipParsing | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Turn a function into a :class:`FunctionTool`; use bare (``@tool``) or with options.

    ``schema`` (a pydantic model or a JSON schema dict) replaces the schema derived from the signature;
    ``result_parser`` is :class:`FunctionTool`'s.

    Example:
        ```python
        from typing import Annotated
        from agentnb import tool

        @tool(approval_mode="always_require")
        def delete_file(path: Annotated[str, "The file to delete"]) -> str:
            \"\"\"Delete a file.\"\"\"
            return f"deleted {path}"
        ```
    """

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            f,
            name=name,
            description=description,
            approval_mode=approval_mode,
            max_invocations=max_invocations,
            max_invocation_exceptions=max_invocation_exceptions,
            input_model=schema,
            additional_properties=additional_properties,
            result_parser=result_parser,
        )

    return wrap(func) if func is not None else wrap


def to_tool(item: Any) -> FunctionTool:
    """``item`` (a function, an agent or a ``FunctionTool``) as a ``FunctionTool``; tool providers are not expanded."""
    if isinstance(item, FunctionTool):
        return item
    as_tool: Callable[[], FunctionTool] | None = getattr(item, "as_tool", None)
    if callable(as_tool) and hasattr(item, "run"):
        return as_tool()
    if callable(item):
        return FunctionTool(item)
    raise TypeError(f"Cannot use {item!r} as a tool; pass a function, a FunctionTool or an MCP tool.")


def is_hosted_tool(item: object) -> bool:
    """Whether ``item`` is a provider-hosted tool declaration (a dict such as ``{"type": "web_search"}``).

    The provider runs these tools itself, so they pass through the function loop to the request untouched.
    """
    return is_json_object(item)


def split_hosted_tools(tools: Sequence[Any] | Any | None) -> tuple[list[Any], list[Mapping[str, Any]]]:
    """``tools`` as (what agentnb runs, the hosted declarations it passes to the provider), order kept."""
    if tools is None:
        return [], []
    items: Sequence[Any] = tools if is_list_or_tuple(tools) else [tools]
    local: list[Any] = []
    hosted: list[Mapping[str, Any]] = []
    for item in items:
        if is_json_object(item):
            hosted.append(item)
        else:
            local.append(item)
    return local, hosted


async def resolve_tools(tools: Sequence[Any] | Any | None) -> list[FunctionTool]:
    """Flatten functions, tools, agents and tool providers (such as MCP servers) into FunctionTools.

    Names must be unique: two tools with one name would leave the model's choice ambiguous.
    """
    if tools is None:
        return []
    items: Sequence[Any] = tools if is_list_or_tuple(tools) else [tools]
    resolved: list[FunctionTool] = []
    for item in items:
        if isinstance(item, FunctionTool):
            resolved.append(item)
        elif isinstance(item, SupportsToolExpansion) and not isinstance(item, FunctionTool):
            resolved.extend(await item.get_tools())
        else:
            resolved.append(to_tool(item))
    seen: set[str] = set()
    for t in resolved:
        if t.name in seen:
            raise ValueError(f"Tool {t.name!r} is registered twice; pass name=... to one of them.")
        seen.add(t.name)
    return resolved


def result_to_text(result: Any) -> str:
    """How a tool's return value is shown to the model: strings as-is, everything else as JSON."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    dump = getattr(result, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        result = dataclasses.asdict(result)
    try:
        return json.dumps(result, default=_json_default, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return str(value)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def _check_against_schema(arguments: dict[str, Any], schema: Mapping[str, Any], tool_name: str) -> dict[str, Any]:
    """Check arguments against a JSON-schema-only tool's top level: required names, primitive types, enums.

    Nested constraints are not checked (a pydantic model is the way to full validation).
    """
    missing = [k for k in schema.get("required", []) if k not in arguments]
    if missing:
        raise ToolArgumentsError(f"Missing required argument(s) {missing} for tool {tool_name!r}.")
    properties: Mapping[str, Any] = schema.get("properties") or {}
    if schema.get("additionalProperties") is False:
        extra = sorted(k for k in arguments if k not in properties)
        if extra:
            raise ToolArgumentsError(f"Unexpected argument(s) {extra} for tool {tool_name!r}.")
    for key, value in arguments.items():
        spec = properties.get(key)
        if not isinstance(spec, Mapping):
            continue
        spec = cast("Mapping[str, Any]", spec)
        enum = spec.get("enum")
        if isinstance(enum, list) and value not in enum:
            raise ToolArgumentsError(
                f"Invalid value for '{key}' of tool {tool_name!r}: {value!r} is not one of {enum}."
            )
        declared = spec.get("type")
        listed = cast("list[Any]", declared) if isinstance(declared, list) else []
        names = [str(n) for n in ([declared] if isinstance(declared, str) else listed)]
        kinds = [_JSON_TYPES[n] for n in names if n in _JSON_TYPES]
        if not kinds:
            continue
        is_bool = isinstance(value, bool)
        if not any(isinstance(value, k) and (not is_bool or bool in k) for k in kinds):
            raise ToolArgumentsError(
                f"Invalid type for '{key}' of tool {tool_name!r}: expected {' or '.join(names)}, "
                f"got {type(value).__name__}."
            )
    return arguments
