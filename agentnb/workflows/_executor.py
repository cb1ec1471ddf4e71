"""Executors: the nodes of a workflow graph.

Subclass :class:`Executor` and mark async methods with ``@handler`` (and ``@response_handler`` for answers
to ``ctx.request_info``), or turn a plain async function into an executor with ``@executor``. An
executor keeps whatever Python state it likes; to make that state survive checkpoints, return it from
``on_checkpoint_save()`` and take it back in ``on_checkpoint_restore(state)`` (both may be async, and the
state must be serializable by ``agentnb._serialization``: JSON values, pydantic models, dataclasses, ...).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast, overload

from ..exceptions import HandlerSignatureError
from ._edges import WorkflowMessage
from ._handlers import HandlerSpec, is_marked, resolve_handler
from ._typing_utils import describe, flatten, is_compatible, matches

__all__ = ["Executor", "FunctionExecutor", "executor"]

_MISS: Any = object()
_type_of: Callable[[object], type[Any]] = type  # type(), typed for the checker (no cast() per message)


class Executor:
    """A node of a workflow: receives messages through typed handlers and sends, yields or requests.

    Args:
        id: A unique id within the workflow (defaults to the class name).
        defer_discovery: Resolve the handlers' type hints when the executor is first used rather than now (for
            hints that name types defined later).

    Example:
        >>> from agentnb.workflows import Executor, WorkflowBuilder, WorkflowContext, handler
        >>> class Upper(Executor):
        ...     @handler
        ...     async def run(self, text: str, ctx: WorkflowContext[str, str]) -> None:
        ...         await ctx.yield_output(text.upper())
        >>> workflow = WorkflowBuilder(start_executor=Upper("upper")).build()
        >>> (await workflow.run("hello")).get_outputs()  # doctest: +SKIP
        ['HELLO']
    """

    def __init__(self, id: str | None = None, *, defer_discovery: bool = False) -> None:
        if id is not None and (not isinstance(cast(object, id), str) or not id):
            raise ValueError(f"Executor id must be a non-empty str, got {id!r}.")
        self.id: str = id or type(self).__name__
        self._extra_specs: list[HandlerSpec] = []
        self._dispatch: dict[type, HandlerSpec | None] = {}
        self._discovered = False
        if not defer_discovery:
            self.discover_handlers()

    def discover_handlers(self) -> None:
        """Resolve the handlers' type hints now, so a mistake in them surfaces here (the builder calls this).

        Raises:
            HandlerSignatureError: A handler's hints cannot be used, or two response handlers take the same
                request and response types.
        """
        self._class_specs()
        self._discovered = True

    # -- handler discovery -----------------------------------------------------------------------------
    @classmethod
    def _class_specs(cls) -> tuple[list[HandlerSpec], list[HandlerSpec]]:
        cached = cls.__dict__.get("_agentnb_specs")
        if cached is not None:
            return cached
        handlers: list[HandlerSpec] = []
        responses: list[HandlerSpec] = []
        seen: set[str] = set()
        for klass in cls.__mro__:
            for name, attr in vars(klass).items():
                if name in seen:
                    continue
                seen.add(name)
                mark = is_marked(attr)
                if mark is None:
                    continue
                kind, options = mark
                spec = resolve_handler(attr, kind=kind, options=options, bound=False)
                (responses if spec.is_response else handlers).append(spec)
        pairs = [(spec.input_type, spec.response_type) for spec in responses]
        for i, pair in enumerate(pairs):
            if pair in pairs[:i]:
                raise HandlerSignatureError(
                    f"Duplicate response handler for request type {pair[0]} and response type {pair[1]} in "
                    f"{cls.__qualname__}."
                )
        result = (handlers, responses)
        type.__setattr__(cls, "_agentnb_specs", result)
        return result

    @property
    def handler_specs(self) -> list[HandlerSpec]:
        """The message handlers of this executor, most specific first."""
        return self._extra_specs + self._class_specs()[0]

    @property
    def response_handler_specs(self) -> list[HandlerSpec]:
        """The ``@response_handler`` methods of this executor."""
        return self._class_specs()[1]

    def register_handler(
        self,
        func: Callable[..., Awaitable[Any]],
        *,
        input: Any,
        output: Any = Any,
        workflow_output: Any = Any,
    ) -> None:
        """Add a handler at run time (for executors whose accepted types depend on constructor arguments).

        ``func`` is called as ``func(message, ctx)``.
        """
        spec = resolve_handler(
            func,
            kind="handler",
            options={"input": input, "output": output, "workflow_output": workflow_output},
            bound=True,
        )
        self._extra_specs.append(spec)
        self._dispatch.clear()

    @property
    def input_types(self) -> list[Any]:
        """Every message type this executor accepts."""
        return [s.input_type for s in self.handler_specs]

    @property
    def output_types(self) -> list[Any]:
        """Every type this executor may send (``[Any]`` when a handler is unrestricted)."""
        return _union_of(s.output_types for s in [*self.handler_specs, *self.response_handler_specs])

    @property
    def workflow_output_types(self) -> list[Any]:
        """Every type this executor may yield as workflow output (``[Any]`` when unrestricted)."""
        return _union_of(s.workflow_output_types for s in [*self.handler_specs, *self.response_handler_specs])

    def accepts(self, hint: Any) -> bool:
        """Whether some handler can take values of type ``hint`` (used to validate edges)."""
        return any(is_compatible(hint, s.input_type) for s in self.handler_specs)

    def can_handle(self, message: Any) -> bool:
        """Whether some handler accepts ``message`` (a :class:`WorkflowMessage`'s ``data``)."""
        if isinstance(message, WorkflowMessage):
            message = message.data
        spec = self._dispatch.get(_type_of(message), _MISS)  # find_handler's cached answer, without the call
        if spec is not _MISS:
            return spec is not None
        return self.find_handler(message) is not None

    def find_handler(self, message: Any) -> HandlerSpec | None:
        """The handler that will receive ``message``: an exact type match first, then the first that fits."""
        cls = _type_of(message)
        spec = self._dispatch.get(cls, _MISS)
        if spec is not _MISS:
            return spec
        specs = self.handler_specs
        found = next((s for s in specs if s.input_type is cls), None)
        if found is None:
            found = next((s for s in specs if matches(message, s.input_type)), None)
        # Only plain-class hints decide by type alone; list[str] and friends depend on the contents.
        if all(_is_plain(s.input_type) for s in specs):
            self._dispatch[cls] = found
        return found

    def is_request_supported(self, request_type: Any, response_type: Any) -> bool:
        """Whether a response handler takes requests of ``request_type`` answered with ``response_type``.

        ``False`` before the handlers are discovered (``defer_discovery=True`` and not used yet).
        """
        if not self._discovered:
            return False
        return any(
            is_compatible(request_type, spec.input_type) and is_compatible(response_type, spec.response_type)
            for spec in self.response_handler_specs
        )

    def find_response_handler(self, request_data: Any, response: Any) -> HandlerSpec | None:
        """The ``@response_handler`` for a request/response pair."""
        for spec in self.response_handler_specs:
            if matches(request_data, spec.input_type) and matches(response, spec.response_type):
                return spec
        return None

    def response_handler_for_types(self, request_data: Any, response_type: Any) -> HandlerSpec | None:
        """The ``@response_handler`` that would receive an answer of ``response_type`` to ``request_data``."""
        for spec in self.response_handler_specs:
            if matches(request_data, spec.input_type) and is_compatible(response_type, spec.response_type):
                return spec
        return None

    # -- description -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The executor as a graph export names it: its ``id`` and its class name as ``type``."""
        return {"id": self.id, "type": type(self).__name__}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict())

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget per-run state; called when a fresh run starts (not when resuming or answering requests)."""
        return None

    # -- checkpointing -----------------------------------------------------------------------------------
    def on_checkpoint_save(self) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Return the state to store in a checkpoint (override; may be async). The default saves nothing."""
        return {}

    def on_checkpoint_restore(self, state: dict[str, Any]) -> Awaitable[None] | None:
        """Take back state saved by :meth:`on_checkpoint_save` (override; may be async)."""
        return None

    @property
    def has_checkpoint_state(self) -> bool:
        """Whether this executor overrides :meth:`on_checkpoint_save` (others are skipped when saving)."""
        return type(self).on_checkpoint_save is not Executor.on_checkpoint_save

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"


