"""The container shell tool: its command lines, refusals and approval without a runtime; real containers with one.

The tests marked ``container`` run commands in a real runtime: Docker when its daemon answers, else Podman with
storage and configuration of their own in a temporary folder (nothing outside it is touched). Their image is
built here from this machine's own ``bash`` and coreutils (``docker import``), so nothing is pulled. When no
runtime answers they are skipped, unless ``AGENTNB_CONTAINER_TESTS=required`` (set by ``.ci/run``) makes that
a failure.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb import Agent
from agentnb.exceptions import DockerNotAvailableError, ShellCommandError, ShellExecutionError
from agentnb.harness import (
    DOCKER_DEFAULT_IMAGE,
    DockerShellTool,
    ExperimentalWarning,
    ShellEnvironmentProvider,
    ShellEnvironmentProviderOptions,
    ShellExecutor,
    ShellPolicy,
    create_harness_agent,
    is_docker_available,
)
from agentnb.local import ScriptedChatClient

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the tests drive POSIX CLIs")

call = ScriptedChatClient.call
HARDENED = [
    "--rm",
    "--name",
    "box",
    "--user",
    "65534:65534",
    "--network",
    "none",
    "--memory",
    "512m",
    "--pids-limit",
    "256",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--tmpfs",
    "/tmp:rw,nosuid,nodev,size=64m",
    "--workdir",
    "/workspace",
    "--read-only",
]


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def _recording_cli(tmp_path: Path) -> tuple[str, Path]:
    """A stand-in CLI that answers ``version`` and ``run`` and logs every call: it shows what was invoked."""
    log = tmp_path / "calls.log"
    body = f'printf "%s\\n" "$*" >> {log}\ncase "$1" in version) echo 27.1.0 ;; run) echo from-the-box ;; esac\n'
    return _script(tmp_path / "fake-docker", body), log


def _unreachable_cli(tmp_path: Path) -> str:
    """A CLI whose daemon is down, answering as Docker's does."""
    return _script(
        tmp_path / "docker-no-daemon",
        'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. '
        'Is the docker daemon running?" >&2\nexit 1\n',
    )


# --- without a runtime ------------------------------------------------------------------------------------


def test_availability_is_false_for_a_missing_cli_and_for_one_whose_daemon_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert is_docker_available("agentnb-no-such-runtime") is False
    assert is_docker_available(_unreachable_cli(tmp_path)) is False
    assert is_docker_available(_recording_cli(tmp_path)[0]) is True  # a server version: it answers
    if shutil.which("docker") is not None:  # the real CLI pointed at a socket nobody listens on
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'nobody.sock'}")
        assert is_docker_available("docker") is False


@pytest.mark.parametrize("mode", ["persistent", "stateless"])
async def test_a_runtime_that_is_missing_or_down_is_a_typed_error_on_start_and_run(tmp_path: Path, mode: str) -> None:
    missing = DockerShellTool(mode=mode, binary="agentnb-no-such-runtime")  # type: ignore[arg-type]
    with pytest.raises(DockerNotAvailableError, match="'agentnb-no-such-runtime' is not on PATH") as info:
        await missing.start()
    assert isinstance(info.value, ShellExecutionError) and isinstance(info.value, RuntimeError)
    with pytest.raises(DockerNotAvailableError, match="not on PATH"):
        await missing.run("echo hi")
    down = DockerShellTool(mode=mode, binary=_unreachable_cli(tmp_path))  # type: ignore[arg-type]
    with pytest.raises(DockerNotAvailableError, match="does not answer: Cannot connect to the Docker daemon"):
        async with down:
            pass
    with pytest.raises(DockerNotAvailableError, match="Cannot connect"):
        await down.run("echo hi")


async def test_a_container_that_will_not_start_is_a_typed_error_naming_the_image(tmp_path: Path) -> None:
    body = (
        'case "$1" in version) echo 27.1.0 ;; *) echo "Unable to find image \'nope:1\' locally" >&2; exit 125 ;; esac\n'
    )
    shell = DockerShellTool(image="nope:1", binary=_script(tmp_path / "docker", body))
    with pytest.raises(DockerNotAvailableError, match=r"from 'nope:1' .*exit code 125.*Unable to find image"):
        await shell.start()
    await shell.close()  # nothing started: nothing to remove, no error


