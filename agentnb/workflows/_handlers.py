"""``@handler`` and ``@response_handler``: how an executor says which messages it accepts.

A handler's message type comes from the type hint of its message parameter (unions allowed); what it may
send and yield comes from its ``WorkflowContext[OutT, W_OutT]`` hint. When hints cannot be resolved
(types defined inside a function while the module uses ``from __future__ import annotations``), pass
them explicitly: ``@handler(input=Order, output=Invoice, workflow_output=str)``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from typing_extensions import Never

from ..exceptions import HandlerSignatureError
from ._context import WorkflowContext
from ._typing_utils import flatten

__all__ = ["HandlerSpec", "handler", "response_handler"]

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__agentnb_handler__"
_UNSET: Any = object()


@dataclass(slots=True)
class HandlerSpec:
    """What one handler accepts and may emit (resolved from its hints)."""

    name: str
    func: Callable[..., Any]
    input_type: Any
    output_types: tuple[Any, ...] | None
    workflow_output_types: tuple[Any, ...] | None
    takes_ctx: bool = True
    response_type: Any = None
    is_response: bool = False
    returns_message: bool = False
    bound: bool = False
    #: A bare ``WorkflowContext`` hint declares nothing: edges from it are not type-checked (a warning at build)
    #: and what it sends or yields is not checked at run time, as in the reference.
    undeclared_context: bool = False


def _mark(func: Any, kind: str, options: dict[str, Any]) -> Any:
    if not inspect.iscoroutinefunction(func):
        raise TypeError(f"@{kind} needs an async function; {getattr(func, '__qualname__', func)!r} is not async.")
    # A signature mistake surfaces where the class is written, as in the reference, unless a hint names a type
    # not defined yet: the executor resolves that when first used.
    with contextlib.suppress(HintResolutionError):
        resolve_handler(func, kind=kind, options=options, bound=False)
    setattr(func, _MARK, (kind, options))
    return func


class HintResolutionError(TypeError):
    """A handler's type hints name something that cannot be resolved (yet)."""


@overload
def handler(func: F, /) -> F: ...
@overload
def handler(
    func: None = None, /, *, input: Any = ..., output: Any = ..., workflow_output: Any = ...
) -> Callable[[F], F]: ...
def handler(func: Any = None, /, *, input: Any = _UNSET, output: Any = _UNSET, workflow_output: Any = _UNSET) -> Any:
    """Mark an executor method as a message handler: ``async def h(self, message: T, ctx: WorkflowContext[...])``.

    Args:
        func: The method (when used without parentheses).
        input: The accepted message type, instead of the parameter's hint.
        output: The types the handler may send, instead of the context's first type argument.
        workflow_output: The types it may yield, instead of the context's second type argument.

    Example:
        >>> from agentnb.workflows import Executor, WorkflowContext, handler
        >>> class Upper(Executor):
        ...     @handler
        ...     async def run(self, text: str, ctx: WorkflowContext[str]) -> None:
        ...         await ctx.send_message(text.upper())
    """
    options = {"input": input, "output": output, "workflow_output": workflow_output}
    if func is not None:
        return _mark(func, "handler", options)
    return functools.partial(_mark, kind="handler", options=options)


@overload
def response_handler(func: F, /) -> F: ...
@overload
def response_handler(
    func: None = None, /, *, request: Any = ..., response: Any = ..., output: Any = ..., workflow_output: Any = ...
) -> Callable[[F], F]: ...
def response_handler(
    func: Any = None,
    /,
    *,
    request: Any = _UNSET,
    response: Any = _UNSET,
    output: Any = _UNSET,
    workflow_output: Any = _UNSET,
) -> Any:
    """Mark a method that receives answers to ``ctx.request_info``: ``(self, original_request, response, ctx)``.

    The handler is chosen by the hints of ``original_request`` and ``response``.

    Example:
        >>> from agentnb.workflows import Executor, WorkflowContext, handler, response_handler
        >>> class Reviewer(Executor):
        ...     @handler
        ...     async def start(self, draft: str, ctx: WorkflowContext) -> None:
        ...         await ctx.request_info(request_data=draft, response_type=bool)
        ...     @response_handler
        ...     async def done(self, draft: str, approved: bool, ctx: WorkflowContext[str, str]) -> None:
        ...         await ctx.yield_output(f"{draft}: {'approved' if approved else 'rejected'}")
    """
    options = {"input": request, "response": response, "output": output, "workflow_output": workflow_output}
    if func is not None:
        return _mark(func, "response_handler", options)
    return functools.partial(_mark, kind="response_handler", options=options)


