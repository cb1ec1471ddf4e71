"""Keep the test environment's lock (``requirements/ci.txt``) and see drift on purpose.

``.ci/run`` installs exactly the pins in ``requirements/ci.txt``, so a release published today cannot break a
fresh machine's run; ``pyproject.toml`` keeps the library's ranges. Two commands move the lock on purpose::

    python scripts/lock.py              # every pin to the newest release the ranges allow; print what changed
    python scripts/lock.py --keep       # resolve only what pyproject.toml changed (a new dependency), keep the rest
    python scripts/lock.py newest [PYTEST ARGS]   # a throwaway venv with the newest releases: type check and suite

The lock is universal (one file, environment markers) from Python 3.10, the declared floor, up; it covers the
``dev`` and ``compat`` extras. It needs ``uv`` (in the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements" / "ci.txt"
EXTRAS = ("dev", "compat")
FLOOR = "3.10"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)(?:\s*;\s*(.+))?$")


def pins(text: str) -> dict[tuple[str, str], str]:
    """``{(name, marker): version}`` for every pin of a lock file's text."""
    found: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            name, version, marker = match.groups()
            found[(re.sub(r"[-_.]+", "-", name).lower(), marker or "")] = version
    return found


def changes(before: str, after: str) -> list[str]:
    """One line per pin added, removed or moved between two lock texts."""
    old, new = pins(before), pins(after)
    lines: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        name = key[0] + (f" ; {key[1]}" if key[1] else "")
        if key not in new:
            lines.append(f"- {name} {old[key]}")
        elif key not in old:
            lines.append(f"+ {name} {new[key]}")
        elif old[key] != new[key]:
            lines.append(f"~ {name} {old[key]} -> {new[key]}")
    return lines


def compile_command(*, upgrade: bool) -> list[str]:
    extras = [arg for extra in EXTRAS for arg in ("--extra", extra)]
    command = [sys.executable, "-m", "uv", "pip", "compile", "pyproject.toml", "--universal"]
    command += ["--python-version", FLOOR, *extras, "-o", str(LOCK.relative_to(REPO))]
    return [*command, "--upgrade"] if upgrade else command


def refresh(*, upgrade: bool) -> int:
    before = LOCK.read_text() if LOCK.exists() else ""
    result = subprocess.run([*compile_command(upgrade=upgrade), "--quiet"], cwd=REPO)
    if result.returncode:
        return result.returncode
    moved = changes(before, LOCK.read_text())
    print("\n".join(moved) if moved else "The lock did not change.")
    print(f"{len(moved)} pin(s) changed; run `bash .ci/run` before committing requirements/ci.txt.")
    return 0


def newest(pytest_args: list[str]) -> int:
    """Install the newest releases into a throwaway venv and run the type check and the suite there."""
    with tempfile.TemporaryDirectory(prefix="agentnb-newest-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        extras = ",".join(EXTRAS)
        subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "-e", f".[{extras}]"], cwd=REPO, check=True)
        frozen = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True, check=True)
        locked: dict[str, set[str]] = {}
        for (name, _), version in pins(LOCK.read_text()).items():
            locked.setdefault(name, set()).add(version)
        moved = [
            f"{name} {version} (locked: {', '.join(sorted(locked[name])) or '-'})"
            if name in locked
            else f"{name} {version} (new)"
            for (name, _), version in sorted(pins(frozen.stdout).items())
            if version not in locked.get(name, set())
        ]
        print("Newest releases that differ from the lock:\n" + ("\n".join(moved) or "(none)"), flush=True)
        checked = subprocess.run([str(venv / "bin" / "basedpyright")], cwd=REPO).returncode
        tested = subprocess.run([python, "-m", "pytest", *pytest_args], cwd=REPO).returncode
        return checked or tested


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["refresh", "newest"], default="refresh")
    parser.add_argument("--keep", action="store_true", help="keep every pin pyproject.toml still allows")
    args, rest = parser.parse_known_args(argv)
    if args.command == "newest":
        return newest(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    return refresh(upgrade=not args.keep)


if __name__ == "__main__":
    sys.exit(main())
