"""The reference's layer mixins, as names: agentnb builds every layer into ``BaseChatClient`` and ``Agent``.

In the reference a chat client is assembled from mixins (``FunctionInvocationLayer``, ``ChatMiddlewareLayer``,
``ChatTelemetryLayer`` over a raw client). agentnb's :class:`~agentnb.BaseChatClient` already runs the
function loop, chat and function middleware and telemetry around ``_inner_get_response``, and
:class:`~agentnb.Agent` runs agent middleware and telemetry, so these classes add no behaviour: they let code
written for the reference compose its clients as it does there, and ``isinstance`` checks against them hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, cast

from typing_extensions import TypeVar

__all__ = [
    "AgentMiddlewareLayer",
    "AgentTelemetryLayer",
    "ChatMiddlewareLayer",
    "ChatTelemetryLayer",
    "EmbeddingTelemetryLayer",
    "FunctionInvocationLayer",
]

LayerOptionsT = TypeVar("LayerOptionsT", bound=Mapping[str, Any], default=Mapping[str, Any])


class FunctionInvocationLayer(Generic[LayerOptionsT]):
    """Marks a chat client as running the tool loop (every :class:`~agentnb.BaseChatClient` does).

    Example:
        ```python
        from agentnb import BaseChatClient, ChatMiddlewareLayer, ChatResponse, FunctionInvocationLayer

        class Echo(FunctionInvocationLayer, ChatMiddlewareLayer, BaseChatClient):
            async def _inner_get_response(self, *, messages, stream=False, options, **kwargs):
                return ChatResponse(text=messages[-1].text)
        ```
    """


class ChatMiddlewareLayer(Generic[LayerOptionsT]):
    """Marks a chat client as running chat and function middleware (every ``BaseChatClient`` does)."""


class ChatTelemetryLayer(Generic[LayerOptionsT]):
    """Marks a chat client as traced (``chat`` spans; recorded once instrumentation is enabled)."""


class EmbeddingTelemetryLayer(Generic[LayerOptionsT]):
    """Marks an embedding client as traced (``embeddings`` spans; recorded once instrumentation is enabled)."""


class AgentMiddlewareLayer:
    """Marks an agent as running agent middleware (every :class:`~agentnb.Agent` does).

    ``Agent`` lists it before :class:`AgentTelemetryLayer` among its bases, as the reference's agent does: agent
    middleware runs outside the ``invoke_agent`` span, so the span times the agent and not its middleware.
    """


class AgentTelemetryLayer:
    """Traces an agent's ``run`` in an ``invoke_agent`` span (recorded once instrumentation is enabled).

    :class:`~agentnb.Agent` traces its runs itself, so on agentnb's agents this adds nothing; mixed into an
    agent class of your own, before the class whose ``run`` does the work, it wraps that ``run`` as the
    reference's layer does.

    Example:
        ```python
        from agentnb import AgentResponse, Message
        from agentnb.observability import AgentTelemetryLayer

        class _Echo:
            id = name = "echo"

            async def run(self, messages=None, *, stream=False, session=None, **kwargs):
                return AgentResponse(messages=[Message("assistant", [str(messages)])])

        class Echo(AgentTelemetryLayer, _Echo):
            pass
        ```
    """

    def run(self, messages: Any = None, *, stream: bool = False, session: Any = None, **kwargs: Any) -> Any:
        """The next class's ``run``, in an ``invoke_agent`` span unless that class traces itself."""
        from ._agents import BaseAgent
        from ._telemetry_layers import traced_any_agent_run

        # The class mixed in after this one has the run that does the work.
        run = cast("Callable[..., Any]", getattr(super(), "run"))  # noqa: B009
        if isinstance(self, BaseAgent):  # agentnb's agents trace their own runs
            return run(messages, stream=stream, session=session, **kwargs)
        return traced_any_agent_run(self, run, messages, stream=stream, session=session, kwargs=kwargs)