def test_every_container_gets_the_hardened_flags_exactly(tmp_path: Path) -> None:
    shell = DockerShellTool(container_name="box", image="img:1")
    assert shell.container_argv() == ["docker", "run", "-d", *HARDENED, "img:1", "sleep", "infinity"]
    assert shell.stateless_argv("box") == ["docker", "run", *HARDENED, "img:1", "bash", "-c"]
    assert shell.exec_argv() == ["docker", "exec", "-i", "box", "bash", "--noprofile", "--norc"]
    assert DockerShellTool().image == DOCKER_DEFAULT_IMAGE
    fresh = {DockerShellTool().container_name for _ in range(3)}
    assert len(fresh) == 3 and all(name.startswith("agentnb-shell-") for name in fresh)

    podman = DockerShellTool(container_name="box", binary="podman", shell="sh", mode="stateless")
    assert podman.exec_argv() == ["podman", "exec", "-i", "box", "sh"]
    assert podman.stateless_argv("box")[-3:] == [DOCKER_DEFAULT_IMAGE, "sh", "-c"]
    assert DockerShellTool(docker_binary="podman").binary == "podman"  # the reference's spelling
    with pytest.raises(ValueError, match="disagree"):
        DockerShellTool(binary="nerdctl", docker_binary="podman")


def test_mounts_env_and_extra_options_land_before_the_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path)
    shell = DockerShellTool(
        container_name="box",
        image="img:1",
        host_workdir="repo",  # relative: made absolute, or `-v` would name a volume instead of the folder
        workdir="/src",
        env={"A": "1", "B": "two words"},
        extra_run_args=["--label", "team=data", "--cpus", "1", "--ulimit", "nofile=1024:1024"],
        read_only_root=False,
    )
    argv = shell.container_argv()
    assert argv[argv.index("-v") + 1] == f"{tmp_path / 'repo'}:/src:ro"
    assert argv[argv.index("--workdir") + 1] == "/src" and "--read-only" not in argv
    tail = argv[argv.index("-e") :]
    assert tail == [
        "-e",
        "A=1",
        "-e",
        "B=two words",
        "--label",
        "team=data",
        "--cpus",
        "1",
        "--ulimit",
        "nofile=1024:1024",
        "img:1",
        "sleep",
        "infinity",
    ]
    writable = DockerShellTool(container_name="box", host_workdir=tmp_path / "repo", mount_readonly=False)
    argv = writable.stateless_argv("one")
    assert argv[argv.index("-v") + 1] == f"{tmp_path / 'repo'}:/workspace:rw"
    assert argv[argv.index("--name") + 1] == "one"
    trusted = DockerShellTool(container_name="box", unsafe_extra_run_args=["--privileged"])
    assert trusted.container_argv()[-4:] == ["--privileged", DOCKER_DEFAULT_IMAGE, "sleep", "infinity"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--privileged"],
        ["--network=host"],
        ["--network", "host"],
        ["--net=host"],
        ["-v", "/:/host:rw"],
        ["-itv", "/:/host"],
        ["-u0"],
        ["--volume=/etc:/etc"],
        ["--mount", "type=bind,src=/,dst=/host"],
        ["--volumes-from", "other"],
        ["--cap-add=ALL"],
        ["--security-opt", "seccomp=unconfined"],
        ["--device", "/dev/kvm"],
        ["--pid=host"],
        ["--ipc=host"],
        ["--uts=host"],
        ["--userns=host"],
        ["--user=0:0"],
        ["--read-only=false"],
        ["--tmpfs", "/var:rw"],
        ["--memory", "64g"],
        ["-m", "64g"],
        ["--pids-limit=-1"],
        ["--gpus", "all"],
        ["--add-host", "evil:1.2.3.4"],
        ["--runtime", "runc"],
        ["--name", "other"],
        ["-d"],
        ["--label", "x=1", "--privileged"],
    ],
)
def test_extra_options_that_would_loosen_the_isolation_are_refused(extra: list[str]) -> None:
    with pytest.raises(ValueError, match="would loosen the container's isolation") as info:
        DockerShellTool(extra_run_args=extra)
    assert extra[-1] in str(info.value) or extra[0] in str(info.value)


