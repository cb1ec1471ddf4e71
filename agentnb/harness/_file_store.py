"""File stores: where the harness's file tools read and write, confined to one root.

An :class:`AgentFileStore` speaks forward-slash paths relative to its root. Every path is normalized
before use and anything that could reach outside the root is refused with ``ValueError``: absolute
paths, drive letters, ``.`` and ``..`` segments, NUL bytes and (on disk) a symbolic link at any segment.
The model chooses these paths, so they are untrusted input; the checks live here, under every tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fnmatch
import json
import logging
import os
import re
import stat
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

__all__ = [
    "AgentFileStore",
    "FileSearchMatch",
    "FileSearchResult",
    "FileStoreEntry",
    "FileSystemAgentFileStore",
    "InMemoryAgentFileStore",
]

logger = logging.getLogger("agentnb.harness")

#: Characters of context kept on each side of the first match in a search snippet.
SNIPPET_RADIUS = 50
#: Longest regex a search accepts: Python's ``re`` has no timeout, so long patterns are refused outright.
MAX_PATTERN_LENGTH = 256
#: Wall-clock bound on one search; the scan runs in a worker thread so the event loop stays free.
SEARCH_TIMEOUT_SECONDS = 10.0
#: Prefix of the temporary files an atomic write makes next to its target (never listed or searched).
TEMP_PREFIX = ".agentnb-tmp-"

_NOT_CONFINED = "Invalid path: {path!r}. Paths must be relative and must not start with '/', '\\', or a drive root."
_LINK = "Invalid path: {path!r} goes through a symbolic link, which file tools never follow."


def normalize_path(path: str, *, is_directory: bool = False) -> str:
    """``path`` as clean forward-slash segments under the root; ``ValueError`` for anything that escapes it.

    Directories may be empty (the root); files may not, and may not end with a separator (``"a/"`` is
    never silently the file ``"a"``).
    """
    if not isinstance(cast(object, path), str):
        raise ValueError(f"A path must be a string, got {type(path).__name__}.")
    if "\x00" in path:
        raise ValueError(f"Invalid path: {path!r}. Paths must not contain NUL characters.")
    stripped = path.strip()
    if not stripped:
        if is_directory:
            return ""
        raise ValueError("A file path must not be empty or whitespace-only.")
    converted = stripped.replace("\\", "/")
    if not is_directory and converted.endswith("/"):
        raise ValueError(f"Invalid path: {path!r}. A file path must not end with a path separator.")
    if converted.startswith("/") or os.path.isabs(stripped) or re.match(r"^[A-Za-z]:", converted):
        raise ValueError(_NOT_CONFINED.format(path=path))
    segments: list[str] = []
    for segment in converted.split("/"):
        if not segment:
            continue
        if segment in (".", "..") or segment.strip() in (".", ".."):
            raise ValueError(f"Invalid path: {path!r}. Paths must not contain '.' or '..' segments.")
        segments.append(segment)
    result = "/".join(segments)
    if not result and not is_directory:
        raise ValueError(f"Invalid path: {path!r}. A file path must not be empty.")
    return result


def matches_glob(name: str, pattern: str | None) -> bool:
    """Case-insensitive fnmatch (``*`` crosses ``/``); no pattern matches everything."""
    if pattern is None or not pattern.strip():
        return True
    return fnmatch.fnmatchcase(name.lower(), pattern.lower())


def compile_search_pattern(pattern: str) -> re.Pattern[str]:
    """A case-insensitive regex, refusing overlong patterns; an invalid one raises ``re.error`` for the model."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise ValueError(f"Regex pattern is too long ({len(pattern)} characters); the limit is {MAX_PATTERN_LENGTH}.")
    return re.compile(pattern, flags=re.IGNORECASE)


async def _bounded(scan: Callable[[], list[FileSearchResult]]) -> list[FileSearchResult]:
    try:
        return await asyncio.wait_for(asyncio.to_thread(scan), timeout=SEARCH_TIMEOUT_SECONDS)
    except TimeoutError as e:
        raise ValueError(
            f"The search did not finish within {SEARCH_TIMEOUT_SECONDS:g} seconds; use a more specific pattern "
            "(avoid nested quantifiers such as '(a+)+')."
        ) from e


