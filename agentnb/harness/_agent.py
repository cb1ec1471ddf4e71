"""``create_harness_agent``: an ordinary :class:`Agent` with the harness's providers and middleware wired in.

Nothing here is a second agent loop: todos, modes, file memory, file access, background agents and skills
are context providers; tool approval, the loop and message injection are middleware. Their order matters
and is the reference's: history first; the loop outermost (each iteration a full run, approvals included),
then tool approval, then message injection, then the caller's middleware.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from .._agents import Agent, SupportsAgentRun
from .._approval_middleware import ToolApprovalMiddleware
from .._approval_policy import ToolApprovalRuleCallback
from .._json import is_list_or_tuple
from .._sessions import ContextProvider, HistoryProvider, InMemoryHistoryProvider
from .._tools import FunctionTool
from ..exceptions import FeatureNotAvailableError
from ._background import BackgroundAgentsProvider
from ._file_access import FileAccessProvider
from ._file_memory import FileMemoryProvider
from ._file_store import AgentFileStore, FileSystemAgentFileStore
from ._injection import MessageInjectionMiddleware
from ._loop import DEFAULT_MAX_ITERATIONS, AgentLoopMiddleware, NextMessageCallable, ShouldContinueCallable
from ._mode import AgentModeProvider
from ._shell import ShellExecutor
from ._shell_environment import ShellEnvironmentProvider, ShellEnvironmentProviderOptions
from ._todo import TodoProvider

__all__ = [
    "DEFAULT_FILE_MEMORY_DIRECTORY",
    "DEFAULT_HARNESS_INSTRUCTIONS",
    "HARNESS_AGENT_PROVIDER_NAME",
    "ExperimentalWarning",
    "create_harness_agent",
]

logger = logging.getLogger("agentnb.harness")

HARNESS_AGENT_PROVIDER_NAME = "agentnb.harness"
#: The folder (under the working directory) file memory uses when no store is given.
DEFAULT_FILE_MEMORY_DIRECTORY = "agent-file-memory"
DEFAULT_HARNESS_INSTRUCTIONS = """\
You are a helpful AI assistant that uses tools to complete tasks.

## General guidelines
- Think the task through before acting. Break complex work into clear steps.
- Use the tools you have to gather information, take actions and check results.
- Explain your reasoning as you work.
- Between tool calls, say what you learned and what you will do next, so the user can follow along.
- Avoid making more than 4 tool calls in a row without explaining what you are doing.
- If a tool call fails or returns something unexpected, change your approach rather than repeating the call.
- When the task is done, give a clear, concise summary of what you did and what you found.
"""


class ExperimentalWarning(FutureWarning):
    """A feature that may change or go without notice was turned on (the message names the parameter)."""


_warned: set[str] = set()


def _warn_experimental(params: Sequence[str], detail: str) -> None:
    """One warning per parameter per process, naming it, pointing at the caller's line."""
    new = [p for p in params if p not in _warned]
    if not new:
        return
    _warned.update(new)
    warnings.warn(
        f"create_harness_agent parameter(s) {', '.join(map(repr, new))} turn on {detail}, which may change or be "
        "removed without notice. Filter agentnb.harness.ExperimentalWarning to silence this.",
        ExperimentalWarning,
        stacklevel=3,
    )


def _assemble_instructions(harness_instructions: str | None, agent_instructions: str | None) -> str | None:
    harness = DEFAULT_HARNESS_INSTRUCTIONS if harness_instructions is None else harness_instructions
    return f"{harness}\n\n{agent_instructions or ''}".strip() or None


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _require(module: str, feature: str, parameters: str, remedy: str) -> Any:
    """``module`` imported, or a :class:`FeatureNotAvailableError` naming what is missing."""
    if not _available(module):
        raise FeatureNotAvailableError(
            f"{parameters} need {feature}, which this agentnb does not have yet ({module} is missing). {remedy}",
            feature=feature,
        )
    return importlib.import_module(module)


def _compaction(
    *,
    disable_compaction: bool,
    max_context_window_tokens: int | None,
    max_output_tokens: int | None,
    before_compaction_strategy: Any,
    after_compaction_strategy: Any,
    tokenizer: Any,
    history_source_id: str,
) -> tuple[Any, ContextProvider | None]:
    """The strategy each model call is compacted with, and the provider that compacts the stored history.

    As in the reference, both budgets give one context-window strategy used for both phases, and a
    strategy given for a phase wins. Settings that ask for compaction are refused, never ignored, when
    this agentnb has no compaction.
    """
    if disable_compaction:
        return None, None
    budget = max_context_window_tokens is not None and max_output_tokens is not None
    asked = budget or before_compaction_strategy is not None or after_compaction_strategy is not None
    if not asked and tokenizer is None:
        return None, None
    compaction = _require(
        "agentnb.compaction",
        "context compaction",
        "max_context_window_tokens with max_output_tokens, the compaction strategies and tokenizer",
        "Pass disable_compaction=True to run without it (the history then grows without bound).",
    )
    default = (
        compaction.ContextWindowCompactionStrategy(
            max_context_window_tokens=max_context_window_tokens,
            max_output_tokens=max_output_tokens,
            tokenizer=tokenizer,
        )
        if budget
        else None
    )
    before = before_compaction_strategy if before_compaction_strategy is not None else default
    after = after_compaction_strategy if after_compaction_strategy is not None else default
    provider = (
        compaction.CompactionProvider(after_strategy=after, tokenizer=tokenizer, history_source_id=history_source_id)
        if after is not None
        else None
    )
    return before, provider


