"""Advisory locks the kernel releases on any exit: one writer per cache directory, one
recrawl at a time. The project's only ``flock`` code (qdrant-client's local store lock
is checked with :func:`held_elsewhere` too)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from crawler.cache.perms import FILE_MODE, private_mkdir

LOCK_NAME = ".lock"

#: the lock files this process holds (resolved paths): a second ``flock`` of one of
#: them by this process would be refused as another process's is
_HELD_HERE: set[Path] = set()


class LockHeldError(RuntimeError):
    """Another process holds the lock; ``holder`` is what it wrote in the lock file."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.path = path
        self.holder = holder


class CacheLockedError(RuntimeError):
    """Another process holds the cache directory's lock."""


class FileLock:
    """An exclusive, non-blocking ``flock`` on ``path``; the file holds a note of its
    holder (its pid, by default) for the messages of those refused.

    The kernel drops the lock when the holder exits, even on ``kill -9``, so a stale
    lock never blocks the next run. The file is private (0600) in a private directory.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, note: str | None = None) -> None:
        """Take the lock and write ``note`` (default: the pid) in it; raise
        :class:`LockHeldError` at once when another process holds it."""
        private_mkdir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 256).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            raise LockHeldError(self.path, holder) from None
        os.ftruncate(fd, 0)
        os.write(fd, (note or str(os.getpid())).encode("utf-8"))
        self._fd = fd
        _HELD_HERE.add(self.path.resolve())

    def release(self) -> None:
        if self._fd is not None:
            _HELD_HERE.discard(self.path.resolve())
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def held_by_this_process(self) -> bool:
        """True when this process holds the lock (through this object or another)."""
        return self.path.resolve() in _HELD_HERE


def held_elsewhere(path: str | os.PathLike[str]) -> bool:
    """True when another process holds an ``flock`` on ``path`` (for read-only tools)."""
    if not os.path.exists(path):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class CacheLock(FileLock):
    """The lock of one cache directory: ``<directory>/.lock``, held by a crawl or a
    command that changes the cache."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        super().__init__(Path(directory) / LOCK_NAME)

    def acquire(self, note: str | None = None) -> None:
        try:
            super().acquire(note)
        except LockHeldError as exc:
            raise CacheLockedError(
                f"The cache {self.path.parent} is in use by another crawl (pid {exc.holder}); "
                "wait for it to finish or point EXTRACTED_DOCS_DIR elsewhere."
            ) from None

    def is_locked_elsewhere(self) -> bool:
        """True when another process holds the lock (for read-only tools)."""
        return held_elsewhere(self.path)
