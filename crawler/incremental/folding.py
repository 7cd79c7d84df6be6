"""Index file folding: when ``/docs/index.html`` is the page ``/docs``.

An index file name is not folded by its name alone (``/auth/default.html`` may be a
page about a default backend): only on evidence, a canonical link, the directory's
record holding its content, or a record made from this very URL (:func:`fold_evidence`).
A folded spelling is requested under its page's URL (:func:`folded_into`). See
docs/architecture.md.

The decisions are here; RevalidationMiddleware and ContentHashPipeline act on them and
count them. Functions over the page identity and the store's records, no Scrapy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from crawler.cache.records import STATUS_REMOVED
from crawler.lib.urls import canonical_url, index_file_parent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawler.cache.ports import PageAndResponseReader, PageReader, ResponseReader
    from crawler.cache.records import PageRecord
    from crawler.cache.responses import StoredResponse
    from crawler.identity import PageIdentity


#: why an index file spelling is its directory's page
Evidence = Literal["canonical", "content", "url"]


def directory_of(identity: PageIdentity, url: str) -> tuple[str, str] | None:
    """``(canonical_url, url_hash)`` of the directory page that ``url``, an index file
    spelling (``/docs/index.html``), may be on evidence; ``None`` for any other URL.

    >>> from crawler.identity import PageIdentity
    >>> directory_of(PageIdentity(), "https://a.example/docs/index.html")[0]
    'https://a.example/docs'
    >>> directory_of(PageIdentity(), "https://a.example/docs/guide.html") is None
    True
    """
    parent = index_file_parent(url)
    return None if parent is None else identity(parent)


def other_spellings(url: str) -> list[str]:
    """The URLs under which ``url``'s page may be stored, spelt otherwise: for a
    look-up that missed it (``scrapy cache show``), to suggest, never to decide.

    >>> other_spellings("https://a.example/guide/install")
    ['https://a.example/guide/install.html', 'https://a.example/guide/install/index.html']
    >>> other_spellings("https://a.example/guide/install/?v=2#top")
    ['https://a.example/guide/install.html?v=2', 'https://a.example/guide/install/index.html?v=2']
    >>> other_spellings("https://a.example/guide/install.html")
    ['https://a.example/guide/install']
    >>> other_spellings("https://a.example/guide/index.html"), other_spellings("https://a.example/")
    (['https://a.example/guide'], ['https://a.example/index.html'])
    """
    parent = index_file_parent(url)
    if parent is not None:
        return [parent]
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    stem, dot, extension = path.rpartition(".")
    if dot and "/" not in extension:
        paths = [stem] if extension.lower() in ("html", "htm") else []
    else:
        paths = [f"{path}.html"] if path else []
        paths.append(f"{path}/index.html")
    return [urlunsplit((parts.scheme, parts.netloc, p, parts.query, "")) for p in paths]


def spells(identity: PageIdentity, recorded: Any, url: str) -> bool:
    """Whether ``recorded`` (the URL a page record or a stored response was made from)
    is a spelling of ``url``: the evidence that a directory's record or response stands
    for an index file spelling (a cache made when index file names were folded, or a
    fold)."""
    return isinstance(recorded, str) and identity.url_hash(recorded) == identity.url_hash(url)


def fold_evidence(
    identity: PageIdentity,
    url: str,
    directory: tuple[str, str],
    declared: Any,
    record: Mapping[str, Any] | None,
    content_hash: str,
) -> Evidence | None:
    """Why ``url``, an index file spelling whose item has ``content_hash`` and declares
    ``declared`` canonical, is the ``directory`` page whose record is ``record``;
    ``None``: a page of its own.

    >>> from crawler.identity import PageIdentity
    >>> identity, url = PageIdentity(), "https://a.example/docs/index.html"
    >>> directory = directory_of(identity, url)
    >>> fold_evidence(identity, url, directory, "https://a.example/docs", None, "h")
    'canonical'
    >>> fold_evidence(identity, url, directory, None, {"content_hash": "h", "url": "https://a.example/docs"}, "h")
    'content'
    >>> fold_evidence(identity, url, directory, None, {"content_hash": "g", "url": url}, "h")
    'url'
    >>> fold_evidence(identity, url, directory, None, {"content_hash": "g", "url": "https://a.example/docs"}, "h")
    """
    declares = isinstance(declared, str) and declared.startswith(("http://", "https://"))
    if declares and canonical_url(declared) == directory[0]:
        return "canonical"
    if record is None:
        return None
    if content_hash in (record.get("content_hash"), record.get("converter_pending_hash")):
        return "content"
    return "url" if spells(identity, record.get("url"), url) else None


def recorded_as(store: PageReader, identity: PageIdentity, url: str, url_hash: str) -> tuple[str, PageRecord | None]:
    """The page ``url`` is recorded as, and its record: its own, or, for an index file
    spelling fetched before without a record of its own (the pipeline folded it), its
    directory's: both spellings of a page are decided alike."""
    record = store.get_page(url_hash)
    directory = directory_of(identity, url) if record is None else None
    if directory is not None:
        return directory[1], store.get_page(directory[1])
    return url_hash, record


