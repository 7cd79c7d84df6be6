"""Cache files are private to their user: extractions may hold private data.

Directories are made 0700 and files 0600, both narrowed further by a stricter umask
(the mode passed to ``mkdir``/``open`` is always masked by it); existing files and
directories keep their mode.
"""

from __future__ import annotations

import os
from pathlib import Path

from crawler.cache.errors import CacheCorruptError

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


def mkdir_problem(path: Path, error: OSError) -> str:
    """Why the directory ``path`` could not be made, as a user reads it: the file in its
    way (``/srv/x is not a directory``), else the system's word (``Permission denied``)."""
    blocker = next((parent for parent in (path, *path.parents) if parent.exists()), None)
    if blocker is not None and not blocker.is_dir():
        return f"{blocker} is not a directory"
    return error.strerror or str(error)


def private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 if it does not exist (an SQLite database is then
    created in it with that mode; SQLite gives its -wal and -shm files the same)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def open_private(path: str | Path, flags: int) -> int:
    """``os.open(path, flags | O_CREAT, 0600)``, its directory made if missing."""
    try:
        return os.open(path, flags | os.O_CREAT, FILE_MODE)
    except FileNotFoundError:
        private_mkdir(Path(path).parent)
        return os.open(path, flags | os.O_CREAT, FILE_MODE)


class CacheAccessError(CacheCorruptError):
    """A cache file that cannot be opened for a reason that is not damage: its
    permissions, or a lock another program holds on it. Nothing was changed, and
    ``scrapy cache verify --repair`` cannot fix it (the message says what can)."""


def access_problem(path: Path, error: BaseException | None = None, *, write: bool) -> str | None:
    """Why the SQLite file ``path`` cannot be opened (for writing with ``write``) when
    the cause is not damage: a file or its directory the user may not read or write
    (which file, which user), or a lock another program holds (``error`` says
    "locked"); None when it is neither (then it may be damage)."""
    files = [path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm"))]
    checks = [(each, os.R_OK) for each in files]
    if write:  # SQLite writes the file, its -wal and -shm, and makes them in the directory
        checks += [(each, os.W_OK) for each in files] + [(path.parent, os.W_OK | os.X_OK)]
    for each, need in checks:
        if each.exists() and not os.access(each, need):
            what = "read" if need == os.R_OK else "written"
            return (
                f"The cache {'directory' if each.is_dir() else 'file'} {each} cannot be {what} by user "
                f"{_user()}: it is {_mode(each)}. Nothing was changed; `scrapy cache verify --repair` cannot "
                "fix this: run as the cache's owner, or fix its permissions (files u+rw, directories u+rwx)."
            )
    if error is not None and "locked" in str(error).lower():
        holders = _holders(path)
        return (
            f"The cache file {path} is locked by another program{holders} (SQLite: {error}). Nothing was "
            "changed; it is not damaged: try again once that program has finished with it."
        )
    return None


def _user() -> str:
    uid = os.geteuid()
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _mode(path: Path) -> str:
    info = path.stat()
    try:
        import pwd

        owner = pwd.getpwuid(info.st_uid).pw_name
    except (ImportError, KeyError):
        owner = f"uid {info.st_uid}"
    return f"mode {info.st_mode & 0o7777:04o}, owned by {owner}"


def _holders(path: Path) -> str:
    """`` (pid 42: sqlite3)``: the other processes that have ``path`` open, as far as
    ``/proc`` tells (Linux; "" elsewhere or when none is seen)."""
    found = []
    target = str(path.resolve())
    proc = Path("/proc")
    if not proc.is_dir():
        return ""
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(os.readlink(fd) == target for fd in (entry / "fd").iterdir()):
                found.append(f"pid {entry.name}: {(entry / 'comm').read_text().strip()}")
        except OSError:
            continue
    return f" ({', '.join(found)})" if found else ""
