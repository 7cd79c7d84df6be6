"""The page keys a run holds for every page it met, held compactly: a key (``url_hash``,
40 hex digits) as its 20 bytes in a :mod:`crawler.lib.keyset` table, not as a string
(89 bytes) and a dict's or a set's entry (40 to 50 more). Another key (a test's name)
is kept as it is."""

from __future__ import annotations

import binascii
from collections.abc import Iterator, MutableMapping

from crawler.lib.keyset import FixedKeySet, FixedKeyValues

#: a key's status code when it was taken out
_GONE = 255


def _binary(key: str) -> bytes | None:
    """The 20 bytes of a 40-hex-digit key in lower case (None: another key)."""
    if len(key) != 40 or (not key.islower() and not key.isdigit()):
        return None
    try:
        return binascii.unhexlify(key)
    except (binascii.Error, ValueError):
        return None


class RunKeys:
    """A set of page keys.

    >>> keys = RunKeys()
    >>> keys.add("b193fe24108631d40da4e02d57d573466636bba0"); keys.add("k1")
    >>> "b193fe24108631d40da4e02d57d573466636bba0" in keys, "k1" in keys, "k2" in keys, len(keys)
    (True, True, False, 2)
    """

    def __init__(self) -> None:
        self._keys = FixedKeySet()
        self._other: set[str] = set()

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        binary = _binary(key)
        return key in self._other if binary is None else binary in self._keys

    def __len__(self) -> int:
        return len(self._keys) + len(self._other)

    def add(self, key: str) -> None:
        binary = _binary(key)
        if binary is None:
            self._other.add(key)
        else:
            self._keys.add(binary)

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]


class SeenPages(MutableMapping[str, "str | None"]):
    """Page key -> the status it was recorded with, in the order first put (a dict's
    order: a key put again keeps its place, one taken out and put again goes last).
    Each key is a record of an append-only log (21 bytes) and of an index (its place
    and its status' code, 25 bytes), about 50 bytes a page instead of 130.

    >>> seen = SeenPages()
    >>> seen["b193fe24108631d40da4e02d57d573466636bba0"] = "new"; seen["k1"] = None; seen["0" * 40] = "changed"
    >>> seen.pop("k1"), [(key[:4], status) for key, status in seen.items()]
    (None, [('b193', 'new'), ('0000', 'changed')])
    """

    _RECORD = 21  # a kind byte (0: the key's 20 bytes follow; 1: the place of one in _names), 20 bytes

    def __init__(self) -> None:
        self._log = bytearray()
        self._index = FixedKeyValues(20, value_size=5)  # key -> its record's number (4 bytes), its code
        self._names: list[str] = []  # the other keys, as they are
        self._name_index: dict[str, tuple[int, int]] = {}
        self._codes: dict[str | None, int] = {}
        self._statuses: list[str | None] = []
        self._count = 0

    def _find(self, key: str) -> tuple[bytes | None, int, int]:
        """``key``'s 20 bytes (None: another key), its record's number and its code
        (-1, _GONE: never put)."""
        binary = _binary(key)
        if binary is None:
            place, code = self._name_index.get(key, (-1, _GONE))
            return None, place, code
        return (binary, *self._indexed(binary))

    def _indexed(self, binary: bytes) -> tuple[int, int]:
        """The record's number and the code of the key of these 20 bytes."""
        value = self._index.get(binary)
        return (-1, _GONE) if value is None else (value >> 8, value & 0xFF)

    def __getitem__(self, key: str) -> str | None:
        _, _, code = self._find(key)
        if code == _GONE:
            raise KeyError(key)
        return self._statuses[code]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key)[2] != _GONE

    def __setitem__(self, key: str, status: str | None) -> None:
        code = self._codes.get(status)
        if code is None:
            if len(self._statuses) >= _GONE:
                raise ValueError(f"more than {_GONE} statuses in one run")
            code = self._codes[status] = len(self._statuses)
            self._statuses.append(status)
        binary, place, old = self._find(key)
        if old == _GONE:  # a new record, last
            place = len(self._log) // self._RECORD
            if binary is None:
                self._log += b"\x01" + len(self._names).to_bytes(20, "little")
                self._names.append(key)
            else:
                self._log += b"\x00" + binary
            self._count += 1
        self._put(key, binary, place, code)

    def _put(self, key: str, binary: bytes | None, place: int, code: int) -> None:
        if binary is None:
            self._name_index[key] = (place, code)
        else:
            self._index.set(binary, place << 8 | code)

    def __delitem__(self, key: str) -> None:
        binary, place, code = self._find(key)
        if code == _GONE:
            raise KeyError(key)
        self._put(key, binary, place, _GONE)
        self._count -= 1

    def __len__(self) -> int:
        return self._count

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def __iter__(self) -> Iterator[str]:
        size = self._RECORD
        for place in range(len(self._log) // size):
            start = place * size
            record = bytes(self._log[start + 1 : start + size])
            if self._log[start]:
                key = self._names[int.from_bytes(record, "little")]
                at, code = self._name_index[key]
            else:
                key = record.hex()
                at, code = self._indexed(record)
            if at == place and code != _GONE:
                yield key
