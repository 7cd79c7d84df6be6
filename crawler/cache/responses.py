"""What the store keeps of a fetched page besides its records
(:mod:`crawler.cache.records`): the raw response (:class:`StoredResponse`), the page
as a browser rendered it (:class:`RenderedPage`), and what the spider made of it
(:class:`ParsedPage`, reused while :func:`parse_source` and the converter are the same).

The ports a store implements are in :mod:`crawler.cache.ports`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class StoredResponse:
    """A raw response kept so that a 304 or a skipped recheck can still be parsed."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    fetched_at: str
    checked_at: str = field(default="")

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("Last-Modified")


@dataclass
class RenderedPage:
    """A page as a browser rendered it (its DOM after JavaScript ran), kept so that a
    recrawl whose raw HTML is unchanged reuses it instead of rendering again.

    ``raw_sha256`` is the SHA-256 of the raw (decoded, decompressed) HTML body that
    was rendered: the rendering stands for that raw page and no other. ``encoding`` is
    the one ``body`` is encoded in (the browser's text is encoded in the header's
    charset when it can be, else in UTF-8). A ``url`` of another page (its key is not
    this URL's) records that the browser ended there: ``body`` is empty, and the
    rendering of that page is its own. ``scripts_failed`` names the page's own scripts
    that failed to load while it was rendered (``""``: none), for a page that never had
    a rendering whose scripts loaded: ``body`` is its DOM as it stood, not hydrated.
    ``failed_runs`` counts the runs in a row whose rendering of the page failed to load
    its scripts while this rendering, made with them loaded, stood in for it.
    """

    url: str
    headers: dict[str, str]
    body: bytes
    raw_sha256: str
    rendered_at: str
    encoding: str = ""
    scripts_failed: str = ""
    failed_runs: int = 0


def parse_source(response: StoredResponse) -> str:
    """The identity of what a stored response is read as: its body with the headers the
    reading depends on (``Content-Type``, its charset; ``Content-Encoding``). A server
    that fixes a page's charset, and sends the same bytes, has another page to read.

    >>> a = StoredResponse("u", 200, {"Content-Type": "text/html; charset=koi8-r"}, b"x", "t")
    >>> b = StoredResponse("u", 200, {"Content-Type": "text/html; charset=windows-1251"}, b"x", "t")
    >>> parse_source(a) == parse_source(b), parse_source(a) == parse_source(a)
    (False, True)
    """
    digest = hashlib.sha256()
    for name in ("Content-Type", "Content-Encoding"):
        value = next((v for k, v in response.headers.items() if k.lower() == name.lower()), "")
        digest.update(f"{name}: {value}\n".encode("utf-8", "replace"))
    digest.update(b"\n")
    digest.update(response.body)
    return digest.hexdigest()


@dataclass
class ParsedPage:
    """What the spider made of a stored response: its item's fields and the links it
    found. A recrawl answered by that response again (a 304, a skipped recheck) reuses
    it instead of parsing and converting the page again, while ``source_sha256`` (of the
    stored response's body) and ``converter`` (the converter id) are still the same."""

    #: SHA-256 of what the page was read from: the stored body and the headers its
    #: reading depends on (see :func:`parse_source`)
    source_sha256: str
    converter: str
    fields: dict[str, Any]
    #: every link the page holds (absolute URLs, before the spider's rules): the
    #: spider applies its rules of the day to them
    links: list[str]
    parsed_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "source_sha256": self.source_sha256,
            "converter": self.converter,
            "fields": self.fields,
            "links": self.links,
            "parsed_at": self.parsed_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> ParsedPage | None:
        """The record, or ``None`` for anything that is not one (an older form)."""
        if not isinstance(data, dict):
            return None
        try:
            page = cls(**data)
        except TypeError:
            return None
        ok = isinstance(page.fields, dict) and isinstance(page.links, list) and isinstance(page.source_sha256, str)
        return page if ok else None
