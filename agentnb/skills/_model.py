"""What a skill is: its frontmatter, instructions, resources and scripts, however it was defined.

A skill (the open Agent Skills format, agentskills.io) bundles instructions with reference material and
scripts. Code, a class, a folder with a SKILL.md, or an MCP server can each define one; the provider only
sees :class:`Skill`, so every kind is advertised, loaded and run the same way.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias, cast, runtime_checkable

from ..exceptions import SkillSecurityError

__all__ = [
    "DEFAULT_RESOURCE_EXTENSIONS",
    "DEFAULT_SCRIPT_EXTENSIONS",
    "DEFAULT_SEARCH_DEPTH",
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "SKILL_FILE_NAME",
    "ClassSkill",
    "FileSkill",
    "FileSkillResource",
    "FileSkillScript",
    "InlineSkill",
    "InlineSkillResource",
    "InlineSkillScript",
    "Skill",
    "SkillFrontmatter",
    "SkillResource",
    "SkillScript",
    "SkillScriptArgumentParser",
    "SkillScriptRunner",
    "check_script_inside",
    "has_link_below",
    "is_link",
    "resources_block",
    "script_element",
    "scripts_block",
]

SKILL_FILE_NAME: Final[str] = "SKILL.md"
MAX_NAME_LENGTH: Final[int] = 64
MAX_DESCRIPTION_LENGTH: Final[int] = 1024
MAX_COMPATIBILITY_LENGTH: Final[int] = 500
DEFAULT_RESOURCE_EXTENSIONS: Final[tuple[str, ...]] = (".md", ".json", ".yaml", ".yml", ".csv", ".xml", ".txt")
DEFAULT_SCRIPT_EXTENSIONS: Final[tuple[str, ...]] = (".py",)
#: Folder levels scanned for resources and scripts inside one skill (1: the skill's own folder only).
DEFAULT_SEARCH_DEPTH: Final[int] = 2

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

SkillScriptArgumentParser: TypeAlias = Callable[[dict[str, Any] | list[str] | str | None], dict[str, Any] | None]
"""Turns the model's raw ``args`` (a dict, a list, a JSON string or ``None``) into an inline script's keyword
arguments; for backends that send arguments in another shape (some vLLM servers send a JSON string)."""


# -- links (shared by file discovery, resource reads and the script runner) ----------------------------------

_REPARSE_POINT = 0x400  # FILE_ATTRIBUTE_REPARSE_POINT: symlinks and junctions on Windows


def is_link(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a symbolic link, a junction or another reparse point (never follows it).

    Raises:
        OSError: It cannot be inspected; callers treat that as unsafe.
    """
    status = os.lstat(path)
    if (status.st_mode & 0o170000) == 0o120000:
        return True
    return bool(getattr(status, "st_file_attributes", 0) & _REPARSE_POINT)


def has_link_below(path: str, root: str) -> bool:
    """Whether any part of ``path`` below ``root`` is a link, or cannot be inspected (fails closed).

    ``root`` itself is not checked: it is the trust boundary its owner chose.
    """
    try:
        relative = Path(path).relative_to(root)
    except ValueError:
        return True
    current = Path(root)
    for part in relative.parts:
        current = current / part
        try:
            if is_link(current):
                return True
        except OSError:
            return True
    return False


# -- frontmatter ---------------------------------------------------------------------------------------------


def _check_name(name: object, what: str = "Skill") -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{what} name cannot be empty.")
    if len(name) > MAX_NAME_LENGTH or _NAME.fullmatch(name) is None:
        raise ValueError(
            f"Invalid {what[:1].lower()}{what[1:]} name {name!r}: use at most {MAX_NAME_LENGTH} lowercase letters, "
            "digits and hyphens, without a leading, trailing or doubled hyphen (e.g. 'unit-converter')."
        )
    return name