class FileSearchMatch:
    """One line of a file that matched a search (1-based ``line_number``).

    Example:
        ```python
        from agentnb.harness import FileSearchMatch

        FileSearchMatch(3, "TODO: ship it").to_dict()  # {'line_number': 3, 'line': 'TODO: ship it'}
        ```
    """

    __slots__ = ("line", "line_number")

    def __init__(self, line_number: int, line: str) -> None:
        if isinstance(cast(object, line_number), bool) or not isinstance(cast(object, line_number), int):
            raise ValueError(f"line_number must be an integer, got {line_number!r}")
        if line_number < 1:
            raise ValueError(f"line_number must be a positive integer, got {line_number}")
        self.line_number = line_number
        self.line = line

    def to_dict(self) -> dict[str, Any]:
        """The match as JSON data."""
        return {"line_number": self.line_number, "line": self.line}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FileSearchMatch:
        """Rebuild a match from :meth:`to_dict` output."""
        line = data.get("line", "")
        if not isinstance(line, str):
            raise ValueError("FileSearchMatch.line must be a string.")
        return cls(data.get("line_number"), line)  # pyright: ignore[reportArgumentType]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileSearchMatch) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.line_number, self.line))

    def __repr__(self) -> str:
        return f"FileSearchMatch(line_number={self.line_number!r}, line={self.line!r})"


class FileSearchResult:
    """One file that matched a search: its name (relative to the searched directory), a snippet, the lines.

    Example:
        ```python
        from agentnb.harness import FileSearchMatch, FileSearchResult

        result = FileSearchResult("notes.md", "TODO: ship", [FileSearchMatch(1, "TODO: ship")])
        result.to_dict()["matching_lines"]  # [{'line_number': 1, 'line': 'TODO: ship'}]
        ```
    """

    __slots__ = ("file_name", "matching_lines", "snippet")

    def __init__(self, file_name: str, snippet: str = "", matching_lines: list[FileSearchMatch] | None = None) -> None:
        self.file_name = file_name
        self.snippet = snippet
        self.matching_lines = list(matching_lines or [])

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON data (what the grep tools return to the model)."""
        return {
            "file_name": self.file_name,
            "snippet": self.snippet,
            "matching_lines": [m.to_dict() for m in self.matching_lines],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FileSearchResult:
        """Rebuild a result from :meth:`to_dict` output."""
        file_name, snippet, lines = data.get("file_name", ""), data.get("snippet", ""), data.get("matching_lines", [])
        if not isinstance(file_name, str) or not isinstance(snippet, str):
            raise ValueError("FileSearchResult needs a string file_name and snippet.")
        if not isinstance(lines, list):
            raise ValueError(f"FileSearchResult.matching_lines must be a list, got {type(lines).__name__}.")
        matches: list[FileSearchMatch] = []
        for item in cast("list[object]", lines):
            if not isinstance(item, Mapping):
                raise ValueError("FileSearchResult.matching_lines elements must be mappings.")
            matches.append(FileSearchMatch.from_dict(cast("Mapping[str, Any]", item)))
        return cls(file_name, snippet, matches)

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string (``kwargs`` go to ``json.dumps``)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, value: str | bytes, /) -> FileSearchResult:
        """Rebuild a result from :meth:`to_json` output."""
        data = json.loads(value)
        if not isinstance(data, Mapping):
            raise ValueError(f"FileSearchResult.from_json needs a JSON object, got {type(data).__name__}.")
        return cls.from_dict(cast("Mapping[str, Any]", data))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileSearchResult) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.file_name, self.snippet, len(self.matching_lines)))

    def __repr__(self) -> str:
        return (
            f"FileSearchResult(file_name={self.file_name!r}, snippet={self.snippet!r}, "
            f"matching_lines={self.matching_lines!r})"
        )


class FileStoreEntry:
    """One entry of a directory listing: a name (not a path) and ``"file"`` or ``"directory"``.

    Example:
        ```python
        from agentnb.harness import FileStoreEntry

        FileStoreEntry("reports", FileStoreEntry.DIRECTORY).to_dict()  # {'name': 'reports', 'type': 'directory'}
        ```
    """

    FILE: ClassVar[Literal["file"]] = "file"
    DIRECTORY: ClassVar[Literal["directory"]] = "directory"

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: str) -> None:
        if type not in (self.FILE, self.DIRECTORY):
            raise ValueError(f"type must be 'file' or 'directory', got {type!r}")
        self.name = name
        self.type = type

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON data."""
        return {"name": self.name, "type": self.type}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FileStoreEntry:
        """Rebuild an entry from :meth:`to_dict` output."""
        name, kind = data.get("name", ""), data.get("type")
        if not isinstance(name, str) or not isinstance(kind, str):
            raise ValueError("FileStoreEntry needs a string name and type.")
        return cls(name, kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileStoreEntry) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.type))

    def __repr__(self) -> str:
        return f"FileStoreEntry(name={self.name!r}, type={self.type!r})"


