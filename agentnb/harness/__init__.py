"""The agent harness: what turns a chat agent into a long-running worker that plans, remembers and keeps going.

Every part is a context provider or middleware on an ordinary :class:`~agentnb.Agent`, and its state lives
in the session, so it saves, reloads and shows in the notebook and DevUI like any other state:

- :class:`TodoProvider` (a todo list) and :class:`AgentModeProvider` (plan / execute modes);
- :class:`FileMemoryProvider` (the agent's own notes as files, per session) and :class:`FileAccessProvider`
  (the user's files, every call under approval by default), both over an :class:`AgentFileStore`
  confined to its root;
- :class:`MemoryContextProvider` (durable facts per owner across sessions, extracted and consolidated by the
  model, in topic files behind a ``MEMORY.md`` index);
- :class:`BackgroundAgentsProvider` (delegate to agents running concurrently);
- :class:`LocalShellTool` (shell commands under approval, in a working directory, with a time limit),
  :class:`DockerShellTool` (the same in a locked-down container) and :class:`ShellEnvironmentProvider` (tells
  the agent which shell it drives);
- :class:`AgentLoopMiddleware` (run until done, never past ``max_iterations``) and
  :class:`MessageInjectionMiddleware` (talk to an agent while it works);
- :func:`create_harness_agent`, which wires them together with tool approval.

Example:
    ```python
    from agentnb.harness import InMemoryAgentFileStore, create_harness_agent, todos_remaining
    from agentnb.local import ScriptedChatClient

    agent = create_harness_agent(ScriptedChatClient(["All done."]), file_memory_store=InMemoryAgentFileStore())
    session = agent.create_session()
    (await agent.run("Summarize the sales data.", session=session)).text  # 'All done.'
    ```
"""

from __future__ import annotations

from ._agent import (
    DEFAULT_FILE_MEMORY_DIRECTORY,
    DEFAULT_HARNESS_INSTRUCTIONS,
    HARNESS_AGENT_PROVIDER_NAME,
    ExperimentalWarning,
    create_harness_agent,
)
from ._background import (
    DEFAULT_BACKGROUND_AGENTS_INSTRUCTIONS,
    DEFAULT_BACKGROUND_AGENTS_SOURCE_ID,
    BackgroundAgentsProvider,
    BackgroundTaskInfo,
    BackgroundTaskStatus,
)
from ._docker_shell import DOCKER_DEFAULT_IMAGE, DockerShellTool, is_docker_available
from ._file_access import DEFAULT_FILE_ACCESS_INSTRUCTIONS, DEFAULT_FILE_ACCESS_SOURCE_ID, FileAccessProvider
from ._file_memory import DEFAULT_FILE_MEMORY_INSTRUCTIONS, DEFAULT_FILE_MEMORY_SOURCE_ID, FileMemoryProvider
from ._file_store import (
    AgentFileStore,
    FileSearchMatch,
    FileSearchResult,
    FileStoreEntry,
    FileSystemAgentFileStore,
    InMemoryAgentFileStore,
)
from ._injection import MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY, MessageInjectionMiddleware, enqueue_messages
from ._loop import (
    DEFAULT_JUDGE_MAX_ITERATIONS,
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_NEXT_MESSAGE,
    LOOP_STATE_KEY,
    AgentLoopMiddleware,
    JudgeVerdict,
    background_tasks_running,
    background_tasks_running_message,
    request_loop_stop,
    todos_remaining,
    todos_remaining_message,
)
from ._memory import (
    DEFAULT_MEMORY_SOURCE_ID,
    MemoryContextProvider,
    MemoryFileStore,
    MemoryIndexEntry,
    MemoryStore,
    MemoryTopicRecord,
)
from ._mode import DEFAULT_MODE_INSTRUCTIONS, DEFAULT_MODE_SOURCE_ID, AgentModeProvider, get_agent_mode, set_agent_mode
from ._shell import (
    DEFAULT_SHELL_MAX_OUTPUT_BYTES,
    DEFAULT_SHELL_TIMEOUT,
    SHELL_ENV_OVERRIDE,
    LocalShellTool,
    ShellDecision,
    ShellExecutor,
    ShellMode,
    ShellPolicy,
    ShellRequest,
    ShellResult,
)
from ._shell_environment import (
    ShellEnvironmentProvider,
    ShellEnvironmentProviderOptions,
    ShellEnvironmentSnapshot,
    ShellFamily,
    default_instructions_formatter,
)
from ._snapshot import HarnessSnapshot, MemoryFile, harness_snapshot, is_harness_agent
from ._todo import (
    DEFAULT_TODO_INSTRUCTIONS,
    DEFAULT_TODO_SOURCE_ID,
    TodoFileStore,
    TodoItem,
    TodoProvider,
    TodoSessionStore,
    TodoStore,
)

