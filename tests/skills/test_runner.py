"""SubprocessScriptRunner: real child processes, an argument list, a time limit, typed errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentnb import (
    Agent,
    FileSkillScript,
    FileSkillsSource,
    Message,
    SkillsProvider,
    SkillsSourceContext,
    SubprocessScriptRunner,
)
from agentnb.exceptions import SkillScriptError, SkillSecurityError
from agentnb.local import ScriptedChatClient
from agentnb.skills import FileSkill
from agentnb.skills._runner import script_arguments

from .helpers import CONVERT, write_skill

CTX = SkillsSourceContext(agent=None)


async def load(root: Path, runner: SubprocessScriptRunner | None = None) -> FileSkill:
    (skill,) = await FileSkillsSource(root, script_runner=runner or SubprocessScriptRunner()).get_skills(CTX)
    assert isinstance(skill, FileSkill)
    return skill


def test_arguments_from_a_list_or_an_object() -> None:
    assert script_arguments(None) == []
    assert script_arguments(["--value", "1 ; rm -rf /"]) == ["--value", "1 ; rm -rf /"]
    assert script_arguments({"value": 2.5, "verbose": True, "quiet": False, "tag": ["a", "b"], "x": None}) == [
        "--value",
        "2.5",
        "--verbose",
        "--tag",
        "a",
        "--tag",
        "b",
    ]
    with pytest.raises(TypeError, match="must be strings"):
        script_arguments(["--value", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="list of strings or an object"):
        script_arguments("--value 3")  # type: ignore[arg-type]


async def test_runs_a_script_without_a_shell(tmp_path: Path) -> None:
    write_skill(tmp_path, "conv", files={"scripts/convert.py": CONVERT})
    skill = await load(tmp_path)
    script = await skill.get_script("scripts/convert.py")
    assert script is not None
    out = await script.run(skill, ["--value", "26.2", "--factor", "1.60934"])
    assert '"result": 42.1647' in out
    # Shell metacharacters stay one literal argument: argparse sees "1;echo" and fails as a float.
    with pytest.raises(SkillScriptError, match="exited with code 2") as caught:
        await script.run(skill, ["--value", "1;echo pwned", "--factor", "2"])
    assert caught.value.exit_code == 2 and "invalid float value" in caught.value.output


async def test_runs_in_the_skill_folder_and_reports_stderr(tmp_path: Path) -> None:
    code = "import os, sys\nprint(os.getcwd())\nprint('careful', file=sys.stderr)\n"
    write_skill(tmp_path, "where", files={"scripts/where.py": code})
    skill = await load(tmp_path)
    out = await (await skill.get_script("scripts/where.py")).run(skill)  # type: ignore[union-attr]
    assert out.splitlines()[0] == str(tmp_path / "where") and out.endswith("Stderr:\ncareful")


async def test_a_script_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    code = "import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    write_skill(tmp_path, "slow", files={"scripts/slow.py": code})
    skill = await load(tmp_path, SubprocessScriptRunner(timeout=1.5))
    with pytest.raises(SkillScriptError, match=r"longer than 1\.5 s"):
        await (await skill.get_script("scripts/slow.py")).run(skill)  # type: ignore[union-attr]
    pid = int((tmp_path / "slow" / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: gone


async def test_a_script_outside_its_skill_folder_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    outside = tmp_path / "outside.py"
    outside.write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    write_skill(tmp_path / "root", "s")
    skill = await load(tmp_path / "root")
    rogue = FileSkillScript(name="../outside.py", full_path=str(outside), runner=SubprocessScriptRunner())
    with pytest.raises(SkillSecurityError, match="outside the skill's folder"):
        await rogue.run(skill)
    with pytest.raises(SkillSecurityError, match="outside the skill's folder"):
        await SubprocessScriptRunner()(skill, rogue)
    # A script that became a link after discovery is refused too.
    write_skill(tmp_path / "root2", "t", files={"go.py": "print('hi')"})
    skill2 = await load(tmp_path / "root2")
    script = await skill2.get_script("go.py")
    (tmp_path / "root2" / "t" / "go.py").unlink()
    (tmp_path / "root2" / "t" / "go.py").symlink_to(outside)
    with pytest.raises(SkillSecurityError, match="symbolic link"):
        await script.run(skill2)  # type: ignore[union-attr]
    assert not marker.exists()


async def test_clear_errors_without_a_runner_or_an_interpreter(tmp_path: Path) -> None:
    write_skill(tmp_path, "s", files={"go.py": "print(1)", "go.sh": "echo 1"})
    (skill,) = await FileSkillsSource(tmp_path, script_extensions=(".py", ".sh")).get_skills(CTX)
    with pytest.raises(ValueError, match="requires a runner"):
        await (await skill.get_script("go.py")).run(skill)  # type: ignore[union-attr]
    skill = await load(tmp_path)
    sh = FileSkillScript(name="go.sh", full_path=str(tmp_path / "s" / "go.sh"), runner=SubprocessScriptRunner())
    with pytest.raises(SkillScriptError, match="No interpreter"):
        await sh.run(skill)
    runner = SubprocessScriptRunner(interpreters={".sh": ["/bin/sh"]})
    assert await runner(skill, sh) == "1"
    with pytest.raises(ValueError, match="timeout"):
        SubprocessScriptRunner(timeout=0)


async def test_a_script_waits_for_approval_then_runs_through_the_agent(tmp_path: Path) -> None:
    write_skill(tmp_path, "conv", files={"scripts/convert.py": CONVERT + "open('ran', 'w').write('1')\n"})
    provider = SkillsProvider.from_paths(tmp_path, script_runner=SubprocessScriptRunner())
    client = ScriptedChatClient(
        [
            ScriptedChatClient.call(
                "run_skill_script",
                skill_name="conv",
                script_name="scripts/convert.py",
                args=["--value", "2", "--factor", "3"],
            ),
            "Six.",
        ]
    )
    agent = Agent(client, context_providers=[provider])
    session = agent.create_session()
    (request,) = (await agent.run("2 x 3", session=session)).user_input_requests
    assert not (tmp_path / "conv" / "ran").exists()
    response = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
    assert response.text == "Six." and (tmp_path / "conv" / "ran").exists()


async def test_a_found_script_is_checked_on_disk_again_and_a_hand_made_one_by_path(tmp_path: Path) -> None:
    calls: list[str] = []

    def runner(skill: object, script: FileSkillScript, args: object = None) -> str:
        calls.append(script.name)
        return "ran"

    write_skill(tmp_path, "s", files={"go.py": "print(1)"})
    (skill,) = await FileSkillsSource(tmp_path, script_runner=runner).get_skills(CTX)
    assert isinstance(skill, FileSkill)
    (script,) = skill.known_scripts
    assert isinstance(script, FileSkillScript) and script.skill_dir == skill.path
    assert await script.run(skill) == "ran"
    real = tmp_path / "elsewhere.py"
    real.write_text("print(2)", encoding="utf-8")
    os.remove(script.full_path)
    os.symlink(real, script.full_path)  # swapped for a link after discovery
    with pytest.raises(SkillSecurityError, match="symbolic link"):
        await script.run(skill)
    # Made by hand (no skill_dir): the path must lie inside the skill; the runner decides the rest.
    hand_made = FileSkillScript(name="x.py", full_path=os.path.join(skill.path, "x.py"), runner=runner)
    assert await hand_made.run(skill) == "ran"
    outside = FileSkillScript(name="y.py", full_path=str(tmp_path / "y.py"), runner=runner)
    with pytest.raises(SkillSecurityError, match="outside"):
        await outside.run(skill)
    assert calls == ["go.py", "x.py"]
    with pytest.raises(ValueError, match="not under trusted_root"):
        FileSkillScript(name="z.py", full_path=str(tmp_path / "z.py"), skill_dir=str(tmp_path), trusted_root="/nope")
