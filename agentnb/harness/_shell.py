"""A local shell tool for agents: commands under approval, in a working directory, with a time limit and capped output.

:class:`LocalShellTool` runs each command through the platform's shell, either in one long-lived process
(``mode="persistent"``: ``cd`` and ``export`` carry over) or a fresh one per command (``"stateless"``).
Its :meth:`~LocalShellTool.as_function` is the tool the model calls, ``always_require`` by default: approval is
the security boundary, and turning it off needs ``acknowledge_unsafe=True``. :class:`ShellPolicy` is a
pre-filter for friendly refusals, not a defence. A command that runs past its time limit has its whole
process group killed; output beyond ``max_output_bytes`` keeps its head and tail.

One tool (and, persistent, one shell process) belongs to one conversation: its shell state is shared by
every command it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from .._tools import FunctionTool
from ..exceptions import ShellCommandError, ShellExecutionError

__all__ = [
    "DEFAULT_SHELL_MAX_OUTPUT_BYTES",
    "DEFAULT_SHELL_TIMEOUT",
    "SHELL_ENV_OVERRIDE",
    "LocalShellTool",
    "ShellDecision",
    "ShellExecutor",
    "ShellMode",
    "ShellPolicy",
    "ShellRequest",
    "ShellResult",
]

logger = logging.getLogger("agentnb.harness")

ShellMode = Literal["persistent", "stateless"]
#: Seconds a command may run before its process group is killed.
DEFAULT_SHELL_TIMEOUT = 30.0
#: Bytes of stdout (and of stderr) kept; beyond that the middle is dropped.
DEFAULT_SHELL_MAX_OUTPUT_BYTES = 64 * 1024
#: Environment variable naming the shell to use (a command line, e.g. ``"/bin/zsh"``).
SHELL_ENV_OVERRIDE = "AGENTNB_SHELL"
_KILL_GRACE = 2.0
_CHUNK = 65536


@dataclass(frozen=True)
class ShellResult:
    """What one command did: its output (possibly cut in the middle), exit code and time taken."""

    stdout: str
    stderr: str
    exit_code: int
    duration_ms: int
    truncated: bool = False
    timed_out: bool = False

    def format_for_model(self) -> str:
        """The result as one block of text for the model."""
        parts = [self.stdout] if self.stdout else []
        if self.stderr:
            parts.append(f"stderr: {self.stderr}")
        if self.truncated:
            parts.append("[output truncated]")
        if self.timed_out:
            parts.append("[command timed out]")
        parts.append(f"exit_code: {self.exit_code}")
        return "\n".join(parts)


@runtime_checkable
class ShellExecutor(Protocol):
    """Something that runs shell commands (a local shell, a container, a remote host)."""

    async def start(self) -> None:
        """Start the backend (a no-op once started)."""
        ...

    async def close(self) -> None:
        """Release everything the backend holds; safe to call twice."""
        ...

    async def run(self, command: str, *, timeout: float | None = None) -> ShellResult:
        """Run ``command``; ``timeout`` (seconds) overrides the backend's default and must be enforced."""
        ...


@dataclass(frozen=True)
class ShellRequest:
    """A command waiting for the policy's decision."""

    command: str
    workdir: str | None = None


@dataclass(frozen=True)
class ShellDecision:
    """The policy's decision, with the reason shown to the model when it denies."""

    decision: Literal["allow", "deny"]
    reason: str = ""


@dataclass
class ShellPolicy:
    """Allow/deny patterns checked before approval: a way to refuse known-unwanted commands politely.

    Not a security boundary: a pattern sees the command's spelling, not what the shell will run after
    expansion (``r''m``, ``$(printf ...)``, ``python -c ...`` all get past one). Approval is the boundary.
    Checked in order, first hit wins: an empty command is denied; a ``denylist`` match denies; with an
    ``allowlist``, a command matching none of it is denied; ``custom`` may then return a decision; otherwise
    the command is allowed. Patterns are case-insensitive regular expressions.

    Example:
        ```python
        from agentnb.harness import ShellPolicy

        policy = ShellPolicy(denylist=[r"\\bssh\\b"])
        policy.evaluate_command("ssh prod").decision  # 'deny'
        ```
    """

    denylist: Sequence[str | re.Pattern[str]] = ()
    allowlist: Sequence[str | re.Pattern[str]] | None = None
    custom: Callable[[ShellRequest], ShellDecision | None] | None = None
    _denies: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _allows: tuple[re.Pattern[str], ...] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._denies = _compiled(self.denylist)
        self._allows = _compiled(self.allowlist) if self.allowlist is not None else None

    def evaluate(self, request: ShellRequest) -> ShellDecision:
        """Allow or deny ``request``."""
        command = request.command.strip()
        if not command:
            return ShellDecision("deny", "command is empty")
        for pattern in self._denies:
            if pattern.search(command):
                return ShellDecision("deny", f"matches denylist pattern: {pattern.pattern}")
        if self._allows is not None and not any(p.search(command) for p in self._allows):
            return ShellDecision("deny", "command does not match allowlist")
        if self.custom is not None and (override := self.custom(request)) is not None:
            return override
        return ShellDecision("allow")

    def evaluate_command(self, command: str) -> ShellDecision:
        """:meth:`evaluate` for a bare command."""
        return self.evaluate(ShellRequest(command))


