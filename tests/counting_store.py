"""A store that counts its calls (``EXTRACTED_DOCS_STORE``), for tests that count
how often a crawl reads the cache: the counts are written as JSON to the file named
by the environment variable ``TEST_STORE_COUNTS`` when the store closes."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

from crawler.cache.sqlite import SqliteDocStore

#: the calls counted: every read of the store (and every write, for comparison)
COUNTED = ("get_", "read_", "find_", "has_", "put_", "write_")


class CountingStore(SqliteDocStore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.calls: Counter[str] = Counter()
        super().__init__(*args, **kwargs)

    def __getattribute__(self, name: str) -> Any:
        if name.startswith(COUNTED):
            object.__getattribute__(self, "calls")[name] += 1
        return object.__getattribute__(self, name)

    def close(self) -> None:
        path = os.environ.get("TEST_STORE_COUNTS")
        if path:
            with open(path, "w") as handle:
                json.dump(dict(self.calls), handle)
        super().close()
