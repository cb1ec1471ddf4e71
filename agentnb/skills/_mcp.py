"""Skills served by an MCP server (``skill://index.json``): read on demand, never run.

``skill-md`` entries become :class:`MCPSkill` objects whose SKILL.md and sibling resources are fetched only
when the model asks. ``archive`` entries (ZIP, TAR, gzip TAR) are downloaded and unpacked in memory, never to
disk; an archive with a member that climbs out (``..``) or is absolute is hostile and the whole skill is
dropped, as are archives past the file-count, uncompressed-size or download-size limits. Skills from a
server never run scripts: a bundled script is at most a readable resource.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import logging
import tarfile
import zipfile
from collections.abc import Awaitable, Callable
from typing import IO, Any, Final, Protocol, cast

from ..exceptions import SkillSecurityError
from ._files import frontmatter_from_text
from ._model import (
    DEFAULT_RESOURCE_EXTENSIONS,
    DEFAULT_SEARCH_DEPTH,
    SKILL_FILE_NAME,
    FileSkill,
    InlineSkillResource,
    Skill,
    SkillFrontmatter,
    SkillResource,
)
from ._sources import SkillsSource, SkillsSourceContext

__all__ = ["MCPSkill", "MCPSkillResource", "MCPSkillsSource", "SupportsReadResource", "archive_files"]

logger = logging.getLogger("agentnb.skills")

_INDEX_URI: Final[str] = "skill://index.json"
_NOT_FOUND_CODES: Final[frozenset[int]] = frozenset({-32002, -32601})  # resource not found; method not found
_CHUNK: Final[int] = 65_536


class SupportsReadResource(Protocol):
    """An MCP client session (``mcp.ClientSession`` or ``mcp.Client``): reads a resource by URI."""

    def read_resource(self, uri: Any, /) -> Awaitable[Any]: ...


def _not_found(error: BaseException) -> bool:
    """Whether an MCP error means "no such resource" (anything else is a real failure and propagates).

    The spec's code is -32002; the ``mcp`` SDK's own server answers an unknown URI with INVALID_PARAMS
    (-32602) and the message "Unknown resource: ...", so that shape counts too.
    """
    if type(error).__name__ not in ("MCPError", "McpError"):
        return False
    inner = getattr(error, "error", None)
    code = getattr(inner, "code", getattr(error, "code", None))
    if code in _NOT_FOUND_CODES:
        return True
    message = str(getattr(inner, "message", None) or error).lower()
    return code == -32602 and ("unknown resource" in message or "not found" in message)


def _text(result: Any) -> str:
    parts: list[str] = []
    for item in getattr(result, "contents", []) or []:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def _blob(result: Any) -> tuple[bytes, str | None] | None:
    for item in getattr(result, "contents", []) or []:
        blob = getattr(item, "blob", None)
        if isinstance(blob, str):
            if blob.startswith("data:"):
                blob = blob.split(",", 1)[-1]
            try:
                # mcp 2.x names the field mime_type; read the 1.x name only where that one is absent (another
                # installed package may patch the old name to warn).
                has_new = hasattr(item, "mime_type")
                mime = getattr(item, "mime_type", None) if has_new else getattr(item, "mimeType", None)
                return base64.b64decode(blob, validate=True), mime
            except (binascii.Error, ValueError):
                logger.warning("An MCP resource sent a blob that is not valid base64.")
                return None
    return None


def _provider(client: SupportsReadResource | None, session_provider: Callable[[], Any] | None) -> Callable[[], Any]:
    if (client is None) == (session_provider is None):
        raise ValueError("Provide exactly one of client= or session_provider=.")
    if session_provider is not None:
        return session_provider
    fixed = client
    return lambda: fixed


class MCPSkillResource(SkillResource):
    """A resource fetched from an MCP server (text, or bytes for binary content)."""

    def __init__(self, *, name: str, result: Any, uri: str | None = None) -> None:
        super().__init__(name=name)
        self._result = result
        self.uri = uri

    @property
    def origin(self) -> str:
        return self.uri or "mcp"

    async def read(self, **kwargs: Any) -> Any:
        blob = _blob(self._result)
        if blob is not None:
            return blob[0]
        return _text(self._result) or None


class MCPSkill(Skill):
    """A skill listed in a server's ``skill://index.json``; its SKILL.md and resources are fetched on demand.

    It has no scripts: content from a server is never run.

    Args:
        frontmatter: Name and description from the index.
        skill_md_uri: The SKILL.md resource's URI (its folder is the skill's root).
        client: A session that outlives the skill.
        session_provider: Returns the live session on every fetch (for sessions that reconnect).
    """

    def __init__(
        self,
        frontmatter: SkillFrontmatter,
        skill_md_uri: str,
        client: SupportsReadResource | None = None,
        *,
        session_provider: Callable[[], Any] | None = None,
    ) -> None:
        self._frontmatter = frontmatter
        self.skill_md_uri = skill_md_uri
        if skill_md_uri.endswith(SKILL_FILE_NAME):
            self._root = skill_md_uri[: -len(SKILL_FILE_NAME)]
        else:
            self._root = skill_md_uri if skill_md_uri.endswith("/") else skill_md_uri + "/"
        self._session = _provider(client, session_provider)
        self._content: str | None = None

    @property
    def frontmatter(self) -> SkillFrontmatter:
        return self._frontmatter

    @property
    def origin(self) -> str:
        return self.skill_md_uri

    async def get_content(self) -> str:
        """The SKILL.md text from the server (fetched once)."""
        if self._content is None:
            text = _text(await self._session().read_resource(self.skill_md_uri))
            if not text:
                raise ValueError(f"The MCP server returned no text content for {self.skill_md_uri!r}.")
            self._content = text
        return self._content

    async def get_resource(self, name: str) -> SkillResource | None:
        """The sibling resource ``name`` (a relative path), or ``None`` if it is unsafe or missing."""
        if not name or not name.strip():
            return None
        relative = name.replace("\\", "/")
        if relative.startswith("/") or "://" in relative or ".." in relative.split("/"):
            return None
        uri = self._root + relative
        try:
            result = await self._session().read_resource(uri)
        except Exception as e:
            if _not_found(e):
                return None
            raise
        return MCPSkillResource(name=name, result=result, uri=uri)


# -- archives, in memory ----------------------------------------------------------------------------------------


def _member_name(raw: str) -> str | None:
    """A member's safe relative path; ``None`` for a degenerate entry.

    Raises:
        SkillSecurityError: The member climbs out (``..``) or is absolute; the whole archive is refused.
    """
    if not raw or not raw.strip():
        return None
    path = raw.replace("\\", "/")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise SkillSecurityError(f"Skill archive member {raw!r} is an absolute path; the archive is refused.")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise SkillSecurityError(f"Skill archive member {raw!r} climbs out of the skill; the archive is refused.")
    return "/".join(parts) or None


def _read_limited(source: IO[bytes], budget: int) -> tuple[bytes, int]:
    # Count what the decompressor produces, not what the archive claims: the defence against bombs.
    chunks: list[bytes] = []
    while chunk := source.read(_CHUNK):
        budget -= len(chunk)
        if budget < 0:
            raise SkillSecurityError("Skill archive is larger than the uncompressed size limit; it is refused.")
        chunks.append(chunk)
    return b"".join(chunks), budget


def archive_files(data: bytes, *, max_file_count: int, max_uncompressed_size_bytes: int) -> dict[str, bytes]:
    """The regular files of a ZIP, TAR or gzip TAR, in memory (links and devices skipped).

    Raises:
        SkillSecurityError: A member climbs out or is absolute, or a limit is passed.
        ValueError: The data is not an archive of a known kind.
    """
    files: dict[str, bytes] = {}
    budget = max_uncompressed_size_bytes

    def add(raw_name: str, opener: Callable[[], IO[bytes] | None]) -> None:
        nonlocal budget
        if len(files) >= max_file_count:
            raise SkillSecurityError(f"Skill archive has more than {max_file_count} files; it is refused.")
        name = _member_name(raw_name)
        if name is None:
            return
        handle = opener()
        if handle is None:
            return
        with handle:
            files[name], budget = _read_limited(handle, budget)

    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    add(info.filename, lambda info=info: archive.open(info))
        return files
    mode = "r:gz" if data[:2] == b"\x1f\x8b" else "r:"
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode=mode) as archive:
            for member in archive:
                if member.isreg():
                    add(member.name, lambda member=member: archive.extractfile(member))
    except (tarfile.TarError, gzip.BadGzipFile, EOFError, OSError) as e:
        raise ValueError(f"Not a ZIP, TAR or gzip TAR archive ({e}).") from None
    return files


class MCPSkillsSource(SkillsSource):
    """Skills an MCP server lists in ``skill://index.json`` (``skill-md`` and ``archive`` entries).

    Give exactly one of ``client`` (a session that outlives the source) or ``session_provider`` (returns the
    live session each time, for sessions that reconnect). Wrap the source in :class:`CachingSkillsSource`
    (with ``refresh_interval``) to read the index once. A missing index means no skills; other errors
    propagate, so a cached list is not replaced by a partial one.

    Args:
        client: An MCP client session.
        session_provider: Returns the session to use.
        archive_resource_extensions: File kinds of an archive that become resources (default: text kinds).
        archive_resource_search_depth: Folder levels of an archive searched for resources.
        archive_max_file_count: Files allowed in one archive.
        archive_max_size_bytes: Download size allowed for one archive.
        archive_max_uncompressed_size_bytes: Unpacked size allowed for one archive.

    Example:
        ```python
        from mcp import Client, StdioServerParameters

        async with Client(StdioServerParameters(command="python", args=["skills_server.py"])) as client:
            skills = await MCPSkillsSource(client).get_skills(SkillsSourceContext(agent=None))
        ```
    """

    def __init__(
        self,
        client: SupportsReadResource | None = None,
        *,
        session_provider: Callable[[], Any] | None = None,
        archive_resource_extensions: tuple[str, ...] | None = None,
        archive_resource_search_depth: int = DEFAULT_SEARCH_DEPTH,
        archive_max_file_count: int = 20,
        archive_max_size_bytes: int = 1024 * 1024,
        archive_max_uncompressed_size_bytes: int = 1024 * 1024,
    ) -> None:
        self._session = _provider(client, session_provider)
        if archive_resource_search_depth < 1:
            raise ValueError(f"archive_resource_search_depth must be >= 1, got {archive_resource_search_depth}")
        for label, value in (
            ("archive_max_file_count", archive_max_file_count),
            ("archive_max_size_bytes", archive_max_size_bytes),
            ("archive_max_uncompressed_size_bytes", archive_max_uncompressed_size_bytes),
        ):
            if value < 1:
                raise ValueError(f"{label} must be >= 1, got {value}")
        extensions = DEFAULT_RESOURCE_EXTENSIONS if archive_resource_extensions is None else archive_resource_extensions
        self._extensions = frozenset(e.lower() for e in extensions)
        self._depth = archive_resource_search_depth
        self._max_files = archive_max_file_count
        self._max_download = archive_max_size_bytes
        self._max_unpacked = archive_max_uncompressed_size_bytes
        #: Index entries the last discovery dropped, with the reason (views show them).
        self.skipped: list[tuple[str, str]] = []

    @property
    def label(self) -> str:
        return "MCPSkillsSource(skill://index.json)"

    async def get_skills(self, context: SkillsSourceContext) -> list[Skill]:
        self.skipped = []
        try:
            result = await self._session().read_resource(_INDEX_URI)
        except Exception as e:
            if _not_found(e):
                return []
            raise
        text = _text(result)
        try:
            index: object = json.loads(text) if text else None
        except ValueError:
            logger.warning("skill://index.json is not valid JSON; no skills from this server.")
            return []
        if not isinstance(index, dict):
            return []
        entries = cast("dict[str, object]", index).get("skills")
        skills: list[Skill] = []
        seen: set[str] = set()
        for entry in cast("list[object]", entries) if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            fields = {k: v for k, v in cast("dict[str, object]", entry).items() if isinstance(v, str)}
            kind = fields.get("type", "").strip().lower()
            name, url = fields.get("name", ""), fields.get("url", "")
            if kind == "skill-md":
                skill = self._skill_md(name, fields.get("description", ""), url)
            elif kind == "archive":
                skill = await self._archive(name, url)
            else:
                self.skipped.append((name or "(unnamed)", f"unsupported entry type {kind or '(none)'!r}"))
                continue
            if skill is None:
                continue
            if skill.frontmatter.name in seen:
                self.skipped.append((name, "duplicate name"))
                continue
            seen.add(skill.frontmatter.name)
            skills.append(skill)
        return skills

    def _skill_md(self, name: str, description: str, url: str) -> MCPSkill | None:
        if not url.strip():
            self.skipped.append((name or "(unnamed)", "no url"))
            return None
        try:
            frontmatter = SkillFrontmatter(name=name, description=description)
        except ValueError as e:
            self.skipped.append((name or "(unnamed)", str(e)))
            return None
        return MCPSkill(frontmatter, url, session_provider=self._session)

    async def _archive(self, name: str, url: str) -> FileSkill | None:
        if not name.strip() or not url.strip():
            self.skipped.append((name or "(unnamed)", "an archive entry needs a name and a url"))
            return None
        try:
            result = await self._session().read_resource(url)
        except Exception as e:
            if _not_found(e):
                self.skipped.append((name, "archive not found"))
                return None
            raise
        blob = _blob(result)
        if blob is None or not blob[0]:
            self.skipped.append((name, "the archive resource has no binary content"))
            return None
        data = blob[0]
        if len(data) > self._max_download:
            self.skipped.append((name, f"the archive is larger than {self._max_download} bytes"))
            return None
        try:
            files = archive_files(data, max_file_count=self._max_files, max_uncompressed_size_bytes=self._max_unpacked)
        except (SkillSecurityError, ValueError, zipfile.BadZipFile) as e:
            logger.warning("Skill archive %r from %s is refused: %s", name, url, e)
            self.skipped.append((name, str(e)))
            return None
        return self._skill_from(name, url, files)

    def _skill_from(self, name: str, url: str, files: dict[str, bytes]) -> FileSkill | None:
        candidates = [k for k in files if k.rsplit("/", 1)[-1].upper() == SKILL_FILE_NAME.upper()]
        if not candidates:
            self.skipped.append((name, "the archive has no SKILL.md"))
            return None
        key = min(candidates, key=lambda k: (k.count("/"), k))
        try:
            content = files[key].decode("utf-8")
            frontmatter = frontmatter_from_text(content, f"{name}/{SKILL_FILE_NAME}")
        except (UnicodeDecodeError, ValueError) as e:
            self.skipped.append((name, str(e)))
            return None
        if frontmatter.name != name:
            self.skipped.append((name, f"its SKILL.md is named {frontmatter.name!r}, not {name!r}"))
            return None
        prefix = key[: key.rfind("/") + 1]
        resources: list[SkillResource] = []
        for path in sorted(files):
            if path == key or not path.startswith(prefix):
                continue
            relative = path[len(prefix) :]
            extension = "." + relative.rsplit(".", 1)[-1].lower() if "." in relative.rsplit("/", 1)[-1] else ""
            if relative.count("/") + 1 > self._depth or extension not in self._extensions:
                continue
            try:
                text = files[path].decode("utf-8")
            except UnicodeDecodeError:
                continue
            resources.append(InlineSkillResource(name=relative, content=text))
        # Never runnable: no scripts, whatever the archive holds.
        return FileSkill(frontmatter=frontmatter, content=content, path=url, resources=resources, runnable=False)
