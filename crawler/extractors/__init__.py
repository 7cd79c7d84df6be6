"""Extractors: what turns a page's cleaned markdown into the cached extraction.

Any class works as ``EXTRACTOR`` if it has string attributes ``name`` and ``version``
and a method ``extract(self, url, content) -> dict`` (plain or ``async def``). It is
built with Scrapy's ``build_from_crawler``, so ``from_crawler`` is optional. A plain
``extract`` runs in a worker thread unless the class sets ``blocking = False`` (pure
computation: it then runs inline, without the hand-over). The pair
(name, version) is part of the cache identity: bump ``version`` when the output for
the same input would change, and the next run re-extracts every page.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Extractor(Protocol):
    name: str
    version: str

    def extract(self, url: str, content: str) -> dict[str, Any]: ...


def check_extractor(extractor: object) -> None:
    """Raise ``TypeError`` naming what ``extractor`` lacks."""
    cls = type(extractor).__name__
    for attribute in ("name", "version"):
        value = getattr(extractor, attribute, None)
        if not isinstance(value, str) or not value:
            raise TypeError(f"Extractor {cls} needs a non-empty string attribute {attribute!r}, got {value!r}")
    if not callable(getattr(extractor, "extract", None)):
        raise TypeError(f"Extractor {cls} needs a method extract(self, url, content) -> dict")
