"""File memory: an agent's own notes as files, one flat folder per session (or per scope), with an index.

The model writes memories with descriptive names and optional descriptions (kept in ``<stem>_description.md``
sidecars); after each write or delete the provider rebuilds a capped ``memories.md`` index, and before each
run it shows the model that index so it knows what it already wrote. The sidecars and the index are the
provider's own files: hidden from listing and search, and refused as targets of any writing tool, however
their names are spelled.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Annotated, Any

from pydantic import BaseModel, Field

from .._sessions import AgentSession, ContextProvider, SessionContext
from .._tools import FunctionTool, tool
from .._types import Message
from ._edits import LineEdit, apply_replace, apply_replace_lines, line_edits
from ._file_access import record_touch
from ._file_store import AgentFileStore, FileStoreEntry, matches_glob, normalize_path
from ._tool_cache import ToolCache

__all__ = ["DEFAULT_FILE_MEMORY_INSTRUCTIONS", "DEFAULT_FILE_MEMORY_SOURCE_ID", "FileMemoryProvider"]

logger = logging.getLogger("agentnb.harness")

DEFAULT_FILE_MEMORY_SOURCE_ID = "file_memory"
DEFAULT_FILE_MEMORY_INSTRUCTIONS = (
    "## File Based Memory\n"
    "You have a file-based memory for this session, through the `file_memory_*` tools. Its files are your "
    "working memory: isolated from other sessions, kept across turns. Store plans, findings, results and "
    "downloaded data there.\n\n"
    '- Use descriptive file names (e.g. "projectarchitecture.md", "userpreferences.md").\n'
    "- Give a description when you write a file, to help find it later.\n"
    "- Before starting a task, check file_memory_ls and file_memory_grep for memories that avoid duplicate work.\n"
    "- Keep memories current by overwriting files when what they say changes.\n"
    "- Write large data you will need later (web pages, API responses, research results) to files, so it is "
    "not lost when older context is compacted or truncated."
)
DESCRIPTION_SUFFIX = "_description.md"
INDEX_FILE_NAME = "memories.md"
MAX_INDEX_ENTRIES = 50


def description_file_name(file_name: str) -> str:
    """The sidecar holding ``file_name``'s description: ``notes.md`` -> ``notes_description.md``."""
    dot = file_name.rfind(".")
    return f"{file_name[:dot]}{DESCRIPTION_SUFFIX}" if dot > 0 else f"{file_name}{DESCRIPTION_SUFFIX}"


def is_internal_file(file_name: str) -> bool:
    """Whether ``file_name`` is the index or a description sidecar (compared without case or stray spaces)."""
    lowered = file_name.strip().lower()
    return lowered.endswith(DESCRIPTION_SUFFIX) or lowered == INDEX_FILE_NAME


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


class _WriteInput(BaseModel):
    file_name: Annotated[str, Field(description="Flat file name (no path separators).")]
    content: Annotated[str, Field(description="Full text content to write to the file.")]
    description: Annotated[
        str | None, Field(description="Optional summary that helps find the file later; recommended for large files.")
    ] = None


class _FileInput(BaseModel):
    file_name: Annotated[str, Field(description="Name of the memory file.")]


class _ListInput(BaseModel):
    glob_pattern: Annotated[str | None, Field(description='Optional glob (e.g. "*.md") filtering file names.')] = None


class _ReplaceInput(BaseModel):
    file_name: Annotated[str, Field(description="Name of the memory file to modify.")]
    old_string: Annotated[str, Field(description="Substring to find and replace.")]
    new_string: Annotated[str, Field(description="Replacement text.")]
    replace_all: Annotated[
        bool, Field(description="Replace every occurrence; when false, fail unless exactly one occurrence exists.")
    ] = False


class _ReplaceLinesInput(BaseModel):
    file_name: Annotated[str, Field(description="Name of the memory file to modify.")]
    edits: Annotated[list[LineEdit], Field(description="1-based line numbers and their literal replacement text.")]


class _GrepInput(BaseModel):
    regex_pattern: Annotated[
        str, Field(description="Case-insensitive regex matched against file contents; 256 characters or fewer.")
    ]
    glob_pattern: Annotated[
        str | None, Field(description='Optional glob filtering the files searched (e.g. "*.md").')
    ] = None


