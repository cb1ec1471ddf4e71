"""Todos: the plan a long-running agent keeps, as tools it calls and a list it sees before each run.

The list lives in the session state by default (:class:`TodoSessionStore`), so it saves, reloads and shows
in the notebook and DevUI with the session; :class:`TodoFileStore` keeps one JSON file per session instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import weakref
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from typing_extensions import NotRequired, TypedDict

from .._sessions import AgentSession, ContextProvider, SessionContext
from .._tools import FunctionTool, tool
from .._types import Message
from ..exceptions import SessionOwnerError
from ._tool_cache import ToolCache

__all__ = [
    "DEFAULT_TODO_INSTRUCTIONS",
    "DEFAULT_TODO_SOURCE_ID",
    "TodoFileStore",
    "TodoItem",
    "TodoProvider",
    "TodoSessionStore",
    "TodoStore",
]

DEFAULT_TODO_SOURCE_ID = "todo"
DEFAULT_TODO_INSTRUCTIONS = (
    "## Todo Items\n\n"
    "You have a todo list for tracking work items. When the user asks for something:\n"
    "1. Decide whether it needs several steps (complex) or one (simple).\n"
    "2. If complex, break it into manageable todo items and add them to the list.\n"
    "3. If simple, do not add a todo item; just do it.\n\n"
    "### General guidelines\n"
    "Ask the user for clarification where you need it to write good todos. If the user gives feedback on your "
    "plan, add or remove items to match. While working, keep the list current: complete items as you finish "
    "them and remove ones no longer needed. When the user changes topic or mind, update the list (remove old "
    "items, clear it, or add new ones).\n\n"
    "Tools:\n"
    "- todos_add: add one or many items.\n"
    "- todos_complete: mark one or many items done, each with a reason saying how it was completed.\n"
    "- todos_get_remaining: what is still open.\n"
    "- todos_get_all: the whole list, completed items included.\n"
    "- todos_remove: remove one or many items that are no longer needed."
)


class TodoItem:
    """One todo: an id, a title, an optional description, and whether it is done.

    Example:
        ```python
        from agentnb.harness import TodoItem

        TodoItem(1, "Load the data").to_dict()
        # {'id': 1, 'title': 'Load the data', 'description': None, 'is_complete': False}
        ```
    """

    __slots__ = ("description", "id", "is_complete", "title")

    def __init__(self, id: int, title: str, description: str | None = None, is_complete: bool = False) -> None:
        self.id = id
        self.title = title
        self.description = description
        self.is_complete = is_complete

    def to_dict(self, *, exclude_none: bool = False) -> dict[str, Any]:
        """The item as JSON data (how it is kept in the session state)."""
        data = {"id": self.id, "title": self.title, "description": self.description, "is_complete": self.is_complete}
        return {k: v for k, v in data.items() if v is not None} if exclude_none else data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TodoItem:
        """Rebuild an item, refusing data that is not one (stored state may have been edited by hand)."""
        item_id, title = data.get("id"), data.get("title")
        description, done = data.get("description"), data.get("is_complete", False)
        if isinstance(item_id, bool) or not isinstance(item_id, int):
            raise ValueError(f"A todo item's id must be an integer, got {item_id!r}")
        if not isinstance(title, str) or not title.strip():
            raise ValueError(f"A todo item's title must be a non-empty string, got {title!r}")
        if description is not None and not isinstance(description, str):
            raise ValueError(f"A todo item's description must be a string or null, got {description!r}")
        if not isinstance(done, bool):
            raise ValueError(f"A todo item's is_complete must be a boolean, got {done!r}")
        return cls(item_id, title, description, done)

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string (``kwargs`` go to ``json.dumps``)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, value: str | bytes, /) -> TodoItem:
        """Rebuild an item from :meth:`to_json` output."""
        data = json.loads(value)
        if not isinstance(data, Mapping):
            raise ValueError(f"TodoItem.from_json needs a JSON object, got {type(data).__name__}.")
        return cls.from_dict(cast("Mapping[str, Any]", data))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TodoItem) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return (
            f"TodoItem(id={self.id!r}, title={self.title!r}, description={self.description!r}, "
            f"is_complete={self.is_complete!r})"
        )


def _parse_items(raw: object, where: str) -> list[TodoItem]:
    if not isinstance(raw, list):
        raise ValueError(f"{where} has a non-list 'items' field, got {type(raw).__name__}.")
    items: list[TodoItem] = []
    for index, item in enumerate(cast("list[object]", raw)):
        if not isinstance(item, Mapping):
            raise ValueError(f"Todo item at index {index} in {where} must be an object, got {type(item).__name__}.")
        items.append(TodoItem.from_dict(cast("Mapping[str, Any]", item)))
    return items


def _next_id(items: list[TodoItem], next_id: int) -> int:
    return max(next_id, max((i.id for i in items), default=0) + 1)


class TodoStore(ABC):
    """Where a session's todo list is kept."""

    @abstractmethod
    async def load_state(self, session: AgentSession, *, source_id: str) -> tuple[list[TodoItem], int]:
        """The session's items and the next free id."""

    @abstractmethod
    async def save_state(self, session: AgentSession, items: list[TodoItem], *, next_id: int, source_id: str) -> None:
        """Keep the session's items and the next free id."""

    async def load_items(self, session: AgentSession, *, source_id: str) -> list[TodoItem]:
        """The session's items."""
        return (await self.load_state(session, source_id=source_id))[0]


