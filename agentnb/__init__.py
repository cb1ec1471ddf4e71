"""agentnb: build, run and debug LLM agents and multi-agent workflows, notebook first.

Everything a basic agent needs is importable from here. Heavier areas load on first use:
``agentnb.workflows``, ``agentnb.openai``, ``agentnb.mcp``, ``agentnb.observability``,
``agentnb.notebook`` and ``agentnb.devui`` (their most used names are also available here, lazily).

Example:
    ```python
    from agentnb import Agent, tool
    from agentnb.local import ToolCallingChatClient

    @tool
    def get_weather(city: str) -> str:
        \"\"\"Return the weather for a city.\"\"\"
        return f"Sunny in {city}."

    agent = Agent(ToolCallingChatClient(), "You are helpful.", tools=[get_weather])
    print((await agent.run("What's the weather in Paris?")).text)
    ```
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._agents import Agent, BaseAgent, SupportsAgentRun
from ._approval import (
    ToolApprovalMiddleware,
    ToolApprovalRule,
    ToolApprovalState,
    create_always_approve_tool_response,
    create_always_approve_tool_with_arguments_response,
    pending_approval_requests,
)
from ._clients import BaseChatClient, SupportsChatGetResponse
from ._middleware import (
    AgentContext,
    AgentMiddleware,
    ChatContext,
    ChatMiddleware,
    FunctionInvocationContext,
    FunctionMiddleware,
    agent_middleware,
    chat_middleware,
    function_middleware,
)
from ._serialization import register_state_type, register_type
from ._session_store import FileHistoryProvider, FileSessionStore
from ._sessions import AgentSession, ContextProvider, HistoryProvider, InMemoryHistoryProvider, SessionContext
from ._tools import FunctionTool, SupportsToolExpansion, tool
from ._types import (
    AgentResponse,
    AgentResponseUpdate,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
    UsageDetails,
)
from .exceptions import AgentnbError, MiddlewareTermination

if TYPE_CHECKING:
    from .evals import Experiment, compare, evaluate, experiments, load_experiment, run_batch
    from .observability import configure_otel_providers, enable_instrumentation, traces, usage_summary
    from .store import runs
    from .workflows import (
        AgentExecutor,
        AgentExecutorRequest,
        AgentExecutorResponse,
        Case,
        ConcurrentBuilder,
        Default,
        Executor,
        FileCheckpointStorage,
        GroupChatBuilder,
        HandoffBuilder,
        InMemoryCheckpointStorage,
        MagenticBuilder,
        RunStoreCheckpointStorage,
        SequentialBuilder,
        SQLiteCheckpointStorage,
        Workflow,
        WorkflowAgent,
        WorkflowBuilder,
        WorkflowCheckpoint,
        WorkflowContext,
        WorkflowEvent,
        WorkflowExecutor,
        WorkflowRunResult,
        WorkflowRunState,
        WorkflowViz,
        executor,
        handler,
        response_handler,
    )

__version__ = "0.1.0"

# name -> module that defines it; imported on first attribute access so `import agentnb` stays light.
_LAZY_EXPORTS: dict[str, str] = {
    "AgentExecutor": "agentnb.workflows",
    "AgentExecutorRequest": "agentnb.workflows",
    "AgentExecutorResponse": "agentnb.workflows",
    "Case": "agentnb.workflows",
    "ConcurrentBuilder": "agentnb.workflows",
    "Default": "agentnb.workflows",
    "Executor": "agentnb.workflows",
    "FileCheckpointStorage": "agentnb.workflows",
    "GroupChatBuilder": "agentnb.workflows",
    "HandoffBuilder": "agentnb.workflows",
    "InMemoryCheckpointStorage": "agentnb.workflows",
    "MagenticBuilder": "agentnb.workflows",
    "RunStoreCheckpointStorage": "agentnb.workflows",
    "SQLiteCheckpointStorage": "agentnb.workflows",
    "SequentialBuilder": "agentnb.workflows",
    "Workflow": "agentnb.workflows",
    "WorkflowAgent": "agentnb.workflows",
    "WorkflowBuilder": "agentnb.workflows",
    "WorkflowCheckpoint": "agentnb.workflows",
    "WorkflowContext": "agentnb.workflows",
    "WorkflowEvent": "agentnb.workflows",
    "WorkflowExecutor": "agentnb.workflows",
    "WorkflowRunResult": "agentnb.workflows",
    "WorkflowRunState": "agentnb.workflows",
    "WorkflowViz": "agentnb.workflows",
    "Experiment": "agentnb.evals",
    "compare": "agentnb.evals",
    "configure_otel_providers": "agentnb.observability",
    "enable_instrumentation": "agentnb.observability",
    "evaluate": "agentnb.evals",
    "executor": "agentnb.workflows",
    "experiments": "agentnb.evals",
    "handler": "agentnb.workflows",
    "load_experiment": "agentnb.evals",
    "response_handler": "agentnb.workflows",
    "run_batch": "agentnb.evals",
    "runs": "agentnb.store",
    "traces": "agentnb.observability",
    "usage_summary": "agentnb.observability",
}

__all__ = [
    "Agent",
    "AgentContext",
    "AgentExecutor",
    "AgentExecutorRequest",
    "AgentExecutorResponse",
    "AgentMiddleware",
    "AgentResponse",
    "AgentResponseUpdate",
    "AgentSession",
    "AgentnbError",
    "BaseAgent",
    "BaseChatClient",
    "Case",
    "ChatContext",
    "ChatMiddleware",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseUpdate",
    "ConcurrentBuilder",
    "Content",
    "ContextProvider",
    "Default",
    "Executor",
    "Experiment",
    "FileCheckpointStorage",
    "FileHistoryProvider",
    "FileSessionStore",
    "FunctionInvocationContext",
    "FunctionMiddleware",
    "FunctionTool",
    "GroupChatBuilder",
    "HandoffBuilder",
    "HistoryProvider",
    "InMemoryCheckpointStorage",
    "InMemoryHistoryProvider",
    "MagenticBuilder",
    "Message",
    "MiddlewareTermination",
    "ResponseStream",
    "RunStoreCheckpointStorage",
    "SQLiteCheckpointStorage",
    "SequentialBuilder",
    "SessionContext",
    "SupportsAgentRun",
    "SupportsChatGetResponse",
    "SupportsToolExpansion",
    "ToolApprovalMiddleware",
    "ToolApprovalRule",
    "ToolApprovalState",
    "UsageDetails",
    "Workflow",
    "WorkflowAgent",
    "WorkflowBuilder",
    "WorkflowCheckpoint",
    "WorkflowContext",
    "WorkflowEvent",
    "WorkflowExecutor",
    "WorkflowRunResult",
    "WorkflowRunState",
    "WorkflowViz",
    "agent_middleware",
    "chat_middleware",
    "compare",
    "configure_otel_providers",
    "create_always_approve_tool_response",
    "create_always_approve_tool_with_arguments_response",
    "enable_instrumentation",
    "evaluate",
    "executor",
    "experiments",
    "function_middleware",
    "handler",
    "load_experiment",
    "load_ipython_extension",
    "pending_approval_requests",
    "register_state_type",
    "register_type",
    "response_handler",
    "run_batch",
    "runs",
    "tool",
    "traces",
    "unload_ipython_extension",
    "usage_summary",
]


def __getattr__(name: str) -> Any:
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentnb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentnb``: rich display, magics, widgets and tracing in this kernel."""
    from .notebook import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext agentnb``: undo everything ``%load_ext agentnb`` did."""
    from .notebook import unload_ipython_extension as unload

    unload(ipython)
