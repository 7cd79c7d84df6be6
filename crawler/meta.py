"""Every ``Request.meta`` key and response flag of this project, and the one typed value
a component hands the next one through meta (docs/meta-keys.md says who reads what).

A leaf: the middlewares, the pipeline, the spider and the stylesheet reader import
their keys from here, never from each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawler.cache.responses import StoredResponse

# -- keys you set on a request ---------------------------------------------------

#: ``True``: no validators sent, never skipped nor replayed (RevalidationMiddleware)
META_DONT_REVALIDATE = "dont_revalidate"
#: ``True``: the page is extracted again (ContentHashPipeline marks it for ExtractionStage)
META_FORCE_EXTRACTION = "force_extraction"
#: ``True``: the page is rendered again (RenderMiddleware)
META_FORCE_RENDER = "force_render"
#: ``True`` or ``False``: in or out of the rendering scope (RenderMiddleware)
META_RENDER = "render"

# -- keys the components set -----------------------------------------------------

#: RevalidationMiddleware's verdict on a request: a :class:`Revalidation`
META_REVALIDATION = "revalidation"
#: link hops from a start URL (DocsSpider)
META_DEPTH = "docs_depth"
#: the page whose link a request held for ``max_pages`` followed (DocsSpider: no Referer is sent for it)
META_LINKED_FROM = "docs_linked_from"
#: ``True`` on a page request a sitemap listed (DocsSpider): a known broken link it
#: lists is asked for again (RevalidationMiddleware), the listing says it may be a page
META_LISTED = "docs_listed"
#: ``True`` on a known broken link asked for again at the end of a run that has not
#: reached every page it knows (DocsSpider): never answered with its known 404
#: (RevalidationMiddleware)
META_RECHECK = "docs_recheck"
#: ``True`` on a request in the rendering scope: its raw response is checked (RenderMiddleware)
META_RENDER_CHECK = "render_check"
#: on a request sent to the browser: the raw HTML's hash its rendering is stored with
META_RENDER_RAW_SHA256 = "render_raw_sha256"
#: on a request sent to the browser: the listener of its page's script loads
META_RENDER_SCRIPTS = "render_scripts"

# -- response flags --------------------------------------------------------------

#: a 304 answered with the stored page
FLAG_NOT_MODIFIED = "revalidation_not_modified"
#: not requested: the revisit schedule says the page is not due
FLAG_REVISIT_SKIPPED = "revalidation_revisit_skipped"
#: another spelling of a page answered this run, served as it was answered
FLAG_DUPLICATE = "revalidation_duplicate"
#: a 200 whose body has the bytes of the stored one
FLAG_SAME_BODY = "revalidation_same_body"
#: a stored rendering replayed (RenderMiddleware)
FLAG_RENDER_REPLAYED = "render_replayed"
#: Scrapy's: a download stopped by a ``headers_received`` handler, its body not read
#: (NonHtmlStop: a page request answered with a declared non-HTML type)
FLAG_DOWNLOAD_STOPPED = "download_stopped"
#: a robots.txt answered with the response RobotsTxtMiddleware's download got (RobotsTxtOnce)
FLAG_ROBOTSTXT_SHARED = "robotstxt_shared"
#: the responses RevalidationMiddleware made itself, without a request
REPLAY_FLAGS = frozenset({FLAG_REVISIT_SKIPPED, FLAG_DUPLICATE})


def wants(meta: Mapping[str, Any], key: str) -> bool:
    """Whether a request's ``meta`` asks for ``key`` (:data:`META_DONT_REVALIDATE`,
    :data:`META_FORCE_EXTRACTION` or :data:`META_FORCE_RENDER`).

    >>> wants({"force_render": True}, "force_render"), wants({}, "force_render")
    (True, False)
    """
    return bool(meta.get(key))


@dataclass
class Revalidation:
    """What RevalidationMiddleware decided and found for one request, in one typed
    value (``meta["revalidation"]``), set for the requests it handles.

    A redirect or a retry copies a request's meta: the middleware makes a new verdict
    for the copy (it reads only :attr:`conditional` of the old one, to drop the
    validators it sent).
    """

    #: the page identity (``url_hash``) of the request's URL
    url_hash: str
    #: ``fetched``, ``not_modified`` (a 304 answered from the cache), ``revisit_skipped``
    #: (not due by the revisit schedule), ``duplicate`` (another spelling answered this
    #: run), ``gone`` (a 404/410 for a page the cache has: not a broken link); None
    #: while the request is out
    status: str | None = None
    #: the stored validators were sent
    conditional: bool = False
    #: while a request sent conditionally is downloaded: the stored response a 200 is
    #: compared with (cleared once the response is in)
    compared: StoredResponse | None = None
    #: the stored response the page's response is: replayed from it, of its bytes, or
    #: just stored from it (the spider keeps what it parsed into against it)
    stored: StoredResponse | None = None
    #: the response stored before a 200 whose bytes differ from it: the spider may read
    #: it with this run's converter to tell whether the site changed or only the
    #: converter did (:mod:`crawler.incremental.source`)
    previous: StoredResponse | None = None
    #: with :attr:`previous`: the converter of the page's stored text (None: no record)
    text_converter: str | None = None


def revalidation(meta: Mapping[str, Any]) -> Revalidation | None:
    """The verdict a request or response carries (None: the middleware did not handle it).

    >>> revalidation({"revalidation": Revalidation("k", "fetched")}).status, revalidation({})
    ('fetched', None)
    """
    verdict = meta.get(META_REVALIDATION)
    return verdict if isinstance(verdict, Revalidation) else None