class TodoSessionStore(TodoStore):
    """Keeps the list in ``session.state[source_id]`` (``{"items": [...], "next_id": n}``), saved with the session."""

    @staticmethod
    def _slice(session: AgentSession, source_id: str) -> dict[str, Any]:
        value = session.state.setdefault(source_id, {})
        if not isinstance(value, dict):
            raise ValueError(
                f"Session state for source_id {source_id!r} (session.state[{source_id!r}]) must be a dict, got "
                f"{type(value).__name__}."
            )
        return cast("dict[str, Any]", value)

    async def load_state(self, session: AgentSession, *, source_id: str) -> tuple[list[TodoItem], int]:
        state = self._slice(session, source_id)
        where = f"Session state for source_id {source_id!r}"
        items = _parse_items(state.get("items", []), where)
        next_id = state.get("next_id", 1)
        if isinstance(next_id, bool) or not isinstance(next_id, int):
            raise ValueError(f"{where} has a non-integer 'next_id' field, got {next_id!r}.")
        return items, _next_id(items, next_id)

    async def save_state(self, session: AgentSession, items: list[TodoItem], *, next_id: int, source_id: str) -> None:
        state = self._slice(session, source_id)
        state["items"] = [i.to_dict() for i in items]
        state["next_id"] = _next_id(items, next_id)


def _segment(value: str) -> str:
    """``value`` as one safe path segment (what is not plain is hex-encoded, so distinct ids stay distinct)."""
    if re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}", value) and not value.endswith("."):
        return value
    return "~" + value.encode("utf-8").hex()[:200]