def test_harmless_extra_options_pass_and_tokens_must_be_strings() -> None:
    for extra in (["--label", "team=af"], ["-e", "X=-v"], ["-eUSER=v"], ["--cpus=1.5"], ["--init"], ["-it"]):
        assert DockerShellTool(extra_run_args=extra).extra_run_args == tuple(extra)
    with pytest.raises(ValueError, match="non-string token at index 1"):
        DockerShellTool(unsafe_extra_run_args=["--label", 3])  # type: ignore[list-item]


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    for bad in (
        {"mode": "forever"},
        {"approval_mode": "sometimes"},
        {"timeout": 0},
        {"max_output_bytes": 0},
        {"pids_limit": 0},
        {"workdir": "relative"},
        {"workdir": "/a:b"},
        {"container_name": "bad name"},
        {"host_workdir": tmp_path / "missing"},
        {"env": {"A=B": "1"}},
        {"image": "--privileged"},
        {"shell": ""},
    ):
        with pytest.raises(ValueError):
            DockerShellTool(**bad)  # type: ignore[arg-type]


def test_never_require_trusts_the_container_only_while_its_isolation_holds(tmp_path: Path) -> None:
    assert DockerShellTool().as_function().approval_mode == "always_require"
    trusted = DockerShellTool(approval_mode="never_require", host_workdir=tmp_path)  # read-only mount: fine
    assert trusted.as_function(name="box_shell").approval_mode == "never_require"
    for loosened in (
        {"network": "bridge"},
        {"user": "0:0"},
        {"host_workdir": tmp_path, "mount_readonly": False},
        {"read_only_root": False},
        {"unsafe_extra_run_args": ["--cap-add=NET_ADMIN"]},
    ):
        with pytest.raises(ValueError, match="acknowledge_unsafe=True"):
            DockerShellTool(approval_mode="never_require", **loosened)  # type: ignore[arg-type]
        DockerShellTool(approval_mode="never_require", acknowledge_unsafe=True, **loosened)  # type: ignore[arg-type]


async def test_nothing_reaches_the_runtime_before_approval_nor_after_a_denial(tmp_path: Path) -> None:
    cli, log = _recording_cli(tmp_path)
    shell = DockerShellTool(mode="stateless", binary=cli, container_name="box", image="img:1")
    assert isinstance(shell, ShellExecutor)
    client = ScriptedChatClient(
        [call("run_shell", command="echo hi"), "Ran it.", call("run_shell", command="echo again"), "Not run."]
    )
    agent = Agent(client, tools=[shell.as_function()])
    session = agent.create_session()
    asked = await agent.run("Say hi in the box", session=session)
    (request,) = asked.user_input_requests
    assert request.function_call is not None and request.function_call.name == "run_shell"
    assert not log.exists()  # not even `docker version`
    done = await agent.run([request.to_function_approval_response(True)], session=session)
    assert done.text == "Ran it."
    sent = client.calls[1][-1].contents[0]
    assert sent.type == "function_result" and sent.result == "from-the-box\n\nexit_code: 0"
    version, run = log.read_text().splitlines()
    assert version == "version --format {{.Server.Version}}"
    assert run.startswith("run --rm --name agentnb-shell-") and run.endswith("img:1 bash -c echo hi")
    asked = await agent.run("Again", session=session)
    (request,) = asked.user_input_requests
    await agent.run([request.to_function_approval_response(False)], session=session)
    assert len(log.read_text().splitlines()) == 2


async def test_the_policy_refuses_before_the_runtime_is_touched(tmp_path: Path) -> None:
    cli, log = _recording_cli(tmp_path)
    seen: list[str] = []
    shell = DockerShellTool(binary=cli, policy=ShellPolicy(denylist=[r"\bcurl\b"]), on_command=seen.append)
    with pytest.raises(ShellCommandError, match="denylist pattern"):
        await shell.run("curl example.org")
    tool = shell.as_function()
    assert await tool.invoke(arguments={"command": "CURL x"}, skip_parsing=True) == (
        "Command rejected by policy: matches denylist pattern: \\bcurl\\b"
    )
    assert not log.exists() and seen == []


