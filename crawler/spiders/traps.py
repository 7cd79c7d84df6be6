"""The docs spider's default guard against crawler traps: an infinite calendar, a page
that links to a new URL on every request.

Two bounds on the links followed, each counted over the distinct URLs of one crawl
process (a link's ``#fragment`` is no part of its URL; start URLs and sitemap entries
are not bounded: a site lists those itself):

* ``CRAWL_TRAP_MAX_QUERY_VARIANTS``: distinct query strings of one path;
* ``CRAWL_TRAP_MAX_PER_PATTERN``: distinct URLs of one path pattern (:func:`path_pattern`:
  the segments that are numbers, dates or tokens written as ``N``).

A link past a bound is not followed (a stat, one warning per trapped path or pattern);
the run is partial, so nothing is marked removed for not being reached.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

#: each bound's setting, by the name of its stat (``docs/trap_{name}``)
TRAP_SETTINGS = {"query_variants": "CRAWL_TRAP_MAX_QUERY_VARIANTS", "pattern": "CRAWL_TRAP_MAX_PER_PATTERN"}

#: a segment that is a number or a date (``2026``, ``2026-11-26``, ``26.11.2026``,
#: ``20261126T1200``), or a token: hex of 8+ characters holding a digit, a UUID
_NUMERIC = re.compile(r"\d+(?:[-_.:T]\d+)*Z?")
_TOKEN = re.compile(r"(?=[0-9a-f-]*\d)[0-9a-f]{8,}(?:-[0-9a-f]{4,})*", re.IGNORECASE)


def path_pattern(path: str) -> str:
    """``path`` with each segment that is a number, a date or a token written ``N``.
    A segment that is a word with digits in it (``page-12.html``, ``v2``, ``12.html``)
    is a name, kept as it is: numbered documents are not a trap, endless calendars and
    pagers are bare numbers.

    >>> path_pattern("/calendar/2026/11/26")
    '/calendar/N/N/N'
    >>> path_pattern("/events/2026-11-26/")
    '/events/N/'
    >>> path_pattern("/api/Frame.html")
    '/api/Frame.html'
    """
    return "/".join(
        "N" if segment and (_NUMERIC.fullmatch(segment) or _TOKEN.fullmatch(segment)) else segment
        for segment in path.split("/")
    )


class TrapGuard:
    """Counts the new links a crawl follows by path (their query variants) and by path
    pattern; :meth:`admit` says whether one more may be followed. 0: no bound."""

    def __init__(self, max_query_variants: int, max_per_pattern: int) -> None:
        for name, value in (
            (TRAP_SETTINGS["query_variants"], max_query_variants),
            (TRAP_SETTINGS["pattern"], max_per_pattern),
        ):
            if value < 0:
                raise ValueError(f"{name} must be >= 0 (0: no bound), got {value!r}")
        self.max_query_variants = max_query_variants
        self.max_per_pattern = max_per_pattern
        self.variants: dict[str, int] = {}
        self.patterns: dict[str, int] = {}
        #: the paths and patterns found trapped (each warned about once)
        self.trapped: set[str] = set()

    def admit(self, url: str) -> str | None:
        """Count ``url``, a link not followed before: None when it may be followed, else
        which bound refused it (``"query_variants"`` or ``"pattern"``)."""
        parts = urlsplit(url)
        site = f"{parts.scheme}://{parts.netloc}"
        if parts.query and self.max_query_variants:
            key = site + parts.path
            seen = self.variants.get(key, 0)
            if seen >= self.max_query_variants:
                self._warn("query_variants", key, f"more than {self.max_query_variants} query variants")
                return "query_variants"
        pattern = site + path_pattern(parts.path)
        if self.max_per_pattern:
            count = self.patterns.get(pattern, 0)
            if count >= self.max_per_pattern:
                self._warn("pattern", pattern, f"more than {self.max_per_pattern} pages")
                return "pattern"
            self.patterns[pattern] = count + 1
        if parts.query and self.max_query_variants:
            self.variants[key] = seen + 1
        return None

    def _warn(self, kind: str, key: str, what: str) -> None:
        if f"{kind}\0{key}" in self.trapped:
            return
        self.trapped.add(f"{kind}\0{key}")
        logger.warning(
            "Crawl trap? %(key)s has %(what)s: its further links are not followed (%(setting)s; 0 for no bound); "
            "the run is partial, nothing is marked removed",
            {
                "key": key,
                "what": what,
                "setting": TRAP_SETTINGS[kind],
            },
        )
