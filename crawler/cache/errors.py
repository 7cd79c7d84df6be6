"""The cache's errors: a cache that cannot be read, a cache that is not there, and a
read or write of an open cache that failed."""

from __future__ import annotations


class CacheCorruptError(RuntimeError):
    """A cache file exists but cannot be read."""


class CacheMissingError(RuntimeError):
    """There is no cache where the settings point (a store opened with ``create=False``)."""


class CacheStorageError(CacheCorruptError):
    """Reading or writing an open cache failed (a damaged file, a full disk): what was
    stored before is left as it is; the writes of this run not yet committed are not kept."""