def search_text(file_name: str, content: str, regex: re.Pattern[str]) -> FileSearchResult | None:
    """The lines of ``content`` that match (split on ``\\n``, so numbers agree with the line editor)."""
    matches: list[FileSearchMatch] = []
    snippet: str | None = None
    offset = 0
    for number, line in enumerate(content.split("\n"), start=1):
        found = regex.search(line)
        if found is not None:
            matches.append(FileSearchMatch(number, line.rstrip("\r")))
            if snippet is None:
                start = offset + found.start()
                snippet = content[max(0, start - SNIPPET_RADIUS) : start + len(found.group()) + SNIPPET_RADIUS]
        offset += len(line) + 1
    return FileSearchResult(file_name, snippet or "", matches) if matches else None


class AgentFileStore(ABC):
    """Async file storage behind the file-access and file-memory tools, over relative forward-slash paths.

    Implementations must keep every path inside their root; :func:`normalize_path` does the lexical part.
    """

    @abstractmethod
    async def write(self, path: str, content: str, *, overwrite: bool = True) -> None:
        """Write ``content``; with ``overwrite=False`` create exclusively (``FileExistsError`` if it exists)."""

    @abstractmethod
    async def read(self, path: str) -> str | None:
        """The file's text, or ``None`` if there is no such file."""

    @abstractmethod
    async def delete(self, path: str) -> bool:
        """Delete the file; ``False`` if there was none."""

    @abstractmethod
    async def list_children(self, directory: str = "") -> list[FileStoreEntry]:
        """The direct children of ``directory`` (``""`` is the root), subdirectories first."""

    @abstractmethod
    async def file_exists(self, path: str) -> bool:
        """Whether a file exists at ``path``."""

    @abstractmethod
    async def search(
        self, directory: str, regex_pattern: str, glob_pattern: str | None = None, *, recursive: bool = False
    ) -> list[FileSearchResult]:
        """Files under ``directory`` whose lines match ``regex_pattern`` (case-insensitive).

        ``glob_pattern`` filters on each file's path relative to ``directory``, which is also the
        ``file_name`` of each result; ``recursive`` searches every descendant instead of direct children.
        """

    @abstractmethod
    async def create_directory(self, path: str) -> None:
        """Make sure ``path`` exists as a directory."""


class InMemoryAgentFileStore(AgentFileStore):
    """A dict-backed store for tests and throwaway work; names match case-insensitively and keep their case.

    Example:
        ```python
        from agentnb.harness import InMemoryAgentFileStore

        store = InMemoryAgentFileStore()
        await store.write("notes/plan.md", "1. ship")
        await store.read("NOTES/plan.md")  # '1. ship'
        ```
    """

    def __init__(self, files: Mapping[str, str] | None = None) -> None:
        self._files: dict[str, tuple[str, str]] = {}
        for path, content in (files or {}).items():
            display = normalize_path(path)
            self._files[display.lower()] = (display, content)
        self._lock = asyncio.Lock()

    @staticmethod
    def _prefix(directory: str) -> str:
        prefix = normalize_path(directory, is_directory=True).lower()
        return prefix + "/" if prefix else ""

    async def write(self, path: str, content: str, *, overwrite: bool = True) -> None:
        display = normalize_path(path)
        key = display.lower()
        async with self._lock:
            if any(k.startswith(key + "/") for k in self._files):
                raise IsADirectoryError(errno.EISDIR, f"{path!r} is a directory")
            if not overwrite and key in self._files:
                raise FileExistsError(errno.EEXIST, f"File already exists: {path!r}")
            self._files[key] = (display, content)

    async def read(self, path: str) -> str | None:
        key = normalize_path(path).lower()
        async with self._lock:
            entry = self._files.get(key)
        return entry[1] if entry is not None else None

    async def delete(self, path: str) -> bool:
        key = normalize_path(path).lower()
        async with self._lock:
            return self._files.pop(key, None) is not None

    async def list_children(self, directory: str = "") -> list[FileStoreEntry]:
        prefix = self._prefix(directory)
        async with self._lock:
            entries = list(self._files.items())
        files: list[str] = []
        directories: dict[str, str] = {}
        for key, (display, _) in entries:
            if not key.startswith(prefix):
                continue
            rest = display[len(prefix) :]
            head, sep, _tail = rest.partition("/")
            if sep:
                directories.setdefault(head.lower(), head)
            else:
                files.append(rest)
        return [
            *(FileStoreEntry(name, FileStoreEntry.DIRECTORY) for name in directories.values()),
            *(FileStoreEntry(name, FileStoreEntry.FILE) for name in files),
        ]

    async def file_exists(self, path: str) -> bool:
        key = normalize_path(path).lower()
        async with self._lock:
            return key in self._files

    async def search(
        self, directory: str, regex_pattern: str, glob_pattern: str | None = None, *, recursive: bool = False
    ) -> list[FileSearchResult]:
        prefix = self._prefix(directory)
        regex = compile_search_pattern(regex_pattern)
        async with self._lock:
            entries = list(self._files.items())

        def scan() -> list[FileSearchResult]:
            results: list[FileSearchResult] = []
            for key, (display, content) in entries:
                if not key.startswith(prefix):
                    continue
                relative = display[len(prefix) :]
                if (not recursive and "/" in relative) or not matches_glob(relative, glob_pattern):
                    continue
                result = search_text(relative, content, regex)
                if result is not None:
                    results.append(result)
            return results

        return await _bounded(scan)

    async def create_directory(self, path: str) -> None:
        normalize_path(path, is_directory=True)  # directories are implied by file paths; still refuse bad ones

    def __repr__(self) -> str:
        return f"InMemoryAgentFileStore(files={len(self._files)})"


