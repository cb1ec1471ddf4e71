"""Concurrent orchestration: the same input goes to every agent at once; an aggregator joins the answers.

The graph is ``concurrent_dispatcher -> (fan-out) agents -> (fan-in) concurrent_aggregator``. All agents
run in the same superstep, concurrently. As in the reference, the default aggregator outputs one
``AgentResponse`` whose messages are each agent's final assistant message, in participant order (the prompt
is not repeated: it is the input, not the answer). A custom aggregator is a function
``(results: list[AgentExecutorResponse]) -> Any`` (sync or async; it may also take the
``WorkflowContext`` as second argument): its return value, when not ``None``, is the workflow output; or an
:class:`~agentnb.workflows.Executor` taking the list and yielding the output itself. The aggregator's output
is published whatever ``output_from=`` selects among the participants.

A participant may also be a custom :class:`~agentnb.workflows.Executor` whose handler takes the
conversation (``list[Message]``) and sends an ``AgentExecutorResponse``, a ``Message`` or a
``list[Message]``; aggregators then receive what it sent, in its place in the list.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import Unpack

from ..._agents import SupportsAgentRun
from ..._types import AgentResponse, Message
from .._agent_executor import AgentExecutorResponse
from .._context import WorkflowContext
from .._executor import Executor
from .._handlers import handler
from ._base import OrchestrationBuilder, OrchestrationOptions, maybe_await
from ._sequential import ConversationInput

if TYPE_CHECKING:
    from .._workflow import Workflow

__all__ = ["ConcurrentBuilder"]

DISPATCHER_ID = "concurrent_dispatcher"
AGGREGATOR_ID = "concurrent_aggregator"

Aggregator = Callable[..., Any]


def default_aggregate(results: list[Any]) -> AgentResponse:
    """Each participant's last assistant message, in participant order, as one ``AgentResponse``."""
    replies: list[Message] = []
    for result in results:
        if isinstance(result, AgentExecutorResponse):
            messages = result.agent_response.messages or result.full_conversation or []
        elif isinstance(result, Message):
            messages = [result]
        elif isinstance(result, list):
            messages = [m for m in cast("list[Any]", result) if isinstance(m, Message)]
        else:
            continue
        last = next((m for m in reversed(messages) if m.role == "assistant"), None)
        if last is not None:
            replies.append(last)
    return AgentResponse(messages=replies)


class _Dispatcher(ConversationInput):
    """Sends the input conversation to every participant."""


class _Aggregator(Executor):
    """Receives every participant's answer (a fan-in) and yields what the aggregator makes of them."""

    def __init__(self, func: Aggregator | None) -> None:
        super().__init__(AGGREGATOR_ID)
        self.func = func
        self._takes_ctx = func is not None and _positional_count(func) >= 2

    @handler
    async def aggregate(self, results: list[Any], ctx: WorkflowContext[Any, Any]) -> None:
        if self.func is None:
            await ctx.yield_output(default_aggregate(results))
            return
        value = self.func(results, ctx) if self._takes_ctx else self.func(results)
        value = await maybe_await(value)
        if value is not None:
            await ctx.yield_output(value)


def _positional_count(func: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in kinds)


class ConcurrentBuilder(OrchestrationBuilder):
    """Build a workflow that sends the same input to several agents in parallel and aggregates the answers.

    Args:
        participants: The agents (each needs a unique ``name``), or custom executors (see the module docstring).
        **options: ``checkpoint_storage``, ``name``, ``description``, ``run_store``, ``output_from``,
            ``intermediate_output_from``, ``intermediate_outputs`` (see :class:`OrchestrationOptions`).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.workflows import ConcurrentBuilder

        optimist = Agent(ScriptedChatClient(["It will work."]), name="optimist")
        skeptic = Agent(ScriptedChatClient(["It will not."]), name="skeptic")
        workflow = (
            ConcurrentBuilder(participants=[optimist, skeptic])
            .with_aggregator(lambda results: " / ".join(r.agent_response.text for r in results))
            .build()
        )
        (await workflow.run("Will it work?")).get_outputs()  # ['It will work. / It will not.']
        ```
    """

    _RESERVED = (DISPATCHER_ID, AGGREGATOR_ID)
    _ALLOW_EXECUTORS = True

    _INTERMEDIATE_OUTPUTS = False

    def __init__(
        self, participants: Sequence[SupportsAgentRun | Executor], **options: Unpack[OrchestrationOptions]
    ) -> None:
        super().__init__(participants, **options)
        self._aggregator: Aggregator | Executor | None = None

    def with_aggregator(self, aggregator: Aggregator | Executor) -> ConcurrentBuilder:
        """Replace the default aggregator with ``aggregator(results)``, ``aggregator(results, ctx)`` or an executor.

        ``results`` is a ``list[AgentExecutorResponse]`` in participant order. A non-``None`` return value
        becomes the workflow output; with ``ctx`` the function may also ``await ctx.yield_output(...)`` itself.
        An :class:`~agentnb.workflows.Executor` takes the list in a handler and yields the output itself.
        """
        if not isinstance(aggregator, Executor) and not callable(aggregator):
            raise TypeError(
                f"The aggregator must be a function taking the list of results, or an Executor, got {aggregator!r}."
            )
        self._aggregator = aggregator
        return self

    def build(self) -> Workflow:
        """Build the fan-out/fan-in graph as an ordinary :class:`~agentnb.workflows.Workflow`."""
        start = _Dispatcher(DISPATCHER_ID)
        aggregator = self._aggregator if isinstance(self._aggregator, Executor) else _Aggregator(self._aggregator)
        executors = [p if isinstance(p, Executor) else self._participant(p) for p in self.participants]
        builder = self._workflow_builder(
            start, output_from=[], always_output=[aggregator], participants=executors, max_iterations=8
        )
        builder.add_fan_out_edges(start, executors)
        builder.add_fan_in_edges(executors, aggregator)
        return builder.build()
