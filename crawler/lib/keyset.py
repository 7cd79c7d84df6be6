"""A set of byte strings of one width, held as bytes in a few thousand byte arrays
rather than as a Python ``set`` of ``bytes`` objects: a 20-byte request fingerprint
takes about 22 bytes here against about 105 in a set (the object and its slot). For
the sets a crawl keeps of every request it made. Pure code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class FixedKeySet:
    """Byte strings in buckets (by their hash) of concatenated keys of the set's width,
    the width of the first key added; a key of another width is kept in a plain set.
    The buckets double when they average :attr:`SPLIT_AT` keys, so a lookup scans a
    few hundred bytes.

    >>> keys = FixedKeySet()
    >>> keys.add(b"abcd"), keys.add(b"abcd"), keys.add(b"bcda"), keys.add(b"xy")
    (True, False, True, True)
    >>> b"abcd" in keys, b"cdab" in keys, b"bcd" in keys, len(keys)
    (True, False, False, 3)
    >>> sorted(keys)
    [b'abcd', b'bcda', b'xy']
    """

    #: keys a bucket holds on average before the buckets double
    SPLIT_AT = 16

    def __init__(self, keys: Iterable[bytes] = (), buckets: int = 1024) -> None:
        self.width = 0
        self._mask = buckets - 1
        assert buckets > 0 and not buckets & self._mask, "a power of two"
        self._buckets: list[bytearray] = [bytearray() for _ in range(buckets)]
        self._fixed = 0  # keys in the buckets
        self._other: set[bytes] = set()  # keys of another width
        for key in keys:
            self.add(key)

    def __len__(self) -> int:
        return self._fixed + len(self._other)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, bytes):
            return False
        if len(key) != self.width:
            return key in self._other
        return self._find(self._buckets[hash(key) & self._mask], key)

    def __iter__(self) -> Iterator[bytes]:
        width = self.width
        for bucket in self._buckets if width else ():
            for start in range(0, len(bucket), width):
                yield bytes(bucket[start : start + width])
        yield from self._other

    def add(self, key: bytes) -> bool:
        """Add ``key``; whether it was new."""
        if not self.width and key:
            self.width = len(key)
        if len(key) != self.width:
            if key in self._other:
                return False
            self._other.add(key)
            return True
        bucket = self._buckets[hash(key) & self._mask]
        if self._find(bucket, key):
            return False
        bucket += key
        self._fixed += 1
        if self._fixed > self.SPLIT_AT * len(self._buckets):
            self._split()
        return True

    def _find(self, bucket: bytearray, key: bytes) -> bool:
        at = bucket.find(key)
        while at > 0 and at % self.width:  # a match across two keys: look further
            at = bucket.find(key, at + 1)
        return at >= 0

    def _split(self) -> None:
        """Twice the buckets, each key moved to its new one."""
        width, old = self.width, self._buckets
        self._mask = 2 * len(old) - 1
        self._buckets = [bytearray() for _ in range(2 * len(old))]
        for bucket in old:
            for start in range(0, len(bucket), width):
                key = bytes(bucket[start : start + width])
                self._buckets[hash(key) & self._mask] += key
