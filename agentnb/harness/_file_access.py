"""File access: seven tools over a shared :class:`AgentFileStore`, every one under approval by default.

Unlike file memory (per session), this store is shared across sessions and agents: it is the user's
files. So by default every call, reads included, waits for a person's approval; the provider can lift
that at the source (``disable_*_approval``) or the caller can keep it and pass one of the two static
auto-approval rules to ``ToolApprovalMiddleware``.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, Field

from .._sessions import AgentSession, ContextProvider, SessionContext
from .._tools import ApprovalMode, FunctionTool, tool
from ._edits import LineEdit, apply_replace, apply_replace_lines, line_edits
from ._file_store import AgentFileStore, matches_glob, normalize_path
from ._tool_cache import ToolCache

if TYPE_CHECKING:
    from .._types import Content

__all__ = ["DEFAULT_FILE_ACCESS_INSTRUCTIONS", "DEFAULT_FILE_ACCESS_SOURCE_ID", "FileAccessProvider"]

DEFAULT_FILE_ACCESS_SOURCE_ID = "file_access"
DEFAULT_FILE_ACCESS_INSTRUCTIONS = (
    "## File Access\n"
    "You can read, write and manage files in a shared storage area with the `file_access_*` tools.\n"
    "These files outlive this session and may be shared with other sessions or agents.\n"
    "Use them to read input the user gave you, write output artifacts, and manage the files the user asked "
    "you to work with.\n\n"
    "- Never delete or overwrite existing files unless the user explicitly asked you to.\n"
    "- Files may sit in subdirectories: use `file_access_ls` to walk the tree level by level, or "
    "`file_access_grep` to search file contents across the whole store."
)
#: How many touched files a session's state remembers (for the notebook and DevUI views).
MAX_TOUCHED = 200


class _WriteInput(BaseModel):
    file_name: Annotated[str, Field(description="Name (relative path) of the file to write.")]
    content: Annotated[str, Field(description="Full text content to write to the file.")]
    overwrite: Annotated[
        bool, Field(description="When true, replace an existing file; otherwise writing fails if it exists.")
    ] = False


class _FileInput(BaseModel):
    file_name: Annotated[str, Field(description="Name (relative path) of the file.")]


class _ListInput(BaseModel):
    directory: Annotated[
        str | None, Field(description="Relative directory to list; omit or pass empty to list the root.")
    ] = None
    glob_pattern: Annotated[
        str | None, Field(description='Optional glob (e.g. "*.md") matched against entry names.')
    ] = None


class _ReplaceInput(BaseModel):
    file_name: Annotated[str, Field(description="Name (relative path) of the file to modify.")]
    old_string: Annotated[str, Field(description="Substring to find and replace.")]
    new_string: Annotated[str, Field(description="Replacement text.")]
    replace_all: Annotated[
        bool, Field(description="Replace every occurrence; when false, fail unless exactly one occurrence exists.")
    ] = False


class _ReplaceLinesInput(BaseModel):
    file_name: Annotated[str, Field(description="Name (relative path) of the file to modify.")]
    edits: Annotated[list[LineEdit], Field(description="1-based line numbers and their literal replacement text.")]


class _GrepInput(BaseModel):
    regex_pattern: Annotated[
        str, Field(description="Case-insensitive regex matched against file contents; 256 characters or fewer.")
    ]
    glob_pattern: Annotated[
        str | None, Field(description='Optional glob filtering which files are searched (e.g. "*.md", "reports/*").')
    ] = None
    directory: Annotated[
        str | None, Field(description="Optional relative directory to search; omit or pass empty for the root.")
    ] = None


def record_touch(state: dict[str, Any], path: str, action: str) -> None:
    """Remember that a tool ``action`` (read, write, delete, ...) touched ``path``, for the views."""
    touched: list[dict[str, str]] = state.setdefault("touched", [])
    touched.append({"path": path, "action": action})
    del touched[:-MAX_TOUCHED]


def _failure(verb: str, name: str, error: Exception) -> str:
    detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return f"Could not {verb} '{name}': {detail}"


class FileAccessProvider(ContextProvider):
    """Give an agent read/write/search tools over a shared file store, each call approved by a person.

    Tools: ``file_access_write``, ``file_access_read``, ``file_access_delete``, ``file_access_ls``,
    ``file_access_grep``, ``file_access_replace`` and ``file_access_replace_lines``.

    Args:
        store: The store the tools work on (already scoped to the folder they may touch).
        source_id: The provider's key in the session state.
        instructions: Replaces :data:`DEFAULT_FILE_ACCESS_INSTRUCTIONS`.
        disable_write_tools: Offer only the read-only tools (read, ls, grep).
        disable_readonly_tool_approval: Let read, ls and grep run without approval.
        disable_write_tool_approval: Let write, delete, replace and replace_lines run without approval.

    Example:
        ```python
        from agentnb import Agent, ToolApprovalMiddleware
        from agentnb.harness import FileAccessProvider, InMemoryAgentFileStore
        from agentnb.local import ScriptedChatClient

        files = FileAccessProvider(InMemoryAgentFileStore({"data.csv": "a,b"}))
        agent = Agent(
            ScriptedChatClient(["Done."]),
            context_providers=[files],
            middleware=[ToolApprovalMiddleware(auto_approval_rules=[FileAccessProvider.read_only_tools_auto_approval_rule])],
        )
        ```
    """

    WRITE_TOOL_NAME: ClassVar[str] = "file_access_write"
    READ_TOOL_NAME: ClassVar[str] = "file_access_read"
    DELETE_TOOL_NAME: ClassVar[str] = "file_access_delete"
    LS_TOOL_NAME: ClassVar[str] = "file_access_ls"
    GREP_TOOL_NAME: ClassVar[str] = "file_access_grep"
    REPLACE_TOOL_NAME: ClassVar[str] = "file_access_replace"
    REPLACE_LINES_TOOL_NAME: ClassVar[str] = "file_access_replace_lines"
    READ_ONLY_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset({READ_TOOL_NAME, LS_TOOL_NAME, GREP_TOOL_NAME})
    WRITE_TOOL_NAMES: ClassVar[frozenset[str]] = frozenset(
        {WRITE_TOOL_NAME, DELETE_TOOL_NAME, REPLACE_TOOL_NAME, REPLACE_LINES_TOOL_NAME}
    )

    def __init__(
        self,
        store: AgentFileStore,
        *,
        source_id: str = DEFAULT_FILE_ACCESS_SOURCE_ID,
        instructions: str | None = None,
        disable_write_tools: bool = False,
        disable_readonly_tool_approval: bool = False,
        disable_write_tool_approval: bool = False,
    ) -> None:
        if not isinstance(store, AgentFileStore):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"store must be an AgentFileStore, got {type(store).__name__}")
        super().__init__(source_id)
        self.store = store
        self.instructions = instructions or DEFAULT_FILE_ACCESS_INSTRUCTIONS
        self.disable_write_tools = disable_write_tools
        self.disable_readonly_tool_approval = disable_readonly_tool_approval
        self.disable_write_tool_approval = disable_write_tool_approval
        # Read-modify-write tools (replace, replace_lines) on a shared store must not interleave.
        self._write_lock = asyncio.Lock()
        self._tools = ToolCache()

    @staticmethod
    def _is_local(function_call: Content) -> bool:
        # A hosted tool (it has a server_label) is another approval boundary, whatever its name.
        return not (function_call.additional_properties or {}).get("server_label")

    @staticmethod
    def read_only_tools_auto_approval_rule(function_call: Content) -> bool:
        """Approve the read-only file tools (read, ls, grep) and nothing else; hosted tools never."""
        return (
            FileAccessProvider._is_local(function_call)
            and function_call.name in FileAccessProvider.READ_ONLY_TOOL_NAMES
        )

    @staticmethod
    def all_tools_auto_approval_rule(function_call: Content) -> bool:
        """Approve every file-access tool, the writing ones included; hosted tools never."""
        return FileAccessProvider._is_local(function_call) and function_call.name in (
            FileAccessProvider.READ_ONLY_TOOL_NAMES | FileAccessProvider.WRITE_TOOL_NAMES
        )

    def tools(self, state: dict[str, Any] | None = None) -> list[FunctionTool]:
        """The tools this provider offers (read-only ones first); ``state`` records the files they touch."""
        store, lock = self.store, self._write_lock
        log: dict[str, Any] = state if state is not None else {}
        read_mode: ApprovalMode = "never_require" if self.disable_readonly_tool_approval else "always_require"
        write_mode: ApprovalMode = "never_require" if self.disable_write_tool_approval else "always_require"

        @tool(name=self.WRITE_TOOL_NAME, schema=_WriteInput, approval_mode=write_mode)
        async def file_access_write(file_name: str, content: str, overwrite: bool = False) -> str:
            """Write a file with the given name and content; an existing file is only replaced with overwrite=true."""
            try:
                path = normalize_path(file_name)
                async with lock:
                    await store.write(path, content, overwrite=overwrite)
            except FileExistsError:
                return f"File '{file_name}' already exists. To replace it, write again with overwrite set to true."
            except (ValueError, OSError) as e:
                return _failure("write file", file_name, e)
            record_touch(log, path, "write")
            return f"File '{file_name}' written."

        @tool(name=self.READ_TOOL_NAME, schema=_FileInput, approval_mode=read_mode)
        async def file_access_read(file_name: str) -> str:
            """Read a file's content by name."""
            try:
                path = normalize_path(file_name)
                content = await store.read(path)
            except (ValueError, OSError) as e:
                return _failure("read file", file_name, e)
            if content is None:
                return f"File '{file_name}' not found."
            record_touch(log, path, "read")
            return content

        @tool(name=self.DELETE_TOOL_NAME, schema=_FileInput, approval_mode=write_mode)
        async def file_access_delete(file_name: str) -> str:
            """Delete a file by name."""
            try:
                path = normalize_path(file_name)
                async with lock:
                    deleted = await store.delete(path)
            except (ValueError, OSError) as e:
                return _failure("delete file", file_name, e)
            if not deleted:
                return f"File '{file_name}' not found."
            record_touch(log, path, "delete")
            return f"File '{file_name}' deleted."

        @tool(name=self.LS_TOOL_NAME, schema=_ListInput, approval_mode=read_mode)
        async def file_access_ls(directory: str | None = None, glob_pattern: str | None = None) -> Any:
            """List the files and subdirectories directly inside a directory (omit it for the root), subdirectories first, as {name, type} entries, optionally filtered by glob_pattern."""  # noqa: E501
            try:
                entries = await store.list_children(directory or "")
            except (ValueError, OSError) as e:
                return _failure("list directory", directory or "", e)
            return [e.to_dict() for e in entries if matches_glob(e.name, glob_pattern)]

        @tool(name=self.REPLACE_TOOL_NAME, schema=_ReplaceInput, approval_mode=write_mode)
        async def file_access_replace(
            file_name: str, old_string: str, new_string: str, replace_all: bool = False
        ) -> str:
            """Replace old_string with new_string in a file; fails if it is missing, or occurs more than once without replace_all."""  # noqa: E501
            try:
                path = normalize_path(file_name)
                async with lock:
                    content = await store.read(path)
                    if content is None:
                        return f"File '{file_name}' not found."
                    updated, count = apply_replace(content, old_string, new_string, replace_all)
                    await store.write(path, updated, overwrite=True)
            except (ValueError, OSError) as e:
                return _failure("replace in file", file_name, e)
            record_touch(log, path, "replace")
            return f"Replaced {count} occurrence(s) in '{file_name}'."

        @tool(name=self.REPLACE_LINES_TOOL_NAME, schema=_ReplaceLinesInput, approval_mode=write_mode)
        async def file_access_replace_lines(file_name: str, edits: list[LineEdit]) -> str:
            """Replace whole 1-based lines of a file with literal text (include your own trailing newline; an empty new_line deletes the line)."""  # noqa: E501
            try:
                path = normalize_path(file_name)
                async with lock:
                    content = await store.read(path)
                    if content is None:
                        return f"File '{file_name}' not found."
                    updated = apply_replace_lines(content, line_edits(edits))
                    await store.write(path, updated, overwrite=True)
            except (ValueError, OSError) as e:
                return _failure("edit file", file_name, e)
            record_touch(log, path, "replace_lines")
            return f"Replaced {len(edits)} line(s) in '{file_name}'."

        @tool(name=self.GREP_TOOL_NAME, schema=_GrepInput, approval_mode=read_mode)
        async def file_access_grep(
            regex_pattern: str, glob_pattern: str | None = None, directory: str | None = None
        ) -> Any:
            """Search file contents recursively with a case-insensitive regex, optionally under a directory and filtered by a glob (where * crosses /). Returns file_name paths relative to the store root, snippets and numbered matching lines."""  # noqa: E501
            try:
                base = normalize_path(directory or "", is_directory=True)
                results = await store.search(base, regex_pattern, glob_pattern or None, recursive=True)
            except (ValueError, OSError) as e:
                return _failure("search", directory or "files", e)
            except re.error as e:  # the model can fix its pattern
                return f"Could not search files: invalid pattern ({e})."
            out: list[dict[str, Any]] = []
            for result in results:
                data = result.to_dict()
                if base:
                    data["file_name"] = f"{base}/{data['file_name']}"
                out.append(data)
            return out

        readonly = [file_access_read, file_access_ls, file_access_grep]
        if self.disable_write_tools:
            return readonly
        return [*readonly, file_access_write, file_access_delete, file_access_replace, file_access_replace_lines]

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        context.extend_instructions(self.source_id, self.instructions)
        context.extend_tools(self.source_id, self._tools.get(session, id(state), lambda: self.tools(state)))

    def __repr__(self) -> str:
        return f"FileAccessProvider({self.store!r}, disable_write_tools={self.disable_write_tools})"
