"""HTTP details shared by the spider and the middlewares."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.http import Headers, Response

HTML_TYPES = (b"text/html", b"application/xhtml+xml")
#: the request headers that make a request conditional
VALIDATORS = (b"If-None-Match", b"If-Modified-Since")


def media_type(headers: Headers) -> bytes:
    """The media type of a response's ``headers``, lower case, without parameters;
    ``b""`` when they have no Content-Type.

    >>> from scrapy.http import Headers
    >>> media_type(Headers({"Content-Type": "Application/JSON; charset=utf-8"})), media_type(Headers())
    (b'application/json', b'')
    """
    return (headers.get("Content-Type") or b"").split(b";")[0].strip().lower()


def content_type(response: Response) -> bytes:
    """The response's media type, lower case, without parameters; ``b""`` when it has none."""
    return media_type(response.headers)


def is_html(response: Response) -> bool:
    """An HTML response; one without a Content-Type counts as HTML (browsers read it so)."""
    declared = content_type(response)
    return not declared or declared in HTML_TYPES


def declared_not_html(headers: Headers) -> bool:
    """Whether a response's ``headers`` say it is not HTML: a Content-Type, not an HTML
    one (without a Content-Type, a response counts as HTML: see :func:`is_html`).

    >>> from scrapy.http import Headers
    >>> declared_not_html(Headers({"Content-Type": "application/json"}))
    True
    >>> declared_not_html(Headers({"Content-Type": "text/html; charset=utf-8"})), declared_not_html(Headers())
    (False, False)
    """
    declared = media_type(headers)
    return bool(declared) and declared not in HTML_TYPES


def drop_validators(headers: Headers) -> None:
    """Make a request unconditional."""
    for name in VALIDATORS:
        headers.pop(name, None)
