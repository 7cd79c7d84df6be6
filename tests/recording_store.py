"""Stores named in ``EXTRACTED_DOCS_STORE`` that note how they were used, in the file
the environment variable ``TEST_STORE_LOG`` names: one JSON line per store closed,
``{"store", "argv", "readonly", "calls"}``.

:class:`PortsOnlyStore` is no ``SqliteDocStore``: it has the methods of the store's
ports (crawler.cache.ports) and ``location``, each handed to a ``SqliteDocStore`` it
keeps private, and nothing else (no ``directory``, no files): a command that reaches
past the ports fails with it. :class:`RecordingStore` is the default store itself,
noted; a crawl, which uses more than the ports today, runs with it.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from crawler.cache import store_methods
from crawler.cache.sqlite import SqliteDocStore


def _note(store: str, readonly: bool, calls: list[str]) -> None:
    path = os.environ.get("TEST_STORE_LOG")
    if path:
        line = {"store": store, "argv": sys.argv, "readonly": readonly, "calls": sorted(set(calls))}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


class PortsOnlyStore:
    concurrent_writers = False
    embedded = False  # no files of its own: verify checks it through its ports

    def __init__(self, location: str, *, readonly: bool = False, create: bool = True) -> None:
        self._inner = SqliteDocStore(location, readonly=readonly, create=create)
        self._readonly = readonly
        self._calls: list[str] = []
        self.location = f"ports-only:{self._inner.location}"
        self.on_read_error = self.on_storage_error = None

    def size_on_disk(self) -> None:
        self._calls.append("size_on_disk")
        return None  # a store without a directory

    def close(self) -> None:
        self._calls.append("close")
        self._inner.close()
        _note(type(self).__name__, self._readonly, self._calls)


def _delegate(name: str) -> Any:
    def method(self: PortsOnlyStore, *args: Any, **kwargs: Any) -> Any:
        self._calls.append(name)
        return getattr(self._inner, name)(*args, **kwargs)

    method.__name__ = name
    return method


for _name in store_methods():
    if _name not in ("close", "size_on_disk"):
        setattr(PortsOnlyStore, _name, _delegate(_name))


class RecordingStore(SqliteDocStore):
    def close(self) -> None:
        super().close()
        _note(type(self).__name__, self.readonly, [])