def _compiled(patterns: Sequence[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    return tuple(p if isinstance(p, re.Pattern) else re.compile(p, re.IGNORECASE) for p in patterns)


# --- finding the shell -------------------------------------------------------------------------------------


def is_powershell(argv: Sequence[str]) -> bool:
    """Whether ``argv`` starts PowerShell."""
    return bool(argv) and os.path.basename(argv[0]).lower() in {"pwsh", "pwsh.exe", "powershell", "powershell.exe"}


def resolve_shell(shell: str | Sequence[str] | None, *, interactive: bool) -> list[str]:
    """The shell's command line: ``shell``, else ``$AGENTNB_SHELL``, else the platform's own.

    Non-interactive command lines end with the flag that takes a command string (``-c`` / ``-Command``).
    """
    given = shell if shell is not None else os.environ.get(SHELL_ENV_OVERRIDE) or None
    if given is not None:
        parts = shlex.split(given) if isinstance(given, str) else list(given)
        if not parts:
            raise ShellExecutionError("The shell override is empty; name a shell, e.g. '/bin/bash'.")
        return parts if interactive else _with_command_flag(parts)
    if sys.platform == "win32":
        binary = shutil.which("pwsh") or shutil.which("powershell")
        if binary is None:
            raise ShellExecutionError(
                f"Neither pwsh nor powershell is on PATH; install one or set {SHELL_ENV_OVERRIDE}."
            )
        base = [binary, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command"]
        return [*base, "-"] if interactive else base
    for candidate in ("/bin/bash", "/usr/bin/bash", "/bin/sh", "/usr/bin/sh"):
        if os.path.exists(candidate):
            if interactive:
                return [candidate, "--noprofile", "--norc"] if candidate.endswith("bash") else [candidate]
            return [candidate, "-c"]
    found = shutil.which("sh")
    if found is None:
        raise ShellExecutionError(f"No POSIX shell on PATH; set {SHELL_ENV_OVERRIDE} to one.")
    return [found] if interactive else [found, "-c"]


def _with_command_flag(argv: list[str]) -> list[str]:
    last = argv[-1].lower()
    if is_powershell(argv):
        return argv if last in {"-command", "-c"} else [*argv, "-Command"]
    return argv if last == "-c" else [*argv, "-c"]


# --- output and processes ----------------------------------------------------------------------------------


def truncate_head_tail(data: bytes, cap: int) -> tuple[str, bool]:
    """``data`` as text, cut to ``cap`` bytes by dropping the middle (the tail keeps the odd byte)."""
    if cap <= 0:
        raise ValueError(f"cap must be positive, got {cap}")
    if len(data) <= cap:
        return data.decode("utf-8", errors="replace"), False
    head, tail = data[: cap // 2], data[len(data) - (cap - cap // 2) :]
    return _joined(head, tail, len(data) - cap), True


def _joined(head: bytes, tail: bytes, dropped: int) -> str:
    return f"{head.decode('utf-8', 'replace')}\n[... truncated {dropped} bytes ...]\n{tail.decode('utf-8', 'replace')}"


class _Capped:
    """Output read so far, bounded: the first bytes and the last bytes are kept, the middle is counted.

    ``slack`` extra tail bytes are kept so an end marker can be found and cut off before capping.
    """

    def __init__(self, cap: int, slack: int) -> None:
        self.cap, self.slack = cap, slack
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        keep_tail = self.cap - self.cap // 2 + self.slack
        if len(self.data) > 2 * (self.cap + self.slack):
            cut = len(self.data) - keep_tail - self.cap // 2
            del self.data[self.cap // 2 : self.cap // 2 + cut]
            self.dropped += cut

    def result(self, end: int | None = None) -> tuple[str, bool]:
        body = bytes(self.data[:end] if end is not None else self.data)
        if not self.dropped:
            return truncate_head_tail(body, self.cap)
        head, tail = body[: self.cap // 2], body[self.cap // 2 :][-(self.cap - self.cap // 2) :]
        return _joined(head, tail, self.dropped + len(body) - len(head) - len(tail)), True


def _group_kwargs() -> dict[str, object]:
    """Start the shell in its own process group, so a time-out kills what it started too."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


async def kill_process_tree(proc: asyncio.subprocess.Process, *, grace: float = _KILL_GRACE) -> None:
    """End ``proc`` and its process group: SIGTERM, then SIGKILL after ``grace`` seconds. Never raises."""
    if proc.returncode is not None:
        return
    if sys.platform == "win32":
        with contextlib.suppress(ProcessLookupError, OSError):
            proc.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
            return


async def run_stateless(
    argv: Sequence[str],
    command: str,
    *,
    workdir: str | None,
    env: Mapping[str, str] | None,
    timeout: float | None,
    max_output_bytes: int,
) -> ShellResult:
    """Run ``command`` in a fresh shell process (``argv`` ends with ``-c``), killing its group on time-out."""
    started = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workdir,
            env=dict(env) if env is not None else None,
            **_group_kwargs(),  # pyright: ignore[reportArgumentType]
        )
    except OSError as e:
        raise ShellExecutionError(f"Could not start the shell {argv[0]!r}: {e}") from e
    out, err = _Capped(max_output_bytes, 0), _Capped(max_output_bytes, 0)

    async def pump(stream: asyncio.StreamReader | None, into: _Capped) -> None:
        while stream is not None and (chunk := await stream.read(_CHUNK)):
            into.add(chunk)

    timed_out = False
    try:
        await asyncio.wait_for(asyncio.gather(pump(proc.stdout, out), pump(proc.stderr, err), proc.wait()), timeout)
    except asyncio.TimeoutError:
        timed_out = True
        await kill_process_tree(proc)
    finally:
        if proc.returncode is None:  # cancelled: leave nothing running
            await kill_process_tree(proc)
    stdout, cut_out = out.result()
    stderr, cut_err = err.result()
    return ShellResult(
        stdout=stdout,
        stderr=stderr,
        exit_code=proc.returncode if proc.returncode is not None else -1,
        duration_ms=int((time.monotonic() - started) * 1000),
        truncated=cut_out or cut_err,
        timed_out=timed_out,
    )


class ShellSession:
    """One long-lived POSIX shell that runs commands one at a time, each ended by a marker with its exit code.

    A command that times out, or ends the shell (``exit``), takes the process with it; the next command starts
    a fresh one (in ``workdir`` again, its exported variables gone).
    """

    def __init__(
        self, argv: Sequence[str], *, workdir: str | None, env: Mapping[str, str] | None, max_output_bytes: int
    ) -> None:
        if is_powershell(argv):
            raise ShellExecutionError("A persistent PowerShell session is not supported; use mode='stateless'.")
        self.argv = list(argv)
        self.workdir, self.env, self.max_output_bytes = workdir, env, max_output_bytes
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    @property
    def alive(self) -> bool:
        """Whether the shell process is running."""
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        """Start the shell if it is not running."""
        if self.alive:
            return
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.workdir,
                env=dict(self.env) if self.env is not None else None,
                **_group_kwargs(),  # pyright: ignore[reportArgumentType]
            )
        except OSError as e:
            raise ShellExecutionError(f"Could not start the shell {self.argv[0]!r}: {e}") from e

    async def close(self) -> None:
        """Stop the shell (and whatever it started)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
        await kill_process_tree(proc)

    async def run(self, command: str, *, timeout: float | None) -> ShellResult:
        """Run ``command`` in the shell, its stdin from ``/dev/null``."""
        async with self._lock:
            await self.start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
            marker = f"__agentnb_end_{uuid.uuid4().hex}__"
            script = (
                f"{{ {command}\n}} </dev/null\n__agentnb_rc=$?\n"
                f"printf '\\n%s %d\\n' '{marker}' \"$__agentnb_rc\"\nprintf '\\n%s\\n' '{marker}' >&2\n"
            )
            started = time.monotonic()
            slack = len(marker) + 32
            out, err = _Capped(self.max_output_bytes, slack), _Capped(self.max_output_bytes, slack)
            ends: dict[str, tuple[int, int | None]] = {}
            end_out = re.compile(rb"\n" + re.escape(marker.encode()) + rb" (-?\d+)\n")
            end_err = re.compile(rb"\n" + re.escape(marker.encode()) + rb"\n")

            async def pump(stream: asyncio.StreamReader, into: _Capped, end: re.Pattern[bytes], key: str) -> None:
                while chunk := await stream.read(_CHUNK):
                    into.add(chunk)
                    found = end.search(into.data, max(0, len(into.data) - len(chunk) - slack))
                    if found:
                        code = int(found.group(1)) if found.groups() else None
                        ends[key] = (found.start(), code)
                        return

            timed_out = False
            try:
                proc.stdin.write(script.encode())
                await proc.stdin.drain()
                await asyncio.wait_for(
                    asyncio.gather(pump(proc.stdout, out, end_out, "out"), pump(proc.stderr, err, end_err, "err")),
                    timeout,
                )
            except asyncio.TimeoutError:
                timed_out = True
            except (BrokenPipeError, ConnectionResetError):
                pass  # the shell ended before reading the command: reported below as its exit code
            finally:
                finished = "out" in ends and "err" in ends
                if not finished:  # timed out, the shell exited, or this call was cancelled: start afresh next time
                    await self.close()
            stdout, cut_out = out.result(ends["out"][0] if "out" in ends else None)
            stderr, cut_err = err.result(ends["err"][0] if "err" in ends else None)
            if "out" in ends and ends["out"][1] is not None:
                code = ends["out"][1]
            else:
                code = proc.returncode if proc.returncode is not None and not timed_out else -1
            return ShellResult(
                stdout=stdout,
                stderr=stderr,
                exit_code=code,
                duration_ms=int((time.monotonic() - started) * 1000),
                truncated=cut_out or cut_err,
                timed_out=timed_out,
            )


def shell_function(
    run: Callable[[str], Awaitable[ShellResult]],
    *,
    name: str,
    description: str,
    approval_mode: Literal["always_require", "never_require"],
) -> FunctionTool:
    """The model-facing tool of a shell (local or container): a refused command comes back as its reason."""

    async def run_shell(command: str) -> str:
        try:
            result = await run(command)
        except ShellCommandError as e:
            return str(e)
        return result.format_for_model()

    return FunctionTool(run_shell, name=name, description=description, approval_mode=approval_mode)


def _quote_posix(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


_PERSISTENT_DESCRIPTION = (
    "Execute a single shell command on the local machine and return its stdout, stderr, and exit code. "
    "Commands run in a persistent session so environment variables from previous calls are preserved. "
    "Approval is required by default."
)
_STATELESS_DESCRIPTION = (
    "Execute a single shell command on the local machine and return its stdout, stderr, and exit code. "
    "Each command runs in a fresh subprocess, so `cd` and environment variables do not persist between calls. "
    "Approval is required by default."
)


class LocalShellTool:
    """Run the model's shell commands on this machine, each one under approval unless told otherwise.

    Args:
        mode: ``"persistent"`` (one shell for every command: exported variables carry over) or
            ``"stateless"`` (a fresh shell per command).
        shell: The shell's command line (default: ``$AGENTNB_SHELL``, else bash or sh, PowerShell on Windows).
        workdir: The folder commands run in (default: the current one).
        confine_workdir: In persistent mode, start every command back in ``workdir`` so a ``cd`` does not
            carry over. A re-anchor, not a jail: ``cd /tmp && rm x`` still reaches ``/tmp``.
        env: Variables for the commands (added to this process's environment unless ``clean_env``).
        clean_env: Give commands only ``env``, nothing inherited.
        policy: Patterns checked before anything runs (see :class:`ShellPolicy`).
        timeout: Seconds a command may run (``None``: no limit); its process group is killed after.
        max_output_bytes: Bytes of stdout and of stderr kept (the middle of longer output is dropped).
        approval_mode: ``"always_require"`` (default) or ``"never_require"``, which needs
            ``acknowledge_unsafe=True``: without approval any command the model writes runs.
        on_command: Called with each command the policy allows (an audit hook; its errors are logged).

    Example:
        ```python
        from agentnb.harness import LocalShellTool

        async with LocalShellTool(mode="stateless", timeout=5) as shell:
            (await shell.run("echo hello")).stdout  # 'hello\\n'
        ```
    """

    def __init__(
        self,
        *,
        mode: ShellMode = "persistent",
        shell: str | Sequence[str] | None = None,
        workdir: str | os.PathLike[str] | None = None,
        confine_workdir: bool = True,
        env: Mapping[str, str] | None = None,
        clean_env: bool = False,
        policy: ShellPolicy | None = None,
        timeout: float | None = DEFAULT_SHELL_TIMEOUT,
        max_output_bytes: int = DEFAULT_SHELL_MAX_OUTPUT_BYTES,
        approval_mode: Literal["always_require", "never_require"] = "always_require",
        acknowledge_unsafe: bool = False,
        on_command: Callable[[str], None] | None = None,
    ) -> None:
        if mode not in ("persistent", "stateless"):
            raise ValueError(f"mode must be 'persistent' or 'stateless', got {mode!r}")
        if approval_mode not in ("always_require", "never_require"):
            raise ValueError(f"approval_mode must be 'always_require' or 'never_require', got {approval_mode!r}")
        if approval_mode == "never_require" and not acknowledge_unsafe:
            raise ValueError(
                "approval_mode='never_require' removes the shell tool's only security boundary: any command the "
                "model writes would run with this process's rights (ShellPolicy is a pre-filter, not a defence). "
                "Pass acknowledge_unsafe=True if that is what you want."
            )
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive or None, got {timeout!r}")
        if max_output_bytes <= 0:
            raise ValueError(f"max_output_bytes must be positive, got {max_output_bytes!r}")
        self.mode: ShellMode = mode
        self.workdir = os.fspath(workdir) if workdir is not None else None
        if self.workdir is not None and not os.path.isdir(self.workdir):
            raise ValueError(f"workdir {self.workdir!r} is not a directory")
        self.confine_workdir = confine_workdir
        self.policy = policy or ShellPolicy()
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        self.approval_mode: Literal["always_require", "never_require"] = approval_mode
        self.on_command = on_command
        if clean_env:
            self.env: dict[str, str] | None = dict(env or {})
        else:
            self.env = {**os.environ, **env} if env is not None else None
        self._interactive = resolve_shell(shell, interactive=True)
        self._stateless = resolve_shell(shell, interactive=False)
        self._session: ShellSession | None = None

    async def start(self) -> None:
        """Start the persistent shell now rather than at the first command (a no-op when stateless)."""
        if self.mode == "persistent":
            await self._persistent().start()

    async def close(self) -> None:
        """Stop the persistent shell, if any."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def __aenter__(self) -> LocalShellTool:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    def _persistent(self) -> ShellSession:
        if self._session is None:
            self._session = ShellSession(
                self._interactive, workdir=self.workdir, env=self.env, max_output_bytes=self.max_output_bytes
            )
        return self._session

    async def run(self, command: str, *, timeout: float | None = None) -> ShellResult:
        """Run ``command`` (policy and audit hook applied, approval not: that belongs to the tool call).

        Raises:
            ShellCommandError: The policy denied the command.
            ShellExecutionError: The shell could not be started.
        """
        decision = self.policy.evaluate(ShellRequest(command, self.workdir))
        if decision.decision == "deny":
            raise ShellCommandError(f"Command rejected by policy: {decision.reason}")
        if self.on_command is not None:
            try:
                self.on_command(command)
            except Exception:
                logger.exception("The shell tool's on_command hook raised")
        limit = self.timeout if timeout is None else timeout
        if self.mode == "stateless":
            return await run_stateless(
                self._stateless,
                command,
                workdir=self.workdir,
                env=self.env,
                timeout=limit,
                max_output_bytes=self.max_output_bytes,
            )
        if self.confine_workdir and self.workdir is not None:
            command = f"cd -- {_quote_posix(self.workdir)}\n{command}"
        return await self._persistent().run(command, timeout=limit)

    def as_function(self, *, name: str = "run_shell", description: str | None = None) -> FunctionTool:
        """The tool the model calls: one ``command`` argument, the result as text, approval as configured.

        A name an auto-approval rule matches for another tool would auto-approve this one too: keep it unique.
        """
        text = description or (_PERSISTENT_DESCRIPTION if self.mode == "persistent" else _STATELESS_DESCRIPTION)
        return shell_function(self.run, name=name, description=text, approval_mode=self.approval_mode)

    def __repr__(self) -> str:
        return f"LocalShellTool(mode={self.mode!r}, workdir={self.workdir!r}, approval_mode={self.approval_mode!r})"
