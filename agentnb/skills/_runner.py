"""Run file skill scripts as child processes: an argument list (never a shell), a time limit, typed errors.

The runner is only reached through ``run_skill_script``, so a person approved the call (or a rule they
set did). It re-checks that the script is a regular file inside its skill's folder, reached without links,
right before starting it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..exceptions import SkillScriptError
from ._model import FileSkill, FileSkillScript, check_script_inside

__all__ = ["SubprocessScriptRunner", "script_arguments"]


def script_arguments(args: dict[str, Any] | list[str] | None) -> list[str]:
    """Command-line arguments from the model's ``args``.

    A list of strings is passed as-is. An object becomes flags: ``{"value": 3, "verbose": true}`` gives
    ``["--value", "3", "--verbose"]`` (``false`` and ``null`` leave the flag out; a list repeats it).

    Raises:
        TypeError: A list item is not a string, or ``args`` is neither a list, an object nor ``None``.
    """
    if args is None:
        return []
    raw = cast(object, args)
    if isinstance(raw, list):
        items = cast("list[object]", raw)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(
                    f"Script arguments must be strings, got {type(item).__name__} {item!r}; "
                    'pass e.g. ["--value", "26.2"].'
                )
        return [str(item) for item in items]
    if isinstance(raw, dict):
        argv: list[str] = []
        for key, value in cast("dict[str, object]", raw).items():
            flag = f"--{key}"
            values: list[object] = cast("list[object]", value) if isinstance(value, list) else [value]
            for item in values:
                if item is None or item is False:
                    continue
                if item is True:
                    argv.append(flag)
                else:
                    argv.extend([flag, str(item)])
        return argv
    raise TypeError(f"Script arguments must be a list of strings or an object, got {type(raw).__name__}.")


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"…{text[-limit:]}"


class SubprocessScriptRunner:
    """Runs file skill scripts as child processes of this Python (``.py``) or of a configured interpreter.

    The process starts in the skill's folder with an argument list (no shell), reads nothing on stdin, and
    is stopped (with its children) when it outlives ``timeout`` or the run is cancelled.

    Args:
        timeout: Seconds a script may run.
        interpreters: The command that runs each file extension; ``.py`` runs with this Python by default.
        env: The child's environment (default: this process's).
        max_output_chars: Output beyond this is cut (the end is kept).

    Raises (from a call):
        SkillScriptError: The script timed out, could not start, or exited with a non-zero code (the error
            carries the exit code and output).
        SkillSecurityError: The script is outside its skill's folder or reached through a link.

    Example:
        ```python
        from agentnb import SkillsProvider, SubprocessScriptRunner

        provider = SkillsProvider.from_paths("./skills", script_runner=SubprocessScriptRunner(timeout=10))
        ```
    """

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        interpreters: Mapping[str, Sequence[str]] | None = None,
        env: Mapping[str, str] | None = None,
        max_output_chars: int = 20_000,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if max_output_chars < 1:
            raise ValueError(f"max_output_chars must be >= 1, got {max_output_chars}")
        self.timeout = timeout
        self.interpreters: dict[str, list[str]] = {".py": [sys.executable]}
        for extension, command in (interpreters or {}).items():
            self.interpreters[extension.lower()] = list(command)
        self.env = dict(env) if env is not None else None
        self.max_output_chars = max_output_chars

    def command(self, script: FileSkillScript, args: dict[str, Any] | list[str] | None) -> list[str]:
        """The argument list that runs ``script`` (no shell ever parses it)."""
        extension = os.path.splitext(script.full_path)[1].lower()
        interpreter = self.interpreters.get(extension)
        if interpreter is None:
            known = ", ".join(sorted(self.interpreters))
            raise SkillScriptError(
                f"No interpreter is configured for {extension or 'files without an extension'} scripts "
                f"({script.name!r}); known: {known}. Pass interpreters={{{extension!r}: [...]}}.",
                script=script.name,
            )
        return [*interpreter, script.full_path, *script_arguments(args)]

    async def __call__(
        self, skill: FileSkill, script: FileSkillScript, args: dict[str, Any] | list[str] | None = None
    ) -> str:
        """Run ``script`` and return its output (stdout, then stderr after a ``Stderr:`` line)."""
        check_script_inside(skill, script)
        command = self.command(script, args)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                cwd=skill.path,
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=os.name != "nt",
            )
        except OSError as e:
            raise SkillScriptError(f"Script {script.name!r} could not start: {e}", script=script.name) from e
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), self.timeout)
        except (TimeoutError, asyncio.CancelledError) as e:
            await self._stop(process)
            if isinstance(e, asyncio.CancelledError):
                raise
            raise SkillScriptError(
                f"Script {script.name!r} of skill {skill.frontmatter.name!r} ran longer than {self.timeout:g} s "
                "and was stopped.",
                script=script.name,
            ) from None
        output = stdout.decode("utf-8", errors="replace")
        errors = stderr.decode("utf-8", errors="replace")
        if errors.strip():
            output = f"{output.rstrip()}\nStderr:\n{errors}" if output.strip() else f"Stderr:\n{errors}"
        output = _tail(output.strip(), self.max_output_chars)
        if process.returncode != 0:
            raise SkillScriptError(
                f"Script {script.name!r} of skill {skill.frontmatter.name!r} exited with code "
                f"{process.returncode}:\n{_tail(output, 2_000) or '(no output)'}",
                script=script.name,
                exit_code=process.returncode,
                output=output,
            )
        return output or "(no output)"

    @staticmethod
    async def _stop(process: asyncio.subprocess.Process) -> None:
        """Kill the script and everything it started, then reap it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.name != "nt":
                os.killpg(process.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows
                process.kill()
        with contextlib.suppress(Exception):
            await process.wait()

    def __repr__(self) -> str:
        return f"SubprocessScriptRunner(timeout={self.timeout:g})"