def _is_plain(hint: Any) -> bool:
    return all((isinstance(t, type) and not hasattr(t, "__origin__")) or t is Any for t in flatten(hint))


def _union_of(groups: Any) -> list[Any]:
    out: list[Any] = []
    for types in groups:
        if types is None:
            return [Any]
        for t in types:
            if t not in out:
                out.append(t)
    return out


class FunctionExecutor(Executor):
    """An executor made from one async function ``(message: T, ctx: WorkflowContext[...])``.

    A function without a context parameter (sync or async) sends its return value instead, unless the
    value is ``None``.

    Example:
        >>> from agentnb.workflows import FunctionExecutor
        >>> async def double(n: int) -> int:
        ...     return n * 2
        >>> FunctionExecutor(double).id
        'double'
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        id: str | None = None,
        input: Any = None,
        output: Any = None,
        workflow_output: Any = None,
    ) -> None:
        super().__init__(id or getattr(func, "__name__", None) or type(func).__name__)
        options: dict[str, Any] = {}
        if input is not None:
            options["input"] = input
        if output is not None:
            options["output"] = output
        if workflow_output is not None:
            options["workflow_output"] = workflow_output
        spec = resolve_handler(func, kind="function", options=options, bound=True)
        if spec.takes_ctx and not inspect.iscoroutinefunction(func):
            raise TypeError(
                f"Executor function {spec.name} takes a WorkflowContext, so it must be async (async def ...)."
            )
        self.func = func
        self._extra_specs.append(spec)

    def __repr__(self) -> str:
        spec = self._extra_specs[0]
        return f"FunctionExecutor(id={self.id!r}, input={describe(spec.input_type)})"


@overload
def executor(func: Callable[..., Any], /) -> FunctionExecutor: ...
@overload
def executor(
    func: None = None,
    /,
    *,
    id: str | None = None,
    input: Any = None,
    output: Any = None,
    workflow_output: Any = None,
) -> Callable[[Callable[..., Any]], FunctionExecutor]: ...
def executor(
    func: Callable[..., Any] | None = None,
    /,
    *,
    id: str | None = None,
    input: Any = None,
    output: Any = None,
    workflow_output: Any = None,
) -> Any:
    """Turn a function into an :class:`Executor` (usable bare or as ``@executor(id=...)``).

    Example:
        >>> from agentnb.workflows import WorkflowContext, executor
        >>> @executor(id="upper")
        ... async def upper(text: str, ctx: WorkflowContext[str]) -> None:
        ...     await ctx.send_message(text.upper())
        >>> upper.id
        'upper'
    """

    def wrap(f: Callable[..., Any]) -> FunctionExecutor:
        for kind in (staticmethod, classmethod):
            if isinstance(cast(object, f), kind):
                raise HandlerSignatureError(
                    f"@executor cannot be used with @{kind.__name__}; use @executor on module-level functions or "
                    "@handler on instance methods of an Executor subclass."
                )
        return FunctionExecutor(f, id=id, input=input, output=output, workflow_output=workflow_output)

    return wrap(func) if func is not None else wrap