def test_create_harness_agent_takes_the_container_shell_under_approval() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)  # the shell tool is a pre-release feature
        agent = create_harness_agent(ScriptedChatClient(["ok"]), shell_executor=DockerShellTool(mode="stateless"))
    (tool,) = [t for t in agent.tools if t.name == "run_shell"]
    assert tool.approval_mode == "always_require"


# --- with a real runtime ----------------------------------------------------------------------------------

IMAGE = "localhost/agentnb-shell-test:latest"
_TOOLS = ("bash", "sh", "sleep", "cat", "ls", "id", "touch", "mkdir", "rm", "head", "tr", "true")


def _rootfs_tar() -> bytes:
    """A tiny image: this machine's bash and a few coreutils with the libraries they load, ``/tmp`` 1777."""
    files: dict[str, str] = {}
    for tool in _TOOLS:
        found = shutil.which(tool, path="/usr/bin:/bin")
        assert found is not None, f"{tool} is not installed"
        files[found] = found
        listed = subprocess.run(["ldd", found], capture_output=True, text=True, check=False).stdout
        for word in listed.split():
            if word.startswith("/") and os.path.exists(word):
                files[word] = word
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def folder(name: str, mode: int) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)

        def text(name: str, content: str) -> None:
            data = content.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))

        parents = {str(parent) for inside in files for parent in Path(inside.lstrip("/")).parents}
        for name in sorted({"proc", "sys", "dev", "etc", "workspace", *parents} - {"."}):
            folder(name, 0o755)  # every folder explicitly: Docker makes implied ones 0600, which nobody cannot enter
        folder("tmp", 0o1777)
        text("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n")
        text("etc/group", "root:x:0:\nnogroup:x:65534:\n")
        for inside, real in sorted(files.items()):
            data = Path(real).read_bytes()  # follows links: each path gets the real file
            info = tarfile.TarInfo(inside.lstrip("/"))
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _podman_environment(root: Path) -> dict[str, str]:
    """Podman configured inside ``root``: its own storage (vfs), no events, explicit limits; runc when there."""
    (root / "storage").mkdir()
    (root / "run").mkdir()
    (root / "tmp").mkdir()
    storage = root / "storage.conf"
    storage.write_text(f'[storage]\ndriver = "vfs"\ngraphroot = "{root / "storage"}"\nrunroot = "{root / "run"}"\n')
    engine = [f'tmp_dir = "{root / "tmp"}"', 'events_logger = "none"', 'cgroup_manager = "cgroupfs"']
    if shutil.which("runc") is not None:  # crun refuses hybrid cgroup hosts; runc takes both kinds
        engine.append('runtime = "runc"')
    # Limits no higher than a sandboxed host allows (raising them needs CAP_SYS_RESOURCE).
    conf = root / "containers.conf"
    conf.write_text(
        '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\n' + "\n".join(engine) + "\n"
    )
    return {"CONTAINERS_STORAGE_CONF": str(storage), "CONTAINERS_CONF": str(conf)}


