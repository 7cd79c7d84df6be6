"""The scripts a rendering page asked for that failed to load.

A page whose own script fails (a 404 for the site's main bundle during a deployment, a
connection reset) is left as the server sent it, not hydrated: its text is not the
page's. :class:`ScriptLoads` listens to the browser page of one rendering (through
scrapy-playwright's ``playwright_page_event_handlers``) and keeps every ``<script src>``
load that got an HTTP error status or failed at the network level;
:func:`own_script_failures` keeps those of the page's own host (and of the domains
named for its scripts). Nothing here imports Playwright: the events are read by the
attributes Playwright's ``Request`` and ``Response`` have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawler.lib.urls import in_domains

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

#: the resource type Chromium gives a ``<script src>`` (and a script a script loads)
SCRIPT = "script"
#: a load cut short by the page itself (closed or navigated away once its DOM was read;
#: a script answered with an error status is also aborted after its ``response``)
CUT_SHORT = "net::ERR_ABORTED"


@dataclass(frozen=True)
class ScriptFailure:
    """A script that did not load: its URL and what it got (``"404"``, or the
    network error, ``"net::ERR_CONNECTION_REFUSED"``)."""

    url: str
    error: str
    #: the browser's request, for a network failure: was it aborted on purpose?
    request: Any = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.url} ({self.error})"


class ScriptLoads:
    """Listens to one rendering's page: its ``response`` and ``requestfailed`` events.

    >>> from types import SimpleNamespace as Ns
    >>> loads = ScriptLoads()
    >>> loads.response(Ns(url="https://a.org/main.js", status=404, request=Ns(resource_type="script")))
    >>> loads.response(Ns(url="https://a.org/site.css", status=404, request=Ns(resource_type="stylesheet")))
    >>> loads.requestfailed(Ns(url="https://a.org/main.js", resource_type="script", failure="net::ERR_ABORTED"))
    >>> loads.requestfailed(Ns(url="https://b.org/ga.js", resource_type="script", failure="net::ERR_NAME_NOT_RESOLVED"))
    >>> [str(f) for f in loads.failures]
    ['https://a.org/main.js (404)', 'https://b.org/ga.js (net::ERR_NAME_NOT_RESOLVED)']

    A request copied to a queue (pickled) carries a fresh listener: what a page saw is
    never the next attempt's, and the browser's objects are not kept.
    """

    def __init__(self) -> None:
        self.failures: list[ScriptFailure] = []

    def handlers(self) -> dict[str, Callable[[Any], None]]:
        """The ``playwright_page_event_handlers`` that feed this listener."""
        return {"response": self.response, "requestfailed": self.requestfailed}

    def response(self, response: Any) -> None:
        if response.status >= 400 and response.request.resource_type == SCRIPT:
            self.failures.append(ScriptFailure(response.url, str(response.status)))

    def requestfailed(self, request: Any) -> None:
        failure = request.failure or "failed"
        if request.resource_type == SCRIPT and failure != CUT_SHORT:
            self.failures.append(ScriptFailure(request.url, failure, request))

    def __reduce__(self) -> tuple[type[ScriptLoads], tuple[()]]:
        return ScriptLoads, ()


def is_listener(handler: Any) -> bool:
    """Whether an event handler is a :class:`ScriptLoads` method (not the user's own)."""
    return isinstance(getattr(handler, "__self__", None), ScriptLoads)


def own_script_failures(failures: Iterable[ScriptFailure], page_url: str, domains: list[str]) -> list[ScriptFailure]:
    """The failures of scripts on the page's own host (or a subdomain of it), or on one
    of ``domains``; one per script URL. A script of another site (analytics, a widget,
    a CDN you did not name) does not make a rendering suspect.

    >>> fails = [ScriptFailure("https://docs.a.org/main.js", "404"), ScriptFailure("https://ga.com/a.js", "404"),
    ...          ScriptFailure("https://cdn.a.net/app.js", "503"), ScriptFailure("https://docs.a.org/main.js", "x")]
    >>> [f.url for f in own_script_failures(fails, "https://docs.a.org/guide/", [])]
    ['https://docs.a.org/main.js']
    >>> [f.url for f in own_script_failures(fails, "https://docs.a.org/guide/", ["a.net"])]
    ['https://docs.a.org/main.js', 'https://cdn.a.net/app.js']
    """
    hosts = [urlsplit(page_url).hostname or "", *domains]
    own: dict[str, ScriptFailure] = {}
    for failure in failures:
        if failure.url not in own and in_domains(failure.url, hosts):
            own[failure.url] = failure
    return list(own.values())