class FileMemoryProvider(ContextProvider):
    """Give an agent a file-based memory: seven ``file_memory_*`` tools and an index it sees before each run.

    Args:
        store: Where memories live (the harness uses a ``FileSystemAgentFileStore`` under the working directory).
        source_id: The provider's key in the session state.
        scope: The folder memories go in; by default the session id, so each session has its own memory.
            Pass a user id (say) to share memories across that user's sessions.
        instructions: Replaces :data:`DEFAULT_FILE_MEMORY_INSTRUCTIONS`.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.harness import FileMemoryProvider, InMemoryAgentFileStore
        from agentnb.local import ScriptedChatClient

        memory = FileMemoryProvider(InMemoryAgentFileStore())
        agent = Agent(ScriptedChatClient(["Noted."]), context_providers=[memory])
        session = agent.create_session()
        await agent.run("Remember I like tea.", session=session)
        await memory.list_memories(session)  # [] until the model writes one
        ```
    """

    def __init__(
        self,
        store: AgentFileStore,
        *,
        source_id: str = DEFAULT_FILE_MEMORY_SOURCE_ID,
        scope: str | None = None,
        instructions: str | None = None,
    ) -> None:
        if not isinstance(store, AgentFileStore):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"store must be an AgentFileStore, got {type(store).__name__}")
        super().__init__(source_id)
        self.store = store
        self.scope = scope if scope is None else normalize_path(scope, is_directory=True)
        self.instructions = instructions or DEFAULT_FILE_MEMORY_INSTRUCTIONS
        self._write_lock = asyncio.Lock()  # a write and its index rebuild happen together
        self._tools = ToolCache()

    def working_folder(self, session_id: str | None) -> str:
        """The folder this provider's memories live in for ``session_id``."""
        if self.scope is not None:
            return self.scope
        # A session id is an opaque string: keep it one safe path segment whatever it holds.
        return re.sub(r"[^A-Za-z0-9._-]", "_", session_id or "").strip(".") or ""

    async def list_memories(self, session: AgentSession | str | None) -> list[dict[str, Any]]:
        """The memory files of a session (or scope) with their descriptions, as ``file_memory_ls`` shows them."""
        session_id = session.session_id if isinstance(session, AgentSession) else session
        return await self._list(self.working_folder(session_id), None)

    async def read_memory(self, session: AgentSession | str | None, file_name: str) -> str | None:
        """One memory file's content (``None`` if absent); the provider's own files are not memories."""
        session_id = session.session_id if isinstance(session, AgentSession) else session
        name = normalize_path(file_name)
        if "/" in name or is_internal_file(name):
            return None
        return await self.store.read(_join(self.working_folder(session_id), name))

    async def _list(self, folder: str, glob_pattern: str | None) -> list[dict[str, Any]]:
        entries = await self.store.list_children(folder)
        names = [e.name for e in entries if e.type == FileStoreEntry.FILE]
        present = {n.lower() for n in names}
        out: list[dict[str, Any]] = []
        for name in sorted(names, key=str.lower):
            if is_internal_file(name) or not matches_glob(name, glob_pattern):
                continue
            sidecar = description_file_name(name)
            description = await self.store.read(_join(folder, sidecar)) if sidecar.lower() in present else None
            out.append({"name": name, "type": "file", "description": description})
        return out

    async def _rebuild_index(self, folder: str) -> None:
        lines = ["# Memory Index", ""]
        for entry in (await self._list(folder, None))[:MAX_INDEX_ENTRIES]:
            description = (entry["description"] or "").strip()
            lines.append(f"- **{entry['name']}**: {description}" if description else f"- **{entry['name']}**")
        await self.store.write(_join(folder, INDEX_FILE_NAME), "\n".join(lines) + "\n")

    @staticmethod
    def _target(file_name: str, verb: str, *, writing: bool) -> tuple[str | None, str | None]:
        """The normalized flat name, or the message telling the model why it cannot use it."""
        try:
            name = normalize_path(file_name)
        except ValueError as e:
            return None, f"Could not {verb} '{file_name}': {e}"
        if "/" in name:
            if writing and verb != "delete file":  # a nested file cannot exist: deleting one finds nothing
                return None, (
                    f"Could not {verb} '{file_name}': memory files cannot live in a subdirectory; choose a flat "
                    "name without path separators."
                )
            return None, f"File '{file_name}' not found."
        if writing and is_internal_file(name):
            return None, f"Could not {verb} '{file_name}': the name is reserved for internal use; choose another."
        return name, None

    def tools(self, folder: str, state: dict[str, Any] | None = None) -> list[FunctionTool]:
        """The seven memory tools working in ``folder``; ``state`` records the files they touch."""
        store, lock, log = self.store, self._write_lock, state if state is not None else {}
        target, rebuild = self._target, self._rebuild_index

        @tool(name="file_memory_write", schema=_WriteInput)
        async def file_memory_write(file_name: str, content: str, description: str | None = None) -> str:
            """Write a memory file (replacing it if it exists); give a description for large files to aid discovery."""
            name, problem = target(file_name, "write file", writing=True)
            if name is None:
                return problem or ""
            sidecar = _join(folder, description_file_name(name))
            async with lock:
                try:
                    await store.write(_join(folder, name), content)
                    if description and description.strip():
                        await store.write(sidecar, description.strip())
                    else:
                        await store.delete(sidecar)
                    await rebuild(folder)
                except (ValueError, OSError) as e:
                    return f"Could not write file '{file_name}': {e}"
            record_touch(log, name, "write")
            return f"File '{file_name}' written" + (
                " with description." if description and description.strip() else "."
            )

        @tool(name="file_memory_read", schema=_FileInput)
        async def file_memory_read(file_name: str) -> str:
            """Read a memory file by name."""
            name, problem = target(file_name, "read file", writing=False)
            if name is None:
                return problem or ""
            try:
                content = await store.read(_join(folder, name))
            except (ValueError, OSError) as e:
                return f"Could not read file '{file_name}': {e}"
            if content is None:
                return f"File '{file_name}' not found."
            record_touch(log, name, "read")
            return content

        @tool(name="file_memory_delete", schema=_FileInput)
        async def file_memory_delete(file_name: str) -> str:
            """Delete a memory file and its description."""
            name, problem = target(file_name, "delete file", writing=True)
            if name is None:
                return problem or ""
            async with lock:
                try:
                    deleted = await store.delete(_join(folder, name))
                    await store.delete(_join(folder, description_file_name(name)))
                    await rebuild(folder)
                except (ValueError, OSError) as e:
                    return f"Could not delete file '{file_name}': {e}"
            if not deleted:
                return f"File '{file_name}' not found."
            record_touch(log, name, "delete")
            return f"File '{file_name}' deleted."

        @tool(name="file_memory_ls", schema=_ListInput)
        async def file_memory_ls(glob_pattern: str | None = None) -> Any:
            """List memory files with their descriptions, optionally filtered by a glob; each is {name, type, description}."""  # noqa: E501
            try:
                return await self._list(folder, glob_pattern)
            except (ValueError, OSError) as e:
                return f"Could not list memory files: {e}"

        @tool(name="file_memory_grep", schema=_GrepInput)
        async def file_memory_grep(regex_pattern: str, glob_pattern: str | None = None) -> Any:
            """Search memory file contents with a case-insensitive regex, optionally filtered by a glob; returns names, snippets and numbered lines."""  # noqa: E501
            try:
                results = await store.search(folder, regex_pattern, glob_pattern or None, recursive=False)
            except (ValueError, OSError) as e:
                return f"Could not search memory files: {e}"
            except re.error as e:
                return f"Could not search memory files: invalid pattern ({e})."
            return [r.to_dict() for r in results if not is_internal_file(r.file_name)]

        @tool(name="file_memory_replace", schema=_ReplaceInput)
        async def file_memory_replace(
            file_name: str, old_string: str, new_string: str, replace_all: bool = False
        ) -> str:
            """Replace old_string with new_string in a memory file; fails if it is missing, or occurs more than once without replace_all."""  # noqa: E501
            name, problem = target(file_name, "replace in file", writing=True)
            if name is None:
                return problem or ""
            async with lock:
                try:
                    content = await store.read(_join(folder, name))
                    if content is None:
                        return f"File '{file_name}' not found."
                    updated, count = apply_replace(content, old_string, new_string, replace_all)
                    await store.write(_join(folder, name), updated)
                except (ValueError, OSError) as e:
                    return f"Could not replace in file '{file_name}': {e}"
            record_touch(log, name, "replace")
            return f"Replaced {count} occurrence(s) in '{file_name}'."

        @tool(name="file_memory_replace_lines", schema=_ReplaceLinesInput)
        async def file_memory_replace_lines(file_name: str, edits: list[LineEdit]) -> str:
            """Replace whole 1-based lines of a memory file with literal text (an empty new_line deletes the line)."""
            name, problem = target(file_name, "edit file", writing=True)
            if name is None:
                return problem or ""
            async with lock:
                try:
                    content = await store.read(_join(folder, name))
                    if content is None:
                        return f"File '{file_name}' not found."
                    await store.write(_join(folder, name), apply_replace_lines(content, line_edits(edits)))
                except (ValueError, OSError) as e:
                    return f"Could not edit file '{file_name}': {e}"
            record_touch(log, name, "replace_lines")
            return f"Replaced {len(edits)} line(s) in '{file_name}'."

        return [
            file_memory_write,
            file_memory_read,
            file_memory_delete,
            file_memory_ls,
            file_memory_grep,
            file_memory_replace,
            file_memory_replace_lines,
        ]

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        folder = self.working_folder(context.session_id)
        context.extend_instructions(self.source_id, self.instructions)
        tools = self._tools.get(session, (folder, id(state)), lambda: self.tools(folder, state))
        context.extend_tools(self.source_id, tools)
        try:
            index = await self.store.read(_join(folder, INDEX_FILE_NAME))
        except (ValueError, OSError) as e:
            # An unreadable index must not block the run; the next write rebuilds it.
            logger.warning("Could not read the memory index; it is left out of this run: %s", e)
            index = None
        if index and index.strip():
            context.extend_messages(
                self.source_id,
                [
                    Message(
                        "user",
                        [
                            "The following is your memory index: the files you have written before. Read any of "
                            f"them with the file_memory_read tool.\n\n{index}"
                        ],
                    )
                ],
            )

    def __repr__(self) -> str:
        return f"FileMemoryProvider({self.store!r}, scope={self.scope!r})"
