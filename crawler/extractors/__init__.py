"""Extractors: what turns a page's cleaned markdown into the cached extraction.

Any class works as ``EXTRACTOR`` if it has string attributes ``name`` and ``version``
and a method ``extract(self, url, content) -> dict`` (plain or ``async def``), built with
``build_from_crawler``. A plain ``extract`` runs in a worker thread unless the class
sets ``blocking = False``. (name, version) is part of the cache identity: bump
``version`` when the output for the same input would change.

Optional, for a paid API (see :mod:`crawler.extractors.llm`): ``own_timeout = True``
(it applies ``EXTRACTOR_TIMEOUT`` per attempt itself); ``estimate_tokens(url, content)``
for the dry run; ``progress_note()`` for progress lines; raising
:class:`ExtractorUnavailable` stops the phase, the pages left go to the next run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from crawler.config import check_component

if TYPE_CHECKING:
    from collections.abc import Awaitable


class ExtractorUnavailable(RuntimeError):
    """No further call can succeed in this run; the message says why."""


@runtime_checkable
class Extractor(Protocol):
    """What the extraction stage calls (see the module's docstring)."""

    name: str
    version: str

    def extract(self, url: str, content: str) -> dict[str, Any] | Awaitable[dict[str, Any]]: ...


def check_extractor(extractor: object) -> Extractor:
    """``extractor`` as an :class:`Extractor`; ``TypeError`` naming what it lacks."""
    check_component(extractor, "Extractor", "extract", "extract(self, url, content) -> dict")
    assert isinstance(extractor, Extractor)  # what check_component made sure of
    return extractor