__all__ = [
    "DEFAULT_BACKGROUND_AGENTS_INSTRUCTIONS",
    "DEFAULT_BACKGROUND_AGENTS_SOURCE_ID",
    "DEFAULT_FILE_ACCESS_INSTRUCTIONS",
    "DEFAULT_FILE_ACCESS_SOURCE_ID",
    "DEFAULT_FILE_MEMORY_DIRECTORY",
    "DEFAULT_FILE_MEMORY_INSTRUCTIONS",
    "DEFAULT_FILE_MEMORY_SOURCE_ID",
    "DEFAULT_HARNESS_INSTRUCTIONS",
    "DEFAULT_JUDGE_MAX_ITERATIONS",
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MEMORY_SOURCE_ID",
    "DEFAULT_MODE_INSTRUCTIONS",
    "DEFAULT_MODE_SOURCE_ID",
    "DEFAULT_NEXT_MESSAGE",
    "DEFAULT_SHELL_MAX_OUTPUT_BYTES",
    "DEFAULT_SHELL_TIMEOUT",
    "DEFAULT_TODO_INSTRUCTIONS",
    "DEFAULT_TODO_SOURCE_ID",
    "DOCKER_DEFAULT_IMAGE",
    "HARNESS_AGENT_PROVIDER_NAME",
    "LOOP_STATE_KEY",
    "MESSAGE_INJECTION_PENDING_MESSAGES_STATE_KEY",
    "SHELL_ENV_OVERRIDE",
    "AgentFileStore",
    "AgentLoopMiddleware",
    "AgentModeProvider",
    "BackgroundAgentsProvider",
    "BackgroundTaskInfo",
    "BackgroundTaskStatus",
    "DockerShellTool",
    "ExperimentalWarning",
    "FileAccessProvider",
    "FileMemoryProvider",
    "FileSearchMatch",
    "FileSearchResult",
    "FileStoreEntry",
    "FileSystemAgentFileStore",
    "HarnessSnapshot",
    "InMemoryAgentFileStore",
    "JudgeVerdict",
    "LocalShellTool",
    "MemoryContextProvider",
    "MemoryFile",
    "MemoryFileStore",
    "MemoryIndexEntry",
    "MemoryStore",
    "MemoryTopicRecord",
    "MessageInjectionMiddleware",
    "ShellDecision",
    "ShellEnvironmentProvider",
    "ShellEnvironmentProviderOptions",
    "ShellEnvironmentSnapshot",
    "ShellExecutor",
    "ShellFamily",
    "ShellMode",
    "ShellPolicy",
    "ShellRequest",
    "ShellResult",
    "TodoFileStore",
    "TodoItem",
    "TodoProvider",
    "TodoSessionStore",
    "TodoStore",
    "background_tasks_running",
    "background_tasks_running_message",
    "create_harness_agent",
    "default_instructions_formatter",
    "enqueue_messages",
    "get_agent_mode",
    "harness_snapshot",
    "is_docker_available",
    "is_harness_agent",
    "request_loop_stop",
    "set_agent_mode",
    "todos_remaining",
    "todos_remaining_message",
]
