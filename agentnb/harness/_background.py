"""Background agents: an agent hands work to other agents that run concurrently, and collects their results.

Each task runs the chosen agent in its own session as an asyncio task. What the task is and how it ended
(its status, result or error) is plain data in the parent session's state, updated the moment the task
ends, so it saves and reloads with the session and the notebook can watch it. A task that raises is a
failed task carrying its error, never a hang; one whose process went away (the session was reloaded
elsewhere while it ran) is ``lost``. Finished tasks keep their own session in the state, so a follow-up
(``background_agents_continue_task``) works after a reload too.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, cast

from .._agents import SupportsAgentRun
from .._sessions import AgentSession, ContextProvider, SessionContext
from .._tools import FunctionTool, tool
from .._types import AgentResponse, Message
from ._tool_cache import ToolCache

__all__ = [
    "DEFAULT_BACKGROUND_AGENTS_INSTRUCTIONS",
    "DEFAULT_BACKGROUND_AGENTS_SOURCE_ID",
    "BackgroundAgentsProvider",
    "BackgroundTaskInfo",
    "BackgroundTaskStatus",
]

DEFAULT_BACKGROUND_AGENTS_SOURCE_ID = "background_agents"
DEFAULT_BACKGROUND_AGENTS_INSTRUCTIONS = """\
## Background Agents
You can hand work to background agents.
- Use the `background_agents_*` tools to start tasks on them and check their results.
- Starting a task does not block; tasks run concurrently.
- Important: always wait for outstanding tasks to finish before you finish.
- Important: after reading a finished task's result, clear it with background_agents_clear_completed_task, \
unless you mean to continue it with background_agents_continue_task.
{background_agents}"""


class BackgroundTaskStatus(str, Enum):
    """Where a background task is: running, completed, failed, or lost (its process is gone)."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    LOST = "lost"


class BackgroundTaskInfo:
    """What the parent session knows about one background task.

    Example:
        ```python
        from agentnb.harness import BackgroundTaskInfo

        BackgroundTaskInfo(1, "researcher", "Find sources").to_dict()
        # {'id': 1, 'agent_name': 'researcher', 'description': 'Find sources', 'status': 'running'}
        ```
    """

    __slots__ = ("agent_name", "description", "error_text", "id", "result_text", "status")

    def __init__(
        self,
        id: int,
        agent_name: str,
        description: str,
        status: BackgroundTaskStatus | str = BackgroundTaskStatus.RUNNING,
        result_text: str | None = None,
        error_text: str | None = None,
    ) -> None:
        self.id = id
        self.agent_name = agent_name
        self.description = description
        self.status = BackgroundTaskStatus(status)
        self.result_text = result_text
        self.error_text = error_text

    def to_dict(self, *, exclude_none: bool = True) -> dict[str, Any]:
        """The task as JSON data (how it is kept in the session state)."""
        data: dict[str, Any] = {
            "id": self.id,
            "agent_name": self.agent_name,
            "description": self.description,
            "status": self.status.value,
        }
        for key in ("result_text", "error_text"):
            value = getattr(self, key)
            if value is not None or not exclude_none:
                data[key] = value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BackgroundTaskInfo:
        """Rebuild a task from :meth:`to_dict` output."""
        try:
            return cls(
                int(data["id"]),
                str(data["agent_name"]),
                str(data.get("description", "")),
                BackgroundTaskStatus(data["status"]),
                data.get("result_text"),
                data.get("error_text"),
            )
        except (KeyError, ValueError, TypeError) as e:
            raise ValueError(f"Not a background task record: {dict(data)!r} ({e})") from e

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BackgroundTaskInfo) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return (
            f"BackgroundTaskInfo(id={self.id!r}, agent_name={self.agent_name!r}, status={self.status.value!r}, "
            f"description={self.description!r})"
        )


