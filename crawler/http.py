"""HTTP details shared by the spider and the middlewares."""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from scrapy.utils.gz import gunzip

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


# not HttpCompressionMiddleware's: its decoders are private, and its process_response counts httpcompression/ stats
def decoded_body(body: bytes, content_encoding: str, max_size: int) -> bytes | None:
    """A body stored as received (compressed) as HttpCompressionMiddleware would give
    it, a gzip one decoded to at most ``max_size`` bytes; ``None`` for an encoding this
    cannot decode.

    >>> import gzip
    >>> decoded_body(gzip.compress(b"<p>x</p>"), "gzip", 99), decoded_body(b"<p>x</p>", "", 99)
    (b'<p>x</p>', b'<p>x</p>')
    >>> decoded_body(b"", "xz", 99) is None
    True
    """
    for coding in reversed([c.strip().lower() for c in content_encoding.split(",") if c.strip()]):
        if coding == "identity":
            continue
        if coding in ("gzip", "x-gzip"):
            body = gunzip(body, max_size=max_size)
        elif coding == "deflate":
            try:
                body = zlib.decompress(body)
            except zlib.error:
                body = zlib.decompress(body, -15)  # raw deflate, as some servers send it
        elif coding == "br":
            try:
                import brotli  # Scrapy's own dependency for br
            except ImportError:
                return None
            body = brotli.decompress(body)
        else:  # zstd without its module, or unknown
            return None
    return body
