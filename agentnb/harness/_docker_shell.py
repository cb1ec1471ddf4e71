"""A shell tool whose commands run in a container (Docker, or a compatible CLI such as Podman), not on this machine.

:class:`DockerShellTool` has :class:`~agentnb.harness.LocalShellTool`'s surface (``run``, ``start``/``close``,
``async with``, :meth:`~DockerShellTool.as_function` under approval) and reuses its pieces: the same
:class:`~agentnb.harness.ShellPolicy`, :class:`~agentnb.harness.ShellResult`, output cap and, in persistent mode,
the same marker-delimited shell session, talking to ``docker exec -i <container> bash`` instead of a local bash.
``mode="stateless"`` runs each command in a fresh ``docker run --rm``.

Every container starts locked down: no network, user ``nobody``, a read-only root with a small ``/tmp`` tmpfs,
memory and process limits, every capability dropped and no privilege escalation. A host folder can be mounted
(read-only unless asked). The container is meant to be the boundary, so ``approval_mode="never_require"`` is
accepted as the reference accepts it, but only while those defaults hold: once a network, a writable mount,
a writable root, the root user or ``unsafe_extra_run_args`` loosen them, it needs ``acknowledge_unsafe=True`` too.
A time-out ends every process the commands started in the container (the next command gets a fresh shell).

A persistent tool owns one container and the shell inside it: one conversation, one tool; close it (or use
``async with``) to remove the container.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from .._tools import FunctionTool
from ..exceptions import DockerNotAvailableError, ShellCommandError
from ._shell import (
    DEFAULT_SHELL_MAX_OUTPUT_BYTES,
    DEFAULT_SHELL_TIMEOUT,
    ShellMode,
    ShellPolicy,
    ShellRequest,
    ShellResult,
    ShellSession,
    run_stateless,
    shell_function,
)

__all__ = ["DOCKER_DEFAULT_IMAGE", "DockerShellTool", "is_docker_available"]

logger = logging.getLogger("agentnb.harness")

#: The image commands run in unless told otherwise: small, and ships ``bash`` and ``sleep``.
DOCKER_DEFAULT_IMAGE = "docker.io/library/debian:bookworm-slim"
_DEFAULT_USER = "65534:65534"  # nobody:nogroup
_DEFAULT_WORKDIR = "/workspace"
_TMPFS = "/tmp:rw,nosuid,nodev,size=64m"
_CONTROL_TIMEOUT = 10.0  # seconds for one `version` / `kill` / `rm` of the runtime's CLI
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

# `docker run` options that would undo an isolation default (or the tool's own bookkeeping) if spliced in
# through ``extra_run_args``; each has a dedicated argument, or goes through ``unsafe_extra_run_args``.
_REFUSED_OPTIONS = frozenset(
    {
        "--add-host",
        "--cap-add",
        "--cgroup-parent",
        "--cgroupns",
        "--detach",
        "--device",
        "--device-cgroup-rule",
        "--gpus",
        "--ipc",
        "--memory",
        "--memory-swap",
        "--mount",
        "--name",
        "--net",
        "--network",
        "--pid",
        "--pids-limit",
        "--privileged",
        "--read-only",
        "--runtime",
        "--security-opt",
        "--tmpfs",
        "--user",
        "--userns",
        "--uts",
        "--volume",
        "--volumes-from",
    }
)
_REFUSED_SHORT = frozenset("dmuv")  # -d (detach), -m (memory), -u (user), -v (volume)
_SHORT_WITH_VALUE = frozenset("acehlpw")  # the rest of the token is the value: `-eNAME=x`


def refused_run_options(args: Sequence[str]) -> list[str]:
    """The tokens of ``args`` that would loosen the container's isolation (``--privileged``, ``-v``, ...)."""
    refused: list[str] = []
    for token in args:
        if token.startswith("--"):
            if token.split("=", 1)[0] in _REFUSED_OPTIONS:
                refused.append(token)
        elif token.startswith("-") and len(token) > 1:
            for letter in token[1:]:  # a cluster of short options, e.g. `-itv /:/host`
                if letter in _REFUSED_SHORT:
                    refused.append(token)
                    break
                if letter in _SHORT_WITH_VALUE or not letter.isalpha():
                    break
    return refused