def _shell_tool(shell_executor: ShellExecutor | None) -> FunctionTool | None:
    """The executor's tool (its ``as_function()``), checked before anything is built."""
    if shell_executor is None:
        return None
    given = cast("object", shell_executor)  # callers without type checking may pass anything
    as_function: Callable[[], Any] | None = getattr(given, "as_function", None)
    if not callable(as_function) or not isinstance(given, ShellExecutor):
        raise TypeError(
            "shell_executor must be a shell executor with a callable as_function() (e.g. "
            f"agentnb.harness.LocalShellTool), got {type(shell_executor).__name__}"
        )
    shell = as_function()
    return shell if isinstance(shell, FunctionTool) else FunctionTool(shell, approval_mode="always_require")


def create_harness_agent(
    client: Any,
    *,
    id: str | None = None,
    name: str | None = None,
    description: str | None = None,
    harness_instructions: str | None = None,
    agent_instructions: str | None = None,
    tools: Any = None,
    max_context_window_tokens: int | None = None,
    max_output_tokens: int | None = None,
    history_provider: HistoryProvider | None = None,
    disable_compaction: bool = False,
    before_compaction_strategy: Any = None,
    after_compaction_strategy: Any = None,
    tokenizer: Any = None,
    disable_todo: bool = False,
    todo_provider: TodoProvider | None = None,
    disable_mode: bool = False,
    mode_provider: AgentModeProvider | None = None,
    disable_file_memory: bool = False,
    file_memory_store: AgentFileStore | None = None,
    file_access_store: AgentFileStore | None = None,
    file_access_disable_write_tools: bool = False,
    file_access_disable_readonly_tool_approval: bool = False,
    file_access_disable_write_tool_approval: bool = False,
    skills_provider: ContextProvider | None = None,
    skills_paths: str | Path | Sequence[str | Path] | None = None,
    background_agents: Sequence[SupportsAgentRun] | None = None,
    background_agents_instructions: str | None = None,
    shell_executor: ShellExecutor | None = None,
    shell_environment_provider_options: ShellEnvironmentProviderOptions | None = None,
    disable_web_search: bool = False,
    disable_tool_auto_approval: bool = False,
    auto_approval_rules: Sequence[ToolApprovalRuleCallback] | None = None,
    loop_should_continue: ShouldContinueCallable | None = None,
    loop_next_message: NextMessageCallable | None = None,
    loop_max_iterations: int | None = DEFAULT_MAX_ITERATIONS,
    otel_provider_name: str | None = None,
    context_providers: Sequence[ContextProvider] | None = None,
    middleware: Any = None,
    default_options: Mapping[str, Any] | None = None,
) -> Agent[Any]:
    """Build an agent for long-running work: todos, modes, file memory, approvals, and optionally files, skills,
    background agents and a loop.

    Defaults follow the reference: todos, modes and file memory (a ``FileSystemAgentFileStore`` under
    ``./agent-file-memory``, one folder per session) are on; file access only with ``file_access_store``;
    background agents only with ``background_agents``; the loop only with ``loop_should_continue``; tool
    approval middleware (standing rules plus ``auto_approval_rules``) and message injection always, unless
    ``disable_tool_auto_approval``. Background agents, file access, the loop and the shell tool are
    experimental: turning one on warns once (an :class:`ExperimentalWarning` naming the parameter).

    Raises:
        ValueError: A token budget is not positive, or the output budget is not below the context window.
        FeatureNotAvailableError: Skills or compaction were asked for and this agentnb does not have them.

    Example:
        ```python
        import tempfile
        from agentnb.harness import InMemoryAgentFileStore, create_harness_agent
        from agentnb.local import ScriptedChatClient

        agent = create_harness_agent(ScriptedChatClient(["Planned."]), file_memory_store=InMemoryAgentFileStore())
        session = agent.create_session()
        (await agent.run("Plan a weekend in Seattle.", session=session)).text  # 'Planned.'
        ```
    """
    for label, value in (
        ("max_context_window_tokens", max_context_window_tokens),
        ("max_output_tokens", max_output_tokens),
    ):
        if value is not None and (isinstance(value, bool) or value <= 0):
            raise ValueError(f"{label} must be positive, got {value!r}.")
    if (
        max_context_window_tokens is not None
        and max_output_tokens is not None
        and max_output_tokens >= max_context_window_tokens
    ):
        raise ValueError(
            f"max_output_tokens must be less than max_context_window_tokens, got {max_output_tokens} and "
            f"{max_context_window_tokens}."
        )
    skills = None
    if skills_provider is not None or skills_paths:
        skills = _require("agentnb.skills", "agent skills", "skills_provider and skills_paths", "Leave them unset.")

    shell_tool = _shell_tool(shell_executor)
    experimental = [
        p
        for p, on in (
            ("background_agents", bool(background_agents)),
            ("file_access_store", file_access_store is not None),
            ("loop_should_continue", loop_should_continue is not None),
        )
        if on
    ]
    _warn_experimental(experimental, "experimental harness features")
    if shell_executor is not None:
        _warn_experimental(["shell_executor"], "the pre-release shell tool")

    history = history_provider or InMemoryHistoryProvider()
    before_compaction, compaction_provider = _compaction(
        disable_compaction=disable_compaction,
        max_context_window_tokens=max_context_window_tokens,
        max_output_tokens=max_output_tokens,
        before_compaction_strategy=before_compaction_strategy,
        after_compaction_strategy=after_compaction_strategy,
        tokenizer=tokenizer,
        history_source_id=history.source_id,
    )
    providers: list[ContextProvider] = [history]
    if compaction_provider is not None:
        providers.append(compaction_provider)  # after history: it compacts what history loaded and stores
    if not disable_todo:
        providers.append(todo_provider or TodoProvider())
    if not disable_mode:
        providers.append(mode_provider or AgentModeProvider())
    if not disable_file_memory:
        store = file_memory_store or FileSystemAgentFileStore(Path.cwd() / DEFAULT_FILE_MEMORY_DIRECTORY)
        providers.append(FileMemoryProvider(store))
    if file_access_store is not None:
        providers.append(
            FileAccessProvider(
                file_access_store,
                disable_write_tools=file_access_disable_write_tools,
                disable_readonly_tool_approval=file_access_disable_readonly_tool_approval,
                disable_write_tool_approval=file_access_disable_write_tool_approval,
            )
        )
    if skills_provider is not None:
        providers.append(skills_provider)
    if skills_paths and skills is not None:
        providers.append(skills.SkillsProvider.from_paths(skills_paths))
    if background_agents:
        providers.append(BackgroundAgentsProvider(background_agents, instructions=background_agents_instructions))
    if shell_executor is not None:
        # Only with a shell tool: the block describes the shell the agent can drive.
        providers.append(ShellEnvironmentProvider(shell_executor, shell_environment_provider_options))
    providers.extend(context_providers or [])

    agent_tools: list[Any] = []
    if not disable_web_search:
        get_web_search = getattr(client, "get_web_search_tool", None)
        if callable(get_web_search):
            agent_tools.append(get_web_search())
        else:
            logger.info("No web search tool: %s has no get_web_search_tool().", type(client).__name__)
    if shell_tool is not None:
        agent_tools.append(shell_tool)
    if tools is not None:
        agent_tools.extend(tools if is_list_or_tuple(tools) else [tools])

    options: dict[str, Any] = dict(default_options or {})
    if max_output_tokens is not None:
        options.setdefault("max_tokens", max_output_tokens)

    assembled: list[Any] = []
    if loop_should_continue is not None:
        assembled.append(
            AgentLoopMiddleware(
                loop_should_continue, max_iterations=loop_max_iterations, next_message=loop_next_message
            )
        )
    if not disable_tool_auto_approval:
        assembled.append(ToolApprovalMiddleware(auto_approval_rules=auto_approval_rules))
    assembled.append(MessageInjectionMiddleware())
    if middleware is not None:
        assembled.extend(middleware if is_list_or_tuple(middleware) else [middleware])

    # Per-request compaction is an Agent argument only where compaction exists (checked above).
    compaction_arguments: dict[str, Any] = (
        {"compaction_strategy": before_compaction, "tokenizer": tokenizer} if before_compaction is not None else {}
    )
    return Agent(
        client,
        _assemble_instructions(harness_instructions, agent_instructions),
        id=id,
        name=name,
        description=description,
        tools=agent_tools,
        default_options=options,
        context_providers=providers,
        middleware=assembled,
        require_per_service_call_history_persistence=True,
        **compaction_arguments,
        additional_properties={"harness": True},
        otel_provider_name=otel_provider_name or HARNESS_AGENT_PROVIDER_NAME,
    )