class TodoFileStore(TodoStore):
    """Keeps each session's list in ``base_path/<session id>/todos.<source id>.json``, written atomically.

    With ``owner_state_key`` the lists are kept per owner as well:
    ``base_path/<owner_prefix><owner>/<kind>/<session id>/todos.<source id>.json``, the owner read from
    ``session.state[owner_state_key]``. Values that are not plain path segments are hex-encoded; a session id
    with a path separator is refused.

    Args:
        base_path: The folder the files go under.
        kind: The folder under each owner (with ``owner_state_key`` only).
        owner_prefix: Put before the owner id (to keep tenants apart, say).
        owner_state_key: The ``session.state`` key holding the owner id; ``None`` keeps no owner folder.
        state_filename: The file name (the source id is put before its suffix).

    Example:
        ```python
        import tempfile
        from agentnb.harness import TodoFileStore, TodoProvider

        todos = TodoProvider(store=TodoFileStore(tempfile.mkdtemp()))
        ```
    """

    def __init__(
        self,
        base_path: str | os.PathLike[str],
        *,
        kind: str = "todos",
        owner_prefix: str = "",
        owner_state_key: str | None = None,
        state_filename: str = "todos.json",
    ) -> None:
        self.base_path = Path(base_path)
        self.kind = kind
        self.owner_prefix = owner_prefix
        self.owner_state_key = owner_state_key
        self.state_filename = state_filename

    def path_for(self, session: AgentSession, *, source_id: str) -> Path:
        """The JSON file holding ``session``'s list."""
        name = Path(self.state_filename)
        suffix = name.suffix or ".json"
        if "/" in session.session_id or "\\" in session.session_id:
            raise ValueError(f"TodoFileStore session_id must not contain path separators: {session.session_id!r}")
        folder = self.base_path
        if self.owner_state_key is not None:
            owner = session.state.get(self.owner_state_key)
            if owner is None:
                raise SessionOwnerError(
                    f"TodoFileStore keeps lists per owner: set session.state[{self.owner_state_key!r}] before running."
                )
            folder = folder / _segment(f"{self.owner_prefix}{owner}") / _segment(self.kind)
        return folder / _segment(session.session_id) / f"{name.stem}.{_segment(source_id)}{suffix}"

    async def load_state(self, session: AgentSession, *, source_id: str) -> tuple[list[TodoItem], int]:
        path = self.path_for(session, source_id=source_id)

        def load() -> tuple[list[TodoItem], int]:
            if not path.exists():
                return [], 1
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"The todo file {path} must hold a JSON object.")
            state = cast("dict[str, Any]", data)
            items = _parse_items(state.get("items", []), f"The todo file {path}")
            next_id = state.get("next_id", 1)
            if isinstance(next_id, bool) or not isinstance(next_id, int):
                raise ValueError(f"The todo file {path} has a non-integer 'next_id' field, got {next_id!r}.")
            return items, _next_id(items, next_id)

        return await asyncio.to_thread(load)

    async def save_state(self, session: AgentSession, items: list[TodoItem], *, next_id: int, source_id: str) -> None:
        path = self.path_for(session, source_id=source_id)
        payload = json.dumps({"items": [i.to_dict() for i in items], "next_id": _next_id(items, next_id)}) + "\n"

        def save() -> None:
            from .._files import private_dir

            private_dir(path.parent)
            temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            try:
                temp.write_text(payload, encoding="utf-8")
                os.replace(temp, path)  # a crash mid-write leaves the old file, never half a new one
            finally:
                temp.unlink(missing_ok=True)

        await asyncio.to_thread(save)


class _NewTodo(TypedDict):
    title: str
    description: NotRequired[str]


class _Completion(TypedDict):
    id: int
    reason: str


