"""Cache files are private to their user: extractions may hold private data.

Directories are made 0700 and files 0600, both narrowed further by a stricter umask
(the mode passed to ``mkdir``/``open`` is always masked by it); existing files and
directories keep their mode.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_mkdir(path: Path) -> None:
    """``mkdir -p`` with every directory it makes 0700 (less with a stricter umask)."""
    if path.is_dir():
        return
    if not path.parent.is_dir():
        private_mkdir(path.parent)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise


def private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 if it does not exist (an SQLite database is then
    created in it with that mode; SQLite gives its -wal and -shm files the same)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def open_private(path: Path, flags: int) -> int:
    """``os.open(path, flags | O_CREAT, 0600)``, its directory made if missing."""
    try:
        return os.open(path, flags | os.O_CREAT, FILE_MODE)
    except FileNotFoundError:
        private_mkdir(path.parent)
        return os.open(path, flags | os.O_CREAT, FILE_MODE)