def is_marked(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """The (kind, options) a decorator left on ``obj``, if any."""
    return getattr(obj, _MARK, None)


def context_types(
    hint: Any, where: str = "The context parameter"
) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """The (send, yield) types declared by a ``WorkflowContext[...]`` hint; ``None`` means anything.

    Raises:
        HandlerSignatureError: The hint is not ``WorkflowContext[...]``, or an argument is not a type (an
            unresolved ``TypeVar``, or a value such as ``WorkflowContext[123]``), as the reference refuses.
    """
    if hint is Any:
        return None, None
    origin = typing.get_origin(hint)
    if hint is WorkflowContext or origin is None:
        if hint is WorkflowContext or (isinstance(hint, type) and issubclass(hint, WorkflowContext)):
            return (), ()
        raise HandlerSignatureError(f"{where} must be annotated as WorkflowContext[...], got {hint!r}.")
    if not (isinstance(origin, type) and issubclass(origin, WorkflowContext)):
        raise HandlerSignatureError(f"{where} must be annotated as WorkflowContext[...], got {hint!r}.")
    given = typing.get_args(hint)
    for name, arg in zip(("OutT", "W_OutT"), given, strict=False):
        check_type_hint(arg, f"{where} {name}")
    args = (*given, Never, Never)
    return _types_or_any(args[0]), _types_or_any(args[1])


def has_typevar(hint: Any) -> bool:
    """Whether ``hint`` is, or contains, a ``TypeVar`` (a generic executor's parameter left unresolved)."""
    if isinstance(hint, TypeVar | typing.TypeVar):
        return True
    return any(has_typevar(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)


def _is_type_like(hint: Any) -> bool:
    return (
        hint is Any
        or hint is None
        or isinstance(hint, type)
        or typing.get_origin(hint) is not None
        or any(hint is n for n in (Never, typing.NoReturn))
    )


def check_type_hint(hint: Any, where: str) -> None:
    """Refuse a hint a handler cannot be routed by: an unresolved ``TypeVar`` or a value that is not a type."""
    if has_typevar(hint):
        raise HandlerSignatureError(
            f"{where} contains an unresolved TypeVar in {hint!r}. Use @handler(input=ConcreteType, "
            "output=ConcreteType) with concrete types for parameterized executors."
        )
    invalid = [h for h in flatten(hint) if not _is_type_like(h)] if hint is not None else []
    if invalid:
        raise HandlerSignatureError(
            f"{where} contains an invalid type entry: {invalid!r}. Use proper types or typing generics."
        )


def _resolve_string(value: Any, func: Callable[..., Any]) -> Any:
    """A decorator's type given as a string (``input="Order"``), resolved in the handler's module."""
    if not isinstance(value, str):
        return value
    holder = types.SimpleNamespace(__annotations__={"hint": value})
    try:
        return typing.get_type_hints(holder, globalns=getattr(func, "__globals__", None))["hint"]
    except Exception as e:
        raise HintResolutionError(
            f"Cannot resolve the type {value!r} given to the decorator of {getattr(func, '__qualname__', func)}: {e}."
        ) from e


def _types_or_any(hint: Any) -> tuple[Any, ...] | None:
    flat = flatten(hint)
    if any(t is Any or t is object for t in flat):
        return None
    return flat


def _explicit(value: Any) -> tuple[Any, ...] | None:
    return _types_or_any(value)


def resolve_handler(func: Callable[..., Any], *, kind: str, options: dict[str, Any], bound: bool) -> HandlerSpec:
    """Read a handler's hints (or its explicit options) into a :class:`HandlerSpec`.

    Args:
        func: The function (a plain method when ``bound`` is false; ``self`` is then skipped).
        kind: ``"handler"``, ``"response_handler"`` or ``"function"`` (an ``@executor`` function).
        options: Explicit types from the decorator, overriding hints.
        bound: Whether ``func`` has no ``self`` parameter.
    """
    name = getattr(func, "__qualname__", repr(func))
    params = list(inspect.signature(func).parameters.values())
    if not bound:
        params = params[1:]
    needed = 2 if kind == "response_handler" else 1
    if len(params) < needed or (kind == "function" and len(params) > 2):
        shape = {
            "response_handler": "(original_request, response, ctx)",
            "function": "(message: T) or (message: T, ctx: WorkflowContext[U])",
        }.get(kind, "(message, ctx)")
        raise HandlerSignatureError(f"Handler {name} must have {shape}. Got {len(params)} parameters.")
    if kind == "handler" and len(params) > 2:
        raise HandlerSignatureError(
            f"Handler {name} must have (self, message: T, ctx: WorkflowContext[U, V]). Got {len(params) + 1} "
            "parameters."
        )
    options = {k: _resolve_string(v, func) for k, v in options.items()}
    try:
        hints = typing.get_type_hints(func)
    except Exception as e:
        hints = {}
        missing_ok = all(options.get(k, _UNSET) is not _UNSET for k in ("input", "output", "workflow_output"))
        if not missing_ok:
            raise HintResolutionError(
                f"Cannot resolve the type hints of handler {name}: {e}. Define the types at module level, or pass "
                "them explicitly, e.g. @handler(input=Order, output=Invoice, workflow_output=str)."
            ) from e
    explicit = any(options.get(k, _UNSET) is not _UNSET for k in ("input", "output", "workflow_output"))
    if kind == "response_handler" and (explicit or options.get("response", _UNSET) is not _UNSET):
        for key, what in (("input", "request"), ("response", "response")):
            if options.get(key, _UNSET) is _UNSET:
                raise HandlerSignatureError(f"Response handler {name} with explicit types must specify '{what}' type.")
    elif kind == "handler" and explicit and options.get("input", _UNSET) is _UNSET:
        raise HandlerSignatureError(f"Handler {name} with explicit type parameters must specify 'input' type.")
    msg_param = params[0]
    input_type = options.get("input", _UNSET)
    if input_type is _UNSET:
        if msg_param.name not in hints:
            raise HandlerSignatureError(
                f"Handler {name} must have a type annotation for the message parameter {msg_param.name!r}; the "
                "hint says which messages it accepts (or pass input=... to the decorator)."
            )
        input_type = hints[msg_param.name]
    if has_typevar(input_type):
        decorator = "@executor" if kind == "function" else "@handler"
        raise HandlerSignatureError(
            f"Handler {name} has an unresolved TypeVar {input_type!r} as its message type. Generic TypeVar "
            f"annotations are not supported for workflow type validation. Use {decorator}(input=<concrete_type>, "
            "output=<concrete_type>) to specify explicit types."
        )
    response_type: Any = None
    if kind == "response_handler":
        response_type = options.get("response", _UNSET)
        if response_type is _UNSET:
            resp_param = params[1]
            if resp_param.name not in hints:
                raise HandlerSignatureError(f"Response handler {name} has no type hint on {resp_param.name!r}.")
            response_type = hints[resp_param.name]
    ctx_index = needed
    takes_ctx = len(params) > ctx_index
    output_types: tuple[Any, ...] | None
    workflow_output_types: tuple[Any, ...] | None
    returns_message = False
    undeclared = False
    if takes_ctx:
        ctx_name = params[ctx_index].name
        if ctx_name in hints:
            ctx_hint = hints[ctx_name]
            output_types, workflow_output_types = context_types(ctx_hint, f"Handler {name} {ctx_name}")
            undeclared = ctx_hint is WorkflowContext and not explicit
        elif explicit:
            output_types, workflow_output_types = None, None  # the decorator says what it sends and yields
        else:
            raise HandlerSignatureError(
                f"Handler {name} {ctx_name} must have a WorkflowContext, WorkflowContext[T] or WorkflowContext[T, U] "
                "type annotation, where T is output message type and U is workflow output type (or pass output= "
                "and workflow_output= to the decorator)."
            )
    elif kind == "function":
        # A function without a context sends its return value, so its return hint is what it sends.
        returns_message = True
        ret = hints.get("return", Any)
        output_types = () if ret is None or ret is type(None) else _types_or_any(ret)
        workflow_output_types = ()
    else:
        raise HandlerSignatureError(f"Handler {name} must take a WorkflowContext parameter after the message.")
    if options.get("output", _UNSET) is not _UNSET:
        check_type_hint(options["output"], f"Handler {name} output")
        output_types = _explicit(options["output"])
    if options.get("workflow_output", _UNSET) is not _UNSET:
        check_type_hint(options["workflow_output"], f"Handler {name} workflow_output")
        workflow_output_types = _explicit(options["workflow_output"])
    if kind == "response_handler" and has_typevar(response_type):
        raise HandlerSignatureError(
            f"Response handler {name} has an unresolved TypeVar {response_type!r} as its response type; pass "
            "response=ConcreteType to the decorator."
        )
    return HandlerSpec(
        name=name,
        func=func,
        input_type=input_type,
        output_types=output_types,
        workflow_output_types=workflow_output_types,
        takes_ctx=takes_ctx,
        response_type=response_type,
        is_response=kind == "response_handler",
        returns_message=returns_message,
        bound=bound,
        undeclared_context=undeclared,
    )