class SkillFrontmatter:
    """The spec's discovery fields of a skill: what is advertised before the skill is loaded.

    ``name``, ``description`` and ``compatibility`` are checked against the Agent Skills specification
    when constructed; later assignments are not re-checked.

    Args:
        name: Lowercase letters, digits and single hyphens, at most 64 characters.
        description: What the skill does and when to use it (at most 1,024 characters).
        license: A license name or reference.
        compatibility: Environment requirements (at most 500 characters).
        allowed_tools: Space-delimited tools the skill may use.
        metadata: Free string pairs (copied).

    Example:
        ```python
        from agentnb import SkillFrontmatter

        SkillFrontmatter(name="unit-converter", description="Convert between units.").name  # 'unit-converter'
        ```
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        license: str | None = None,
        compatibility: str | None = None,
        allowed_tools: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        _check_name(name)
        if not isinstance(cast(object, description), str) or not description.strip():
            raise ValueError("Skill description cannot be empty.")
        if len(description) > MAX_DESCRIPTION_LENGTH:
            raise ValueError(
                f"Skill {name!r} has an invalid description: {len(description)} characters, "
                f"the limit is {MAX_DESCRIPTION_LENGTH}."
            )
        if compatibility is not None and len(compatibility) > MAX_COMPATIBILITY_LENGTH:
            raise ValueError(
                f"Skill {name!r} has a compatibility of {len(compatibility)} characters; "
                f"the limit is {MAX_COMPATIBILITY_LENGTH}."
            )
        self.name = name
        self.description = description
        self.license = license
        self.compatibility = compatibility
        self.allowed_tools = allowed_tools
        self.metadata: dict[str, str] | None = dict(metadata) if metadata is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-safe dict (``None`` fields left out)."""
        data: dict[str, Any] = {"name": self.name, "description": self.description}
        for key in ("license", "compatibility", "allowed_tools", "metadata"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SkillFrontmatter) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"SkillFrontmatter(name={self.name!r}, description={self.description!r})"


# -- resources -----------------------------------------------------------------------------------------------


