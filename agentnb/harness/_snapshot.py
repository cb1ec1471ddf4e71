"""A harness agent's state at one moment, as typed data and as escaped HTML, for the notebook and the DevUI.

The views hold no harness rules: they ask :func:`harness_snapshot` what the session holds (todos, mode,
background tasks, loop progress, files touched, memory files) and render the :class:`HarnessSnapshot`.
Everything in it may come from a model (todo titles, file names, memory contents), so every value is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from .. import _html as h
from .._sessions import AgentSession
from ..exceptions import AgentnbError
from ._background import BackgroundAgentsProvider, BackgroundTaskInfo, BackgroundTaskStatus
from ._file_access import FileAccessProvider
from ._file_memory import FileMemoryProvider
from ._loop import LOOP_STATE_KEY
from ._memory import MemoryContextProvider, MemoryTopicRecord
from ._mode import AgentModeProvider
from ._todo import TodoItem, TodoProvider

__all__ = ["HarnessSnapshot", "MemoryFile", "harness_snapshot", "is_harness_agent"]

#: Memory file contents longer than this are cut in the view (the file itself is untouched).
MAX_MEMORY_PREVIEW = 4_000

_TASK_BADGES = {
    BackgroundTaskStatus.RUNNING: "info",
    BackgroundTaskStatus.COMPLETED: "ok",
    BackgroundTaskStatus.FAILED: "err",
    BackgroundTaskStatus.LOST: "warn",
}


@dataclass
class MemoryFile:
    """One memory file as the view shows it."""

    name: str
    description: str | None
    content: str | None


@dataclass
class HarnessSnapshot:
    """What a harness agent's session holds right now; ``_repr_html_`` renders it (escaped).

    Example:
        ```python
        from agentnb.harness import InMemoryAgentFileStore, create_harness_agent, harness_snapshot
        from agentnb.local import ScriptedChatClient

        agent = create_harness_agent(ScriptedChatClient([]), file_memory_store=InMemoryAgentFileStore())
        session = agent.create_session()
        await harness_snapshot(agent, session)  # displays the (empty) panels
        ```
    """

    session_id: str
    todos: list[TodoItem] | None = None
    mode: str | None = None
    modes: tuple[str, ...] = ()
    tasks: list[BackgroundTaskInfo] | None = None
    loop: dict[str, Any] = field(default_factory=lambda: {})
    touched: list[dict[str, str]] = field(default_factory=lambda: [])
    memories: list[MemoryFile] | None = None
    topics: list[MemoryTopicRecord] | None = None

    @property
    def open_todos(self) -> int:
        """How many todos are not done."""
        return sum(not t.is_complete for t in self.todos or [])

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as JSON data (what the DevUI's API serves)."""
        return {
            "session_id": self.session_id,
            "todos": [t.to_dict() for t in self.todos] if self.todos is not None else None,
            "mode": self.mode,
            "modes": list(self.modes),
            "tasks": [t.to_dict() for t in self.tasks] if self.tasks is not None else None,
            "loop": dict(self.loop),
            "touched": list(self.touched),
            "memories": [m.__dict__ for m in self.memories] if self.memories is not None else None,
            "topics": [t.to_dict() for t in self.topics] if self.topics is not None else None,
        }

    def to_html(self) -> str:
        """The panels as safe HTML (without the stylesheet wrapper)."""
        parts: list[str] = []
        summary: list[str] = []
        if self.mode is not None:
            summary.append(f"mode {h.badge(self.mode, 'info')}")
        if self.loop:
            cap = self.loop.get("max_iterations")
            state = "running" if self.loop.get("running") else "stopped"
            iteration = f"iteration {self.loop.get('iteration', 0)}" + (f" of {cap}" if cap else "")
            summary.append(f"loop {h.badge(iteration)} {h.badge(state, 'info' if state == 'running' else '')}")
        if self.todos is not None:
            summary.append(f"todos {h.badge(f'{len(self.todos) - self.open_todos}/{len(self.todos)} done', 'ok')}")
        if summary:
            parts.append(f"<div class='anb-harness-summary'>{' · '.join(summary)}</div>")
        if self.todos is not None:
            items = "".join(
                f"<li class='anb-todo {'anb-done' if t.is_complete else 'anb-open'}'>"
                f"{'☑' if t.is_complete else '☐'} <b>{h.escape(t.title)}</b>"
                + (f" <span class='anb-muted'>{h.escape(t.description)}</span>" if t.description else "")
                + "</li>"
                for t in self.todos
            )
            parts.append(h.details("Todos", f"<ul class='anb-todos'>{items or '<li>none yet</li>'}</ul>", open=True))
        if self.tasks is not None:
            rows = "".join(
                f"<tr><td>#{t.id}</td><td>{h.escape(t.agent_name)}</td><td>{h.escape(t.description)}</td>"
                f"<td>{h.badge(t.status.value, _TASK_BADGES[t.status])}</td>"
                f"<td>{h.escape(h.shorten(t.error_text or t.result_text or '', 200))}</td></tr>"
                for t in self.tasks
            )
            head = "<tr><th>task</th><th>agent</th><th>description</th><th>status</th><th>result</th></tr>"
            body = f"<table class='anb-table'>{head}{rows}</table>" if rows else "no tasks"
            parts.append(h.details("Background tasks", body, open=True))
        if self.memories is not None:
            files = "".join(
                h.details(
                    f"<code>{h.escape(m.name)}</code>"
                    + (f" <span class='anb-muted'>{h.escape(m.description)}</span>" if m.description else ""),
                    f"<pre class='anb-memory'>{h.escape(h.shorten(m.content or '', MAX_MEMORY_PREVIEW))}</pre>",
                )
                for m in self.memories
            )
            parts.append(h.details("Memory files", files or "none yet", open=True))
        if self.topics is not None:
            blocks = "".join(
                h.details(
                    f"<b>{h.escape(t.topic)}</b> <span class='anb-muted'>{h.escape(t.summary)}</span>",
                    "<ul>" + "".join(f"<li>{h.escape(m)}</li>" for m in t.memories) + "</ul>",
                )
                for t in self.topics
            )
            parts.append(h.details("Durable memory (topics)", blocks or "none yet", open=True))
        if self.touched:
            rows = "".join(
                f"<li>{h.escape(t.get('action', ''))} <code>{h.escape(t.get('path', ''))}</code></li>"
                for t in self.touched[-20:]
            )
            parts.append(h.details(f"Files touched ({len(self.touched)})", f"<ul>{rows}</ul>"))
        return f"<div class='anb-harness'>{''.join(parts)}</div>"

    def _repr_html_(self) -> str:
        return h.wrap(self.to_html())

    def __repr__(self) -> str:
        todos = f"{len(self.todos or []) - self.open_todos}/{len(self.todos or [])} todos done"
        return f"HarnessSnapshot(session={self.session_id!r}, mode={self.mode!r}, {todos})"


