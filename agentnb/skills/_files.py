"""Skills on disk: folders holding a SKILL.md, found below root folders the host chose.

The roots are the trust boundary and are used as given (a root may itself be a link). Everything below a
root is link-checked and fails closed: a symbolic link, junction or other reparse point, or an entry that
cannot be inspected, is never adopted as a skill, a resource or a script. Otherwise a link planted under a
root would become a skill's folder, and every later check, which looks only below that folder, would
never see it.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ._frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter
from ._model import (
    DEFAULT_RESOURCE_EXTENSIONS,
    DEFAULT_SCRIPT_EXTENSIONS,
    DEFAULT_SEARCH_DEPTH,
    SKILL_FILE_NAME,
    FileSkill,
    FileSkillResource,
    FileSkillScript,
    SkillFrontmatter,
    SkillResource,
    SkillScript,
    SkillScriptRunner,
    is_link,
)
from ._sources import SkillsSource, SkillsSourceContext

__all__ = ["MAX_SEARCH_DEPTH", "FileSkillsSource", "SkippedSkill", "frontmatter_from_text"]

logger = logging.getLogger("agentnb.skills")

#: How many folder levels below a root are searched for SKILL.md files.
MAX_SEARCH_DEPTH: Final[int] = 2
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_WINDOWS = os.name == "nt"


@dataclass(frozen=True)
class SkippedSkill:
    """A folder that looked like a skill but was not loaded, and why (shown in views)."""

    path: str
    reason: str


def frontmatter_from_text(text: str, where: str) -> SkillFrontmatter:
    """The validated frontmatter of a SKILL.md text.

    Raises:
        ValueError: No ``---`` block, a line outside the supported YAML subset, or a field against the spec.
    """
    parts = split_frontmatter(text)
    if parts is None:
        raise ValueError(f"{where} has no frontmatter block delimited by '---' lines.")
    try:
        fields = parse_frontmatter(parts[0])
    except FrontmatterError as e:
        raise ValueError(f"{where}: {e}") from None
    values = {key.lower(): value for key, value in fields.items()}

    def text_field(key: str) -> str | None:
        value = values.get(key)
        if value is None or isinstance(value, str):
            return value
        raise ValueError(f"{where}: {key!r} must be a string, not a mapping.")

    metadata = values.get("metadata")
    if isinstance(metadata, str):
        if metadata.strip():
            raise ValueError(f"{where}: 'metadata' must be a mapping of strings.")
        metadata = None
    name, description = text_field("name"), text_field("description")
    if not name:
        raise ValueError(f"{where} has no 'name'.")
    if not description:
        raise ValueError(f"{where} (skill {name!r}) has no 'description'.")
    try:
        return SkillFrontmatter(
            name=name,
            description=description,
            license=text_field("license"),
            compatibility=text_field("compatibility"),
            allowed_tools=text_field("allowed-tools") or text_field("allowed_tools"),
            metadata=metadata,
        )
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def _entry_is_link(entry: os.DirEntry[str]) -> bool:
    """Whether a directory entry is a link; ``True`` when it cannot be inspected (fail closed)."""
    try:
        if entry.is_symlink():
            return True
        return _WINDOWS and is_link(entry.path)
    except OSError:
        return True


def _read_no_follow(path: str) -> str:
    """A file's UTF-8 text, refusing to open it through a final-component link where the OS allows."""
    descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW)
    try:
        chunks: list[bytes] = []
        while chunk := os.read(descriptor, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    return b"".join(chunks).decode("utf-8")


class FileSkillsSource(SkillsSource):
    """Finds skills in folders holding a ``SKILL.md``, up to two levels below each root.

    A skill's resources (files with ``resource_extensions``) and scripts (``script_extensions``) are found
    up to ``search_depth`` levels inside its folder. A SKILL.md's ``name`` must equal its folder's name.
    Folders that fail are skipped and listed in :attr:`skipped` with the reason.

    Args:
        skill_paths: Root folders (or skill folders) to search.
        script_runner: Runs file scripts; without one, scripts are listed but cannot run.
        resource_extensions: ``None`` means the defaults; ``()`` finds no resources.
        script_extensions: ``None`` means the defaults; ``()`` finds no scripts.
        search_depth: Levels scanned inside each skill (1: its own folder only).
        script_filter: ``(skill_name, relative_path) -> bool``; ``False`` leaves a script out.
        resource_filter: ``(skill_name, relative_path) -> bool``; ``False`` leaves a resource out.

    Example:
        ```python
        from agentnb import FileSkillsSource, SkillsSourceContext

        skills = await FileSkillsSource("./skills").get_skills(SkillsSourceContext(agent=None))
        ```
    """

    def __init__(
        self,
        skill_paths: str | Path | Sequence[str | Path],
        *,
        script_runner: SkillScriptRunner | None = None,
        resource_extensions: tuple[str, ...] | None = DEFAULT_RESOURCE_EXTENSIONS,
        script_extensions: tuple[str, ...] | None = DEFAULT_SCRIPT_EXTENSIONS,
        search_depth: int = DEFAULT_SEARCH_DEPTH,
        script_filter: Callable[[str, str], bool] | None = None,
        resource_filter: Callable[[str, str], bool] | None = None,
    ) -> None:
        if isinstance(skill_paths, (str, Path)):
            self._skill_paths = [str(skill_paths)]
        else:
            self._skill_paths = [str(p) for p in skill_paths]
        if search_depth < 1:
            raise ValueError(f"search_depth must be >= 1, got {search_depth}")
        self._script_runner = script_runner
        resources = DEFAULT_RESOURCE_EXTENSIONS if resource_extensions is None else resource_extensions
        scripts = DEFAULT_SCRIPT_EXTENSIONS if script_extensions is None else script_extensions
        self._resource_extensions = frozenset(e.lower() for e in resources)
        self._script_extensions = frozenset(e.lower() for e in scripts)
        self._search_depth = search_depth
        self._script_filter = script_filter
        self._resource_filter = resource_filter
        #: Folders the last discovery did not load, with the reason.
        self.skipped: list[SkippedSkill] = []

    @property
    def skill_paths(self) -> list[str]:
        """The configured roots."""
        return list(self._skill_paths)

    @property
    def label(self) -> str:
        return f"FileSkillsSource({', '.join(self._skill_paths)})"

    async def get_skills(self, context: SkillsSourceContext) -> list[FileSkill]:  # type: ignore[override]
        """Scan the roots now (wrap in :class:`CachingSkillsSource` to scan once)."""
        return self.discover()

    def discover(self) -> list[FileSkill]:
        """Scan the roots synchronously and return the skills found (first of each name wins)."""
        skipped: list[SkippedSkill] = []
        found: dict[str, FileSkill] = {}
        for folder in self._skill_folders(skipped):
            skill = self._load(folder, skipped)
            if skill is None:
                continue
            name = skill.frontmatter.name
            if name in found:
                reason = f"skill name {name!r} already taken by {found[name].path}"
                logger.warning("Skipping skill at %s: %s.", folder, reason)
                skipped.append(SkippedSkill(folder, reason))
                continue
            found[name] = skill
        self.skipped = skipped
        return list(found.values())

    # -- finding skill folders -------------------------------------------------------------------------------
    def _skill_folders(self, skipped: list[SkippedSkill]) -> list[str]:
        folders: list[str] = []

        def search(directory: str, depth: int) -> None:
            marker = os.path.join(directory, SKILL_FILE_NAME)
            try:
                status = os.lstat(marker)
            except FileNotFoundError:
                status = None
            except OSError as e:
                skipped.append(SkippedSkill(directory, f"{SKILL_FILE_NAME} cannot be inspected ({e})"))
                return
            if status is not None:
                if stat.S_ISLNK(status.st_mode) or (_WINDOWS and _reparse(status)):
                    reason = f"{SKILL_FILE_NAME} is a symbolic link or junction"
                    logger.warning("Skipping skill at %s: %s.", directory, reason)
                    skipped.append(SkippedSkill(directory, reason))
                    return
                if stat.S_ISREG(status.st_mode):
                    folders.append(os.path.abspath(directory))
                    return  # everything below a skill belongs to it
            if depth >= MAX_SEARCH_DEPTH:
                return
            try:
                with os.scandir(directory) as scan:
                    entries = sorted(scan, key=lambda e: e.name)
            except OSError:
                return
            for entry in entries:
                if _entry_is_link(entry):
                    if _looks_like_folder(entry):
                        reason = "a symbolic link or junction below a skills root is not followed"
                        logger.warning("Skipping %s: %s.", entry.path, reason)
                        skipped.append(SkippedSkill(entry.path, reason))
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    search(entry.path, depth + 1)

        for root in self._skill_paths:
            if root and root.strip() and os.path.isdir(root):
                search(root, 0)
        return folders

    # -- one skill --------------------------------------------------------------------------------------------
    def _load(self, folder: str, skipped: list[SkippedSkill]) -> FileSkill | None:
        skill_file = os.path.join(folder, SKILL_FILE_NAME)
        try:
            content = _read_no_follow(skill_file)
            frontmatter = frontmatter_from_text(content, skill_file)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            logger.error("Skipping skill at %s: %s", folder, e)
            skipped.append(SkippedSkill(folder, str(e)))
            return None
        folder_name = os.path.basename(folder)
        if frontmatter.name != folder_name:
            reason = f"its name {frontmatter.name!r} differs from its folder's name {folder_name!r}"
            logger.error("Skipping skill at %s: %s.", folder, reason)
            skipped.append(SkippedSkill(folder, reason))
            return None
        # Resources and scripts are found when the skill is first loaded or shown, not at discovery:
        # advertising needs only the frontmatter, so a thousand skills cost a thousand small reads.
        return _ScannedFileSkill(self, frontmatter=frontmatter, content=content, path=folder)

    def contents(self, folder: str, skill_name: str) -> tuple[list[SkillResource], list[SkillScript]]:
        """The resources and scripts of the skill in ``folder`` (link-free files, filtered)."""
        resources: list[SkillResource] = []
        scripts: list[SkillScript] = []
        for relative, full_path in self._files(folder):
            extension = os.path.splitext(relative)[1].lower()
            if (
                extension in self._resource_extensions
                and os.path.basename(relative).upper() != SKILL_FILE_NAME.upper()
                and (self._resource_filter is None or self._resource_filter(skill_name, relative))
            ):
                resources.append(FileSkillResource(name=relative, full_path=full_path, root=folder))
            if extension in self._script_extensions and (
                self._script_filter is None or self._script_filter(skill_name, relative)
            ):
                scripts.append(
                    FileSkillScript(name=relative, full_path=full_path, runner=self._script_runner, skill_dir=folder)
                )
        return resources, scripts

    def _files(self, folder: str) -> list[tuple[str, str]]:
        """``(relative posix path, absolute path)`` of the regular, link-free files of a skill, sorted."""
        files: list[tuple[str, str]] = []

        def walk(directory: str, prefix: str, depth: int) -> None:
            try:
                with os.scandir(directory) as scan:
                    entries = list(scan)
            except OSError:
                logger.warning("Cannot list %s; its files are left out.", directory)
                return
            for entry in entries:
                if _entry_is_link(entry):
                    logger.warning("Skipping %s: links inside a skill are not followed.", entry.path)
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        files.append((prefix + entry.name, entry.path))
                    elif depth < self._search_depth and entry.is_dir(follow_symlinks=False):
                        walk(entry.path, f"{prefix}{entry.name}/", depth + 1)
                except OSError:
                    continue

        walk(folder, "", 1)
        files.sort()
        return files


class _ScannedFileSkill(FileSkill):
    """A folder skill whose resources and scripts are found on first use, with its source's rules."""

    def __init__(self, source: FileSkillsSource, *, frontmatter: SkillFrontmatter, content: str, path: str) -> None:
        self._source: FileSkillsSource | None = None
        self._found: tuple[list[SkillResource], list[SkillScript]] = ([], [])
        super().__init__(frontmatter=frontmatter, content=content, path=path)
        self._source = source

    def _scan(self) -> None:
        source = self._source
        if source is not None:
            self._source = None
            self._found = source.contents(self.path, self.frontmatter.name)

    # The lists scan on first read, however they are reached (the reference's tests read them directly).
    @property
    def _resources(self) -> list[SkillResource]:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._scan()
        return self._found[0]

    @_resources.setter
    def _resources(self, value: list[SkillResource]) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._found = (value, self._found[1])

    @property
    def _scripts(self) -> list[SkillScript]:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._scan()
        return self._found[1]

    @_scripts.setter
    def _scripts(self, value: list[SkillScript]) -> None:  # pyright: ignore[reportIncompatibleVariableOverride]
        self._found = (self._found[0], value)


def _reparse(status: os.stat_result) -> bool:
    return bool(getattr(status, "st_file_attributes", 0) & 0x400)


def _looks_like_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return True