def is_docker_available(binary: str = "docker") -> bool:
    """Whether ``binary`` (``"docker"``, ``"podman"``, ...) is on PATH and its daemon answers."""
    if shutil.which(binary) is None:
        return False
    try:
        done = subprocess.run(
            [binary, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=_CONTROL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


_PERSISTENT_DESCRIPTION = (
    "Execute a single shell command inside an isolated container and return its stdout, stderr, and exit code. "
    "Commands run in a persistent session so `cd` and environment variables from previous calls are preserved "
    "within the container."
)
_STATELESS_DESCRIPTION = (
    "Execute a single shell command inside an isolated container and return its stdout, stderr, and exit code. "
    "Each command runs in a fresh container, so `cd` and environment variables do not persist between calls."
)


class DockerShellTool:
    """Run the model's shell commands inside a locked-down container, each one under approval unless told otherwise.

    Args:
        image: The image to run; it needs ``shell`` (and ``sleep`` in persistent mode).
        container_name: The persistent container's name (default: a fresh ``agentnb-shell-...``).
        mode: ``"persistent"`` (one container and one shell: ``cd`` and ``export`` carry over) or
            ``"stateless"`` (a fresh ``docker run --rm`` per command).
        host_workdir: A folder of this machine mounted at ``workdir``, read-only unless ``mount_readonly=False``.
        workdir: The folder commands start in, inside the container.
        mount_readonly: Mount ``host_workdir`` read-only.
        network: The container's network (``"none"``: no network at all).
        memory: The memory limit (``"512m"``, ``"2g"``).
        pids_limit: The most processes the container may hold.
        user: ``UID:GID`` commands run as (default ``nobody``).
        read_only_root: Mount the image's root filesystem read-only (``/tmp`` is a small tmpfs either way).
        extra_run_args: More ``docker run`` options (``--label``, ``--cpus``, ``--ulimit``...); options that
            would loosen the isolation (``--privileged``, ``--network``, ``-v``, ``--cap-add``, ``--user``...)
            are refused with a ``ValueError``: use the dedicated arguments.
        unsafe_extra_run_args: ``docker run`` options passed as given, unchecked: trusted configuration only,
            never text from users or the model; they can remove the isolation entirely.
        env: Variables set in the container for every command.
        policy: Patterns checked before anything runs (see :class:`~agentnb.harness.ShellPolicy`).
        timeout: Seconds a command may run (``None``: no limit); then its processes are killed.
        max_output_bytes: Bytes of stdout and of stderr kept (the middle of longer output is dropped).
        approval_mode: ``"always_require"`` (default) or ``"never_require"`` (see the module's notes).
        acknowledge_unsafe: Allow ``"never_require"`` with loosened isolation.
        on_command: Called with each command the policy allows (an audit hook; its errors are logged).
        binary: The runtime's CLI (``"podman"`` works as is).
        docker_binary: The reference's name for ``binary``.
        shell: The shell inside the image (``"sh"`` for images without bash).

    Example:
        ```python
        from agentnb.harness import DockerShellTool

        async with DockerShellTool(mode="stateless", timeout=20) as shell:
            (await shell.run("echo hello")).stdout  # 'hello\\n'
        ```
    """

    def __init__(
        self,
        *,
        image: str = DOCKER_DEFAULT_IMAGE,
        container_name: str | None = None,
        mode: ShellMode = "persistent",
        host_workdir: str | os.PathLike[str] | None = None,
        workdir: str = _DEFAULT_WORKDIR,
        mount_readonly: bool = True,
        network: str = "none",
        memory: str = "512m",
        pids_limit: int = 256,
        user: str = _DEFAULT_USER,
        read_only_root: bool = True,
        extra_run_args: Sequence[str] | None = None,
        unsafe_extra_run_args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        policy: ShellPolicy | None = None,
        timeout: float | None = DEFAULT_SHELL_TIMEOUT,
        max_output_bytes: int = DEFAULT_SHELL_MAX_OUTPUT_BYTES,
        approval_mode: Literal["always_require", "never_require"] = "always_require",
        acknowledge_unsafe: bool = False,
        on_command: Callable[[str], None] | None = None,
        binary: str = "docker",
        docker_binary: str | None = None,
        shell: str = "bash",
    ) -> None:
        if mode not in ("persistent", "stateless"):
            raise ValueError(f"mode must be 'persistent' or 'stateless', got {mode!r}")
        if approval_mode not in ("always_require", "never_require"):
            raise ValueError(f"approval_mode must be 'always_require' or 'never_require', got {approval_mode!r}")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive or None, got {timeout!r}")
        if max_output_bytes <= 0:
            raise ValueError(f"max_output_bytes must be positive, got {max_output_bytes!r}")
        if pids_limit <= 0:
            raise ValueError(f"pids_limit must be positive, got {pids_limit!r}")
        if docker_binary is not None and binary not in ("docker", docker_binary):
            raise ValueError(f"binary={binary!r} and docker_binary={docker_binary!r} disagree; pass one")
        if not workdir.startswith("/") or ":" in workdir:
            raise ValueError(f"workdir must be an absolute path inside the container without ':', got {workdir!r}")
        for what, value in (("image", image), ("shell", shell), ("user", user), ("memory", memory)):
            if not value or value.startswith("-"):  # it would be read as an option of `docker run`
                raise ValueError(f"{what} must not be empty or start with '-', got {value!r}")
        if container_name is not None and not _NAME.match(container_name):
            raise ValueError(f"container_name {container_name!r} is not a valid container name")
        extra = _tokens("extra_run_args", extra_run_args)
        if refused := refused_run_options(extra):
            raise ValueError(
                f"extra_run_args would loosen the container's isolation: {refused}. Use the dedicated arguments "
                "(network, host_workdir, mount_readonly, read_only_root, user, memory, pids_limit), or "
                "unsafe_extra_run_args for trusted configuration that must relax the sandbox."
            )
        unsafe = _tokens("unsafe_extra_run_args", unsafe_extra_run_args)
        self.host_workdir: str | None = None
        if host_workdir is not None:
            self.host_workdir = os.path.abspath(os.fspath(host_workdir))
            if not os.path.isdir(self.host_workdir):
                raise ValueError(f"host_workdir {self.host_workdir!r} is not a directory")
            if ":" in self.host_workdir:
                raise ValueError(f"host_workdir {self.host_workdir!r} contains ':', which a volume mount cannot take")
        self.env = dict(env or {})
        for key in self.env:
            if not key or "=" in key:
                raise ValueError(f"env names must be non-empty and without '=', got {key!r}")
        loosened = [
            what
            for what, loose in (
                (f"network={network!r}", network != "none"),
                (f"user={user!r}", user.split(":", 1)[0] in ("0", "root")),
                ("a writable host_workdir", self.host_workdir is not None and not mount_readonly),
                ("read_only_root=False", not read_only_root),
                ("unsafe_extra_run_args", bool(unsafe)),
            )
            if loose
        ]
        if approval_mode == "never_require" and loosened and not acknowledge_unsafe:
            raise ValueError(
                "approval_mode='never_require' trusts the container as the only boundary, but its isolation is "
                f"loosened ({', '.join(loosened)}): any command the model writes would run with that reach. "
                "Pass acknowledge_unsafe=True if that is what you want."
            )
        self.image = image
        self.mode: ShellMode = mode
        self.container_name = container_name or _fresh_name()
        self.workdir = workdir
        self.mount_readonly = mount_readonly
        self.network = network
        self.memory = memory
        self.pids_limit = pids_limit
        self.user = user
        self.read_only_root = read_only_root
        self.extra_run_args = extra
        self.unsafe_extra_run_args = unsafe
        self.policy = policy or ShellPolicy()
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        self.approval_mode: Literal["always_require", "never_require"] = approval_mode
        self.on_command = on_command
        self.binary = docker_binary or binary
        self.shell = shell
        self._session: ShellSession | None = None
        self._container_running = False
        self._runtime_checked = False
        self._lifecycle: asyncio.Lock | None = None
        self._commands: asyncio.Lock | None = None

    # --- command lines (no side effects) -------------------------------------------------------------------

    def run_options(self, name: str) -> list[str]:
        """The ``docker run`` options every container gets: the isolation defaults, mount, env, extra options."""
        argv = [
            "--rm",
            "--name",
            name,
            "--user",
            self.user,
            "--network",
            self.network,
            "--memory",
            self.memory,
            "--pids-limit",
            str(self.pids_limit),
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--tmpfs",
            _TMPFS,
            "--workdir",
            self.workdir,
        ]
        if self.read_only_root:
            argv.append("--read-only")
        if self.host_workdir is not None:
            argv += ["-v", f"{self.host_workdir}:{self.workdir}:{'ro' if self.mount_readonly else 'rw'}"]
        for key, value in self.env.items():
            argv += ["-e", f"{key}={value}"]
        return [*argv, *self.extra_run_args, *self.unsafe_extra_run_args]

    def container_argv(self) -> list[str]:
        """The command line that starts the persistent container, which sleeps until :meth:`close` removes it."""
        return [self.binary, "run", "-d", *self.run_options(self.container_name), self.image, "sleep", "infinity"]

    def exec_argv(self) -> list[str]:
        """The command line of the persistent shell inside the container."""
        argv = [self.binary, "exec", "-i", self.container_name, self.shell]
        return [*argv, "--noprofile", "--norc"] if os.path.basename(self.shell) == "bash" else argv

    def stateless_argv(self, name: str) -> list[str]:
        """The command line of one stateless container named ``name`` (the command is appended after ``-c``)."""
        return [self.binary, "run", *self.run_options(name), self.image, self.shell, "-c"]

    # --- lifecycle ------------------------------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        # Made on first use, inside the running loop (a tool may be built before any loop exists).
        if self._lifecycle is None:
            self._lifecycle = asyncio.Lock()
        return self._lifecycle

    async def start(self) -> None:
        """Check the runtime answers and, in persistent mode, start the container and its shell (once).

        Raises:
            DockerNotAvailableError: The CLI is missing, its daemon does not answer, or the container would not
                start (an image that cannot be pulled, say).
        """
        async with self._lock():
            if not self._runtime_checked:
                await self._check_runtime()
                self._runtime_checked = True
            if self.mode == "stateless":
                return
            if not self._container_running:
                code, out, err = await self._cli(*self.container_argv()[1:], timeout=None)
                if code != 0:
                    raise DockerNotAvailableError(
                        f"Could not start a container from {self.image!r} with {self.binary!r} (exit code {code}): "
                        f"{err.strip() or out.strip()}"
                    )
                self._container_running = True
                logger.info("Started container %s (%s)", self.container_name, out.strip()[:12])
            if self._session is None:
                self._session = ShellSession(
                    self.exec_argv(), workdir=None, env=None, max_output_bytes=self.max_output_bytes
                )
            await self._session.start()

    async def close(self) -> None:
        """Stop the shell and remove the persistent container; safe to call twice."""
        async with self._lock():
            session, self._session = self._session, None
            if session is not None:
                await session.close()
            if self._container_running:
                self._container_running = False
                await self._remove(self.container_name)

    async def __aenter__(self) -> DockerShellTool:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    # --- running --------------------------------------------------------------------------------------------

    async def run(self, command: str, *, timeout: float | None = None) -> ShellResult:
        """Run ``command`` in the container (policy and audit hook applied, approval not: that is the tool call's).

        Raises:
            ShellCommandError: The policy denied the command.
            DockerNotAvailableError: The runtime is missing or does not answer, or the container would not start.
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
            await self.start()
            return await self._run_stateless(command, limit)
        if self._commands is None:
            self._commands = asyncio.Lock()
        async with self._commands:  # a time-out's clean-up must not kill the next command's shell
            if self._session is not None and not self._session.alive:
                await self._forget_dead_container()  # the shell ended: by `exit`, a time-out, or with its container
            await self.start()
            session = self._session
            assert session is not None
            finished = False
            try:
                result = await session.run(command, timeout=limit)
                finished = not result.timed_out
                if not session.alive and await self._forget_dead_container():
                    note = "[the container stopped (killed, or out of memory); the next command starts a new one]"
                    result = dataclasses.replace(result, stderr=f"{result.stderr}{note}\n")
                return result
            finally:
                if not finished:  # timed out or cancelled: what the command started is still running in there
                    await self._kill_container_processes()

    async def _run_stateless(self, command: str, limit: float | None) -> ShellResult:
        """Run ``command`` in a fresh container; past ``limit``, kill the container (the CLI then returns with
        what the command printed so far)."""
        name = _fresh_name()
        running = asyncio.ensure_future(
            run_stateless(
                self.stateless_argv(name),
                command,
                workdir=None,
                env=None,
                timeout=None,
                max_output_bytes=self.max_output_bytes,
            )
        )
        try:
            done, _ = await asyncio.wait({running}, timeout=limit)
            if done:
                return running.result()
            await self._remove(name)
            try:
                result = await asyncio.wait_for(running, _CONTROL_TIMEOUT)
            except asyncio.TimeoutError:  # the CLI outlived its container: wait_for killed it, with no output kept
                return ShellResult("", "", -1, int((limit or 0) * 1000), timed_out=True)
            return dataclasses.replace(result, timed_out=True)
        finally:
            if not running.done():  # cancelled: the CLI's group is killed, and the container with it
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                await self._remove(name)

    # --- talking to the runtime -----------------------------------------------------------------------------

    async def _cli(self, *args: str, timeout: float | None = _CONTROL_TIMEOUT) -> tuple[int | None, str, str]:
        """Run the runtime's CLI with ``args``: its exit code (``None`` when it did not finish), stdout, stderr."""
        try:
            proc = await asyncio.create_subprocess_exec(
                self.binary,
                *args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as e:
            raise DockerNotAvailableError(f"Could not run {self.binary!r}: {e}") from e
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            return None, "", f"{self.binary} {args[0]} did not answer within {timeout} s"
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    async def _check_runtime(self) -> None:
        if shutil.which(self.binary) is None:
            raise DockerNotAvailableError(
                f"The container runtime {self.binary!r} is not on PATH: install Docker, or Podman and pass "
                "binary='podman'."
            )
        code, out, err = await self._cli("version", "--format", "{{.Server.Version}}")
        if code != 0 or not out.strip():
            reason = err.strip() or "it reports no server version"
            raise DockerNotAvailableError(f"The container runtime {self.binary!r} does not answer: {reason}")

    async def _remove(self, name: str) -> None:
        """Kill container ``name`` and wait until it is removed.

        A kill first: ``rm -f`` waits out a stop time-out on Podman. ``--rm`` makes the runtime remove it then,
        in the background on Docker, so the ``rm -f`` may find it gone or going; either way this waits until
        the runtime no longer knows the name. Never raises: it runs in clean-ups, where an error would hide the
        one being handled.
        """
        try:
            await self._cli("kill", "--signal", "KILL", name)
            await self._cli("rm", "-f", name)
            deadline = time.monotonic() + _CONTROL_TIMEOUT
            while True:
                code, _, err = await self._cli("inspect", "--format", "{{.State.Status}}", name)
                if code not in (0, None) or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
        except DockerNotAvailableError as e:
            code, err = None, str(e)
        if code in (0, None):
            logger.error("Could not remove container %s; it may still be running: %s", name, err.strip())

    async def _forget_dead_container(self) -> bool:
        """Whether the persistent container stopped (killed, out of memory); if so it is removed, so that the next
        start makes a new one."""
        if not self._container_running:
            return False
        code, out, _ = await self._cli("inspect", "--format", "{{.State.Running}}", self.container_name)
        if code == 0 and out.strip() == "true":
            return False
        logger.warning("Container %s is no longer running; the next command starts a new one", self.container_name)
        async with self._lock():
            self._container_running = False
            await self._remove(self.container_name)
        return True

    async def _kill_container_processes(self) -> None:
        """End every process in the persistent container but its init, as the command's user may signal them."""
        if not self._container_running:
            return
        try:
            code, _, err = await self._cli("exec", self.container_name, self.shell, "-c", "kill -9 -1")
        except DockerNotAvailableError as e:
            code, err = None, str(e)
        if code not in (0, 1):  # 1: nothing left to kill, or the shell reports the processes it could not reach
            logger.warning("Could not end the processes left in container %s: %s", self.container_name, err.strip())

    # --- the tool -------------------------------------------------------------------------------------------

    def as_function(self, *, name: str = "run_shell", description: str | None = None) -> FunctionTool:
        """The tool the model calls: one ``command`` argument, the result as text, approval as configured.

        A name an auto-approval rule matches for another tool would auto-approve this one too: keep it unique.
        """
        text = description or (_PERSISTENT_DESCRIPTION if self.mode == "persistent" else _STATELESS_DESCRIPTION)
        return shell_function(self.run, name=name, description=text, approval_mode=self.approval_mode)

    def __repr__(self) -> str:
        return (
            f"DockerShellTool(image={self.image!r}, mode={self.mode!r}, binary={self.binary!r}, "
            f"approval_mode={self.approval_mode!r})"
        )


def _fresh_name() -> str:
    return f"agentnb-shell-{secrets.token_hex(6)}"


def _tokens(what: str, args: Sequence[str] | None) -> tuple[str, ...]:
    tokens = tuple(args or ())
    for index, token in enumerate(tokens):
        if not isinstance(token, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            raise ValueError(f"{what} holds a non-string token at index {index}: {token!r}")
    return tokens