@dataclass
class _Runtime:
    """What cannot be saved: the running asyncio tasks and the live child sessions of one parent session."""

    tasks: dict[int, asyncio.Task[AgentResponse]] = field(default_factory=lambda: {})
    sessions: dict[int, AgentSession] = field(default_factory=lambda: {})


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class BackgroundAgentsProvider(ContextProvider):
    """Let an agent start, await, list, continue and clear tasks on named background agents.

    Tools: ``background_agents_start_task``, ``background_agents_wait_for_first_completion``,
    ``background_agents_get_task_results``, ``background_agents_get_all_tasks``,
    ``background_agents_continue_task`` and ``background_agents_clear_completed_task``. Code (a notebook,
    the DevUI) uses :meth:`get_tasks`, :meth:`wait` and :meth:`cancel_task`.

    A background agent gets text the parent chose (which may come from untrusted context) and its output goes
    back into the parent's context: only give it agents you trust with that data.

    Args:
        agents: The agents work may be handed to; each needs a unique (case-insensitive) name.
        source_id: The provider's key in the session state.
        instructions: Replaces :data:`DEFAULT_BACKGROUND_AGENTS_INSTRUCTIONS` (``{background_agents}`` is
            replaced with the list of agents).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.harness import BackgroundAgentsProvider
        from agentnb.local import ScriptedChatClient

        helper = Agent(ScriptedChatClient(["Three sources found."]), name="researcher", description="Finds sources.")
        background = BackgroundAgentsProvider([helper])
        ```
    """

    def __init__(
        self,
        agents: Sequence[SupportsAgentRun],
        *,
        source_id: str = DEFAULT_BACKGROUND_AGENTS_SOURCE_ID,
        instructions: str | None = None,
    ) -> None:
        super().__init__(source_id)
        if not agents:
            raise ValueError("At least one background agent must be provided.")
        self._agents: dict[str, SupportsAgentRun] = {}
        for agent in agents:
            name = agent.name
            if not name or not name.strip():
                raise ValueError(f"Every background agent needs a non-empty name; {agent!r} has none.")
            if name.lower() in self._agents:
                raise ValueError(f"Duplicate background agent name {name!r}: names must be unique (case-insensitive).")
            self._agents[name.lower()] = agent
        listing = "\n".join(
            ["Available background agents:"]
            + [f"- {a.name}" + (f": {a.description}" if a.description else "") for a in self._agents.values()]
        )
        template = instructions if instructions is not None else DEFAULT_BACKGROUND_AGENTS_INSTRUCTIONS
        self.instructions = template.replace("{background_agents}", listing)
        self._runtime: dict[str, _Runtime] = {}
        self._tools = ToolCache()

    @property
    def agents(self) -> list[SupportsAgentRun]:
        """The agents work may be handed to."""
        return list(self._agents.values())

    # -- state ---------------------------------------------------------------------------------------------
    def _state(self, session: AgentSession) -> dict[str, Any]:
        value = session.state.setdefault(self.source_id, {})
        if not isinstance(value, dict):
            raise ValueError(f"session.state[{self.source_id!r}] must be a dict, got {type(value).__name__}")
        state = cast("dict[str, Any]", value)
        state.setdefault("next_task_id", 1)
        state.setdefault("tasks", [])
        state.setdefault("sessions", {})
        return state

    def _runtime_of(self, session: AgentSession) -> _Runtime:
        return self._runtime.setdefault(session.session_id, _Runtime())

    def _load(self, session: AgentSession) -> list[BackgroundTaskInfo]:
        return [BackgroundTaskInfo.from_dict(t) for t in self._state(session)["tasks"]]

    def _save(self, session: AgentSession, tasks: list[BackgroundTaskInfo]) -> None:
        self._state(session)["tasks"] = [t.to_dict() for t in tasks]

    def _update(self, session: AgentSession, task_id: int, **changes: Any) -> None:
        tasks = self._load(session)
        for info in tasks:
            if info.id == task_id:
                for key, value in changes.items():
                    setattr(info, key, value)
        self._save(session, tasks)

    def get_tasks(self, session: AgentSession) -> list[BackgroundTaskInfo]:
        """The session's tasks, refreshed: a task marked running whose process is gone becomes ``lost``."""
        runtime = self._runtime.get(session.session_id)
        tasks = self._load(session)
        changed = False
        for info in tasks:
            if info.status is BackgroundTaskStatus.RUNNING and (runtime is None or info.id not in runtime.tasks):
                info.status, changed = BackgroundTaskStatus.LOST, True
        if changed:
            self._save(session, tasks)
        return tasks

    # -- running -------------------------------------------------------------------------------------------
    def _launch(self, session: AgentSession, task_id: int, agent: SupportsAgentRun, text: str) -> None:
        runtime = self._runtime_of(session)
        child = runtime.sessions.get(task_id)
        if child is None:
            saved = self._state(session)["sessions"].get(str(task_id))
            child = AgentSession.from_dict(saved) if saved else agent.create_session()
            runtime.sessions[task_id] = child

        async def run() -> AgentResponse:
            return await cast("Any", agent.run(text, session=child))

        task = asyncio.get_running_loop().create_task(run(), name=f"background task {task_id} ({agent.name})")
        runtime.tasks[task_id] = task
        task.add_done_callback(lambda done: self._finish(session, task_id, done))

    def _finish(self, session: AgentSession, task_id: int, done: asyncio.Task[AgentResponse]) -> None:
        """Record how a task ended, the moment it ends (its error if it raised; never left running)."""
        runtime = self._runtime_of(session)
        if runtime.tasks.get(task_id) is not done:
            return  # cleared or restarted meanwhile
        child = runtime.sessions.get(task_id)
        if child is not None:
            with contextlib.suppress(Exception):  # a child whose state cannot be saved only loses continuation
                self._state(session)["sessions"][str(task_id)] = child.to_dict()
        if done.cancelled():
            self._update(session, task_id, status=BackgroundTaskStatus.FAILED, error_text="Task was cancelled.")
        elif (error := done.exception()) is not None:
            self._update(session, task_id, status=BackgroundTaskStatus.FAILED, error_text=_error_text(error))
        else:
            self._update(session, task_id, status=BackgroundTaskStatus.COMPLETED, result_text=done.result().text)
        del runtime.tasks[task_id]

    def start_task(self, session: AgentSession, agent_name: str, input: str, description: str) -> BackgroundTaskInfo:
        """Start ``input`` on the named agent in the background; what ``background_agents_start_task`` does.

        Raises:
            ValueError: No agent has that name.
        """
        agent = self._agents.get(agent_name.strip().lower())
        if agent is None:
            names = ", ".join(a.name or "" for a in self._agents.values())
            raise ValueError(f"No background agent is named {agent_name!r}. Available agents: {names}")
        state = self._state(session)
        task_id = int(state["next_task_id"])
        state["next_task_id"] = task_id + 1
        info = BackgroundTaskInfo(task_id, agent.name or agent_name, description)
        self._save(session, [*self._load(session), info])
        self._launch(session, task_id, agent, input)
        return info

    async def wait(self, session: AgentSession, task_ids: Sequence[int] | None = None) -> BackgroundTaskInfo | None:
        """Wait until the first of these running tasks (all running ones by default) ends; that task, or ``None``."""
        runtime = self._runtime_of(session)
        ids = list(runtime.tasks) if task_ids is None else [i for i in task_ids if i in runtime.tasks]
        waiting = {runtime.tasks[i]: i for i in ids}
        if not waiting:
            return None
        done, _ = await asyncio.wait(list(waiting), return_when=asyncio.FIRST_COMPLETED)
        finished = next(waiting[t] for t in waiting if t in done)
        await asyncio.sleep(0)  # let the done-callbacks record the outcome
        return next((t for t in self._load(session) if t.id == finished), None)

    async def cancel_task(self, session: AgentSession, task_id: int) -> bool:
        """Cancel a running task (it becomes a failed task, "Task was cancelled."); ``False`` if it was not running."""
        task = self._runtime_of(session).tasks.get(task_id)
        if task is None:
            return False
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        await asyncio.sleep(0)
        return True

    def tools(self, session: AgentSession) -> list[FunctionTool]:
        """The six background-agent tools working for ``session``."""

        @tool(name="background_agents_start_task")
        async def background_agents_start_task(agent_name: str, input: str, description: str) -> str:
            """Start a background task on a named agent; returns the task's id."""
            try:
                info = self.start_task(session, agent_name, input, description)
            except ValueError as e:
                return f"Error: {e}"
            return f"Background task {info.id} started on agent '{info.agent_name}'."

        @tool(name="background_agents_wait_for_first_completion")
        async def background_agents_wait_for_first_completion(task_ids: list[int]) -> str:
            """Block until the first of the given background tasks finishes; returns its id and status."""
            if not task_ids:
                return "Error: no task ids given."
            info = await self.wait(session, task_ids)
            if info is None:
                known = {t.id: t for t in self.get_tasks(session)}
                stopped = next((known[i] for i in task_ids if i in known), None)
                if stopped is not None:
                    return f"Task {stopped.id} is not running; its status is {stopped.status.value}."
                return "Error: none of these task ids is a running task."
            return f"Task {info.id} finished with status: {info.status.value}."

        @tool(name="background_agents_get_task_results")
        def background_agents_get_task_results(task_id: int) -> str:
            """Get the text output of a background task by id."""
            info = next((t for t in self.get_tasks(session) if t.id == task_id), None)
            if info is None:
                return f"Error: no task has id {task_id}."
            return {
                BackgroundTaskStatus.COMPLETED: info.result_text or "(no output)",
                BackgroundTaskStatus.FAILED: f"Task failed: {info.error_text or 'unknown error'}",
                BackgroundTaskStatus.LOST: "Task state was lost (its process is gone); start a new task.",
                BackgroundTaskStatus.RUNNING: f"Task {task_id} is still running.",
            }[info.status]

        @tool(name="background_agents_get_all_tasks")
        def background_agents_get_all_tasks() -> str:
            """List all background tasks with their ids, statuses, agents and descriptions."""
            tasks = self.get_tasks(session)
            if not tasks:
                return "No tasks."
            return "\n".join(
                ["Tasks:"] + [f"- Task {t.id} [{t.status.value}] ({t.agent_name}): {t.description}" for t in tasks]
            )

        @tool(name="background_agents_continue_task")
        async def background_agents_continue_task(task_id: int, text: str) -> str:
            """Send follow-up input to a finished task, resuming its work in the same session."""
            info = next((t for t in self.get_tasks(session) if t.id == task_id), None)
            if info is None:
                return f"Error: no task has id {task_id}."
            if info.status is BackgroundTaskStatus.RUNNING:
                return f"Error: task {task_id} is still running; wait for it to finish first."
            agent = self._agents.get(info.agent_name.lower())
            if agent is None:
                return f"Error: agent '{info.agent_name}' is no longer available."
            has_session = (
                task_id in self._runtime_of(session).sessions or str(task_id) in self._state(session)["sessions"]
            )
            if info.status is BackgroundTaskStatus.LOST or not has_session:
                return f"Error: task {task_id}'s session was lost; start a new task instead."
            self._update(session, task_id, status=BackgroundTaskStatus.RUNNING, result_text=None, error_text=None)
            self._launch(session, task_id, agent, text)
            return f"Task {task_id} continued with new input."

        @tool(name="background_agents_clear_completed_task")
        def background_agents_clear_completed_task(task_id: int) -> str:
            """Remove a finished task and release its session."""
            tasks = self.get_tasks(session)
            info = next((t for t in tasks if t.id == task_id), None)
            if info is None:
                return f"Error: no task has id {task_id}."
            if info.status is BackgroundTaskStatus.RUNNING:
                return f"Error: task {task_id} is still running; wait for it to finish before clearing it."
            self._save(session, [t for t in tasks if t.id != task_id])
            self._state(session)["sessions"].pop(str(task_id), None)
            runtime = self._runtime_of(session)
            runtime.tasks.pop(task_id, None)
            runtime.sessions.pop(task_id, None)
            return f"Task {task_id} cleared."

        return [
            background_agents_start_task,
            background_agents_wait_for_first_completion,
            background_agents_get_task_results,
            background_agents_get_all_tasks,
            background_agents_continue_task,
            background_agents_clear_completed_task,
        ]

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        session = session if session is not None else AgentSession(session_id=context.session_id)
        context.extend_instructions(self.source_id, self.instructions)
        context.extend_tools(self.source_id, self._tools.get(session, self.source_id, lambda: self.tools(session)))
        tasks = self.get_tasks(session)
        if tasks:
            lines = ["### Current background tasks"] + [
                f"- Task {t.id} [{t.status.value}] ({t.agent_name}): {t.description}" for t in tasks
            ]
            context.extend_messages(self.source_id, [Message("user", ["\n".join(lines)])])

    def __repr__(self) -> str:
        return f"BackgroundAgentsProvider(agents={[a.name for a in self._agents.values()]!r})"