#: the index file spellings a page record remembers having folded (``folded_from``)
MAX_FOLDED_SPELLINGS = 8


def was_folded(identity: PageIdentity, record: Mapping[str, Any] | None, url: str) -> bool:
    """Whether ``record`` (a directory page's) was recorded from, or folded, the index
    file spelling ``url`` by an earlier fetch of that URL."""
    if record is None:
        return False
    folded = record.get("folded_from")
    spellings = folded if isinstance(folded, list) else []
    return any(spells(identity, spelling, url) for spelling in (record.get("url"), *spellings))


def note_folded(record: dict[str, Any], url: str) -> bool:
    """Remember in the directory page's ``record`` that ``url``, an index file spelling,
    was fetched and folded into it; whether the record changed."""
    folded = record.get("folded_from")
    spellings = list(folded) if isinstance(folded, list) else []
    if url in spellings:
        return False
    record["folded_from"] = [*spellings, url][-MAX_FOLDED_SPELLINGS:]
    return True


def folded_into(store: PageReader, identity: PageIdentity, url: str) -> str | None:
    """The URL to request for ``url``, an index file spelling an earlier fetch found to
    be its directory's page (:func:`was_folded`): the URL that page is recorded under,
    so that one page is one request a run (``/x/`` and ``/x/index.html`` linked alike).
    ``None`` for any other URL: a page of its own (not marked removed), one never
    fetched, or a directory page marked removed (its spelling may be a page now)."""
    directory = directory_of(identity, url)
    if directory is None:
        return None
    own = store.get_page(identity.url_hash(url))
    if own is not None and own.get("status") != STATUS_REMOVED:
        return None  # a page of its own (until a run finds it is its directory's)
    record = store.get_page(directory[1])
    if record is None or record.get("status") == STATUS_REMOVED or not was_folded(identity, record, url):
        return None
    recorded = record.get("url")
    return recorded if isinstance(recorded, str) and recorded.startswith(("http://", "https://")) else None


def folded_response(
    store: PageAndResponseReader, identity: PageIdentity, url: str, url_hash: str
) -> StoredResponse | None:
    """For an index file spelling without a record of its own that an earlier fetch
    folded into its directory page (:func:`was_folded`), that page's stored response.
    A spelling never fetched (``/auth/default.html`` linked for the first time) has none:
    it may be a page of its own."""
    directory = directory_of(identity, url)
    if directory is None or store.get_page(url_hash) is not None:
        return None
    if not was_folded(identity, store.get_page(directory[1]), url):
        return None
    return store.get_response(directory[1])


def stored_as_directory(store: ResponseReader, identity: PageIdentity, url: str) -> StoredResponse | None:
    """For an index file spelling with no response of its own, the one stored under
    its directory's page when that was fetched from this very URL (a cache made when
    index file names were folded): its validators and bytes still say whether the page
    changed."""
    directory = directory_of(identity, url)
    if directory is None:
        return None
    stored = store.get_response(directory[1])
    return stored if stored is not None and spells(identity, stored.url, url) else None


def known_page(store: PageReader, identity: PageIdentity, url_hash: str, url: str) -> str | None:
    """The url_hash of the page ``url`` is recorded as: its own, or, for an index file
    spelling the pipeline recorded as its directory's page (``/docs/index.html`` as
    ``/docs``), the directory's when its record was made from this URL; ``None``: no
    page recorded (a 404 there is a broken link, not a page gone)."""
    if store.get_page(url_hash) is not None:
        return url_hash
    directory = directory_of(identity, url)
    if directory is None:
        return None
    record = store.get_page(directory[1])
    return directory[1] if record is not None and spells(identity, record.get("url"), url) else None


@dataclass
class Folded:
    """An index file spelling recorded as its directory's page for what its last record
    said (its content, or its URL), not for a declared canonical: undone if the
    directory page itself comes this run with other content."""

    url: str
    content_hash: str
    #: the directory's record as the run found it
    before: PageRecord
    #: what the folded item said of its main content (``PageItem.selection_widened``)
    selection_widened: bool | None = None
    named_out: int | None = None
