"""Byte strings of one width held as bytes in a few thousand byte arrays rather than as
Python objects: a 20-byte request fingerprint takes about 27 bytes in a
:class:`FixedKeySet` against about 105 in a ``set`` (the object and its slot). For
what a crawl keeps of every request it made. Pure code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class _Records:
    """Records (a key of ``width`` bytes, then ``value_size`` bytes) in buckets by the
    key's hash, the buckets doubled when they average :attr:`SPLIT_AT` records, so a
    lookup scans a few hundred bytes."""

    SPLIT_AT = 16

    def __init__(self, width: int, value_size: int, buckets: int) -> None:
        self.width = width
        self._size = width + value_size
        self._mask = buckets - 1
        assert buckets > 0 and not buckets & self._mask, "a power of two"
        self._buckets: list[bytearray] = [bytearray() for _ in range(buckets)]
        self._count = 0

    def _bucket(self, key: bytes) -> bytearray:
        return self._buckets[hash(key) & self._mask]

    def _find(self, bucket: bytearray, key: bytes) -> int:
        """Where ``key``'s record starts in ``bucket``; -1: nowhere."""
        at = bucket.find(key)
        while at > 0 and at % self._size:  # a match across two records: look further
            at = bucket.find(key, at + 1)
        return at

    def _append(self, bucket: bytearray, record: bytes) -> None:
        bucket += record
        self._count += 1
        if self._count > self.SPLIT_AT * len(self._buckets):
            self._split()

    def _records(self) -> Iterator[bytes]:
        for bucket in self._buckets:
            for start in range(0, len(bucket), self._size):
                yield bytes(bucket[start : start + self._size])

    def _split(self) -> None:
        """Twice the buckets, each record moved to its new one."""
        old = self._records()
        self._mask = 2 * len(self._buckets) - 1
        buckets = [bytearray() for _ in range(2 * len(self._buckets))]
        for record in old:
            buckets[hash(record[: self.width]) & self._mask] += record
        self._buckets = buckets


class FixedKeySet(_Records):
    """A set of byte strings, in buckets for those of the width of the first key
    added; a key of another width is kept in a plain set.

    >>> keys = FixedKeySet()
    >>> keys.add(b"abcd"), keys.add(b"abcd"), keys.add(b"bcda"), keys.add(b"xy")
    (True, False, True, True)
    >>> b"abcd" in keys, b"cdab" in keys, b"bcd" in keys, len(keys)
    (True, False, False, 3)
    >>> sorted(keys)
    [b'abcd', b'bcda', b'xy']
    """

    def __init__(self, keys: Iterable[bytes] = (), buckets: int = 1024) -> None:
        super().__init__(0, 0, buckets)
        self._other: set[bytes] = set()  # keys of another width
        for key in keys:
            self.add(key)

    def __len__(self) -> int:
        return self._count + len(self._other)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, bytes):
            return False
        if len(key) != self.width or not key:
            return key in self._other
        return self._find(self._bucket(key), key) >= 0

    def __iter__(self) -> Iterator[bytes]:
        if self.width:
            yield from self._records()
        yield from self._other

    def add(self, key: bytes) -> bool:
        """Add ``key``; whether it was new."""
        if not self.width and key:
            self.width = self._size = len(key)
        if len(key) != self.width or not key:
            if key in self._other:
                return False
            self._other.add(key)
            return True
        bucket = self._bucket(key)
        if self._find(bucket, key) >= 0:
            return False
        self._append(bucket, key)
        return True


class FixedKeyValues(_Records):
    """Byte strings of one width, each with a number of ``value_size`` bytes (from 0 to
    65,535 for two; they follow the key in its bucket).

    >>> values = FixedKeyValues(4)
    >>> values.set(b"abcd", 3); values.set(b"bcda", 70000); values.set(b"abcd", 1)
    >>> values.get(b"abcd"), values.get(b"bcda"), values.get(b"cdab"), len(values)
    (1, 65535, None, 2)
    """

    def __init__(self, width: int, value_size: int = 2, buckets: int = 1024) -> None:
        super().__init__(width, value_size, buckets)
        self._top = (1 << (8 * value_size)) - 1

    def __len__(self) -> int:
        return self._count

    def get(self, key: bytes) -> int | None:
        bucket = self._bucket(key)
        at = self._find(bucket, key)
        return None if at < 0 else int.from_bytes(bucket[at + self.width : at + self._size], "little")

    def set(self, key: bytes, value: int) -> None:
        """``key``'s value (a value past the largest its bytes hold kept as that)."""
        if len(key) != self.width:
            raise ValueError(f"a key of {len(key)} bytes in a map of {self.width}-byte keys")
        data = min(max(value, 0), self._top).to_bytes(self._size - self.width, "little")
        bucket = self._bucket(key)
        at = self._find(bucket, key)
        if at >= 0:
            bucket[at + self.width : at + self._size] = data
        else:
            self._append(bucket, key + data)
