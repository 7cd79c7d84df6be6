"""The converter run on a page's bytes as the docs spider runs it on a response (parsed
as parsel parses, flattened past ``PARSER_MAX_DEPTH``), without a crawl: for the
converter's tests and the benchmarks that measure it (bench.links, bench.extract_quality)."""

from __future__ import annotations

from lxml import etree, html

from crawler.lib.deephtml import PARSER_MAX_DEPTH, deeper_than, flatten_deep_html
from crawler.lib.markdown import DEFAULT_LINKS
from crawler.lib.pagetext import page_markdown


def html_bytes_to_markdown(body: str | bytes, base_url: str = "", *, links: str = DEFAULT_LINKS) -> str:
    """Parse ``body`` and return the markdown of its main content.

    >>> html_bytes_to_markdown(b"<html><body><main><h1>Title</h1><p>Text.</p></main></body></html>")
    '# Title\\n\\nText.'
    """
    if not body or not body.strip():
        return ""
    parser = html.HTMLParser(huge_tree=True)  # as parsel parses: 2048 levels, not 256
    try:
        root = html.fromstring(body, parser=parser)
    except etree.ParserError:  # no element at all (a comment, a doctype): no text
        return ""
    if deeper_than(root, PARSER_MAX_DEPTH - 1):
        text = body if isinstance(body, str) else body.decode("utf-8", "replace")
        root = html.fromstring(flatten_deep_html(text), parser=parser)
    return page_markdown(root, base_url, links=links)[0]
