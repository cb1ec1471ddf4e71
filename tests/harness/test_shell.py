"""The shell tool and the shell environment provider, with real shells and real subprocesses."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent
from agentnb.exceptions import ShellCommandError, ShellExecutionError, ToolExecutionError
from agentnb.harness import (
    ExperimentalWarning,
    InMemoryAgentFileStore,
    LocalShellTool,
    ShellEnvironmentProvider,
    ShellEnvironmentProviderOptions,
    ShellEnvironmentSnapshot,
    ShellFamily,
    ShellPolicy,
    create_harness_agent,
    default_instructions_formatter,
)
from agentnb.harness import _agent as harness_agent
from agentnb.local import FunctionChatClient, ScriptedChatClient

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the tests drive a POSIX shell")

call = ScriptedChatClient.call
MODES = ["persistent", "stateless"]


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_agent, "_warned", set())


def test_the_tool_asks_for_approval_unless_told_otherwise_with_acknowledgement(tmp_path: Path) -> None:
    assert LocalShellTool(workdir=tmp_path).as_function().approval_mode == "always_require"
    with pytest.raises(ValueError, match="acknowledge_unsafe=True"):
        LocalShellTool(approval_mode="never_require")
    unsafe = LocalShellTool(approval_mode="never_require", acknowledge_unsafe=True)
    assert unsafe.as_function(name="sh").approval_mode == "never_require"
    for bad in ({"mode": "forever"}, {"timeout": 0}, {"max_output_bytes": 0}, {"workdir": tmp_path / "missing"}):
        with pytest.raises(ValueError):
            LocalShellTool(**bad)  # type: ignore[arg-type]


async def test_nothing_runs_before_approval_and_a_denied_command_never_runs(tmp_path: Path) -> None:
    shell = LocalShellTool(workdir=tmp_path, timeout=10)
    client = ScriptedChatClient(
        [
            call("run_shell", command="touch approved.txt && echo made it"),
            "Made the file.",
            call("run_shell", command="touch denied.txt"),
            "Understood, not made.",
        ]
    )
    agent = Agent(client, tools=[shell.as_function()])
    session = agent.create_session()
    async with shell:
        asked = await agent.run("Make approved.txt", session=session)
        (request,) = asked.user_input_requests
        assert request.function_call is not None and request.function_call.name == "run_shell"
        assert not (tmp_path / "approved.txt").exists()
        done = await agent.run([request.to_function_approval_response(True)], session=session)
        assert done.text == "Made the file."
        assert (tmp_path / "approved.txt").exists()
        sent = client.calls[1][-1].contents[0]
        assert sent.type == "function_result" and sent.result == "made it\n\nexit_code: 0"

        asked = await agent.run("Make denied.txt", session=session)
        (request,) = asked.user_input_requests
        await agent.run([request.to_function_approval_response(False)], session=session)
    assert not (tmp_path / "denied.txt").exists()


@pytest.mark.parametrize("mode", MODES)
async def test_every_command_starts_in_the_working_directory(tmp_path: Path, mode: str) -> None:
    async with LocalShellTool(mode=mode, workdir=tmp_path, timeout=10) as shell:  # type: ignore[arg-type]
        wandered = await shell.run("cd / && pwd")
        assert wandered.stdout == "/\n"
        back = await shell.run("pwd")
        assert back.stdout == f"{tmp_path}\n" and back.exit_code == 0


async def test_a_persistent_shell_keeps_variables_and_survives_exit_and_timeouts(tmp_path: Path) -> None:
    async with LocalShellTool(workdir=tmp_path, timeout=10) as shell:
        await shell.run("export GREETING=hello")
        kept = await shell.run("echo $GREETING; printf 'no newline' >&2; exit 3")
        assert (kept.stdout, kept.stderr, kept.exit_code) == ("hello\n", "no newline", 3)
        fresh = await shell.run("echo ${GREETING:-gone}")  # the shell exited: a new one starts, variables gone
        assert fresh.stdout == "gone\n" and fresh.exit_code == 0
        stateless = LocalShellTool(mode="stateless", workdir=tmp_path)
        await stateless.run("export GREETING=hello")
        assert (await stateless.run("echo ${GREETING:-gone}")).stdout == "gone\n"


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


async def _until_gone(pid: int, deadline: float = 10.0) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if _gone(pid):
            return True
        await asyncio.sleep(0.05)
    return _gone(pid)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see the child end")
@pytest.mark.parametrize("mode", MODES)
async def test_a_command_past_its_time_limit_is_killed_with_what_it_started(tmp_path: Path, mode: str) -> None:
    async with LocalShellTool(mode=mode, workdir=tmp_path, timeout=30) as shell:  # type: ignore[arg-type]
        started = time.monotonic()
        result = await shell.run("sleep 300 & echo $!; wait", timeout=1)
        assert result.timed_out and result.exit_code != 0
        assert time.monotonic() - started < 20
        child = int(result.stdout.split()[0])
        assert await _until_gone(child), "the command's child outlived the time-out"
        assert "[command timed out]" in result.format_for_model()
        again = await shell.run("echo alive")  # the tool is usable afterwards
        assert again.stdout == "alive\n" and not again.timed_out


@pytest.mark.parametrize("mode", MODES)
async def test_output_is_capped_keeping_its_head_and_tail(tmp_path: Path, mode: str) -> None:
    async with LocalShellTool(mode=mode, workdir=tmp_path, max_output_bytes=1000) as shell:  # type: ignore[arg-type]
        result = await shell.run("printf 'START'; head -c 300000 /dev/zero | tr '\\0' a; printf 'END'; echo oops >&2")
    assert result.truncated and result.exit_code == 0
    assert result.stdout.startswith("START" + "a" * 495) and result.stdout.endswith("a" * 497 + "END")
    assert "[... truncated 299008 bytes ...]" in result.stdout
    assert result.stderr == "oops\n"
    assert "[output truncated]" in result.format_for_model()


async def test_the_policy_refuses_before_anything_runs_and_the_model_is_told_why(tmp_path: Path) -> None:
    seen: list[str] = []
    shell = LocalShellTool(
        mode="stateless",
        workdir=tmp_path,
        policy=ShellPolicy(denylist=[r"\brm\b"]),
        on_command=seen.append,
        approval_mode="never_require",
        acknowledge_unsafe=True,
    )
    with pytest.raises(ShellCommandError, match="denylist pattern") as info:
        await shell.run("rm -rf build")
    assert isinstance(info.value, ShellExecutionError) and isinstance(info.value, ToolExecutionError)
    with pytest.raises(ShellCommandError, match="empty"):
        await shell.run("   ")
    tool = shell.as_function()
    assert (
        await tool.invoke(arguments={"command": "RM x"}, skip_parsing=True)
        == "Command rejected by policy: matches denylist pattern: \\brm\\b"
    )
    assert await tool.invoke(arguments={"command": "echo fine"}, skip_parsing=True) == "fine\n\nexit_code: 0"
    assert seen == ["echo fine"]
    allow = ShellPolicy(allowlist=[r"^git "])
    assert allow.evaluate_command("git status").decision == "allow"
    assert allow.evaluate_command("curl x").reason == "command does not match allowlist"


async def test_a_missing_shell_is_a_typed_error(tmp_path: Path) -> None:
    shell = LocalShellTool(mode="stateless", shell=str(tmp_path / "no-such-shell"), workdir=tmp_path)
    with pytest.raises(ShellExecutionError, match="Could not start the shell"):
        await shell.run("echo hi")


async def test_the_environment_block_is_probed_once_and_reaches_every_run(tmp_path: Path) -> None:
    probes: list[str] = []
    shell = LocalShellTool(mode="stateless", workdir=tmp_path, on_command=probes.append)
    sent: list[str] = []

    def model(messages: list[Any], options: dict[str, Any]) -> str:
        sent.append("\n".join(m.text for m in messages if m.role == "system"))
        return "ok"

    with pytest.warns(ExperimentalWarning, match="'shell_executor'"):
        agent = create_harness_agent(
            FunctionChatClient(model),
            shell_executor=shell,
            shell_environment_provider_options=ShellEnvironmentProviderOptions(
                probe_tools=("python", "no-such-cli-here", "git; touch injected")
            ),
            file_memory_store=InMemoryAgentFileStore(),
        )
    assert any(isinstance(p, ShellEnvironmentProvider) for p in agent.context_providers)
    assert [t.name for t in agent.tools] == ["run_shell"] and agent.tools[0].approval_mode == "always_require"
    session = agent.create_session()
    await agent.run("one", session=session)
    await agent.run("two", session=session)
    assert len(sent) == 2 and sent[0] == sent[1]
    assert "## Shell environment" in sent[0] and f"Working directory: {tmp_path}" in sent[0]
    assert "Installed CLIs: python (Python 3." in sent[0]
    assert "Not installed: no-such-cli-here, git; touch injected" in sent[0]
    # One probe for both runs, and the name that is not a plain name was never put on a command line.
    assert probes[1:] == ["python --version", "no-such-cli-here --version"]
    assert not (tmp_path / "injected").exists()


async def test_a_probe_that_fails_leaves_a_gap_not_an_error(tmp_path: Path) -> None:
    shell = LocalShellTool(mode="stateless", workdir=tmp_path, policy=ShellPolicy(denylist=["--version"]))
    provider = ShellEnvironmentProvider(
        shell,
        ShellEnvironmentProviderOptions(
            probe_tools=("python",),
            override_family=ShellFamily.POSIX,
            instructions_formatter=lambda s: f"custom: {s.working_directory}",
        ),
    )
    snapshot = await provider.refresh()
    assert snapshot.tool_versions == {"python": None} and snapshot.working_directory == str(tmp_path)
    assert provider.current_snapshot is snapshot
    slow = ShellEnvironmentProvider(
        LocalShellTool(mode="stateless", workdir=tmp_path, shell=["/bin/sh", "-c", "sleep 30", "--"]),
        ShellEnvironmentProviderOptions(probe_tools=(), probe_timeout=0.5),
    )
    timed_out = await slow.refresh()
    assert timed_out.working_directory == "" and timed_out.shell_version is None


def test_the_default_block_speaks_the_shells_idiom() -> None:
    posix = ShellEnvironmentSnapshot(ShellFamily.POSIX, "Linux", "5.2", "/work", {"git": "git 2", "node": None})
    text = default_instructions_formatter(posix)
    assert "POSIX shell 5.2 on Linux" in text and "export NAME=value" in text
    assert "Installed CLIs: git (git 2)" in text and "Not installed: node" in text
    pwsh = ShellEnvironmentSnapshot(ShellFamily.POWERSHELL, "Windows", None, "", {})
    text = default_instructions_formatter(pwsh)
    assert "PowerShell on Windows" in text and "$env:NAME" in text and "Working directory" not in text


def test_create_harness_agent_checks_the_executor_and_ignores_options_without_one() -> None:
    with pytest.raises(TypeError, match="as_function"):
        create_harness_agent(ScriptedChatClient([]), shell_executor=object(), disable_file_memory=True)  # type: ignore[arg-type]
    agent = create_harness_agent(
        ScriptedChatClient([]),
        shell_environment_provider_options=ShellEnvironmentProviderOptions(),
        disable_file_memory=True,
    )
    assert not any(isinstance(p, ShellEnvironmentProvider) for p in agent.context_providers)
    assert agent.tools == []