@pytest.fixture(scope="session")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The CLI of a runtime that answers, with the test image imported; skips (or fails when required) if none."""
    saved = dict(os.environ)
    binary = None
    if is_docker_available("docker"):
        binary = "docker"
    elif shutil.which("podman") is not None:
        os.environ.update(_podman_environment(tmp_path_factory.mktemp("podman")))
        binary = "podman" if is_docker_available("podman") else None
    if binary is None:
        _no_runtime(saved, "no container runtime answers (install podman, or start a Docker daemon)")
    assert binary is not None
    started = time.monotonic()
    built = subprocess.run(
        [binary, "import", "--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin", "-", IMAGE],
        input=_rootfs_tar(),
        capture_output=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr.decode()
    try:
        probe = subprocess.run([binary, "run", "--rm", IMAGE, "true"], capture_output=True, check=False)
        if probe.returncode != 0:  # e.g. rootless Podman without delegated cgroups
            _no_runtime(saved, f"{binary} answers but cannot run a container here: {probe.stderr.decode()}")
        print(f"container runtime: {binary}, image ready in {time.monotonic() - started:.1f} s")
        yield binary
    finally:
        if binary == "podman":
            subprocess.run([binary, "rm", "-af", "-t", "0"], capture_output=True, check=False)
        subprocess.run([binary, "rmi", "-f", IMAGE], capture_output=True, check=False)
        os.environ.clear()
        os.environ.update(saved)


def _no_runtime(saved: dict[str, str], message: str) -> None:
    """Skip the container tests, or fail them where a runtime was installed for them (``.ci/run``)."""
    os.environ.clear()
    os.environ.update(saved)
    if os.environ.get("AGENTNB_CONTAINER_TESTS") == "required":
        pytest.fail(message)
    pytest.skip(message)


def _containers(binary: str) -> list[str]:
    listed = subprocess.run([binary, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True)
    return listed.stdout.split()


def _box(runtime: str, **options: object) -> DockerShellTool:
    return DockerShellTool(image=IMAGE, binary=runtime, **options)  # type: ignore[arg-type]


@pytest.mark.container
async def test_a_stateless_container_is_locked_down(runtime: str) -> None:
    shell = _box(runtime, mode="stateless", timeout=60)
    result = await shell.run(
        "id -u; id -g; pwd; echo /sys/class/net/*; touch /etc/x 2>&1; touch /tmp/x && echo tmp-writable; exit 4"
    )
    assert result.exit_code == 4 and not result.timed_out, result
    uid, gid, cwd, nets, root_write, tmp_write = result.stdout.splitlines()
    assert (uid, gid, cwd) == ("65534", "65534", "/workspace")
    assert nets == "/sys/class/net/lo"  # no network but loopback
    assert "Read-only file system" in root_write and tmp_write == "tmp-writable"
    limits = await shell.run(
        "cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null; "
        "cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; "
        "while read -r key value; do case $key in CapEff:|NoNewPrivs:) echo $key $value;; esac; done"
        " < /proc/self/status"
    )
    assert limits.stdout.splitlines() == ["256", str(512 * 1024 * 1024), "CapEff: 0000000000000000", "NoNewPrivs: 1"]
    assert await _gone_from(runtime, prefix="agentnb-shell-")


async def _gone_from(binary: str, *, prefix: str, deadline: float = 15.0) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if not [name for name in _containers(binary) if name.startswith(prefix)]:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.container
async def test_a_persistent_container_keeps_its_state_until_closed(runtime: str) -> None:
    async with _box(runtime, timeout=60) as shell:
        assert shell.container_name in _containers(runtime)
        await shell.run("export GREETING=hello; cd /tmp")
        kept = await shell.run("echo $GREETING; pwd; printf 'no newline' >&2; exit 3")
        assert (kept.stdout, kept.stderr, kept.exit_code) == ("hello\n/tmp\n", "no newline", 3)
        fresh = await shell.run("echo ${GREETING:-gone}; pwd")  # the shell exited: a new one, in the container
        assert fresh.stdout == "gone\n/workspace\n" and fresh.exit_code == 0
        await shell.run("echo note > /tmp/kept")
        assert (await shell.run("cat /tmp/kept")).stdout == "note\n"  # the container is the same one
        name = shell.container_name
    assert name not in _containers(runtime)
    await shell.close()  # twice is fine


@pytest.mark.container
async def test_a_persistent_container_that_died_is_replaced_at_the_next_command(runtime: str) -> None:
    async with _box(runtime, timeout=60) as shell:
        await shell.run("echo note > /tmp/kept")
        killed = subprocess.run([runtime, "kill", "--signal", "KILL", shell.container_name], capture_output=True)
        assert killed.returncode == 0, killed.stderr
        assert await _gone_from(runtime, prefix=shell.container_name)  # --rm: the runtime removes it
        fresh = await shell.run("cat /tmp/kept 2>/dev/null || echo new container")
        if fresh.exit_code != 0:  # the dead shell was noticed only when this command could not reach it
            assert "the next command starts a new one" in fresh.stderr and not fresh.stdout, fresh
            fresh = await shell.run("cat /tmp/kept 2>/dev/null || echo new container")
        assert fresh.stdout == "new container\n" and fresh.exit_code == 0, fresh
        assert shell.container_name in _containers(runtime)
    assert shell.container_name not in _containers(runtime)


@pytest.mark.container
@pytest.mark.parametrize("mode", ["persistent", "stateless"])
async def test_a_command_past_its_time_limit_is_killed_in_the_container(runtime: str, mode: str) -> None:
    async with _box(runtime, mode=mode, timeout=60) as shell:
        started = time.monotonic()
        result = await shell.run("echo begun; sleep 300 & sleep 200", timeout=1.5)
        took = time.monotonic() - started
        assert result.timed_out and result.exit_code != 0, result
        assert took < 15, took
        if mode == "stateless":
            assert result.stdout == "begun\n"  # what it printed before the kill is kept
            assert await _gone_from(runtime, prefix="agentnb-shell-")
        else:
            left = await shell.run("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
            assert "sleep 300" not in left.stdout and "sleep 200" not in left.stdout, left.stdout
            assert "sleep infinity" in left.stdout  # the container itself lives on
        again = await shell.run("echo alive")
        assert again.stdout == "alive\n" and not again.timed_out


@pytest.mark.container
@pytest.mark.parametrize("mode", ["persistent", "stateless"])
async def test_a_cancelled_command_leaves_nothing_running(runtime: str, mode: str) -> None:
    async with _box(runtime, mode=mode, timeout=60) as shell:
        running = asyncio.ensure_future(shell.run("sleep 300"))
        await asyncio.sleep(1.5)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        if mode == "stateless":
            assert await _gone_from(runtime, prefix="agentnb-shell-")
        else:
            left = await shell.run("cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
            assert "sleep 300" not in left.stdout and "sleep infinity" in left.stdout, left.stdout


@pytest.mark.container
async def test_output_is_capped_keeping_its_head_and_tail(runtime: str) -> None:
    async with _box(runtime, max_output_bytes=1000, timeout=60) as shell:
        result = await shell.run("printf 'START'; head -c 300000 /dev/zero | tr '\\0' a; printf 'END'; echo oops >&2")
    assert result.truncated and result.exit_code == 0
    assert result.stdout.startswith("START" + "a" * 495) and result.stdout.endswith("a" * 497 + "END")
    assert "[... truncated 299008 bytes ...]" in result.stdout and result.stderr == "oops\n"


@pytest.mark.container
async def test_the_host_folder_is_mounted_read_only_unless_asked(runtime: str, tmp_path: Path) -> None:
    host = tmp_path / "repo"
    host.mkdir()
    host.chmod(0o777)  # the container's user is nobody
    (host / "data.txt").write_text("from the host\n")
    shell = _box(runtime, mode="stateless", host_workdir=host, timeout=60)
    read = await shell.run("cat data.txt; touch made.txt")
    assert read.stdout == "from the host\n" and read.exit_code != 0 and "Read-only" in read.stderr
    assert not (host / "made.txt").exists()
    writable = _box(runtime, mode="stateless", host_workdir=host, mount_readonly=False, timeout=60)
    assert (await writable.run("echo new > made.txt")).exit_code == 0
    assert (host / "made.txt").read_text() == "new\n"


@pytest.mark.container
async def test_an_agent_drives_the_container_after_approval(runtime: str) -> None:
    client = ScriptedChatClient([call("run_shell", command="echo $((6 * 7)) > /tmp/a; cat /tmp/a"), "42 it is."])
    async with _box(runtime, timeout=60, env={"WHO": "agent"}) as shell:
        agent = Agent(client, tools=[shell.as_function()])
        session = agent.create_session()
        asked = await agent.run("Compute", session=session)
        (request,) = asked.user_input_requests
        done = await agent.run([request.to_function_approval_response(True)], session=session)
        assert done.text == "42 it is."
        assert client.calls[1][-1].contents[0].result == "42\n\nexit_code: 0"
        assert (await shell.run("echo $WHO")).stdout == "agent\n"
        probed = ShellEnvironmentProvider(shell, ShellEnvironmentProviderOptions(probe_tools=("bash", "python")))
        snapshot = await probed.refresh()
    assert snapshot.working_directory == "/workspace" and (snapshot.shell_version or "").startswith("5.")
    assert snapshot.tool_versions["python"] is None and "bash" in (snapshot.tool_versions["bash"] or "").lower()