def _is_link(path: Path) -> bool:
    """Whether ``path`` itself is a symbolic link (or, on Windows, a junction/reparse point); raises if absent."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return True
    attributes = getattr(info, "st_file_attributes", 0)
    return bool(attributes & getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0))


class FileSystemAgentFileStore(AgentFileStore):
    """Files on disk under ``root_directory``; nothing a path says can reach outside it.

    Paths are normalized (no absolute paths, drive letters, ``.``/``..``), every segment from the root down
    is checked not to be a symbolic link, the resolved path must stay under the root, and opens pass
    ``O_NOFOLLOW`` where the platform has it, so a link swapped in at the last moment is refused by the
    kernel. Writes are atomic: the content goes to a temporary file beside the target, which then
    replaces (or, for ``overwrite=False``, is hard-linked exclusively to) the target, so a reader never
    sees half a file. The root is made on first write, never on construction. This confines a model's
    tool calls; it is not a sandbox against another process that shares the directory.

    Example:
        ```python
        import tempfile
        from agentnb.harness import FileSystemAgentFileStore

        store = FileSystemAgentFileStore(tempfile.mkdtemp())
        await store.write("reports/q1.md", "# Q1")
        [e.name for e in await store.list_children()]  # ['reports']
        ```
    """

    def __init__(self, root_directory: str | os.PathLike[str]) -> None:
        raw = os.fspath(root_directory)
        if not raw.strip():
            raise ValueError("root_directory must not be empty or whitespace-only.")
        self._root = Path(raw).resolve()

    @property
    def root_path(self) -> Path:
        """The resolved root directory."""
        return self._root

    # -- confinement -------------------------------------------------------------------------------------
    def _check_segments(self, candidate: Path, shown: str) -> None:
        current = self._root
        for segment in candidate.relative_to(self._root).parts:
            current = current / segment
            try:
                if _is_link(current):
                    raise ValueError(_LINK.format(path=shown))
            except FileNotFoundError:
                return  # the rest does not exist yet (a write will create it)
            except NotADirectoryError as e:
                raise ValueError(f"Invalid path: {shown!r}; a parent of it is a file.") from e
            except OSError as e:  # cannot tell: refuse rather than risk following a link
                probed = current.relative_to(self._root).as_posix()
                raise ValueError(
                    f"Invalid path: {shown!r}; could not check {probed!r} for symbolic links ({e})."
                ) from e

    def _resolve(self, path: str, *, is_directory: bool = False) -> Path:
        normalized = normalize_path(path, is_directory=is_directory)
        if not normalized:
            return self._root
        candidate = self._root.joinpath(*normalized.split("/"))
        self._check_segments(candidate, path)
        if not candidate.resolve().is_relative_to(self._root):
            raise ValueError(f"Invalid path: {path!r}. It resolves outside the store's root.")
        return candidate

    def _make_dirs(self, directory: Path, shown: str) -> None:
        """Create ``directory`` segment by segment, refusing any segment that is (or becomes) a link."""
        if not self._root.exists():
            self._root.mkdir(parents=True, exist_ok=True)
        current = self._root
        for segment in directory.relative_to(self._root).parts:
            current = current / segment
            with contextlib.suppress(FileExistsError):
                current.mkdir()
            if _is_link(current) or not current.is_dir():
                raise ValueError(_LINK.format(path=shown) if _is_link(current) else f"{shown!r}: a parent is a file.")

    # -- operations --------------------------------------------------------------------------------------
    async def write(self, path: str, content: str, *, overwrite: bool = True) -> None:
        target = self._resolve(path)
        await asyncio.to_thread(self._write_sync, target, content, overwrite, path)

    def _write_sync(self, target: Path, content: str, overwrite: bool, shown: str) -> None:
        self._make_dirs(target.parent, shown)
        if target.is_dir() and not _is_link(target):
            raise IsADirectoryError(errno.EISDIR, f"{shown!r} is a directory")
        temp = target.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}")
        mode = 0o600
        try:
            existing = os.lstat(target)
            mode = stat.S_IMODE(existing.st_mode)
        except FileNotFoundError:
            pass
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            self._check_segments(target, shown)  # last look before the rename: a link swapped in meanwhile
            if overwrite:
                os.replace(temp, target)  # replaces a link itself, never its target
            else:
                os.link(temp, target, follow_symlinks=False)  # atomic exclusive create: EEXIST if it is there
        except FileExistsError as e:
            raise FileExistsError(errno.EEXIST, f"File already exists: {shown!r}") from e
        finally:
            temp.unlink(missing_ok=True)

    async def read(self, path: str) -> str | None:
        target = self._resolve(path)
        return await asyncio.to_thread(self._read_sync, target, path)

    @staticmethod
    def _read_sync(target: Path, shown: str) -> str | None:
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ValueError(_LINK.format(path=shown)) from e
            raise
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            raw = handle.read()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"File {shown!r} is not UTF-8 text and cannot be read.") from e

    async def delete(self, path: str) -> bool:
        target = self._resolve(path)

        def unlink() -> bool:
            try:
                if not stat.S_ISREG(os.lstat(target).st_mode):
                    return False
            except FileNotFoundError:
                return False
            target.unlink()
            return True

        return await asyncio.to_thread(unlink)

    async def list_children(self, directory: str = "") -> list[FileStoreEntry]:
        folder = self._resolve(directory, is_directory=True)

        def listing() -> list[FileStoreEntry]:
            if not folder.is_dir():
                return []
            directories: list[FileStoreEntry] = []
            files: list[FileStoreEntry] = []
            for entry in sorted(folder.iterdir(), key=lambda p: p.name):
                if entry.name.startswith(TEMP_PREFIX):
                    continue
                try:
                    if _is_link(entry):
                        continue
                except OSError:
                    continue
                if entry.is_dir():
                    directories.append(FileStoreEntry(entry.name, FileStoreEntry.DIRECTORY))
                elif entry.is_file():
                    files.append(FileStoreEntry(entry.name, FileStoreEntry.FILE))
            return directories + files

        return await asyncio.to_thread(listing)

    async def file_exists(self, path: str) -> bool:
        target = self._resolve(path)

        def exists() -> bool:
            try:
                return stat.S_ISREG(os.lstat(target).st_mode)
            except (FileNotFoundError, NotADirectoryError):
                return False

        return await asyncio.to_thread(exists)

    async def search(
        self, directory: str, regex_pattern: str, glob_pattern: str | None = None, *, recursive: bool = False
    ) -> list[FileSearchResult]:
        folder = self._resolve(directory, is_directory=True)
        regex = compile_search_pattern(regex_pattern)

        def scan() -> list[FileSearchResult]:
            results: list[FileSearchResult] = []
            if not folder.is_dir():
                return results
            pending = [folder]
            while pending:
                current = pending.pop()
                for entry in sorted(current.iterdir(), key=lambda p: p.name):
                    if entry.name.startswith(TEMP_PREFIX):
                        continue
                    try:
                        if _is_link(entry):
                            continue
                    except OSError:
                        continue
                    if entry.is_dir():
                        if recursive:
                            pending.append(entry)
                        continue
                    relative = entry.relative_to(folder).as_posix()
                    if not entry.is_file() or not matches_glob(relative, glob_pattern):
                        continue
                    try:
                        text = entry.read_text(encoding="utf-8")
                    except (UnicodeDecodeError, OSError):
                        logger.warning("Search skipped a file that is not readable UTF-8 text: %s", relative)
                        continue
                    result = search_text(relative, text, regex)
                    if result is not None:
                        results.append(result)
            return sorted(results, key=lambda r: r.file_name)

        return await _bounded(scan)

    async def create_directory(self, path: str) -> None:
        folder = self._resolve(path, is_directory=True)
        await asyncio.to_thread(self._make_dirs, folder, path)

    def __repr__(self) -> str:
        return f"FileSystemAgentFileStore({str(self._root)!r})"
