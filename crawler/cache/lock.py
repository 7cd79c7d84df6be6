"""One writer per cache directory: an advisory lock the kernel releases on any exit."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from crawler.cache.perms import FILE_MODE, private_mkdir

LOCK_NAME = ".lock"


class CacheLockedError(RuntimeError):
    """Another process holds the cache directory's lock."""


class CacheLock:
    """An exclusive, non-blocking ``flock`` on ``<directory>/.lock``.

    The kernel drops the lock when the holder exits, even on ``kill -9``, so a stale
    lock never blocks the next run. The lock file holds the holder's pid for messages.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.path = Path(directory) / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        private_mkdir(self.path.parent)  # 0700: the cache is private to its user
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise CacheLockedError(
                f"The cache {self.path.parent} is in use by another crawl (pid {holder}); "
                "wait for it to finish or point EXTRACTED_DOCS_DIR elsewhere."
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def is_locked_elsewhere(self) -> bool:
        """True when another process holds the lock (for read-only tools)."""
        if not self.path.exists():
            return False
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)
