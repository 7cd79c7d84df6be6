"""Is a page's source the one stored before? The answer a page's item gives
(``source_unchanged``): a page that reads differently while its source did not change
is a converter's change, not the site's (:mod:`crawler.incremental.converter`), and
no change for the revisit schedule either.

The evidence, cheapest first: a middleware's response flag (a 304, a skipped or replayed
page, the same bytes); else, for a 200 whose bytes differ while the stored text is
another converter's, the stored response read by this run's converter.

Pure functions over flags and the middleware's verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.meta import (
    FLAG_DUPLICATE,
    FLAG_NOT_MODIFIED,
    FLAG_RENDER_REPLAYED,
    FLAG_REVISIT_SKIPPED,
    FLAG_SAME_BODY,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crawler.meta import Revalidation

#: the flags of a response that is the stored response itself (replayed, or of its bytes):
#: what it parsed into before may be reused
STORED_SOURCE_FLAGS = frozenset({FLAG_NOT_MODIFIED, FLAG_REVISIT_SKIPPED, FLAG_DUPLICATE, FLAG_SAME_BODY})
#: every flag saying the page's source is the one stored before (a replayed rendering
#: too: it was made from the stored raw HTML)
SOURCE_UNCHANGED_FLAGS = STORED_SOURCE_FLAGS | {FLAG_RENDER_REPLAYED}


def is_stored_source(flags: Iterable[str]) -> bool:
    """Whether a response is the stored response itself (its parse may be reused).

    >>> is_stored_source(["revalidation_not_modified"]), is_stored_source(["render_replayed"])
    (True, False)
    """
    return not STORED_SOURCE_FLAGS.isdisjoint(flags)


def source_unchanged(flags: Iterable[str]) -> bool:
    """Whether a response's flags say its page's source is the one stored before.

    >>> source_unchanged(["render_replayed"]), source_unchanged([])
    (True, False)
    """
    return not SOURCE_UNCHANGED_FLAGS.isdisjoint(flags)


def second_reading(verdict: Revalidation | None, converter: str) -> bool:
    """Whether the response stored before a 200 whose bytes differ is worth reading
    again with this run's ``converter``: only while the page's stored text is another
    converter's (the first runs after an upgrade), or the page has no record.

    >>> from crawler.cache.responses import StoredResponse
    >>> from crawler.meta import Revalidation
    >>> before = StoredResponse("https://a/", 200, {}, b"<p>x</p>", "t")
    >>> second_reading(Revalidation("k", previous=before, text_converter="markdown/2"), "markdown/3")
    True
    >>> second_reading(Revalidation("k", previous=before, text_converter="markdown/3"), "markdown/3")
    False
    >>> second_reading(Revalidation("k"), "markdown/3")
    False
    """
    return verdict is not None and verdict.previous is not None and verdict.text_converter != converter
