"""Private files: what agentnb writes (run store, histories, checkpoints, cassettes, sessions) is for its user.

Conversations, tool results and checkpoints can hold secrets, so agentnb creates its files ``0600`` and the
directories it makes ``0700``, whatever the umask; directories that already exist (the user's own) are left
as they are.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DIR_MODE", "FILE_MODE", "create_private_file", "private_dir"]

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Make ``path`` (and any missing parents) as ``0700`` directories; existing ones are not touched."""
    path = Path(path)
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:  # another process made it meanwhile
            continue
        os.chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask
    return path


def create_private_file(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` empty with mode ``0600`` if it does not exist yet (its directory is made private)."""
    path = Path(path)
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return path
    os.close(fd)
    return path