_HARNESS_PROVIDERS = (
    TodoProvider,
    AgentModeProvider,
    FileMemoryProvider,
    FileAccessProvider,
    BackgroundAgentsProvider,
    MemoryContextProvider,
)


def is_harness_agent(agent: Any) -> bool:
    """Whether ``agent`` carries harness providers (the views then show the harness panels)."""
    providers: list[object] = list(getattr(agent, "context_providers", None) or [])
    return any(isinstance(p, _HARNESS_PROVIDERS) for p in providers)


def _provider(agent: Any, kind: type) -> Any:
    return next((p for p in getattr(agent, "context_providers", []) if isinstance(p, kind)), None)


async def harness_snapshot(agent: Any, session: AgentSession, *, memories: bool = True) -> HarnessSnapshot:
    """What ``agent``'s harness providers hold in ``session`` (memory files read when ``memories``)."""
    snap = HarnessSnapshot(session_id=session.session_id)
    todos = _provider(agent, TodoProvider)
    if todos is not None:
        try:
            snap.todos = await todos.get_items(session)
        except ValueError:  # hand-edited state: the view shows nothing rather than failing
            snap.todos = []
    modes = _provider(agent, AgentModeProvider)
    if modes is not None:
        snap.mode, snap.modes = modes.get_mode(session), tuple(modes.available_modes)
    background = _provider(agent, BackgroundAgentsProvider)
    if background is not None:
        snap.tasks = background.get_tasks(session)
    loop = session.state.get(LOOP_STATE_KEY)
    if isinstance(loop, dict):
        snap.loop = dict(cast("dict[str, Any]", loop))
    for kind in (FileAccessProvider, FileMemoryProvider):
        provider = _provider(agent, kind)
        state = session.state.get(provider.source_id) if provider is not None else None
        if isinstance(state, dict):
            snap.touched.extend(cast("dict[str, Any]", state).get("touched", []))
    memory = _provider(agent, FileMemoryProvider)
    if memory is not None and memories:
        listed = await memory.list_memories(session)
        snap.memories = [
            MemoryFile(m["name"], m["description"], await memory.read_memory(session, m["name"])) for m in listed
        ]
    durable = _provider(agent, MemoryContextProvider)
    if durable is not None and memories:
        try:
            snap.topics = durable.store.list_topics(session, source_id=durable.source_id)
        except AgentnbError:  # no owner in the session yet: nothing to show
            snap.topics = []
    return snap