class TodoProvider(ContextProvider):
    """Give an agent a todo list: five ``todos_*`` tools and the current list before each run.

    Args:
        source_id: The provider's key in the session state.
        instructions: Replaces :data:`DEFAULT_TODO_INSTRUCTIONS`.
        store: Where lists are kept (:class:`TodoSessionStore` by default).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.harness import TodoProvider
        from agentnb.local import ScriptedChatClient

        todos = TodoProvider()
        agent = Agent(ScriptedChatClient(["Planned."]), context_providers=[todos])
        session = agent.create_session()
        await agent.run("Plan my week.", session=session)
        await todos.get_items(session)  # [] until the model adds some
        ```
    """

    def __init__(
        self,
        source_id: str = DEFAULT_TODO_SOURCE_ID,
        *,
        instructions: str | None = None,
        store: TodoStore | None = None,
    ) -> None:
        super().__init__(source_id)
        self.instructions = instructions or DEFAULT_TODO_INSTRUCTIONS
        self.store: TodoStore = store or TodoSessionStore()
        self._locks: weakref.WeakKeyDictionary[AgentSession, asyncio.Lock] = weakref.WeakKeyDictionary()
        self._tools = ToolCache()

    def _lock(self, session: AgentSession) -> asyncio.Lock:
        lock = self._locks.get(session)
        if lock is None:
            lock = self._locks[session] = asyncio.Lock()
        return lock

    async def get_items(self, session: AgentSession) -> list[TodoItem]:
        """The session's todo items, open and done."""
        return await self.store.load_items(session, source_id=self.source_id)

    async def add_items(self, session: AgentSession, todos: list[Mapping[str, Any] | str]) -> list[TodoItem]:
        """Add items (titles, or ``{"title", "description"}``) to the session's list; what ``todos_add`` does."""
        if not todos:
            raise ValueError("todos must contain at least one item.")
        parsed: list[tuple[str, str | None]] = []
        for todo in todos:
            raw: Mapping[str, Any] = {"title": todo} if isinstance(todo, str) else todo
            title, description = raw.get("title"), raw.get("description")
            if not isinstance(title, str) or not title.strip():
                raise ValueError(f"Each todo needs a non-empty title, got {title!r}")
            if description is not None and not isinstance(description, str):
                raise ValueError(f"A todo's description must be a string, got {description!r}")
            parsed.append((title.strip(), description.strip() if description else None))
        async with self._lock(session):
            items, next_id = await self.store.load_state(session, source_id=self.source_id)
            created: list[TodoItem] = []
            for title, description in parsed:
                created.append(TodoItem(next_id, title, description))
                next_id += 1
            await self.store.save_state(session, [*items, *created], next_id=next_id, source_id=self.source_id)
        return created

    async def complete_items(self, session: AgentSession, ids: list[int]) -> int:
        """Mark the open items with these ids done; how many changed."""
        async with self._lock(session):
            items, next_id = await self.store.load_state(session, source_id=self.source_id)
            wanted, count = set(ids), 0
            for item in items:
                if item.id in wanted and not item.is_complete:
                    item.is_complete = True
                    count += 1
            if count:
                await self.store.save_state(session, items, next_id=next_id, source_id=self.source_id)
        return count

    async def remove_items(self, session: AgentSession, ids: list[int]) -> int:
        """Remove the items with these ids; how many went."""
        async with self._lock(session):
            items, next_id = await self.store.load_state(session, source_id=self.source_id)
            kept = [i for i in items if i.id not in set(ids)]
            if len(kept) != len(items):
                await self.store.save_state(session, kept, next_id=next_id, source_id=self.source_id)
        return len(items) - len(kept)

    def tools(self, session: AgentSession) -> list[FunctionTool]:
        """The five todo tools working on ``session``'s list."""

        @tool(name="todos_add")
        async def todos_add(todos: list[_NewTodo]) -> str:
            """Add one or more todo items for the current session."""
            created = await self.add_items(session, [dict(t) for t in todos])
            return json.dumps([i.to_dict() for i in created])

        @tool(name="todos_complete")
        async def todos_complete(items: list[_Completion]) -> str:
            """Mark one or more todo items complete; each entry has an id and a reason saying how it was completed."""
            if not items:
                raise ValueError("items must contain at least one entry.")
            for entry in items:
                if not str(entry.get("reason", "")).strip():
                    raise ValueError(f"Completing todo {entry.get('id')} needs a non-empty reason.")
            return json.dumps({"completed": await self.complete_items(session, [e["id"] for e in items])})

        @tool(name="todos_remove")
        async def todos_remove(ids: list[int]) -> str:
            """Remove one or more todo items by id."""
            if not ids:
                raise ValueError("ids must contain at least one todo id.")
            return json.dumps({"removed": await self.remove_items(session, ids)})

        @tool(name="todos_get_remaining")
        async def todos_get_remaining() -> str:
            """The todo items not yet complete."""
            return json.dumps([i.to_dict() for i in await self.get_items(session) if not i.is_complete])

        @tool(name="todos_get_all")
        async def todos_get_all() -> str:
            """All todo items, complete and not."""
            return json.dumps([i.to_dict() for i in await self.get_items(session)])

        return [todos_add, todos_complete, todos_remove, todos_get_remaining, todos_get_all]

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        # Without a session the list lasts for this run only.
        session = session if session is not None else AgentSession(session_id=context.session_id)
        context.extend_instructions(self.source_id, self.instructions)
        context.extend_tools(self.source_id, self._tools.get(session, self.source_id, lambda: self.tools(session)))
        items = await self.get_items(session)
        lines = [
            f"- {i.id} [{'done' if i.is_complete else 'open'}] {i.title}"
            + (f": {i.description}" if i.description else "")
            for i in items
        ]
        context.extend_messages(
            self.source_id, [Message("user", ["### Current todo list\n" + ("\n".join(lines) or "- none yet")])]
        )

    def __repr__(self) -> str:
        return f"TodoProvider(source_id={self.source_id!r}, store={type(self.store).__name__})"
