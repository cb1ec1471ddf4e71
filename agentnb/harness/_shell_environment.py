"""Tell the agent which shell it is driving, so it writes commands in that shell's idiom.

:class:`ShellEnvironmentProvider` probes its :class:`~agentnb.harness.ShellExecutor` once (OS, shell family and
version, working directory, the versions of a few CLIs) and adds an instructions block to every run. A probe
that fails (time-out, refused, no shell) leaves a gap in the block, never an error for the agent.
"""

from __future__ import annotations

import asyncio
import platform
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from .._sessions import AgentSession, ContextProvider, SessionContext
from ..exceptions import ShellExecutionError
from ._shell import ShellExecutor, ShellResult

__all__ = [
    "ShellEnvironmentProvider",
    "ShellEnvironmentProviderOptions",
    "ShellEnvironmentSnapshot",
    "ShellFamily",
    "default_instructions_formatter",
]

# Tool names go into a command line: anything but a plain name could inject a command.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


class ShellFamily(str, Enum):
    """The kinds of shell the instructions know how to describe."""

    POSIX = "posix"
    POWERSHELL = "powershell"


@dataclass(frozen=True)
class ShellEnvironmentSnapshot:
    """What the probe found; ``None`` where a probe failed or a tool is missing."""

    family: ShellFamily
    os_description: str
    shell_version: str | None
    working_directory: str
    tool_versions: Mapping[str, str | None]


@dataclass(frozen=True)
class ShellEnvironmentProviderOptions:
    """How :class:`ShellEnvironmentProvider` probes and what it writes.

    Attributes:
        probe_tools: CLIs whose ``--version`` is asked (plain names only; others are reported missing).
        override_family: The shell family, when the platform's default (PowerShell on Windows, else POSIX)
            is wrong for the executor (bash on Windows, a container).
        probe_timeout: Seconds each probe may take.
        instructions_formatter: Renders the snapshot (default: :func:`default_instructions_formatter`).
    """

    probe_tools: Sequence[str] = field(default_factory=lambda: ("git", "node", "python", "docker"))
    override_family: ShellFamily | None = None
    probe_timeout: float = 5.0
    instructions_formatter: Callable[[ShellEnvironmentSnapshot], str] | None = None


def _first_line(text: str) -> str | None:
    return next((line.strip() for line in text.splitlines() if line.strip()), None)


class ShellEnvironmentProvider(ContextProvider):
    """Add a "Shell environment" block to the agent's instructions, probed once from the shell it runs.

    Example:
        ```python
        from agentnb.harness import LocalShellTool, ShellEnvironmentProvider

        shell = LocalShellTool(mode="stateless")
        provider = ShellEnvironmentProvider(shell)
        snapshot = await provider.refresh()
        snapshot.family  # <ShellFamily.POSIX: 'posix'> on Linux and macOS
        ```
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "shell_environment"

    def __init__(
        self,
        executor: ShellExecutor,
        options: ShellEnvironmentProviderOptions | None = None,
        *,
        source_id: str | None = None,
    ) -> None:
        super().__init__(source_id or self.DEFAULT_SOURCE_ID)
        self.executor = executor
        self.options = options or ShellEnvironmentProviderOptions()
        self._snapshot: ShellEnvironmentSnapshot | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def current_snapshot(self) -> ShellEnvironmentSnapshot | None:
        """The last probe's snapshot (``None`` before the first)."""
        return self._snapshot

    def _guard(self) -> asyncio.Lock:
        # Made on first use, inside the running loop (a provider may be built before any loop exists).
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def refresh(self) -> ShellEnvironmentSnapshot:
        """Probe again (after the agent installed a CLI, say) and keep the new snapshot."""
        async with self._guard():
            self._snapshot = await self._probe()
            return self._snapshot

    async def before_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        snapshot = self._snapshot
        if snapshot is None:
            async with self._guard():  # concurrent first runs wait for one probe
                if self._snapshot is None:
                    self._snapshot = await self._probe()
                snapshot = self._snapshot
        formatter = self.options.instructions_formatter or default_instructions_formatter
        context.extend_instructions(self.source_id, formatter(snapshot))

    async def _probe(self) -> ShellEnvironmentSnapshot:
        family = self.options.override_family or (
            ShellFamily.POWERSHELL if sys.platform == "win32" else ShellFamily.POSIX
        )
        await self.executor.start()
        if family is ShellFamily.POWERSHELL:
            command = (
                'Write-Output ("VERSION=" + $PSVersionTable.PSVersion.ToString()); '
                'Write-Output ("CWD=" + (Get-Location).Path)'
            )
        else:
            command = 'echo "VERSION=${BASH_VERSION:-${ZSH_VERSION:-unknown}}"; echo "CWD=$(pwd)"'
        version: str | None = None
        cwd = ""
        result = await self._run(command)
        for line in (result.stdout if result is not None else "").splitlines():
            line = line.strip()
            if line.startswith("VERSION="):
                value = line.removeprefix("VERSION=").strip()
                version = value if value and value != "unknown" else None
            elif line.startswith("CWD="):
                cwd = line.removeprefix("CWD=").strip()
        tools: dict[str, str | None] = {}
        for name in self.options.probe_tools:
            if name.lower() not in {seen.lower() for seen in tools}:
                tools[name] = await self._tool_version(name)
        return ShellEnvironmentSnapshot(family, platform.platform(), version, cwd, tools)

    async def _tool_version(self, name: str) -> str | None:
        if not _TOOL_NAME.match(name):
            return None
        result = await self._run(f"{name} --version")
        if result is None or result.exit_code != 0 or result.timed_out:
            return None
        return _first_line(result.stdout) or _first_line(result.stderr)  # some CLIs print it on stderr

    async def _run(self, command: str) -> ShellResult | None:
        try:
            return await self.executor.run(command, timeout=self.options.probe_timeout)
        except (asyncio.TimeoutError, ShellExecutionError):
            return None


def default_instructions_formatter(snapshot: ShellEnvironmentSnapshot) -> str:
    """The default instructions block (call it from your own formatter to extend it)."""
    version = f" {snapshot.shell_version}" if snapshot.shell_version else ""
    lines = ["## Shell environment"]
    if snapshot.family is ShellFamily.POWERSHELL:
        lines += [
            f"Commands run in PowerShell{version} on {snapshot.os_description}. Write PowerShell, not bash:",
            "- environment variables: set with `$env:NAME = 'value'`, read with `$env:NAME`;",
            "- change folder with `Set-Location` (or `cd`); paths use `\\` separators;",
            "- the temp folder is `[System.IO.Path]::GetTempPath()`, not `/tmp`;",
            "- discard output with `| Out-Null`, not `> /dev/null`.",
        ]
    else:
        lines += [
            f"Commands run in a POSIX shell{version} on {snapshot.os_description}. Write bash/sh:",
            "- set a variable for later commands with `export NAME=value`, read it as `$NAME` or `${NAME}`;",
            "- paths use `/` separators.",
        ]
    if snapshot.working_directory:
        lines.append(f"Working directory: {snapshot.working_directory}")
    installed = [f"{name} ({version})" for name, version in snapshot.tool_versions.items() if version]
    missing = [name for name, version in snapshot.tool_versions.items() if version is None]
    if installed:
        lines.append("Installed CLIs: " + ", ".join(installed))
    if missing:
        lines.append("Not installed: " + ", ".join(missing))
    return "\n".join(lines)