def _accepts_kwargs(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class SkillResource(ABC):
    """Supplementary content of a skill (a reference document, a table, live data) read on demand."""

    def __init__(self, *, name: str, description: str | None = None) -> None:
        if not isinstance(cast(object, name), str) or not name.strip():
            raise ValueError("Resource name cannot be empty.")
        self.name = name
        self.description = description

    @abstractmethod
    async def read(self, **kwargs: Any) -> Any:
        """The resource's content; ``kwargs`` are the run's keyword arguments, for functions that take them."""

    @property
    def origin(self) -> str:
        """Where the content comes from, as shown in the notebook and the DevUI."""
        return "code"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class InlineSkillResource(SkillResource):
    """A resource defined in code: static ``content`` or a ``function`` (sync or async), exactly one.

    Example:
        ```python
        from agentnb import InlineSkillResource

        await InlineSkillResource(name="table", content="| m | ft |").read()  # '| m | ft |'
        ```
    """

    def __init__(
        self,
        *,
        name: str,
        description: str | None = None,
        content: str | None = None,
        function: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(name=name, description=description)
        if (content is None) == (function is None):
            raise ValueError(f"Resource {name!r} must have either content or function, not both.")
        self.content = content
        self.function = function
        self._takes_kwargs = function is not None and _accepts_kwargs(function)

    async def read(self, **kwargs: Any) -> Any:
        """The static content, or what the function returns (awaited when it is async)."""
        if self.function is None:
            return self.content
        result = self.function(**kwargs) if self._takes_kwargs else self.function()
        if inspect.isawaitable(result):
            result = await result
        return result


class FileSkillResource(SkillResource):
    """A resource read from a file inside a skill's folder, re-checked for links each time it is read."""

    def __init__(self, *, name: str, full_path: str, root: str | None = None, description: str | None = None) -> None:
        super().__init__(name=name, description=description)
        if not full_path or not full_path.strip():
            raise ValueError("full_path cannot be empty.")
        self.full_path = full_path
        self.root = root

    @property
    def origin(self) -> str:
        return self.full_path

    async def read(self, **kwargs: Any) -> Any:
        """The file's UTF-8 text.

        Raises:
            SkillSecurityError: The file became a link (or sits below one) since discovery.
            ValueError: The file no longer exists.
        """
        return await asyncio.to_thread(self._read)

    def _read(self) -> str:
        if self.root is not None and has_link_below(self.full_path, self.root):
            raise SkillSecurityError(
                f"Resource {self.name!r} has a symbolic link or junction in its path below {self.root!r}; "
                "links are not followed."
            )
        path = Path(self.full_path)
        if not path.is_file():
            raise ValueError(f"Resource file {self.name!r} not found at {self.full_path!r}.")
        return path.read_text(encoding="utf-8")


# -- scripts -------------------------------------------------------------------------------------------------


class SkillScript(ABC):
    """Something a skill can run: a function in this process or a file given to a runner."""

    def __init__(self, *, name: str, description: str | None = None) -> None:
        if not isinstance(cast(object, name), str) or not name.strip():
            raise ValueError("Script name cannot be empty.")
        self.name = name
        self.description = description

    @property
    def parameters_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the script's arguments, shown to the model when the skill is loaded."""
        return None

    @property
    def origin(self) -> str:
        """Where the script comes from, as shown in the notebook and the DevUI."""
        return "code"

    @abstractmethod
    async def run(self, skill: Skill, args: dict[str, Any] | list[str] | None = None, **kwargs: Any) -> Any:
        """Run the script for ``skill`` with the model's ``args``; ``kwargs`` are the run's keyword arguments."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class InlineSkillScript(SkillScript):
    """A script defined in code: a function (sync or async) called in-process with keyword arguments.

    Args:
        name: The name the model uses.
        description: What it does.
        function: Called with the model's ``args`` as keyword arguments.
        argument_parser: Converts the raw ``args`` first (see :data:`SkillScriptArgumentParser`).

    Example:
        ```python
        from agentnb import InlineSkillScript

        script = InlineSkillScript(name="double", function=lambda n: n * 2)
        await script.run(None, {"n": 21})  # 42
        ```
    """

    def __init__(
        self,
        *,
        name: str,
        description: str | None = None,
        function: Callable[..., Any],
        argument_parser: SkillScriptArgumentParser | None = None,
    ) -> None:
        super().__init__(name=name, description=description)
        if not callable(function):
            raise TypeError(f"Script {name!r} needs a callable function, got {function!r}.")
        self.function = function
        self.argument_parser = argument_parser
        self._takes_kwargs = _accepts_kwargs(function)
        self._schema: dict[str, Any] | None = None
        self._schema_known = False

    @property
    def parameters_schema(self) -> dict[str, Any] | None:
        """Derived from the function's signature on first use (``None`` when it takes no arguments)."""
        if not self._schema_known:
            from .._tools import FunctionTool

            schema = FunctionTool(self.function, name=getattr(self.function, "__name__", self.name)).parameters()
            self._schema = schema if schema.get("properties") else None
            self._schema_known = True
        return self._schema

    async def run(
        self, skill: Skill | None, args: dict[str, Any] | list[str] | str | None = None, **kwargs: Any
    ) -> Any:
        """Call the function with ``args`` as keyword arguments (after the argument parser, if any).

        Raises:
            TypeError: ``args`` is a string no parser converted, or a list (lists are for file scripts).
        """
        if self.argument_parser is not None:
            args = self.argument_parser(args)
        if isinstance(args, str):
            raise TypeError(
                f"Inline script {self.name!r} received its arguments as a string; pass argument_parser= to "
                "convert string-encoded arguments into keyword arguments."
            )
        if isinstance(args, list):
            raise TypeError(
                f"Inline script {self.name!r} requires keyword arguments (an object), not a list; lists of "
                "strings are for file scripts."
            )
        named = dict(args or {})
        result = self.function(**named, **kwargs) if self._takes_kwargs else self.function(**named)
        if inspect.isawaitable(result):
            result = await result
        return result


@runtime_checkable
class SkillScriptRunner(Protocol):
    """Runs file scripts: any callable ``(skill, script, args) -> result`` (sync or async).

    In-process scripts (:class:`InlineSkillScript`) never use a runner.
    """

    def __call__(
        self, skill: FileSkill, script: FileSkillScript, args: dict[str, Any] | list[str] | None = None
    ) -> Any: ...


class FileSkillScript(SkillScript):
    """A script file inside a skill's folder, run by the configured :class:`SkillScriptRunner`.

    Args:
        name: The path relative to the skill's folder (``scripts/convert.py``).
        description: What it does.
        full_path: The absolute path of the file.
        runner: Runs it; without one the script is listed but cannot run.
        skill_dir: The folder the script was found in (a source sets it): :meth:`run` then checks again, on
            disk, that the file is still a regular file there reached through no link. Without it only the
            path is checked; a runner that executes files (:class:`SubprocessScriptRunner`) checks on disk
            either way.
        trusted_root: The discovery root above ``skill_dir``; the on-disk check covers the folders between.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str | None = None,
        full_path: str,
        runner: SkillScriptRunner | None = None,
        skill_dir: str | None = None,
        trusted_root: str | None = None,
    ) -> None:
        super().__init__(name=name, description=description)
        if not full_path or not full_path.strip():
            raise ValueError("full_path cannot be empty.")
        if not os.path.isabs(full_path):
            raise ValueError(f"full_path must be an absolute path, got {full_path!r}.")
        if trusted_root is not None:
            if skill_dir is None:
                raise ValueError("trusted_root needs skill_dir.")
            root, folder = os.path.normpath(os.path.abspath(trusted_root)), os.path.normpath(os.path.abspath(skill_dir))
            if os.path.commonpath([root, folder]) != root:
                raise ValueError(f"skill_dir {skill_dir!r} is not under trusted_root {trusted_root!r}.")
        self.full_path = full_path
        self.runner = runner
        self.skill_dir = skill_dir
        self.trusted_root = trusted_root

    @property
    def parameters_schema(self) -> dict[str, Any] | None:
        """File scripts take command-line arguments: an array of strings."""
        return {"type": "array", "items": {"type": "string"}}

    @property
    def origin(self) -> str:
        return self.full_path

    async def run(self, skill: Skill, args: dict[str, Any] | list[str] | None = None, **kwargs: Any) -> Any:
        """Hand the script to the runner, after checking it lies inside ``skill``'s folder.

        Raises:
            TypeError: ``skill`` is not a :class:`FileSkill`.
            ValueError: No runner was configured.
            SkillSecurityError: The file is outside the skill's folder or reached through a link.
        """
        if not isinstance(skill, FileSkill):
            raise TypeError(
                f"File-based script {self.name!r} requires a FileSkill but received {type(skill).__name__}."
            )
        if self.runner is None:
            raise ValueError(
                f"Script {self.name!r} requires a runner: none is configured. Pass script_runner= "
                "(for example SubprocessScriptRunner()) to SkillsProvider.from_paths or FileSkillsSource."
            )
        check_script_inside(skill, self, on_disk=self.skill_dir is not None)
        result = self.runner(skill, self, args)
        if inspect.isawaitable(result):
            result = await result
        return result


def check_script_inside(skill: FileSkill, script: FileSkillScript, *, on_disk: bool = True) -> None:
    """Refuse a script file that is not a regular file inside its skill's folder, or that is reached by a link.

    ``on_disk=False`` checks the path alone (the file is not looked at).

    Raises:
        SkillSecurityError: With the reason; nothing was run.
    """
    root = os.path.normpath(os.path.abspath(skill.path))
    target = os.path.normpath(os.path.abspath(script.full_path))
    if not skill.runnable:
        raise SkillSecurityError(f"Skill {skill.frontmatter.name!r} comes from {skill.path!r}; its scripts never run.")
    if os.path.commonpath([root, target]) != root or target == root:
        raise SkillSecurityError(
            f"Script {script.name!r} of skill {skill.frontmatter.name!r} is outside the skill's folder "
            f"({script.full_path!r} is not under {skill.path!r}); it was not run."
        )
    if not on_disk:
        return
    if has_link_below(target, root):
        raise SkillSecurityError(
            f"Script {script.name!r} of skill {skill.frontmatter.name!r} is reached through a symbolic link "
            "or junction; links are not followed and it was not run."
        )
    if not os.path.isfile(target):
        raise SkillSecurityError(f"Script {script.name!r} of skill {skill.frontmatter.name!r} is not a file.")


# -- what the model sees when it loads a skill ----------------------------------------------------------------


def script_element(script: SkillScript) -> str:
    """One ``<script>`` line of a loaded skill, with its parameters schema when it has one."""
    attributes = f'name="{escape(script.name, quote=True)}"'
    if script.description:
        attributes += f' description="{escape(script.description, quote=True)}"'
    schema = script.parameters_schema
    if schema:
        body = escape(json.dumps(schema), quote=False)
        return f"  <script {attributes}>\n    <parameters_schema>{body}</parameters_schema>\n  </script>"
    return f"  <script {attributes}/>"


def resources_block(resources: Sequence[SkillResource]) -> str:
    """The ``<available_resources>`` block (self-closing when empty, so the model invents none)."""
    if not resources:
        return "<available_resources />"
    rows: list[str] = []
    for resource in resources:
        attributes = f'name="{escape(resource.name, quote=True)}"'
        if resource.description:
            attributes += f' description="{escape(resource.description, quote=True)}"'
        rows.append(f"  <resource {attributes}/>")
    return "<available_resources>\n" + "\n".join(rows) + "\n</available_resources>"


def scripts_block(scripts: Sequence[SkillScript]) -> str:
    """The ``<available_scripts>`` block (self-closing when empty)."""
    if not scripts:
        return "<available_scripts />"
    return "<available_scripts>\n" + "\n".join(script_element(s) for s in scripts) + "\n</available_scripts>"


def _code_content(
    frontmatter: SkillFrontmatter,
    instructions: str,
    resources: Sequence[SkillResource],
    scripts: Sequence[SkillScript],
) -> str:
    return (
        f"<name>{escape(frontmatter.name, quote=False)}</name>\n"
        f"<description>{escape(frontmatter.description, quote=False)}</description>\n\n"
        f"<instructions>\n{instructions}\n</instructions>\n\n"
        f"{resources_block(resources)}\n\n{scripts_block(scripts)}"
    )


def _by_name(items: Sequence[Any], name: str) -> Any:
    wanted = name.lower()
    return next((item for item in items if item.name.lower() == wanted), None)


# -- skills --------------------------------------------------------------------------------------------------


class Skill(ABC):
    """A skill of any kind; :class:`SkillsProvider` advertises its frontmatter and serves the rest on demand."""

    @property
    @abstractmethod
    def frontmatter(self) -> SkillFrontmatter:
        """The discovery fields (name, description, ...)."""

    @abstractmethod
    async def get_content(self) -> str:
        """The full skill, as the model receives it from ``load_skill``."""

    async def get_resource(self, name: str) -> SkillResource | None:
        """The resource called ``name`` (case-insensitive), or ``None``."""
        return None

    async def get_script(self, name: str) -> SkillScript | None:
        """The script called ``name`` (case-insensitive), or ``None``."""
        return None

    @property
    def origin(self) -> str:
        """Where the skill comes from (a folder, ``code``, an MCP URI), as shown in views."""
        return "code"

    @property
    def known_resources(self) -> list[SkillResource]:
        """The resources known without fetching anything (views list these)."""
        return []

    @property
    def known_scripts(self) -> list[SkillScript]:
        """The scripts known without fetching anything (views list these)."""
        return []

    def _repr_html_(self) -> str:
        from ._display import skill_html

        return skill_html(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.frontmatter.name!r})"


class InlineSkill(Skill):
    """A skill written in code, with resources and scripts added by decorators or passed in.

    Args:
        frontmatter: The discovery fields.
        instructions: The skill's body.
        resources: Resources to start with.
        scripts: Scripts to start with.
        argument_parser: The default argument parser of scripts added with :meth:`script`.

    Example:
        ```python
        from agentnb import InlineSkill, SkillFrontmatter

        skill = InlineSkill(
            frontmatter=SkillFrontmatter(name="greeter", description="Greets people."),
            instructions="Greet the user by name.",
        )

        @skill.script
        def greet(name: str) -> str:
            return f"Hello, {name}!"

        await (await skill.get_script("greet")).run(skill, {"name": "Ada"})  # 'Hello, Ada!'
        ```
    """

    def __init__(
        self,
        *,
        frontmatter: SkillFrontmatter,
        instructions: str,
        resources: Sequence[SkillResource] | None = None,
        scripts: Sequence[SkillScript] | None = None,
        argument_parser: SkillScriptArgumentParser | None = None,
    ) -> None:
        if not isinstance(cast(object, frontmatter), SkillFrontmatter):
            raise TypeError(f"frontmatter must be a SkillFrontmatter, got {type(frontmatter).__name__}.")
        self._frontmatter = frontmatter
        self.instructions = instructions
        self._argument_parser = argument_parser
        self._resources: list[SkillResource] = list(resources or [])
        self._scripts: list[SkillScript] = list(scripts or [])
        self._content: str | None = None

    @property
    def frontmatter(self) -> SkillFrontmatter:
        return self._frontmatter

    @property
    def known_resources(self) -> list[SkillResource]:
        return list(self._resources)

    @property
    def known_scripts(self) -> list[SkillScript]:
        return list(self._scripts)

    async def get_content(self) -> str:
        """The instructions with the resource and script lists (built once, on first load)."""
        if self._content is None:
            self._content = _code_content(self._frontmatter, self.instructions, self._resources, self._scripts)
        return self._content

    async def get_resource(self, name: str) -> SkillResource | None:
        return cast("SkillResource | None", _by_name(self._resources, name))

    async def get_script(self, name: str) -> SkillScript | None:
        return cast("SkillScript | None", _by_name(self._scripts, name))

    def resource(
        self, func: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None
    ) -> Any:
        """Decorator: add a function as a resource (``@skill.resource`` or ``@skill.resource(name=...)``)."""

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self._resources.append(
                InlineSkillResource(name=name or function.__name__, description=description, function=function)
            )
            self._content = None
            return function

        return register if func is None else register(func)

    def script(
        self, func: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None
    ) -> Any:
        """Decorator: add a function as a script (``@skill.script`` or ``@skill.script(name=...)``)."""

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self._scripts.append(
                InlineSkillScript(
                    name=name or function.__name__,
                    description=description,
                    function=function,
                    argument_parser=self._argument_parser,
                )
            )
            self._content = None
            return function

        return register if func is None else register(func)


_RESOURCE_MARK = "_agentnb_skill_resource"
_SCRIPT_MARK = "_agentnb_skill_script"


def _mark(kind: str, attribute: str, func: Any, name: str | None, description: str | None) -> Any:
    if name is not None:
        _check_name(name, f"@ClassSkill.{kind}")

    def stamp(function: Any) -> Any:
        if isinstance(function, (property, classmethod, staticmethod)):
            raise TypeError(
                f"@ClassSkill.{kind} must be applied before @property, @classmethod or @staticmethod "
                f"(write @property first, then @ClassSkill.{kind})."
            )
        setattr(function, attribute, {"name": name, "description": description})
        return function

    return stamp if func is None else stamp(func)


def _marked(cls: type, attribute: str) -> list[tuple[str, dict[str, Any], bool]]:
    """``(attribute name, marker, is a property)`` for members stamped with ``attribute``, base classes too."""
    found: list[tuple[str, dict[str, Any], bool]] = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        for member_name, member in vars(klass).items():
            if member_name in seen:
                continue
            seen.add(member_name)
            target = member.fget if isinstance(member, property) else member
            marker = getattr(target, attribute, None)
            if isinstance(marker, dict):
                found.append((member_name, cast("dict[str, Any]", marker), isinstance(member, property)))
    return sorted(found, key=lambda item: item[0])


class ClassSkill(Skill, ABC):
    """A skill as a reusable class: override :attr:`instructions`; mark methods as resources and scripts.

    Example:
        ```python
        from agentnb import ClassSkill, SkillFrontmatter

        class Converter(ClassSkill):
            def __init__(self) -> None:
                super().__init__(frontmatter=SkillFrontmatter(name="converter", description="Convert units."))

            @property
            def instructions(self) -> str:
                return "Use the convert script."

            @ClassSkill.script
            def convert(self, value: float, factor: float) -> float:
                return value * factor

        skill = Converter()
        await (await skill.get_script("convert")).run(skill, {"value": 2, "factor": 3})  # 6
        ```
    """

    def __init__(
        self, *, frontmatter: SkillFrontmatter, argument_parser: SkillScriptArgumentParser | None = None
    ) -> None:
        if not isinstance(cast(object, frontmatter), SkillFrontmatter):
            raise TypeError(f"frontmatter must be a SkillFrontmatter, got {type(frontmatter).__name__}.")
        self._frontmatter = frontmatter
        self._argument_parser = argument_parser
        self._content: str | None = None
        self._resources: list[SkillResource] | None = None
        self._scripts: list[SkillScript] | None = None

    @property
    def frontmatter(self) -> SkillFrontmatter:
        return self._frontmatter

    @staticmethod
    def resource(
        func: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None
    ) -> Any:
        """Mark a method (or, under ``@property``, a property) as a resource; its name defaults to the
        member's name with hyphens for underscores."""
        return _mark("resource", _RESOURCE_MARK, func, name, description)

    @staticmethod
    def script(
        func: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None
    ) -> Any:
        """Mark a method as a script; its parameters (after ``self``) become the script's schema."""
        return _mark("script", _SCRIPT_MARK, func, name, description)

    @property
    @abstractmethod
    def instructions(self) -> str:
        """The skill's body."""

    @property
    def resources(self) -> list[SkillResource]:
        """The marked resources (found once); override to list them yourself."""
        if self._resources is None:
            found: list[SkillResource] = []
            for member_name, marker, is_property in _marked(type(self), _RESOURCE_MARK):
                resource_name = marker["name"] or member_name.replace("_", "-").strip("-")
                if _by_name(found, resource_name) is not None:
                    raise ValueError(
                        f"Skill {self._frontmatter.name!r} already has a resource named {resource_name!r}; "
                        "give each @ClassSkill.resource its own name."
                    )
                function = self._property_reader(member_name) if is_property else getattr(self, member_name)
                found.append(
                    InlineSkillResource(name=resource_name, description=marker["description"], function=function)
                )
            self._resources = found
        return list(self._resources)

    def _property_reader(self, attribute: str) -> Callable[[], Any]:
        # Read the property on every resource read, never during discovery.
        return lambda: getattr(self, attribute)

    @property
    def scripts(self) -> list[SkillScript]:
        """The marked scripts (found once); override to list them yourself."""
        if self._scripts is None:
            found: list[SkillScript] = []
            for member_name, marker, _ in _marked(type(self), _SCRIPT_MARK):
                script_name = marker["name"] or member_name.replace("_", "-").strip("-")
                if _by_name(found, script_name) is not None:
                    raise ValueError(
                        f"Skill {self._frontmatter.name!r} already has a script named {script_name!r}; "
                        "give each @ClassSkill.script its own name."
                    )
                found.append(
                    InlineSkillScript(
                        name=script_name,
                        description=marker["description"],
                        function=getattr(self, member_name),
                        argument_parser=self._argument_parser,
                    )
                )
            self._scripts = found
        return list(self._scripts)

    @property
    def known_resources(self) -> list[SkillResource]:
        return self.resources

    @property
    def known_scripts(self) -> list[SkillScript]:
        return self.scripts

    async def get_content(self) -> str:
        if self._content is None:
            self._content = _code_content(self._frontmatter, self.instructions, self.resources, self.scripts)
        return self._content

    async def get_resource(self, name: str) -> SkillResource | None:
        return cast("SkillResource | None", _by_name(self.resources, name))

    async def get_script(self, name: str) -> SkillScript | None:
        return cast("SkillScript | None", _by_name(self.scripts, name))


class FileSkill(Skill):
    """A skill from a SKILL.md file (on disk, or unpacked in memory from an MCP archive).

    Args:
        frontmatter: Parsed from the SKILL.md.
        content: The whole SKILL.md text.
        path: The skill's folder (for an MCP archive: its URL).
        resources: Its resources.
        scripts: Its scripts.
        runnable: ``False`` for skills from a remote source, whose scripts must never run.
    """

    def __init__(
        self,
        *,
        frontmatter: SkillFrontmatter,
        content: str,
        path: str,
        resources: Sequence[SkillResource] | None = None,
        scripts: Sequence[SkillScript] | None = None,
        runnable: bool = True,
    ) -> None:
        self._frontmatter = frontmatter
        self._raw = content
        self.path = path
        self.runnable = runnable
        self._resources: list[SkillResource] = list(resources or [])
        self._scripts: list[SkillScript] = list(scripts or []) if runnable else []
        self._content: str | None = None

    def _scan(self) -> None:
        """Fill ``_resources`` and ``_scripts`` on first use; subclasses that find files lazily override it."""

    @property
    def frontmatter(self) -> SkillFrontmatter:
        return self._frontmatter

    @property
    def origin(self) -> str:
        return self.path

    @property
    def known_resources(self) -> list[SkillResource]:
        self._scan()
        return list(self._resources)

    @property
    def known_scripts(self) -> list[SkillScript]:
        self._scan()
        return list(self._scripts)

    async def get_content(self) -> str:
        """The SKILL.md text followed by the resource and script lists."""
        if self._content is None:
            self._scan()
            self._content = f"{self._raw}\n\n{resources_block(self._resources)}\n\n{scripts_block(self._scripts)}"
        return self._content

    async def get_resource(self, name: str) -> SkillResource | None:
        self._scan()
        wanted = name.replace("\\", "/").removeprefix("./")
        return cast("SkillResource | None", _by_name(self._resources, wanted))

    async def get_script(self, name: str) -> SkillScript | None:
        self._scan()
        wanted = name.replace("\\", "/").removeprefix("./")
        return cast("SkillScript | None", _by_name(self._scripts, wanted))
