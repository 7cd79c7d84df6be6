"""HTTP details shared by the spider and the middlewares."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.http import Headers, Response

HTML_TYPES = (b"text/html", b"application/xhtml+xml")
#: the request headers that make a request conditional
VALIDATORS = (b"If-None-Match", b"If-Modified-Since")


def content_type(response: Response) -> bytes:
    """The response's media type, lower case, without parameters; ``b""`` when it has none."""
    return (response.headers.get("Content-Type") or b"").split(b";")[0].strip().lower()


def is_html(response: Response) -> bool:
    """An HTML response; one without a Content-Type counts as HTML (browsers read it so)."""
    media_type = content_type(response)
    return not media_type or media_type in HTML_TYPES


def drop_validators(headers: Headers) -> None:
    """Make a request unconditional."""
    for name in VALIDATORS:
        headers.pop(name, None)
