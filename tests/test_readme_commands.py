"""The README's two commands are the ones `.ci/run`, the conda file and the docs use: no drift."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETUP = 'pip install -e ".[devui,notebook]" && panel serve devui --address 127.0.0.1'
TEST = "bash .ci/run"


def _bash_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_readme_opens_with_the_setup_and_the_test_command() -> None:
    blocks = _bash_blocks((REPO / "README.md").read_text())
    assert blocks[:2] == [SETUP, TEST]


def test_ci_script_installs_the_dev_extra_and_system_packages_then_runs_pytest() -> None:
    script = (REPO / ".ci" / "run").read_text()
    commands = [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == 'python -m pytest "$@"', "pytest must be the script's last step, so its exit code is CI's"
    installs = [c for c in commands if c.startswith("python -m pip install -q") and "--upgrade pip" not in c]
    # The locked environment first, then agentnb itself without letting pip re-resolve anything.
    assert installs == ["python -m pip install -q -r requirements/ci.txt", "python -m pip install -q --no-deps -e ."]
    for package in ("chromium", "postgresql"):
        assert f"debian_packages+=({package})" in script, f".ci/run no longer installs {package} when missing"
    assert "basedpyright" in commands[commands.index(installs[-1]) + 1 : -1], ".ci/run no longer type-checks agentnb/"


def test_conda_file_installs_what_the_first_command_installs() -> None:
    conda = (REPO / "environment.yml").read_text()
    extras = re.search(r'pip install -e "(\.\[[^\]]+\])"', SETUP)
    assert extras is not None
    assert f'- -e "{extras.group(1)}"' in conda


def test_every_shell_command_in_the_docs_binds_the_devui_to_loopback() -> None:
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "notebooks" / "README.md"]
    for doc in docs:
        for block in _bash_blocks(doc.read_text()):
            for line in block.splitlines():
                if line.startswith("panel serve"):
                    assert "--address 127.0.0.1" in line, f"{doc.name}: {line!r} would listen on every interface"


def test_readme_says_which_debian_packages_the_test_command_installs() -> None:
    script = (REPO / ".ci" / "run").read_text()
    packages = re.findall(r"debian_packages\+=\((\w[\w-]*)\)", script)
    intro = (REPO / "README.md").read_text().split("## ", 1)[0]
    assert packages, "no Debian packages found in .ci/run"
    for package in packages:
        assert f"`{package}`" in intro, f"README's intro does not say that the test command installs {package}"
